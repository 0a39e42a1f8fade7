"""Lower bound on shuffled scalar Gaussian reports from likelihood ratios.

IDs: NUM-LB-LIKELIHOOD [LB]

Scale C = 1, reports x + N(0, sigma^2). The dataset pair "the target holds 1
or -1, every other user holds -1". Each report's likelihood ratio between
the two target values is L(y) = e^{2 y / sigma^2}, and the multiset's is
sum_i L(y_i) / n: the sum of the ratios is the pair's sufficient statistic.
It is post-processed to an integer: each report to g(y) = min(M, floor(L(y)
/ h)) (cell j is y in [t_j, t_{j+1}), t_j = sigma^2 / 2 log(j h)), the sum
taken modulo W. Both steps are functions of the multiset, so the exact
delta(eps) of the two laws of T = sum_i g(y_i) mod W is at most the
mechanism's (a lower bound on its epsilon at every delta).

Those laws are bounded entrywise: cell masses from below (the target's law
a, the others' law f under the first dataset) and from above (f under the
second), on sub-intervals of at most 5e-5 standard units, where the
Gaussian density is bracketed in closed form; their cyclic convolutions by
the proven radix-2 FFTs, whose l2 error `roundoff` bounds. With P- and
Q-vectors computed from the lower and upper masses, delta(eps) >=
sum_A (P - e^eps Q) - sqrt(|A|) (E_P + e^eps E_Q) for every set A of
values of T; A is the best prefix of the values sorted by the computed
difference.
"""

import math
from typing import Tuple

import numpy as np
from scipy import special

from shuffle_accountants import _search
from shuffle_accountants import _validation
from shuffle_accountants.pld import continuous_blanket
from shuffle_accountants.pld import roundoff

__all__ = ['MAX_THRESHOLD_COUNT_USERS', 'likelihood_sum_epsilon_lower_bound',
           'gaussian_shuffle_epsilon_lower_bound']

# NUM-LB's binomial window grows with n: above this many users it is skipped.
MAX_THRESHOLD_COUNT_USERS = 10**6

# The statistic is taken modulo this (a power of two: the FFT's length).
_WINDOW = 2**18
# Cells are bounded on sub-intervals of this width, in standard units.
_STEP = 5e-5
# Mass beyond this many standard deviations counts in the upper bounds only.
_REACH = 37.0
# Relative allowance for the floating-point evaluation of one sub-interval:
# the standard score a errs by up to ~3u (|y| + 1) / sigma <= 82 * 3u, which
# moves phi(a) by |a| times that (<= 1e-12), plus a few ulps per operation.
_ARITHMETIC = 4e-12
# Caps of L tried, in units of 40 standard deviations of the others' sum.
_CAPS = (0.125, 1.0, 8.0)
# Below this sigma, e^{4 / sigma^2} leaves the floats' useful range and the
# threshold counts (NUM-LB) are as good.
_SMALLEST_SIGMA = 0.25


def _sub_interval_masses(edges: np.ndarray, mean: float, sigma: float
                         ) -> Tuple[np.ndarray, np.ndarray]:
  """Lower and upper bounds on the N(mean, sigma^2) mass of each
  [edges[k], edges[k + 1]).

  In standard units, on [a, a + D]: phi(a + s) = phi(a) e^{-x s + g(s)} with
  x = a + D / 2 and 0 <= g(s) = (D s - s^2) / 2 <= D^2 / 8, so g <= e^g - 1
  <= g e^{D^2 / 8}; with I0 = int_0^D e^{-x s} ds and
  int_0^D e^{-x s} g(s) ds between min(1, e^{-x D}) D^3 / 12 and
  max(1, e^{-x D}) D^3 / 12.
  """
  start = (edges[:-1] - mean) / sigma
  width = np.diff(edges) / sigma
  middle = start + width / 2
  decay = np.exp(-middle * width)
  plain = width * decay * special.exprel(middle * width)
  cubic = width**3 / 12
  density = np.exp(-start * start / 2) / math.sqrt(2 * math.pi)
  lower = density * (plain + np.minimum(1.0, decay) * cubic)
  upper = density * (plain + np.exp(width * width / 8)
                     * np.maximum(1.0, decay) * cubic)
  return lower * (1 - _ARITHMETIC), upper * (1 + _ARITHMETIC)


def _summed(values: np.ndarray, cells: np.ndarray, num_cells: int,
            upward: bool) -> np.ndarray:
  """Per-cell sums of non-negative `values` (cells sorted), rounded
  outwards: a sequential sum of k terms errs by at most (k - 1) u of it."""
  counts = np.bincount(cells, minlength=num_cells)
  sums = np.bincount(cells, weights=values, minlength=num_cells)
  margin = counts * 1.01 * 2.0**-53
  return sums * (1 + margin) if upward else sums * (1 - margin)


def _cell_masses(thresholds: np.ndarray, mean: float, sigma: float
                 ) -> Tuple[np.ndarray, np.ndarray]:
  """Lower and upper bounds on P[g(Y) = j], Y ~ N(mean, sigma^2), for the
  cells j = 0 ... len(thresholds) cut by the thresholds."""
  low, high = mean - _REACH * sigma, mean + _REACH * sigma
  grid = np.linspace(low, high, int(math.ceil(2 * _REACH / _STEP)) + 1)
  inside = thresholds[(thresholds > low) & (thresholds < high)]
  edges = np.union1d(grid, inside)
  cells = np.searchsorted(thresholds, edges[:-1], side='right')
  lower, upper = _sub_interval_masses(edges, mean, sigma)
  num_cells = thresholds.size + 1
  lower = _summed(lower, cells, num_cells, False)
  upper = _summed(upper, cells, num_cells, True)
  # Mills: P[Z > r] <= phi(r) / r, on each side, given to every cell there.
  tail = 2 * math.exp(-_REACH**2 / 2) / (_REACH * math.sqrt(2 * math.pi))
  upper[:np.searchsorted(thresholds, low, side='right') + 1] += tail
  upper[np.searchsorted(thresholds, high, side='left'):] += tail
  return lower, upper


def _statistic_laws(num_users: int, sigma: float, cap: float, scale: float):
  """(P, E_P, Q, E_Q): computed laws of T under the two datasets, P from
  below and Q from above entrywise up to l2 errors E_P, E_Q."""
  cells = max(1, min(int(cap / scale), _WINDOW // 2 - 1))
  thresholds = sigma**2 / 2 * np.log(np.arange(1, cells + 1) * scale)
  target, _ = _cell_masses(thresholds, 1.0, sigma)
  others_low, others_high = _cell_masses(thresholds, -1.0, sigma)
  if num_users == 1:
    return target, 0.0, others_high, 0.0
  exact = roundoff.CertifiedVector.exact
  others = roundoff.certified_power(exact(others_low), num_users - 1, _WINDOW)
  first = roundoff.certified_product(exact(target), others, _WINDOW)
  second = roundoff.certified_power(exact(others_high), num_users, _WINDOW)
  return first.values, first.error, second.values, second.error


def _delta_below(laws, epsilon: float) -> float:
  """A lower bound on delta(eps) of the exact laws of T: the best set A of
  the k entries with the largest computed P - e^eps Q, each error counted
  as sqrt(k) times the l2 errors."""
  first, first_error, second, second_error = laws
  factor = math.exp(epsilon) * (1 + 4 * 2.0**-53)
  difference = first - factor * second
  kept = np.sort(difference[difference > 0])[::-1]
  if kept.size == 0:
    return 0.0
  # Each entry's rounding is at most 4u (|P| + 2 e^eps |Q|) of it; summed
  # in order, a prefix of k errs by at most k u of itself.
  rounding = 4 * 2.0**-53 * (np.sum(np.abs(first))
                             + 2 * factor * np.sum(np.abs(second)))
  prefix = np.cumsum(kept) * (1 - 1.01 * 2.0**-53 * kept.size)
  best = np.max(prefix - np.sqrt(np.arange(1, kept.size + 1))
                * (first_error + factor * second_error))
  return float(best) - rounding


def likelihood_sum_epsilon_lower_bound(num_users: int,
                                       noise_multiplier: float,
                                       delta: float) -> float:
  """NUM-LB-LIKELIHOOD: epsilon that n shuffled scalar Gaussian reports
  cannot beat. [LB]

  The pair "the target holds 1 or -1, every other user holds -1" (randomized
  rounding and plain clipping report the same laws for it, so it bounds
  both), post-processed to the sum of the reports' discretised likelihood
  ratios modulo 2^18 (module docstring). The largest epsilon at which its
  certified delta exceeds `delta` (within 1e-4, rounded down), over three
  caps of the ratio; 0 when none does, and for noise multipliers below
  0.25. A lower bound [LB, PAIR], never composed.
  """
  num_users = _validation.check_integer('num_users', num_users, 1)
  sigma = _validation.check_real('noise_multiplier', noise_multiplier, 0.0,
                                 min_inclusive=False)
  _validation.check_real('delta', delta, 0.0, 1.0, min_inclusive=False)
  if sigma < _SMALLEST_SIGMA:
    return 0.0
  spread = 40 * math.sqrt(num_users * math.expm1(4 / sigma**2))
  best = 0.0
  for cap in _CAPS:
    scale = (spread + cap * spread) / (_WINDOW / 2)
    laws = _statistic_laws(num_users, sigma, cap * spread, scale)
    above = lambda epsilon, laws=laws: _delta_below(laws, epsilon) > delta
    if not above(best):
      continue
    low, _ = _search.bisected(above, *_search.widened(above, best, best + 1.0,
                                                      1e3), 60, 1e-4)
    best = max(best, low)
  return best


def gaussian_shuffle_epsilon_lower_bound(num_users: int,
                                         noise_multiplier: float,
                                         delta: float) -> float:
  """The larger of NUM-LB (threshold counts, up to 10^6 users: its window
  of counts grows with n) and NUM-LB-LIKELIHOOD. [LB, PAIR], never
  composed; one round (T rounds leak at least as much), every dimension
  (the pair along one axis: the other coordinates are pure noise).
  """
  likelihood = likelihood_sum_epsilon_lower_bound(num_users,
                                                  noise_multiplier, delta)
  if num_users > MAX_THRESHOLD_COUNT_USERS:
    return likelihood
  return max(likelihood, continuous_blanket.threshold_count_epsilon_lower_bound(
      num_users, noise_multiplier, delta))
