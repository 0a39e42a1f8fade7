"""Flower's real SecAgg+ with Skellam noise, accounted as released.

IDs: SKELLAM-SUM

On Flower's current API (``strategy.start``), where Flower 1.42 has no
SecAgg+, `SkellamNoiseFixedClipping` with the client mod
`skellam_noise_mod` runs the same encoding and accounting with the secure
sum simulated (the server adds the uploads mod m), and says so.

Three pieces, used together with Flower's legacy-compatible workflow
(``LegacyContext`` + ``DefaultWorkflow(fit_workflow=SecAggPlusWorkflow)``),
the only way Flower 1.42 runs SecAgg+:

* `skellam_mod` (clients, after Flower's ``secaggplus_mod``): clip the update
  (model - global) to L2 norm C, scale by the granularity g, round every
  coordinate at random to a neighbouring integer, add Sk(mu / k) noise per
  coordinate, reduce modulo m and centre in [-m/2, m/2).
* `skellam_secaggplus_workflow` (server): a ``SecAggPlusWorkflow`` whose
  clipping range m/2, quantization range m and weight 1 make its own clip
  and stochastic quantization the identity on those integers, so its masked
  modular sum gives (sum of the clients' integers) mod m exactly
  (SKELLAM-SUM (iv)).
* `SkellamSecAggFedAvg` (server strategy): tells the clients C, g, mu / k
  and m, decodes the released sum, moves the model by it over k, and
  accounts each round as the `SkellamSecureSumEvent` released, in a
  `ShuffleRdpAccountant` by default.
"""

from logging import INFO
from logging import WARNING
import math
from typing import Dict, List, Optional, Tuple

import attr
from flwr.app import Message
from flwr.app import MessageType
from flwr.app import MetricRecord
from flwr.common import FitIns
from flwr.common import FitRes
from flwr.common import Parameters
from flwr.common import Scalar
from flwr.common import ndarrays_to_parameters
from flwr.common import parameters_to_ndarrays
from flwr.common.secure_aggregation.secaggplus_constants import (
  RECORD_KEY_CONFIGS,
)
from flwr.common.secure_aggregation.secaggplus_constants import RECORD_KEY_STATE
from flwr.compat.common import recorddict_compat as compat
from flwr.server.client_manager import ClientManager
from flwr.server.client_proxy import ClientProxy
from flwr.server.strategy import FedAvg
from flwr.server.workflow import SecAggPlusWorkflow
from flwr.supercore import log
import numpy as np

from shuffle_accountants import _validation
from shuffle_accountants.adapters.flower import mod as noise_mods
from shuffle_accountants.adapters.flower.wrapper import (
  DEFAULT_CONNECTION_TIMEOUT,
)
from shuffle_accountants.adapters.flower.wrapper import FixedClippingWrapper
from shuffle_accountants.adapters.flower.wrapper import check_composable
from shuffle_accountants.adapters.flower.wrapper import with_round
from shuffle_accountants.events import SkellamSecureSumEvent
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.rdp.accountant import ShuffleRdpAccountant

__all__ = [
    'KEY_SKELLAM_CLIPPING_NORM', 'KEY_SKELLAM_GRANULARITY',
    'KEY_SKELLAM_NOISE_SHARE', 'KEY_SKELLAM_MODULUS',
    'DEFAULT_DROPOUT_TOLERANCE', 'DEFAULT_WRAPAROUND_TOLERANCE',
    'SkellamNoiseFixedClipping', 'SkellamRound', 'SkellamSecAggFedAvg',
    'encode_update', 'skellam_mod', 'skellam_noise_mod',
    'skellam_secaggplus_workflow', 'smallest_safe_modulus_bits',
    'wraparound_probability_bound',
]

# Keys of the training config the strategy sends to `skellam_mod`.
KEY_SKELLAM_CLIPPING_NORM = 'skellam-clipping-norm'
KEY_SKELLAM_GRANULARITY = 'skellam-granularity'
KEY_SKELLAM_NOISE_SHARE = 'skellam-noise-variance-share'
KEY_SKELLAM_MODULUS = 'skellam-modulus'
_KEYS = (KEY_SKELLAM_CLIPPING_NORM, KEY_SKELLAM_GRANULARITY,
         KEY_SKELLAM_NOISE_SHARE, KEY_SKELLAM_MODULUS)

# SecAgg+'s modulus: its sum of the k weight factors k m must stay below it.
SECAGG_MODULUS = 2**32
# Flower quantizes to int32: m - 1 must fit.
MAX_MODULUS_BITS = 31
# The fraction of a round's cohort SecAgg+ tolerates losing by default.
DEFAULT_DROPOUT_TOLERANCE = 0.2
# The largest per-round wrap-around bound `SkellamSecAggFedAvg` accepts.
DEFAULT_WRAPAROUND_TOLERANCE = 1e-6


def _clipped(update: List[np.ndarray], clipping_norm: float
             ) -> List[np.ndarray]:
  norm = math.sqrt(sum(float(np.sum(np.square(a))) for a in update))
  scale = min(1.0, clipping_norm / norm) if norm > 0 else 1.0
  return [a * scale for a in update]


def encode_update(update: List[np.ndarray], clipping_norm: float,
                  granularity: float, noise_variance_share: float,
                  modulus: int, rng: np.random.Generator
                  ) -> List[np.ndarray]:
  """One client's upload: the integers (r + z) mod m, centred.

  r is g times `update` clipped to L2 norm C, each coordinate rounded at
  random to one of its two neighbouring integers (unbiased); z is
  Poisson(s / 2) - Poisson(s / 2) per coordinate, s =
  `noise_variance_share`. Returned as float64 integers in [-m/2, m/2), which
  SecAgg+ configured by `skellam_secaggplus_workflow` sums exactly mod m.
  """
  encoded = []
  for array in _clipped([np.asarray(a, dtype=np.float64) for a in update],
                        clipping_norm):
    scaled = granularity * array
    low = np.floor(scaled)
    rounded = low + (rng.random(scaled.shape) < scaled - low)
    noise = (rng.poisson(noise_variance_share / 2, scaled.shape)
             - rng.poisson(noise_variance_share / 2, scaled.shape))
    residue = np.mod(rounded.astype(np.int64) + noise, modulus)
    encoded.append((residue - modulus // 2).astype(np.float64))
  return encoded


def skellam_mod(msg, ctxt, call_next):
  """Client mod of `SkellamSecAggFedAvg`: clip, round, add Skellam, mod m.

  Put it right after Flower's ``secaggplus_mod`` (``mods=[secaggplus_mod,
  skellam_mod]``), so that SecAgg+ masks what it returns. On a training
  message it reads C, g, the noise share mu / k and m from the config the
  strategy sent, runs the inner app, and replaces its reply by
  `encode_update` of (model - global) (the operating system's randomness),
  with weight 1 and no client metrics: those would be releases of their
  own, which nothing accounts.
  """
  if msg.metadata.message_type.split('.')[0] != MessageType.TRAIN:
    return call_next(msg, ctxt)
  fitins = compat.recorddict_to_fitins(msg.content, keep_input=True)
  clipping_norm, granularity, share, modulus = _skellam_config(
      fitins.config, 'skellam_mod (SkellamSecAggFedAvg)')
  _check_secaggplus(msg, ctxt, modulus)
  out_msg = call_next(msg, ctxt)
  if out_msg.has_error():
    return out_msg
  fitres = compat.recorddict_to_fitres(out_msg.content, keep_input=True)
  local = parameters_to_ndarrays(fitres.parameters)
  update = [np.asarray(model, dtype=np.float64) - old for model, old in zip(
      local, parameters_to_ndarrays(fitins.parameters), strict=True)]
  encoded = encode_update(update, clipping_norm, granularity, share,
                          modulus, np.random.default_rng())
  reply = FitRes(fitres.status, ndarrays_to_parameters(encoded), 1, {})
  return Message(compat.fitres_to_recorddict(reply, keep_input=True),
                 reply_to=msg)


def _skellam_config(config, needed_by: str):
  """(C, g, mu / k, m) from a training config, or KeyError naming them."""
  missing = [key for key in _KEYS if key not in config]
  if missing:
    raise KeyError(f'{needed_by} needs {missing} in the training config; '
                   'use its server strategy.')
  return (float(config[KEY_SKELLAM_CLIPPING_NORM]),
          float(config[KEY_SKELLAM_GRANULARITY]),
          float(config[KEY_SKELLAM_NOISE_SHARE]),
          int(config[KEY_SKELLAM_MODULUS]))


def skellam_noise_mod(msg, ctxt, call_next):
  """Client mod of `SkellamNoiseFixedClipping` (Flower's current API).

  On a training message it reads C, g, the noise share mu / k and m from
  the config, runs the inner app and replies with `encode_update` of
  (model - global) in place of the model (the operating system's
  randomness), with FedAvg's weight 1 and no other client metric.
  """
  if msg.metadata.message_type.split('.')[0] != MessageType.TRAIN:
    return call_next(msg, ctxt)
  key = noise_mods._only_array_record(msg.content, 'the training message')
  config = next(iter(msg.content.config_records.values()), {})
  clipping_norm, granularity, share, modulus = _skellam_config(
      config, 'skellam_noise_mod (SkellamNoiseFixedClipping)')
  record = msg.content[key]
  out_msg = call_next(msg, ctxt)
  if out_msg.has_error():
    return out_msg
  local = out_msg.content[noise_mods._only_array_record(
      out_msg.content, 'the training reply')].to_numpy_ndarrays()
  update = [np.asarray(new, dtype=np.float64) - old for new, old in zip(
      local, record.to_numpy_ndarrays(), strict=True)]
  encoded = encode_update(update, clipping_norm, granularity, share,
                          modulus, np.random.default_rng())
  return noise_mods._reply(msg, key, record.keys(), encoded, participant=None)


def _check_secaggplus(msg, ctxt, modulus: int) -> None:
  """Refuses to upload unless SecAgg+ will sum the integers exactly.

  The upload must go through Flower's ``secaggplus_mod`` (its configs are
  in the message, its state in the context) set up as
  `skellam_secaggplus_workflow` sets it (SKELLAM-SUM (iv)); anything else
  would show the server this client's upload, or change it.
  """
  state = ctxt.state.config_records.get(RECORD_KEY_STATE)
  if RECORD_KEY_CONFIGS not in msg.content.config_records or state is None:
    raise RuntimeError(
        'skellam_mod runs only inside Flower\'s secaggplus_mod, which masks '
        'its upload: ClientApp(..., mods=[secaggplus_mod, skellam_mod]) with '
        'the server running skellam_secaggplus_workflow.')
  expected = {'clipping_range': modulus / 2, 'target_range': modulus,
              'mod_range': SECAGG_MODULUS, 'max_weight': 1.0}
  wrong = {key: state.get(key) for key, value in expected.items()
           if state.get(key) != value}
  if wrong:
    raise ValueError(
        f'SecAgg+ set up with {wrong} would not sum the integers mod '
        f'{modulus} exactly; it needs {expected}: use '
        f'skellam_secaggplus_workflow({modulus.bit_length() - 1}).')


class _SkellamSecAggPlusWorkflow(SecAggPlusWorkflow):
  """Flower's ``SecAggPlusWorkflow``, its key shares dealt by the cohort
  and the nodes lost before dealing theirs left out of the unmasking.

  Flower 1.42 lists every node sampled at setup that is not active at the
  unmask stage as dead, and asks the survivors for its share of sk1; a
  node lost at the setup or share-keys stage never dealt shares (no
  survivor holds one, and none masked its vector with it), so every
  survivor's ``secaggplus_mod`` raises ``KeyError`` and the round releases
  nothing (and were it unmasked, the masks between a later dropout and
  such a node, which no upload holds, would be removed from the sum).
  After the share-keys stage the nodes whose shares were forwarded are the
  ones the masks involve: only they are kept as sampled and as neighbours.
  """

  def __init__(self, *args, dropout_tolerance: Optional[float], **kwargs):
    super().__init__(*args, **kwargs)
    self.dropout_tolerance = dropout_tolerance

  def setup_stage(self, grid, context, state) -> bool:
    proceed = super().setup_stage(grid, context, state)
    if state.num_shares:
      log(INFO, 'SecAgg+ round: %d clients, each key in %d shares, %d '
          'needed to rebuild one: up to %d of a client\'s share holders may '
          'drop out (dropout_tolerance=%s)', len(state.sampled_node_ids),
          state.num_shares, state.threshold,
          state.num_shares - state.threshold, self.dropout_tolerance)
    return proceed

  def share_keys_stage(self, grid, context, state) -> bool:
    proceed = super().share_keys_stage(grid, context, state)
    lost = state.sampled_node_ids - state.active_node_ids
    if lost:
      log(WARNING, 'SecAgg+: %d clients dropped out before dealing their key '
          'shares; the sum leaves them out', len(lost))
    dealers = set(state.active_node_ids)
    state.sampled_node_ids = dealers
    for node in list(state.nid_to_neighbours):
      state.nid_to_neighbours[node] &= dealers
    return proceed


def skellam_secaggplus_workflow(
    modulus_bits: int,
    dropout_tolerance: float = DEFAULT_DROPOUT_TOLERANCE, *,
    num_shares: Optional[float] = None,
    reconstruction_threshold: Optional[float] = None,
    timeout: Optional[float] = None) -> SecAggPlusWorkflow:
  """Flower's ``SecAggPlusWorkflow`` set to sum `skellam_mod`'s integers.

  clipping_range m/2, quantization_range m = 2^bits, max_weight 1 (every
  client sends weight 1) and modulus 2^32: Flower's clip is the identity on
  [-m/2, m/2), its scale is 1 and its stochastic rounding returns an integer
  unchanged, so the released sum reduced mod m is exact (SKELLAM-SUM (iv)).

  Dropouts: every client deals its key shares to the whole cohort of k
  (``num_shares=1.0``) and ``reconstruction_threshold=1 - f`` of them
  rebuild a key, f = `dropout_tolerance` in [0, 0.5) (below 1/2, so that
  the server never holds enough shares of both a client's keys): a round
  whose survivors keep at least round((1 - f) k) (and 2) of every key's
  shares releases the sum of the vectors that arrived, accounted with the
  noise they carry; one with fewer releases nothing. The numbers are
  logged each round. A client lost before it dealt its shares is left out
  of the sum (Flower 1.42 would fail the round, `_SkellamSecAggPlusWorkflow`).
  Passing `num_shares` and `reconstruction_threshold` (SecAgg+'s, ints or
  fractions) overrides them; `timeout` is SecAgg+'s (the wait after which
  a silent client counts as dropped).
  """
  bits = _validation.check_integer('modulus_bits', modulus_bits, 2,
                                   MAX_MODULUS_BITS)
  tolerance = _validation.check_real('dropout_tolerance', dropout_tolerance,
                                     0.0, 0.5, max_inclusive=False)
  return _SkellamSecAggPlusWorkflow(
      1.0 if num_shares is None else num_shares,
      1.0 - tolerance if reconstruction_threshold is None
      else reconstruction_threshold,
      dropout_tolerance=None if reconstruction_threshold is not None
      else tolerance,
      max_weight=1.0, clipping_range=2.0**(bits - 1),
      quantization_range=2**bits, modulus_range=SECAGG_MODULUS,
      timeout=timeout)


def wraparound_probability_bound(dimension: int, num_clients: int,
                                 clipping_norm: float, granularity: float,
                                 noise_variance: float,
                                 modulus_bits: int) -> float:
  """An upper bound on P[some coordinate of the sum wraps around mod m].

  A coordinate of the rounded sum is at most k (g C + 1) in absolute value,
  so it wraps only if |Z| >= m/2 - k (g C + 1) = t, and by the Chernoff
  bound for Sk(mu) (E e^{sZ} = e^{mu (cosh s - 1)}, s = asinh(t / mu)),
  P[|Z| >= t] <= 2 e^{mu (cosh s - 1) - s t}; a union over the d
  coordinates (at least 1e-300, at most 1). Wrap-around costs accuracy,
  not privacy (SKELLAM-SUM (iv)).
  """
  bits = _validation.check_integer('modulus_bits', modulus_bits, 2,
                                   MAX_MODULUS_BITS)
  mu = _validation.check_real('noise_variance', noise_variance, 0.0,
                              min_inclusive=False)
  reach = num_clients * (granularity * clipping_norm + 1.0)
  margin = 2.0**(bits - 1) - reach
  if margin <= 0:
    return 1.0
  s = math.asinh(margin / mu)
  log_bound = (math.log(2.0 * dimension) + mu * (math.cosh(s) - 1.0)
               - s * margin)
  # Below 1e-300 the bound is reported as 1e-300 (still an upper bound).
  return math.exp(min(0.0, max(log_bound, math.log(1e-300))))


def smallest_safe_modulus_bits(dimension: int, num_clients: int,
                               clipping_norm: float, granularity: float,
                               noise_variance: float,
                               tolerance: float = DEFAULT_WRAPAROUND_TOLERANCE
                               ) -> Optional[int]:
  """The smallest b in [2, 31] whose `wraparound_probability_bound` is at
  most `tolerance` (None if none is: lower g or the cohort).

  The bound falls as b grows (the margin m/2 - k (g C + 1) grows), so the
  first b that meets the tolerance is the answer.
  """
  tolerance = _validation.check_real('tolerance', tolerance, 0.0, 1.0,
                                     min_inclusive=False)
  for bits in range(2, MAX_MODULUS_BITS + 1):
    if wraparound_probability_bound(dimension, num_clients, clipping_norm,
                                    granularity, noise_variance,
                                    bits) <= tolerance:
      return bits
  return None


def check_wraparound(strategy, dimension: int, num_clients: int) -> None:
  """Refuses `strategy`'s round of `num_clients` if its wrap-around bound
  exceeds its ``wraparound_tolerance``, naming the smallest safe bits."""
  settings = (dimension, num_clients, strategy.clipping_norm,
              strategy.granularity, strategy.noise_variance)
  bound = wraparound_probability_bound(*settings, strategy.modulus_bits)
  if bound <= strategy.wraparound_tolerance:
    return
  safe = smallest_safe_modulus_bits(*settings, strategy.wraparound_tolerance)
  fix = (f'modulus_bits={safe} is the smallest that meets it'
         if safe is not None and num_clients * 2**safe < SECAGG_MODULUS
         else 'no modulus_bits SecAgg+ can sum meets it: lower granularity '
         'or the cohort')
  raise ValueError(
      f'modulus_bits={strategy.modulus_bits} with {num_clients} clients, d='
      f'{dimension}: a coordinate of the sum wraps around mod '
      f'2^{strategy.modulus_bits} with probability up to {bound:.3g} per '
      'round (wraparound_probability_bound), above wraparound_tolerance='
      f'{strategy.wraparound_tolerance:g}; {fix}.')


def _centred(residue: np.ndarray, modulus: int) -> np.ndarray:
  """An integer array mod `modulus`, centred in [-m/2, m/2)."""
  residue = np.mod(residue, modulus)
  return np.where(residue >= modulus // 2, residue - modulus, residue)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SkellamRound:
  """What one round released and what was accounted for it.

  Attributes:
    server_round: the round.
    num_sampled: k, the clients told the noise share mu / k.
    num_summed: k', the clients whose masked vectors reached the sum.
    residues: the released sum mod m, centred in [-m/2, m/2), per array.
    event: the `SkellamSecureSumEvent` accounted (noise of k' shares).
    epsilon: the certified epsilon after the round.
  """
  server_round: int
  num_sampled: int
  num_summed: int
  residues: Tuple[np.ndarray, ...]
  event: SkellamSecureSumEvent
  epsilon: float


class SkellamSecAggFedAvg(FedAvg):
  """FedAvg on Flower's SecAgg+ with Skellam noise, accounted as released.

  See SKELLAM-SUM.

  Each round the sampled k clients (Flower's ``fraction_fit`` sampling; the
  participants are known to the server, so no amplification is claimed)
  each send `encode_update` of their update through SecAgg+
  (`skellam_secaggplus_workflow`, `skellam_mod`); the server sees only
  (sum_i r_i + Z) mod m, Z ~ Sk(mu)^d when all k reach the sum
  (mu k' / k for k' survivors). The new global model is the old one plus
  the centred residue over g k'. Each round is composed into `accountant`
  as ``SkellamSecureSumEvent(d, C, g, mu k' / k)``, and the certified
  epsilon at `target_delta` is logged and returned as the round's fit
  metric ``dp-epsilon``; `rounds` keeps what
  every round released and accounted. A round that releases nothing
  (SecAgg+ halted: too few survivors to unmask) composes nothing, and the
  run goes on. Federated evaluation is off: client
  metrics would be releases of their own (evaluate centrally with
  ``evaluate_fn``).

  Refused before any client trains (`configure_fit`, round 1): a cohort
  whose wrap-around bound (`wraparound_probability_bound`) exceeds
  `wraparound_tolerance`, with the smallest safe ``modulus_bits`` named.
  With `max_epsilon`, a round that would take ε above it (all k summed)
  is not run: no client is asked from then on, `budget_exhausted_at` is
  the first round not run, and Flower's history holds the completed
  rounds.

  Args:
    clipping_norm: C > 0.
    granularity: g > 0 (integer unit 1 / g).
    noise_variance: mu > 0, the per-coordinate variance of the summed
      Skellam noise in integer units (the Gaussian's sigma C corresponds
      to sqrt(mu) / g).
    modulus_bits: b in [2, 31]; m = 2^b, as in `skellam_secaggplus_workflow`.
    target_delta: the delta of the reported epsilon, in (0, 1).
    accountant: the `ShuffleRdpAccountant` to compose into (a new one by
      default; a `ShufflePldAccountant` is accepted too, looser over many
      rounds here, SKELLAM-SUM). One that cannot compose the round's
      event (e.g. under add-or-remove-one) is refused here, before any
      round runs.
    max_epsilon: the budget at `target_delta` (> 0), or None.
    wraparound_tolerance: the largest accepted per-round bound on
      P[some coordinate of the sum wraps around], in (0, 1].
    **kwargs: FedAvg's (``fraction_fit``, ``evaluate_fn``, ...).
  """

  def __init__(self, *, clipping_norm: float, granularity: float,
               noise_variance: float, modulus_bits: int,
               target_delta: float = 1e-5,
               accountant: Optional[ShuffleRdpAccountant] = None,
               max_epsilon: Optional[float] = None,
               wraparound_tolerance: float = DEFAULT_WRAPAROUND_TOLERANCE,
               **kwargs) -> None:
    super().__init__(**kwargs)
    self.clipping_norm = _validation.check_real(
        'clipping_norm', clipping_norm, 0.0, min_inclusive=False)
    self.granularity = _validation.check_real(
        'granularity', granularity, 0.0, min_inclusive=False)
    self.noise_variance = _validation.check_real(
        'noise_variance', noise_variance, 0.0, min_inclusive=False)
    self.modulus_bits = _validation.check_integer(
        'modulus_bits', modulus_bits, 2, MAX_MODULUS_BITS)
    self.target_delta = _validation.check_delta('target_delta', target_delta)
    if accountant is not None and not isinstance(
        accountant, (ShuffleRdpAccountant, ShufflePldAccountant)):
      raise TypeError(
          'accountant must be a ShuffleRdpAccountant (tighter here) or a '
          f'ShufflePldAccountant; got {type(accountant).__name__}.')
    self.max_epsilon = (None if max_epsilon is None else _validation.check_real(
        'max_epsilon', max_epsilon, 0.0, min_inclusive=False))
    self.wraparound_tolerance = _validation.check_real(
        'wraparound_tolerance', wraparound_tolerance, 0.0, 1.0,
        min_inclusive=False)
    self.accountant = accountant or ShuffleRdpAccountant()
    self.budget_exhausted_at: Optional[int] = None
    # The model's dimension is known only at the first sum; the relation
    # and the noise, which decide whether it composes, are known now.
    check_composable(self.accountant, SkellamSecureSumEvent(
        1, self.clipping_norm, self.granularity, self.noise_variance),
                     'SkellamSecAggFedAvg')
    self.rounds: List[SkellamRound] = []
    self.final_parameters: Optional[Parameters] = None
    self._global: List[np.ndarray] = []
    self._num_sampled = 0

  @property
  def modulus(self) -> int:
    return 2**self.modulus_bits

  def __repr__(self) -> str:
    return (f'SkellamSecAggFedAvg(clipping_norm={self.clipping_norm}, '
            f'granularity={self.granularity}, noise_variance='
            f'{self.noise_variance}, modulus_bits={self.modulus_bits})')

  def configure_fit(self, server_round: int, parameters: Parameters,
                    client_manager: ClientManager
                    ) -> List[Tuple[ClientProxy, FitIns]]:
    if self.budget_exhausted_at is not None:
      return []
    pairs = super().configure_fit(server_round, parameters, client_manager)
    k = len(pairs)
    if k * self.modulus >= SECAGG_MODULUS:
      raise ValueError(
          f'{k} clients with modulus_bits={self.modulus_bits}: SecAgg+ sums '
          f'the k weight factors 2^bits mod 2^32, so k must be below '
          f'2^(32 - modulus_bits) = {SECAGG_MODULUS // self.modulus}; lower '
          'modulus_bits or fraction_fit.')
    self._global = parameters_to_ndarrays(parameters)
    dimension = int(sum(array.size for array in self._global))
    check_wraparound(self, dimension, k)
    if self.max_epsilon is not None and k:
      projected = with_round(self.accountant, self._event(dimension, k, k))
      if projected.get_epsilon(self.target_delta) > self.max_epsilon:
        self.budget_exhausted_at = server_round
        log(WARNING, 'Skellam SecAgg+: round %s would take the certified '
            'epsilon above max_epsilon=%s (now %.6g at delta=%g); training '
            'stops.', server_round, self.max_epsilon, self.epsilon(),
            self.target_delta)
        return []
    self._num_sampled = k
    shared = {KEY_SKELLAM_CLIPPING_NORM: self.clipping_norm,
              KEY_SKELLAM_GRANULARITY: self.granularity,
              KEY_SKELLAM_NOISE_SHARE: self.noise_variance / max(k, 1),
              KEY_SKELLAM_MODULUS: self.modulus}
    return [(proxy, FitIns(fitins.parameters, {**fitins.config, **shared}))
            for proxy, fitins in pairs]

  def _event(self, dimension: int, num_sampled: int, num_summed: int
             ) -> SkellamSecureSumEvent:
    """The release of `num_summed` of `num_sampled` noise shares."""
    return SkellamSecureSumEvent(
        dimension, self.clipping_norm, self.granularity,
        self.noise_variance * num_summed / num_sampled)

  def epsilon(self) -> float:
    """Certified ε at `target_delta` of the rounds released so far."""
    return float(self.accountant.get_epsilon(self.target_delta))

  def configure_evaluate(self, server_round, parameters, client_manager):
    del server_round, parameters, client_manager
    return []

  def _residues(self, aggregated: List[np.ndarray], count: int
                ) -> List[np.ndarray]:
    """Undoes SecAgg+'s dequantization: its sum mod 2^32, then mod m.

    SecAgg+ returns (S - k' m/2) / k' for the modular sum S of k' uploads
    (clipping range m/2, weight 1); S is an integer below 2^32, recovered
    exactly by rounding (the float error is far below 1/2).
    """
    m = self.modulus
    residues = []
    for array in aggregated:
      total = np.rint(np.asarray(array, dtype=np.float64) * count
                      + count * (m // 2)).astype(np.int64)
      residues.append(_centred(total, m))
    return residues

  def aggregate_fit(self, server_round: int,
                    results: List[Tuple[ClientProxy, FitRes]], failures
                    ) -> Tuple[Optional[Parameters], Dict[str, Scalar]]:
    if not results:
      return None, {}
    first = results[0][1].parameters.tensors
    if len(results) < 2 or any(fitres.parameters.tensors != first
                               for _, fitres in results):
      raise RuntimeError(
          'SkellamSecAggFedAvg received the clients\' own uploads, not '
          'SecAgg+\'s sum (every reply carries the sum under SecAgg+): run '
          'it under DefaultWorkflow(fit_workflow=skellam_secaggplus_workflow('
          'bits)).')
    count = len(results)
    residues = self._residues(parameters_to_ndarrays(results[0][1].parameters),
                              count)
    dimension = int(sum(r.size for r in residues))
    event = self._event(dimension, self._num_sampled, count)
    self.accountant.compose(event)
    epsilon = self.epsilon()
    self.rounds.append(SkellamRound(server_round, self._num_sampled, count,
                                    tuple(residues), event, epsilon))
    log(INFO, 'Skellam SecAgg+ round %s: %s of %s clients summed, '
        'epsilon %.4g at delta %g (SKELLAM-SUM)', server_round, count,
        self._num_sampled, epsilon, self.target_delta)
    model = [old + residue / (self.granularity * count)
             for old, residue in zip(self._global, residues, strict=True)]
    self.final_parameters = ndarrays_to_parameters(model)
    return self.final_parameters, {
        'dp-epsilon': epsilon, 'dp-delta': self.target_delta,
        'dp-participants': count}


class SkellamNoiseFixedClipping(FixedClippingWrapper):
  """Skellam noise shares on Flower's current API: secure sum simulated.

  See SKELLAM-SUM.

  The release of `SkellamSecAggFedAvg` with ``strategy.start`` (Flower
  1.42 runs SecAgg+ only in its legacy API): each round all n =
  `num_users` connected clients are asked; each (`skellam_noise_mod`)
  uploads `encode_update` of its update, noise share mu / n; the server
  adds the k' uploads that arrive mod m, centres the sum and moves the
  model by it over g k'. Each round is accounted as
  ``SkellamSecureSumEvent(d, C, g, mu k' / n)`` (the noise that arrived;
  a round with no upload releases and composes nothing) in `accountant`
  (a `ShuffleRdpAccountant` by default), and ``dp-epsilon`` at
  `target_delta` is the round's training metric.

  **Secure aggregation is simulated**: this server adds up the uploads and
  sees each client's rounded update with only its own share Sk(mu / n)
  on it. The strategy says so at start (a warning) and reports, next to
  ``dp-epsilon`` (what a real secure sum would release),
  ``dp-epsilon-server-view``: the ε of what this server sees, each
  round ``SkellamSecureSumEvent(d, C, g, mu / n)`` (one client's upload is
  that release with one participant), an upper bound. For a server that
  must not see the uploads use `SkellamSecAggFedAvg` with Flower's
  SecAgg+.

  Refused as `SkellamSecAggFedAvg` refuses (k m at or above 2^32, a
  wrap-around bound above `wraparound_tolerance` with the smallest safe
  ``modulus_bits``), and as the other wrappers (a wrapped strategy that is
  not FedAvg, the population, client evaluation). With `max_epsilon`, a
  round that would take ε above it is not run: ``strategy.start`` returns
  Flower's ``Result`` of the completed rounds (`budget_exhausted_at`). The
  clients need ``ClientApp(mods=[skellam_noise_mod])``.
  """

  def __init__(self, strategy, *, clipping_norm: float, granularity: float,
               noise_variance: float, modulus_bits: int, num_users: int,
               target_delta: float = 1e-5,
               accountant: Optional[ShuffleRdpAccountant] = None,
               max_epsilon: Optional[float] = None,
               wraparound_tolerance: float = DEFAULT_WRAPAROUND_TOLERANCE,
               train_action: str = 'default',
               connection_timeout: float = DEFAULT_CONNECTION_TIMEOUT,
               evaluation_metrics: str = 'refused') -> None:
    granularity = _validation.check_real('granularity', granularity, 0.0,
                                         min_inclusive=False)
    noise_variance = _validation.check_real(
        'noise_variance', noise_variance, 0.0, min_inclusive=False)
    # The Gaussian's multiplier of the same noise (sqrt(mu) / (g C)).
    super().__init__(strategy, math.sqrt(noise_variance) / (
        granularity * _validation.check_real(
            'clipping_norm', clipping_norm, 0.0, min_inclusive=False)),
                     clipping_norm, num_users, train_action,
                     connection_timeout, evaluation_metrics)
    self.granularity = granularity
    self.noise_variance = noise_variance
    self.modulus_bits = _validation.check_integer(
        'modulus_bits', modulus_bits, 2, MAX_MODULUS_BITS)
    self.target_delta = _validation.check_delta('target_delta', target_delta)
    self.max_epsilon = (None if max_epsilon is None else _validation.check_real(
        'max_epsilon', max_epsilon, 0.0, min_inclusive=False))
    self.wraparound_tolerance = _validation.check_real(
        'wraparound_tolerance', wraparound_tolerance, 0.0, 1.0,
        min_inclusive=False)
    if accountant is not None and not isinstance(
        accountant, (ShuffleRdpAccountant, ShufflePldAccountant)):
      raise TypeError(
          'accountant must be a ShuffleRdpAccountant (tighter here) or a '
          f'ShufflePldAccountant; got {type(accountant).__name__}.')
    self.accountant = accountant or ShuffleRdpAccountant()
    check_composable(self.accountant, SkellamSecureSumEvent(
        1, self.clipping_norm, self.granularity, self.noise_variance),
                     'SkellamNoiseFixedClipping')
    self.server_view = ShuffleRdpAccountant()
    self.rounds: List[SkellamRound] = []
    self._dimension = 0

  @property
  def modulus(self) -> int:
    return 2**self.modulus_bits

  def __repr__(self) -> str:
    return ('Skellam noise shares (secure aggregation simulated, fixed '
            'clipping)')

  def _event(self, num_summed: int, num_sampled: int
             ) -> SkellamSecureSumEvent:
    return SkellamSecureSumEvent(
        self._dimension, self.clipping_norm, self.granularity,
        self.noise_variance * num_summed / num_sampled)

  def epsilon(self) -> float:
    """Certified ε at `target_delta` of the rounds released so far."""
    return float(self.accountant.get_epsilon(self.target_delta))

  def summary(self) -> None:
    log(WARNING, 'No secure aggregation runs: this server sums the uploads '
        'and sees each client\'s rounded update with only its noise share '
        '(variance %.4g) on it. dp-epsilon is what a real secure sum would '
        'release; dp-epsilon-server-view is what this server sees.',
        self.noise_variance / self.num_users)
    log(INFO, '\t├──> Skellam noise shares (secure aggregation simulated): '
        'C=%s, g=%s, mu=%.6g, modulus 2^%d', self.clipping_norm,
        self.granularity, self.noise_variance, self.modulus_bits)
    self.strategy.summary()

  def configure_train(self, server_round: int, arrays, config, grid):
    if self.budget_exhausted_at is not None:
      return []
    node_ids = self._population(grid)
    k = len(node_ids)
    if k * self.modulus >= SECAGG_MODULUS:
      raise ValueError(
          f'{k} clients with modulus_bits={self.modulus_bits}: k m must be '
          f'below 2^32 (as SecAgg+ needs), k below '
          f'{SECAGG_MODULUS // self.modulus}; lower modulus_bits.')
    self._dimension = int(sum(array.size
                              for array in arrays.to_numpy_ndarrays()))
    check_wraparound(self, self._dimension, k)
    if self.max_epsilon is not None:
      projected = with_round(self.accountant, self._event(k, k))
      if projected.get_epsilon(self.target_delta) > self.max_epsilon:
        return self._stop_for_budget(server_round, (
            f'round {server_round} would take the certified epsilon above '
            f'max_epsilon={self.max_epsilon} (now {self.epsilon():.6g} at '
            f'delta={self.target_delta:g}).'))
    config[KEY_SKELLAM_CLIPPING_NORM] = self.clipping_norm
    config[KEY_SKELLAM_GRANULARITY] = self.granularity
    config[KEY_SKELLAM_NOISE_SHARE] = self.noise_variance / k
    config[KEY_SKELLAM_MODULUS] = self.modulus
    return self._messages(server_round, arrays, config, node_ids)

  def aggregate_train(self, server_round: int, replies):
    """The uploads' sum mod m (secure aggregation's output), decoded."""
    if self.budget_exhausted_at is not None:
      return None, None
    sampled = self._sent[server_round]
    arrived = self._arrived(server_round, replies, True, '')
    if not arrived:
      log(WARNING, 'Skellam round %s: no upload arrived, nothing released '
          'or accounted', server_round)
      return None, None
    m = self.modulus
    uploads = [reply.content[noise_mods._only_array_record(
        reply.content, 'a training reply')].to_numpy_ndarrays()
               for reply in arrived]
    residues = [_centred(sum(np.rint(upload[index]).astype(np.int64) + m // 2
                             for upload in uploads), m)
                for index in range(len(uploads[0]))]
    count = len(arrived)
    event = self._event(count, sampled)
    self.accountant.compose(event)
    self.server_view.compose(self._event(1, sampled))
    self.num_rounds += 1
    epsilon = self.epsilon()
    self.rounds.append(SkellamRound(server_round, sampled, count,
                                    tuple(residues), event, epsilon))
    server_view = float(self.server_view.get_epsilon(self.target_delta))
    log(INFO, 'aggregate_train: %s of %s uploads summed mod 2^%d; certified '
        'epsilon=%.6f at delta=%g after %d rounds (of what this server sees: '
        '%.6f)', count, sampled, self.modulus_bits, epsilon,
        self.target_delta, self.num_rounds, server_view)
    return (self._moved_by(residues, self.granularity * count),
            MetricRecord({'dp-epsilon': epsilon, 'dp-delta': self.target_delta,
                          'dp-participants': count,
                          'dp-epsilon-server-view': server_view}))
