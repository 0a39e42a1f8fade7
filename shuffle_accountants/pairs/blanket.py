"""The privacy blanket of a two-level randomizer as a dominating pair.

IDs: BLANKET-TWO-LEVEL [DOM]

Write R(x) = gamma omega + (1 - gamma) LO(x) (`randomizers.BlanketTable`).
An adversary who also learns which other users drew from the blanket (and
the others' reports) sees the target's report mixed with the blanket draws;
the shuffled output is a post-processing of that view, so the pair below
dominates the shuffle of n reports for every dataset pair (both orders, the
pair being swap-symmetric, CLONE-SWAP-SYMMETRY).

For a two-level table (ratios R(x)/omega = alpha e^{eta b}, R(x')/omega =
alpha e^{eta b'}), the view's likelihood ratio over the m + 1 blanket-or-
target reports is (V + e^eta a + b) / (V + a + e^eta b), where a and b count
reports in the cells (1, 0) and (0, 1), s = a + b, and V = z + e^eta t
weighs the z reports in cell (0, 0) and the t in cell (1, 1). Given (s, V)
- whose law is the same under both datasets - a is Bin(s, 1/2) tilted
exactly like the conditional clone pair (`clone_pairs`, CLONE-CONDITIONAL) with
c = s - 1 clones and log-odds theta = log((e^eta s + V) / (s + V)). So the pair
is a LABEL-MIXTURE mixture of conditional clone pairs over the labels (s, V):

* s = (number of other users drawing a single-cell blanket report, Bin(n - 1,
  2 gamma w1)) + (1 if the target's report is in a single cell, probability
  alpha (1 + e^eta) w1);
* V >= V_others, the weight of the other users' blanket reports in cells
  (0, 0) and (1, 1); given s they are n - 1 - s_others >= n - 1 - s users,
  each contributing 1, e^eta or 0.

Sound simplifications (each can only raise the profile): the target's own
contribution to V is dropped and V_others is drawn with n - 1 - s_hi users
for the whole s-group [s_lo, s_hi] (stochastically smaller V, coupled, and
the conditional pair is non-decreasing in theta, i.e. non-increasing in V);
each (s, V) group is represented by c = s_lo - 1 (CLONE-MONOTONE) and the
largest theta, at (s_hi, V_lo); labels outside Chernoff windows go to +infinity
(TAILS-TO-INFINITY). For k-RR (no (1, 1) cell) this is KHH-KRR-WEAK, which
`clone_pairs.krr_weak_pld_atoms` evaluates with finer labels.
"""

import math
from typing import List, Optional, Tuple, Union

import numpy as np

from shuffle_accountants import _numerics
from shuffle_accountants import _validation
from shuffle_accountants import randomizers
from shuffle_accountants.pairs import binomial
from shuffle_accountants.pairs import clone_pairs
from shuffle_accountants.pairs import privacy_loss

__all__ = ['blanket_pld_atoms']

# Groups per label coordinate (s, and V within each s-group): a cost bound.
_MAX_GROUPS = 40
_MAX_V_GROUPS = 24
# Wide windows: groups within the bulk (mean +- _BULK standard deviations)
# and one per tail beyond it (at its worst end). A tail holds about e^-8 of
# the mass, so its coarseness costs nothing visible; the bulk's groups stay
# as narrow as the whole window's were.
_MAX_BULK_GROUPS = 20
_MAX_BULK_V_GROUPS = 14
_BULK = 4.0


def _common_weight_groups(num_users: int, double_rate: float,
                          zero_rate: float, log_ratio: float,
                          relative_width: float
                          ) -> Tuple[np.ndarray, np.ndarray, float]:
  """Groups of V = z + e^eta t: (lower ends, masses, mass to +infinity).

  (t, z) are the counts of (double_rate, zero_rate) outcomes among
  `num_users` users. The groups start at about the lower Chernoff ends of
  t and of z (for num_users - t_hi trials), so little mass lies below.
  Masses are those of a stochastically smaller V (GRID-PAIRS-FAST (ii)): P[V <
  end_j] bounded from above over blocks of t in its Chernoff window; the last
  group also takes every V above its end (larger V only helps, see the
  module docstring); what lies below the first end or has t under the
  window goes to +infinity, with the rounding of the sums.
  """
  e = math.exp(log_ratio)
  if num_users == 0 or zero_rate + double_rate == 0:
    return np.zeros(1), np.ones(1), 0.0
  t_lo, t_hi = binomial.chernoff_window(num_users, double_rate,
                                        1 - double_rate)
  zero_given_t = min(1.0, zero_rate / (1 - double_rate)) if (
      double_rate < 1) else 0.0
  z_lo, _ = binomial.chernoff_window(num_users - t_hi, zero_given_t,
                                     1 - zero_given_t)
  low = z_lo + e * t_lo
  # The bulk is the mean +- four standard deviations: V above goes to the
  # last group, V below it to one group at `low`, which only loosens
  # (sqrt(a + e^2 b) <= sqrt(a) + e sqrt(b) keeps it finite for eps0 in the
  # hundreds).
  mean = num_users * (zero_rate + e * double_rate)
  spread = _BULK * (math.sqrt(num_users * zero_rate)
                    + e * math.sqrt(num_users * double_rate))
  high = mean + spread
  if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
    return np.zeros(1), np.ones(1), 0.0  # V >= 0 always: one group at 0
  ends: Union[List[float], np.ndarray]
  ends, groups = [low], _MAX_V_GROUPS
  if mean - spread > low and high - low > 4 * _MAX_V_GROUPS:
    # Bulk groups no wider (in ratio) than the whole range's would be.
    groups = max(_MAX_BULK_V_GROUPS, math.ceil(
        _MAX_V_GROUPS * math.log(high / (mean - spread))
        / math.log(high / max(low, 1.0))))
    ends = [low, mean - spread]
  ratio = max(1 + relative_width,
              (high / max(ends[-1], 1.0)) ** (1 / groups))
  limit = len(ends) - 1 + groups
  while ends[-1] < high and len(ends) < limit:
    ends.append(max(ends[-1] * ratio, ends[-1] + 1))
  ends = np.array(ends)
  t_pmf = np.exp(_numerics.binomial_window_log_pmf(
      num_users, double_rate, 1 - double_rate, t_lo, t_hi))
  # V < end means z <= ceil(end - e^eta t) - 1. Over a block [t1, t2] of t
  # that probability is at most P[Bin(N - t2, .) <= ceil(end - e^eta t1) - 1]
  # (GRID-PAIRS-FAST): blocks of t shifting V by an eighth of its spread, not
  # every t.
  step = max(1, int(spread / (8 * _BULK * e)))
  first = np.arange(t_lo, t_hi + 1, step)
  last = np.minimum(first + step - 1, t_hi)
  block_pmf = np.add.reduceat(t_pmf, first - t_lo)
  below = block_pmf @ binomial.binomial_cdf(
      (num_users - last)[:, None], zero_given_t,
      np.ceil(ends[None, :] - e * first[:, None]) - 1)
  # Upper bounds on P[V < end] that stay non-decreasing in the end.
  below = np.maximum.accumulate(np.minimum(below, 1.0))
  masses = np.maximum(np.diff(np.append(below, 1.0)), 0.0)
  t_tail = float(np.exp(_numerics.log_lower_tail_bound(
      num_users, double_rate, 1 - double_rate, t_lo - 1)))
  return (ends, masses,
          float(below[0]) + t_tail + 4 * binomial.CDF_ERROR * (ends.size + 1))


def _single_groups(trials: int, single_rate: float, target_single: float,
                   relative_width: float
                   ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
  """Groups of s >= 1 (the count of single-cell messages): (starts, ends,
  masses), in a Chernoff window of the other users' Bin(trials,
  single_rate) count, plus the target's own (probability `target_single`).
  """
  if single_rate < 1:
    lo, hi = binomial.chernoff_window(trials, single_rate, 1 - single_rate)
  else:
    lo = hi = trials
  s_lo, s_hi = max(1, lo), hi + 1
  # Groups of width ~relative_width in the bulk of s, one per tail.
  mean = trials * single_rate + target_single
  spread = _BULK * math.sqrt(trials * single_rate * (1 - single_rate) + 1)
  bulk_lo = min(s_hi, max(s_lo, math.floor(mean - spread)))
  bulk_hi = max(bulk_lo, min(s_hi, math.ceil(mean + spread)))
  # Bulk groups no wider than the whole window's groups would be.
  groups = max(_MAX_BULK_GROUPS, math.ceil(
      _MAX_GROUPS * (bulk_hi - bulk_lo + 1) / (s_hi - s_lo + 1)))
  if s_hi - s_lo < 4 * _MAX_GROUPS:  # a narrow window: no tails apart
    bulk_lo, bulk_hi, groups = s_lo, s_hi, _MAX_GROUPS
  starts = np.concatenate([
      [s_lo] if bulk_lo > s_lo else [],
      binomial.group_starts(bulk_lo, bulk_hi, relative_width, groups),
      [bulk_hi + 1] if bulk_hi < s_hi else []]).astype(np.int64)
  ends = np.append(starts[1:] - 1, s_hi)
  s_mass = (target_single * binomial.binomial_interval_mass(
      trials, single_rate, starts - 1, ends - 1)
            + (1 - target_single) * binomial.binomial_interval_mass(
                trials, single_rate, starts, ends))
  return starts, ends, s_mass


def blanket_pld_atoms(num_users: int, table: randomizers.BlanketTable,
                      relative_width: float,
                      discretization: Optional[float] = None
                      ) -> privacy_loss.PldAtoms:
  """BLANKET-TWO-LEVEL: PLD of the blanket pair of `table` for n users. [DOM]

  Args:
    num_users: n >= 1.
    table: the randomizer's `BlanketTable` (e.g. `randomizer.blanket()`).
    relative_width: in (0, 0.1]: label groups' relative width.
    discretization: None, or the spacing of the connect-the-dots grid the
      atoms are meant for (atoms are then merged per grid cell, across
      components too: CTD-MERGE-ATOMS, GRID-PAIRS-FAST (i)).
  """
  num_users = _validation.check_integer('num_users', num_users, 1)
  if not isinstance(table, randomizers.BlanketTable):
    raise TypeError(f'table must be a randomizers.BlanketTable; got '
                    f'{table!r} of type {type(table).__name__}.')
  relative_width = _validation.check_real(
      'relative_width', relative_width, 0.0, 0.1, min_inclusive=False)
  n, gamma = num_users, table.blanket_mass
  w1, w2, eta = table.single_mass, table.double_mass, table.log_ratio
  e = math.exp(eta)
  alpha = 1 / (1 + (e - 1) * (w1 + w2))
  target_single = min(1.0, alpha * (1 + e) * w1)
  single_rate = min(1.0, 2 * gamma * w1)
  trials = n - 1
  starts, ends, s_mass = _single_groups(trials, single_rate, target_single,
                                        relative_width)
  s_hi = int(ends[-1])
  identical = (1 - target_single) * (1 - single_rate) ** trials
  infinity = (max(0.0, 1 - identical - float(np.sum(s_mass)))
              + binomial.CDF_ERROR * (starts.size + 1))
  rest = 1 - single_rate
  double_rate = min(1.0, gamma * w2 / rest) if rest > 0 else 0.0
  zero_rate = min(1.0 - double_rate, gamma * (1 - 2 * w1 - w2) / rest
                  ) if rest > 0 else 0.0
  clones: Union[List[np.ndarray], np.ndarray]
  log_odds: Union[List[np.ndarray], np.ndarray]
  weights: Union[List[np.ndarray], np.ndarray]
  clones, log_odds, weights = [], [], []
  block = None
  for first, last, mass in zip(starts, ends, s_mass):
    others = max(0, trials - int(last))
    # One law of V for s-groups whose user counts differ by at most
    # `relative_width` (drawn with the block's fewest users).
    if block is None or others < (1 - relative_width) * block[0]:
      block = (others, _common_weight_groups(
          max(0, trials - int(min(s_hi, last + relative_width * others))),
          double_rate, zero_rate, eta, relative_width))
    v_ends, v_mass, v_infinity = block[1]
    infinity += mass * v_infinity
    clones.append(np.full(v_ends.size, first - 1))
    log_odds.append(np.log1p((e - 1) * last / (last + v_ends)))
    weights.append(mass * v_mass)
  clones, log_odds, weights = (np.concatenate(clones),
                               np.concatenate(log_odds),
                               np.concatenate(weights))
  atoms = clone_pairs.cell_merged_clone_atoms(clones, log_odds, weights,
                                              discretization)
  return privacy_loss.PldAtoms(np.append(atoms.losses, 0.0),
                               np.append(atoms.masses, identical),
                               atoms.infinity_mass + infinity)
