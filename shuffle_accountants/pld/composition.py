"""Composes grid PLDs and certifies their privacy profile.

IDs: ROUNDOFF-CERTIFIED

Rounds built by this library enter as `GridPld`s: a symmetric dp_accounting
PLD that also holds its grid PMF and the exact rounds (no FFT has touched
them) it composes. `compose_all` composes a ledger of them in a balanced
tree of FFT products; `DirectProfile` answers delta(eps) and eps(delta) from
the composition recomputed with a proven round-off bound (`roundoff`,
ROUNDOFF-CERTIFIED), the FFT result only locating epsilon; an asymmetric ledger
is composed and certified as its two halves (`TwoSidedPld`). PLDs dp_accounting
composed itself carry no rounds and keep NOT-MONOTONE's estimate.

dp_accounting 0.6 has no public accessor for a PLD's PMF; `_grid_of` and
`_pmfs` are the only places that read its private fields.
"""

import collections
import math
from typing import Dict, List, Optional, Sequence, Tuple, TypeAlias

from dp_accounting.pld import common
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution
import numpy as np
from scipy import fft
from scipy import special

from shuffle_accountants import _cache
from shuffle_accountants import _numerics
from shuffle_accountants import _upstream
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import roundoff

__all__ = [
    'MAX_COMPOSED_BUCKETS', 'Pld', 'GridTooFineError', 'GridPld', 'TwoSidedPld',
    'to_privacy_loss_distribution', 'exact_input', 'self_compose',
    'all_at_infinity', 'compose', 'compose_all', 'DirectProfile',
]

# Largest support a self-composition may reach (64 MB of complex FFT data).
MAX_COMPOSED_BUCKETS = 4_000_000
# dp_accounting's truncation of each composition's tails (moved to +infinity).
_TAIL_MASS_TRUNCATION = 1e-15

Pld: TypeAlias = privacy_loss_distribution.PrivacyLossDistribution


class GridTooFineError(ValueError):
  """The composition would need more grid points than the resource budget."""


class GridPld(privacy_loss_distribution.PrivacyLossDistribution):
  """A symmetric, pessimistic dp_accounting PLD built by this library.

  Attributes:
    grid: its PMF (the same masses as the dp_accounting PMF it wraps).
    rounds: the exact grid PMFs it composes, each with its count (what
      `DirectProfile` certifies round-off against, ROUNDOFF-CERTIFIED), or None
      when an FFT result it holds is not covered by a certificate.
  """

  def __init__(self, grid: discrete.GridPmf,
               rounds: Optional[roundoff.Rounds]):
    probs = np.asarray(grid.probs, dtype=np.float64)
    super().__init__(pld_pmf.DensePLDPmf(
        grid.discretization, grid.lower_index, probs,
        float(grid.infinity_mass), True))
    self.grid = discrete.GridPmf(grid.discretization, grid.lower_index, probs,
                                 float(grid.infinity_mass))
    self.rounds = rounds


class TwoSidedPld(privacy_loss_distribution.PrivacyLossDistribution):
  """An asymmetric PLD kept as its two relations' halves.

  See ROUNDOFF-CERTIFIED (vi).

  Under add-or-remove a ledger's delta is the larger of its remove half's
  (every round's remove PMF composed) and its add half's (every round's
  add PMF; a symmetric round's one PMF on both sides), so each half is a
  symmetric PLD composed and certified on its own.

  Attributes:
    remove: the remove relation's half (a `GridPld` when certified).
    add: the add relation's half.
  """

  def __init__(self, remove: Pld, add: Pld):
    super().__init__(_upstream.pld_pmfs(remove)[0],
                     _upstream.pld_pmfs(add)[0])
    self.remove, self.add = remove, add


def _half(pld: Pld, index: int) -> Pld:
  """Relation `index`'s half of `pld` (0: remove, 1: add), as a symmetric
  PLD; a symmetric PLD is both of its halves."""
  if isinstance(pld, TwoSidedPld):
    return (pld.remove, pld.add)[index]
  if _symmetric(pld):
    return pld
  return Pld(_upstream.pld_pmfs(pld)[index])


def _grid_of(pld: Pld) -> discrete.GridPmf:
  """The (remove-relation) PMF of any PLD, dense."""
  if isinstance(pld, GridPld):
    return pld.grid
  pmf, _ = _upstream.pld_pmfs(pld)
  return discrete.from_dense(pmf.to_dense_pmf())


def _pmfs(pld: Pld) -> List[discrete.GridPmf]:
  """The PMFs of both relations of any PLD (one if symmetric)."""
  if isinstance(pld, GridPld):
    return [pld.grid]
  remove, add = _upstream.pld_pmfs(pld)
  return [discrete.from_dense(pmf.to_dense_pmf()) for pmf in (
      [remove] + ([] if _upstream.is_symmetric(pld) else [add]))]


def _symmetric(pld: Pld) -> bool:
  return isinstance(pld, GridPld) or _upstream.is_symmetric(pld)


def to_privacy_loss_distribution(pmf: discrete.GridPmf) -> GridPld:
  """Wraps an exact grid PMF as a symmetric, pessimistic PLD whose one round
  is itself (the input of the certificate, ROUNDOFF-CERTIFIED)."""
  if not (np.all(np.isfinite(pmf.probs)) and np.isfinite(pmf.infinity_mass)):
    raise FloatingPointError(
        'internal error: a privacy loss PMF has non-finite masses; please '
        'report the event that produced it.')
  pld = GridPld(pmf, None)
  pld.rounds = roundoff.Rounds(pmf.discretization, [(
      pmf.lower_index, pld.grid.probs, pld.grid.infinity_mass, 1)])
  return pld


def exact_input(pld: Pld) -> Pld:
  """A PLD built without FFT (one round of one of dp_accounting's events),
  dense and recorded as an exact input of the certificate (ROUNDOFF-CERTIFIED):
  a `GridPld`, or a `TwoSidedPld` of two if it is asymmetric.

  dp_accounting's masses are differences of floating-point CDFs, tight at
  the grid points (connect-the-dots: a Poisson-subsampled Gaussian's delta
  came out 5e-14 relative below the truth at a grid point), so they carry
  the relative safety margin of the project's own PMFs. [UB]"""
  margin = 1.0 + _numerics.RELATIVE_SAFETY_MARGIN
  halves = [to_privacy_loss_distribution(discrete.GridPmf(
      grid.discretization, grid.lower_index, grid.probs * margin,
      grid.infinity_mass * margin)) for grid in _pmfs(pld)]
  return halves[0] if len(halves) == 1 else TwoSidedPld(*halves)


def self_compose(pld: Pld, count: int) -> Pld:
  """`count`-fold composition within MAX_COMPOSED_BUCKETS. [DOM]

  dp_accounting sizes one FFT from Chernoff bounds at a few fixed orders,
  which for large counts ask for billions of points; repeated squaring with
  per-step tail truncation (mass to +infinity, as dp_accounting does) needs
  only the true support. A round whose finite mass vanishes after `count`
  compositions is composed as all +infinity (delta = 1 below: exact).
  """
  grid = _grid_of(pld)
  finite = float(np.sum(grid.probs))
  if finite <= 0 or count * np.log(finite) < np.log(_TAIL_MASS_TRUNCATION):
    return all_at_infinity(grid.discretization)
  transform = _kept_transform(grid.probs) if isinstance(pld, GridPld) else None
  lower, upper = (common.compute_self_convolve_bounds(
      grid.probs, count, _TAIL_MASS_TRUNCATION) if transform is None
                  else transform.bounds(count))
  if upper - lower < MAX_COMPOSED_BUCKETS:
    # A PMF of mass slightly above 1 (`profile_to_pmf`) overflows when raised
    # to a huge count; `compose_all` turns that into all +infinity, quietly.
    with np.errstate(over='ignore', invalid='ignore'):
      if transform is None:
        return pld.self_compose(count, _TAIL_MASS_TRUNCATION)
      return transform.self_compose(grid, count, lower, upper)
  result, power = None, pld
  while count:
    if _grid_of(power).probs.size > MAX_COMPOSED_BUCKETS:
      raise GridTooFineError(
          f'the composed privacy loss distribution needs more than '
          f'{MAX_COMPOSED_BUCKETS} grid points at value_discretization_'
          f'interval={grid.discretization:.3g}; use a coarser '
          'grid or the automatic one (value_discretization_interval=None).')
    if count & 1:
      result = power if result is None else compose(result, power)
    count >>= 1
    if count:
      power = compose(power, power)
  return result


class _KeptTransform:
  """dp_accounting's `self_compose` of one dense PMF (up to round-off),
  with what does not depend on the count kept (Flower's ledger grows by
  the same round every round: the same PMF raised to T, then T + 1, ...).

  dp_accounting sizes the FFT from Chernoff bounds at 40 fixed orders
  (`common.compute_self_convolve_bounds`) and raises the PMF's transform
  of that size to the count; the orders' log-MGFs, and the transform and
  its repeated squares while its size stays, are the same for every count.
  The power is the product of the squares the count's binary digits name
  (a few products, where numpy's complex power takes a log and an exp per
  point: 5 ms of Flower's 44,000-point round), the same operations for a
  count whatever was kept. The result is only the FFT estimate that
  locates epsilon (the certificate recomputes the composition,
  ROUNDOFF-CERTIFIED); tests/pld/test_kept_self_composition.py checks it
  against dp_accounting's own.
  """

  def __init__(self, probs: np.ndarray, key: Tuple[int, int]):
    self._probs, self._key = probs, key
    self._orders = np.concatenate((np.arange(-20, 0), np.arange(1, 21))
                                  ) / probs.size
    self._log_mgfs = [special.logsumexp(np.arange(probs.size) * order,
                                        b=probs) for order in self._orders]

  def bounds(self, count: int) -> Tuple[int, int]:
    """`common.compute_self_convolve_bounds(probs, count, truncation)`."""
    upper, lower = (self._probs.size - 1) * count, 0
    for order, log_mgf in zip(self._orders, self._log_mgfs):
      bound = (count * log_mgf
               + math.log(2 / _TAIL_MASS_TRUNCATION)) / order
      if math.isfinite(bound):
        if order > 0:
          upper = min(upper, math.ceil(bound))
        else:
          lower = max(lower, math.floor(bound))
    return lower, upper

  def self_compose(self, grid: discrete.GridPmf, count: int, lower: int,
                   upper: int) -> Pld:
    """The PLD `GridPld(grid).self_compose(count, truncation)` returns."""
    size = upper - lower + 1
    length = fft.next_fast_len(max(size, self._probs.size))
    squares = _kept(_SPECTRA, (self._key, length), self._probs,
                    lambda: [fft.fft(self._probs, length)])
    power, square = None, squares[0]
    for level in range(count.bit_length()):
      if level < len(squares):
        square = squares[level]
      else:  # the last level's square squared (kept: _squares_kept)
        square = square * square
        if level < _squares_kept(length):
          squares.append(square)
      if count >> level & 1:
        power = square if power is None else power * square
    composed = np.roll(np.real(fft.ifft(power)), -lower)[:size]
    infinity = (_TAIL_MASS_TRUNCATION
                - math.expm1(count * math.log1p(-grid.infinity_mass)))
    return Pld(pld_pmf.DensePLDPmf(
        grid.discretization, grid.lower_index * count + lower,
        np.array(composed), infinity, True))


# The last PMFs self-composed and their transforms (speed only). Each
# entry keeps its PMF and is used only for equal masses.
_TRANSFORMS = _cache.Lru(8 * 2**20, lambda entry: entry[0].nbytes + 400,
                         'pld.composition.mgfs')
# Each entry's list of squares grows in place as counts pass powers of two
# (up to _squares_kept of them, as its size counts them from the start).
_KEPT_SQUARES = 24
_SPECTRA_BYTES = 64 * 2**20


def _squares_kept(length: int) -> int:
  """How many squares of a transform of `length` points are kept: as many
  as fit the cache (at least the transform itself), so that a long FFT
  (a count of 1e9 on 4e6 points) holds two arrays, not 24."""
  return int(max(1, min(_KEPT_SQUARES, _SPECTRA_BYTES // (16 * length))))


_SPECTRA = _cache.Lru(
    _SPECTRA_BYTES,
    lambda entry: _squares_kept(entry[1][0].size) * entry[1][0].nbytes,
    'pld.composition.spectra')


def _kept(cache: _cache.Lru, key, probs: np.ndarray, compute):
  """`compute()`, kept in `cache` under `key` with the PMF it is of."""
  held, value = cache.get(key, lambda: (probs, compute()))
  if held is not probs and not np.array_equal(held, probs):
    return compute()  # a hash collision: never another PMF's value
  return value


def _kept_transform(probs: np.ndarray) -> _KeptTransform:
  probs = np.asarray(probs, dtype=np.float64)
  key = (probs.size, hash(probs.tobytes()))
  return _kept(_TRANSFORMS, key, probs, lambda: _KeptTransform(probs, key))


def all_at_infinity(discretization: float) -> GridPld:
  """The PLD with every mass at +infinity: delta = 1 at every epsilon."""
  return GridPld(discrete.GridPmf(discretization, 0, np.zeros(1), 1.0), None)


def compose(first: Pld, second: Pld) -> Pld:
  """first.compose(second), or all at +infinity when no finite mass is left.

  dp_accounting's tail truncation fails on a PMF whose finite mass is below
  its truncation threshold; such a composition has delta = 1 below that
  mass's epsilon anyway, so +infinity is the sound (and nearly exact) answer.
  """
  discretization = _grid_of(first).discretization
  # A PMF of mass slightly above 1 (`profile_to_pmf`) squared again and
  # again in `self_compose` overflows; that is all at +infinity, quietly.
  with np.errstate(over='ignore', invalid='ignore'):
    finite = ((1 - _grid_of(first).infinity_mass)
              * (1 - _grid_of(second).infinity_mass))
    if not finite > 10 * _TAIL_MASS_TRUNCATION or not np.isfinite(finite):
      return all_at_infinity(discretization)
    try:
      composed = first.compose(second, _TAIL_MASS_TRUNCATION)
    except IndexError:
      # Its truncation empties a PMF whose finite masses underflowed
      # (CheckInEvent(100024, 1e-12, local_epsilon=2.3e-5) x 1e9): as above.
      return all_at_infinity(discretization)
  return _finite_or_infinity(composed)


def _is_identity(grid: discrete.GridPmf) -> bool:
  """Whether a PMF is the identity (all mass at loss 0): no FFT needed."""
  return (grid.probs.size == 1 and grid.lower_index == 0
          and grid.infinity_mass == 0 and grid.probs[0] == 1)


def compose_all(plds: Sequence[Tuple[Pld, int]]) -> Pld:
  """The composition of PLDs on one grid, each `count` times. [DOM]

  A ledger of many distinct rounds composed pairwise pays dp_accounting's
  per-composition overhead (tail bounds at 40 orders, docs/performance.md)
  once per round; here each PMF is raised to its count in the Fourier
  domain and the
  results are convolved in a balanced tree (`_convolve_batch`), in batches
  whose summed support stays within MAX_COMPOSED_BUCKETS / 2, and only the
  batches are composed pairwise (`compose`). A PLD whose count
  alone exceeds that is self-composed first (`self_compose`). The
  convolution is exact up to FFT round-off, which `DirectProfile` bounds
  from the rounds' exact PMFs (ROUNDOFF-CERTIFIED) when every input carries
  them; the +infinity mass is 1 - prod (1 - m_i)^count_i, rounded up. A ledger
  with an asymmetric PLD (dp_accounting's, e.g. Poisson-subsampled under
  add-or-remove) is composed as two: every round's remove half, and every
  round's add half (`TwoSidedPld`).
  """
  if not all(_symmetric(pld) for pld, _ in plds):
    return TwoSidedPld(*[compose_all([(_half(pld, index), count)
                                      for pld, count in plds])
                         for index in (0, 1)])
  budget = MAX_COMPOSED_BUCKETS // 2
  kept = [(pld, count) for pld, count in plds
          if count and not _is_identity(_grid_of(pld))]
  batches: List[List[Tuple[Pld, int]]]
  batch: List[Tuple[Pld, int]]
  batches, batch, support = [], [], 0
  for pld, count in kept:
    size = _grid_of(pld).probs.size
    if count > 1 and (count * (size - 1) + 1 > budget
                      or _truncation_pays(pld, count)):
      pld, count = self_compose(pld, count), 1
      size = _grid_of(pld).probs.size
    if batch and support + count * (size - 1) + 1 > budget:
      batches.append(batch)
      batch, support = [], 0
    batch.append((pld, count))
    support += count * (size - 1) + 1
  batches.append(batch)
  parts = [_finite_or_infinity(
      batch[0][0] if len(batch) == 1 and batch[0][1] == 1
      else _convolve_batch(batch)) for batch in batches if batch]
  if not parts:  # nothing but identities
    return GridPld(discrete.GridPmf(_grid_of(plds[0][0]).discretization, 0,
                                    np.ones(1), 0.0), None)
  result = parts[0]
  for part in parts[1:]:
    result = compose(result, part)
  # combine returns None for a None entry (its List[Rounds] misses None).
  rounds = roundoff.combine(
      [_rounds_of(pld, count) for pld, count in kept])  # type: ignore[misc]
  return result if rounds is None else GridPld(_grid_of(result), rounds)


def _truncation_pays(pld: Pld, count: int) -> bool:
  """Whether `self_compose`'s tail-truncated support (dp_accounting's
  Chernoff bounds) is under a quarter of the full one: a long ledger of one
  round (Flower's, 1,000 rounds: 1.7e6 points against about 1e5) is then
  located on the truncated grid, as dp_accounting composes it. Only the
  FFT estimate changes; the certificate recomputes from the exact rounds."""
  if not isinstance(pld, GridPld):
    return False
  probs = pld.grid.probs
  lower, upper = _kept_transform(probs).bounds(count)
  return 4 * (upper - lower + 1) < count * (probs.size - 1) + 1


def _rounds_of(pld: Pld, count: int) -> Optional[roundoff.Rounds]:
  """The exact rounds `pld` composes, each `count` times more (or None)."""
  rounds = pld.rounds if isinstance(pld, GridPld) else None
  if rounds is None:
    return None
  return roundoff.Rounds(rounds.discretization, [
      (lower, probs, infinity, inner * count)
      for lower, probs, infinity, inner in rounds.rounds])


def _finite_or_infinity(pld: Pld) -> Pld:
  """`pld`, or all at +infinity (delta = 1: sound) if its masses overflowed.

  A pessimistic PMF may hold slightly more than mass 1 (`profile_to_pmf`);
  composed 10^7 times its FFT overflows. The accountant then answers with
  the RDP route.
  """
  grid = _grid_of(pld)
  if np.all(np.isfinite(grid.probs)) and np.isfinite(grid.infinity_mass):
    return pld
  return all_at_infinity(grid.discretization)


def _convolve_batch(batch: Sequence[Tuple[Pld, int]]) -> GridPld:
  """One PLD for (PLD, count) pairs: each PMF to its power in the Fourier
  domain, then pairwise products in a balanced tree (each FFT only as long
  as its two factors' supports: O(L log L log k), not O(k L log L))."""
  grids = [(_grid_of(pld), count) for pld, count in batch]
  powers = [_power(np.asarray(grid.probs, dtype=np.float64), count)
            for grid, count in grids]
  while len(powers) > 1:
    powers = [_product(powers[i], powers[i + 1]) if i + 1 < len(powers)
              else powers[i] for i in range(0, len(powers), 2)]
  log_finite = sum(count * np.log1p(-min(grid.infinity_mass, 1.0))
                   for grid, count in grids)
  infinity_mass = min(1.0, -np.expm1(log_finite)
                      * (1 + _numerics.RELATIVE_SAFETY_MARGIN))
  lower = sum(count * grid.lower_index for grid, count in grids)
  return GridPld(discrete.GridPmf(grids[0][0].discretization, lower,
                                  powers[0], infinity_mass), None)


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
  inverse in closed form (see `DirectProfile`).

  The inverse reads the profile from the top down, only as far as the
  answer (`discrete.profile_below`: bit for bit the whole profile's), so
  a query near the top of a long FFT result skips the rest.
  """

  def __init__(self, discretization: float, lower_index: int,
               probs: np.ndarray, infinity_mass: float):
    self._raw = np.asarray(probs, dtype=np.float64)
    self._discretization = discretization
    self._lower_index = lower_index
    self._infinity = float(infinity_mass)
    # The masses (negatives zeroed) and losses, for `delta`.
    self._whole: Optional[Tuple[np.ndarray, np.ndarray]] = None
    # delta(L_i) and U_i for i >= _start, read so far; what carries below.
    self._start = self._raw.size
    self._grid_deltas = np.empty(self._raw.size)
    self._decaying = np.empty(self._raw.size)
    self._carried = (0.0, 0.0)

  @classmethod
  def estimated(cls, pmf: discrete.GridPmf, allowance: bool = True
                ) -> '_PmfProfile':
    """Of an FFT result, negative masses zeroed.

    With `allowance`, NOT-MONOTONE's round-off *estimate*: twice their total
    added at +infinity.
    """
    probs = np.asarray(pmf.probs, dtype=np.float64)
    negative = -np.sum(np.minimum(probs, 0.0)) if allowance else 0.0
    return cls(pmf.discretization, pmf.lower_index, probs,
               pmf.infinity_mass + 2 * negative)

  def _loss(self, index: int) -> np.float64:
    """L_index, as the whole array of losses holds it."""
    return np.float64(self._lower_index + index) * self._discretization

  def delta(self, epsilon: float) -> float:
    if self._whole is None:
      self._whole = (np.maximum(self._raw, 0.0), (
          self._lower_index + np.arange(self._raw.size)) * self._discretization)
    probs, losses = self._whole
    start = int(np.searchsorted(losses, epsilon, side='right'))
    terms = probs[start:] * -np.expm1(epsilon - losses[start:])
    return float(min(1.0, self._infinity + np.sum(terms)))

  def _read_down(self) -> None:
    """Reads the profile further down: as much again as read (at least
    2^16 points)."""
    stop = self._start
    start = max(0, stop - max(2**16, self._raw.size - stop))
    tail, decaying, self._carried = discrete.profile_below(
        np.maximum(self._raw[start:stop], 0.0), self._discretization,
        self._carried)
    self._grid_deltas[start:stop] = self._infinity + tail
    self._decaying[start:stop] = decaying
    self._start = start

  def epsilon(self, delta: float) -> float:
    if delta < self._infinity:
      return np.inf
    if not self._raw.size:
      return 0.0
    # delta(L_i) is non-increasing and delta(L_last) = the +infinity mass:
    # the first i with delta(L_i) <= delta lies above the read part's first
    # point once that one's delta exceeds the target.
    while self._start == self._raw.size or (
        self._start and not self._grid_deltas[self._start] > delta):
      self._read_down()
    index = self._start + int(np.argmax(
        self._grid_deltas[self._start:] <= delta))
    grid_deltas, decaying = self._grid_deltas, self._decaying
    # A subnormal decaying sum overflows the ratio: past 1 it is cut to 1.
    with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
      shortfall = (delta - grid_deltas[index]) / decaying[index]
      solved = self._loss(index) + np.log1p(-min(shortfall, 1.0))
    if not solved == solved:  # 0 / 0: no finite mass at or above L_index
      solved = -np.inf
    # Rounded up (the sums carry relative errors of ~1e-13), but never past
    # the grid point, where delta <= target holds by the sums themselves.
    rounded = (min(self._loss(index),
                   solved + 1e-12 * max(1.0, abs(solved)))
               if np.isfinite(solved) else solved)
    if index > 0:
      rounded = max(rounded, self._loss(index - 1))
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

  FFT round-off (ROUNDOFF-CERTIFIED): for a PLD composed by `compose_all` from
  exact grid PMFs, the answer comes from masses certified to bound the exact
  composition's (`roundoff.Rounds.certified_masses`, the composition redone
  in the tilted domain at the saddle point of the epsilon asked for, with a
  proven error bound); the FFT result itself only locates that epsilon.
  Certificates are kept per key (tilt, window), and each answer comes from
  the certificates its question selects, whatever was asked before (one
  question, one answer), with `delta(epsilon(x)) <= x`.
  A `TwoSidedPld` is answered from its two halves, each certified on its
  own: delta is the larger, and so is epsilon. Other PLDs (composed by
  dp_accounting) keep NOT-MONOTONE's estimate: negative masses zeroed, twice
  their total added at +infinity.
  """

  def __init__(self, pld: Pld, certify: bool = True):
    """`certify=False` keeps NOT-MONOTONE's estimate (for comparisons only)."""
    halves = ([pld.remove, pld.add] if isinstance(pld, TwoSidedPld)
              else [pld])
    self._halves = [_HalfProfile(half, certify) for half in halves]

  @property
  def certified(self) -> bool:
    """Whether answers include a proven round-off bound (ROUNDOFF-CERTIFIED)."""
    return all(half.certified for half in self._halves)

  def delta(self, epsilon: float) -> float:
    """delta(epsilon) of the PLD, in [0, 1]."""
    return max(half.delta(epsilon) for half in self._halves)

  def located_epsilon(self, delta: float) -> float:
    """Where the FFT result puts epsilon at `delta`: a location, not a bound."""
    return max(half.located_epsilon(delta) for half in self._halves)

  def epsilon(self, delta: float) -> float:
    """The smallest epsilon >= 0 with delta(epsilon) <= delta (inf if none)."""
    return max(half.epsilon(delta) for half in self._halves)


# Certificates one epsilon query may visit before it stops on the largest
# answer so far (each is an upper bound, so that is sound). Most queries
# close a cycle at the first or second key; where the FFT estimate sits in
# its round-off (delta ~ 1e-14 after 1000 Poisson-subsampled Gaussians)
# each answer is its window's floor and the walk descends slowly, so the
# cap then leaves the answer loose, never unsound.
_MAX_CERTIFICATES = 8
# Certificates a profile keeps: an answer's walk mostly closes a cycle of
# one or two keys, and the next query often reuses the last.
_KEPT_CERTIFICATES = 2


class _HalfProfile:
  """`DirectProfile` of one PLD: certified if it is a `GridPld` with rounds."""

  def __init__(self, pld: Pld, certify: bool):
    self._rounds = (pld.rounds if certify and isinstance(pld, GridPld)
                    else None)
    # Certified answers use the FFT result only to locate epsilon.
    self._parts = [_PmfProfile.estimated(pmf, allowance=self._rounds is None)
                   for pmf in _pmfs(pld)]
    self._certified: collections.OrderedDict[
        Tuple[float, int], Tuple[float, _PmfProfile]] = (
            collections.OrderedDict())

  @property
  def certified(self) -> bool:
    return self._rounds is not None

  def _certificate(self, epsilon: float
                   ) -> Tuple[Tuple[float, int], Tuple[float, _PmfProfile]]:
    """The key (tilt, window start) that suits `epsilon`, and its
    certificate: (lowest loss resolved, profile), the same whenever the
    key is asked (the last two are kept)."""
    assert self._rounds is not None  # the callers check
    tilt = self._rounds.saddle_point(epsilon)
    first, length = self._rounds.window(tilt, epsilon)
    key = (tilt, first)
    if key in self._certified:
      self._certified.move_to_end(key)
    else:
      lower, masses, infinity = self._rounds.certified_masses(tilt, first,
                                                               length)
      # A window from the lowest loss up resolves every epsilon.
      floor = (-np.inf if lower <= self._rounds.lowest()
               else lower * self._rounds.discretization)
      self._certified[key] = (floor, _PmfProfile(
          self._rounds.discretization, lower, masses, infinity))
      # Each holds up to five arrays of its window (~0.6 GB at 1e9 rounds
      # of 10-RR): keeping every one ran a six-delta sweep past 2.5 GB.
      # Recomputing an evicted one gives the same certificate (speed only).
      while len(self._certified) > _KEPT_CERTIFICATES:
        self._certified.popitem(last=False)
    return key, self._certified[key]

  def delta(self, epsilon: float) -> float:
    """delta(epsilon) of the PLD, in [0, 1]."""
    if self._rounds is None:
      return max(part.delta(epsilon) for part in self._parts)
    if epsilon >= self._rounds.largest_loss():  # no loss above epsilon
      return 0.0
    # Below its window a certificate bounds nothing: delta <= 1 there.
    floor, profile = self._certificate(epsilon)[1]
    return profile.delta(epsilon) if epsilon >= floor else 1.0

  def located_epsilon(self, delta: float) -> float:
    """Where the FFT result puts epsilon at `delta`: a location, not a bound."""
    return max(part.epsilon(delta) for part in self._parts)

  def epsilon(self, delta: float) -> float:
    """The smallest epsilon >= 0 with delta(epsilon) <= delta (inf if none).

    From the certificate of the FFT's estimate, then of each answer in
    turn, until a key repeats: the largest answer on that cycle is the
    certified epsilon. Each answer is an upper bound at `delta`, so the
    largest is too, and `delta` of it, answered from the certificate of
    its own key (the cycle's next), is at most `delta`. Only the question
    decides the certificates asked, never earlier queries.
    """
    estimate = self.located_epsilon(delta)
    if self._rounds is None:
      return estimate
    largest = self._rounds.largest_loss()  # delta(largest) = 0
    if not np.isfinite(estimate):
      return min(estimate, largest)
    if delta >= 1:
      return 0.0
    answers: Dict[Tuple[float, int], float] = {}
    key, (floor, profile) = self._certificate(estimate)
    while key not in answers and len(answers) < _MAX_CERTIFICATES:
      answers[key] = max(floor, profile.epsilon(delta))
      if answers[key] >= largest:
        return largest
      key, (floor, profile) = self._certificate(answers[key])
    visited = list(answers)
    cycle = visited[visited.index(key):] if key in answers else visited
    return max(answers[on_cycle] for on_cycle in cycle)
