"""Discrete PLDs and their pessimistic discretization (connect-the-dots, D9, KHH-SUBSAMPLED orders).

A dominating pair (P, Q) is represented by its privacy loss distribution:
atoms (loss L = log P/Q, P-mass) plus a mass at +infinity (D9). Every
pair built by this library is swap-symmetric (docs/mathematics.md D3) or is
made symmetric by taking the larger of both orders, so one PLD serves both
orders of the replace-one relation (`symmetric=True` in dp_accounting).

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
"""

from typing import Dict, Optional, Sequence, Tuple
import weakref

import attr
from dp_accounting.pld import common
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution
import numpy as np
from scipy import fft
from scipy import signal

from shuffle_accountants import _numerics
from shuffle_accountants.pairs.privacy_loss import PldAtoms
from shuffle_accountants.pairs.privacy_loss import grid_cell
from shuffle_accountants.pld import roundoff


# No PMF of one round spans more grid points than this (8 MB): on a grid too
# fine for a pair's losses, `fit_to_grid` moves the excess soundly (D9).
MAX_PMF_BUCKETS = 1_000_000
# Largest support a self-composition may reach (64 MB of complex FFT data).
MAX_COMPOSED_BUCKETS = 4_000_000
# dp_accounting's truncation of each composition's tails (moved to +infinity).
_TAIL_MASS_TRUNCATION = 1e-15


# The exact grid PMFs (no FFT has touched them) each PLD built by
# `to_privacy_loss_distribution` or `compose_all` composes: what
# `DirectProfile` certifies round-off against (D24).
_ROUNDS: 'weakref.WeakKeyDictionary' = weakref.WeakKeyDictionary()


class GridTooFineError(ValueError):
  """The composition would need more grid points than the resource budget."""


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


def _grid_bincount(index: np.ndarray, weights: np.ndarray, lower: int,
                   size: int) -> np.ndarray:
  return np.bincount(index - lower, weights=weights, minlength=size)


def fit_to_grid(atoms: PldAtoms, discretization: float) -> PldAtoms:
  """Atoms whose losses span at most MAX_PMF_BUCKETS grid points. [DOM]

  Keeps the top of the loss range: losses more than the span below the
  largest are raised to the bottom of the span (a larger loss only raises
  every hockey-stick divergence, in both uses of a symmetric PLD), and
  losses above `MAX_PMF_BUCKETS / 2` grid points go to +infinity (D9).
  Leaves atoms that already fit unchanged.
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
  return pmf.infinity_mass + _finite_profile(probs, d)[0]


def _finite_profile(probs: np.ndarray, discretization: float
                    ) -> Tuple[np.ndarray, np.ndarray]:
  """(sum_{j > i} m_j (1 - e^{(i - j) d}), U_i) for every grid point i."""
  # U_i = m_i + e^{-d} U_{i+1}: a first-order recursive filter run backwards.
  decaying = signal.lfilter([1.0], [1.0, -np.exp(-discretization)],
                            probs[::-1])[::-1]
  steps = -np.expm1(-discretization) * decaying
  # delta_i - inf = sum_{j > i} (1 - e^{-d}) U_j
  tail = np.concatenate([np.cumsum(steps[::-1])[::-1][1:], [0.0]])
  return tail, decaying


def pmf_profile(pmf: GridPmf):
  """The exact profile x -> delta(x) of a grid PMF, at any real x. [EXACT]

  Between grid points it is the chord in e^x of the grid values (on
  (L_{i-1}, L_i], delta(x) = delta(L_i) + U_i (1 - e^{x - L_i}), with
  U_i = sum_{j >= i} m_j e^{L_i - L_j}; sums of non-negative terms). For a
  connect-the-dots PMF of a pair this is an upper bound on the pair's
  profile everywhere (the pair's profile is convex in e^x).
  """
  d = pmf.discretization
  tail, decaying = _finite_profile(np.asarray(pmf.probs, np.float64), d)
  grid_deltas = pmf.infinity_mass + tail

  def profile(epsilons: np.ndarray) -> np.ndarray:
    epsilons = np.asarray(epsilons, dtype=np.float64)
    # The first grid point at or above each epsilon.
    index = np.ceil(epsilons / d - pmf.lower_index - 1e-9).astype(np.int64)
    inside = index < pmf.probs.size
    index = np.clip(index, 0, pmf.probs.size - 1)
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
  dense = pmf.to_dense_pmf()
  # pylint: disable=protected-access
  probs = np.zeros(deltas.size)
  start = dense._lower_loss - lower_index
  probs[start:start + dense._probs.size] = dense._probs
  infinity_mass = float(dense._infinity_mass)
  # pylint: enable=protected-access
  grid = GridPmf(discretization, lower_index, probs, infinity_mass)
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
  hull = []
  for i in range(x.size):
    while len(hull) >= 2:
      a, b = hull[-2], hull[-1]
      # Drop b if it lies on or above the segment from a to i.
      if ((y[b] - y[a]) * (x[i] - x[a]) >= (y[i] - y[a]) * (x[b] - x[a])):
        hull.pop()
      else:
        break
    hull.append(i)
  hull = np.array(hull)
  return np.interp(x, x[hull], y[hull])


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


def to_privacy_loss_distribution(
    pmf: GridPmf) -> privacy_loss_distribution.PrivacyLossDistribution:
  """Wraps a grid PMF as a symmetric, pessimistic dp_accounting PLD."""
  if not (np.all(np.isfinite(pmf.probs)) and np.isfinite(pmf.infinity_mass)):
    raise FloatingPointError(
        'internal error: a privacy loss PMF has non-finite masses; please '
        'report the event that produced it.')
  dense = pld_pmf.DensePLDPmf(pmf.discretization, pmf.lower_index,
                              np.asarray(pmf.probs, dtype=np.float64),
                              float(pmf.infinity_mass), True)
  pld = privacy_loss_distribution.PrivacyLossDistribution(dense)
  _ROUNDS[pld] = roundoff.Rounds(pmf.discretization, [(
      pmf.lower_index, pmf.probs, float(pmf.infinity_mass), 1)])
  return pld


def exact_input(pld: privacy_loss_distribution.PrivacyLossDistribution
                ) -> privacy_loss_distribution.PrivacyLossDistribution:
  """A symmetric PLD built without FFT (dp_accounting's Gaussian or
  randomized response), dense and recorded as an exact input of the
  certificate (D24)."""
  dense = _dense(pld)
  # pylint: disable=protected-access
  return to_privacy_loss_distribution(GridPmf(
      dense._discretization, dense._lower_loss,
      np.asarray(dense._probs, dtype=np.float64), dense._infinity_mass))
  # pylint: enable=protected-access


def self_compose(pld: privacy_loss_distribution.PrivacyLossDistribution,
                 count: int) -> privacy_loss_distribution.PrivacyLossDistribution:
  """`count`-fold composition within MAX_COMPOSED_BUCKETS. [DOM]

  dp_accounting sizes one FFT from Chernoff bounds at a few fixed orders,
  which for large counts ask for billions of points; repeated squaring with
  per-step tail truncation (mass to +infinity, as dp_accounting does) needs
  only the true support. A round whose finite mass vanishes after `count`
  compositions is composed as all +infinity (delta = 1 below: exact).
  """
  # pylint: disable=protected-access
  probs = pld._pmf_remove._probs
  finite = float(np.sum(probs))
  if finite <= 0 or count * np.log(finite) < np.log(_TAIL_MASS_TRUNCATION):
    return all_at_infinity(pld._pmf_remove._discretization)
  lower, upper = common.compute_self_convolve_bounds(probs, count,
                                                     _TAIL_MASS_TRUNCATION)
  if upper - lower < MAX_COMPOSED_BUCKETS:
    # A PMF of mass slightly above 1 (`profile_to_pmf`) overflows when raised
    # to a huge count; `compose_all` turns that into all +infinity, quietly.
    with np.errstate(over='ignore', invalid='ignore'):
      return pld.self_compose(count, _TAIL_MASS_TRUNCATION)
  result, power = None, pld
  while count:
    if power._pmf_remove._probs.size > MAX_COMPOSED_BUCKETS:
      raise GridTooFineError(
          f'the composed privacy loss distribution needs more than '
          f'{MAX_COMPOSED_BUCKETS} grid points at value_discretization_'
          f'interval={pld._pmf_remove._discretization:.3g}; use a coarser '
          'grid or the automatic one (value_discretization_interval=None).')
    if count & 1:
      result = power if result is None else compose(result, power)
    count >>= 1
    if count:
      power = compose(power, power)
  # pylint: enable=protected-access
  return result


def all_at_infinity(discretization: float
                    ) -> privacy_loss_distribution.PrivacyLossDistribution:
  """The PLD with every mass at +infinity: delta = 1 at every epsilon."""
  return privacy_loss_distribution.PrivacyLossDistribution(
      pld_pmf.DensePLDPmf(discretization, 0, np.zeros(1), 1.0, True))


def compose(first: privacy_loss_distribution.PrivacyLossDistribution,
            second: privacy_loss_distribution.PrivacyLossDistribution
            ) -> privacy_loss_distribution.PrivacyLossDistribution:
  """first.compose(second), or all at +infinity when no finite mass is left.

  dp_accounting's tail truncation fails on a PMF whose finite mass is below
  its truncation threshold; such a composition has delta = 1 below that
  mass's epsilon anyway, so +infinity is the sound (and nearly exact) answer.
  """
  # pylint: disable=protected-access
  # A PMF of mass slightly above 1 (`profile_to_pmf`) squared again and
  # again in `self_compose` overflows; that is all at +infinity, quietly.
  with np.errstate(over='ignore', invalid='ignore'):
    finite = ((1 - first._pmf_remove._infinity_mass)
              * (1 - second._pmf_remove._infinity_mass))
    if not finite > 10 * _TAIL_MASS_TRUNCATION or not np.isfinite(finite):
      return all_at_infinity(first._pmf_remove._discretization)
    # pylint: enable=protected-access
    try:
      composed = first.compose(second, _TAIL_MASS_TRUNCATION)
    except IndexError:
      # Its truncation empties a PMF whose finite masses underflowed
      # (CheckInEvent(100024, 1e-12, local_epsilon=2.3e-5) x 1e9): as above.
      return all_at_infinity(first._pmf_remove._discretization)  # pylint: disable=protected-access
  return _finite_or_infinity(composed)


def _dense(pld: privacy_loss_distribution.PrivacyLossDistribution):
  return pld._pmf_remove.to_dense_pmf()  # pylint: disable=protected-access


def _is_identity(pld) -> bool:
  """Whether a PLD is the identity (all mass at loss 0): no FFT needed."""
  pmf = _dense(pld)
  # pylint: disable=protected-access
  return (pmf._probs.size == 1 and pmf._lower_loss == 0
          and pmf._infinity_mass == 0 and pmf._probs[0] == 1)


def compose_all(
    plds: Sequence[Tuple[privacy_loss_distribution.PrivacyLossDistribution,
                         int]]
) -> privacy_loss_distribution.PrivacyLossDistribution:
  """The composition of PLDs on one grid, each `count` times. [DOM]

  A ledger of many distinct rounds composed pairwise pays dp_accounting's
  per-composition overhead (tail bounds at 40 orders, ~15 ms) once per
  round; here each PMF is raised to its count in the Fourier domain and the
  results are convolved in a balanced tree (`_convolve_batch`), in batches
  whose summed support stays within MAX_COMPOSED_BUCKETS / 2, and only the
  batches are composed pairwise (`compose`). A PLD whose count
  alone exceeds that is self-composed first (`self_compose`). The
  convolution is exact up to FFT round-off, which `DirectProfile` treats as
  for any composition; the +infinity mass is 1 - prod (1 - m_i)^count_i,
  rounded up.
  """
  budget = MAX_COMPOSED_BUCKETS // 2
  batches, batch, support = [], [], 0
  for pld, count in plds:
    if count == 0 or _is_identity(pld):
      continue
    size = _dense(pld)._probs.size  # pylint: disable=protected-access
    if count > 1 and count * (size - 1) + 1 > budget:
      pld, count = self_compose(pld, count), 1
      size = _dense(pld)._probs.size  # pylint: disable=protected-access
    if batch and support + count * (size - 1) + 1 > budget:
      batches.append(batch)
      batch, support = [], 0
    batch.append((pld, count))
    support += count * (size - 1) + 1
  if not batch:  # nothing but identities
    return privacy_loss_distribution.PrivacyLossDistribution(
        pld_pmf.DensePLDPmf(_dense(plds[0][0])._discretization, 0,  # pylint: disable=protected-access
                            np.ones(1), 0.0, True))
  batches.append(batch)
  result = None
  for batch in batches:
    composed = _finite_or_infinity(
        batch[0][0] if len(batch) == 1 and batch[0][1] == 1
        else _convolve_batch(batch))
    result = composed if result is None else compose(result, composed)
  inputs = roundoff.combine([_rounds_of(pld, count) for pld, count in plds
                             if count and not _is_identity(pld)])
  if inputs is not None:
    _ROUNDS[result] = inputs
  return result


def _rounds_of(pld, count: int) -> Optional[roundoff.Rounds]:
  """The exact rounds `pld` composes, each `count` times more (or None)."""
  rounds = _ROUNDS.get(pld)
  if rounds is None or not pld._symmetric:  # pylint: disable=protected-access
    return None
  return roundoff.Rounds(rounds.discretization, [
      (lower, probs, infinity, inner * count)
      for lower, probs, infinity, inner in rounds.rounds])


def _finite_or_infinity(pld: privacy_loss_distribution.PrivacyLossDistribution
                        ) -> privacy_loss_distribution.PrivacyLossDistribution:
  """`pld`, or all at +infinity (delta = 1: sound) if its masses overflowed.

  A pessimistic PMF may hold slightly more than mass 1 (`profile_to_pmf`);
  composed 10^7 times its FFT overflows. The accountant then answers with
  the RDP route.
  """
  pmf = _dense(pld)
  # pylint: disable=protected-access
  if np.all(np.isfinite(pmf._probs)) and np.isfinite(pmf._infinity_mass):
    return pld
  return all_at_infinity(pmf._discretization)


def _convolve_batch(batch) -> privacy_loss_distribution.PrivacyLossDistribution:
  """One PLD for (PLD, count) pairs: each PMF to its power in the Fourier
  domain, then pairwise products in a balanced tree (each FFT only as long
  as its two factors' supports: O(L log L log k), not O(k L log L))."""
  # pylint: disable=protected-access
  pmfs = [(_dense(pld), count) for pld, count in batch]
  discretization = pmfs[0][0]._discretization
  powers = [_power(np.asarray(pmf._probs, dtype=np.float64), count)
            for pmf, count in pmfs]
  while len(powers) > 1:
    powers = [_product(powers[i], powers[i + 1]) if i + 1 < len(powers)
              else powers[i] for i in range(0, len(powers), 2)]
  log_finite = sum(count * np.log1p(-min(float(pmf._infinity_mass), 1.0))
                   for pmf, count in pmfs)
  infinity_mass = min(1.0, -np.expm1(log_finite)
                      * (1 + _numerics.RELATIVE_SAFETY_MARGIN))
  lower = sum(count * pmf._lower_loss for pmf, count in pmfs)
  return privacy_loss_distribution.PrivacyLossDistribution(
      pld_pmf.DensePLDPmf(discretization, lower, powers[0], infinity_mass,
                          True))


def _power(probs: np.ndarray, count: int) -> np.ndarray:
  """The `count`-fold convolution of a PMF with itself."""
  if count == 1:
    return probs
  size = count * (probs.size - 1) + 1
  length = fft.next_fast_len(size, real=True)
  return fft.irfft(fft.rfft(probs, length)**count, length)[:size]


def _product(first: np.ndarray, second: np.ndarray) -> np.ndarray:
  """The convolution of two PMFs."""
  size = first.size + second.size - 1
  length = fft.next_fast_len(size, real=True)
  return fft.irfft(fft.rfft(first, length) * fft.rfft(second, length),
                   length)[:size]


class _PmfProfile:
  """delta(eps) of one grid PMF as a sum of non-negative terms, and its
  inverse in closed form (see `DirectProfile`)."""

  def __init__(self, discretization: float, lower_index: int,
               probs: np.ndarray, infinity_mass: float):
    probs = np.asarray(probs, dtype=np.float64)
    self._probs = np.maximum(probs, 0.0)
    self._discretization = discretization
    self._losses = (lower_index + np.arange(probs.size)) * discretization
    self._infinity = float(infinity_mass)
    self._grid = None

  @classmethod
  def estimated(cls, pmf: pld_pmf.DensePLDPmf, allowance: bool = True
                ) -> '_PmfProfile':
    """Of an FFT result, negative masses zeroed; with `allowance`, W18's
    round-off *estimate*: twice their total added at +infinity."""
    # pylint: disable=protected-access
    probs = np.asarray(pmf._probs, dtype=np.float64)
    negative = -np.sum(np.minimum(probs, 0.0)) if allowance else 0.0
    return cls(pmf._discretization, pmf._lower_loss, probs,
               pmf._infinity_mass + 2 * negative)
    # pylint: enable=protected-access

  def delta(self, epsilon: float) -> float:
    start = int(np.searchsorted(self._losses, epsilon, side='right'))
    terms = self._probs[start:] * -np.expm1(epsilon - self._losses[start:])
    return float(min(1.0, self._infinity + np.sum(terms)))

  def epsilon(self, delta: float) -> float:
    if delta < self._infinity:
      return np.inf
    if not self._probs.size:
      return 0.0
    if self._grid is None:
      tail, decaying = _finite_profile(self._probs, self._discretization)
      self._grid = (self._infinity + tail, decaying)
    grid_deltas, decaying = self._grid
    # delta(L_i) is non-increasing and delta(L_last) = the +infinity mass.
    index = int(np.argmax(grid_deltas <= delta))
    # A subnormal decaying sum overflows the ratio: past 1 it is cut to 1.
    with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
      shortfall = (delta - grid_deltas[index]) / decaying[index]
      solved = self._losses[index] + np.log1p(-min(shortfall, 1.0))
    if not solved == solved:  # 0 / 0: no finite mass at or above L_index
      solved = -np.inf
    # Rounded up (the sums carry relative errors of ~1e-13), but never past
    # the grid point, where delta <= target holds by the sums themselves.
    rounded = (min(self._losses[index],
                   solved + 1e-12 * max(1.0, abs(solved)))
               if np.isfinite(solved) else solved)
    if index > 0:
      rounded = max(rounded, self._losses[index - 1])
    return float(max(0.0, rounded))


class DirectProfile:
  """delta(eps) and eps(delta) of a composed PLD, in closed form. [UB]

  dp_accounting evaluates A - e^eps B from two long cumulative sums, whose
  rounding reaches ~1e-11 and can make delta negative, and it searches
  epsilon in a pure-Python loop over the grid. Here
  delta(eps) = m_inf + sum_{L_i > eps} p_i (1 - e^{eps - L_i}), every term
  >= 0, summed pairwise (relative error ~1e-13), and its inverse is solved
  in closed form ("The smallest epsilon below a target delta" in
  docs/mathematics.md). Every PMF mass carries a relative safety margin of
  1e-10 (`_numerics.RELATIVE_SAFETY_MARGIN`).

  FFT round-off (D24): for a PLD composed by `compose_all` from exact grid
  PMFs, the answer comes from masses certified to bound the exact
  composition's (`roundoff.Rounds.certified_masses`, the composition redone
  in the tilted domain at the saddle point of the epsilon asked for, with a
  proven error bound); the FFT result itself only locates that epsilon.
  Certificates are kept, and every answer is the smallest over those
  computed so far (each is an upper bound), so `delta(epsilon(x)) <= x`.
  Other PLDs (dp_accounting's own events, DP-SGD samplers) keep W18's
  estimate: negative masses zeroed, twice their total added at +infinity.
  """

  def __init__(self, pld: privacy_loss_distribution.PrivacyLossDistribution,
               certify: bool = True):
    """`certify=False` keeps W18's estimate (for comparisons only)."""
    # pylint: disable=protected-access
    pmfs = [pld._pmf_remove] + ([] if pld._symmetric else [pld._pmf_add])
    # pylint: enable=protected-access
    self._rounds = _ROUNDS.get(pld) if certify else None
    # Certified answers use the FFT result only to locate epsilon.
    self._parts = [_PmfProfile.estimated(pmf.to_dense_pmf(),
                                         allowance=self._rounds is None)
                   for pmf in pmfs]
    self._certified: Dict[Tuple[float, int], Tuple[float, _PmfProfile]] = {}

  @property
  def certified(self) -> bool:
    """Whether answers include a proven round-off bound (D24)."""
    return self._rounds is not None

  def _certificates(self, epsilon: float):
    """(lowest loss resolved, profile) of the certificates computed so far,
    with one whose tilt and window suit `epsilon`."""
    tilt = self._rounds.saddle_point(epsilon)
    first, length = self._rounds.window(tilt, epsilon)
    if (tilt, first) not in self._certified:
      lower, masses, infinity = self._rounds.certified_masses(tilt, first,
                                                               length)
      # A window from the lowest loss up resolves every epsilon.
      floor = (-np.inf if lower <= self._rounds.lowest()
               else lower * self._rounds.discretization)
      self._certified[(tilt, first)] = (floor,
          _PmfProfile(self._rounds.discretization, lower, masses, infinity))
    return self._certified.values()

  def delta(self, epsilon: float) -> float:
    """delta(epsilon) of the PLD, in [0, 1]."""
    if self._rounds is None:
      return max(part.delta(epsilon) for part in self._parts)
    # Below its window a certificate bounds nothing: delta <= 1 there.
    return min(profile.delta(epsilon) if epsilon >= floor else 1.0
               for floor, profile in self._certificates(epsilon))

  def located_epsilon(self, delta: float) -> float:
    """Where the FFT result puts epsilon at `delta`: a location, not a bound."""
    return max(part.epsilon(delta) for part in self._parts)

  def epsilon(self, delta: float) -> float:
    """The smallest epsilon >= 0 with delta(epsilon) <= delta (inf if none)."""
    estimate = self.located_epsilon(delta)
    if self._rounds is None or not np.isfinite(estimate):
      return estimate
    return min(max(floor, profile.epsilon(delta)) if delta < 1 else 0.0
               for floor, profile in self._certificates(estimate))
