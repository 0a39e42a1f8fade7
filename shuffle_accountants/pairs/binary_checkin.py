"""Revealed-count check-in of binary randomized response: every configuration.

IDs: BINARY-RR-CHECKIN, BINARY-RR-CONFIGURATIONS, TAILS-TO-INFINITY

Each user checks in with probability gamma, independently of everything;
the participants send binary RR bits (Bern(p) at input 1, Bern(q) at input
0) and the shuffler releases their count of ones S and of zeros Z (the
number of participants is S + Z). With U the number of ones among all n
bits (sent or not), the participants are an independent Bern(gamma) thinning,
so given the bits (S, Z) ~ Bin(U, gamma) x Bin(n - U, gamma): the round is a
post-processing of the plain shuffle's count (BINARY-RR-CHECKIN (i)). With A
of the n - 1 others at input 1 their ones number U_o ~ PB(A) = Bin(A, p) +
Bin(n - 1 - A, q), and

  N_A(s, z) = sum_u PB_A(u) Bin(s; u, gamma) Bin(z; n - 1 - u, gamma)

is the law of the others' (ones, zeros): a sum of positive terms, one matrix
product. The target adds nothing (1 - gamma), a one (gamma p_x) or a zero
(gamma (1 - p_x)). Label groups [A0, A1] are represented by the round of A0
users at p and n - 1 - A1 at q (fewer users: the missing ones check in
independently, a post-processing, BINARY-RR-CHECKIN (ii)), and swapping ones
and zeros maps the order 1 -> 0 of configuration A onto the order 0 -> 1 of
configuration n - 1 - A, so one family in one order covers both
(BINARY-RR-CHECKIN (iii)).
"""

import math
from typing import List, Tuple

import numpy as np

from shuffle_accountants import _cache
from shuffle_accountants import _numerics
from shuffle_accountants.pairs import binomial
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pairs import sums

__all__ = ['BINARY_RR_CHECKIN', 'FAMILY_CACHE_BYTES', 'MAX_FAMILY_PRODUCTS',
           'NOISE_TOLERANCE', 'label_groups', 'configuration_atoms',
           'family_work', 'family_atoms']

BINARY_RR_CHECKIN = ('BINARY-RR-CHECKIN binary RR check-in with the count '
                     'revealed, every configuration (grouped)')
FAMILY_CACHE_BYTES = 64 * 2**20
# A family costs about this many products of its matrix products at most
# (about a second); larger rounds go without it.
MAX_FAMILY_PRODUCTS = 4 * 10**8
# A label group's representative keeps all but this fraction of the
# extreme configurations' noise (`label_groups`; about half of it in
# epsilon).
NOISE_TOLERANCE = 0.01
# The others' mixed inputs count at this fraction of their variance in that
# heuristic: a mixture of counts hides the target less than independent
# flips of the same variance (at n = 1000, gamma = 0.3, eps0 = 1 in full a
# group 3 % above the extremes in epsilon, at this weight 0.5 %).
_MIXING_WEIGHT = 0.5
# Outcomes of smaller P-mass go to +infinity (TAILS-TO-INFINITY), and so do
# the light cells on the table's border (their loss is the bit's own
# log-ratio: they would widen the grid).
_NEGLIGIBLE_ATOM = 1e-30
_NEGLIGIBLE_EDGE = 1e-18
# Each count's pmf is normalised on a window holding all but 2 e^LOG_TAIL of
# it: within a factor 1 + 1e-19 of the truth, far inside this allowance.
_WINDOW_ERROR = 1e-15


def _window(trials: int, p: float, one_minus_p: float
            ) -> Tuple[int, np.ndarray, float]:
  """(first count, pmf normalised on a Chernoff window, mass outside)."""
  if trials == 0:
    return 0, np.ones(1), 0.0
  lo, hi = binomial.chernoff_window(trials, p, one_minus_p)
  pmf = np.exp(_numerics.binomial_window_log_pmf(trials, p, one_minus_p, lo,
                                                 hi))
  return lo, pmf, sums.window_tail()


def _thinned(trials: np.ndarray, rate: float) -> np.ndarray:
  """The matrix [count - first, j] of Bin(count; trials[j], rate).

  One window for all columns, from the lower end of the fewest trials to
  the upper end of the most (Bin(t, rate) grows stochastically in t, so each
  column misses at most 2 e^LOG_TAIL); each column is normalised on its
  part of the window.
  """
  fewest, most = int(trials.min()), int(trials.max())
  lo = binomial.chernoff_window(fewest, rate, 1 - rate)[0] if fewest else 0
  hi = binomial.chernoff_window(most, rate, 1 - rate)[1] if most else 0
  ends = np.minimum(trials, hi)
  log_pmf = _numerics.binomial_windows_log_pmf(trials, rate, 1 - rate,
                                               np.full(trials.size, lo), ends)
  sizes = ends - lo + 1
  table = np.zeros((hi - lo + 1, trials.size))
  rows = np.concatenate([np.arange(size) for size in sizes])
  table[rows, np.repeat(np.arange(trials.size), sizes)] = np.exp(log_pmf)
  return table


def label_groups(others: int, p: float, q: float, checkin_rate: float,
                 tolerance: float = NOISE_TOLERANCE) -> List[Tuple[int, int]]:
  """(users at p, users at q) of the round representing each label group.

  Groups cover A = 0, ..., `others`, mirrored about the middle (the
  mirrored group's representative swaps the two counts). Only the choice
  of groups (any cover is sound): the extremes A = 0 and A = `others` are
  exact, and a group [A0, A1] of the lower half is as wide as keeps the
  noise w (1 - gamma) a b (p - q)^2 / (a + b) + (a + b + 1) p q of its
  representative (a = A0 at p, b = `others` - A1 at q; about the variance
  of the others' ones given their number, the mixed inputs' part weighted
  by w = `_MIXING_WEIGHT`) at least 1 - `tolerance` times the extremes':
  configurations far from the extremes leak far less and are represented
  by far fewer users.
  """
  spread = _MIXING_WEIGHT * (1 - checkin_rate) * (p - q)**2
  flips = p * q
  need = (1 - tolerance) * (others + 1) * flips

  def noise(at_p, at_q):
    total = at_p + at_q
    mixing = at_p * at_q / total if total else 0.0
    return mixing * spread + (total + 1) * flips

  middle = others // 2
  lower = [(0, 0)]
  while lower[-1][1] < middle:
    start = lower[-1][1] + 1
    # The largest end that keeps the noise (it falls as the group widens).
    low, high = start, middle
    while low < high:
      end = (low + high + 1) // 2
      if noise(start, others - end) >= need:
        low = end
      else:
        high = end - 1
    lower.append((start, low))
  mirrored = [(others - end, others - start) for start, end in lower
              if others - start > middle]
  return [(start, others - end) for start, end in lower + mirrored]


def _window_size(variance: float) -> float:
  """About the points of a Chernoff window (LOG_TAIL) of this variance."""
  return 19 * math.sqrt(variance) + 20


def family_work(num_users: int, p: float, q: float,
                checkin_rate: float) -> float:
  """About the products of the matrix products of a family (its cost)."""
  work = 0.0
  for at_p, at_q in label_groups(num_users - 1, p, q, checkin_rate):
    ones = _window_size((at_p + at_q) * p * q)
    sent = _window_size(checkin_rate * (at_p * p + at_q * q))
    unsent = _window_size(checkin_rate * (at_p * q + at_q * p))
    work += ones * sent * unsent
  return work


def _with_target(others: np.ndarray, bit: float, checkin_rate: float
                 ) -> np.ndarray:
  """The law of (ones, zeros) sent once the target, sending 1 w.p. `bit`
  when it checks in, is added to the others' `others`."""
  table = np.zeros((others.shape[0] + 1, others.shape[1] + 1))
  table[:-1, :-1] += (1 - checkin_rate) * others
  table[1:, :-1] += checkin_rate * bit * others
  table[:-1, 1:] += checkin_rate * (1 - bit) * others
  return table


def configuration_atoms(at_p: int, at_q: int, p: float, q: float,
                        checkin_rate: float) -> privacy_loss.PldAtoms:
  """PLD atoms of one configuration's round, target at 1 against at 0.

  BINARY-RR-CHECKIN (v). [DOM, TAILS-TO-INFINITY] The laws are restricted
  to the event that the others' ones U_o and their sent ones and zeros fall
  inside their windows (an event about the others only), whose complement
  goes to +infinity. Losses are raised and masses inflated to cover
  floating point error (sums of positive terms).
  """
  gamma = checkin_rate
  first_lo, first, first_tail = _window(at_p, p, q)
  second_lo, second, second_tail = _window(at_q, q, p)
  ones = np.convolve(first, second)
  bits = first_lo + second_lo + np.arange(ones.size)
  others = (_thinned(bits, gamma) * ones) @ _thinned(at_p + at_q - bits,
                                                    gamma).T
  tails = first_tail + second_tail + 2 * sums.window_tail()
  with_p, with_q = (_with_target(others, bit, gamma) for bit in (p, q))
  negligible = with_p < _NEGLIGIBLE_ATOM
  border = np.zeros_like(negligible)
  border[[0, -1], :] = border[:, [0, -1]] = True
  negligible |= border & (with_p < _NEGLIGIBLE_EDGE)
  moved = math.fsum(with_p[negligible])
  with_p, with_q = with_p[~negligible], with_q[~negligible]
  losses = np.log(with_p) - np.log(with_q)
  return privacy_loss.PldAtoms(
      losses + sums.loss_error(losses) + 2 * _WINDOW_ERROR,
      with_p * (1 + _numerics.RELATIVE_SAFETY_MARGIN)
      * math.exp(2 * _WINDOW_ERROR),
      (tails + moved) * (1 + _numerics.RELATIVE_SAFETY_MARGIN))


@_cache.cached(FAMILY_CACHE_BYTES, _cache.atoms_bytes)
def family_atoms(num_users: int, p: float, q: float, checkin_rate: float,
                 tolerance: float = NOISE_TOLERANCE
                 ) -> Tuple[privacy_loss.PldAtoms, ...]:
  """The atoms of every label group's round (`label_groups`). [DOM]"""
  return tuple(configuration_atoms(at_p, at_q, p, q, checkin_rate)
               for at_p, at_q in label_groups(num_users - 1, p, q,
                                               checkin_rate, tolerance))
