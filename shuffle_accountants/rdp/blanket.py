"""The Renyi divergence of the privacy-blanket pair of a two-level table.

IDs: BLANKET-RDP, BLANKET-TWO-LEVEL, CHECKIN-BLANKET

BLANKET-TWO-LEVEL's blanket pair of a `randomizers.BlanketTable` is a
LABEL-MIXTURE mixture over labels (s, V) of conditional clone pairs
(CLONE-CONDITIONAL) with c = s - 1 clones and log-odds theta(s, V) = log((e^eta
s + V) / (s + V)); its Renyi moment is the label-weighted sum of theirs, M - 1 =
E[M_{s-1}(theta(s, V)) - 1] (s = 0: identical laws, moment 1). This module
bounds that sum from above directly, in log space, so that no mass is charged to
+infinity (the PLD's TAILS-TO-INFINITY tail, at loss eta, swamps the high
orders):

* s = S + T, S ~ Bin(n - 1, 2 gamma w1) the other users' single-cell
  blanket draws and T ~ Bern(alpha (1 + e^eta) w1) the target's;
* V >= U, U ~ Bin(n - 1 - S, r) the others' draws from the cells (0, 0)
  and (1, 1), r = gamma (1 - 2 w1) / (1 - 2 gamma w1): each counts 1 or
  e^eta >= 1 in V. Given S <= b, U is stochastically larger than
  Bin(n - 1 - b, r) (coupled), and the conditional moment is
  non-increasing in V (the pair is non-decreasing in theta, BLANKET-TWO-LEVEL);
* groups [a, b] of S take c = a (- 1 if the target is not single)
  (CLONE-MONOTONE) and theta at s = b (+ 1); groups [u1, u2] of U take theta at
  V = u1; c is rounded down to 8 significant bits and theta up to 9, so that
  nearby rounds share their conditional moments (cached);
* the bulks reach 10 standard deviations, and at least 40 counts, either
  side of the mean;
* every group's probability is bounded from above in log space (exact
  interval masses in the bulk, edge pmf times width in the tails), so the
  tails count at their own tiny weight times the moment of their pair.

With the table of `BlanketTable.with_absence` this bounds a check-in round
(CHECKIN-BLANKET (i)); at rate 1 a plain shuffle of the randomizer.
"""

import math
from typing import List, Tuple

import numpy as np
from scipy import stats

from shuffle_accountants import _cache
from shuffle_accountants import _numerics
from shuffle_accountants import _validation
from shuffle_accountants import randomizers
from shuffle_accountants.pairs import binomial
from shuffle_accountants.rdp import clone

__all__ = ['blanket_rdp']

# Relative width of the groups of S and of U in their bulks (mean +- _BULK
# standard deviations); below the bulk groups double, above it the last
# group of U is open and those of S double.
_RELATIVE_WIDTH = 0.02
_BULK = 10.0
# The bulk reaches at least this many counts either side of the mean: with
# a small mean (S ~ Bin(n - 1, 2 gamma w1) with a few expected draws) ten
# standard deviations end a count or two above it, where a doubled group
# [x, 2x - 1] still held much mass at a loose label, and where the group
# ends moved with gamma (epsilon fell as gamma rose, NOT-MONOTONE). Beyond 40
# counts a mean below 16 leaves less than e^-27 (Chernoff).
_BULK_FLOOR = 40.0
# Absolute error bound of an interval mass from regularized incomplete beta
# functions (a few ulps), and the log-error allowed for a log-pmf.
_MASS_ERROR = 1e-14
_LOG_PMF_ERROR = 1e-6
# Labels whose crude bound is below e^-30 of the sum so far skip the exact
# conditional sum (thousands of them add < 1e-9 relative).
_NEGLIGIBLE = -30.0


def _bulk(num_trials: int, p: float) -> Tuple[float, float]:
  """The ends of the bulk of Bin(num_trials, p)."""
  mean = num_trials * p
  spread = max(_BULK * math.sqrt(num_trials * p * (1 - p)), _BULK_FLOOR)
  return mean - spread, mean + spread


def _group_starts(num_trials: int, p: float) -> np.ndarray:
  """Starts of the groups of Bin(num_trials, p) over {0, ..., num_trials}."""
  bulk_lo, bulk_hi = _bulk(num_trials, p)
  starts, x = [0], 1
  while x <= num_trials:
    starts.append(x)
    if x < bulk_lo:
      step = min(x, max(1, math.floor(bulk_lo) - x))
    elif x <= bulk_hi:
      step = max(1, math.floor(_RELATIVE_WIDTH * x))
    else:
      step = x
    x += step
  return np.array(starts, dtype=np.int64)


def _log_interval_masses(num_trials: int, p: float, first: np.ndarray,
                         last: np.ndarray) -> np.ndarray:
  """Upper bounds on log P[first <= Bin(num_trials, p) <= last]."""
  exact = binomial.binomial_interval_mass(num_trials, p, first, last)
  with np.errstate(divide='ignore'):
    bound = np.log(np.minimum(exact + _MASS_ERROR, 1.0))
  mode = (num_trials + 1) * p
  # The pmf is unimodal: an interval below (above) the mode weighs at most
  # its width times the pmf at its upper (lower) end.
  edge = np.where(last < mode, last, np.where(first > mode, first, -1))
  in_tail = edge >= 0
  if np.any(in_tail):
    log_pmf = stats.binom.logpmf(edge[in_tail], num_trials, p)
    tail = np.log(last[in_tail] - first[in_tail] + 1.0) + log_pmf
    bound[in_tail] = np.minimum(bound[in_tail], tail + _LOG_PMF_ERROR)
  return bound


# Nearby rounds share many labels; each entry is one float per order.
@_cache.cached(16 * 2**20, _cache.atoms_bytes)
def _log_excess(clones: int, log_odds: float, orders_bytes: bytes
                ) -> np.ndarray:
  """Upper bound on log(M - 1) of the conditional clone pair.

  See CLONE-CONDITIONAL.
  """
  excess = clone.conditional_log_excess(clones, log_odds,
                                        np.frombuffer(orders_bytes))
  excess.setflags(write=False)
  return excess


def _rounded_down(clones: int) -> int:
  """clones with all but its 8 leading bits cleared.

  Fewer clones: CLONE-MONOTONE.
  """
  shift = max(0, clones.bit_length() - 8)
  return (clones >> shift) << shift


def _rounded_up(log_odds: float) -> float:
  """log_odds rounded up to 9 significant bits.

  A larger log-odds: BLANKET-TWO-LEVEL.
  """
  mantissa, exponent = math.frexp(log_odds)
  return math.ldexp(math.ceil(mantissa * 512) / 512, exponent)


def _log_odds(singles: float, weight: np.ndarray, log_ratio: float
              ) -> np.ndarray:
  """theta(s, V) = log((e^eta s + V) / (s + V)), for s >= 1."""
  return np.log1p(np.expm1(log_ratio) * singles / (singles + weight))


def _u_groups(num_trials: int, rate: float) -> Tuple[np.ndarray, np.ndarray]:
  """(lower ends, log masses) of groups of U ~ Bin(num_trials, rate)."""
  if num_trials == 0 or rate == 0:
    return np.zeros(1), np.zeros(1)
  if rate >= 1:
    return np.array([float(num_trials)]), np.zeros(1)
  starts = _group_starts(num_trials, rate)
  ends = np.append(starts[1:] - 1, num_trials)
  # Above the bulk: one open group at the bulk's upper end.
  top = _bulk(num_trials, rate)[1]
  keep = starts <= top
  starts, ends = starts[keep], ends[keep]
  ends[-1] = num_trials
  return (starts.astype(np.float64),
          _log_interval_masses(num_trials, rate, starts, ends))


def blanket_rdp(num_users: int, table: randomizers.BlanketTable, orders
                ) -> np.ndarray:
  """BLANKET-RDP: RDP of the blanket pair of `table` for n users. [UB]

  The blanket pair is BLANKET-TWO-LEVEL's.

  Args:
    num_users: n >= 1.
    table: a `randomizers.BlanketTable` (with `with_absence` for check-in).
    orders: RDP orders > 1.

  Returns:
    Upper bounds on the pair's Renyi divergence, one per order; an upper
    bound on the RDP of every shuffle the pair dominates (data processing).
  """
  num_users = _validation.check_integer('num_users', num_users, 1)
  if not isinstance(table, randomizers.BlanketTable):
    raise TypeError(f'table must be a randomizers.BlanketTable; got '
                    f'{table!r} of type {type(table).__name__}.')
  orders = _validation.check_orders(orders)
  orders_bytes = orders.tobytes()
  trials = num_users - 1
  gamma, w1, eta = table.blanket_mass, table.single_mass, table.log_ratio
  e = math.exp(eta)
  alpha = 1 / (1 + (e - 1) * (w1 + table.double_mass))
  target_single = min(1.0, alpha * (1 + e) * w1)
  single_rate = min(1.0, 2 * gamma * w1)
  rate = (min(1.0, gamma * (1 - 2 * w1) / (1 - single_rate))
          if single_rate < 1 else 0.0)
  if trials == 0 or single_rate in (0.0, 1.0):
    starts = ends = np.array([round(trials * single_rate)], dtype=np.int64)
    log_s_mass = np.zeros(1)
  else:
    starts = _group_starts(trials, single_rate)
    ends = np.append(starts[1:] - 1, trials)
    log_s_mass = _log_interval_masses(trials, single_rate, starts, ends)
  # (log weight, clones, log-odds) of every group of labels.
  labels: List[Tuple[float, int, float]] = []
  for first, last, log_mass in zip(starts, ends, log_s_mass):
    first, last = int(first), int(last)
    weights, log_u_mass = _u_groups(trials - last, rate)
    # (clones, singles at theta, probability of the target's cell)
    cases = [(first, last + 1, target_single)]
    if last >= 1:
      cases.append((max(first, 1) - 1, last, 1 - target_single))
    for clones, singles, weight in cases:
      if weight > 0:
        labels.extend(
            (float(log_mass + log_u + math.log(weight)), clones, float(theta))
            for theta, log_u in zip(_log_odds(singles, weights, eta),
                                    log_u_mass))
  labels.sort(key=lambda label: -label[0])
  log_excess = np.full(orders.size, -np.inf)
  for log_weight, clones, theta in labels:
    if theta <= 0:  # identical laws (eps0 tiny): moment 1
      continue
    # A pair whose loss is at most theta has M - 1 <= e^{(order - 1) theta}
    # - 1: labels far below the sum so far count at that (sound) bound.
    cheap = log_weight + _numerics.log_expm1((orders - 1) * theta)
    if np.all(cheap < log_excess + _NEGLIGIBLE):
      term = cheap
    else:
      term = log_weight + _log_excess(_rounded_down(clones),
                                      _rounded_up(theta), orders_bytes)
    log_excess = np.logaddexp(log_excess, np.minimum(term, cheap))
  rdp = np.logaddexp(0.0, log_excess) / (orders - 1)
  return rdp * (1 + _numerics.RELATIVE_SAFETY_MARGIN)
