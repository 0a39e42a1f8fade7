"""Grid PMFs of pairs and their privacy profiles (connect-the-dots).

IDs: TAILS-TO-INFINITY, KHH-SUBSAMPLED

A dominating pair (P, Q) is represented by its privacy loss distribution:
atoms (loss L = log P/Q, P-mass) plus a mass at +infinity (TAILS-TO-INFINITY).
Every pair built by this library is swap-symmetric (docs/mathematics.md
CLONE-SWAP-SYMMETRY) or is made symmetric by taking the larger of both orders,
so one PLD serves both orders of the replace-one relation (`symmetric=True` in
dp_accounting).

Discretization is pessimistic connect-the-dots (Doroshenko et al. 2022,
Algorithm 1, as in `dp_accounting.pld.pld_pmf`): the discretized PLD lives on
the grid {i d} and its privacy profile delta(eps) equals the exact profile at
every grid point and interpolates it linearly in e^eps in between. A privacy
profile is convex in e^eps, so the chord lies above it: the result dominates
the pair for every eps, hence also under composition.

For a finite set of atoms this is done exactly, atom by atom: an atom (L, m)
with i d <= L <= (i + 1) d becomes masses m - beta at i d and beta at (i + 1) d,
beta = m (1 - e^{i d - L}) / (1 - e^{-d}), which keeps the total mass and
E[e^{-L}] and reproduces the atom's profile at both grid points. (Tests check
this against `pld_pmf.create_pmf_pessimistic_connect_dots`.)

Several candidate pairs for one mechanism (each a valid bound) are combined
through their profiles on a common grid: the pointwise minimum is replaced by
its lower convex envelope in e^eps (still above the true, convex profile), and
for the two orders of a non-symmetric pair the pointwise maximum is used.

Composing grid PMFs and certifying the result is `pld.composition`'s job.
"""

from typing import List, Sequence, Tuple

import attr
from dp_accounting.pld import pld_pmf
import numpy as np
from scipy import signal

from shuffle_accountants import _numerics
from shuffle_accountants import _upstream
from shuffle_accountants.pairs.privacy_loss import PldAtoms
from shuffle_accountants.pairs.privacy_loss import grid_cell

__all__ = [
    'MAX_PMF_BUCKETS', 'GridPmf', 'from_dense', 'fit_to_grid',
    'connect_the_dots', 'split_preserving_mean', 'grid_profile',
    'finite_profile', 'pmf_profile', 'profile_to_pmf', 'lower_convex_envelope',
    'smallest_profile', 'largest_profile',
]


# No PMF of one round spans more grid points than this (8 MB): on a grid too
# fine for a pair's losses, `fit_to_grid` moves the excess soundly
# (TAILS-TO-INFINITY).
MAX_PMF_BUCKETS = 1_000_000


@attr.s(frozen=True, auto_attribs=True, eq=False)
class GridPmf:
  """A PLD on the grid {index * discretization}.

  Attributes:
    discretization: grid spacing d > 0.
    lower_index: grid index of probs[0].
    probs: masses on consecutive grid points.
    infinity_mass: mass at +infinity.
  """
  discretization: float
  lower_index: int
  probs: np.ndarray
  infinity_mass: float

  @property
  def upper_index(self) -> int:
    return self.lower_index + self.probs.size - 1


def from_dense(pmf: pld_pmf.DensePLDPmf) -> GridPmf:
  """The fields of a dp_accounting dense PMF (0.6 has no public accessor)."""
  discretization, lower_index, probs, infinity_mass = (
      _upstream.dense_pmf_fields(pmf))
  return GridPmf(discretization, lower_index,
                 np.asarray(probs, dtype=np.float64), infinity_mass)


def _grid_bincount(index: np.ndarray, weights: np.ndarray, lower: int,
                   size: int) -> np.ndarray:
  return np.bincount(index - lower, weights=weights, minlength=size)


def fit_to_grid(atoms: PldAtoms, discretization: float) -> PldAtoms:
  """Atoms whose losses span at most MAX_PMF_BUCKETS grid points. [DOM]

  Keeps the top of the loss range: losses more than the span below the
  largest are raised to the bottom of the span (a larger loss only raises
  every hockey-stick divergence, in both uses of a symmetric PLD), and
  losses above `MAX_PMF_BUCKETS / 2` grid points go to +infinity
  (TAILS-TO-INFINITY). Leaves atoms that already fit unchanged.
  """
  keep = atoms.masses > 0
  losses, masses = atoms.losses[keep], atoms.masses[keep]
  half = (MAX_PMF_BUCKETS // 2 - 2) * discretization
  if losses.size == 0 or (np.max(np.abs(losses)) <= half):
    return atoms
  above = losses > half
  infinity_mass = atoms.infinity_mass + float(np.sum(masses[above]))
  losses, masses = losses[~above], masses[~above]
  if losses.size:
    losses = np.maximum(losses, np.max(losses) - 2 * half)
  return PldAtoms(losses, masses, infinity_mass)


def connect_the_dots(atoms: PldAtoms, discretization: float) -> GridPmf:
  """Pessimistic connect-the-dots discretization of finite atoms (exact split).

  The masses are inflated by `_numerics.RELATIVE_SAFETY_MARGIN` so that the
  floating point error of the split can only raise the profile.
  """
  atoms = fit_to_grid(atoms, discretization)
  keep = atoms.masses > 0
  losses, masses = atoms.losses[keep], atoms.masses[keep]
  if losses.size == 0:
    return GridPmf(discretization, 0, np.zeros(1), atoms.infinity_mass)
  lower = grid_cell(losses, discretization)
  beta = masses * (-np.expm1(lower * discretization - losses)
                   / -np.expm1(-discretization))
  beta = np.clip(beta, 0.0, masses)
  first = int(lower.min())
  size = int(lower.max()) + 2 - first
  probs = (_grid_bincount(lower, masses - beta, first, size)
           + _grid_bincount(lower + 1, beta, first, size))
  margin = 1.0 + _numerics.RELATIVE_SAFETY_MARGIN
  return GridPmf(discretization, first, probs * margin,
                 atoms.infinity_mass * margin)


def split_preserving_mean(atoms: PldAtoms, discretization: float) -> GridPmf:
  """Atoms split between neighbouring grid points keeping mass and mean loss.

  At every grid point its profile is at most the atoms' (1 - e^-x is
  concave), so it is an optimistic *estimate*; it is never used as a bound.
  """
  atoms = fit_to_grid(atoms, discretization)
  keep = atoms.masses > 0
  scaled = atoms.losses[keep] / discretization
  if scaled.size == 0:
    return GridPmf(discretization, 0, np.zeros(1), atoms.infinity_mass)
  lower = np.floor(scaled).astype(np.int64)
  upper_share = atoms.masses[keep] * (scaled - lower)
  first = int(lower.min())
  size = int(lower.max()) + 2 - first
  probs = (_grid_bincount(lower, atoms.masses[keep] - upper_share, first, size)
           + _grid_bincount(lower + 1, upper_share, first, size))
  return GridPmf(discretization, first, probs, atoms.infinity_mass)


def grid_profile(pmf: GridPmf, lower_index: int, upper_index: int
                 ) -> np.ndarray:
  """delta(i d) of a grid PMF for i in [lower_index, upper_index].

  Uses delta_{i-1} - delta_i = (1 - e^{-d}) U_i with
  U_i = sum_{k >= i} m_k e^{-(k - i) d}, a sum of non-negative terms, so the
  result has full relative precision (no cancellation).
  """
  d = pmf.discretization
  if lower_index > pmf.lower_index or upper_index < pmf.upper_index:
    raise ValueError('the profile range must cover the PMF support')
  probs = np.zeros(upper_index - lower_index + 1)
  start = pmf.lower_index - lower_index
  probs[start:start + pmf.probs.size] = pmf.probs
  return pmf.infinity_mass + finite_profile(probs, d)[0]


def finite_profile(probs: np.ndarray, discretization: float
                    ) -> Tuple[np.ndarray, np.ndarray]:
  """(sum_{j > i} m_j (1 - e^{(i - j) d}), U_i) for every grid point i."""
  tail, decaying, _ = profile_below(probs, discretization, (0.0, 0.0))
  return tail, decaying


def profile_below(probs: np.ndarray, discretization: float,
                  above: Tuple[float, float]
                  ) -> Tuple[np.ndarray, np.ndarray, Tuple[float, float]]:
  """`finite_profile` of the grid points just below others already summed.

  `above` is (U, tail sum) carried from the grid point above the last of
  `probs` ((0, 0) at the top); returns the tail sums, U, and the pair to
  carry further down. Both sums run from the top, one term at a time, and
  the carried values enter as their first terms, so a profile read from
  the top down in pieces is bit for bit the whole one's (the recursive
  filter's state after an input y is 0 y - a_1 y, as after the input U).
  """
  decaying_above, tail_above = above
  # U_i = m_i + e^{-d} U_{i+1}: a first-order recursive filter run backwards.
  decaying = signal.lfilter([1.0], [1.0, -np.exp(-discretization)],
                            np.concatenate([[decaying_above],
                                            probs[::-1]]))[:0:-1]
  steps = -np.expm1(-discretization) * decaying
  # delta_i - inf = sum_{j > i} (1 - e^{-d}) U_j
  sums = np.cumsum(np.concatenate([[tail_above], steps[::-1]]))
  carried = (float(decaying[0]), float(sums[-1])) if probs.size else above
  return sums[-2::-1], decaying, carried


def pmf_profile(pmf: GridPmf):
  """The exact profile x -> delta(x) of a grid PMF, at any real x. [EXACT]

  Between grid points it is the chord in e^x of the grid values (on
  (L_{i-1}, L_i], delta(x) = delta(L_i) + U_i (1 - e^{x - L_i}), with
  U_i = sum_{j >= i} m_j e^{L_i - L_j}; sums of non-negative terms). For a
  connect-the-dots PMF of a pair this is an upper bound on the pair's
  profile everywhere (the pair's profile is convex in e^x).
  """
  d = pmf.discretization
  tail, decaying = finite_profile(np.asarray(pmf.probs, np.float64), d)
  grid_deltas = pmf.infinity_mass + tail

  def profile(epsilons: np.ndarray) -> np.ndarray:
    epsilons = np.asarray(epsilons, dtype=np.float64)
    # The first grid point at or above each epsilon.
    index = np.ceil(epsilons / d - pmf.lower_index - 1e-9).astype(np.int64)
    inside = index < pmf.probs.size
    # np.clip's checks cost more than the two comparisons (daily check-in
    # rounds evaluate ~30000 such profiles on short grids).
    index = np.minimum(np.maximum(index, 0), pmf.probs.size - 1)
    losses = (pmf.lower_index + index) * d
    with np.errstate(over='ignore'):
      values = grid_deltas[index] + decaying[index] * np.maximum(
          -np.expm1(epsilons - losses), 0.0)
    return np.minimum(np.where(inside, values, pmf.infinity_mass), 1.0)

  return profile


def profile_to_pmf(discretization: float, lower_index: int,
                    deltas: np.ndarray) -> GridPmf:
  """Connect-the-dots PMF with profile >= `deltas` at every grid point.

  dp_accounting's construction takes second differences of the profile,
  which loses absolute precision; the profile of its result is therefore
  re-evaluated exactly and any shortfall is added to the +infinity mass
  (which raises the profile uniformly).
  """
  deltas = np.minimum(deltas, 1.0)  # a profile never exceeds 1
  pmf = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(
      discretization, lower_index, lower_index + deltas.size - 1, deltas)
  dense = from_dense(pmf.to_dense_pmf())
  probs = np.zeros(deltas.size)
  start = dense.lower_index - lower_index
  probs[start:start + dense.probs.size] = dense.probs
  grid = GridPmf(discretization, lower_index, probs, dense.infinity_mass)
  achieved = grid_profile(grid, lower_index, grid.upper_index)
  shortfall = float(np.max(deltas - achieved, initial=0.0))
  margin = 1.0 + _numerics.RELATIVE_SAFETY_MARGIN
  return GridPmf(discretization, lower_index, probs * margin,
                 (grid.infinity_mass + shortfall) * margin)


def _common_range(pmfs: Sequence[GridPmf]) -> Tuple[int, int]:
  return (min(p.lower_index for p in pmfs), max(p.upper_index for p in pmfs))


def lower_convex_envelope(x: np.ndarray, y: np.ndarray) -> np.ndarray:
  """Largest convex function of x (x increasing) below the points (x, y),
  evaluated at x."""
  # Python floats: the same double arithmetic as numpy's scalars, 3x faster.
  xs, ys = x.tolist(), y.tolist()
  hull: List[int] = []
  for i, (x_i, y_i) in enumerate(zip(xs, ys)):
    while len(hull) >= 2:
      a, b = hull[-2], hull[-1]
      # Drop b if it lies on or above the segment from a to i.
      if ((ys[b] - ys[a]) * (x_i - xs[a]) >= (y_i - ys[a]) * (xs[b] - xs[a])):
        hull.pop()
      else:
        break
    hull.append(i)
  indices = np.array(hull)
  return np.interp(x, x[indices], y[indices])


def smallest_profile(pmfs: Sequence[GridPmf]) -> GridPmf:
  """One PMF whose profile is below each candidate's yet above the truth.

  Each candidate must dominate the same mechanism. The pointwise minimum of
  their profiles is an upper bound on the true profile; its lower convex
  envelope in e^eps still is (the true profile is convex in e^eps), and it
  is a valid profile, so connect-the-dots turns it into a PMF.
  """
  if len(pmfs) == 1:
    return pmfs[0]
  lower, upper = _common_range(pmfs)
  profiles = np.stack([grid_profile(p, lower, upper) for p in pmfs])
  minimum = profiles.min(axis=0)
  d = pmfs[0].discretization
  # x = e^{eps - eps_max} keeps the abscissae in (0, 1].
  x = np.exp((np.arange(lower, upper + 1) - upper) * d)
  envelope = lower_convex_envelope(x, minimum)
  return profile_to_pmf(d, lower, np.maximum(envelope, 0.0))


def largest_profile(pmfs: Sequence[GridPmf]) -> GridPmf:
  """One PMF whose profile is at least every candidate's (max is convex)."""
  lower, upper = _common_range(pmfs)
  profiles = np.stack([grid_profile(p, lower, upper) for p in pmfs])
  return profile_to_pmf(pmfs[0].discretization, lower, profiles.max(axis=0))


