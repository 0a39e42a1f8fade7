"""Certified delta of a composition of grid PMFs, FFT round-off included.

IDs: ROUNDOFF-CERTIFIED

The composition of grid PMFs p_1 ... p_T (losses on one grid {i d}) is
recomputed in the exponentially tilted domain: p_j(L) e^{lam L} / M_j with
M_j = sum_L p_j(L) e^{lam L}. Convolution commutes with tilting (the losses
add), so the composition is c(L) = M^T-scale * e^{-lam L} * (tilted
composition)(L). With lam at the saddle point of the epsilon asked for, the
tilted composition is O(1) where delta reads it, and an absolute, proven
bound E on its FFT error (`fft_convolution_error`, `fft_power_error`) maps
back to a *relative* bound on the tail. The certified masses
u(L) = (c~(L) + E) e^{log_scale - lam L} >= c(L) give a delta(eps) that is an
upper bound on the exact composition's, at every eps. The transforms are
`radix2`'s, the algorithm of Higham's Thm 24.2 as stated, so E is proven;
docs/mathematics.md ROUNDOFF-CERTIFIED gives the argument.
"""

import math
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
from scipy import special

from shuffle_accountants import _cache
from shuffle_accountants.pld import radix2

__all__ = [
    'UNIT_ROUNDOFF', 'MAX_CERTIFIED_BUCKETS', 'fft_relative_error',
    'fft_convolution_error', 'fft_power_error', 'Rounds', 'combine',
    'lower_masses', 'CertifiedVector', 'certified_power', 'certified_product',
]

UNIT_ROUNDOFF = 2.0**-53
# Largest transform used by a certificate (64 MiB of complex data).
MAX_CERTIFIED_BUCKETS = 2**22
# Relative allowance for one exp (a few ulps); the rounding of its argument
# is added to the argument, in ulps of the magnitudes it sums.
_TILT_MARGIN = 8 * UNIT_ROUNDOFF
# Absolute allowance per transform output for underflow (subnormals).
_UNDERFLOW = 1e-290
_SUBNORMAL = 2.0**-1074


def _gamma(k: float) -> float:
  """Higham's gamma_k = k u / (1 - k u)."""
  return k * UNIT_ROUNDOFF / (1 - k * UNIT_ROUNDOFF)


def fft_relative_error(length: int) -> float:
  """epsilon_F of `radix2.transform` for a power-of-two length.

  See ROUNDOFF-CERTIFIED (iii).

  Higham Thm 24.2: the radix-2 FFT of length 2^t with twiddle factors
  accurate to mu has ||y^ - F x||_2 <= t eta / (1 - t eta) ||F x||_2,
  eta = mu + gamma_4 (sqrt 2 + mu); mu = `radix2.twiddle_error()`.
  """
  levels = int(length).bit_length() - 1
  if length != 1 << levels:
    raise ValueError(f'length={length} is not a power of two')
  mu = radix2.twiddle_error()
  eta = mu + _gamma(4) * (math.sqrt(2) + mu)
  return levels * eta / (1 - levels * eta)


def _norms(values: np.ndarray) -> Tuple[float, float]:
  """Upper bounds on ||x||_1 and ||x||_2 of a float vector (squares that
  underflow lose at most 2^-1021 each)."""
  inflate = 1 + _gamma(values.size + 2)
  one = float(np.sum(np.abs(values))) * inflate
  squares = float(np.sum(np.square(values))) * inflate
  two = math.sqrt(squares + values.size * 2.0**-1021) * inflate
  return one, two


def fft_convolution_error(first: np.ndarray, second: np.ndarray,
                          length: int) -> float:
  """Bound on ||computed - exact||_2 of `_fft_convolve(first, second)`."""
  eps_f = fft_relative_error(length)
  one_x, two_x = _norms(first)
  one_y, two_y = _norms(second)
  root = math.sqrt(length)
  reach_x = one_x + eps_f * root * two_x  # bounds |computed F x| entrywise
  reach_y = one_y + eps_f * root * two_y
  products = (eps_f * (reach_y * two_x + one_x * two_y)
              + math.sqrt(2) * _gamma(2) * reach_x * (1 + eps_f) * two_y)
  return (products + eps_f * (one_x * two_y + products)
          + _UNDERFLOW * root)


def fft_power_error(values: np.ndarray, count: int, length: int) -> float:
  """Bound on ||computed - exact||_2 of `_fft_power(values, count)`."""
  eps_f = fft_relative_error(length)
  one, two = _norms(values)
  root = math.sqrt(length)
  reach = one + eps_f * root * two
  lift = math.exp((count - 1) * math.log(reach)) if reach > 0 else 0.0
  # Binary exponentiation: the computed power is the exact power of the
  # computed transform times (1 + theta)^j, j <= 2 count - 1 (by induction:
  # squaring w_j gives 2 (2j - 1) + 1, a product w_a w_b 2 (a + b) - 1).
  powering = math.expm1((2 * count - 1) * math.log1p(math.sqrt(2)
                                                      * _gamma(2)))
  products = (count * lift * eps_f * two
              + powering * lift * (1 + eps_f) * two)
  exact_two = math.exp((count - 1) * math.log(one)) * two if one > 0 else 0.0
  return products + eps_f * (exact_two + products) + _UNDERFLOW * root


def _transform_length(size: int) -> int:
  return 1 << max(0, int(size - 1).bit_length())


def _spectrum(values: np.ndarray, length: int) -> Tuple[np.ndarray,
                                                           np.ndarray]:
  padded = np.zeros(length)
  padded[:values.size] = values
  return radix2.transform(padded, np.zeros(length))


# The transforms of the last powered vectors and their squares (speed only:
# a ledger rebuilt with one round more raises the same tilted round to
# count + 1). Each entry keeps its vector and is used only for an equal one.
_POWERS_BYTES = 64 * 2**20
_POWERS = _cache.Lru(_POWERS_BYTES, lambda entry: sum(
    part.nbytes for power in entry[1] for part in power),
                     'pld.roundoff.powers')


def _kept_powers(values: np.ndarray, length: int, levels: int
                 ) -> Tuple[Tuple[np.ndarray, np.ndarray], ...]:
  """The transform of `values` (`_spectrum`) squared 0 ... levels - 1
  times (`radix2.square`), read-only. Powers kept for fewer levels (a
  ledger grown past a power of two) are extended, not computed again."""
  key = (values.size, hash(values.tobytes()), length)

  def compute() -> Tuple[np.ndarray, Tuple[Tuple[np.ndarray, np.ndarray],
                                            ...]]:
    fewer = next((kept for kept in range(levels - 1, 0, -1)
                  if key + (kept,) in _POWERS), 0)
    powers: List[Tuple[np.ndarray, np.ndarray]] = []
    if fewer:
      held, kept_powers = _POWERS.get(key + (fewer,), tuple)
      if np.array_equal(held, values):
        powers = list(kept_powers)
    for level in range(len(powers), levels):
      power = (radix2.square(*(part.copy() for part in powers[-1])) if level
               else _spectrum(values, length))
      for part in power:
        part.flags.writeable = False
      powers.append(power)
    return values.copy(), tuple(powers)
  held, powers = _POWERS.get(key + (levels,), compute)
  if not np.array_equal(held, values):
    return compute()[1]  # a hash collision
  return powers


def _squared_in_place(power: Tuple[np.ndarray, np.ndarray], levels: int
                      ) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
  """`power`, then squared in place 1 ... levels - 1 times (one held)."""
  for level in range(levels):
    if level:
      power = radix2.square(*power)  # in place
    yield power


def _fft_convolve(first: np.ndarray, second: np.ndarray, window: int
                  ) -> Tuple[np.ndarray, int]:
  """Convolution by proven radix-2 FFTs (`radix2`): linear, or cyclic
  modulo `window` when longer (entries wrap around)."""
  size = first.size + second.size - 1
  length = min(_transform_length(size), window)
  product = radix2.multiply(*_spectrum(first, length),
                            *_spectrum(second, length))
  return radix2.transform(*product, inverse=True)[0][:size], length


def _fft_power(values: np.ndarray, count: int, window: int
               ) -> Tuple[np.ndarray, int]:
  """The count-fold convolution, by binary exponentiation of the transform
  (cyclic modulo `window` when longer)."""
  size = count * (values.size - 1) + 1
  length = min(_transform_length(size), window)
  levels = count.bit_length()
  # Two float64 parts per power; above the cache's budget the powers are
  # not kept, and are squared in place one at a time (same operations).
  if levels * 2 * length * 8 <= _POWERS_BYTES:
    powers = iter(_kept_powers(values, length, levels))
  else:
    powers = _squared_in_place(_spectrum(values, length), levels)
  result: Optional[Tuple[np.ndarray, np.ndarray]] = None
  for level, power in enumerate(powers):
    if count >> level & 1:
      # Copied: the kept powers are shared. (tuple() of a pair is a pair.)
      result = (tuple(part.copy() for part in power)  # type: ignore[assignment]
                if result is None else radix2.multiply(*result, *power))
  assert result is not None  # count >= 1
  return radix2.transform(*result, inverse=True)[0][:size], length


class CertifiedVector:
  """A computed non-negative vector (a tilted partial composition, or any
  convolution of exact vectors) and its proven error.

  values: computed vector; error: bound on ||values - exact||_2; mass: bound
  on the exact (non-negative) vector's total; lower: grid index of values[0];
  log_scale, abs_scale: sum of count log M^_j over its rounds (the tilt's
  normalizers it used) and of their absolute values (0 outside the tilted
  composition).
  """

  def __init__(self, values, error, mass, lower=0, log_scale=0.0,
               abs_scale=0.0):
    self.values, self.error, self.mass, self.lower = values, error, mass, lower
    self.log_scale, self.abs_scale = log_scale, abs_scale

  @classmethod
  def exact(cls, values: np.ndarray) -> 'CertifiedVector':
    """A non-negative float vector taken as exact (error 0)."""
    return cls(values, 0.0, _norms(values)[0])


def _fitted(node: CertifiedVector, window: int) -> CertifiedVector:
  """`node` folded modulo `window` if longer (numpy's fft would crop it):
  entry j sums the entries j + m window, which the summation's rounding
  (at most gamma_f of their total) adds to the error."""
  if node.values.size <= window:
    return node
  folds = -(-node.values.size // window)
  values = np.bincount(np.arange(node.values.size) % window,
                       weights=node.values, minlength=window)
  error = node.error + _gamma(folds) * _norms(node.values)[0]
  return CertifiedVector(values, error, node.mass, node.lower, node.log_scale,
                         node.abs_scale)


def certified_power(node: CertifiedVector, count: int, window: int
                    ) -> CertifiedVector:
  """The `count`-fold convolution of `node` by proven FFTs (cyclic modulo
  `window` when longer: entries wrap around), with its l2 error: the
  transform's (`fft_power_error`) plus the input's, lifted by
  ||x^k - y^k|| <= k max(|x|_1, |y|_1)^(k - 1) ||x - y||
  (ROUNDOFF-CERTIFIED)."""
  if count == 1:
    return node
  node = _fitted(node, window)
  values, length = _fft_power(node.values, count, window)
  error = fft_power_error(node.values, count, length)
  one, _ = _norms(node.values)
  reach = max(one, node.mass)
  if node.error:
    error += count * math.exp((count - 1) * math.log(reach)) * node.error
  return CertifiedVector(
      values, error, node.mass**count * (1 + _gamma(count)),
      count * node.lower, count * node.log_scale, count * node.abs_scale)


def certified_product(first: CertifiedVector, second: CertifiedVector,
                      window: int) -> CertifiedVector:
  """The convolution of two certified vectors by proven FFTs (cyclic modulo
  `window` when longer), with its l2 error: the transform's
  (`fft_convolution_error`) plus the inputs' (Young's inequality)
  (ROUNDOFF-CERTIFIED)."""
  first, second = _fitted(first, window), _fitted(second, window)
  values, length = _fft_convolve(first.values, second.values, window)
  error = fft_convolution_error(first.values, second.values, length)
  one_first, _ = _norms(first.values)
  # x^ * y^ - x * y = (x^ - x) * y + x^ * (y^ - y); Young's inequality.
  error += first.error * second.mass + one_first * second.error
  return CertifiedVector(
      values, error, first.mass * second.mass * (1 + _gamma(2)),
      first.lower + second.lower, first.log_scale + second.log_scale,
      first.abs_scale + second.abs_scale)


# Partial certificates of aligned blocks of rounds (speed only: a ledger
# grown by a day reuses all but O(log J) of them). Each entry keeps its
# rounds' arrays and is used only if they equal the ones asked for.
_NODES = _cache.Lru(128 * 2**20, lambda entry: entry[1].values.nbytes + 1024,
                    'pld.roundoff.nodes')


def _tilted_round(lower: int, probs: np.ndarray, discretization: float,
                  tilt: float, direction: int) -> Tuple[np.ndarray, float]:
  """(p e^{tilt L} / M^, log M^) of one round's masses, M^ their computed
  moment, rounded up (`direction` 1) or down (-1): by a few ulps of each
  magnitude (the log, the product, the sums) and the tilt margin."""
  losses = (lower + np.arange(probs.size)) * discretization
  with np.errstate(divide='ignore', invalid='ignore'):
    logs = np.log(probs)
    exponents = logs + tilt * losses
    log_moment = float(special.logsumexp(exponents))
    slack = _gamma(8) * (np.abs(logs) + np.abs(tilt * losses)
                         + abs(log_moment) + 1)
    tilted = np.exp(exponents - log_moment
                    + direction * np.nan_to_num(slack)) * (
                        1 + direction * _TILT_MARGIN)
  return tilted, log_moment


def _composed_node(rounds, keys, start: int, stop: int,
                   setting: Tuple[float, float, int]) -> CertifiedVector:
  """The tilted composition of rounds[start:stop] (balanced, split at a
  power of two so that blocks recur when rounds are appended)."""
  discretization, tilt, length = setting

  def compute() -> CertifiedVector:
    if stop - start == 1:
      lower, probs, _, count = rounds[start]
      # From this round alone, so that a reused block is bit-identical.
      tilted, log_moment = _tilted_round(lower, probs, discretization, tilt,
                                         1)
      # An exp that underflows errs by at most the smallest subnormal.
      leaf = CertifiedVector(tilted, math.sqrt(tilted.size) * _SUBNORMAL,
                   _norms(tilted)[0] + tilted.size * _SUBNORMAL, lower,
                   log_moment, abs(log_moment))
      return certified_power(leaf, count, length)
    middle = start + (1 << ((stop - start - 1).bit_length() - 1))
    return certified_product(
        _composed_node(rounds, keys, start, middle, setting),
        _composed_node(rounds, keys, middle, stop, setting),
        length)

  if len(rounds) == 1:
    # One distinct round raised to its count (Flower's ledger): one round
    # more is another count, so the node would not be asked for again (the
    # profile keeps its certificate); kept, 1,000 rounds filled the cache.
    return compute()
  block = tuple(rounds[start:stop])
  held, node = _NODES.get((setting, tuple(keys[start:stop])),
                          lambda: (block, compute()))
  if held is not block and not all(
      a[0] == b[0] and a[3] == b[3] and np.array_equal(a[1], b[1])
      for a, b in zip(held, block)):
    node = compute()  # a hash collision: never reuse another's result
  return node


def _non_negative(probs) -> np.ndarray:
  probs = np.asarray(probs, np.float64)
  return probs if np.all(probs >= 0) else np.maximum(probs, 0.0)


# Tilts a Chernoff bound above a window tries when its own leave > 1e-30.
_CHERNOFF_TILTS = tuple(2.0**k for k in range(-4, 8))


class Rounds:
  """A ledger of grid PMFs (finite masses, +infinity mass, count).

  All on one grid of spacing `discretization`; the finite masses are
  non-negative and exact inputs (no FFT has touched them).
  """

  def __init__(self, discretization: float,
               rounds: Sequence[Tuple[int, np.ndarray, float, int]]):
    self.discretization = discretization
    self.rounds = [(lower, _non_negative(probs), infinity, count)
                   for lower, probs, infinity, count in rounds if count]
    self._flat = None
    self._moments: Dict[float, Tuple[np.ndarray, ...]] = {}

  def _flattened(self):
    """All rounds' (losses, log masses, segment starts, counts), flat."""
    if self._flat is None:
      kept = [(lower, probs, count) for lower, probs, _, count in self.rounds
              if np.any(probs > 0)] or [(0, np.ones(1), 0)]  # (count 0)
      losses = np.concatenate([(lower + np.arange(probs.size))
                               * self.discretization
                               for lower, probs, _ in kept])
      with np.errstate(divide='ignore'):
        logs = np.log(np.concatenate([probs for _, probs, _ in kept]))
      starts = np.cumsum([0] + [probs.size for _, probs, _ in kept])[:-1]
      counts = np.array([count for _, _, count in kept], dtype=np.float64)
      self._flat = (losses, logs, starts, counts)
    return self._flat

  def support(self) -> int:
    """Grid points the exact composition's finite masses span."""
    return 1 + sum(count * (probs.size - 1)
                   for _, probs, _, count in self.rounds)

  def lowest(self) -> int:
    """Grid index of the composition's lowest finite loss."""
    return sum(count * lower for lower, _, _, count in self.rounds)

  def largest_loss(self) -> float:
    """A float at or above the composition's largest loss of positive mass
    (+inf if any round has mass at +infinity): delta is 0 from there on."""
    if any(infinity > 0 for _, _, infinity, _ in self.rounds):
      return math.inf
    top = sum(count * (lower + int(np.flatnonzero(probs)[-1]))
              for lower, probs, _, count in self.rounds if np.any(probs > 0))
    return float(np.nextafter(top * self.discretization, np.inf))

  def infinity_mass(self) -> float:
    if any(infinity >= 1 for _, _, infinity, _ in self.rounds):
      return 1.0
    log_finite = sum(count * math.log1p(-infinity)
                     for _, _, infinity, count in self.rounds)
    return min(1.0, -math.expm1(log_finite) * (1 + 1e-12) + 1e-300)

  def _log_moments(self, tilt: float):
    """(counts, log M_j, tilted means, tilted variances of L_j) of the rounds
    with finite mass (log M_j is only used with a rounding allowance)."""
    if tilt not in self._moments:
      self._moments[tilt] = self._compute_log_moments(tilt)
    return self._moments[tilt]

  def _compute_log_moments(self, tilt: float):
    losses, logs, starts, counts = self._flattened()
    exponents = logs + tilt * losses
    peaks = np.maximum.reduceat(exponents, starts)
    sizes = np.diff(np.append(starts, losses.size))
    weights = np.exp(exponents - np.repeat(peaks, sizes))
    totals = np.add.reduceat(weights, starts)
    means = np.add.reduceat(weights * losses, starts) / totals
    centred = losses - np.repeat(means, sizes)
    variances = np.add.reduceat(weights * centred**2, starts) / totals
    return counts, peaks + np.log(totals), means, variances

  def _log_scale(self, tilt: float) -> Tuple[float, float]:
    """(sum_j count_j log M_j(tilt), a bound on its rounding error).

    Each log M_j = peak + log sum exp(x - peak) errs by a few ulps of the
    exponents' magnitudes (each exp's relative error), gamma_n (the sum)
    and an ulp of the result; the weighted sum by gamma_{J+8} of its terms.
    """
    counts, log_moments, _, _ = self._log_moments(tilt)
    losses, logs, starts, _ = self._flattened()
    magnitudes = np.abs(logs) + np.abs(tilt * losses)
    magnitudes[~np.isfinite(magnitudes)] = 0.0
    largest = np.maximum.reduceat(magnitudes, starts)
    sizes = np.diff(np.append(starts, losses.size)).astype(np.float64)
    per_round = (sizes + 8) * UNIT_ROUNDOFF / (1 - (sizes + 8) * UNIT_ROUNDOFF)
    per_round *= 1 + 4 * largest + np.abs(log_moments)
    return (float(np.sum(counts * log_moments)),
            _gamma(counts.size + 8) * float(np.sum(counts
                                                   * np.abs(log_moments)))
            + float(np.sum(counts * per_round)) * (1 + 1e-9))

  def saddle_point(self, epsilon: float) -> float:
    """The tilt at which the composition's tilted mean is `epsilon` (>= 0),
    snapped to a grid of ratio 2^(1/8) so that nearby queries share it
    (safeguarded Newton: the mean rises with the tilt, its slope is the
    tilted variance)."""
    def moments(tilt):
      counts, _, means, variances = self._log_moments(tilt)
      return (float(np.sum(counts * means)),
              float(np.sum(counts * variances)))
    mean, variance = moments(0.0)
    if not self.rounds or mean >= epsilon or variance <= 0:
      return 0.0
    low, high, width = 0.0, np.inf, np.inf
    tilt = (epsilon - mean) / variance
    for _ in range(60):
      tilt = min(tilt, 1e4)
      mean, variance = moments(tilt)
      low, high = (tilt, high) if mean < epsilon else (low, tilt)
      # Newton, kept inside the bracket and at most 4x up while unbounded;
      # bisection when an unconverged step did not halve the bracket: a
      # round with a light but far tail makes the mean jump, and Newton
      # from either side of the jump lands next to the other end, forever
      # (the k-RR ledger of ROUNDOFF-CERTIFIED (v)).
      step = min(tilt + (epsilon - mean) / max(variance, 1e-300),
                 4 * tilt + 1)
      if not low < step < high or (high - low > 0.5 * width
                                   and abs(step - tilt) > 1e-3 * tilt):
        step = 0.5 * (low + high)
      width = high - low
      if abs(step - tilt) <= 1e-3 * tilt or (
          high < np.inf and high - low <= 1e-3 * high):
        tilt = step
        break
      tilt = step
    if tilt <= 1e-6:
      return 0.0
    return float(2.0 ** (round(8 * math.log2(tilt)) / 8))

  def window(self, tilt: float, epsilon: float) -> Tuple[int, int]:
    """(first grid index, length) of the losses a certificate resolves: the
    whole support if it fits, else a power-of-two window from well below
    `epsilon` (a quarter of it) to 24 tilted standard deviations above,
    wider while the Chernoff bound above it exceeds 1e-30, its start
    snapped to an eighth of its length. Any window is sound (masses beyond
    it wrap around onto others, all non-negative, and those above it are
    also counted at +infinity). Where the tilt times the deviation is at
    least 1 the window is the power of two nearest to 32 deviations, not
    the next (at least 22.6: from 5.6 below `epsilon` to 17 above): the
    mass below it wraps onto losses whose scale back is e^-17 of epsilon's
    or less, and the transforms halve where 32 deviations sit just above a
    power of two (Flower's Poisson ledger at round 1,000: 87,000 grid
    points). Untilted, a long left tail (Poisson's add half) wrapped onto
    the top would show (1e-6 of delta)."""
    support = self.support()
    lower = self.lowest()
    counts, _, _, variances = self._log_moments(tilt)
    spread = math.sqrt(float(np.sum(counts * variances)))
    width = 32 * spread / self.discretization + 64
    length = min(MAX_CERTIFIED_BUCKETS, (
        1 << max(0, round(math.log2(width))) if tilt * spread >= 1
        else _transform_length(int(width))))
    def placed(length):
      step = max(1, length // 8)
      start = int(math.floor(epsilon / self.discretization)) - length // 4
      return max(lower, (start // step) * step)
    # Heavy tails (a rare round with large losses) need more than the
    # spread: widen until the Chernoff bound above the window vanishes.
    while (length < min(MAX_CERTIFIED_BUCKETS, _transform_length(support))
           and self._mass_above(placed(length) + length, tilt) > 1e-30):
      length *= 2
    if _transform_length(support) <= length:
      return lower, _transform_length(support)
    return placed(length), length

  def _mass_above(self, index: int, tilt: float) -> float:
    """Chernoff bound on the exact composition's finite mass at losses of
    grid index >= `index`: min over tilts t of M(t)^T e^{-t index d}, at
    `tilt` and near the best t (Gaussian approximation from `tilt`); if
    that leaves more than 1e-30, also at powers of two (the approximation
    overshoots for wide rounds at tilt 0, where t = 0 itself bounds
    nothing)."""
    counts, _, means, variances = self._log_moments(tilt)
    variance = float(np.sum(counts * variances))
    gap = index * self.discretization - float(np.sum(counts * means))
    best = 1.0
    for tilts in ({tilt, tilt + gap / variance if variance > 0 else 2 * tilt},
                  _CHERNOFF_TILTS):
      if best <= 1e-30:
        break
      for other in tilts:
        if not 0 < other < np.inf:
          continue
        scale, slack = self._log_scale(other)
        exponent = scale + slack - other * index * self.discretization
        best = min(best, math.exp(min(exponent, 0.0)) * (1 + _TILT_MARGIN))
    return best

  def certified_masses(self, tilt: float, first: int, length: int
                       ) -> Tuple[int, np.ndarray, float]:
    """(first, u, +infinity mass): u >= the exact composition's finite
    masses at the grid points first ... first + length - 1, the +infinity
    mass >= the rounds' +infinity mass and their finite mass beyond
    (ROUNDOFF-CERTIFIED)."""
    d = self.discretization
    kept = [r for r in self.rounds if np.any(r[1] > 0)]
    if not kept:  # no finite mass at all
      return first, np.zeros(1), self.infinity_mass()
    keys = [(lower, count, probs.size, hash(probs.tobytes()))
            for lower, probs, _, count in kept]
    node = _composed_node(kept, keys, 0, len(kept),
                          (d, tilt, length))
    # Entry j holds the exact tilted masses at indices node.lower + j
    # + m length (all m; non-negative, so their sum bounds each): rotate so
    # that entry i stands for grid index first + i.
    node = _fitted(node, length)
    values = np.zeros(length)
    values[:node.values.size] = node.values
    values = np.roll(values, -((first - node.lower) % length))
    error = node.error
    losses = (first + np.arange(length)) * d
    log_scale = node.log_scale
    slack = _gamma(len(kept) + 8) * (node.abs_scale + np.abs(tilt * losses)
                                     + 1)
    with np.errstate(over='ignore'):
      factor = np.exp(log_scale - tilt * losses + slack) * (1 + _TILT_MARGIN)
      bounded = np.maximum(values + error, 0.0)
      # 0 bounds the exact tilted mass: 0 whatever the factor (even inf).
      # Where the exp or the product underflows, each errs by at most half
      # the smallest subnormal (times the bound, for the exp): the added
      # ceil(1 + bound) subnormals cover both (a sum of subnormals is exact;
      # otherwise the margin covers the rounding and the sum only rounds up).
      masses = np.where(bounded > 0, bounded * np.where(bounded > 0, factor,
                                                        1.0)
                        + np.ldexp(np.ceil(1.0 + bounded), -1074), 0.0)
    # No mass of a composition exceeds the product of the rounds' totals.
    log_total = sum(count * math.log(max(_norms(probs)[0], 1e-300))
                    for _, probs, _, count in self.rounds) * (1 + 1e-12)
    total = math.exp(log_total) * (1 + 1e-9) if log_total < 700 else np.inf
    beyond = (0.0 if first + length > node.lower + self.support() - 1
              else self._mass_above(first + length, tilt))
    return (first, np.minimum(masses, total),
            min(1.0, self.infinity_mass() + beyond * (1 + 1e-12)))


def combine(rounds: List[Rounds]) -> Optional[Rounds]:
  """One ledger of all rounds (None if any is None or the grids differ)."""
  if any(r is None for r in rounds):
    return None
  spacings = {r.discretization for r in rounds}
  if len(spacings) != 1:
    return None
  return Rounds(spacings.pop(), [round_ for r in rounds for round_ in r.rounds])


def lower_masses(discretization: float,
                 rounds: Sequence[Tuple[int, np.ndarray, int]], tilt: float
                 ) -> Optional[Tuple[int, np.ndarray]]:
  """(first, l): l <= the exact composition's finite masses at grid
  indices first, first + 1, ... (ROUNDOFF-LOWER), or None when its
  support exceeds `MAX_CERTIFIED_BUCKETS`.

  `rounds` holds (grid index of probs[0], non-negative probs, count). The
  mirror of `certified_masses`: each round is tilted rounded *down*
  (p e^{tilt L} / M^ times a factor below one), so the exact composition
  of those vectors is below the exact tilted composition; the transform
  covers the whole support (no entry wraps around), so the computed
  vector minus its proven l2 error (an entrywise bound) is below that
  composition; the scale back, exp(sum count log M^ - tilt L), is rounded
  down too. Only zeros where the error dominates: far from the saddle
  point of `tilt`.
  """
  kept = [(lower, _non_negative(probs), count)
          for lower, probs, count in rounds if count and np.any(probs > 0)]
  if not kept:
    return 0, np.zeros(1)
  support = 1 + sum(count * (probs.size - 1) for _, probs, count in kept)
  length = _transform_length(support)
  if length > MAX_CERTIFIED_BUCKETS:
    return None
  node = None
  for lower, probs, count in kept:
    tilted, log_moment = _tilted_round(lower, probs, discretization, tilt, -1)
    # An exp that underflows may round up to the smallest subnormal.
    tilted = np.maximum(tilted - _SUBNORMAL, 0.0)
    leaf = CertifiedVector(tilted, 0.0, _norms(tilted)[0], lower, log_moment,
                 abs(log_moment))
    powered = certified_power(leaf, count, length)
    node = powered if node is None else certified_product(node, powered, length)
  assert node is not None
  losses = (node.lower + np.arange(node.values.size)) * discretization
  slack = _gamma(len(kept) + 8) * (node.abs_scale + np.abs(tilt * losses) + 1)
  with np.errstate(over='ignore', under='ignore'):
    factor = np.exp(node.log_scale - tilt * losses - slack) * (
        1 - _TILT_MARGIN)
    # Where the product underflows it errs by half a subnormal at most.
    masses = np.maximum(np.maximum(node.values - node.error, 0.0)
                        * np.minimum(factor, np.finfo(np.float64).max)
                        - _SUBNORMAL, 0.0)
  return node.lower, masses
