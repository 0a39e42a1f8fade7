"""Binomial labels of a pair: Chernoff windows, label groups and masses.

IDs: KHH-HOEFFDING, LABEL-MIXTURE, TAILS-TO-INFINITY

The dominating pairs are mixtures over a binomial label (clone counts,
check-in counts, counts of random answers). Labels outside a Chernoff
window go to +infinity with a proven bound on their mass (TAILS-TO-INFINITY);
the labels inside are grouped, each group represented by its worst member
(LABEL-MIXTURE).
"""

from typing import Optional, Tuple, Union

import attr
import numpy as np
from scipy import special
from scipy import stats

from shuffle_accountants import _numerics

__all__ = [
    'LOG_TAIL', 'CDF_ERROR', 'chernoff_window', 'group_starts', 'LabelGroups',
    'label_groups', 'binomial_cdf', 'binomial_interval_mass',
    'reporting_probability',
]

# log of the Chernoff bound on each truncated tail: e^-45 ~ 3e-20.
LOG_TAIL = -45.0
# Absolute error of one CDF value (`binomial_cdf`, `binomial_interval_mass`)
# or of a pmf-weighted sum of them: betainc is accurate to a few ulps.
CDF_ERROR = 1e-15


def chernoff_window(num_trials: int, p: float, one_minus_p: float,
                     log_tail: float = LOG_TAIL,
                     upper_log_tail: Optional[float] = None
                     ) -> Tuple[int, int]:
  """[lo, hi] with P[X < lo] <= e^log_tail, P[X > hi] <= e^upper_log_tail.

  X ~ Bin(N, p); `upper_log_tail` defaults to `log_tail`.
  """
  upper_log_tail = log_tail if upper_log_tail is None else upper_log_tail
  def bisect(predicate, low, high):
    # Smallest integer in [low, high] satisfying a monotone, vectorized
    # predicate (true at high): 64 points a step, not one.
    while low < high:
      # Steps of at least one: the floored points are distinct.
      points = (np.arange(low, high + 1) if high - low < 64 else
                np.floor(np.linspace(low, high, 65)).astype(np.int64))
      holds = np.asarray(predicate(points))
      index = int(np.argmax(holds)) if holds.any() else points.size - 1
      if high - low < 64:
        return int(points[index])
      low, high = (int(points[index - 1]) + 1 if index > 0 else low,
                   int(points[index]))
    return low
  mean = int(np.floor(num_trials * p))
  hi = bisect(lambda k: _numerics.log_upper_tail_bound(
      num_trials, p, one_minus_p, k + 1) <= upper_log_tail, mean, num_trials)
  # The first k whose lower tail P[X <= k - 1] is no longer negligible is one
  # past the largest valid lo.
  lo = bisect(lambda k: _numerics.log_lower_tail_bound(
      num_trials, p, one_minus_p, k - 1) > log_tail, 0, mean) - 1
  return max(lo, 0), hi


def group_starts(lo: int, hi: int, relative_width: float,
                  max_groups: Optional[int] = None) -> np.ndarray:
  """Starts of consecutive groups covering [lo, hi].

  Groups are about `relative_width` times their start wide, and wide enough
  that there are at most about `max_groups` of them.
  """
  least = 1 if max_groups is None else (hi - lo + 1) // max_groups
  starts = [lo]
  while True:
    step = max(1, least, int(relative_width * starts[-1]))
    if starts[-1] + step > hi:
      return np.array(starts, dtype=np.int64)
    starts.append(starts[-1] + step)


@attr.s(frozen=True, slots=True, auto_attribs=True, eq=False)
class LabelGroups:
  """Consecutive groups of the likely values of a Bin(N, p) label.

  Attributes:
    starts: first label of each group.
    ends: last label of each group.
    weights: upper bounds on the probability of each group (the window pmf
      normalised to one, so each is at least its true value).
    lower_tail: upper bound on P[label < starts[0]] (less `identical`).
    upper_tail: upper bound on P[label > ends[-1]]. Callers that only read
      `tails` may hold the whole sum in `lower_tail`.
    identical: weight of labels under which the pair releases nothing (loss
      0; a check-in round nobody joins), 0 unless the caller sets it.
  """
  starts: np.ndarray
  ends: np.ndarray
  weights: np.ndarray
  lower_tail: float
  upper_tail: float
  identical: float = 0.0

  @property
  def tails(self) -> float:
    """Both tails' weight (counted at +infinity)."""
    return self.lower_tail + self.upper_tail


def label_groups(num_trials: int, p: float, one_minus_p: float,
                 relative_width: float, max_groups: Optional[int] = None,
                 first: int = 0, log_tail: float = LOG_TAIL,
                 upper_log_tail: float = LOG_TAIL) -> LabelGroups:
  """Groups of the Bin(N, p) labels in a Chernoff window.

  The window's tails are at most e^log_tail below and e^upper_log_tail
  above; labels below `first` are left to the lower tail.
  """
  lo, hi = chernoff_window(num_trials, p, one_minus_p, log_tail,
                            upper_log_tail)
  window = np.exp(_numerics.binomial_window_log_pmf(
      num_trials, p, one_minus_p, lo, hi))
  start = min(max(lo, first), hi)
  starts = group_starts(start, hi, relative_width, max_groups)
  return LabelGroups(
      starts=starts, ends=np.append(starts[1:] - 1, hi),
      weights=np.add.reduceat(window[start - lo:], starts - start),
      lower_tail=float(np.exp(_numerics.log_lower_tail_bound(
          num_trials, p, one_minus_p, start - 1))),
      upper_tail=float(np.exp(_numerics.log_upper_tail_bound(
          num_trials, p, one_minus_p, hi + 1))))


def binomial_cdf(num_trials: np.ndarray, p: float, largest: np.ndarray
                 ) -> np.ndarray:
  """P[Bin(num_trials, p) <= largest], elementwise (real-valued trials).

  P[X <= k] = I_{1-p}(N - k, k + 1) for 0 <= k < N: a regularized
  incomplete beta function in floating point (scipy's bdtr takes a C int
  and returns NaN above 2^31 trials, n = 10^10 users).
  """
  num_trials = np.asarray(num_trials, dtype=np.float64)
  inside = np.clip(largest, 0, np.maximum(num_trials - 1, 0))
  value = special.betainc(np.maximum(num_trials - inside, 1e-300),
                          inside + 1.0, 1 - p)
  return np.where(largest < 0, 0.0, np.where(largest >= num_trials, 1.0,
                                               value))


def binomial_interval_mass(num_trials: Union[int, np.ndarray], p: float,
                            first: np.ndarray, last: np.ndarray) -> np.ndarray:
  """P[first <= Bin(num_trials, p) <= last], from the shorter tail."""
  num_trials = np.asarray(num_trials, dtype=np.float64)

  def sf(k):  # P[X > k] = I_p(k + 1, N - k) for 0 <= k < N
    inside = np.clip(k, 0, np.maximum(num_trials - 1, 0))
    value = special.betainc(inside + 1.0,
                            np.maximum(num_trials - inside, 1e-300), p)
    return np.where(k < 0, 1.0, np.where(k >= num_trials, 0.0, value))

  mass = np.where(first > num_trials * p, sf(first - 1) - sf(last),
                  binomial_cdf(num_trials, p, last)
                  - binomial_cdf(num_trials, p, first - 1))
  return np.where(last < first, 0.0, np.clip(mass, 0.0, 1.0))


def reporting_probability(num_users: int, checkin_rate: float,
                          min_reporting: int) -> float:
  """P[the target joins and k >= m], rounded up (SECAGG-REVEALED (iii)). [UB]

  Given that the target joins, k - 1 ~ Bin(n - 1, gamma).
  """
  if min_reporting <= 1:
    return checkin_rate
  survival = float(stats.binom.sf(min_reporting - 2, num_users - 1,
                                  checkin_rate))
  return min(checkin_rate, checkin_rate * survival
             * (1 + _numerics.RELATIVE_SAFETY_MARGIN) + 1e-300)
