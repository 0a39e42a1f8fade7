"""Flower's real SecAgg+ with Skellam noise, accounted as released.

IDs: SKELLAM-SUM

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
import math
from typing import Dict, List, Optional, Tuple

import attr
from flwr.app import Message
from flwr.app import MessageType
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
from shuffle_accountants.adapters.flower.wrapper import check_composable
from shuffle_accountants.events import SkellamSecureSumEvent
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.rdp.accountant import ShuffleRdpAccountant

__all__ = [
    'KEY_SKELLAM_CLIPPING_NORM', 'KEY_SKELLAM_GRANULARITY',
    'KEY_SKELLAM_NOISE_SHARE', 'KEY_SKELLAM_MODULUS', 'SkellamRound',
    'SkellamSecAggFedAvg', 'encode_update', 'skellam_mod',
    'skellam_secaggplus_workflow', 'wraparound_probability_bound',
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
  missing = [key for key in _KEYS if key not in fitins.config]
  if missing:
    raise KeyError(f'skellam_mod needs {missing} in the training config; '
                   'use SkellamSecAggFedAvg as the server strategy.')
  _check_secaggplus(msg, ctxt, int(fitins.config[KEY_SKELLAM_MODULUS]))
  out_msg = call_next(msg, ctxt)
  if out_msg.has_error():
    return out_msg
  fitres = compat.recorddict_to_fitres(out_msg.content, keep_input=True)
  local = parameters_to_ndarrays(fitres.parameters)
  update = [np.asarray(model, dtype=np.float64) - old for model, old in zip(
      local, parameters_to_ndarrays(fitins.parameters), strict=True)]
  config = fitins.config
  encoded = encode_update(
      update, float(config[KEY_SKELLAM_CLIPPING_NORM]),
      float(config[KEY_SKELLAM_GRANULARITY]),
      float(config[KEY_SKELLAM_NOISE_SHARE]),
      int(config[KEY_SKELLAM_MODULUS]), np.random.default_rng())
  reply = FitRes(fitres.status, ndarrays_to_parameters(encoded), 1, {})
  return Message(compat.fitres_to_recorddict(reply, keep_input=True),
                 reply_to=msg)


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


def skellam_secaggplus_workflow(modulus_bits: int, num_shares=1.0,
                                reconstruction_threshold=1.0,
                                timeout: Optional[float] = None
                                ) -> SecAggPlusWorkflow:
  """Flower's ``SecAggPlusWorkflow`` set to sum `skellam_mod`'s integers.

  clipping_range m/2, quantization_range m = 2^bits, max_weight 1 (every
  client sends weight 1) and modulus 2^32: Flower's clip is the identity on
  [-m/2, m/2), its scale is 1 and its stochastic rounding returns an integer
  unchanged, so the released sum reduced mod m is exact (SKELLAM-SUM (iv)).
  `num_shares`, `reconstruction_threshold` and `timeout` are SecAgg+'s.
  """
  bits = _validation.check_integer('modulus_bits', modulus_bits, 2,
                                   MAX_MODULUS_BITS)
  return SecAggPlusWorkflow(num_shares, reconstruction_threshold,
                            max_weight=1.0, clipping_range=2.0**(bits - 1),
                            quantization_range=2**bits,
                            modulus_range=SECAGG_MODULUS, timeout=timeout)


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
  every round released and accounted. Federated evaluation is off: client
  metrics would be releases of their own (evaluate centrally with
  ``evaluate_fn``).

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
    **kwargs: FedAvg's (``fraction_fit``, ``evaluate_fn``, ...).
  """

  def __init__(self, *, clipping_norm: float, granularity: float,
               noise_variance: float, modulus_bits: int,
               target_delta: float = 1e-5,
               accountant: Optional[ShuffleRdpAccountant] = None,
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
    self.accountant = accountant or ShuffleRdpAccountant()
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
    pairs = super().configure_fit(server_round, parameters, client_manager)
    k = len(pairs)
    if k * self.modulus >= SECAGG_MODULUS:
      raise ValueError(
          f'{k} clients with modulus_bits={self.modulus_bits}: SecAgg+ sums '
          f'the k weight factors 2^bits mod 2^32, so k must be below '
          f'2^(32 - modulus_bits) = {SECAGG_MODULUS // self.modulus}; lower '
          'modulus_bits or fraction_fit.')
    self._global = parameters_to_ndarrays(parameters)
    self._num_sampled = k
    shared = {KEY_SKELLAM_CLIPPING_NORM: self.clipping_norm,
              KEY_SKELLAM_GRANULARITY: self.granularity,
              KEY_SKELLAM_NOISE_SHARE: self.noise_variance / max(k, 1),
              KEY_SKELLAM_MODULUS: self.modulus}
    return [(proxy, FitIns(fitins.parameters, {**fitins.config, **shared}))
            for proxy, fitins in pairs]

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
      residue = np.mod(total, m)
      residues.append(np.where(residue >= m // 2, residue - m, residue))
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
    event = SkellamSecureSumEvent(
        dimension, self.clipping_norm, self.granularity,
        self.noise_variance * count / self._num_sampled)
    self.accountant.compose(event)
    epsilon = float(self.accountant.get_epsilon(self.target_delta))
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
