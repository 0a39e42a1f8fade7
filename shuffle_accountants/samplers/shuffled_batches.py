"""Shuffled fixed-size batches: an upper and a lower bound on epsilon.

IDs: SHUFFLED-BATCHES-UB, CHUA24-SHUFFLE-LB, SHUFFLED-BATCHES-LB

Upper bound [UB] (SHUFFLED-BATCHES-UB): each epoch puts every example in exactly
one batch, so one epoch is, for the differing example, one Gaussian release of
sensitivity 1 (add/remove, zero-out) or 2 (replace-one) in units of
sigma C; E epochs are a Gaussian mechanism with mu = s sqrt(E) / sigma.
Its epsilon is solved from the exact Gaussian profile and rounded up.

Lower bound [LB] (SHUFFLED-BATCHES-LB): Chua et al. place the other examples'
gradients at -C and the differing one's at +C (its replacement: -C; removed: an
empty slot), so that after a known shift the output of one epoch is a mixture
over which of the t batches holds the differing example,
P = (1/t) sum_i N(a e_i, sigma^2 I) against Q = (1/t) sum_i N(b e_i, sigma^2 I)
with (a, b) = (2, 1) (add/remove) or (2, 0) (replace-one), and test the
event {sum over epochs of max_i y_i >= c}. Any event gives
eps >= log((P(E) - delta) / Q(E)); the probabilities are computed in
closed form (one epoch) or on a grid rounded against the bound (several).
"""

import math
from typing import Tuple, TypeAlias

import attr
from dp_accounting import privacy_accountant
import numpy as np
from scipy import signal
from scipy import special

from shuffle_accountants import _search
from shuffle_accountants import _validation

__all__ = [
    'NeighboringRelation', 'LOWER_BOUND_MAX_EPOCHS', 'EpsilonRange',
    'check_relation', 'sensitivity', 'gaussian_delta', 'gaussian_epsilon',
    'upper_bound', 'lower_bound', 'shuffled_batches_epsilon',
]

NeighboringRelation: TypeAlias = privacy_accountant.NeighboringRelation

# Spike heights (a, b) of the lower-bound pair, in units of C
# (SHUFFLED-BATCHES-LB).
_SPIKES = {NeighboringRelation.ADD_OR_REMOVE_ONE: (2.0, 1.0),
           NeighboringRelation.REPLACE_ONE: (2.0, 0.0)}
# The lower bound uses at most this many epochs (more epochs can only raise
# the true epsilon, so a bound for fewer is still a bound).
LOWER_BOUND_MAX_EPOCHS = 32
# Relative allowance for floating point in the probabilities (far above
# the ~1e-15 of log_ndtr and the sums).
_RELATIVE_ALLOWANCE = 1e-10
# Absolute allowance per grid point and composition for FFT round-off in a
# convolution of probability vectors (a few ulps times log2 of the length).
_FFT_ALLOWANCE = 1e-14
# Grid of the lower-bound pair's privacy losses (rounded down onto it).
_LOSS_SPACING = 1e-3


@attr.s(frozen=True, slots=True, auto_attribs=True)
class EpsilonRange:
  """Where the true epsilon lies: lower <= epsilon <= upper.

  Attributes:
    lower: CHUA24-SHUFFLE-LB, a lower bound [LB]: no accountant may report
      less for this mechanism.
    upper: the certified upper bound [UB] (SHUFFLED-BATCHES-UB), what to report.
  """
  lower: float
  upper: float


def check_relation(neighboring_relation) -> NeighboringRelation:
  if neighboring_relation not in _SPIKES:
    raise ValueError(
        'neighboring_relation must be NeighboringRelation.ADD_OR_REMOVE_ONE '
        f'or NeighboringRelation.REPLACE_ONE; got {neighboring_relation!r}.')
  return neighboring_relation


def sensitivity(neighboring_relation: NeighboringRelation) -> float:
  """L2 sensitivity of one epoch in units of C (SHUFFLED-BATCHES-UB)."""
  return (2.0 if neighboring_relation is NeighboringRelation.REPLACE_ONE
          else 1.0)


def gaussian_delta(mu: float, epsilon: float) -> float:
  """delta(eps) of N(mu, 1) against N(0, 1) (exact profile)."""
  with np.errstate(over='ignore'):
    first = special.log_ndtr(mu / 2 - epsilon / mu)
    second = epsilon + special.log_ndtr(-mu / 2 - epsilon / mu)
  return float(max(math.exp(first) - math.exp(second), 0.0)) if (
      second < 700) else 0.0


def gaussian_epsilon(mu: float, delta: float, allowance: float = 1e-8
                     ) -> float:
  """Smallest epsilon with delta(eps) <= delta for Gaussian mu, rounded up
  (`allowance`: relative error allowed to `gaussian_delta`)."""
  if mu == 0 or delta >= 1:
    return 0.0
  if not math.isfinite(mu) or delta <= 0:
    return math.inf
  target = delta * (1 - allowance)  # covers the profile's rounding
  if gaussian_delta(mu, 0.0) <= target:
    return 0.0
  above = lambda epsilon: gaussian_delta(mu, epsilon) > target
  return _search.bisected(
      above, *_search.widened(above, 0.0, max(1.0, mu * mu)), 100, 1e-12)[1]


def upper_bound(noise_multiplier: float, num_epochs: int, target_delta: float,
                neighboring_relation: NeighboringRelation) -> float:
  """SHUFFLED-BATCHES-UB: no amplification, mu = s sqrt(E) / sigma. [UB]"""
  if noise_multiplier == 0:
    return math.inf if target_delta < 1 else 0.0
  mu = sensitivity(neighboring_relation) * math.sqrt(num_epochs) / (
      noise_multiplier)
  return gaussian_epsilon(mu, target_delta)


def _log_max_cdf(points: np.ndarray, spike: float, noise_multiplier: float,
                 steps: int) -> np.ndarray:
  """log P[max_i y_i <= m] when y = spike e_I + N(0, sigma^2 I_t)."""
  return (special.log_ndtr((points - spike) / noise_multiplier)
          + (steps - 1) * special.log_ndtr(points / noise_multiplier))


def _one_epoch(noise_multiplier: float, steps: int, delta: float,
               spikes: Tuple[float, float]) -> float:
  """max over thresholds c of log((P(M > c) - delta) / Q(M > c)), exactly."""
  thresholds = np.linspace(-8.0, 12.0, 40001) * noise_multiplier + spikes[0]
  upper_tail = [-np.expm1(_log_max_cdf(thresholds, spike, noise_multiplier,
                                        steps)) for spike in spikes]
  return _best_ratio(upper_tail[0] * (1 - _RELATIVE_ALLOWANCE),
                     upper_tail[1] * (1 + _RELATIVE_ALLOWANCE), delta)


def _best_ratio(p_tail: np.ndarray, q_tail: np.ndarray, delta: float) -> float:
  usable = (p_tail > delta) & (q_tail > 0)
  if not np.any(usable):
    return 0.0
  ratios = np.log(p_tail[usable] - delta) - np.log(q_tail[usable])
  return float(max(np.max(ratios), 0.0))


def _cell_masses(edges: np.ndarray, spike: float, noise_multiplier: float,
                 steps: int) -> np.ndarray:
  """P[M in each cell] for the cells
  (-inf, e_0], (e_0, e_1], ..., (e_K, inf)."""
  log_cdf = _log_max_cdf(edges, spike, noise_multiplier, steps)
  cdf, survival = np.exp(log_cdf), -np.expm1(log_cdf)
  # Differences of whichever of cdf / survival is small: no cancellation.
  inner = np.where(cdf[1:] < 0.5, np.diff(cdf), -np.diff(survival))
  return np.concatenate([cdf[:1], np.maximum(inner, 0.0), survival[-1:]])


def _composed_max_pair(noise_multiplier: float, steps: int, epochs: int,
                       delta: float, spikes: Tuple[float, float]) -> float:
  """Epsilon of E epochs of the pair of laws of M = max_i y_i, from below.

  Binning M is a post-processing, so the binned pair (p_k, q_k) is a lower
  bound pair (SHUFFLED-BATCHES-LB); its losses are rounded down to a grid (which
  lowers delta at every epsilon) and its E-fold composition's delta profile,
  with FFT round-off subtracted, is inverted from below.
  """
  edges = np.linspace(-8.0, 12.0, 4001) * noise_multiplier + spikes[0]
  p_cells = _cell_masses(edges, spikes[0], noise_multiplier, steps)
  q_cells = _cell_masses(edges, spikes[1], noise_multiplier, steps)
  p_cells = p_cells * (1 - _RELATIVE_ALLOWANCE)
  keep = p_cells > 0
  p_cells, q_cells = p_cells[keep], q_cells[keep]
  infinite = q_cells <= 0
  p_infinity = float(np.sum(p_cells[infinite]))
  with np.errstate(divide='ignore'):
    # Relative errors of the masses (~1e-12) are covered by the 1e-9.
    losses = (np.log(p_cells[~infinite]) - np.log(q_cells[~infinite])
              - 1e-9)
  spacing = _LOSS_SPACING
  index = np.floor(losses / spacing).astype(np.int64)
  lower = int(index.min())
  probs = np.bincount(index - lower, weights=p_cells[~infinite])
  composed = probs
  for _ in range(epochs - 1):
    composed = signal.fftconvolve(composed, probs)
  composed = np.maximum(composed - _FFT_ALLOWANCE * epochs, 0.0)
  composed_losses = (epochs * lower + np.arange(composed.size)) * spacing
  # Paths with an infinite loss in some epoch: (1 - (1 - m)^E), from below.
  infinity = -math.expm1(epochs * math.log1p(-min(p_infinity, 1.0)))

  def delta_of(epsilon: float) -> float:
    above = composed_losses > epsilon
    return infinity + float(np.sum(composed[above] * -np.expm1(
        epsilon - composed_losses[above])))

  if delta_of(0.0) <= delta:
    return 0.0
  low, high = 0.0, float(composed_losses[-1])
  if delta_of(high) > delta:  # only the infinite mass exceeds delta
    return math.inf if infinity > delta else high
  return _search.bisected(lambda epsilon: delta_of(epsilon) > delta, low,
                          high, 60)[0]


def lower_bound(noise_multiplier: float, steps_per_epoch: int,
                num_epochs: int, target_delta: float,
                neighboring_relation: NeighboringRelation) -> float:
  """CHUA24-SHUFFLE-LB: a lower bound on epsilon for shuffled batches. [LB]"""
  if noise_multiplier == 0:
    return math.inf if target_delta < 1 else 0.0
  if target_delta >= 1:
    return 0.0
  spikes = _SPIKES[neighboring_relation]
  epochs = min(num_epochs, LOWER_BOUND_MAX_EPOCHS)
  return max(_composed_max_pair(noise_multiplier, steps_per_epoch, epochs,
                                target_delta, spikes),
             _one_epoch(noise_multiplier, steps_per_epoch, target_delta,
                        spikes))


def shuffled_batches_epsilon(
    noise_multiplier: float, steps_per_epoch: int, num_epochs: int,
    target_delta: float,
    neighboring_relation: NeighboringRelation = (
        NeighboringRelation.ADD_OR_REMOVE_ONE)) -> EpsilonRange:
  """Epsilon of DP-SGD on shuffled fixed-size batches, as a range.

  The mechanism is `ShuffledBatchesDpEvent(noise_multiplier,
  steps_per_epoch, num_epochs)`. Report `.upper`, the certified bound
  without amplification (SHUFFLED-BATCHES-UB); `.lower` is Chua et al.'s lower
  bound (CHUA24-SHUFFLE-LB, SHUFFLED-BATCHES-LB): no analysis of this sampler
    can certify less.

  Args:
    noise_multiplier: sigma >= 0 (noise std over the clipping norm).
    steps_per_epoch: t >= 1, batches per epoch.
    num_epochs: E >= 1.
    target_delta: delta in (0, 1].
    neighboring_relation: ADD_OR_REMOVE_ONE (zero-out) or REPLACE_ONE.

  Returns:
    `EpsilonRange(lower, upper)` with lower <= upper.
  """
  noise_multiplier = _validation.check_real('noise_multiplier',
                                            noise_multiplier, 0.0)
  steps_per_epoch = _validation.check_integer('steps_per_epoch',
                                              steps_per_epoch, 1)
  num_epochs = _validation.check_integer('num_epochs', num_epochs, 1)
  target_delta = _validation.check_real('target_delta', target_delta, 0.0,
                                        1.0, min_inclusive=False)
  relation = check_relation(neighboring_relation)
  upper = upper_bound(noise_multiplier, num_epochs, target_delta, relation)
  lower = lower_bound(noise_multiplier, steps_per_epoch, num_epochs,
                      target_delta, relation)
  return EpsilonRange(lower=lower, upper=upper)
