"""Lower bounds: the epsilon of specific dataset pairs [LB, PAIR].

IDs: GIRGIS-LB-BINOMIAL, LB-THIRD-SPLIT, ROUNDOFF-LOWER

D = (0, ..., 0) and D' = (0, ..., 0, 1), each user reporting through binary
randomized response with parameter eps0; the shuffler reveals only the number
k of ones. Under D, k ~ Bin(n, p) with p = 1/(e^eps0 + 1), and
M(D')(k) / M(D)(k) = (k e^eps0 + (n-k) e^-eps0) / n (the GIRGIS-LB pair,
docs/mathematics.md GIRGIS-LB-BINOMIAL). Binary RR is an eps0-LDP randomizer and
this is one neighbouring pair, so the ε(δ) of its T-fold composition is a lower
bound on what any certified accountant can report for shuffled eps0-LDP rounds.
[LB, PAIR]
"""

import math
from typing import Optional, Sequence, Tuple

from dp_accounting.pld import privacy_loss_distribution
import numpy as np

from shuffle_accountants import _numerics
from shuffle_accountants import _search
from shuffle_accountants import _upstream
from shuffle_accountants import _validation
from shuffle_accountants import randomizers
from shuffle_accountants.pld import roundoff

__all__ = [
    'binary_rr_all_equal_pair_epsilon_lower_bound',
    'composed_epsilon_lower_bound',
    'dataset_pair_atoms',
    'randomizer_epsilon_lower_bound',
]

_WINDOW_TAU = 40.0
_MAX_INTERVAL = 1e-3


def binary_rr_all_equal_pair_epsilon_lower_bound(
    num_users: int, local_epsilon: float, rounds: int, delta: float,
    grid_points_per_std: float = 5.0) -> float:
  """ε(δ) of T rounds of shuffled binary RR on the all-equal pair. [LB, PAIR]

  Composed by `composed_epsilon_lower_bound` (losses rounded down, FFT
  round-off bounded, nothing put at +infinity: ROUNDOFF-LOWER), so every
  numerical error lowers the value, at every delta: a lower bound, never a
  guarantee. Both directions of the pair
  are composed and the larger ε is returned.

  Rounding losses down biases T rounds by up to T grid steps, so the grid
  step is the per-round loss standard deviation over
  `grid_points_per_std` * sqrt(T) (and at most 1e-3): the bias
  stays a small fraction of the composed loss's spread.

  Args:
    num_users: n >= 1.
    local_epsilon: eps0 >= 0.
    rounds: T >= 1 identical rounds.
    delta: target δ in (0, 1).
    grid_points_per_std: grid resolution, see above.
  """
  num_users = _validation.check_integer('num_users', num_users, 1)
  local_epsilon = _validation.check_local_epsilon(local_epsilon)
  rounds = _validation.check_integer('rounds', rounds, 1)
  delta = _validation.check_real('delta', delta, 0.0, 1.0, False, False)
  if local_epsilon == 0:
    return 0.0
  p = 1.0 / (math.exp(local_epsilon) + 1)
  one_minus_p = 1.0 / (math.exp(-local_epsilon) + 1)
  lo, hi = _numerics.hoeffding_window(num_users, p, tau=_WINDOW_TAU)
  ones = np.arange(lo, hi + 1, dtype=np.float64)
  # The window pmf is normalised to one, so each entry is above the truth;
  # scaling by the window's least mass, 1 - 2e^-tau, puts it below again.
  log_pmf = (_numerics.binomial_window_log_pmf(num_users, p, one_minus_p, lo,
                                               hi)
             + math.log1p(-2 * math.exp(-_WINDOW_TAU)))
  log_ratio = np.log1p((ones - num_users * p) * 2 * math.sinh(local_epsilon)
                       / num_users)
  loss_std = math.sqrt(float(np.sum(np.exp(log_pmf) * log_ratio**2)))
  # Few, far-apart atoms (small n) need an absolute resolution too.
  interval = min(loss_std / (grid_points_per_std * math.sqrt(rounds)),
                 _MAX_INTERVAL)
  with_one = np.exp(log_pmf + log_ratio)
  without_one = np.exp(log_pmf)
  return max(composed_epsilon_lower_bound([(signed, masses, rounds)],
                                          delta, interval)
             for signed, masses in ((log_ratio, with_one),
                                    (-log_ratio, without_one)))


# Composed grids up to this many points go through the proven route
# (`roundoff.lower_masses`); larger ones through dp_accounting's FFT with
# its truncated tails and round-off subtracted (`_fft_lower_masses`).
_MAX_LOWER_GRID = 2**17
# The dp_accounting route is used only from this delta up: its numpy FFT's
# round-off (about 1e-16 an entry) stays far below delta there. Below it,
# fewer rounds (more rounds only raise the pair's epsilon), or single rounds
# on a coarser grid, go through the proven route.
_FFT_DELTA_FLOOR = 1e-10
# Tilts tried per bound: each resolves delta near its own saddle point.
_MAX_TILTS = 12


def _delta_below(first: int, masses: np.ndarray, interval: float,
                 epsilon: float) -> float:
  """sum m (1 - e^{eps - L})_+ over the grid's losses above eps, rounded
  down."""
  start = max(0, int(math.floor(epsilon / interval)) - first)
  tail = masses[start:]
  losses = (first + start + np.arange(tail.size)) * interval
  terms = tail * -np.expm1(np.minimum(0.0, epsilon - losses))
  return float(np.sum(terms)) * (1 - roundoff.UNIT_ROUNDOFF
                                 * (tail.size + 16))


def _epsilon_below(first: int, masses: np.ndarray, interval: float,
                   delta: float) -> float:
  """The largest eps found with `_delta_below` > delta (0 if none): a
  search over grid points, then bisection inside the last cell."""
  if _delta_below(first, masses, interval, 0.0) <= delta:
    return 0.0
  low, high = _search.whole_bisected(  # grid offsets
      lambda middle: _delta_below(first, masses, interval,
                                  (first + middle) * interval) > delta,
      max(0, -first), masses.size)
  return _search.bisected(
      lambda eps: _delta_below(first, masses, interval, eps) > delta,
      max(0.0, (first + low) * interval), (first + high) * interval, 40)[0]


def _fft_lower_masses(interval: float,
                      grids: Sequence[Tuple[int, np.ndarray, int]],
                      tail: float) -> Tuple[int, np.ndarray]:
  """(first, masses) of the composition of grids too large for the proven
  route: dp_accounting's optimistic composition with an explicit tail
  truncation `tail` (at most that much wraps into the window in all; not
  its default 1e-15), its +infinity mass (the truncated tails) discarded,
  which only lowers delta."""
  pld = None
  for lower, probs, count in grids:
    part = privacy_loss_distribution.PrivacyLossDistribution \
        .create_from_rounded_probability(
            {lower + i: float(m) for i, m in enumerate(probs) if m > 0},
            0.0, interval, pessimistic_estimate=False)
    if count > 1:
      # Its Chernoff bounds at orders whose MGF overflows are infinite and
      # left out by its min (scipy warns of the overflow; the answer is
      # unaffected).
      with np.errstate(over='ignore'):
        part = part.self_compose(count, tail_mass_truncation=tail)
    pld = part if pld is None else pld.compose(part,
                                               tail_mass_truncation=tail)
  assert pld is not None
  pmf, _ = _upstream.pld_pmfs(pld)
  _, first, masses, _ = _upstream.dense_pmf_fields(pmf.to_dense_pmf())
  return first, np.maximum(np.asarray(masses, dtype=np.float64), 0.0)


def _chernoff_epsilon(ledger: roundoff.Rounds, delta: float) -> float:
  """Where the Chernoff bound on P[L >= eps] reaches delta: only where to
  tilt first (near, a little above, the epsilon sought)."""
  best = math.inf
  for tilt in 2.0**(np.arange(-40, 81) / 8):
    counts, log_moments, _, _ = ledger._log_moments(float(tilt))  # pylint: disable=protected-access
    best = min(best, (float(np.sum(counts * log_moments)) - math.log(delta))
               / tilt)
  return max(0.0, best)


def composed_epsilon_lower_bound(
    parts: Sequence[Tuple[np.ndarray, np.ndarray, int]], delta: float,
    interval: float) -> float:
  """A lower bound on eps(delta) of a composition, at every delta. [LB]

  ROUNDOFF-LOWER. `parts` holds (losses, masses, count): atoms whose
  masses are at most the pair's, composed count times (the losses are the
  pair's log-likelihood ratios under the first dataset). Losses are
  rounded down to the grid of spacing `interval`, the composition's masses
  bounded below
  with FFT round-off included (`roundoff.lower_masses`, tilted at the
  saddle points of successive estimates, the largest lower mass kept at
  each point), and delta(eps) summed rounded down: every error lowers the
  result, and no mass is ever put at +infinity. 0 where nothing resolves.
  """
  kept = [(losses[masses > 0], masses[masses > 0], count)
          for losses, masses, count in parts if count]
  kept = [part for part in kept if part[0].size]
  if not kept:
    return 0.0
  grids = []
  for losses, masses, count in kept:
    scaled = losses / interval
    index = np.floor(scaled - 1e-9 * (1 + np.abs(scaled))).astype(np.int64)
    lower = int(index.min())
    probs = np.bincount(index - lower, weights=masses) * (
        1 - roundoff.UNIT_ROUNDOFF * (masses.size + 4))
    grids.append((lower, probs, count))
  ledger = roundoff.Rounds(interval, [(lower, probs, 0.0, count)
                                      for lower, probs, count in grids])
  best: Optional[np.ndarray] = None
  epsilon, tilts = 0.0, set()
  tilt = ledger.saddle_point(_chernoff_epsilon(ledger, delta))
  support = 1 + sum(count * (probs.size - 1) for _, probs, count in grids)
  if support > _MAX_LOWER_GRID:
    if delta >= _FFT_DELTA_FLOOR:
      # The truncated tails wrap at most delta * 1e-6 into the window: read
      # the computed profile at delta plus that.
      first, masses = _fft_lower_masses(interval, grids, delta * 1e-6)
      return _epsilon_below(first, masses, interval, delta * (1 + 1e-6))
    shrink = _MAX_LOWER_GRID / support
    fewer = [(losses, masses, max(1, int(count * shrink)))
             for losses, masses, count in kept]
    if all(a[2] == b[2] for a, b in zip(fewer, kept)):
      # Single rounds too wide for the grid: a coarser one that fits rounds
      # the losses further down, which only lowers the bound.
      return composed_epsilon_lower_bound(
          kept, delta, interval * 1.05 * support / _MAX_LOWER_GRID)
    return composed_epsilon_lower_bound(fewer, delta, interval)
  for _ in range(_MAX_TILTS):
    result = roundoff.lower_masses(interval, grids, tilt)
    if result is None:
      return 0.0
    first, masses = result
    best = masses if best is None else np.maximum(best, masses)
    epsilon = max(epsilon, _epsilon_below(first, best, interval, delta))
    tilts.add(tilt)
    tilt = ledger.saddle_point(epsilon)
    if tilt in tilts:
      break
  return epsilon


# Relative width of the groups of S in `dataset_pair_atoms`: each group is
# represented by its least informative member, so coarser is lower.
_LOWER_BOUND_RELATIVE_WIDTH = 1e-3
_MAX_LOWER_BOUND_GROUPS = 400


def dataset_pair_atoms(num_users: int, others_for: float,
                       others_against: float, target_for: float,
                       target_against: float
                       ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
  """(losses, P-masses, Q-masses) of a pair dominated by a dataset pair. [LB]

  The dataset pair: the target's report has (b, b') = (1, 0) with
  probability `target_for` and (0, 1) with `target_against` (swapped in
  the neighbour), every other user's with `others_for` and
  `others_against`. The statistic is (a, b), the numbers of reports in the
  two cells: a post-processing of the shuffled output, so every
  hockey-stick of the result is at most the mechanism's. S = a + b has the
  same law under both datasets; given S the target is among the S reports
  with probability lambda_S, and a is Bin(S, r) (r = others' share of
  (1, 0)) with, at weight lambda_S, one of the S draws replaced by the
  target's. For large n, values of S are grouped and each group takes its
  *largest* S and *smallest* lambda: that pair is a post-processing of each
  member's (add independent Bernoulli(r) draws; redraw from Bin(S, r) with
  some probability), so the result stays dominated under composition.
  Masses are scaled below the truth and tails dropped, which only lowers
  every hockey-stick.
  """
  n = _validation.check_integer('num_users', num_users, 1)
  for name, value in (('others_for', others_for),
                      ('others_against', others_against),
                      ('target_for', target_for),
                      ('target_against', target_against)):
    _validation.check_real(name, value, 0.0, 1.0, min_inclusive=False)
  single = others_for + others_against
  target_single = target_for + target_against
  if single > 1 + 1e-9 or target_single > 1 + 1e-9:
    raise ValueError(f'cell probabilities must sum to at most 1; got '
                     f'others {single}, target {target_single}.')
  single, target_single = min(single, 1.0), min(target_single, 1.0)
  share_for = others_for / single
  target_share = target_for / target_single
  if single < 1:
    lo, hi = _numerics.hoeffding_window(n - 1, single, tau=_WINDOW_TAU)
  else:  # every other report is in a cell
    lo = hi = n - 1
  # S = others + target. Beyond the window the binomial is unknown (not
  # zero), so unless the window is the whole range the two edge labels,
  # where one of the two terms is missing, are dropped (that only lowers
  # the bound; a label with a missing term would not be).
  window = (_numerics.binomial_window_log_pmf(n - 1, single, 1 - single, lo,
                                              hi) if single < 1
            else np.zeros(1))
  log_others = np.append(window, -np.inf)
  log_shifted = np.insert(window, 0, -np.inf)
  labels = np.arange(lo, hi + 2)
  # (With single = 1 every other report is in a cell: the window is exact.)
  if (lo > 0 or hi < n - 1) and single < 1:
    labels, log_others, log_shifted = (labels[1:-1], log_others[1:-1],
                                       log_shifted[1:-1])
  with np.errstate(divide='ignore'):
    log_with = math.log(target_single) + log_shifted
    log_without = (math.log1p(-target_single) if target_single < 1
                   else -np.inf) + log_others
  log_label = np.logaddexp(log_with, log_without)
  with np.errstate(invalid='ignore'):
    share = np.nan_to_num(np.exp(log_with - log_label))
  # S = 0: neither cell, identical under both datasets (loss 0).
  identical = float(np.sum(np.exp(log_label[labels == 0])))
  keep = (labels >= 1) & np.isfinite(log_label)
  labels, log_label, share = labels[keep], log_label[keep], share[keep]
  if labels.size == 0:
    return np.zeros(1), np.full(1, identical), np.full(1, identical)
  edges = [0]
  while edges[-1] < labels.size:
    width = max(1, int(_LOWER_BOUND_RELATIVE_WIDTH * labels[edges[-1]]),
                labels.size // _MAX_LOWER_BOUND_GROUPS)
    edges.append(min(labels.size, edges[-1] + width))
  starts = np.array(edges[:-1], dtype=np.int64)
  weight = np.add.reduceat(np.exp(log_label), starts) * (
      1 - 4 * math.exp(-_WINDOW_TAU))
  total = labels[np.array(edges[1:]) - 1]
  share = np.minimum.reduceat(share, starts)
  # The outputs a of each group: a Hoeffding window of Bin(S, r).
  half = np.sqrt(total * _WINDOW_TAU / 2)
  a_lo = np.maximum(0, np.floor(total * share_for - half)).astype(np.int64)
  a_hi = np.minimum(total, np.ceil(total * share_for + half)).astype(np.int64)
  log_binomial = _numerics.binomial_windows_log_pmf(
      total, share_for, 1 - share_for, a_lo, a_hi)
  sizes = a_hi - a_lo + 1
  group = np.repeat(np.arange(sizes.size), sizes)
  first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
  a = (a_lo[group] + np.arange(group.size) - first[group]).astype(np.float64)
  count = total[group].astype(np.float64)
  lam = share[group]

  def likelihood(for_share):  # P(a | S) / Bin(S, r)(a) with the target's
    replaced = ((count - a) / (count * (1 - share_for)) * (1 - for_share)
                + a / (count * share_for) * for_share) if (
                    0 < share_for < 1) else np.ones_like(a)
    return lam * replaced + 1 - lam

  upper, lower = likelihood(target_share), likelihood(1 - target_share)
  base = weight[group] * np.exp(log_binomial)
  return (np.append(np.log(upper) - np.log(lower), 0.0),
          np.append(base * upper, identical),
          np.append(base * lower, identical))


def _epsilon_of_atoms(losses: np.ndarray, masses: np.ndarray,
                      delta: float) -> float:
  """The smallest eps with sum m (1 - e^{eps - L})_+ <= delta (rounded down)."""
  def delta_at(epsilon):  # rounded down: a lower bound on the atoms' delta
    terms = masses * -np.expm1(np.minimum(0.0, epsilon - losses))
    return float(np.sum(terms)) * (1 - roundoff.UNIT_ROUNDOFF
                                   * (masses.size + 16))
  low, high = 0.0, float(max(0.0, np.max(losses, initial=0.0)))
  if delta_at(0.0) <= delta:
    return 0.0
  return _search.bisected(lambda eps: delta_at(eps) > delta, low, high,
                          100)[0]


# Relative error allowed for a computed privacy loss (thousands of ulps).
_LOSS_MARGIN = 1e-12


def _composed_epsilon(losses: np.ndarray, masses: np.ndarray, rounds: int,
                      delta: float) -> float:
  """ε(δ) of `rounds` compositions of one direction, rounded down."""
  if rounds == 1:
    # The losses are logs of computed likelihood ratios, a few ulps off
    # either way: lowered, so the pure-DP end eps0 is never exceeded.
    return _epsilon_of_atoms(losses - _LOSS_MARGIN * (1 + np.abs(losses)),
                             masses, delta)
  spread = math.sqrt(float(np.sum(masses * losses**2)))
  if spread == 0:
    return 0.0
  return composed_epsilon_lower_bound(
      [(losses, masses, rounds)], delta,
      min(spread / (5.0 * math.sqrt(rounds)), _MAX_INTERVAL))


def randomizer_epsilon_lower_bound(randomizer: randomizers.Randomizer,
                                   num_users: int, rounds: int,
                                   delta: float) -> Optional[float]:
  """ε(δ) of T rounds of shuffled `randomizer` on dataset pairs. [LB, PAIR]

  The target holds x vs x' and every other user holds x' ("all-equal"), or
  a third value z when the randomizer has one; `dataset_pair_atoms` for
  each (for every catalogue randomizer the two counts are sufficient for
  the all-equal pair, which is then exact up to rounding; for the
  third-value pair they are a post-processing), and for the third-value
  pair also the two counts among the reports with c = 1 and among those
  with c = 0, c a third bit ("supports z": LB-THIRD-SPLIT), both directions,
  composed T times by `composed_epsilon_lower_bound` (ROUNDOFF-LOWER), so every
  numerical error lowers it, at every delta. The largest is returned: what no
  certified accountant can go below. None when the randomizer's bit laws are
  not known (a `FiniteRandomizer`).
  """
  num_users = _validation.check_integer('num_users', num_users, 1)
  rounds = _validation.check_integer('rounds', rounds, 1)
  delta = _validation.check_real('delta', delta, 0.0, 1.0, False, False)
  cells = randomizer.pair_cells()
  if cells is None:
    return None
  if randomizer.local_epsilon == 0:
    return 0.0
  target = (cells.target_for, cells.target_against)
  laws = [(cells.target_against, cells.target_for) + target]
  if cells.third_value_single is not None:
    laws.append((cells.third_value_single,) * 2 + target)
  laws.extend(cells.third_value_laws)
  epsilon = 0.0
  for law in laws:
    if min(law) <= 0:
      continue  # a cell's probability underflows (eps0 in the hundreds)
    losses, upper, lower = dataset_pair_atoms(num_users, *law)
    for signed, masses in ((losses, upper), (-losses, lower)):
      epsilon = max(epsilon, _composed_epsilon(signed, masses, rounds,
                                               delta))
  return epsilon
