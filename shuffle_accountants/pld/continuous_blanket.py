"""The continuous privacy blanket of shuffled scalar Gaussian reports.

IDs: NUM-BLANKET [UB]

Scale C = 1. The randomizer reports x + N(0, sigma^2), x in [-1, 1]. For
every y, inf_x N(x, sigma^2)(y) = phi_sigma(|y| + 1) =: u(y), of total mass
gamma = 2 Phi(-1 / sigma); with omega = u / gamma, every report law is
gamma omega + (1 - gamma) LO(x). For the pair (x, x') = (1, -1) the
likelihood ratios to omega are rho(y) = gamma e^{k y}, rho'(y) = gamma on
y >= 0 and the mirror image on y < 0, k = 2 / sigma^2.

Bound (docs/mathematics.md NUM-BLANKET), for eps >= 0 and a = e^eps: an
adversary who also learns which other users drew from the blanket sees the
target's report among M ~ Bin(n - 1, gamma) omega-draws, and

  delta(eps) <= ell + E_M[ E[(sum_{j=0}^{M} L_j)_+] / (M + 1) ],

with L_j = min(rho, gamma e^eta)(Y_j) - a min(rho', gamma e^eta)(Y_j), Y_j iid
omega, and ell the target's mass above the clamp (P-mass where rho exceeds
gamma e^eta, minus gamma e^eta times its omega-mass). With
x_+ <= e^{lambda x - 1} / lambda for every lambda > 0 and the binomial sum in
closed form,

  delta(eps) <= ell + ((1 - gamma + gamma m(lambda))^n - (1 - gamma)^n)
                      / (n gamma e lambda),    m(lambda) = E[e^{lambda L}].

m(lambda) is bounded from above on cells of y (L is monotone in |y| on each
half line, so each cell takes its sup) with the exact Gaussian mass of each
cell, rounded up. Any lambda and any clamp give a valid bound; the smallest
over a few of each is taken.
"""

import math
from typing import Optional, Tuple, Union

import numpy as np
from scipy import special
from scipy import stats

from shuffle_accountants import _cache
from shuffle_accountants import _search
from shuffle_accountants import _validation
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import discrete

__all__ = [
    'NAME', 'ENVELOPE_NAME', 'NO_AMPLIFICATION', 'blanket_mass',
    'blanket_deltas', 'envelope_blanket_deltas', 'vector_blanket_deltas',
    'laplace_blanket_deltas', 'gaussian_shuffle_atoms', 'laplace_shuffle_atoms',
    'extreme_pair_epsilon', 'threshold_count_epsilon_lower_bound',
]

# Cells of y in [0, clamp] on each half line.
_CELLS = 400
# Cells of the plain-clipping envelope (each takes its sup: finer).
_ENVELOPE_CELLS = 800
# Clamp points y_eta = 1 + sigma z (the leak ell is a Gaussian tail at z).
_CLAMP_SCORES = (4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 8.0, 9.0)
# lambda is searched on a log grid, then refined around the best point.
_LAMBDA_POINTS = 32
# Relative and absolute allowance for rounding in the cell masses and sums.
_RELATIVE_ERROR = 1e-9
_ABSOLUTE_ERROR = 1e-300
# Blanket bounds are evaluated at this many epsilons (chords in between).
_BLANKET_POINTS = 100
# The profile is built up to the no-amplification epsilon at this delta
# (larger losses go to +infinity with their profile value).
_SMALLEST_DELTA = 1e-14

NAME = 'NUM-BLANKET continuous privacy blanket'
ENVELOPE_NAME = 'NUM-BLANKET (v) envelope of every clipped pair'
NO_AMPLIFICATION = 'GAUSS-NO-GAIN Gaussian pair (no amplification)'


def blanket_mass(noise_multiplier: float) -> float:
  """gamma = 2 Phi(-1 / sigma): the mass of inf_x N(x, sigma^2) over [-1, 1]."""
  return float(special.erfc(1.0 / (noise_multiplier * math.sqrt(2.0))))


def _tail(z: np.ndarray) -> np.ndarray:
  """P[N(0, 1) > z]."""
  return special.ndtr(-np.asarray(z, dtype=np.float64))


def _clamp_terms(noise_multiplier: float, clamp: float, cells: int = _CELLS):
  """(cell edges, omega-masses per cell and half line, E_omega[rho | cell]
  on y >= 0, top mass, leak)."""
  sigma = noise_multiplier
  gamma = blanket_mass(sigma)
  edges = np.linspace(0.0, clamp, cells + 1)
  upper_tails = _tail((edges + 1.0) / sigma)
  masses = (upper_tails[:-1] - upper_tails[1:]) / gamma
  masses = masses * (1 + _RELATIVE_ERROR) + _ABSOLUTE_ERROR
  top = float(upper_tails[-1]) / gamma * (1 + _RELATIVE_ERROR)
  # P[N(1, s^2) in cell] / omega(cell) = E_omega[rho | cell], rounded up
  # and down (`masses` is rounded up by the relative error).
  target_tails = _tail((edges - 1.0) / sigma)
  target = target_tails[:-1] - target_tails[1:]
  means = (target * (1 + _RELATIVE_ERROR)
           / np.maximum(masses * (1 - 3 * _RELATIVE_ERROR), 1e-300),
           target * (1 - _RELATIVE_ERROR) / masses)
  # ell = P[N(1, s^2) > c] - e^{k c} P[N(-1, s^2) > c], with log-space terms.
  k = 2.0 / sigma**2
  log_first = special.log_ndtr(-(clamp - 1.0) / sigma)
  log_second = k * clamp + special.log_ndtr(-(clamp + 1.0) / sigma)
  leak = math.exp(log_first) * -math.expm1(min(0.0, log_second - log_first))
  return edges, masses, means, top, leak * (1 + _RELATIVE_ERROR) + 1e-300


def _log_bound(num_users: int, gamma: float, log_m: np.ndarray,
               lambdas: np.ndarray) -> np.ndarray:
  """log of ((1 - g + g m)^n - (1 - g)^n) / (n g e lambda), elementwise."""
  n = num_users
  with np.errstate(over='ignore', invalid='ignore', divide='ignore'):
    m_minus_one = np.expm1(log_m)
    first = n * np.log1p(gamma * m_minus_one)
    second = n * math.log1p(-gamma) if gamma < 1 else -np.inf
    value = (first + np.log(-np.expm1(np.minimum(second - first, 0.0)))
             - math.log(n * gamma) - 1.0 - np.log(lambdas))
  return np.where(np.isnan(value), np.inf, value)


def _chernoff_bound(num_users: int, gamma: float, values: np.ndarray,
                    weights: np.ndarray, leak: float) -> np.ndarray:
  """ell + min over lambda of the Chernoff bound, per row of `values`.

  `values[i, j]` bounds L from above on atom j for the i-th epsilon,
  `weights[j]` (or `weights[i, j]`) bounds the atom's omega-mass from
  above; `gamma` is the
  blanket probability of the others (at most the blanket's mass).
  """
  n = num_users
  weights = np.broadcast_to(weights, values.shape)
  largest = np.max(np.where(weights > 0, values, -np.inf), axis=1)
  positive = largest > 0
  best = np.full(values.shape[0], float(leak))  # L <= 0: the sum never is > 0
  if not np.any(positive):
    return np.minimum(best, 1.0)
  values, largest = values[positive], largest[positive]
  weights = weights[positive]
  low = np.log(1e-6 / largest)[:, None]
  high = np.log(700.0 / largest)[:, None]
  steps = np.linspace(0.0, 1.0, _LAMBDA_POINTS)[None, :]
  scores = None
  for _ in range(2):
    lambdas = np.exp(low + (high - low) * steps)  # [eps, lambda]
    with np.errstate(over='ignore'):
      log_m = special.logsumexp(lambdas[:, :, None] * values[:, None, :],
                                b=weights[:, None, :], axis=2)
    scores = _log_bound(n, gamma, log_m + _RELATIVE_ERROR, lambdas)
    where = np.argmin(scores, axis=1)
    rows = np.arange(where.size)
    low = np.log(lambdas[rows, np.maximum(where - 1, 0)])[:, None]
    high = np.log(lambdas[rows, np.minimum(where + 1,
                                           _LAMBDA_POINTS - 1)])[:, None]
  assert scores is not None  # the loop runs
  smallest = scores.min(axis=1)
  best[positive] = leak + np.exp(np.minimum(smallest, 0.0)) * (1 + 1e-9)
  return np.minimum(best, 1.0)


def _smallest_over_clamps(noise_multiplier: float, size: int, cells: int,
                          bound) -> np.ndarray:
  """The smallest of `bound(clamp, *_clamp_terms(...))` over the clamps of
  `_CLAMP_SCORES` whose leak is below 1 (ones where none is)."""
  sigma = noise_multiplier
  best = np.ones(size)
  if blanket_mass(sigma) <= 0:
    return best
  for score in _CLAMP_SCORES:
    clamp = 1.0 + sigma * score
    if 2.0 * clamp / sigma**2 > 700:
      continue
    terms = _clamp_terms(sigma, clamp, cells)
    if terms[-1] < 1:
      best = np.minimum(best, bound(clamp, *terms))
  return best


def blanket_deltas(num_users: int, noise_multiplier: float,
                   epsilons: np.ndarray) -> np.ndarray:
  """NUM-BLANKET upper bounds on delta(eps), eps >= 0 (rounded up). [UB]"""
  epsilons = np.asarray(epsilons, dtype=np.float64)
  sigma = noise_multiplier
  gamma = blanket_mass(sigma)
  return _smallest_over_clamps(
      sigma, epsilons.size, _CELLS,
      lambda clamp, edges, masses, means, top, leak: _two_point_deltas(
          num_users, gamma, np.exp(2.0 / sigma**2 * edges), masses, means,
          top, leak, epsilons))


def envelope_blanket_deltas(num_users: int, noise_multiplier: float,
                            epsilons: np.ndarray) -> np.ndarray:
  """NUM-BLANKET (v) for plain clipping: every pair at once, eps >= 0. [UB]

  For a = e^eps >= 1 and every pair with x >= x' (the others are mirror
  images: L_{x,x'}(y) = L_{-x,-x'}(-y), omega symmetric), the blanket loss
  L = rho_x - a rho_x' is at most, pointwise, E(y) =
  gamma (phi(dist(y, [-1, 1])) / phi(y + 1) - a) on y >= 0,
  gamma max(e^{(1 + s)^2 / (2 sigma^2)} - a e^{2 s / sigma^2}, 1 - a) on
  y = -s in [-1, 0), and gamma (1 - a) below -1. E is increasing on
  y >= 0 (each cell takes its right end); on [-1, 0) each term takes its
  sup over the cell. Clamp and leak as for the pair (1, -1) (E = rho_1 -
  a gamma on y >= 1), then the same Chernoff bound.
  """
  epsilons = np.asarray(epsilons, dtype=np.float64)
  sigma = noise_multiplier
  gamma = blanket_mass(sigma)
  k = 2.0 / sigma**2
  a = np.exp(np.minimum(epsilons, 700.0))[:, None]
  # y = -s in [-1, 0): omega-masses from the Gaussian tail at (s + 1) / sigma.
  near = np.linspace(0.0, 1.0, _ENVELOPE_CELLS + 1)
  near_tails = _tail((near + 1.0) / sigma)
  near_masses = ((near_tails[:-1] - near_tails[1:]) / max(gamma, 1e-300)
                 * (1 + _RELATIVE_ERROR) + _ABSOLUTE_ERROR)
  below = float(near_tails[-1]) / max(gamma, 1e-300) * (1 + _RELATIVE_ERROR)
  with np.errstate(over='ignore', invalid='ignore'):
    near_values = gamma * np.maximum(
        np.exp((near[None, 1:] + 1.0)**2 / (2 * sigma**2))
        - a * np.exp(k * near[None, :-1]), 1.0 - a)

  def bound(clamp, edges, masses, means, top, leak):
    del means  # each cell takes its sup: no conditional means needed
    right = edges[1:]
    log_ratio = np.where(right <= 1.0, (right + 1.0)**2 / (2 * sigma**2),
                         k * right)
    with np.errstate(over='ignore', invalid='ignore'):
      values = np.concatenate([
          gamma * (np.exp(log_ratio)[None, :] - a),
          gamma * (math.exp(k * clamp) - a), near_values,
          np.broadcast_to(gamma * (1.0 - a), (a.size, 1))], axis=1)
    values = np.where(np.isnan(values), np.inf, values)  # inf - inf
    weights = np.concatenate([masses, [top], near_masses, [below]])
    return _chernoff_bound(num_users, gamma, values, weights, leak)
  return _smallest_over_clamps(sigma, epsilons.size, _ENVELOPE_CELLS, bound)


def _two_point_deltas(num_users: int, gamma: float, growth: np.ndarray,
                      masses: np.ndarray, means, top: float,
                      leak: float, epsilons: np.ndarray) -> np.ndarray:
  """`_chernoff_bound` with each cell's law of L replaced by the two-point
  law on the ends of its range with the same mean (larger in convex order,
  so E[e^{lambda L}] only rises: Edmundson-Madansky).

  On the cell [y0, y1] of y >= 0, L = gamma e^{k y} - a gamma has mean
  E[rho | cell] - a gamma; on its mirror image L = gamma - a rho' with
  E[rho' | mirror] = E[rho | cell] (symmetry). `means` is a pair (upper,
  lower) of bounds on E[rho | cell].
  """
  a = np.exp(np.minimum(epsilons, 700.0))[:, None]
  low_growth, high_growth = growth[None, :-1], growth[None, 1:]
  span = np.maximum(high_growth - low_growth, 1e-300)
  # Share of the high end of e^{k y} (mean E[e^{k y} | cell]), rounded up
  # for y >= 0 (L rises with it) and down for the mirror (L falls with it).
  share, share_low = (
      np.clip((np.clip(mean / gamma, low_growth, high_growth) - low_growth)
              / span, 0.0, 1.0) for mean in means)
  with np.errstate(over='ignore'):
    plus = gamma * np.concatenate([
        np.broadcast_to(high_growth - a, (a.size, share.size)),
        np.broadcast_to(low_growth - a, (a.size, share.size)),
        np.full((a.size, 1), growth[-1]) - a], axis=1)
    # Mirror: L = gamma (1 - a e^{k |y|}), largest at the cell's inner end,
    # which carries the share of the low end of e^{k |y|}.
    minus = gamma * np.concatenate([
        1.0 - a * low_growth, 1.0 - a * high_growth,
        1.0 - a * np.full((1, 1), growth[-1])], axis=1)
  weights = np.concatenate([masses * share[0], masses * (1 - share[0]),
                            [top]])
  weights_minus = np.concatenate([masses * (1 - share_low[0]),
                                  masses * share_low[0], [top]])
  return _chernoff_bound(num_users, gamma, np.concatenate([plus, minus], 1),
                         np.concatenate([weights, weights_minus]), leak)


# Radial and angular cells of the d-dimensional blanket (d > 1).
_RADIAL_CELLS = 80
_ANGULAR_CELLS = 80
_VECTOR_CLAMP_SCORES = (3.0, 5.0, 7.0)
# Epsilons per block of the d > 1 evaluation (bounds its memory).
_BLOCK = 8


def _radial_mass(edges: np.ndarray, noise_multiplier: float,
                 dimension: int) -> np.ndarray:
  """P[sigma chi_d in each cell], from the CDF below the median, SF above."""
  scaled = edges / noise_multiplier
  cdf = stats.chi.cdf(scaled, dimension)
  sf = stats.chi.sf(scaled, dimension)
  return np.where(cdf[1:] < 0.5, np.diff(cdf), -np.diff(sf)).clip(0.0)


def vector_blanket_deltas(num_users: int, noise_multiplier: float,
                          dimension: int, epsilons: np.ndarray) -> np.ndarray:
  """NUM-BLANKET for d-dimensional Gaussian reports, eps >= 0. [UB]

  u(y) = phi_d(|y| + 1); for the pair (e1, -e1), with r = |y| and
  t = y_1 / r, rho = gamma e^{r (1 + t) / sigma^2} and
  rho' = gamma e^{r (1 - t) / sigma^2}. Under omega, r and t are
  independent: t = 2 B - 1, B ~ Beta((d - 1) / 2, (d - 1) / 2), and r has
  density proportional to that of sigma chi_d times
  e^{-(2 r + 1) / (2 sigma^2)}.
  L = gamma e^{r / s^2} (e^{y_1 / s^2} - a e^{-y_1 / s^2}) is increasing in
  y_1 = r t: on a cell [r0, r1] x [t0, t1] it is at most its value at
  y_1 = max(r0 t1, r1 t1) with the prefactor at r1 (bracket > 0) or r0
  (bracket <= 0); cell masses use the tilt at the start of 32
  sub-cells, over a lower bound on gamma, which is also the others' blanket
  probability (a smaller blanket is valid). Above the clamp radius r_c, rho is
  clamped at gamma e^{2 r_c / s^2}; the leak is at most P[|N(e1, s^2 I)| > r_c].
  """
  epsilons = np.asarray(epsilons, dtype=np.float64)
  sigma, d = noise_multiplier, dimension
  best = np.ones_like(epsilons)
  t_edges = np.linspace(-1.0, 1.0, _ANGULAR_CELLS + 1)
  angular = np.diff(stats.beta.cdf((t_edges + 1) / 2, (d - 1) / 2,
                                   (d - 1) / 2)).clip(0.0)
  angular = angular * (1 + _RELATIVE_ERROR) + _ABSOLUTE_ERROR
  for score in _VECTOR_CLAMP_SCORES:
    clamp = 1.0 + sigma * (math.sqrt(d) + score)
    eta = 2 * clamp / sigma**2
    if eta > 700:
      continue
    # Fine cells where omega's radius lives (sigma sqrt(d) +- 6 sigma),
    # coarse ones beyond (little mass, so little looseness).
    low_radius = max(0.0, sigma * (math.sqrt(d) - 6.0))
    bulk_end = min(clamp, sigma * (math.sqrt(d) + 6.0))
    r_edges = np.unique(np.concatenate([
        [0.0], np.linspace(low_radius, bulk_end, _RADIAL_CELLS + 1),
        np.linspace(bulk_end, clamp, _RADIAL_CELLS // 4 + 1)]))
    # u-masses of the radial cells, bounded on 32 sub-cells each (the tilt
    # e^{-(2 r + 1) / (2 s^2)} at their ends): within 1e-3 of each other.
    fine = np.append(np.concatenate([
        np.linspace(left, right, 32, endpoint=False)
        for left, right in zip(r_edges[:-1], r_edges[1:])]), r_edges[-1])
    fine_mass = _radial_mass(fine, sigma, d)
    log_tilt = -(2 * fine + 1) / (2 * sigma**2)
    starts = np.arange(0, fine.size - 1, 32)
    cell_high = np.add.reduceat(fine_mass * np.exp(log_tilt[:-1]), starts)
    cell_low = np.add.reduceat(fine_mass * np.exp(log_tilt[1:]), starts)
    above = float(stats.chi.sf(clamp / sigma, d)) * math.exp(log_tilt[-1])
    gamma_low = float(np.sum(cell_low)) * (1 - 1e-9)
    gamma_high = float(np.sum(cell_high) + above) * (1 + 1e-9)
    if num_users * gamma_high < 1:
      continue  # fewer than one blanket report expected: skipped (sound)
    leak = float(stats.ncx2.sf(clamp**2 / sigma**2, d, 1 / sigma**2))
    leak = leak * (1 + _RELATIVE_ERROR) + 1e-300
    if leak >= 1:
      continue
    masses = np.outer(cell_high, angular).ravel()
    masses = np.append(masses * (1 + _RELATIVE_ERROR), above) / gamma_low
    # L = gamma e^{r / s^2} h(y_1), h(v) = e^{v / s^2} - a e^{-v / s^2}
    # increasing; on a cell y_1 <= v_max = max(r0 t1, r1 t1), and the
    # prefactor is taken at r1 where h > 0, at r0 where h <= 0.
    inner, outer = r_edges[:-1, None], r_edges[1:, None]
    t_high = t_edges[None, 1:]
    v_max = np.maximum(inner * t_high, outer * t_high).ravel() / sigma**2
    log_outer = np.broadcast_to(outer / sigma**2, v_max.shape[:0] + (
        outer.size, t_high.size)).ravel()
    log_inner = np.broadcast_to(inner / sigma**2, (
        inner.size, t_high.size)).ravel()
    for start in range(0, epsilons.size, _BLOCK):
      block = epsilons[start:start + _BLOCK, None]
      with np.errstate(over='ignore'):
        h = np.exp(v_max)[None, :] - np.exp(np.minimum(block - v_max[None, :],
                                                       700.0))
        bracket = np.where(h > 0, np.exp(log_outer)[None, :] * h,
                           np.exp(log_inner)[None, :] * h)
        top = math.exp(eta) - np.exp(np.minimum(block, 700.0))
      values = np.concatenate([bracket, top], axis=1)
      values = np.where(values > 0, gamma_high * values, gamma_low * values)
      best[start:start + _BLOCK] = np.minimum(
          best[start:start + _BLOCK],
          _chernoff_bound(num_users, gamma_low, values, masses, leak))
  return best


def laplace_blanket_deltas(num_users: int, local_epsilon: float,
                           epsilons: np.ndarray) -> np.ndarray:
  """NUM-BLANKET for Laplace reports of scale b = 2 / eps0, eps >= 0. [UB]

  u(y) = e^{-(|y| + 1) / b} / (2 b), gamma = e^{-1 / b}; for the pair
  (1, -1), rho / gamma = e^{2 min(y, 1) / b} on y >= 0: bounded by e^eps0,
  so no clamp is needed (leak 0) and L is constant above y = 1.
  """
  epsilons = np.asarray(epsilons, dtype=np.float64)
  scale = 2.0 / local_epsilon
  gamma = math.exp(-1.0 / scale)
  edges = np.linspace(0.0, 1.0, _CELLS + 1)
  # omega on y >= 0 is e^{-y / b} / (2 b): cell masses, rounded up; the
  # target Lap(1, b) has density e^{-(1 - y) / b} / (2 b) on [0, 1].
  tails = 0.5 * np.exp(-edges / scale)
  exact = tails[:-1] - tails[1:]
  masses = exact * (1 + _RELATIVE_ERROR) + _ABSOLUTE_ERROR
  target = np.diff(0.5 * np.exp(-(1.0 - edges) / scale))
  means = (target * (1 + _RELATIVE_ERROR) / (exact * (1 - _RELATIVE_ERROR)),
           target * (1 - _RELATIVE_ERROR) / masses)
  top = float(tails[-1]) * (1 + _RELATIVE_ERROR)
  return _two_point_deltas(num_users, gamma, np.exp(edges * local_epsilon),
                           masses, means, top, 0.0, epsilons)


@_cache.cached(4 * 2**20, _cache.atoms_bytes)
def _coarse_bounds(kind: str, num_users: int,
                   parameter: Union[float, Tuple[float, int]], top: float):
  """(epsilons, NUM-BLANKET bounds) at `_BLANKET_POINTS` points of [0, top]."""
  # Geometric points: the blanket's epsilons scale like 1 / sqrt(n).
  coarse = np.append(0.0, np.geomspace(top * 1e-6, top, _BLANKET_POINTS - 1))
  if kind == 'laplace':
    assert not isinstance(parameter, tuple)  # local_epsilon
    return coarse, laplace_blanket_deltas(num_users, parameter, coarse)
  assert isinstance(parameter, tuple)  # (noise_multiplier, dimension)
  if kind == 'clipping':
    return coarse, envelope_blanket_deltas(num_users, parameter[0], coarse)
  sigma, dimension = parameter
  if dimension == 1:
    return coarse, blanket_deltas(num_users, sigma, coarse)
  return coarse, vector_blanket_deltas(num_users, sigma, dimension, coarse)


def _largest_epsilon(profile) -> float:
  """The epsilon at which `profile` falls to _SMALLEST_DELTA (bisection)."""
  above = lambda epsilon: profile(np.array([epsilon]))[0] > _SMALLEST_DELTA
  return _search.bisected(above, *_search.widened(above, 0.0, 1.0, 1e4),
                          60)[1]


def _laplace_profile(local_epsilon: float, epsilons: np.ndarray) -> np.ndarray:
  """delta(eps) of Lap(2 / b) vs Lap(0) at scale b = 2 / eps0.

  GAUSS-NO-GAIN's analogue: 1 - e^{(eps - eps0) / 2} on [0, eps0], 0 above,
  rounded up.
  """
  value = -np.expm1(np.minimum(epsilons - local_epsilon, 0.0) / 2)
  return np.minimum(value * (1 + _RELATIVE_ERROR) + 1e-15, 1.0)


def _shuffle_atoms(kind: str, num_users: int,
                   parameter: Union[float, Tuple[float, int]],
                   discretization: float, blanket: bool
                   ) -> privacy_loss.PldAtoms:
  """The smaller of the local pair's profile and NUM-BLANKET, as atoms.

  The NUM-BLANKET bounds (when `blanket`) are evaluated at
  `_BLANKET_POINTS` epsilons, chords in e^eps between them (the true
  profile is convex in e^eps); the pointwise minimum is convexified and
  connected on the grid of `discretization` (both orders: the pair
  (1, -1) is mirror-symmetric, CLONE-SWAP-SYMMETRY).
  """
  if kind != 'laplace':
    assert isinstance(parameter, tuple)  # (noise_multiplier, dimension)
    shift = checkin.gaussian_shift(parameter[0])
    local = lambda epsilons: checkin.gaussian_profile(shift, epsilons)
  else:
    assert not isinstance(parameter, tuple)  # local_epsilon
    local = lambda epsilons: _laplace_profile(parameter, epsilons)
  top = _largest_epsilon(local)
  d = max(discretization, top / discrete.MAX_PMF_BUCKETS * 4)
  upper = int(math.ceil(top / d))
  grid = np.arange(upper + 1) * d
  deltas = local(grid)
  if blanket:
    coarse, bounds = _coarse_bounds(kind, num_users, parameter, top)
    deltas = np.minimum(deltas, np.interp(np.exp(grid - top),
                                          np.exp(coarse - top), bounds))
  negative = -np.expm1(-grid[:0:-1]) + np.exp(-grid[:0:-1]) * deltas[:0:-1]
  full = np.concatenate([negative, deltas])
  x = np.exp((np.arange(-upper, upper + 1) - upper) * d)
  envelope = np.maximum(discrete.lower_convex_envelope(x, full), 0.0)
  pmf = discrete.profile_to_pmf(d, -upper, envelope)
  losses = (pmf.lower_index + np.arange(pmf.probs.size)) * d
  keep = pmf.probs > 0
  return privacy_loss.PldAtoms(losses[keep], pmf.probs[keep], pmf.infinity_mass)


def gaussian_shuffle_atoms(num_users: int, noise_multiplier: float,
                           discretization: float, randomized_rounding: bool,
                           dimension: int = 1) -> privacy_loss.PldAtoms:
  """A dominating pair for n shuffled Gaussian reports. [UB]

  GAUSS-NO-GAIN, and for scalars the smaller of GAUSS-NO-GAIN and
  NUM-BLANKET, at the pair (1, -1) for randomized rounding to +-1 (iv),
  through the envelope of every pair for plain clipping (v); vectors
  (d > 1) get GAUSS-NO-GAIN alone.
  """
  return _shuffle_atoms('gaussian' if randomized_rounding else 'clipping',
                        num_users, (noise_multiplier, 1), discretization,
                        dimension == 1)


def laplace_shuffle_atoms(num_users: int, local_epsilon: float,
                          discretization: float) -> privacy_loss.PldAtoms:
  """A dominating pair for n shuffled Laplace reports rounded to +-1 before
  the noise (NUM-BLANKET). [UB]"""
  return _shuffle_atoms('laplace', num_users, local_epsilon, discretization,
                        True)


def extreme_pair_epsilon(num_users: int, delta: float,
                         noise_multiplier: Optional[float] = None,
                         dimension: int = 1,
                         local_epsilon: Optional[float] = None) -> float:
  """The blanket bound at the pair (C, -C) (opposite unit vectors for d > 1),
  one round, beside the local pair. [ESTIMATE for plain clipping]

  Give `noise_multiplier` (Gaussian reports in R^`dimension`) or
  `local_epsilon` (Laplace reports). An upper bound for randomized rounding
  to +-C (d = 1); for plain clipping an estimate whose worst-pair step is
  unproven (NUM-BLANKET (iv)): never composed by default. The smallest
  epsilon on a grid at which the smaller of the local
  pair's and the blanket's delta is at most `delta` (4096 geometric points
  from 10^-6 times the local pair's epsilon at delta = 1e-14).
  """
  if (noise_multiplier is None) == (local_epsilon is None):
    raise ValueError('extreme_pair_epsilon needs exactly one of '
                     f'noise_multiplier={noise_multiplier} and '
                     f'local_epsilon={local_epsilon}.')
  num_users = _validation.check_integer('num_users', num_users, 1)
  _validation.check_real('delta', delta, 0.0, 1.0, min_inclusive=False)
  parameter: Union[float, Tuple[float, int]]
  if noise_multiplier is None:
    assert local_epsilon is not None  # exactly one is given
    _validation.check_local_epsilon(local_epsilon)
    if local_epsilon == 0:
      raise ValueError('local_epsilon must be in (0, 700]; got 0.')
    kind, parameter = 'laplace', local_epsilon
    local = lambda epsilons: _laplace_profile(local_epsilon, epsilons)
  else:
    _validation.check_real('noise_multiplier', noise_multiplier, 0.0,
                           min_inclusive=False)
    dimension = _validation.check_integer('dimension', dimension, 1)
    kind, parameter = 'gaussian', (noise_multiplier, dimension)
    shift = checkin.gaussian_shift(noise_multiplier)
    local = lambda epsilons: checkin.gaussian_profile(shift, epsilons)
  top = _largest_epsilon(local)
  coarse, bounds = _coarse_bounds(kind, num_users, parameter, top)
  grid = np.append(0.0, np.geomspace(top * 1e-6, top, 4096))
  deltas = np.minimum(local(grid), np.interp(np.exp(grid - top),
                                             np.exp(coarse - top), bounds))
  return float(grid[np.argmax(deltas <= delta)]) if np.any(
      deltas <= delta) else top


def _count_pair_delta(num_users: int, target_rate: float, other_rate: float,
                      epsilons: np.ndarray) -> np.ndarray:
  """Exact delta(eps) of Bin(n - 1, q) + Bern(p) vs Bin(n, q), on a window.

  Counts outside mean +- 40 standard deviations (and 40 counts) are left
  out, which can only lower the value: a lower bound.
  """
  n, p, q = num_users, target_rate, other_rate
  spread = 40 * math.sqrt(n * q * (1 - q)) + 40
  counts = np.arange(max(0, math.floor(n * q - spread)),
                     min(n, math.ceil(n * q + spread + 1)) + 1)
  others = stats.binom.logpmf(counts, n - 1, q)
  shifted = stats.binom.logpmf(counts - 1, n - 1, q)
  log_p = np.logaddexp(math.log1p(-p) + others if p < 1 else -np.inf,
                       math.log(p) + shifted if p > 0 else -np.inf)
  log_q = stats.binom.logpmf(counts, n, q)
  with np.errstate(over='ignore', invalid='ignore'):
    terms = np.exp(log_p)[None, :] * -np.expm1(np.minimum(
        0.0, epsilons[:, None] + log_q[None, :] - log_p[None, :]))
  return np.nansum(terms, axis=1)


def threshold_count_epsilon_lower_bound(num_users: int,
                                        noise_multiplier: float,
                                        delta: float) -> float:
  """NUM-LB: epsilon that n shuffled scalar Gaussian reports cannot beat. [LB]

  The dataset pair "the target holds 1 or -1, every other user holds -1",
  post-processed to the number of reports above a threshold t: an exact
  binomial pair (the target's report exceeds t with probability
  P[N(1, s^2) > t] or P[N(-1, s^2) > t], each other's with the latter).
  The largest epsilon over a few thresholds at which its delta exceeds
  `delta` (within 1e-4, rounded down). A lower bound [LB, PAIR], never
  composed.
  """
  sigma = noise_multiplier
  best = 0.0
  for score in np.linspace(0.0, 6.0, 25):
    threshold = -1.0 + sigma * score
    p = float(_tail((threshold - 1.0) / sigma))
    q = float(_tail((threshold + 1.0) / sigma))
    if q <= 0 or q >= 1:
      continue
    pair = lambda eps: _count_pair_delta(num_users, p, q, np.array([eps]))[0]
    if pair(best) <= delta:
      continue
    above = lambda eps: pair(eps) > delta
    low, _ = _search.bisected(
        above, *_search.widened(above, best, best + 1.0, 1e3), 40)
    best = max(best, low)
  return best
