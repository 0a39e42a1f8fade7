"""Log-space binomial windows and Chernoff tails that only raise results.

IDs: CLONE-MONOTONE, TAILS-TO-INFINITY

Everything here is written so that truncation and rounding can only *raise*
the privacy quantities computed from it:

* Binomial probabilities outside a computed window are bounded with the
  Chernoff bound ``P[Bin(N, p) >= k] <= exp(-N KL(k/N || p))``, never dropped.
* Windowed probabilities are normalised to sum to one inside the window, which
  makes every one of them at least its true value.
* Mixtures over a Binomial label whose per-label value is non-increasing in the
  label (docs/mathematics.md CLONE-MONOTONE) are grouped into blocks, each
  represented by its worst (smallest) member.
"""

from typing import Callable, Tuple, Union

import numpy as np
from scipy import special

from shuffle_accountants import _cache

# Relative safety margin applied to final RDP values: covers the floating point
# error of the sums and logarithms (which is orders of magnitude smaller).
RELATIVE_SAFETY_MARGIN = 1e-10

# Hoeffding exponent for probability windows: the mass outside the window is
# at most 2 exp(-WINDOW_TAU), and it is bounded separately anyway.
WINDOW_TAU = 25.0

# A block of a Binomial mixture whose crude upper bound is below this fraction
# of a lower estimate of the total is not evaluated exactly; its crude bound is
# added instead (so soundness never depends on this constant).
NEGLIGIBLE_FRACTION = 1e-17



def log_expm1(x: Union[float, np.ndarray]) -> np.ndarray:
  """log(exp(x) - 1) for x > 0, without overflow for large x."""
  x = np.asarray(x, dtype=np.float64)
  with np.errstate(divide='ignore'):
    small = np.log(np.expm1(np.minimum(x, 30.0)))
  large = x + np.log1p(-np.exp(-np.maximum(x, 30.0)))
  return np.where(x > 30.0, large, small)


def log_sum_exp(values: np.ndarray, axis: int = -1) -> np.ndarray:
  """log(sum(exp(values))) along `axis`; -inf where every entry is -inf.

  Like scipy's logsumexp without its per-call overhead, which dominates
  when it is called thousands of times on short arrays (docs/performance.md).
  """
  values = np.asarray(values, dtype=np.float64)
  peak = np.max(values, axis=axis, keepdims=True)
  shift = np.where(np.isfinite(peak), peak, 0.0)
  with np.errstate(divide='ignore'):
    total = np.log(np.sum(np.exp(values - shift), axis=axis, keepdims=True))
  return np.squeeze(total + shift, axis=axis)


def binomial_kl(t: np.ndarray, p: float, one_minus_p: float) -> np.ndarray:
  """KL(Bern(t) || Bern(p)) for t in [0, 1]."""
  t = np.asarray(t, dtype=np.float64)
  return (special.xlogy(t, t) - special.xlogy(t, p)
          + special.xlogy(1 - t, 1 - t) - special.xlogy(1 - t, one_minus_p))


def log_upper_tail_bound(num_trials: int, p: float, one_minus_p: float,
                         k: Union[float, np.ndarray]) -> np.ndarray:
  """Upper bound on log P[Bin(num_trials, p) >= k] (Chernoff)."""
  k = np.asarray(k, dtype=np.float64)
  if num_trials == 0:
    return np.where(k <= 0, 0.0, -np.inf)
  t = np.clip(k / num_trials, 0.0, 1.0)
  bound = np.where(t > p, -num_trials * binomial_kl(t, p, one_minus_p), 0.0)
  return np.where(k > num_trials, -np.inf, np.minimum(bound, 0.0))


def log_lower_tail_bound(num_trials: int, p: float, one_minus_p: float,
                         k: Union[float, np.ndarray]) -> np.ndarray:
  """Upper bound on log P[Bin(num_trials, p) <= k] (Chernoff)."""
  k = np.asarray(k, dtype=np.float64)
  return log_upper_tail_bound(num_trials, one_minus_p, p, num_trials - k)


def hoeffding_window(num_trials: int, p: float, tau: float = WINDOW_TAU
                     ) -> Tuple[int, int]:
  """Integer window [lo, hi] around the mean holding all but 2e^-tau mass."""
  half_width = np.sqrt(num_trials * tau / 2.0) + 1.0
  mean = num_trials * p
  lo = int(max(0, np.floor(mean - half_width)))
  hi = int(min(num_trials, np.ceil(mean + half_width)))
  return lo, hi


def binomial_window_log_pmf(num_trials: int, p: float, one_minus_p: float,
                            lo: int, hi: int) -> np.ndarray:
  """Log-pmf of Bin(num_trials, p) on [lo, hi], normalised to sum to one.

  One window of `binomial_windows_log_pmf`.
  """
  return binomial_windows_log_pmf(np.array([num_trials]), p, one_minus_p,
                                  np.array([lo]), np.array([hi]))


def binomial_windows_log_pmf(num_trials: np.ndarray, p: float,
                             one_minus_p: float, lo: np.ndarray,
                             hi: np.ndarray) -> np.ndarray:
  """Log-pmfs of Bin(num_trials[j], p) on [lo[j], hi[j]], concatenated.

  Each window is normalised to sum to one, which makes every entry an upper
  bound on the true probability. The shape is built from the exact ratios
  pmf(k+1)/pmf(k) written with log1p and accumulated outwards from the
  mode, which keeps the relative error of *differences* between entries near
  machine precision even for 10^10 trials (gammaln differences lose about
  1e-6 there). All windows are done in one pass (no Python loop: mixtures
  of thousands of small clone counts call this once).
  """
  num_trials = np.asarray(num_trials, dtype=np.float64)
  lo = np.asarray(lo, dtype=np.int64)
  sizes = np.asarray(hi, dtype=np.int64) - lo + 1
  starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
  window = np.repeat(np.arange(sizes.size), sizes)
  ks = (lo[window] + np.arange(window.size) - starts[window]).astype(
      np.float64)
  # log pmf(k) - log pmf(k - 1) = log1p(((N+1)p - k) / (k (1-p))) for k > lo.
  with np.errstate(divide='ignore', invalid='ignore'):
    steps = np.log1p(((num_trials[window] + 1) * p - ks)
                     / (ks * one_minus_p))
  steps[starts] = 0.0
  # Each window's first step cancels the previous window's sum, so running
  # sums stay as small as inside one window (their rounding with them).
  window_sums = np.add.reduceat(steps, starts)
  steps[starts[1:]] = -window_sums[:-1]
  log_pmf = np.cumsum(steps)
  modes = np.clip(np.floor((num_trials + 1) * p), lo, lo + sizes - 1)
  log_pmf -= log_pmf[(starts + modes - lo).astype(np.int64)][window]
  # Every window's (clipped) mode is its largest entry, 0, so the plain sums
  # cannot overflow.
  totals = np.add.reduceat(np.exp(log_pmf), starts)
  return log_pmf - np.log(totals)[window]


def _block_steps(num_trials: int, relative_width: float,
                 exact_below: int) -> int:
  """How many geometric starts `block_starts` computes for num_trials."""
  return int(np.ceil(np.log(num_trials / exact_below)
                     / np.log1p(relative_width))) + 2


def _geometric_starts(steps: int, relative_width: float,
                      exact_below: int) -> np.ndarray:
  """floor(exact_below (1 + relative_width)^i) for i < steps, as integers."""
  return np.floor(exact_below * np.exp(
      np.arange(steps) * np.log1p(relative_width))).astype(np.int64)


# Every label law of a ledger takes a prefix of one lattice of block starts,
# which reaches this many labels (no int64 overflow) in at most this many
# steps (else each law computes its own starts).
_SHARED_LATTICE_TOP = 2**40
_SHARED_LATTICE_STEPS = 1 << 16


@_cache.cached(16 * 2**20, lambda value: value[1].nbytes)
def _shared_block_lattice(relative_width: float, exact_below: int,
                          steps: int) -> Tuple[np.ndarray, np.ndarray]:
  """(geometric starts, sorted distinct labels with the singles), read-only.

  The geometric starts are non-decreasing: a decrease would make the lattice
  unusable as a shared prefix (`block_starts` then computes its own).
  """
  geometric = _geometric_starts(steps, relative_width, exact_below)
  labels = np.unique(np.concatenate([
      np.arange(exact_below, dtype=np.int64), geometric]))
  if np.any(np.diff(geometric) < 0):
    geometric = geometric[:0]
  for array in (geometric, labels):
    array.setflags(write=False)
  return geometric, labels


def block_starts(num_trials: int, relative_width: float,
                 exact_below: int = 512) -> np.ndarray:
  """Start labels of blocks covering {0, ..., num_trials}.

  Labels below `exact_below` are blocks of their own; above, a block spans a
  relative width `relative_width`, so representing it by its first label
  changes a 1/label-like quantity by at most that fraction.

  The starts are the labels up to num_trials of one lattice shared by every
  num_trials (cached), identical to computing them for num_trials alone:
  the geometric starts are elementwise the same and non-decreasing, and the
  first one left out already exceeds num_trials.
  """
  singles = np.arange(min(exact_below, num_trials + 1), dtype=np.int64)
  if num_trials < exact_below:
    return singles
  steps = _block_steps(num_trials, relative_width, exact_below)
  shared_steps = _block_steps(_SHARED_LATTICE_TOP, relative_width,
                              exact_below)
  if steps < shared_steps <= _SHARED_LATTICE_STEPS:
    geometric, labels = _shared_block_lattice(relative_width, exact_below,
                                              shared_steps)
    if geometric.size > steps and geometric[steps] > num_trials:
      return labels[:np.searchsorted(labels, num_trials, side='right')]
  geometric = _geometric_starts(steps, relative_width, exact_below)
  geometric = geometric[geometric <= num_trials]
  return np.unique(np.concatenate([singles, geometric]))


def binomial_block_log_weights(num_trials: int, p: float, one_minus_p: float,
                               starts: np.ndarray) -> np.ndarray:
  """Upper bounds on log P[Bin(num_trials, p) in block] for each block.

  Block i is [starts[i], starts[i+1] - 1] (the last one ends at num_trials).
  Inside a Hoeffding window the normalised window pmf is summed; parts of a
  block outside the window are bounded by the Chernoff tail bound.
  """
  ends = np.append(starts[1:] - 1, num_trials)
  lo, hi = hoeffding_window(num_trials, p)
  window_pmf = np.exp(binomial_window_log_pmf(num_trials, p, one_minus_p,
                                              lo, hi))
  inside_lo = np.maximum(starts, lo)
  inside_hi = np.minimum(ends, hi)
  has_inside = inside_lo <= inside_hi
  inside = np.zeros(starts.size)
  if np.any(has_inside):
    # Blocks partition the labels, so their in-window parts are consecutive
    # segments of the window: reduceat sums exactly one block each. Summing
    # each block's own entries (not differencing a cumulative sum) keeps the
    # relative accuracy of tiny blocks.
    inside[has_inside] = np.add.reduceat(window_pmf, inside_lo[has_inside] - lo)
  with np.errstate(divide='ignore'):
    log_inside = np.log(inside)
  below = np.minimum(ends, lo - 1)
  log_below = np.where(starts < lo,
                       log_lower_tail_bound(num_trials, p, one_minus_p, below),
                       -np.inf)
  above = np.maximum(starts, hi + 1)
  log_above = np.where(ends > hi,
                       log_upper_tail_bound(num_trials, p, one_minus_p, above),
                       -np.inf)
  return np.logaddexp(np.logaddexp(log_inside, log_below), log_above)


def _lattice_anchors(reference: int, first: int, last: int,
                     largest: int) -> np.ndarray:
  """Anchor blocks: every block within 2 of `reference`, then multiples of
  2^k within 2^(k+1) of it, covering [first, last] (the ends rounded
  outwards onto the coarsest lattice used, within [0, largest])."""
  anchors, level = set(range(reference - 2, reference + 3)), 0
  while True:
    spacing, reach = 2**level, 2**(level + 1)
    low = (reference - reach) // spacing * spacing
    high = -(-(reference + reach) // spacing) * spacing
    anchors.update(range(low, high + 1, spacing))
    if low <= first and high >= last:
      break
    level += 1
  bottom = max(0, first // spacing * spacing)
  top = min(largest, -(-last // spacing) * spacing)
  return np.array(sorted(a for a in anchors | {bottom, top}
                         if bottom <= a <= top), dtype=np.int64)


def _blocks_above(log_weights: np.ndarray, log_values: np.ndarray,
                  thresholds: np.ndarray) -> np.ndarray:
  """Blocks b with log_weights[b] + log_values[o] > thresholds[o] at some o.

  The same float comparisons as on the whole matrix, made only for blocks
  that can pass: a block's largest sum is within float rounding (far below
  the slack) of its weight plus the largest value.
  """
  possible = np.arange(log_weights.size)
  if np.all(np.isfinite(log_values)) and not np.any(np.isnan(thresholds)):
    largest = np.max(log_values)
    slack = 1.0 + 1e-12 * (np.abs(log_weights) + abs(largest))
    with np.errstate(invalid='ignore'):  # -inf weights: never passing
      possible = np.nonzero(log_weights + largest
                            > np.min(thresholds) - slack)[0]
  passing = np.any(log_weights[possible, None] + log_values[None, :]
                   > thresholds[None, :], axis=1)
  return possible[passing]


# exp of a shifted log below this is 0.0 exactly (below -745.2 in binary64).
_EXP_UNDERFLOW = -1000.0


def _log_sum_exp_crude(log_weights: np.ndarray,
                       log_values: np.ndarray) -> np.ndarray:
  """log_sum_exp(log_weights[:, None] + log_values[None, :], axis=0), the same
  floats, summing only the rows whose terms are not all exactly 0.

  Every column's peak lies on the row of the largest weight, and a row whose
  weight is 1000 below it has every shifted term below -745.2, so exp makes
  it 0.0. numpy sums the rows of a matrix of several columns one after the
  other (pairwise summation runs only along a contiguous axis), and adding
  0.0 leaves a partial sum unchanged, so dropping those rows changes no bit
  (tests/rdp/test_shared_numerics.py compares both).
  """
  peak = np.max(log_weights)  # NaN if any is
  if (log_values.size > 1 and np.all(np.isfinite(log_values))
      and np.isfinite(peak)):
    log_weights = log_weights[log_weights >= peak + _EXP_UNDERFLOW]
  return log_sum_exp(log_weights[:, None] + log_values[None, :], axis=0)


def log_binomial_mixture_excess(
    num_trials: int, p: float, one_minus_p: float, orders: np.ndarray,
    log_excess: Callable[[int, np.ndarray], np.ndarray],
    log_worst_excess: np.ndarray, relative_width: float,
    gap_tolerance: float = 1e-10) -> np.ndarray:
  """Upper bound on log sum_c Bin(num_trials, p)(c) E_c(order), per order.

  Args:
    num_trials, p, one_minus_p: the Binomial law of the label c.
    orders: RDP orders (only passed through to `log_excess`).
    log_excess: (c, orders) -> upper bound on log E_c, where E_c >= 0 must be
      non-increasing in c (docs/mathematics.md CLONE-MONOTONE for the clone
      pair).
    log_worst_excess: log E_0 per order, an upper bound on every E_c.
    relative_width: relative width of label blocks (see `block_starts`).
    gap_tolerance: anchors are added until no gap between two of them adds
      more than this fraction of the total (tightness only, never soundness).

  Returns:
    The bound per order, in log space.
  """
  starts = block_starts(num_trials, relative_width)
  log_weights = binomial_block_log_weights(num_trials, p, one_minus_p, starts)
  # Crude bounds per block and order are formed only for the blocks that
  # need them (there are thousands of blocks and a few dozen orders).
  crude = lambda blocks: log_weights[blocks, None] + log_worst_excess[None, :]
  mode = int(np.clip(np.floor((num_trials + 1) * p), 0, num_trials))
  # Anchors lie on a lattice shared by nearby label laws (blocks are global),
  # so that a ledger of rounds with similar populations evaluates mostly the
  # same labels (the callers cache `log_excess`): the reference is a multiple
  # of 4, and anchors farther from it lie on coarser sublattices.
  reference_block = 4 * int((np.searchsorted(starts, mode, side='right') - 1)
                            // 4)
  reference_row = log_excess(int(starts[reference_block]), orders)
  # A lower estimate of the total (the reference block's own term): blocks
  # whose crude bound is a negligible fraction of it keep that bound.
  reference = log_weights[reference_block] + reference_row
  if not np.all(np.isfinite(reference_row) | (reference_row == -np.inf)):
    raise FloatingPointError(f'non-finite excess {reference_row} at label '
                             f'{starts[reference_block]}')
  relevant = _blocks_above(log_weights, log_worst_excess,
                           reference + np.log(NEGLIGIBLE_FRACTION))
  if relevant.size == 0:  # every crude bound vanishes (eps0 -> 0): sum them
    return special.logsumexp(crude(slice(None)), axis=0)
  first, last = int(relevant.min()), int(relevant.max())
  considered = np.arange(first, last + 1)
  rows = {reference_block: reference_row}

  def row(block):
    if block not in rows:
      rows[block] = (log_worst_excess if starts[block] == 0
                     else log_excess(int(starts[block]), orders))
    return rows[block]

  # Exact values at anchor blocks; every other block is bounded by the nearest
  # anchor at or below it, which is sound because E_c is non-increasing in c
  # (the lowest anchor is at or below `first`). Anchors start geometrically
  # spaced around the reference, and a gap between two anchors is bisected
  # while its slack (that bound minus the value of the anchor above) is a
  # non-negligible part of the total.
  anchors = _lattice_anchors(reference_block, first, last, starts.size - 1)
  # Blocks outside [first, last] keep their crude bounds: summed once.
  outside = np.ones(starts.size, dtype=bool)
  outside[considered] = False
  log_outside = (_log_sum_exp_crude(log_weights[outside], log_worst_excess)
                 if np.any(outside) else np.full(orders.size, -np.inf))
  crude_considered = crude(considered)
  while True:
    anchor_rows = np.stack([row(block) for block in anchors])
    below = np.searchsorted(anchors, considered, side='right') - 1
    upper = np.minimum(log_weights[considered, None] + anchor_rows[below],
                       crude_considered)
    total = np.logaddexp(log_outside, log_sum_exp(upper, axis=0))
    above = np.minimum(below + 1, anchors.size - 1)
    lower = log_weights[considered, None] + anchor_rows[above]
    slack = np.exp(upper - total) - np.exp(np.minimum(lower, upper) - total)
    gap_slack = np.zeros((anchors.size, orders.size))
    np.add.at(gap_slack, below, slack)
    gap_width = np.diff(np.append(anchors, max(last, anchors[-1]) + 1))
    refine = np.nonzero(np.any(gap_slack > gap_tolerance, axis=1)
                        & (gap_width > 1))[0]
    if refine.size == 0:
      return total
    anchors = np.unique(np.concatenate(
        [anchors, anchors[refine] + gap_width[refine] // 2]))
