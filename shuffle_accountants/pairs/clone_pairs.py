"""Atoms of the clone pairs' PLDs, also the RDP route's input.

IDs: FMT21-CLONES, KHH-PLD-GENERIC, KHH-KRR-STRONG, KHH-KRR-WEAK,
  CLONE-MONOTONE, CTD-MERGE-ATOMS

All pairs here are mixtures, over a label revealed by the output, of the
*conditional clone pair* with c clones and log-odds theta:

  A ~ Bin(c, 1/2), Delta ~ Bern(q), q = e^theta / (e^theta + 1),
  P = (A + Delta, c - A + 1 - Delta),   Q = (A + 1 - Delta, c - A + Delta),
  P_c(a) = Bin(c + 1, 1/2)(a) * 2 (q a + (1 - q) b) / (c + 1),  b = c + 1 - a,
  L(a) = log((e^theta a + b) / (a + e^theta b))     (docs/mathematics.md
                                                    CLONE-CONDITIONAL; theta =
                                                    inf gives L = log(a / b)).

Its hockey-stick divergences are non-increasing in c (docs/mathematics.md
CLONE-MONOTONE) and non-decreasing in theta (the hockey-stick of q U + (1-q) V
against q V + (1-q) U is convex in q and symmetric about 1/2). So a group of
labels can soundly be represented by its smallest c and largest theta, with the
group's total weight (docs/mathematics.md LABEL-MIXTURE). Every pair is
swap-symmetric (docs/mathematics.md CLONE-SWAP-SYMMETRY).

* FMT21-CLONES / KHH-PLD-GENERIC [DOM]: c ~ Bin(n - 1, e^{-eps0}), theta = eps0.
* KHH-KRR-STRONG [DOM for the strong adversary]: with probability gamma the
  differing user answered randomly (loss 0); otherwise c = M1 + M2 ~
  Bin(n - 1, 2 gamma / k) and theta = inf (the +inf atoms are b = 0).
* KHH-KRR-WEAK [DOM for the weak adversary]: with Y ~ Bin(n - 1, gamma) the
  other users who answered randomly and s = a + b the number of messages
  equal to either of the two differing values,
    P(s | y) = gamma Bin(y + 1, 2/k)(s) + (1 - gamma) Bin(y, 2/k)(s - 1),
  and given (y, s >= 1) the pair is the conditional clone pair with c = s - 1
  and theta = log(1 + (1 - gamma) k s / (gamma (y + 1))); s = 0 has loss 0.
  (Derived from KHH-KRR-WEAK's laws, [KHH] App. B (B.1)-(B.4): P(y, a, b) is
  proportional to binom(s, a) ((1 - gamma) a + gamma (y + 1) / k) given
  (y, s); checked against direct enumeration in the tests.)

Truncation: labels outside Chernoff windows and outputs outside a window of
each conditional pair go to +infinity (docs/mathematics.md TAILS-TO-INFINITY)
with a proven upper bound on their mass; labels beyond the window on the *safe*
side are merged into the nearest group, whose representative is worse.
"""

from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
from scipy import special

from shuffle_accountants import _numerics
from shuffle_accountants import _validation
from shuffle_accountants.pairs import binomial
from shuffle_accountants.pairs import privacy_loss

__all__ = [
    'DEFAULT_RELATIVE_WIDTH', 'conditional_clone_atoms',
    'cell_merged_clone_atoms', 'clone_probabilities', 'clone_pair_pld_atoms',
    'clone_pair_pld_atoms_unchecked', 'clone_pair_lower_atoms',
    'krr_random_answer_probability', 'krr_strong_pld_atoms',
    'krr_weak_pld_atoms',
]

_LOG_TAIL = binomial.LOG_TAIL
# Mixture components lighter than this fraction of the tail cut go to
# +infinity whole.
_NEGLIGIBLE_FRACTION = 1e-10
# Label groups per coordinate for the two-label weak k-RR pair (cost bound).
_MAX_WEAK_GROUPS = 60
# Default relative width of label groups: representing a group by its
# smallest clone count inflates epsilon by about half of it.
DEFAULT_RELATIVE_WIDTH = 1e-3


def _binomial_groups(num_trials: int, p: float, one_minus_p: float,
                     relative_width: float, max_groups: Optional[int] = None,
                     log_tail: float = _LOG_TAIL
                     ) -> Tuple[np.ndarray, np.ndarray, float]:
  """Groups of clone counts: (starts, weights, mass sent to +infinity).

  The upper tail is added to the last group (more clones are safer,
  docs/mathematics.md CLONE-MONOTONE); the lower tail is returned for the
  +infinity atom.
  """
  groups = binomial.label_groups(num_trials, p, one_minus_p, relative_width,
                                 max_groups, log_tail=log_tail)
  weights = groups.weights.copy()
  weights[-1] += groups.upper_tail
  return groups.starts, weights, groups.lower_tail


def _conditional_loss(outputs: np.ndarray, others: np.ndarray,
                      theta: np.ndarray, certain: np.ndarray) -> np.ndarray:
  """L = log((e^theta a + b) / (a + e^theta b)), elementwise (theta = inf
  where `certain`: log(a / b)); homogeneous in (a, b).

  log1p is exact for small theta, log-sum-exp cannot overflow for large
  theta.
  """
  loss = np.empty_like(outputs)
  small, large = ~certain & (theta < 1), ~certain & (theta >= 1)
  with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
    a, b, t = outputs[small], others[small], theta[small]
    loss[small] = np.log1p(np.expm1(t) * (a - b) / (a + np.exp(t) * b))
    log_a, log_b = np.log(outputs[large]), np.log(others[large])
    t = theta[large]
    loss[large] = (np.logaddexp(t + log_a, log_b)
                   - np.logaddexp(log_a, t + log_b))
    loss[certain] = np.log(outputs[certain]) - np.log(others[certain])
  return loss


def _kept_components(clones, log_odds, weights, log_tail: float):
  """(clones, log_odds, weights, mass sent to +infinity): components lighter
  than a fraction of the tail cut go to +infinity whole."""
  clones = np.asarray(clones, dtype=np.int64)
  log_odds = np.asarray(log_odds, dtype=np.float64)
  weights = np.asarray(weights, dtype=np.float64)
  negligible = weights < _NEGLIGIBLE_FRACTION * np.exp(log_tail)
  return (clones[~negligible], log_odds[~negligible], weights[~negligible],
          float(np.sum(weights[negligible])))


def _hoeffding_window(num_outputs: np.ndarray, log_tail: float
                      ) -> Tuple[np.ndarray, np.ndarray]:
  """Output windows [lo, hi] of Bin(m, 1/2), each tail at most e^log_tail."""
  # Hoeffding: P[Bin(m, 1/2) < m/2 - sqrt(m T / 2)] <= e^-T, T = -log_tail.
  lo = np.maximum(0, np.floor(num_outputs / 2 - np.sqrt(
      -num_outputs * log_tail / 2))).astype(np.int64)
  return lo, num_outputs - lo


def _misplaced(start: np.ndarray, level: np.ndarray, theta: np.ndarray,
               num_outputs: np.ndarray, cell) -> np.ndarray:
  """Whether output `start` is not the first whose `cell` is `level`."""
  return ((cell(start.astype(np.float64), theta, num_outputs) < level)
          | (cell((start - 1).astype(np.float64), theta, num_outputs)
             >= level))


def _cell_segments(lo: np.ndarray, hi: np.ndarray, num_outputs: np.ndarray,
                   log_odds: np.ndarray, first: np.ndarray, total: int,
                   discretization: Optional[float]) -> np.ndarray:
  """Starts (flat output indices) of the runs of outputs merged into one atom.

  A run holds the consecutive outputs of one component whose losses share
  their lower grid point (`privacy_loss.grid_cell`); without a grid, or for
  components whose outputs are sparser than the grid (or theta = inf),
  every output is its own run. The loss is increasing in a, so a cell's
  outputs are consecutive; its first output is found from the inverse
  a / m = (e^{L + theta} - 1) / ((e^theta - 1)(1 + e^L)) and checked
  against the same loss formula the atoms use.
  """
  every = np.arange(total)
  if discretization is None:
    return every
  d = discretization
  finite = np.isfinite(log_odds)
  theta = np.where(finite, log_odds, 1.0)
  m = num_outputs.astype(np.float64)

  def cell(a, t, mm):
    return privacy_loss.grid_cell(_conditional_loss(
        a, mm - a, t, np.zeros(a.size, dtype=bool)), d)

  k_lo = cell(lo.astype(np.float64), theta, m)
  k_hi = cell(hi.astype(np.float64), theta, m)
  merged = finite & (2 * (k_hi - k_lo + 1) < hi - lo + 1)
  index = np.flatnonzero(merged)
  counts = (k_hi - k_lo)[index]
  owner = np.repeat(index, counts)
  level = (k_lo[owner] + 1 + np.arange(owner.size)
           - np.repeat(np.cumsum(counts) - counts, counts))
  t, mm = theta[owner], m[owner]
  loss = (level + 1e-9) * d
  with np.errstate(over='ignore', invalid='ignore'):
    share = np.expm1(loss + t) / (np.expm1(t) * (1 + np.exp(loss)))
  start = np.clip(np.ceil(mm * np.nan_to_num(share)), lo[owner] + 1,
                  hi[owner]).astype(np.int64)
  # The inverse is off by at most one output: up to three steps of one,
  # each only where the start is not yet right (a right one stays put).
  wrong = np.arange(start.size)
  for _ in range(3):
    wrong = wrong[_misplaced(start[wrong], level[wrong], t[wrong],
                             mm[wrong], cell)]
    if not wrong.size:
      break
    moved = start[wrong]
    moved -= (cell((moved - 1).astype(np.float64), t[wrong], mm[wrong])
              >= level[wrong])
    moved += (cell(moved.astype(np.float64), t[wrong], mm[wrong])
              < level[wrong])
    start[wrong] = np.clip(moved, lo[owner[wrong]] + 1, hi[owner[wrong]])
  wrong = wrong[_misplaced(start[wrong], level[wrong], t[wrong], mm[wrong],
                           cell)]
  merged[owner[wrong]] = False
  if not merged.any():
    return every
  keep = merged[owner]
  # A mask, not np.unique (the sort cost more than the atoms): empty cells
  # give repeated starts.
  is_start = np.repeat(~merged, hi - lo + 1)
  is_start[first[merged]] = True
  is_start[first[owner[keep]] + start[keep] - lo[owner[keep]]] = True
  return np.flatnonzero(is_start)


def conditional_clone_atoms(clones: np.ndarray, log_odds: np.ndarray,
                            weights: np.ndarray, log_tail: float = _LOG_TAIL,
                            discretization: Optional[float] = None
                            ) -> privacy_loss.PldAtoms:
  """PLD of the mixture sum_j weights[j] * (conditional pair j). [DOM]

  Args:
    clones: c_j >= 0 per component.
    log_odds: theta_j > 0 per component (inf allowed).
    weights: mixture weights (upper bounds on the true ones).
    log_tail: log of the mass cut from each tail of each component.
    discretization: None for every output's atom; or the spacing d of the
      grid the atoms will be discretized on by `pld.discrete.connect_the_dots`:
      each component's outputs sharing their lower grid point are then
      merged into one atom (their P-mass and Q-mass summed), which leaves
      that discretization unchanged (CTD-MERGE-ATOMS) at a fraction of the
      atoms.

  Returns:
    Atoms and +infinity mass (b = 0 atoms when theta is inf, plus a bound on
    every truncated output).
  """
  clones, log_odds, weights, infinity_mass = _kept_components(
      clones, log_odds, weights, log_tail)
  if clones.size == 0:
    return privacy_loss.PldAtoms(np.zeros(0), np.zeros(0), infinity_mass)
  num_outputs = clones + 1
  lo, hi = _hoeffding_window(num_outputs, log_tail)
  # P_c(a) <= 2 Bin(c + 1, 1/2)(a), and both tails are cut.
  infinity_mass += float(np.sum(weights[lo > 0])) * 4.0 * np.exp(log_tail)
  # All components at once (check-in mixtures have thousands of small ones):
  # one flat array of outputs, `component` says whose. Components sharing a
  # clone count (blanket pairs: one per group of V) share its binomial.
  distinct, first_of, inverse = np.unique(num_outputs, return_index=True,
                                          return_inverse=True)
  distinct_lo, distinct_hi = lo[first_of], hi[first_of]
  distinct_sizes = distinct_hi - distinct_lo + 1
  distinct_start = np.concatenate([[0], np.cumsum(distinct_sizes)[:-1]])
  distinct_binomial = np.exp(_numerics.binomial_windows_log_pmf(
      distinct, 0.5, 0.5, distinct_lo, distinct_hi))
  sizes = hi - lo + 1
  component = np.repeat(np.arange(sizes.size), sizes)
  first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
  offset = np.arange(component.size) - first[component]
  output_pmf = distinct_binomial[distinct_start[inverse][component] + offset]
  outputs = (lo[component] + offset).astype(np.float64)
  others = num_outputs[component] - outputs
  # Runs of outputs merged into one atom (each output alone without a grid):
  # sums of a Bin(m, 1/2)(a) and of b Bin(m, 1/2)(a), positive terms only.
  runs = _cell_segments(lo, hi, num_outputs, log_odds, first, component.size,
                        discretization)
  outputs = np.add.reduceat(outputs * output_pmf, runs)
  others = np.add.reduceat(others * output_pmf, runs)
  owner = component[runs]
  # A run whose binomial terms all underflow carries no mass under P or Q.
  occupied = (outputs > 0) | (others > 0)
  outputs, others, owner = outputs[occupied], others[occupied], owner[occupied]
  certain = np.isinf(log_odds)[owner]  # theta = inf: b = 0 is a +infinity atom
  theta = np.where(certain, 0.0, log_odds[owner])
  # mass = weight * sum of Bin(m, 1/2)(a) * 2 (q a + (1 - q) b) / m with
  # q = e^theta / (e^theta + 1) (theta = inf: q = 1), free of overflow.
  share = (np.where(certain, 1.0, special.expit(theta)) * outputs
           + np.where(certain, 0.0, special.expit(-theta)) * others)
  mass = (2.0 * weights / num_outputs)[owner] * share
  loss = _conditional_loss(outputs, others, theta, certain)
  if np.any(np.isnan(loss)) or np.any(np.isnan(mass)):
    # Dropping them would drop their mass: never answer below the pair.
    raise FloatingPointError(
        'internal error: a clone pair has NaN atoms; please report the event '
        'that produced it.')
  finite = np.isfinite(loss)
  infinity_mass += float(np.sum(mass[~finite & (mass > 0)]))
  return privacy_loss.PldAtoms(loss[finite], mass[finite], infinity_mass)


# Terms summed into one grid cell by `cell_merged_clone_atoms` at most: their
# rounding (relative <= count * 2^-53) must stay within connect-the-dots'
# relative safety margin (1e-10, CTD-MERGE-ATOMS).
_MAX_TERMS_PER_CELL = 50_000


def _cell_runs(lo: np.ndarray, hi: np.ndarray, num_outputs: np.ndarray,
               log_odds: np.ndarray, count_of: np.ndarray,
               pmfs: Sequence[np.ndarray], discretization: float):
  """Runs of outputs sharing a grid cell, for components on dense outputs.

  Components j (sorted by their clone count, `count_of[j]` indexing `lo`,
  `hi`, `num_outputs` and the counts' binomial windows `pmfs`) are split
  into runs by one `_cell_segments` call (CTD-MERGE-ATOMS). Returns, per run:
  (its component, its cell, sum of a Bin(m, 1/2)(a), sum of b Bin(m, 1/2)(a),
  outputs summed). A count's components share their outputs, so their run
  sums come from the sums over the union of their runs' starts.
  """
  sizes = (hi - lo + 1)[count_of]
  first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
  starts = _cell_segments(lo[count_of], hi[count_of], num_outputs[count_of],
                          log_odds, first, int(np.sum(sizes)), discretization)
  owner = np.searchsorted(first, starts, side='right') - 1
  local = starts - first[owner]
  # All counts at once, on one flat array of each count's outputs (no loop
  # over counts: k-RR's weak pair has thousands).
  blocks = np.flatnonzero(np.diff(count_of, prepend=-1, append=-1))
  block_count = count_of[blocks[:-1]]
  block_of = np.repeat(np.arange(block_count.size), np.diff(blocks))
  count_size = (hi - lo + 1)[block_count]
  count_first = np.concatenate([[0], np.cumsum(count_size)[:-1]])
  outputs = (np.repeat(lo[block_count] - count_first, count_size)
             + np.arange(int(np.sum(count_size)))).astype(np.float64)
  pmf = np.concatenate([pmfs[index] for index in block_count])
  # The sorted union of each count's run starts cuts its outputs into
  # segments (each count's first output starts one), by a mask (no sort).
  position = count_first[block_of[owner]] + local
  is_start = np.zeros(outputs.size, dtype=bool)
  is_start[position] = True
  union = np.flatnonzero(is_start)
  place = np.cumsum(is_start) - 1
  segment_a = np.add.reduceat(outputs * pmf, union)
  segment_b = np.add.reduceat(
      (np.repeat(num_outputs[block_count], count_size) - outputs) * pmf, union)
  segment_length = np.diff(np.append(union, outputs.size)).astype(float)
  # Each component's runs are consecutive segments of its count: the count's
  # segments are laid out once per component, and each run sums its own.
  count_segment = place[count_first]
  segments = np.diff(np.append(count_segment, union.size))[block_of]
  laid_first = np.concatenate([[0], np.cumsum(segments)[:-1]])
  laid = (np.repeat(count_segment[block_of] - laid_first, segments)
          + np.arange(int(np.sum(segments))))
  flat = laid_first[owner] + place[position] - count_segment[block_of[owner]]
  run_a = np.add.reduceat(segment_a[laid], flat)
  run_b = np.add.reduceat(segment_b[laid], flat)
  lengths = np.add.reduceat(segment_length[laid], flat)
  first_output = (lo[count_of] + 0.0)[owner] + local
  cell = privacy_loss.grid_cell(_conditional_loss(
      first_output, num_outputs[count_of][owner] - first_output,
      log_odds[owner], np.zeros(starts.size, dtype=bool)), discretization)
  return owner, cell, run_a, run_b, lengths


def _dense_counts(distinct: np.ndarray, inverse: np.ndarray, lo: np.ndarray,
                  hi: np.ndarray, log_odds: np.ndarray,
                  discretization: float) -> np.ndarray:
  """Whether each clone count's outputs are dense on the grid (then merged
  by runs of outputs; else a table is cheaper), at its largest log-odds
  (the loss is odd in a - b, largest at a = hi)."""
  largest = np.zeros(distinct.size)
  np.maximum.at(largest, inverse, log_odds)
  top = _conditional_loss(hi.astype(np.float64), lo.astype(np.float64),
                          largest, np.zeros(distinct.size, dtype=bool))
  return 8 * (2 * top / discretization + 2) < hi - lo + 1


def _run_cells(by_runs: np.ndarray, distinct: np.ndarray,
               inverse: np.ndarray, lo: np.ndarray, hi: np.ndarray,
               log_odds: np.ndarray, weights: np.ndarray, q: np.ndarray,
               one_minus_q: np.ndarray, pmfs: Sequence[np.ndarray],
               discretization: float):
  """(cells, P-masses, Q-masses, terms) of the runs of the components
  `by_runs` (on dense outputs, `_cell_runs`)."""
  by_runs = by_runs[np.argsort(inverse[by_runs], kind='stable')]
  owner, cell, run_a, run_b, run_terms = _cell_runs(
      lo, hi, distinct, log_odds[by_runs], inverse[by_runs], pmfs,
      discretization)
  component = by_runs[owner]
  scale = (2.0 / distinct[inverse[component]]) * weights[component]
  return (cell,
          scale * (q[component] * run_a + one_minus_q[component] * run_b),
          scale * (one_minus_q[component] * run_a + q[component] * run_b),
          run_terms)


def _table_cells(num_outputs: int, lo: int, hi: int, pmf: np.ndarray,
                 theta: np.ndarray, q: np.ndarray, one_minus_q: np.ndarray,
                 tilt: np.ndarray, weights: np.ndarray,
                 discretization: float):
  """(cells, P-masses, Q-masses, a bound on the terms per cell) of the
  components of one clone count, as one (outputs x log-odds) table."""
  # Built as (log-odds x outputs), long rows for numpy's inner loops, and
  # handed out in (outputs x log-odds) order: the order `_cell_sums` adds
  # each cell's terms in.
  a = np.arange(lo, hi + 1, dtype=np.float64)
  b = num_outputs - a
  q, one_minus_q = q[:, None], one_minus_q[:, None]
  # In place, three tables in all (fresh ones cost page faults): this table
  # is the pair's main cost.
  spare = q * b
  toward_q = one_minus_q * a
  toward_q += spare
  # The window is symmetric (hi = m - lo, `_hoeffding_window`): output a's
  # q a + (1 - q) b is output m - a's toward_q bit for bit (float sums
  # commute). Another window would make toward_p wrong, so it is refused.
  assert hi == num_outputs - lo, (lo, hi, num_outputs)
  toward_p = toward_q[:, ::-1]
  # L = log(toward_p / toward_q), written so that a = b gives 0 exactly.
  loss = np.multiply(tilt[:, None], a - b, out=spare)
  with np.errstate(divide='ignore'):
    loss /= toward_q
  np.log1p(loss, out=loss)
  np.minimum(loss, theta[:, None], out=loss)
  # Each output table is written transposed, in one pass.
  cells = np.empty((a.size, theta.size), dtype=np.int64)
  privacy_loss.grid_cell(loss, discretization, overwrite=True, out=cells.T)
  scale = np.multiply(weights[:, None], pmf * (2.0 / num_outputs),
                      out=spare)
  p_mass, q_mass = np.empty_like(cells, dtype=np.float64), np.empty_like(
      cells, dtype=np.float64)
  np.multiply(toward_p, scale, out=p_mass.T)
  np.multiply(toward_q, scale, out=q_mass.T)
  # Outputs per cell: the loss's slope in a is smallest at a = b, 4 tanh
  # (theta / 2) / m, so a cell holds at most d m / (4 tanh) + 1 of them.
  terms = float(theta.size) * (
      discretization * num_outputs / (4 * np.tanh(theta.min() / 2)) + 1)
  return cells.ravel(), p_mass.ravel(), q_mass.ravel(), terms


def _cell_sums(cells, p_mass, q_mass, terms
               ) -> Optional[Tuple[np.ndarray, np.ndarray]]:
  """(P-mass, Q-mass) summed per cell; None if a cell would sum more than
  `_MAX_TERMS_PER_CELL` terms of one clone count (its rounding would
  exceed connect-the-dots' margin)."""
  lowest = min(int(cell.min()) for cell in cells)
  span = max(int(cell.max()) for cell in cells) - lowest + 1
  if span <= 4 * sum(cell.size for cell in cells):  # cells as bins, no sort
    labels = np.arange(lowest, lowest + span)
  else:
    labels = np.unique(np.concatenate(cells))
  p_sum, q_sum = np.zeros(labels.size), np.zeros(labels.size)
  for cell, p_part, q_part, count in zip(cells, p_mass, q_mass, terms):
    position = (cell - lowest if labels.size == span
                else np.searchsorted(labels, cell))
    if np.isscalar(count):  # a bound on a table's terms per cell
      # numpy's isscalar TypeGuard leaves out int and float.
      too_many = count > _MAX_TERMS_PER_CELL  # type: ignore[operator]
    else:
      too_many = np.max(np.bincount(position, weights=count)) > (
          _MAX_TERMS_PER_CELL)
    if too_many:
      return None
    p_sum += np.bincount(position, weights=p_part, minlength=labels.size)
    q_sum += np.bincount(position, weights=q_part, minlength=labels.size)
  return p_sum, q_sum


def cell_merged_clone_atoms(clones: np.ndarray, log_odds: np.ndarray,
                            weights: np.ndarray,
                            discretization: Optional[float],
                            log_tail: float = _LOG_TAIL
                            ) -> privacy_loss.PldAtoms:
  """`conditional_clone_atoms` merged per grid cell across components.

  See GRID-PAIRS-FAST.

  Without a `discretization` (or with infinite log-odds), simply
  `conditional_clone_atoms`.

  The same mixture (finite log-odds only), but every atom of every
  component whose loss shares its lower grid point with others is merged
  into one (P-mass and Q-mass summed, CTD-MERGE-ATOMS: the mixture's label is
  revealed, so its atoms are the union of the components' atoms, and
  connect-the-dots on `discretization` is linear in each cell's two sums).
  Components sharing a clone count share their outputs a and binomial weights,
  so the atoms of all their log-odds are built as one (outputs x log-odds)
  table, without per-atom index arrays: the blanket pair (BLANKET-TWO-LEVEL) has
  ~20 log-odds per clone count. Truncation as in `conditional_clone_atoms`.
  """
  if discretization is None or not np.all(np.isfinite(log_odds)):
    return conditional_clone_atoms(clones, log_odds, weights, log_tail,
                                   discretization)
  clones, log_odds, weights, negligible_mass = _kept_components(
      clones, log_odds, weights, log_tail)
  if clones.size == 0:
    return privacy_loss.PldAtoms(np.zeros(0), np.zeros(0), negligible_mass)
  infinity_mass = negligible_mass
  distinct, inverse = np.unique(clones + 1, return_inverse=True)
  lo, hi = _hoeffding_window(distinct, log_tail)
  infinity_mass += float(np.sum(weights[lo[inverse] > 0])) * 4.0 * np.exp(
      log_tail)
  window_pmf = np.exp(_numerics.binomial_windows_log_pmf(
      distinct, 0.5, 0.5, lo, hi))
  window_start = np.concatenate([[0], np.cumsum(hi - lo + 1)[:-1]])
  pmfs = np.split(window_pmf, window_start[1:])
  q, one_minus_q = special.expit(log_odds), special.expit(-log_odds)
  tilt = np.tanh(log_odds / 2)  # q - (1 - q)
  # Each count's components go by runs of outputs or as one table; their
  # terms are summed per cell first, then the counts'.
  dense = _dense_counts(distinct, inverse, lo, hi, log_odds, discretization)
  parts = []
  by_runs = np.flatnonzero(dense[inverse])
  if by_runs.size:
    parts.append(_run_cells(by_runs, distinct, inverse, lo, hi, log_odds,
                            weights, q, one_minus_q, pmfs, discretization))
  for index in np.flatnonzero(~dense):
    mine = inverse == index
    parts.append(_table_cells(
        distinct[index], lo[index], hi[index], pmfs[index], log_odds[mine],
        q[mine], one_minus_q[mine], tilt[mine], weights[mine],
        discretization))
  sums = _cell_sums(*zip(*parts))
  if sums is None:
    # The kept components only: the negligible ones stay at +infinity.
    kept = conditional_clone_atoms(clones, log_odds, weights, log_tail,
                                   discretization)
    return privacy_loss.PldAtoms(kept.losses, kept.masses,
                                 kept.infinity_mass + negligible_mass)
  p_sum, q_sum = sums
  occupied = p_sum > 0
  p_sum, q_sum = p_sum[occupied], q_sum[occupied]
  with np.errstate(divide='ignore'):
    loss = np.log(p_sum) - np.log(q_sum)
  if np.any(np.isnan(loss)):
    raise FloatingPointError(
        'internal error: a clone pair has NaN atoms; please report the event '
        'that produced it.')
  finite = np.isfinite(loss)
  infinity_mass += float(np.sum(p_sum[~finite]))
  return privacy_loss.PldAtoms(loss[finite], p_sum[finite], infinity_mass)


def _with_identical_mass(atoms: privacy_loss.PldAtoms, weight: float,
                         identical: float) -> privacy_loss.PldAtoms:
  """weight * atoms + identical * (loss-0 atom)."""
  return privacy_loss.PldAtoms(np.append(atoms.losses, 0.0),
                            np.append(atoms.masses * weight, identical),
                            atoms.infinity_mass * weight)


def _check_common(num_users, local_epsilon, relative_width):
  num_users = _validation.check_integer('num_users', num_users, 1)
  local_epsilon = _validation.check_local_epsilon(local_epsilon)
  relative_width = _validation.check_real(
      'relative_width', relative_width, 0.0, 0.1, min_inclusive=False)
  return num_users, local_epsilon, relative_width


def clone_probabilities(local_epsilon: float,
                        clone_probability: Optional[float]
                        ) -> Tuple[float, float]:
  """(p, 1 - p): FMT21's e^-eps0 when None, else the validated value.

  See NAMED-CLONE-RATE.
  """
  if clone_probability is None:
    return float(np.exp(-local_epsilon)), float(-np.expm1(-local_epsilon))
  p = _validation.check_real('clone_probability', clone_probability, 0.0, 1.0)
  return p, 1.0 - p


def clone_pair_pld_atoms(num_users: int, local_epsilon: float,
                         relative_width: float = DEFAULT_RELATIVE_WIDTH,
                         clone_probability: Optional[float] = None,
                         log_tail: float = _LOG_TAIL,
                         discretization: Optional[float] = None
                         ) -> privacy_loss.PldAtoms:
  """FMT21-CLONES / KHH-PLD-GENERIC: PLD of the clone pair. [DOM]

  Dominates the shuffle of `num_users` pure `local_epsilon`-LDP reports
  (adaptive randomizers allowed, replace-one), in both orders
  (docs/mathematics.md CLONE-SWAP-SYMMETRY), also under composition. Clone
  counts are grouped (relative width `relative_width`, each group at its
  smallest count, docs/mathematics.md CLONE-MONOTONE); truncated mass goes to
  +infinity (KHH-HOEFFDING, docs/mathematics.md TAILS-TO-INFINITY), so the
  result dominates the exact pair.

  Args:
    num_users: n >= 1.
    local_epsilon: eps0 >= 0.
    relative_width: in (0, 0.1].
    clone_probability: None for FMT21's e^{-eps0}; 2 s(R) for a randomizer
      with clone rate s(R) (docs/mathematics.md NAMED-CLONE-RATE). Any other
      value is for comparisons with published numbers only (FMT23's 2 / (e^eps0
      + 1) is not valid for a generic randomizer, docs/mathematics.md
      FMT23-UNPROVEN).
    log_tail: log of the mass cut from each truncated tail (it goes to
      +infinity); Renyi moments at large orders need it far smaller than the
      default.
    discretization: None, or the spacing of the connect-the-dots grid the
      atoms are meant for (outputs are then merged per grid cell,
      CTD-MERGE-ATOMS).
  """
  num_users, local_epsilon, relative_width = _check_common(
      num_users, local_epsilon, relative_width)
  return clone_pair_pld_atoms_unchecked(
      num_users, local_epsilon, relative_width, clone_probability, log_tail,
      discretization)


def clone_pair_pld_atoms_unchecked(
    num_users: int, local_epsilon: float, relative_width: float,
    clone_probability: Optional[float] = None, log_tail: float = _LOG_TAIL,
    discretization: Optional[float] = None) -> privacy_loss.PldAtoms:
  """`clone_pair_pld_atoms` on checked arguments (`clone_probability` is
  checked here, by `clone_probabilities`)."""
  if local_epsilon == 0:
    return privacy_loss.PldAtoms(np.zeros(1), np.ones(1), 0.0)
  p, one_minus_p = clone_probabilities(local_epsilon, clone_probability)
  starts, weights, lower_tail = _binomial_groups(
      num_users - 1, p, one_minus_p, relative_width, log_tail=log_tail)
  atoms = conditional_clone_atoms(starts, np.full(starts.size, local_epsilon),
                                  weights, log_tail, discretization)
  return privacy_loss.PldAtoms(atoms.losses, atoms.masses,
                            atoms.infinity_mass + lower_tail)


# A clone pair's lower bound needs its bulk only: cut tails of e^-15.
_LOWER_LOG_TAIL = -15.0
_LOWER_GROUPS = 10


def clone_pair_lower_atoms(num_users: int, local_epsilon: float,
                           clone_probability: float,
                           discretization: float) -> privacy_loss.PldAtoms:
  """A LOWER bound on the profile of the clone pair. [LB]

  The clone pair of FMT21-CLONES / NAMED-CLONE-RATE.

  Not a bound on any mechanism: it only tells that the clone pair, computed
  in full, could not beat another candidate (GRID-PAIRS-FAST). Coarse groups of
  clone counts, each at its *largest* count (the profile is non-increasing in
  the count, CLONE-MONOTONE); every truncated mass is dropped, not sent to
  +infinity, and the normalised windows' masses are scaled down by their tails'
  bounds.
  """
  p = min(1.0, clone_probability)
  groups = binomial.label_groups(
      num_users - 1, p, 1.0 - p, DEFAULT_RELATIVE_WIDTH, _LOWER_GROUPS,
      log_tail=_LOWER_LOG_TAIL, upper_log_tail=_LOWER_LOG_TAIL)
  # Label windows' tails, then each conditional pair's Hoeffding window's.
  kept = (1.0 - groups.lower_tail - groups.upper_tail) * (
      1.0 - 2.0 * np.exp(_LOWER_LOG_TAIL))
  atoms = cell_merged_clone_atoms(
      groups.ends, np.full(groups.ends.size, local_epsilon),
      groups.weights * max(0.0, kept), discretization, _LOWER_LOG_TAIL)
  return privacy_loss.PldAtoms(atoms.losses, atoms.masses, 0.0)


def krr_random_answer_probability(local_epsilon: float,
                                  num_categories: int) -> float:
  """gamma of k-RR: e^eps0 = ((1 - gamma) k + gamma) / gamma."""
  return num_categories / (np.exp(local_epsilon) + num_categories - 1)


def krr_strong_pld_atoms(num_users: int, local_epsilon: float,
                         num_categories: int,
                         relative_width: float = DEFAULT_RELATIVE_WIDTH
                         ) -> privacy_loss.PldAtoms:
  """KHH-KRR-STRONG: exact pair for the strong adversary, +inf mass kept.

  [TIGHT for an adversary who also knows which users answered randomly;
  DOM for every weaker one.] Includes the common atom of a random answer by
  the differing user (docs/mathematics.md).
  """
  num_users, local_epsilon, relative_width = _check_common(
      num_users, local_epsilon, relative_width)
  num_categories = _validation.check_integer('num_categories', num_categories,
                                             2)
  gamma = krr_random_answer_probability(local_epsilon, num_categories)
  if gamma >= 1:
    return privacy_loss.PldAtoms(np.zeros(1), np.ones(1), 0.0)
  p = 2 * gamma / num_categories
  starts, weights, lower_tail = _binomial_groups(num_users - 1, p, 1 - p,
                                                 relative_width)
  atoms = conditional_clone_atoms(starts, np.full(starts.size, np.inf),
                                  weights)
  atoms = privacy_loss.PldAtoms(atoms.losses, atoms.masses,
                             atoms.infinity_mass + lower_tail)
  return _with_identical_mass(atoms, 1 - gamma, gamma)


def krr_weak_pld_atoms(num_users: int, local_epsilon: float,
                       num_categories: int,
                       relative_width: float = DEFAULT_RELATIVE_WIDTH,
                       discretization: Optional[float] = None
                       ) -> privacy_loss.PldAtoms:
  """KHH-KRR-WEAK: pair for the weak adversary, as a mixture of clone pairs.

  [DOM for an adversary who knows the other users' data and which of them
  answered randomly, but not whether the differing user did; TIGHT for it up
  to the grouping of labels.] Not O(n^3): labels (y, s) are grouped in both
  coordinates (smallest s, largest theta per group), which can only raise
  the profile; all truncated mass goes to +infinity. With a
  `discretization`, atoms sharing a grid cell are merged (CTD-MERGE-ATOMS,
  GRID-PAIRS-FAST).
  """
  num_users, local_epsilon, relative_width = _check_common(
      num_users, local_epsilon, relative_width)
  k = _validation.check_integer('num_categories', num_categories, 2)
  gamma = krr_random_answer_probability(local_epsilon, k)
  if gamma >= 1:
    return privacy_loss.PldAtoms(np.zeros(1), np.ones(1), 0.0)
  pi = 2.0 / k
  y_starts, y_weights, y_lower_tail = _binomial_groups(
      num_users - 1, gamma, 1 - gamma, relative_width, _MAX_WEAK_GROUPS)
  clones: Union[List[np.ndarray], np.ndarray]
  log_odds: Union[List[np.ndarray], np.ndarray]
  weights: Union[List[np.ndarray], np.ndarray]
  clones, log_odds, weights = [], [], []
  identical, missing = 0.0, y_lower_tail
  for y, y_weight in zip(y_starts, y_weights):
    if pi < 1:
      s_lo = max(1, binomial.chernoff_window(y, pi, 1 - pi)[0])
      s_hi = binomial.chernoff_window(y + 1, pi, 1 - pi)[1]
    else:  # k = 2: every message is one of the two values, s = y + 1
      s_lo = s_hi = y + 1
    s_starts = binomial.group_starts(s_lo, s_hi, relative_width,
                                     _MAX_WEAK_GROUPS)
    s_ends = np.append(s_starts[1:] - 1, s_hi)
    s_mass = (gamma * binomial.binomial_interval_mass(y + 1, pi, s_starts,
                                                      s_ends)
              + (1 - gamma) * binomial.binomial_interval_mass(
                  y, pi, s_starts - 1, s_ends - 1))
    no_value = (gamma * (1 - pi) ** (y + 1)) if pi < 1 else 0.0
    identical += y_weight * no_value
    # The tails of s and the rounding of every CDF difference: whatever the
    # groups do not hold goes to +infinity.
    missing += y_weight * max(
        0.0, 1.0 - no_value - float(np.sum(s_mass))
        + binomial.CDF_ERROR * (s_mass.size + 1))
    clones.append(s_starts - 1)
    log_odds.append(np.log1p((1 - gamma) * k * s_ends / (gamma * (y + 1))))
    weights.append(y_weight * s_mass)
  clones, log_odds, weights = (np.concatenate(clones),
                               np.concatenate(log_odds),
                               np.concatenate(weights))
  atoms = cell_merged_clone_atoms(clones, log_odds, weights, discretization)
  return _with_identical_mass(
      privacy_loss.PldAtoms(atoms.losses, atoms.masses,
                         atoms.infinity_mass + missing), 1.0, identical)
