"""A radix-2 FFT whose round-off is proven (Higham Thm 24.2).

IDs: ROUNDOFF-CERTIFIED

numpy's pocketfft runs mixed radix-8/4/2 passes, outside the theorem as
stated. This is the algorithm of the theorem, operation for operation:
F_n = A_t ... A_1 P_n (n = 2^t), P_n the bit reversal (exact), each A_k the
butterflies (a, b) -> (a + w b, a - w b) of half-length L/2 with
w = omega_L^j. Every real operation is one numpy ufunc call on float64
arrays, so each is one IEEE 754 operation rounded to nearest (no fused
multiply-add can merge them): a complex product by the standard formula
errs by at most sqrt(2) gamma_2 (Higham Lemma 3.5), a complex sum by u.

Twiddles are w^j = T_high[j >> m] * T_low[j & (2^m - 1)], both tables
rounded to nearest from 45-digit decimal Taylor series (each component
within half an ulp of a value within 1e-30, so |T - w| <= u + 2e-30), their
product by the standard
formula: |w^ - w| <= `twiddle_error()` ~ 4.9 u. Only tables of about
sqrt(n) entries are evaluated in decimal.
"""

import decimal
import math
from typing import Tuple, Union

import numpy as np

from shuffle_accountants import _cache

__all__ = ['UNIT_ROUNDOFF', 'twiddle_error', 'multiply', 'square', 'transform']

UNIT_ROUNDOFF = 2.0**-53
# pi to 60 digits (the decimal series' only constant).
_PI = decimal.Decimal(
    '3.14159265358979323846264338327950288419716939937510582097494')
_DIGITS = 45
# Bound on |decimal value - true value| of one table component: 45-digit
# arithmetic over ~100 operations on terms below e^pi, the series cut at a
# term below 1e-44 (alternating, decreasing: the rest is smaller), pi's
# digits (error < 1e-60 times an angle factor below 1).
_TABLE_DECIMAL_ERROR = 1e-30


def _gamma(k: float) -> float:
  return k * UNIT_ROUNDOFF / (1 - k * UNIT_ROUNDOFF)


def twiddle_error() -> float:
  """mu: a bound on |w^ - w| of every computed twiddle factor.

  Each table entry has components within half an ulp (<= u times the
  component, as both are at most 1) plus the decimal error, so
  |T - w| <= t = u + 2e-30. A product of two entries:
  |T1 T2 - w1 w2| <= t (1 + t) + t, and its rounding by the standard formula
  at most sqrt(2) gamma_2 |T1 T2| <= sqrt(2) gamma_2 (1 + t)^2.
  """
  table = UNIT_ROUNDOFF + 2 * _TABLE_DECIMAL_ERROR
  mu = (table * (1 + table) + table
        + math.sqrt(2) * _gamma(2) * (1 + table)**2)
  return mu * (1 + 1e-12)


def _cos_sin(numerator: int, denominator: int) -> Tuple[float, float]:
  """cos and sin of the angle 2 pi numerator / denominator in [0, pi],
  rounded to nearest from the 45-digit series (float(Decimal) rounds
  correctly)."""
  with decimal.localcontext() as context:
    context.prec = _DIGITS
    angle = 2 * _PI * numerator / denominator
    tiny = decimal.Decimal('1e-44')
    square = angle * angle
    sums = []
    for term, k in ((decimal.Decimal(1), 0), (angle, 1)):
      total = term
      while abs(term) >= tiny:
        term = -term * square / ((k + 1) * (k + 2))
        k += 2
        total += term
      sums.append(total)
  return float(sums[0]), float(sums[1])


@_cache.cached(4 * 2**20, _cache.atoms_bytes)
def _table(length: int, step: int, size: int) -> Tuple[np.ndarray, np.ndarray]:
  """exp(-2 pi i j step / length), j < size: (real, imaginary)."""
  values = [_cos_sin(j * step, length) for j in range(size)]
  real = np.array([c for c, _ in values])
  imag = -np.array([s for _, s in values])
  real.flags.writeable = imag.flags.writeable = False
  return real, imag


@_cache.cached(32 * 2**20, _cache.atoms_bytes)
def _twiddles(length: int) -> Tuple[np.ndarray, np.ndarray]:
  """omega_length^j = exp(-2 pi i j / length), j < length / 2."""
  half = max(1, length // 2)
  low_bits = (half.bit_length() - 1) // 2
  low_size = 1 << low_bits
  low_real, low_imag = _table(length, 1, low_size)
  high_real, high_imag = _table(length, low_size, half // low_size)
  real, imag = multiply(high_real[:, None], high_imag[:, None],
                        low_real[None, :], low_imag[None, :])
  real, imag = real.ravel(), imag.ravel()
  # exp(0) = 1 exactly; the products by it are exact anyway.
  real.flags.writeable = imag.flags.writeable = False
  return real, imag


def multiply(a_real, a_imag, b_real, b_imag, out=None
             ) -> Tuple[np.ndarray, np.ndarray]:
  """(a_real + i a_imag)(b_real + i b_imag) by the standard formula, four
  products and two sums, each rounded once (Higham Lemma 3.5); into
  `out` = (real, imaginary, scratch) arrays of the result's shape if given."""
  if out is None:
    shape = np.broadcast_shapes(np.shape(a_real), np.shape(b_real))
    out = np.empty(shape), np.empty(shape), np.empty(shape)
  real, imag, scratch = out
  np.multiply(a_real, b_real, out=real)
  np.multiply(a_imag, b_imag, out=scratch)
  real -= scratch
  np.multiply(a_real, b_imag, out=imag)
  np.multiply(a_imag, b_real, out=scratch)
  imag += scratch
  return real, imag


def square(real, imag) -> Tuple[np.ndarray, np.ndarray]:
  """(real + i imag)^2, in place, bit for bit the standard formula's value
  (its two products a b and b a are equal; their sum is an exact doubling)."""
  scratch = np.multiply(imag, imag)
  np.multiply(real, imag, out=imag)
  imag *= 2
  real *= real
  real -= scratch
  return real, imag


def transform(real: np.ndarray, imag: np.ndarray, inverse: bool = False
              ) -> Tuple[np.ndarray, np.ndarray]:
  """The DFT (inverse: its inverse) of real + i imag, of power-of-two length,
  by the radix-2 Cooley-Tukey algorithm of Higham Thm 24.2.

  Stockham order: before the stage of half-length h the data are the
  h-point DFTs X[k, c] (k < h) of the subsequences x[c], x[c + C], ...
  (C = n / h), and the stage forms X'[k] = E[k] + w^k O[k],
  X'[k + h] = E[k] - w^k O[k] with E, O the subsequences c < C/2 and
  c >= C/2, w = omega_2h: the same butterflies on the same values as the
  bit-reversed form of the theorem (only where results are stored
  differently), so the same rounding errors. The arrays are (h, C) while
  C >= 2h, then transposed once (an exact copy), so that numpy's inner
  loops stay at least sqrt(n) long.

  The inverse is conj(F conj(z)) / n: conjugation is exact and commutes
  with every rounding, so it runs the same algorithm with conjugate
  twiddles; the division by n is exact (a power of two) barring underflow.
  """
  length = real.size
  if length & (length - 1) or not length:
    raise ValueError(f'length={length} is not a power of two')
  twiddle_real, twiddle_imag = _twiddles(length)
  if inverse:
    twiddle_imag = -twiddle_imag
  x_real: np.ndarray = np.array(real, dtype=np.float64).reshape(1, length)
  x_imag: np.ndarray = np.array(imag, dtype=np.float64).reshape(1, length)
  # Reused buffers (fresh large arrays cost page faults at every stage).
  spare_real, spare_imag = np.empty(length), np.empty(length)
  scratch = np.empty((3, length // 2))
  transposed = False
  half = 1
  first: Union[slice, Tuple[slice, slice]]
  second: Union[slice, Tuple[slice, slice]]
  while half < length:
    if not transposed and 2 * half > length // half:
      transposed_shape = (length // half, half)
      np.copyto(spare_real.reshape(transposed_shape), x_real.T)
      np.copyto(spare_imag.reshape(transposed_shape), x_imag.T)
      x_real, spare_real = spare_real.reshape(transposed_shape), (
          x_real.reshape(length))
      x_imag, spare_imag = spare_imag.reshape(transposed_shape), (
          x_imag.reshape(length))
      transposed = True
    columns = length // half
    if transposed:  # (columns, half): subsequences along axis 0
      even = x_real[:columns // 2], x_imag[:columns // 2]
      odd = x_real[columns // 2:], x_imag[columns // 2:]
      twiddle = (twiddle_real[::columns // 2][:half][None, :],
                 twiddle_imag[::columns // 2][:half][None, :])
      shape, first, second = ((columns // 2, 2 * half), np.s_[:, :half],
                              np.s_[:, half:])
    else:  # (half, columns)
      even = x_real[:, :columns // 2], x_imag[:, :columns // 2]
      odd = x_real[:, columns // 2:], x_imag[:, columns // 2:]
      twiddle = (twiddle_real[::columns // 2][:half][:, None],
                 twiddle_imag[::columns // 2][:half][:, None])
      shape, first, second = ((2 * half, columns // 2), np.s_[:half],
                              np.s_[half:])
    # w^0 = 1: the products of the first stage are exact, skipped.
    product = odd if half == 1 else multiply(
        *odd, *twiddle, out=[part.reshape(odd[0].shape) for part in scratch])
    out_real = spare_real.reshape(shape)
    out_imag = spare_imag.reshape(shape)
    np.add(even[0], product[0], out=out_real[first])
    np.subtract(even[0], product[0], out=out_real[second])
    np.add(even[1], product[1], out=out_imag[first])
    np.subtract(even[1], product[1], out=out_imag[second])
    spare_real, spare_imag = x_real.reshape(length), x_imag.reshape(length)
    x_real, x_imag = out_real, out_imag
    half *= 2
  x_real, x_imag = x_real.reshape(length), x_imag.reshape(length)
  if inverse:
    levels = length.bit_length() - 1
    x_real, x_imag = np.ldexp(x_real, -levels), np.ldexp(x_imag, -levels)
  return x_real, x_imag
