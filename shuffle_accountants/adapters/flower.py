"""Flower adapter: a certified PLD backend for Flower's privacy accounting, secret client sampling, and distributed noise under secure aggregation (D7, KHH-SUBSAMPLED, W11, D30, D17).

Needs the extra ``[flower]`` (``flwr[simulation]>=1.42,<2``).

* `PldAccountant(config)` implements Flower's
  ``flwr.supercore.privacy_accounting.PrivacyAccountant`` protocol with the
  constructor shape of Flower's ``RdpAccountant(config)``, so it works as
  ``accountant=`` of ``DifferentialPrivacyServerSideFixedClipping`` /
  ``DifferentialPrivacyClientSideFixedClipping``.
* `DistributedNoiseFixedClipping` (server) with `distributed_noise_mod`
  (clients): every participant clips its update and adds its own share of
  the Gaussian noise; the server only needs the sum (secure aggregation).
  One `DistributedCheckInEvent` is accounted per round.
* `SampledServerSideFixedClipping`: central DP with server-side clipping on
  secretly sampled clients (Poisson or fixed size), accounted with a
  `PldAccountant` of that sampling method, which Flower's wrappers refuse.

**What Flower's Gaussian release means here.** A round releases the sum of
the sampled clients' updates, each clipped to L2 norm C, plus
N(0, σ² C² I) (Flower's wrappers add σC / m to the mean of m updates, the
same release). σ is the noise standard deviation over C, whatever the
relation, so the sum's sensitivity is C under add-or-remove-one and 2C
under replace-one (one client's update replaced). Flower's own
``RdpAccountant`` under replace-one takes σ relative to the replace-one
sensitivity (dp_accounting's RDP convention): at Flower's σ that is half
the noise of the release described here.

**What is composed.** Each of Flower's three accounting models has a
dominating pair that the library already certifies:
``SubsampledShuffleGaussianEvent(n, m, s)`` is accounted with the
subsampled Gaussian pair (γ N(2/s, 1) + (1 − γ) N(0, 1), N(0, 1)),
γ = m / n, both orders through one symmetric PMF (KHH-SUBSAMPLED on the
Gaussian pair of D7, which claims no gain from shuffling, W11). So:

* no amplification, add-or-remove-one: the Gaussian pair N(1/σ, 1) vs
  N(0, 1) (exact), composed as ``SubsampledShuffleGaussianEvent(1, 1, 2σ)``;
* Poisson sampling at q = m / n, add-or-remove-one: the pair above with
  shift 1/σ and ratio q, which is both orders of the Poisson-subsampled
  Gaussian exactly, composed as ``SubsampledShuffleGaussianEvent(n, m, 2σ)``;
* m of n without replacement, replace-one: Balle et al.'s bound (advanced
  joint convexity over the coupled samples) of the Gaussian of
  sensitivity 2C, the same pair at shift 2/σ and ratio m / n, composed as
  ``SubsampledShuffleGaussianEvent(n, m, σ)``.

These are composed in `ShufflePldAccountant` (connect-the-dots PMFs, FFT
composition with its round-off certified, D24), and ε is the smaller of that
and the RDP of the same releases (`ShuffleRdpAccountant`: Mironov's RDP of
the Poisson-subsampled Gaussian, WBK19-THM9 for sampling without
replacement at sensitivity 2C), both upper bounds. The RDP route is taken at
every order dp_accounting's default uses, and more, so ε never exceeds what
dp_accounting's RDP gives for the same release.

Amplification by sampling holds only against parties that do not see who
was sampled (e.g. users of the released model); a server that samples the
clients itself sees that, and Flower's wrappers accept only
``sampling_method='no-amplification'`` for it.
"""

import math
from typing import Dict, List, Optional, Tuple

from logging import INFO

from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant
from flwr.app import Array
from flwr.app import ArrayRecord
from flwr.app import Message
from flwr.app import MessageType
from flwr.app import MetricRecord
from flwr.app import RecordDict
from flwr.serverapp.exception import PrivacyBudgetExhausted
from flwr.serverapp.strategy import FedAvg
from flwr.serverapp.strategy import Strategy
from flwr.serverapp.strategy.strategy_utils import sample_nodes
from flwr.supercore import log
from flwr.supercore import privacy_accounting as flower_privacy
from flwr.supercore.differential_privacy import compute_clip_model_update
import numpy as np

from shuffle_accountants import _validation
from shuffle_accountants.events import DistributedCheckInEvent
from shuffle_accountants.events import SubsampledShuffleGaussianEvent
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.rdp import accountant as rdp_accountant

PrivacyConfig = flower_privacy.PrivacyConfig
GaussianPrivacyEvent = flower_privacy.GaussianPrivacyEvent
SamplingMethod = flower_privacy.SamplingMethod
NeighboringRelation = flower_privacy.NeighboringRelation
PrivacySpent = flower_privacy.PrivacySpent

ACCOUNTING_METHOD = 'shuffle-accountants-pld'
STATE_SCHEMA_VERSION = 1

_DpRelation = rdp_privacy_accountant.NeighborRel
# Every model Flower's PrivacyConfig accepts, with the relation of the RDP
# route and the library event's noise multiplier in units of Flower's σ.
_MODELS = {
    (SamplingMethod.NO_AMPLIFICATION, NeighboringRelation.ADD_OR_REMOVE_ONE):
        (_DpRelation.ADD_OR_REMOVE_ONE, 2.0),
    (SamplingMethod.POISSON, NeighboringRelation.ADD_OR_REMOVE_ONE):
        (_DpRelation.ADD_OR_REMOVE_ONE, 2.0),
    (SamplingMethod.WITHOUT_REPLACEMENT, NeighboringRelation.REPLACE_ONE):
        (_DpRelation.REPLACE_ONE, 1.0),
}
# dp_accounting's default orders and the library's, so the RDP route is
# never above dp_accounting's RDP accountant at its defaults.
_RDP_ORDERS = tuple(sorted(set(rdp_accountant.DEFAULT_ORDERS) | set(
    float(order) for order in rdp_privacy_accountant.DEFAULT_RDP_ORDERS)))


def _model(config) -> Tuple[_DpRelation, float]:
  if not isinstance(config, PrivacyConfig):
    raise TypeError('config must be a flwr.supercore.privacy_accounting.'
                    f'PrivacyConfig; got {config!r} of type '
                    f'{type(config).__name__}.')
  key = (config.sampling_method, config.neighboring_relation)
  if key not in _MODELS:
    allowed = ', '.join(f'{s.value!r} with {r.value!r}' for s, r in _MODELS)
    raise ValueError(
        f'sampling_method={config.sampling_method!r} with neighboring_'
        f'relation={config.neighboring_relation!r} cannot be certified; '
        f'the supported models are {allowed}.')
  return _MODELS[key]


def _check_event(event, config: PrivacyConfig) -> GaussianPrivacyEvent:
  if not isinstance(event, GaussianPrivacyEvent):
    raise TypeError('event must be a flwr.supercore.privacy_accounting.'
                    f'GaussianPrivacyEvent; got {event!r} of type '
                    f'{type(event).__name__}.')
  if event.population_size != config.population_size:
    raise ValueError(
        f'event.population_size={event.population_size} differs from the '
        f'config\'s population_size={config.population_size}; the accountant '
        'certifies one population.')
  return event


def _check_count(count) -> int:
  if isinstance(count, bool) or not isinstance(count, int):
    raise TypeError(f'count must be an integer >= 1; got {count!r} of type '
                    f'{type(count).__name__}.')
  return _validation.check_integer('count', count, 1)


class PldAccountant:
  """Flower ``PrivacyAccountant`` backend with certified PLD accounting.

  Example::

      from flwr.supercore.privacy_accounting import (
          NeighboringRelation, PrivacyConfig, SamplingMethod)
      from shuffle_accountants.adapters.flower import PldAccountant

      accountant = PldAccountant(PrivacyConfig(
          target_delta=1e-5, population_size=100,
          neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE,
          sampling_method=SamplingMethod.NO_AMPLIFICATION))
      strategy = DifferentialPrivacyServerSideFixedClipping(
          FedAvg(), noise_multiplier=1.0, clipping_norm=1.0,
          num_sampled_clients=10, accountant=accountant)

  Every ε and δ is a certified upper bound for the releases described in
  the module docstring (the smaller of the PLD and RDP routes). The state
  (`state_dict`) is the configuration and the ledger of composed events,
  JSON-serializable; restoring it rebuilds the same ledger, so ε is the same
  bit for bit.
  """

  def __init__(self, config: PrivacyConfig) -> None:
    self._relation, self._scale = _model(config)
    self._config = config
    self._compositions: List[Tuple[GaussianPrivacyEvent, int]] = []
    # Built from the ledger when ε or δ is asked for (None: out of date).
    self._built = None

  @property
  def config(self) -> PrivacyConfig:
    """The privacy configuration."""
    return self._config

  @property
  def num_releases(self) -> int:
    """The number of composed private releases."""
    return sum(count for _, count in self._compositions)

  def _new_accountants(self):
    return (ShufflePldAccountant(),
            rdp_accountant.ShuffleRdpAccountant(
                orders=_RDP_ORDERS, neighboring_relation=self._relation))

  def _library_event(self, event: GaussianPrivacyEvent):
    """(event with the release's pair for the PLD, the release for RDP)."""
    sigma = event.noise_multiplier
    method = self._config.sampling_method
    gaussian = dp_event.GaussianDpEvent(sigma)
    if method == SamplingMethod.NO_AMPLIFICATION:
      return SubsampledShuffleGaussianEvent(1, 1, self._scale * sigma), gaussian
    pair = SubsampledShuffleGaussianEvent(
        event.population_size, event.sample_size, self._scale * sigma)
    if method == SamplingMethod.POISSON:
      return pair, dp_event.PoissonSampledDpEvent(
          event.sample_size / event.population_size, gaussian)
    return pair, dp_event.SampledWithoutReplacementDpEvent(
        event.population_size, event.sample_size, gaussian)

  def _replayed(self, compositions):
    """Both routes' accountants holding `compositions`.

    Equal events are composed once with their total count, in order of
    first appearance (the RDP of a release without replacement takes about
    a second per distinct event), so a ledger and its `state_dict` give the
    same ε bit for bit.
    """
    counts: Dict[GaussianPrivacyEvent, int] = {}
    for event, count in compositions:
      counts[event] = counts.get(event, 0) + count
    accountants = self._new_accountants()
    for event, count in counts.items():
      for accountant, library_event in zip(accountants,
                                           self._library_event(event)):
        accountant.compose(library_event, count)
    return accountants

  @property
  def _accountants(self):
    if self._built is None:
      self._built = self._replayed(self._compositions)
    return self._built

  def compose(self, event: GaussianPrivacyEvent, count: int = 1) -> None:
    """Composes `count` identical releases `event`."""
    event = _check_event(event, self._config)
    count = _check_count(count)
    self._compositions.append((event, count))
    self._built = None

  @staticmethod
  def _epsilon(accountants, delta: float) -> float:
    return float(min(accountant.get_epsilon(delta)
                     for accountant in accountants))

  def get_epsilon(self, delta: float) -> float:
    """Certified ε (upper bound) after every release so far, at `delta`."""
    delta = _validation.check_real('delta', delta, 0.0, 1.0,
                                   min_inclusive=False, max_inclusive=False)
    return self._epsilon(self._accountants, delta)

  def get_delta(self, epsilon: float) -> float:
    """Certified δ (upper bound) after every release so far, at `epsilon`."""
    epsilon = _validation.check_real('epsilon', epsilon, 0.0)
    return float(min(accountant.get_delta(epsilon)
                     for accountant in self._accountants))

  def get_privacy_spent(self, delta: Optional[float] = None) -> PrivacySpent:
    """Certified (ε, δ) at `delta` (default: the config's target_delta)."""
    delta = self._config.target_delta if delta is None else delta
    return PrivacySpent(epsilon=self.get_epsilon(delta), delta=delta,
                        num_releases=self.num_releases,
                        accounting_method=ACCOUNTING_METHOD)

  def would_exceed(self, event: GaussianPrivacyEvent,
                   max_epsilon: Optional[float] = None,
                   count: int = 1) -> bool:
    """Whether `count` more releases `event` would take the certified ε at
    the config's target_delta above `max_epsilon` (default: the config's).

    Leaves this accountant unchanged.
    """
    event = _check_event(event, self._config)
    count = _check_count(count)
    limit = self._config.max_epsilon if max_epsilon is None else max_epsilon
    if limit is None:
      raise ValueError('max_epsilon must be given, to would_exceed or in '
                       'PrivacyConfig(max_epsilon=...); got None for both.')
    limit = _validation.check_real('max_epsilon', limit, 0.0,
                                   min_inclusive=False)
    projected = self._replayed(self._compositions + [(event, count)])
    return self._epsilon(projected, self._config.target_delta) > limit

  def state_dict(self) -> Dict[str, object]:
    """JSON-serializable state: the configuration and the composed events."""
    config = self._config
    return {
        'schema_version': STATE_SCHEMA_VERSION,
        'backend': ACCOUNTING_METHOD,
        'config': {
            'target_delta': config.target_delta,
            'population_size': config.population_size,
            'neighboring_relation': NeighboringRelation(
                config.neighboring_relation).value,
            'sampling_method': SamplingMethod(config.sampling_method).value,
            'max_epsilon': config.max_epsilon,
        },
        'compositions': [{
            'event': {'noise_multiplier': event.noise_multiplier,
                      'sample_size': event.sample_size,
                      'population_size': event.population_size},
            'count': count,
        } for event, count in self._compositions],
    }

  def load_state_dict(self, state: Dict[str, object]) -> None:
    """Restores a `state_dict` of an accountant with the same config."""
    if not isinstance(state, dict):
      raise TypeError(f'state must be a dict from state_dict(); got '
                      f'{type(state).__name__}.')
    if state.get('schema_version') != STATE_SCHEMA_VERSION:
      raise ValueError(
          f'state schema_version={state.get("schema_version")!r}; this '
          f'accountant reads version {STATE_SCHEMA_VERSION}.')
    if state.get('backend') != ACCOUNTING_METHOD:
      raise ValueError(f'state backend={state.get("backend")!r} was not '
                       f'written by this accountant ({ACCOUNTING_METHOD!r}).')
    try:
      saved = state['config']
      config = PrivacyConfig(
          target_delta=saved['target_delta'],
          population_size=saved['population_size'],
          neighboring_relation=NeighboringRelation(
              saved['neighboring_relation']),
          sampling_method=SamplingMethod(saved['sampling_method']),
          max_epsilon=saved['max_epsilon'])
      compositions = [
          (GaussianPrivacyEvent(**entry['event']), _check_count(entry['count']))
          for entry in state['compositions']]
    except (KeyError, TypeError, ValueError) as error:
      raise ValueError(f'state is not a valid state_dict(): {error}') from None
    if config != self._config:
      raise ValueError(f'state config {config} differs from this '
                       f'accountant\'s {self._config}.')
    for event, _ in compositions:
      _check_event(event, config)
    self._compositions = compositions
    self._built = None




# Keys of the training config the server sends to `distributed_noise_mod`.
KEY_CLIPPING_NORM = 'dp-clipping-norm'
KEY_NOISE_SHARE = 'dp-noise-share-stdv'
KEY_PARTICIPATION = 'dp-participation'
KEY_CHECKIN_RATE = 'dp-checkin-rate'
# Metric of each reply: 1 if the client's update and noise share are in it.
KEY_PARTICIPANT = 'dp-participant'


def participant_noise_multiplier(noise_multiplier: float, num_users: int,
                                 checkin_rate: float) -> float:
  """σ_agg / √(q·n): each participant's share of the aggregate noise σ_agg·C.

  The sum of k shares N(0, (σ_agg C)² / (q n)) has standard deviation
  σ_agg C √(k / (q n)): σ_agg C at the expected cohort q n, as for
  ``accountant="distributed_checkin"`` in the Opacus adapter.
  """
  return noise_multiplier / math.sqrt(num_users * checkin_rate)


def uploader_noise_multiplier(noise_multiplier: float, num_users: int) -> float:
  """σ_agg / √n: every client's share when all n upload (``'hidden_count'``).

  All n uploads are summed, so the sum carries σ_agg C whatever the number
  of participants, which stays hidden.
  """
  return noise_multiplier / math.sqrt(num_users)


def _only_array_record(content, where: str) -> str:
  names = list(content.array_records)
  if len(names) != 1:
    raise ValueError(
        f'{where} holds {len(names)} ArrayRecords ({names}); distributed '
        'noise clips and noises one model update, so send exactly one.')
  return names[0]


def distributed_noise_mod(msg, ctxt, call_next):
  """Client mod of `DistributedNoiseFixedClipping`: clip, then add a noise share.

  On a training message from the wrapper it reads the clipping norm C, the
  noise share s = σ_agg·C/√(q·n) and the participation model from the
  config. With ``'hidden'`` and ``'hidden_count'`` participation the client
  checks in by its own coin (probability q, from the operating system's
  randomness). A participant trains (the inner app), clips its update
  (model − global) to C and adds N(0, s² I) to it. A non-participant does
  not train: with ``'hidden'`` it replies with a zero update; with
  ``'hidden_count'`` with its noise share alone (a zero update plus
  N(0, s² I)), so that every upload looks alike. The reply's metric
  ``dp-participant`` (1 or 0) is summed by secure aggregation into the
  revealed count k; with ``'hidden_count'`` no such bit is sent (k stays
  hidden).

  Put it last among the mods that touch the parameters, as Flower's
  ``fixedclipping_mod``. It also serves a train function of its own
  (``@app.train('distributed_noise', mods=[distributed_noise_mod])`` with
  ``DistributedNoiseFixedClipping(..., train_action='distributed_noise')``).
  """
  if msg.metadata.message_type.split('.')[0] != MessageType.TRAIN:
    return call_next(msg, ctxt)
  key = _only_array_record(msg.content, 'the training message')
  config = next(iter(msg.content.config_records.values()), {})
  missing = [name for name in (KEY_CLIPPING_NORM, KEY_NOISE_SHARE,
                               KEY_PARTICIPATION, KEY_CHECKIN_RATE)
             if name not in config]
  if missing:
    raise KeyError(
        f'distributed_noise_mod needs {missing} in the training config; '
        'wrap the server strategy in DistributedNoiseFixedClipping.')
  record = msg.content[key]
  global_arrays = record.to_numpy_ndarrays()
  rng = np.random.default_rng()  # seeded from the OS's entropy
  participation = config[KEY_PARTICIPATION]
  participates = (participation == 'revealed'
                  or rng.random() < float(config[KEY_CHECKIN_RATE]))
  bit = None if participation == 'hidden_count' else int(participates)
  if participates:
    out_msg = call_next(msg, ctxt)
    if out_msg.has_error():
      return out_msg
    local = out_msg.content[_only_array_record(
        out_msg.content, 'the training reply')].to_numpy_ndarrays()
    compute_clip_model_update(local, global_arrays,
                              float(config[KEY_CLIPPING_NORM]))
  elif participation == 'hidden':
    return _reply(msg, key, record.keys(), global_arrays, participant=bit)
  else:  # 'hidden_count': the noise share alone, on the unchanged model
    local = global_arrays
  noisy = [np.asarray(array, dtype=np.float64) + rng.normal(
      0.0, float(config[KEY_NOISE_SHARE]), np.shape(array)) for array in local]
  return _reply(msg, key, record.keys(), noisy, participant=bit)


def _reply(msg, key: str, names, arrays, participant: Optional[int]):
  """The training reply: the (noisy) model and the participation bit.

  Client metrics (train loss, example counts) would be releases of their
  own, which nothing accounts: only the bit that secure aggregation sums is
  sent (none when `participant` is None: the count stays hidden), with
  FedAvg's weight key at the same value for every client.
  """
  metrics = {'num-examples': 1}
  if participant is not None:
    metrics[KEY_PARTICIPANT] = participant
  content = RecordDict({
      key: ArrayRecord(array_dict={
          name: Array(np.asarray(array))
          for name, array in zip(names, arrays, strict=True)}),
      'metrics': MetricRecord(metrics),
  })
  return Message(content=content, reply_to=msg)


class _FixedClippingWrapper(Strategy):
  """What the two wrappers share: a FedAvg to wrap, the whole population
  connected, training messages, the sum of the replies' updates."""

  def __init__(self, strategy, noise_multiplier: float, clipping_norm: float,
               num_users: int, train_action: str) -> None:
    super().__init__()
    if not isinstance(strategy, FedAvg) or (
        type(strategy).aggregate_train is not FedAvg.aggregate_train):
      raise ValueError(
          f'strategy={type(strategy).__name__}: the release accounted is the '
          'plain sum of the clients\' clipped updates, so the wrapped '
          'strategy must aggregate as FedAvg does (FedAvg itself; weighted '
          'aggregation and server optimizers are not what is accounted).')
    if not isinstance(train_action, str) or not train_action:
      raise ValueError('train_action must be a non-empty string (the '
                       f'ClientApp train action); got {train_action!r}.')
    self.strategy = strategy
    self.noise_multiplier = _validation.check_real(
        'noise_multiplier', noise_multiplier, 0.0, min_inclusive=False)
    self.clipping_norm = _validation.check_real(
        'clipping_norm', clipping_norm, 0.0, min_inclusive=False)
    self.num_users = _validation.check_integer('num_users', num_users, 1)
    self._message_type = (MessageType.TRAIN if train_action == 'default'
                          else f'{MessageType.TRAIN}.{train_action}')
    self._current_arrays = None
    self._sent: Dict[int, int] = {}
    self.num_rounds = 0  # rounds accounted

  def _population(self, grid) -> List[int]:
    """The connected clients (waiting for `num_users` of them)."""
    _, node_ids = sample_nodes(grid, self.num_users, self.num_users)
    if len(node_ids) != self.num_users:
      raise ValueError(
          f'{len(node_ids)} clients are connected but num_users='
          f'{self.num_users} is accounted; the population must be the '
          'connected clients: set num_users to their number.')
    return node_ids

  def _messages(self, server_round: int, arrays, config, node_ids):
    self._sent[server_round] = len(node_ids)
    self._current_arrays = arrays
    config['server-round'] = server_round
    record = RecordDict({self.strategy.arrayrecord_key: arrays,
                         self.strategy.configrecord_key: config})
    return [Message(content=record, message_type=self._message_type,
                    dst_node_id=node) for node in node_ids]

  def _arrived(self, server_round: int, replies, dropouts_allowed: bool,
               fix: str):
    """The replies without errors; all that were sent unless allowed."""
    sent = self._sent.pop(server_round)
    arrived = [reply for reply in replies if not reply.has_error()]
    if not dropouts_allowed and len(arrived) != sent:
      raise ValueError(
          f'round {server_round}: {len(arrived)} of {sent} clients replied, '
          f'but the round accounted has every sampled client\'s update; {fix}')
    return arrived

  def _updates(self, replies, clip: bool):
    """Each reply's update (model − global), clipped to C if `clip`."""
    global_arrays = self._current_arrays.to_numpy_ndarrays()
    for reply in replies:
      local = reply.content[self.strategy.arrayrecord_key].to_numpy_ndarrays()
      if clip:
        compute_clip_model_update(local, global_arrays, self.clipping_norm)
      yield [np.asarray(new, dtype=np.float64) - old
             for new, old in zip(local, global_arrays, strict=True)]

  def _moved_by(self, total, divisor: float):
    """The global model plus `total` / `divisor`."""
    return ArrayRecord(array_dict={
        name: Array(np.asarray(old + update / divisor))
        for name, old, update in zip(
            self._current_arrays.keys(),
            self._current_arrays.to_numpy_ndarrays(), total, strict=True)})

  def configure_evaluate(self, server_round: int, arrays, config, grid):
    return self.strategy.configure_evaluate(server_round, arrays, config, grid)

  def aggregate_evaluate(self, server_round: int, replies):
    return self.strategy.aggregate_evaluate(server_round, replies)


def _summed(updates):
  total = None
  for update in updates:
    total = update if total is None else [
        first + second for first, second in zip(total, update, strict=True)]
  return total


class DistributedNoiseFixedClipping(_FixedClippingWrapper):
  """Distributed DP with fixed clipping: noise shares summed by secure aggregation (D30, D17).

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
    through what D30 proves with the participants known.
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

  `min_reporting` = m tolerates dropouts: a round releases the sum when at
  least m noise shares arrive and nothing otherwise. Without it every
  participant must reply; a round with a failed reply stops with an error
  (the sum of fewer shares is less noisy than accounted).

  Refused, with the fix named: a wrapped strategy whose training
  aggregation is not FedAvg's (weighted or server-optimizer aggregation is
  not the sum accounted), a population of connected clients other than
  `num_users`, and (with ``max_epsilon``) a round that would take ε above it
  (``PrivacyBudgetExhausted``). Client-side evaluation and client training
  metrics are not accounted; `distributed_noise_mod` sends no training
  metrics, and evaluating on a public set on the server
  (``evaluate_fn``) costs nothing. `train_action` routes the training
  messages to a ClientApp train function of that name (default: the
  default one).

  Secure aggregation itself is simulated: the server adds up the replies,
  which is what the protocol would deliver. The clients need
  ``ClientApp(mods=[distributed_noise_mod])``.
  """

  # pylint: disable=too-many-arguments,too-many-instance-attributes
  def __init__(self, strategy, noise_multiplier: float, clipping_norm: float,
               num_users: int, checkin_rate: float, *, target_delta: float,
               participation: str = 'revealed',
               min_reporting: Optional[int] = None,
               max_epsilon: Optional[float] = None,
               train_action: str = 'default') -> None:
    super().__init__(strategy, noise_multiplier, clipping_norm, num_users,
                     train_action)
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
    self._rng = np.random.default_rng()  # seeded from the OS's entropy

  def __repr__(self) -> str:
    return 'Distributed DP Strategy Wrapper (secure aggregation, fixed clipping)'

  @property
  def noise_share_stdv(self) -> float:
    """Each participant's noise standard deviation s = σ_agg·C/√(q·n)."""
    return self.event.noise_multiplier * self.clipping_norm

  def epsilon(self) -> float:
    """Certified ε at `target_delta` of the rounds configured so far."""
    return float(self.accountant.get_epsilon(self.target_delta))

  def summary(self) -> None:
    log(INFO, '\t├──> Distributed DP settings (secure aggregation):')
    log(INFO, '\t│\t├── Aggregate noise multiplier: %s (share stdv %.4g)',
        self.noise_multiplier, self.noise_share_stdv)
    log(INFO, '\t│\t├── Clipping norm: %s', self.clipping_norm)
    log(INFO, '\t│\t└── %s', self.event)
    self.strategy.summary()

  def configure_train(self, server_round: int, arrays, config, grid):
    """Samples (revealed) or asks everyone (hidden); accounts the round."""
    node_ids = self._population(grid)
    if self.max_epsilon is not None:
      projected = ShufflePldAccountant().compose(self.accountant.ledger)
      projected.compose(self.event)
      if projected.get_epsilon(self.target_delta) > self.max_epsilon:
        raise PrivacyBudgetExhausted(
            f'round {server_round} would take the certified epsilon above '
            f'max_epsilon={self.max_epsilon} (now {self.epsilon():.6g} at '
            f'delta={self.target_delta:g}).')
    if self.event.participation == 'revealed':
      node_ids = [node for node in node_ids
                  if self._rng.random() < self.checkin_rate]
    self.accountant.compose(self.event)
    self.num_rounds += 1
    config[KEY_CLIPPING_NORM] = self.clipping_norm
    config[KEY_NOISE_SHARE] = self.noise_share_stdv
    config[KEY_PARTICIPATION] = self.event.participation
    config[KEY_CHECKIN_RATE] = self.checkin_rate
    return self._messages(server_round, arrays, config, node_ids)

  def aggregate_train(self, server_round: int, replies):
    """The sum of the replies (secure aggregation's output) over k (over
    the expected cohort q·n when k is hidden)."""
    arrived = self._arrived(
        server_round, replies, self.event.min_reporting is not None,
        'pass min_reporting=m to release rounds with at least m noise shares '
        '(D30 accounts the dropouts).')
    metrics = {'dp-delta': self.target_delta}
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
    arrays = (self._moved_by(_summed(self._updates(arrived, clip=False)),
                             divisor) if released else None)
    metrics['dp-epsilon'] = self.epsilon()
    log(INFO, 'aggregate_train: %s, %s; certified epsilon=%.6f at delta=%g '
        'after %d rounds', outcome,
        'sum released' if released else 'nothing released',
        metrics['dp-epsilon'], self.target_delta, self.num_rounds)
    return arrays, MetricRecord(metrics)


class SampledServerSideFixedClipping(_FixedClippingWrapper):
  """Central DP with server-side clipping on secretly sampled clients (KHH-SUBSAMPLED, D7).

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
  population other than the connected clients, a round in which a sampled
  client does not reply (the release accounted includes every sampled
  update; a clipped update cannot be replaced), and a round that would take
  ε above the config's ``max_epsilon`` (``PrivacyBudgetExhausted``).
  """

  def __init__(self, strategy, noise_multiplier: float, clipping_norm: float,
               num_sampled_clients: int, *, accountant: PldAccountant,
               train_action: str = 'default') -> None:
    if not isinstance(accountant, PldAccountant):
      raise TypeError('accountant must be a shuffle_accountants.adapters.'
                      f'flower.PldAccountant; got {type(accountant).__name__}.')
    population = accountant.config.population_size
    super().__init__(strategy, noise_multiplier, clipping_norm, population,
                     train_action)
    self.num_sampled_clients = _validation.check_integer(
        'num_sampled_clients', num_sampled_clients, 1, population)
    self.accountant = accountant
    self.event = GaussianPrivacyEvent(self.noise_multiplier,
                                      self.num_sampled_clients, population)
    self._rng = np.random.default_rng()  # seeded from the OS's entropy

  def __repr__(self) -> str:
    return 'DP Strategy Wrapper (secret client sampling, server-side clipping)'

  def summary(self) -> None:
    log(INFO, '\t├──> DP settings (sampled clients, server-side clipping):')
    log(INFO, '\t│\t├── Noise multiplier: %s', self.noise_multiplier)
    log(INFO, '\t│\t├── Clipping norm: %s', self.clipping_norm)
    log(INFO, '\t│\t└── Sampling: %s, %d of %d', self.accountant.config
        .sampling_method, self.num_sampled_clients, self.num_users)
    self.strategy.summary()

  def configure_train(self, server_round: int, arrays, config, grid):
    node_ids = self._population(grid)
    if (self.accountant.config.max_epsilon is not None
        and self.accountant.would_exceed(self.event)):
      raise PrivacyBudgetExhausted(
          f'round {server_round} would take the certified epsilon above '
          f'max_epsilon={self.accountant.config.max_epsilon} (now '
          f'{self.accountant.get_privacy_spent().epsilon:.6g}).')
    if self.accountant.config.sampling_method == SamplingMethod.POISSON:
      rate = self.num_sampled_clients / self.num_users
      node_ids = [node for node in node_ids if self._rng.random() < rate]
    else:
      node_ids = [int(node) for node in self._rng.choice(
          node_ids, self.num_sampled_clients, replace=False)]
    return self._messages(server_round, arrays, config, node_ids)

  def aggregate_train(self, server_round: int, replies):
    arrived = self._arrived(
        server_round, replies, False,
        'rerun the round, or use DistributedNoiseFixedClipping(..., '
        'min_reporting=m), which accounts dropouts.')
    total = _summed(self._updates(arrived, clip=True)) or [
        np.zeros(np.shape(array)) for array in
        self._current_arrays.to_numpy_ndarrays()]
    stdv = self.noise_multiplier * self.clipping_norm
    noisy = [array + self._rng.normal(0.0, stdv, np.shape(array))
             for array in total]
    self.accountant.compose(self.event)
    self.num_rounds += 1
    spent = self.accountant.get_privacy_spent()
    log(INFO, 'aggregate_train: %d sampled clients, noise stdv %.4g on the '
        'sum; certified epsilon=%.6f at delta=%g after %d releases',
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
