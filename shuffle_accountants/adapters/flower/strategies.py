"""Flower strategies that train what `PldAccountant` or SECAGG-REVEALED account.

* `DistributedNoiseFixedClipping` (with the client mod `distributed_noise_mod`):
  distributed DP, noise shares summed by secure aggregation, which this
  strategy only simulates (SECAGG-REVEALED, SECAGG-HIDDEN; what the server
  then sees: GAUSS-NO-GAIN);
* `SampledServerSideFixedClipping`: central DP with server-side clipping on
  secretly sampled clients (KHH-SUBSAMPLED, GAUSS-NO-GAIN).
"""

from logging import INFO
from logging import WARNING
from typing import Dict, Optional, Tuple

from dp_accounting.privacy_accountant import NeighboringRelation
from flwr.app import MetricRecord
from flwr.app import MetricRecordValues
from flwr.supercore import log
import numpy as np

from shuffle_accountants import _validation
from shuffle_accountants.adapters.flower.accountant import GaussianPrivacyEvent
from shuffle_accountants.adapters.flower.accountant import PldAccountant
from shuffle_accountants.adapters.flower.accountant import SamplingMethod
from shuffle_accountants.adapters.flower.mod import KEY_CHECKIN_RATE
from shuffle_accountants.adapters.flower.mod import KEY_CLIPPING_NORM
from shuffle_accountants.adapters.flower.mod import KEY_NOISE_SHARE
from shuffle_accountants.adapters.flower.mod import KEY_PARTICIPANT
from shuffle_accountants.adapters.flower.mod import KEY_PARTICIPATION
from shuffle_accountants.adapters.flower.mod import participant_noise_multiplier
from shuffle_accountants.adapters.flower.mod import uploader_noise_multiplier
from shuffle_accountants.adapters.flower.wrapper import (
  DEFAULT_CONNECTION_TIMEOUT,
)
from shuffle_accountants.adapters.flower.wrapper import FixedClippingWrapper
from shuffle_accountants.adapters.flower.wrapper import check_composable
from shuffle_accountants.adapters.flower.wrapper import summed_updates
from shuffle_accountants.adapters.flower.wrapper import with_round
from shuffle_accountants.events import DistributedCheckInEvent
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.samplers import shuffled_batches

# Per participation: what dp-epsilon assumes of a real secure sum, and what
# the simulated one shows this server instead.
_SIMULATED = {
    'revealed': (
        "a real secure sum of the participants' uploads",
        'this server sees each upload with only its own noise share on it'),
    'hidden': (
        "a real secure sum over all n clients (non-participants' masked "
        'zeros, the participation bits summed too), so that only k is learnt',
        "each reply carries dp-participant in clear and a non-participant's "
        'update is exactly zero: this server sees who took part, and each '
        "participant's update with only its own noise share on it"),
    'hidden_count': (
        'a real secure sum of all n uploads',
        'this server sees each upload with only its own noise share on it'),
}


class DistributedNoiseFixedClipping(FixedClippingWrapper):
  """Distributed DP, fixed clipping: noise shares summed (secure aggregation
  simulated).

  See SECAGG-REVEALED and SECAGG-HIDDEN.

  Each round is distributed check-in (`DistributedCheckInEvent`): each of the
  n = `num_users` clients takes part with probability q = `checkin_rate`;
  each participant clips its update to C = `clipping_norm` and adds its own
  noise share N(0, s² I), s = σ_agg·C/√(q·n) (`participant_noise_multiplier`,
  σ_agg = `noise_multiplier`), so the sum of the k participants carries
  noise σ_agg·C·√(k/(q·n)): σ_agg·C at the expected cohort, as in
  ``accountant="distributed_checkin"`` of the Opacus adapter. The server
  needs only that sum and k (Flower's SecAgg+ computes them without
  showing any single update); the new global model is the old one plus the
  sum over k (nothing when k = 0). Every round is accounted as one
  ``DistributedCheckInEvent(n, q, σ_agg/√(q·n), participation,
  min_reporting)`` (σ_agg/√n with ``'hidden_count'``, below) in
  `ShufflePldAccountant` when it is configured, whatever
  its outcome, and the certified ε at `target_delta` is logged and returned
  as the round's training metrics ``dp-epsilon`` / ``dp-delta`` (with
  ``dp-participants`` = k).

  `participation` is the trust model (`DistributedCheckInEvent`):

  * ``'revealed'`` (default): the server samples the clients (each with
    probability q, operating-system randomness) and so knows who took part,
    as with standard secure aggregation. Amplification then holds only
    through what SECAGG-REVEALED proves with the participants known.
  * ``'hidden'``: every client is asked, each checks in by its own coin
    (`distributed_noise_mod`), and non-participants send a zero update; the
    deployment must make the replies unlinkable (secure aggregation over
    all n clients, anonymous channel), so that only k is learnt. The
    amplification of check-in then holds against the server and everyone
    after it.
  * ``'hidden_count'``: every client is asked and checks in by its own
    coin; a participant uploads its clipped update plus its noise share, a
    non-participant its noise share alone, with every share
    s = σ_agg·C/√n (`uploader_noise_multiplier`), so the sum of the n
    uploads carries σ_agg·C and neither who took part nor k is learnt (no
    participation bit is sent). Accounted as
    ``DistributedCheckInEvent(n, q, σ_agg/√n, 'hidden_count')``; the model
    moves by the sum over the expected cohort q·n (a constant), and the
    metrics carry no ``dp-participants``.

  **Secure aggregation is simulated**: the server process adds up the
  replies, so it sees each client's clipped update with only its noise
  share s on it. The strategy says so at start (a warning naming what
  ``dp-epsilon`` assumes for this `participation` and what this server
  sees instead, `simulated_assumption`: with ``'hidden'`` each reply's
  participation bit in clear and a non-participant's zero update) and
  reports, next to ``dp-epsilon`` (labelled "simulated secure
  aggregation" in each round's line), ``dp-epsilon-server-view``: the ε at
  `target_delta` of what this server sees (`server_view_epsilon`), an
  upper bound, the guarantee of this run against it.

  `min_reporting` = m tolerates dropouts: a round releases the sum when at
  least m noise shares arrive and nothing otherwise. Without it every
  participant must reply; a round with a failed reply releases nothing
  (the sum of fewer shares is less noisy than accounted) and stays in the
  ledger as configured (its uploads reached the server; releasing nothing
  is post-processing), and training stops there: ``strategy.start``
  returns the ``Result`` of the rounds before it, `dropout_at` names it.

  Refused, with the fix named: a wrapped strategy whose training
  aggregation is not FedAvg's (weighted or server-optimizer aggregation is
  not the sum accounted), a population of connected clients other than
  `num_users` (fewer: `NotEnoughClients` after `connection_timeout`
  seconds), a wrapped FedAvg whose ``fraction_train`` is not 1 (the
  wrapper samples), and client-side evaluation (``fraction_evaluate`` > 0:
  its metrics are computed on the clients' data and not accounted) unless
  ``evaluation_metrics='unaccounted'`` says they need not be private.
  Evaluating on a public set on the server (``evaluate_fn``) costs
  nothing; `distributed_noise_mod` sends no training metrics. With
  ``max_epsilon``, a round that would take ε above it is not run: training
  stops there, and ``strategy.start`` returns Flower's ``Result`` with the
  model and metrics of the completed rounds (`budget_exhausted_at` is the
  first round not run). `train_action` routes the training messages to a
  ClientApp train function of that name (default: the default one). The
  clients need ``ClientApp(mods=[distributed_noise_mod])``.
  """

  def __init__(self, strategy, noise_multiplier: float, clipping_norm: float,
               num_users: int, checkin_rate: float, *, target_delta: float,
               participation: str = 'revealed',
               min_reporting: Optional[int] = None,
               max_epsilon: Optional[float] = None,
               train_action: str = 'default',
               connection_timeout: float = DEFAULT_CONNECTION_TIMEOUT,
               evaluation_metrics: str = 'refused') -> None:
    super().__init__(strategy, noise_multiplier, clipping_norm, num_users,
                     train_action, connection_timeout, evaluation_metrics)
    self.checkin_rate = _validation.check_real(
        'checkin_rate', checkin_rate, 0.0, 1.0, min_inclusive=False)
    self.target_delta = _validation.check_real(
        'target_delta', target_delta, 0.0, 1.0, min_inclusive=False,
        max_inclusive=False)
    self.max_epsilon = (None if max_epsilon is None else _validation.check_real(
        'max_epsilon', max_epsilon, 0.0, min_inclusive=False))
    share = (uploader_noise_multiplier(self.noise_multiplier, self.num_users)
             if participation == 'hidden_count' else
             participant_noise_multiplier(self.noise_multiplier,
                                          self.num_users, self.checkin_rate))
    # Validates participation and min_reporting with their own messages.
    self.event = DistributedCheckInEvent(
        self.num_users, self.checkin_rate, share,
        participation=participation, min_reporting=min_reporting)
    self.accountant = ShufflePldAccountant()
    check_composable(self.accountant, self.event,
                     'DistributedNoiseFixedClipping')
    self._rng = np.random.default_rng()  # seeded from the OS's entropy

  def __repr__(self) -> str:
    return ('Distributed DP Strategy Wrapper (secure aggregation simulated, '
            'fixed clipping)')

  @property
  def noise_share_stdv(self) -> float:
    """Each participant's noise standard deviation s = σ_agg·C/√(q·n)."""
    return self.event.noise_multiplier * self.clipping_norm

  def epsilon(self) -> float:
    """Certified ε at `target_delta` of the rounds configured so far."""
    return float(self.accountant.get_epsilon(self.target_delta))

  def server_view_epsilon(self) -> float:
    """ε at `target_delta` of what this server sees: an upper bound.

    Without a real secure sum the server sees each client's upload, its
    update clipped to C plus its own share N(0, s² I): per round a Gaussian
    report of replace-one sensitivity 2C (GAUSS-NO-GAIN; whether the client
    took part is a data-independent label, LABEL-MIXTURE), T rounds the
    Gaussian of μ = 2√T / (s/C), whose ε is computed from its exact
    profile and rounded up (SHUFFLED-BATCHES-UB with the T rounds as
    epochs). No amplification is counted, not even that of a hidden
    check-in coin.
    """
    return shuffled_batches.upper_bound(
        self.event.noise_multiplier, self.num_rounds, self.target_delta,
        NeighboringRelation.REPLACE_ONE) if self.num_rounds else 0.0

  def _with_round(self) -> ShufflePldAccountant:
    """A new accountant of `accountant`'s configuration holding its ledger
    and one more round (the same ledger as `accountant.compose(event)`)."""
    return with_round(self.accountant, self.event)

  def simulated_assumption(self) -> Tuple[str, str]:
    """(what ``dp-epsilon`` assumes, what this run has instead) for this
    `participation`: the secure sum is simulated (logged at start and
    every round)."""
    return _SIMULATED[self.event.participation]

  def summary(self) -> None:
    log(WARNING, 'No secure aggregation runs: this server sums the replies '
        'and sees each client\'s clipped update with only its noise share '
        '(stdv %.4g) on it. dp-epsilon (simulated) assumes %s; here %s. '
        'dp-epsilon-server-view is what this server sees: the guarantee '
        'of this run against it.', self.noise_share_stdv,
        *self.simulated_assumption())
    log(INFO, '\t├──> Distributed DP settings (secure aggregation '
        'simulated):')
    log(INFO, '\t│\t├── Aggregate noise multiplier: %s (share stdv %.4g)',
        self.noise_multiplier, self.noise_share_stdv)
    log(INFO, '\t│\t├── Clipping norm: %s', self.clipping_norm)
    log(INFO, '\t│\t└── %s', self.event)
    self.strategy.summary()

  def configure_train(self, server_round: int, arrays, config, grid):
    """Samples (revealed) or asks everyone (hidden); accounts the round."""
    if self._stopped:
      return []
    node_ids = self._population(grid)
    if self.max_epsilon is not None:
      # Built once: it answers the budget check and, if the round runs,
      # becomes the accountant, whose answers (a function of the ledger)
      # this round then reports without composing again.
      projected = self._with_round()
      if projected.get_epsilon(self.target_delta) > self.max_epsilon:
        return self._stop_for_budget(server_round, (
            f'round {server_round} would take the certified epsilon above '
            f'max_epsilon={self.max_epsilon} (now {self.epsilon():.6g} at '
            f'delta={self.target_delta:g}).'))
    if self.event.participation == 'revealed':
      node_ids = [node for node in node_ids
                  if self._rng.random() < self.checkin_rate]
    if self.max_epsilon is None:
      self.accountant.compose(self.event)
    else:
      self.accountant = projected
    self.num_rounds += 1
    config[KEY_CLIPPING_NORM] = self.clipping_norm
    config[KEY_NOISE_SHARE] = self.noise_share_stdv
    config[KEY_PARTICIPATION] = self.event.participation
    config[KEY_CHECKIN_RATE] = self.checkin_rate
    return self._messages(server_round, arrays, config, node_ids)

  def aggregate_train(self, server_round: int, replies):
    """The sum of the replies (secure aggregation's output) over k (over
    the expected cohort q·n when k is hidden)."""
    if self._stopped:
      return None, None
    arrived = self._arrived(
        server_round, replies, self.event.min_reporting is not None,
        'Pass min_reporting=m to release rounds with at least m noise shares '
        '(SECAGG-REVEALED accounts the dropouts).')
    metrics: Dict[str, MetricRecordValues] = {'dp-delta': self.target_delta}
    if arrived is None:
      # The round stays accounted as configured: its uploads reached this
      # server, and releasing nothing is post-processing of the round.
      metrics['dp-epsilon'] = self.epsilon()
      metrics['dp-epsilon-server-view'] = self.server_view_epsilon()
      return None, MetricRecord(metrics)
    if self.event.participation == 'hidden_count':
      # Every upload carries a noise share; k is not learnt.
      released = len(arrived) >= (self.event.min_reporting or 1)
      divisor = self.checkin_rate * self.num_users
      outcome = f'{len(arrived)} uploads'
    else:
      participants = int(sum(_participant_bit(reply) for reply in arrived))
      released = participants > 0 and participants >= (
          self.event.min_reporting or 1)
      divisor = participants
      outcome = f'{participants} participants'
      metrics['dp-participants'] = participants
    arrays = (self._moved_by(summed_updates(self._updates(arrived, clip=False)),
                             divisor) if released else None)
    metrics['dp-epsilon'] = self.epsilon()
    metrics['dp-epsilon-server-view'] = self.server_view_epsilon()
    log(INFO, 'aggregate_train: %s, %s; what this server sees: certified '
        'epsilon=%.6f at delta=%g after %d rounds (dp-epsilon-server-view); '
        'simulated secure aggregation: epsilon=%.6f (dp-epsilon) only where '
        '%s', outcome, 'sum released' if released else 'nothing released',
        metrics['dp-epsilon-server-view'], self.target_delta,
        self.num_rounds, metrics['dp-epsilon'],
        self.simulated_assumption()[0])
    return arrays, MetricRecord(metrics)


class SampledServerSideFixedClipping(FixedClippingWrapper):
  """Central DP with server-side clipping on secretly sampled clients.

  See KHH-SUBSAMPLED and GAUSS-NO-GAIN.

  The mode Flower's ``DifferentialPrivacyServerSideFixedClipping`` refuses
  to account: amplification by client sampling. Each round the server
  samples clients as `accountant`'s config says (``poisson``: each of the n
  = ``population_size`` connected clients with probability q = m / n;
  ``without-replacement``: exactly m of them; ``no-amplification``: m of
  them, no gain claimed), with m = `num_sampled_clients`; it clips every
  update to C = `clipping_norm`, adds N(0, σ² C² I) to their sum
  (σ = `noise_multiplier`) and moves the global model by that sum over m (a
  constant: dividing by the realized count would make the release depend
  on it). One ``GaussianPrivacyEvent(σ, m, n)`` is composed per released
  round, and the certified ε is logged and returned as ``dp-epsilon``.

  **Against whom.** The server sees the updates: it is trusted, as in any
  central DP. The amplification holds against parties that see the models
  but not who was sampled (users of the model, other clients), so the
  sample must stay secret (the server draws it from the operating system's
  randomness and tells no client who else was asked). Against a party that
  learns the sample, account with ``no-amplification``.

  Refused, with the fix named: a wrapped strategy that is not FedAvg, a
  population other than the connected clients (fewer: `NotEnoughClients`
  after `connection_timeout` seconds), ``fraction_train`` other than 1 and
  client-side evaluation unless ``evaluation_metrics='unaccounted'`` (as
  for `DistributedNoiseFixedClipping`). A round in which a sampled
  client does not reply releases nothing and is not composed (the release
  accounted includes every sampled update; a clipped update cannot be
  replaced), and training stops there with the ``Result`` of the rounds
  before it (`dropout_at` names the round). A round that would take ε
  above the config's ``max_epsilon`` is not run: training stops there and
  ``strategy.start`` returns Flower's ``Result`` of the completed rounds.
  """

  def __init__(self, strategy, noise_multiplier: float, clipping_norm: float,
               num_sampled_clients: int, *, accountant: PldAccountant,
               train_action: str = 'default',
               connection_timeout: float = DEFAULT_CONNECTION_TIMEOUT,
               evaluation_metrics: str = 'refused') -> None:
    if not isinstance(accountant, PldAccountant):
      raise TypeError('accountant must be a shuffle_accountants.adapters.'
                      f'flower.PldAccountant; got {type(accountant).__name__}.')
    population = accountant.config.population_size
    super().__init__(strategy, noise_multiplier, clipping_norm, population,
                     train_action, connection_timeout, evaluation_metrics)
    self.num_sampled_clients = _validation.check_integer(
        'num_sampled_clients', num_sampled_clients, 1, population)
    self.accountant = accountant
    self.event = GaussianPrivacyEvent(self.noise_multiplier,
                                      self.num_sampled_clients, population)
    self._rng = np.random.default_rng()  # seeded from the OS's entropy

  def __repr__(self) -> str:
    return 'DP Strategy Wrapper (secret client sampling, server-side clipping)'

  def summary(self) -> None:
    log(WARNING, 'Central DP: this server sees every sampled client\'s '
        'update and must be trusted; dp-epsilon holds against those who see '
        'only the models%s.', '' if self.accountant.config.sampling_method
        == SamplingMethod.NO_AMPLIFICATION else ' and not who was sampled')
    log(INFO, '\t├──> DP settings (sampled clients, server-side clipping):')
    log(INFO, '\t│\t├── Noise multiplier: %s', self.noise_multiplier)
    log(INFO, '\t│\t├── Clipping norm: %s', self.clipping_norm)
    log(INFO, '\t│\t└── Sampling: %s, %d of %d', self.accountant.config
        .sampling_method, self.num_sampled_clients, self.num_users)
    self.strategy.summary()

  def configure_train(self, server_round: int, arrays, config, grid):
    if self._stopped:
      return []
    node_ids = self._population(grid)
    if (self.accountant.config.max_epsilon is not None
        and self.accountant.would_exceed(self.event)):
      return self._stop_for_budget(server_round, (
          f'round {server_round} would take the certified epsilon above '
          f'max_epsilon={self.accountant.config.max_epsilon} (now '
          f'{self.accountant.get_privacy_spent().epsilon:.6g}).'))
    if self.accountant.config.sampling_method == SamplingMethod.POISSON:
      rate = self.num_sampled_clients / self.num_users
      node_ids = [node for node in node_ids if self._rng.random() < rate]
    else:
      # Indices, not the IDs: numpy turns 64-bit node IDs on both sides of
      # 2^63 into float64, which no longer name a node.
      chosen = self._rng.choice(len(node_ids), self.num_sampled_clients,
                                replace=False)
      node_ids = [node_ids[index] for index in sorted(chosen)]
    return self._messages(server_round, arrays, config, node_ids)

  def aggregate_train(self, server_round: int, replies):
    if self._stopped:
      return None, None
    arrived = self._arrived(
        server_round, replies, False,
        'Rerun from the last round, or use DistributedNoiseFixedClipping(..., '
        'min_reporting=m), which accounts dropouts.')
    if arrived is None:  # nothing released, nothing composed
      return None, None
    assert self._current_arrays is not None  # set by _messages
    total = summed_updates(self._updates(arrived, clip=True)) or [
        np.zeros(np.shape(array)) for array in
        self._current_arrays.to_numpy_ndarrays()]
    stdv = self.noise_multiplier * self.clipping_norm
    noisy = [array + self._rng.normal(0.0, stdv, np.shape(array))
             for array in total]
    self.accountant.compose(self.event)
    self.num_rounds += 1
    spent = self.accountant.get_privacy_spent()
    log(INFO, 'aggregate_train: %d sampled clients, noise stdv %.4g on the '
        'sum; certified epsilon=%.6f at delta=%g after %d releases, against '
        'users of the models (central DP: this server is trusted)',
        len(arrived), stdv, spent.epsilon, spent.delta, spent.num_releases)
    return (self._moved_by(noisy, self.num_sampled_clients),
            MetricRecord({'dp-epsilon': spent.epsilon,
                          'dp-delta': spent.delta,
                          'dp-sampled': len(arrived)}))


def _participant_bit(reply) -> int:
  metrics = [record[KEY_PARTICIPANT] for record in
             reply.content.metric_records.values()
             if KEY_PARTICIPANT in record]
  if len(metrics) != 1 or metrics[0] not in (0, 1):
    raise ValueError(
        f'a training reply carries {KEY_PARTICIPANT}={metrics}; the clients '
        'need ClientApp(mods=[distributed_noise_mod]).')
  return int(metrics[0])
