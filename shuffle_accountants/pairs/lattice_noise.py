"""Integer noise added to an integer sum: the shifted lattice pair, exactly.

IDs: LATTICE-NOISE-PAIR, BINOMIAL-SUM, DISCRETE-GAUSSIAN-SUM, TAILS-TO-INFINITY

A secure sum releases S + Z, S the integer sum and Z integer noise of a
data-independent law f; a neighbour moves S by an integer h. The pair is
(P, Q) = (law of Z + h, law of Z). Z is conditioned on a window [lo, hi]
(the adversary is told whether it fell inside; the law of that event does
not depend on the data, so the complement, of mass at most `tail`, goes to
+infinity: TAILS-TO-INFINITY). Inside, the outcome s = x + h (x the noise
under P) has loss log f(x) - log f(x + h) when x + h <= hi and +infinity
otherwise (Q puts no mass there); the window's normaliser cancels. Losses
are raised by twice the error bound of the log-masses and masses inflated
by its exponential, so the atoms' profile bounds the pair's [UB, exact up
to that round-off] (LATTICE-NOISE-PAIR).

Symmetric noise (f(z) = f(c - z) for a centre c) makes the pair symmetric:
s -> c + h - s maps P onto Q and Q onto P, so the atoms bound both orders.
"""

import math
from typing import Optional, Tuple

import numpy as np

from shuffle_accountants import _numerics
from shuffle_accountants import events
from shuffle_accountants.pairs import binomial
from shuffle_accountants.pairs import privacy_loss

__all__ = ['shifted_pair_atoms', 'binomial_window', 'binomial_losses',
           'discrete_gaussian_window', 'discrete_laplace_window',
           'summed_window', 'noise_window', 'UNIT_ROUNDOFF',
           'BINOMIAL_LOG_TAIL', 'DISCRETE_GAUSSIAN_PAIR',
           'DISCRETE_LAPLACE_PAIR', 'ONE_AGGREGATOR', 'EXACT_SUM_BUDGET',
           'exact_copies', 'partial_sum_name']

UNIT_ROUNDOFF = 2.0**-53
# The binomial's window leaves at most 2 e^-600 (7e-261) outside: the
# release's delta never falls below it (its RDP is infinite, so no other
# route does better; at -80 a single release had no finite epsilon below
# delta = 4e-35 at any N). Its smallest masses stay far above the
# subnormal range (e^-708).
BINOMIAL_LOG_TAIL = -600.0


def shifted_pair_atoms(log_pmf: np.ndarray, log_error: float, shift: int,
                       tail: float,
                       losses: Optional[Tuple[np.ndarray, float]] = None
                       ) -> privacy_loss.PldAtoms:
  """PLD atoms of (Z + shift, Z), Z on a window with these log-masses.

  Args:
    log_pmf: log f on consecutive integers of the window, up to a common
      constant (the window is normalised here).
    log_error: a bound on the absolute error of each entry of `log_pmf`.
    shift: the integer shift h >= 1.
    tail: a bound on the noise's mass outside the window.
    losses: (log f(x) - log f(x + h) for the first W - h points of the
      window, a bound on their error), when computed more precisely than
      the difference of `log_pmf`.
  """
  log_pmf = np.asarray(log_pmf, dtype=np.float64)
  masses = np.exp(log_pmf - log_pmf.max())
  # A sum of W non-negative terms, in any order, is within a factor
  # 1 + 2 W u of the exact sum, either way (W u <= 1/4; numpy's pairwise
  # sum is far faster than fsum on the millions of points of N = 1e10).
  summation = 2 * UNIT_ROUNDOFF * masses.size
  total = float(np.sum(masses))
  # Relative error of the normalised masses: the exponentials' (one ulp of
  # an argument of size |log f|, twice the log error) and the sum's.
  inflation = (math.exp(2 * log_error + 4 * UNIT_ROUNDOFF
                        * (1 + float(np.max(np.abs(log_pmf)))))
               * (1 + 2 * summation))
  masses = masses / total * inflation
  kept = masses.size - shift
  if kept <= 0:  # disjoint supports: everything at +infinity
    return privacy_loss.PldAtoms(np.zeros(0), np.zeros(0), 1.0)
  if losses is None:
    # The subtraction rounds once more, within an ulp of the larger term.
    raised = log_pmf[:kept] - log_pmf[shift:] + 2 * log_error + (
        2 * UNIT_ROUNDOFF * (1 + np.maximum(np.abs(log_pmf[:kept]),
                                            np.abs(log_pmf[shift:]))))
  else:
    raised = losses[0] + losses[1]
  infinity = float(np.sum(masses[kept:])) * (1 + summation) + tail
  margin = 1 + _numerics.RELATIVE_SAFETY_MARGIN
  return privacy_loss.PldAtoms(raised, masses[:kept] * margin,
                               min(1.0, infinity * margin))


def _binomial_terms(num_trials: int, first: int, last: int) -> np.ndarray:
  """log((N - k + 1) / k) = log f(k) - log f(k - 1), k = first..last."""
  k = np.arange(first, last + 1, dtype=np.float64)
  return np.log((num_trials - k + 1) / k)


def binomial_window(num_trials: int, log_tail: float = BINOMIAL_LOG_TAIL):
  """(log-masses of Bin(N, 1/2) on its window, their error bound, tail, lo).

  log f(x) - log f(lo) = sum_{k=lo+1}^{x} log((N - k + 1) / k), summed
  along the window. Each term is within u (1 + |t|) of its value (the
  quotient's rounding, then the log's ulp), and a running sum of m terms
  within (m + 1) u sum |t| of the exact sum of the computed terms
  (Higham's bound, first order; doubled for the rest): the terms are
  small near the mode, so the bound stays tiny at any N.
  """
  lo, hi = binomial.chernoff_window(num_trials, 0.5, 0.5, log_tail)
  terms = _binomial_terms(num_trials, lo + 1, hi)
  log_pmf = np.concatenate([[0.0], np.cumsum(terms)])
  magnitude = float(np.sum(np.abs(terms)))
  error = 2 * UNIT_ROUNDOFF * ((terms.size + 2) * magnitude + terms.size)
  tail = 0.0 if (lo, hi) == (0, num_trials) else 2 * math.exp(log_tail)
  return log_pmf, error, tail, lo


# Shifts up to this size sum their h terms directly (h ulps of error per
# loss); larger ones difference the running sum.
_DIRECT_SHIFT = 64


def binomial_losses(num_trials: int, lo: int, size: int, shift: int,
                    log_pmf: np.ndarray, log_error: float
                    ) -> Tuple[np.ndarray, float]:
  """(log f(x) - log f(x + h), x = lo..lo + size - h - 1; error bound).

  log f(x) - log f(x + h) = -sum_{k=x+1}^{x+h} log((N - k + 1) / k).
  """
  kept = size - shift
  if shift > _DIRECT_SHIFT:
    return (log_pmf[:kept] - log_pmf[shift:],
            2 * log_error + 2 * UNIT_ROUNDOFF * (
                1 + float(np.max(np.abs(log_pmf)))))
  terms = _binomial_terms(num_trials, lo + 1, lo + size - 1)
  losses = np.zeros(kept)
  for j in range(shift):
    losses -= terms[j:j + kept]
  largest = float(np.max(np.abs(terms)))
  return losses, 2 * (shift + 1) * UNIT_ROUNDOFF * (1 + shift * largest)


# Discrete Gaussian windows reach this many standard deviations (plus one):
# the mass beyond is below 2 e^{-REACH^2 / 2} / (1 - e^{-REACH / sigma}).
_GAUSSIAN_REACH = 14.0


def discrete_gaussian_window(sigma: float):
  """(log-masses of N_Z(0, sigma^2) on [-T, T], error bound, tail bound).

  f(z) is proportional to exp(-z^2 / (2 sigma^2)). The tail beyond T is
  bounded by comparison with the geometric series of ratio
  exp(-(T + 1) / sigma^2) against the central mass f(0) <= 1 (normalised
  f(0) = 1 / sum f <= 1): P(|Z| > T) <= 2 e^{-(T+1)^2 / (2 sigma^2)} /
  (1 - e^{-(T + 1) / sigma^2}).
  """
  top = int(math.ceil(_GAUSSIAN_REACH * sigma)) + 1
  z = np.arange(-top, top + 1, dtype=np.float64)
  log_pmf = -(z * z) / (2 * sigma * sigma)
  error = 4 * UNIT_ROUNDOFF * (1 + float(np.max(np.abs(log_pmf))))
  ratio = -math.expm1(-(top + 1) / sigma**2)
  tail = 2 * math.exp(-(top + 1)**2 / (2 * sigma**2)) / ratio
  # Below sigma ~ 0.12 the bound underflows (e^-800 at sigma = 0.1):
  # rounded up to the smallest positive float.
  return log_pmf, error, max(tail, math.ulp(0.0))


# Discrete Laplace windows reach this many scales: P(|Z| > T) <= 2
# e^{-(T + 1) / b} < 4e-35.
_LAPLACE_REACH = 80.0


def discrete_laplace_window(scale: float):
  """(log-masses of the discrete Laplace on [-T, T], error bound, tail).

  f(z) is proportional to exp(-|z| / b); with r = e^{-1/b}, P(Z > T) =
  r^{T+1} / (1 + r), so both tails together are at most 2 e^{-(T+1)/b}.
  """
  top = int(math.ceil(_LAPLACE_REACH * scale))
  z = np.arange(-top, top + 1, dtype=np.float64)
  log_pmf = -np.abs(z) / scale
  error = 4 * UNIT_ROUNDOFF * (1 + float(np.max(np.abs(log_pmf))))
  return log_pmf, error, 2 * math.exp(-(top + 1) / scale)


# The factors of the all-honest convolution keep the points within e^-250
# of their largest, so no product falls below e^-500: none is subnormal
# (whose rounding has no relative bound).
_PARTIAL_SUM_LOG_FLOOR = -250.0


def _trimmed(values: np.ndarray) -> Tuple[np.ndarray, int]:
  """(values within e^-250 of their largest, rescaled to a largest of 1;
  how many points were dropped at the ends)."""
  largest = values.max()
  kept = np.flatnonzero(values >= math.exp(_PARTIAL_SUM_LOG_FLOOR) * largest)
  return (values[kept[0]:kept[-1] + 1] / largest,
          values.size - (kept[-1] + 1 - kept[0]))


def summed_window(window, copies: int):
  """The window of the sum of `copies` independent windowed noises.

  Each copy is conditioned on its own window (the tails add: union bound),
  and so is each partial sum, on its points within e^-250 of its largest
  (an interval: a convolution of log-concave laws is log-concave). A point
  dropped carries at most e^-250 of the partial sum's total (its error
  aside), which joins the tail (it does not depend on the data:
  TAILS-TO-INFINITY). The computed sums are symmetric only up to round-off,
  so a trim may be one-sided; the pair's reverse order then conditions on
  the reflected event, of the same probability, and the atoms still bound
  both orders. A direct convolution of positive terms has relative
  error at most (terms + 1) u per step, the rescaling one u more, and each
  copy brings its log-error and its exponential's rounding, so the
  log-errors add up as below.
  """
  log_pmf, error, tail = window
  base, dropped = _trimmed(np.exp(log_pmf - log_pmf.max()))
  per_copy = error + 4 * UNIT_ROUNDOFF * (2 + float(np.max(np.abs(log_pmf))))
  total = base
  total_error = per_copy
  total_dropped = copies * dropped
  for _ in range(copies - 1):
    # Rescaled to a largest of 1: the sums would overflow after a few
    # hundred copies.
    total, dropped = _trimmed(np.convolve(total, base))
    total_dropped += dropped
    total_error += per_copy + 4 * UNIT_ROUNDOFF * (base.size + 3)
  # The log of a positive value rounds within one ulp of it (plus 1 for
  # the magnitude of the log).
  logs = np.log(total)
  total_error += 4 * UNIT_ROUNDOFF * (1 + float(np.max(np.abs(logs))))
  return logs, total_error, copies * tail + (
      total_dropped * math.exp(_PARTIAL_SUM_LOG_FLOOR + 2 * total_error))



DISCRETE_GAUSSIAN_PAIR = ('DISCRETE-GAUSSIAN-SUM: shifted discrete Gaussian '
                          'pair, exact on its lattice')
DISCRETE_LAPLACE_PAIR = ('DISCRETE-GAUSSIAN-SUM (iv): shifted discrete '
                         'Laplace pair, exact on its lattice')
ONE_AGGREGATOR = ('DISCRETE-GAUSSIAN-SUM (ii): all-honest noise accounted '
                  "as one aggregator's (post-processing)")
# The all-honest noise of k aggregators is convolved exactly (direct sums
# of positive terms, about W^2 k (k - 1) / 2 multiply-adds for windows of W
# points) within this budget: sigma = 200 and c = 4 take 1.9e8 (0.13 s).
EXACT_SUM_BUDGET = 10**9


def partial_sum_name(copies: int, num_aggregators: int) -> str:
  """The pair's name when k < c of the all-honest noises are convolved."""
  if copies == 1:
    return ONE_AGGREGATOR
  return (f'DISCRETE-GAUSSIAN-SUM (ii): all-honest noise accounted as the '
          f'sum of {copies} of the {num_aggregators} aggregators\' noises '
          '(post-processing)')


def exact_copies(window_size: int, num_aggregators: int) -> int:
  """How many of the c noises, each on a window of this many points, are
  convolved exactly: the most within `EXACT_SUM_BUDGET`, at most c.

  Non-decreasing in c, and any k of them is sound: the sum of all c is the
  sum of k plus independent noise (post-processing, DISCRETE-GAUSSIAN-SUM
  (ii)).
  """
  pairs = EXACT_SUM_BUDGET // (window_size * window_size)
  # k (k - 1) / 2 <= pairs.
  most = int((1 + math.isqrt(1 + 8 * pairs)) // 2)
  return max(1, min(num_aggregators, most))


def noise_window(event) -> Tuple[Tuple[np.ndarray, float, float], str]:
  """(log-masses, their error bound, tail bound) of the aggregators' noise
  as accounted (discrete Gaussian or Laplace), and the pair's name.

  Both routes and the sum of reports with aggregator noise read it.
  """
  if isinstance(event, events.DiscreteLaplaceSumEvent):
    window = discrete_laplace_window(event.scale)
    name = DISCRETE_LAPLACE_PAIR
  else:
    window = discrete_gaussian_window(event.sigma)
    name = DISCRETE_GAUSSIAN_PAIR
  if event.trust == 'one-honest' or event.num_aggregators == 1:
    return window, name
  copies = exact_copies(window[0].size, event.num_aggregators)
  if copies > 1:
    window = summed_window(window, copies)
  if copies < event.num_aggregators:
    name = partial_sum_name(copies, event.num_aggregators)
  return window, name
