"""PLDs of the shuffled check-in mixture and of shuffled Gaussian reports.

IDs: LABEL-MIXTURE, KHH-SUBSAMPLED, GAUSS-NO-GAIN, ZDW22-ONE-ORDER,
  CHECKIN-COARSE-GRIDS, CHECKIN-LATTICE

The sound replacement of LIEW-APPROACH2 (docs/mathematics.md):

* The number k of check-ins is revealed and its law Bin(n, gamma) does not
  depend on the data, so the k-labelled mixture of per-k dominating pairs
  dominates the round (docs/mathematics.md LABEL-MIXTURE). Its privacy profile
  is the Bin(n, gamma)-mixture of the per-k profiles.
* Given k, the participants are a uniform k-subset of the n users, so the
  round is a hidden sample of k users whose reports are shuffled:
  KHH-SUBSAMPLED [DOM] with ratio k / n, both orders dominated by taking the
  larger profile (docs/mathematics.md ZDW22-ONE-ORDER). Only hockey-stick
  divergences are combined here: for eps >= 0 each order's profile bounds that
  order of the mechanism (advanced joint convexity), their pointwise max bounds
  both, a mixture of per-label maxima bounds the maximum of the mixtures, and a
  symmetric PMF with that profile covers alpha < 1 through H_a(P||Q) = 1 - a + a
  H_{1/a}(Q||P). (Renyi moments are a different matter, docs/mathematics.md
  ORDERED-RDP-UNSOUND.)
* Base pairs: pure eps0-LDP reports use the FMT21 clone pair of k users
  [DOM]. Gaussian reports (clip norm C, noise sigma C) use the Gaussian pair
  N(2 / sigma, 1) vs N(0, 1) of the unshuffled reports (docs/mathematics.md
  GAUSS-NO-GAIN: no shuffling gain is claimed), whose subsampled profiles are
  analytic.
* Labels are grouped [a, b] and represented by the clone pair of a users
  (of the lattice point at or below a, CHECKIN-LATTICE, so that rounds share it;
  on a grid coarser by about 1 / ratio, CHECKIN-COARSE-GRIDS) and the ratio b /
  n: a k-user shuffle is a post-processing of an a-user one for k >= a (add the
  other reports, reshuffle), and the subsampled
  pair with a smaller ratio is a post-processing of one with a larger ratio
  (with probability ratio'/ratio keep the output, else redraw from Q). k = 0
  releases nothing (identical distributions). Labels outside a Chernoff
  window go to +infinity with a proven bound on their mass (docs/mathematics.md
  TAILS-TO-INFINITY).

The mixture profile on the grid (where few clones are expected, the
smallest with the mixtures at higher rates, CHECKIN-LATTICE) is turned into one
symmetric connect-the-dots PMF (`discrete.profile_to_pmf`), which
dominates both orders of the replace-one relation, also under composition.
"""

import math
from typing import Callable, List, Optional

import attr
import numpy as np
from scipy import special
from scipy import stats

from shuffle_accountants import _cache
from shuffle_accountants import _numerics
from shuffle_accountants import _validation
from shuffle_accountants.pairs import binomial
from shuffle_accountants.pairs import clone_pairs
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import lower_bounds

__all__ = [
    'MAX_CLONE_GROUPS', 'MAX_GAUSSIAN_GROUPS', 'GAUSSIAN_REACH',
    'BASE_GRID_RESOLUTION', 'EXACT_LATTICE', 'LATTICE_STEP',
    'CLONE_PROFILE_CACHE_BYTES', 'SCALE_RELATIVE_WIDTH', 'SCALE_RESOLUTION',
    'FEW_CLONES', 'MAX_HIGHER_RATES', 'Discretize', 'gaussian_shift',
    'gaussian_profile', 'subsampled_profile', 'largest_loss', 'base_grid',
    'lattice_users', 'clone_pair_grid_pmf', 'clone_pair_pmf', 'labels',
    'pmf_reach', 'loss_variance_bound', 'checkin_pmf', 'higher_rates',
    'capped_by', 'scale_resolution', 'loss_spread',
    'binary_rr_checkin_delta_lower_bound',
    'binary_rr_checkin_epsilon_lower_bound',
]

# Groups of check-in counts: each costs one clone PLD (pure LDP) or one
# analytic profile on the grid (Gaussian).
MAX_CLONE_GROUPS = 40
MAX_GAUSSIAN_GROUPS = 200
# Gaussian outputs beyond this many standard deviations (P-mass below
# e^-50) lie above the grid and are counted at +infinity.
GAUSSIAN_REACH = 10.0
# A subsampled base pair's grid resolves the round's losses to this fraction
# of the round's grid (`base_grid`).
BASE_GRID_RESOLUTION = 0.5
# Clone pairs of check-in groups are taken at user counts on a global
# lattice (`lattice_users`): exact below EXACT_LATTICE, then of this ratio.
EXACT_LATTICE = 512
LATTICE_STEP = 5e-3
# Byte budget of the clone pairs kept for the next rounds (docs/performance.md).
CLONE_PROFILE_CACHE_BYTES = 128 * 2**20
# `loss_spread` (the grid's scale): coarse clone groups, outputs merged on a
# grid this fraction of the clone pair's spread.
SCALE_RELATIVE_WIDTH = 0.01
SCALE_RESOLUTION = 1e-2
# Below this many expected clones a round also takes the bounds of higher
# rates (`higher_rates`).
FEW_CLONES = 100.0
MAX_HIGHER_RATES = 4
# Relative and absolute error allowance of the analytic Gaussian profile.
_PROFILE_RELATIVE_ERROR = 1e-9
_PROFILE_ABSOLUTE_ERROR = 1e-15

Discretize = Callable[[privacy_loss.PldAtoms, float], discrete.GridPmf]


def gaussian_shift(noise_multiplier: float) -> float:
  """mu = 2 / sigma: the replace-one shift of a clipped report in noise
  units."""
  return 2.0 / noise_multiplier


def gaussian_profile(shift: float, epsilons: np.ndarray) -> np.ndarray:
  """delta(eps) of N(shift, 1) vs N(0, 1) for real eps, rounded up. [DOM]

  Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), written as
  Phi(a) (1 - e^eps Phi(b) / Phi(a)) with log-space CDFs; the rounding of
  the difference is covered by an absolute allowance.
  """
  epsilons = np.asarray(epsilons, dtype=np.float64)
  log_first = special.log_ndtr(shift / 2 - epsilons / shift)
  log_second = epsilons + special.log_ndtr(-shift / 2 - epsilons / shift)
  ratio = np.exp(np.minimum(log_second - log_first, 0.0))
  delta = np.exp(log_first) * (1.0 - ratio)
  return np.clip(delta * (1 + _PROFILE_RELATIVE_ERROR)
                 + _PROFILE_ABSOLUTE_ERROR, 0.0, 1.0)


def _base_epsilon(epsilons: np.ndarray, sampling_ratio: float) -> np.ndarray:
  """log(1 + (e^eps - 1) / r) for eps > log(1 - r), without overflow.

  For eps > 0 it is eps - log r + log1p(-(1 - r) e^-eps): e^eps itself would
  overflow above 709 (tiny noise gives such losses) and turn the profile NaN.
  """
  r = sampling_ratio
  with np.errstate(over='ignore'):
    direct = np.log1p(np.expm1(epsilons) / r)
  stable = epsilons - np.log(r) + np.log1p(-(1 - r) * np.exp(-np.abs(epsilons)))
  return np.where(epsilons > 0, stable, direct)


def subsampled_profile(base_profile: Callable[[np.ndarray], np.ndarray],
                       sampling_ratio: float, epsilons: np.ndarray
                       ) -> np.ndarray:
  """Larger profile of both orders of KHH-SUBSAMPLED for a symmetric pair.

  With r the ratio and a = e^eps, for (M, Q), M = r P + (1 - r) Q:
    H_a(M || Q) = 1 - a                              if a <= 1 - r,
                = r H_{1 + (a - 1) / r}(P || Q)      otherwise;
    H_a(Q || M) = (1 - a (1 - r)) H_{a r / (1 - a (1 - r))}(Q || P)
                  if a (1 - r) < 1, else 0;
  and H(Q || P) = H(P || Q) for a symmetric base pair.
  """
  r = sampling_ratio
  epsilons = np.asarray(epsilons, dtype=np.float64)
  with np.errstate(over='ignore'):  # a = inf above eps = 709: second is 0
    a = np.exp(epsilons)
  first = np.where(a <= 1 - r, -np.expm1(np.minimum(epsilons, 0.0)), 0.0)
  upper = a > 1 - r
  with np.errstate(divide='ignore'):  # a -> 1 - r gives -inf: profile 1
    first[upper] = r * base_profile(_base_epsilon(epsilons[upper], r))
  second = np.zeros_like(epsilons)
  remaining = 1 - a * (1 - r) if r < 1 else np.ones_like(a)
  open_ = remaining > 0
  # log(a r / remaining) in log space: a r / remaining under- or overflows
  # for very negative eps or remaining near 0 (log 0 = -inf, inf - inf).
  second[open_] = remaining[open_] * base_profile(
      epsilons[open_] + np.log(r) - np.log(remaining[open_]))
  return np.maximum(first, second)


def largest_loss(base_largest: float, sampling_ratio: float) -> float:
  """Largest loss of either subsampled order, given the base pair's.

  log(1 + r (e^L - 1)) = log((1 - r) + r e^L), in log space so that a huge
  base loss L (tiny noise) does not overflow.
  """
  with np.errstate(divide='ignore'):  # r = 1 gives log(0) = -inf: fine
    return float(np.logaddexp(np.log1p(-sampling_ratio),
                              np.log(sampling_ratio) + base_largest))


def base_grid(discretization: float, sampling_ratio: float,
              largest_base_loss: float) -> float:
  """The grid of a base pair subsampled at `sampling_ratio`.

  See CHECKIN-COARSE-GRIDS.

  Subsampling maps a base loss l to f(l) = log(1 + r (e^l - 1)) (and the
  other order to -log(1 - r (1 - e^-l)), of slope at most r), whose slope
  r e^l / (1 + r (e^l - 1)) grows from r towards 1: a base grid of spacing
  d' resolves the round's losses to d' times the slope at the largest base
  loss U, which is about r d' only while r e^U << 1 (at eps0 = 8 and
  r = 0.002 it is 0.87 d'). The largest d * 2^j with that resolution
  <= d / 2: powers of two, so that the rounds of a ledger (similar ratios)
  share their conditional pairs. Any grid is sound (the chord profile
  bounds the pair's everywhere); this one only keeps the round tight.
  """
  slope = 1.0 / (1.0 + (1.0 - sampling_ratio) * math.exp(
      -largest_base_loss) / sampling_ratio)
  steps = np.floor(np.log2(BASE_GRID_RESOLUTION / slope))
  return discretization * 2.0**max(0.0, float(steps))


def lattice_users(num_users: int, step: Optional[float] = None) -> int:
  """The largest point of a global lattice of user counts at or below n.

  See CHECKIN-LATTICE.

  Exact below `EXACT_LATTICE`, then geometric of ratio 1 + `step` (default
  `LATTICE_STEP`):
  a shuffle of n reports is a post-processing of one of fewer
  (DOMINATING-ROUNDS), so the clone pair of the lattice point stands for n
  soundly, and the groups of every round of a ledger share it.
  """
  step = LATTICE_STEP if step is None else step
  if num_users < EXACT_LATTICE:
    return int(num_users)
  index = np.floor(np.log(num_users / EXACT_LATTICE) / np.log1p(step))
  point = int(np.floor(EXACT_LATTICE * np.exp(index * np.log1p(step))))
  return max(EXACT_LATTICE, min(point, int(num_users)))


# Conditional pairs of nearby rounds: one on a fine grid can be megabytes,
# hence a byte budget.
_SHARED_PAIRS = _cache.Lru(256 * 2**20, _cache.atoms_bytes,
                           'conditional clone pairs')


def clone_pair_grid_pmf(num_users: int, local_epsilon: float,
                        relative_width: float, discretization: float,
                        discretize) -> discrete.GridPmf:
  """FMT21-CLONES on a grid, from conditional pairs shared across calls. [DOM]

  The same pair as `clone_pair_pld_atoms`, but clone counts are grouped in
  *global* blocks (`_numerics.block_starts`, each at its smallest count,
  CLONE-MONOTONE) whose conditional pairs are computed once and kept
  (`_SHARED_PAIRS`, 256 MB): a check-in round needs the clone pairs of ~40
  nearby user counts, and daily check-in rounds those of nearby populations,
  whose blocks mostly coincide. Discretization is linear in the masses, so the
  pair's PMF is the block-weighted sum of the conditional PMFs; that sum is used
  when the conditional pairs' outputs are dense on the grid (`on_grid`), else
  their cached atoms are joined and discretized once. Labels below the Chernoff
  window go to +infinity; above it, to the last block (more clones only
  help).

  Args:
    num_users: n >= 1.
    local_epsilon: eps0 >= 0.
    relative_width: in (0, 0.1]: the blocks' relative width.
    discretization: the grid spacing d > 0.
    discretize: maps (atoms, d) to a grid PMF that dominates them (e.g.
      `discrete.connect_the_dots`).
  """
  if not callable(discretize):
    raise TypeError('discretize must be a callable (atoms, discretization) '
                    f'-> GridPmf; got {discretize!r}.')
  return _clone_pair_grid_pmf(
      _validation.check_integer('num_users', num_users, 1),
      _validation.check_local_epsilon(local_epsilon),
      _validation.check_real('relative_width', relative_width, 0.0, 0.1,
                             min_inclusive=False),
      _validation.check_real('discretization', discretization, 0.0,
                             min_inclusive=False),
      discretize)


def _clone_pair_grid_pmf(num_users: int, local_epsilon: float,
                         relative_width: float, discretization: float,
                         discretize: Discretize) -> discrete.GridPmf:
  """`clone_pair_grid_pmf` on checked arguments."""
  if local_epsilon == 0:
    return discretize(privacy_loss.PldAtoms(np.zeros(1), np.ones(1), 0.0),
                      discretization)
  trials = num_users - 1
  p, one_minus_p = np.exp(-local_epsilon), -np.expm1(-local_epsilon)
  lo, hi = binomial.chernoff_window(trials, p, one_minus_p)
  window = np.exp(_numerics.binomial_window_log_pmf(trials, p, one_minus_p,
                                                    lo, hi))
  blocks = _numerics.block_starts(trials, relative_width)
  starts = blocks[np.searchsorted(blocks, lo, side='right') - 1:
                  np.searchsorted(blocks, hi, side='right')]
  weights = np.bincount(
      np.searchsorted(starts, np.arange(lo, hi + 1), side='right') - 1,
      weights=window, minlength=starts.size)
  weights[-1] += float(np.exp(_numerics.log_upper_tail_bound(
      trials, p, one_minus_p, hi + 1)))
  infinity_mass = float(np.exp(_numerics.log_lower_tail_bound(
      trials, p, one_minus_p, lo - 1)))
  # Outputs of a conditional pair are ~4 tanh(eps0 / 2) / c apart in loss; a
  # grid PMF costs an addition per grid point its outputs span, an atom ~30.
  on_grid = (4 * np.tanh(local_epsilon / 2) / max(1, starts[0])
             < 30 * discretization)

  def conditional(clones):
    def compute():
      if not on_grid:
        return clone_pairs.conditional_clone_atoms(np.array([clones]),
                                       np.array([local_epsilon]), np.ones(1))
      # Merged per grid cell (CTD-MERGE-ATOMS): the same PMF from fewer atoms.
      return discretize(clone_pairs.conditional_clone_atoms(
          np.array([clones]), np.array([local_epsilon]), np.ones(1),
          discretization=discretization), discretization)
    key = (int(clones), local_epsilon, on_grid, discretization, discretize)
    return _SHARED_PAIRS.get(key, compute)

  parts = [conditional(clones) for clones in starts]
  infinity_mass += float(np.dot(weights, [part.infinity_mass
                                          for part in parts]))
  if not on_grid:
    return discretize(privacy_loss.PldAtoms(
        np.concatenate([part.losses for part in parts]),
        np.concatenate([weight * part.masses
                        for part, weight in zip(parts, weights)]),
        infinity_mass), discretization)
  first = min(part.lower_index for part in parts)
  probs = np.zeros(max(part.upper_index for part in parts) - first + 1)
  for part, weight in zip(parts, weights):
    offset = part.lower_index - first
    probs[offset:offset + part.probs.size] += weight * part.probs
  return discrete.GridPmf(discretization, first, probs, infinity_mass)


@_cache.cached(CLONE_PROFILE_CACHE_BYTES, lambda value: _cache.atoms_bytes(
    value[0]) * 3)
def _clone_pair_profile(num_users: int, local_epsilon: float,
                        relative_width: float, discretization: float,
                        discretize: Discretize):
  """(grid PMF, chord profile) of the clone pair of `num_users` users.

  Clone counts in blocks at least `LATTICE_STEP` wide (CLONE-MONOTONE, as the
  users).
  """
  pmf = _clone_pair_grid_pmf(
      num_users, local_epsilon, max(relative_width, LATTICE_STEP),
      discretization, discretize)
  return pmf, discrete.pmf_profile(pmf)


def clone_pair_pmf(num_users: int, local_epsilon: float,
                   relative_width: float, discretization: float,
                   discretize: Discretize) -> discrete.GridPmf:
  """FMT21-CLONES of `num_users` users on a grid, kept for later rounds."""
  return _clone_pair_profile(num_users, local_epsilon, relative_width,
                             discretization, discretize)[0]


def _subsampled_reach(pmf: discrete.GridPmf, sampling_ratio: float) -> float:
  """Where both subsampled orders of a grid PMF's pair stop decreasing fast.

  With U the PMF's top loss, `subsampled_profile` reads the base profile
  above U (its +infinity mass m) for eps above log(1 + r (e^U - 1)) in the
  first order and above -log(1 - r (1 - e^-U)) in the second: beyond both
  the profile is r m and (1 - e^eps (1 - r)) m, non-increasing, so a grid
  ending there loses nothing to its +infinity mass but rounding.
  """
  top = max(pmf.upper_index * pmf.discretization, 0.0)
  second = -np.log1p(-sampling_ratio * -np.expm1(-top))
  return max(largest_loss(top, sampling_ratio), float(second))


# The grid policy and the PMF of a round ask for its groups (a few kB).
@_cache.cached(2**22, lambda value: 3 * value.starts.nbytes)
def labels(num_users: int, checkin_rate: float,
           noise_multiplier: Optional[float], relative_width: float,
           sample_size: Optional[int]) -> binomial.LabelGroups:
  """The groups of check-in counts of a round (one group for a fixed sample)."""
  n = num_users
  if sample_size is None and checkin_rate == 1:  # everyone reports
    sample_size = n
  if sample_size is not None:
    return binomial.LabelGroups(np.array([sample_size]),
                                np.array([sample_size]), np.ones(1), 0.0, 0.0)
  max_groups = (MAX_GAUSSIAN_GROUPS if noise_multiplier is not None
                else MAX_CLONE_GROUPS)
  groups = binomial.label_groups(n, checkin_rate, 1 - checkin_rate,
                                 relative_width, max_groups, first=1)
  # k = 0 (nothing released) has weight (1 - gamma)^n; other labels below
  # the window, and those above it, go to +infinity.
  identical = float(np.exp(n * np.log1p(-checkin_rate)))
  return binomial.LabelGroups(
      groups.starts, groups.ends, groups.weights,
      groups.lower_tail if groups.starts[0] > 1 else 0.0, groups.upper_tail,
      identical)


def _base_largest(local_epsilon: Optional[float],
                  noise_multiplier: Optional[float]) -> float:
  """The largest finite loss of the base pair (Gaussian: up to the reach)."""
  if local_epsilon is not None:
    return local_epsilon
  assert noise_multiplier is not None  # exactly one is given
  shift = gaussian_shift(noise_multiplier)
  return shift**2 / 2 + GAUSSIAN_REACH * shift


def pmf_reach(num_users: int, checkin_rate: float,
              local_epsilon: Optional[float] = None,
              noise_multiplier: Optional[float] = None,
              relative_width: float = clone_pairs.DEFAULT_RELATIVE_WIDTH,
              sample_size: Optional[int] = None) -> float:
  """The largest finite loss `checkin_pmf` places on its grid (grid choice)."""
  groups = labels(num_users, checkin_rate, noise_multiplier, relative_width,
                  sample_size)
  return largest_loss(_base_largest(local_epsilon, noise_multiplier),
                      groups.ends[-1] / num_users)


def loss_variance_bound(num_users: int, checkin_rate: float,
                        local_epsilon: Optional[float] = None,
                        noise_multiplier: Optional[float] = None,
                        relative_width: float = (
                            clone_pairs.DEFAULT_RELATIVE_WIDTH),
                        sample_size: Optional[int] = None) -> float:
  """About E[L^2] of a round's finite losses, from above (grid choice only).

  Per group of check-in counts with ratio r: |log(1 + r(e^l - 1))| is at
  most r |e^l - 1| / (1 - r). Under the first order r P + (1 - r) Q its
  square has mean at most (r / (1 - r))^2 (r E_P[(e^l - 1)^2] + chi2), with
  chi2 = E_Q[(e^l - 1)^2] (Gaussian: e^{mu^2} - 1 and E_P = e^{3 mu^2} -
  2 e^{mu^2} + 1; eps0-DP: (e^eps0 - 1)^2 for both), and at most the group's
  largest squared loss; k = 0 has loss 0. It never underestimates rounds in
  which almost nobody checks in.
  """
  groups = labels(num_users, checkin_rate, noise_multiplier, relative_width,
                  sample_size)
  base = _base_largest(local_epsilon, noise_multiplier)
  with np.errstate(over='ignore'):
    if noise_multiplier is not None:
      mu2 = gaussian_shift(noise_multiplier)**2
      under_q = np.expm1(mu2)
      # e^{3 mu2} - 2 e^{mu2} + 1 as a product, which overflows to inf
      # (tiny noise) instead of inf - inf = NaN.
      under_p = under_q * (np.exp(2 * mu2) + np.exp(mu2) - 1)
    else:
      assert local_epsilon is not None  # exactly one is given
      under_q = under_p = np.expm1(local_epsilon)**2
  ratios = groups.ends / num_users
  largest = np.array([largest_loss(base, r) for r in ratios])
  with np.errstate(divide='ignore', over='ignore', invalid='ignore'):
    scaled = np.where(ratios < 1, (ratios / (1 - ratios))**2
                      * (ratios * under_p + under_q), np.inf)
  return float(np.sum(groups.weights * np.minimum(largest**2, scaled)))


def checkin_pmf(num_users: int, checkin_rate: float,
                    discretization: float, discretize: Discretize,
                    local_epsilon: Optional[float] = None,
                    noise_multiplier: Optional[float] = None,
                    relative_width: float = clone_pairs.DEFAULT_RELATIVE_WIDTH,
                    sample_size: Optional[int] = None
                    ) -> discrete.GridPmf:
  """PMF dominating one round of shuffled check-in, or of a fixed sample.

  Args:
    num_users: population size n.
    checkin_rate: gamma in (0, 1] (ignored when `sample_size` is given).
    discretization: grid spacing d.
    discretize: `discrete.connect_the_dots` (a bound) or
      `discrete.split_preserving_mean` (an estimate) for clone pairs.
    local_epsilon: eps0 of a pure randomizer, or None.
    noise_multiplier: sigma of local Gaussian noise, or None.
    relative_width: relative width of label groups.
    sample_size: exactly this many users are sampled (hidden) instead of a
      Bin(n, gamma) number of check-ins.

  Returns:
    A symmetric PMF whose profile is at least the round's, in both orders.
  """
  mixture = _mixture(num_users, checkin_rate, discretization, discretize,
                     local_epsilon, noise_multiplier, relative_width,
                     sample_size)
  # At most MAX_PMF_BUCKETS grid points: the profile above `top` becomes the
  # +infinity mass and losses below the grid are raised onto it
  # (TAILS-TO-INFINITY; both only raise the profile).
  top = min(int(np.ceil(mixture.reach / discretization)) + 2,
            discrete.MAX_PMF_BUCKETS // 2)
  epsilons = np.arange(-top, top + 1) * discretization
  profile = mixture.profile(epsilons)
  higher = (higher_rates(num_users, checkin_rate, local_epsilon)
            if sample_size is None else [])
  if higher:
    # CHECKIN-LATTICE: each higher rate's round dominates this one; on this grid
    # range the minimum is convexified as in `capped_by`.
    lowest = np.min([profile] + [_mixture(
        num_users, rate, discretization, discretize, local_epsilon,
        noise_multiplier, relative_width).profile(epsilons)
                                 for rate in higher], axis=0)
    if np.any(lowest < profile):
      x = np.exp((np.arange(-top, top + 1) - top) * discretization)
      profile = np.maximum(discrete.lower_convex_envelope(x, lowest), 0.0)
  # Rounding must not make the profile increase anywhere.
  profile = np.maximum.accumulate(profile[::-1])[::-1]
  return discrete.profile_to_pmf(discretization, -top, profile)


def higher_rates(num_users: int, checkin_rate: float,
                 local_epsilon: Optional[float]) -> List[float]:
  """Rates above gamma whose check-in bounds also serve a round.

  See CHECKIN-LATTICE.

  Where few clones are expected (n gamma e^-eps0 < `FEW_CLONES`), the
  shuffling gain of more check-ins can outweigh the subsampling gain of
  fewer in the bound (not in the mechanism): then the next powers of two
  above gamma, below 1 (rate 1 is the plain shuffle, `candidates`), at
  most `MAX_HIGHER_RATES` and up to 4 `FEW_CLONES` expected clones, where
  the bound grows with the rate again. Elsewhere none.
  """
  if local_epsilon is None:
    return []
  clones_per_rate = num_users * np.exp(-local_epsilon)
  if checkin_rate * clones_per_rate >= FEW_CLONES:
    return []
  first = int(np.floor(np.log2(checkin_rate))) + 1
  return [2.0**j for j in range(first, min(0, first + MAX_HIGHER_RATES))
          if 2.0**j * clones_per_rate <= 4 * FEW_CLONES]


@attr.s(frozen=True, slots=True, auto_attribs=True, eq=False)
class _Mixture:
  """The Bin(n, gamma) mixture of a round's groups (see `checkin_pmf`)."""
  groups: binomial.LabelGroups
  ratios: np.ndarray
  bases: List[Callable[[np.ndarray], np.ndarray]]
  reach: float

  def profile(self, epsilons: np.ndarray) -> np.ndarray:
    """Both orders' larger profile at `epsilons` (upper bound)."""
    profile = (self.groups.identical * -np.expm1(np.minimum(epsilons, 0.0))
               + self.groups.tails)
    for base, ratio, weight in zip(self.bases, self.ratios,
                                   self.groups.weights):
      profile += weight * subsampled_profile(base, ratio, epsilons)
    return profile


def _mixture(num_users: int, checkin_rate: float, discretization: float,
             discretize: Discretize, local_epsilon: Optional[float],
             noise_multiplier: Optional[float], relative_width: float,
             sample_size: Optional[int] = None) -> _Mixture:
  """The groups of a round with their base pairs and largest finite loss."""
  n = num_users
  groups = labels(num_users, checkin_rate, noise_multiplier, relative_width,
                  sample_size)
  ratios = groups.ends / n
  if noise_multiplier is not None:
    shift = gaussian_shift(noise_multiplier)
    bases = [lambda eps: gaussian_profile(shift, eps)] * ratios.size
    reach = largest_loss(_base_largest(local_epsilon, noise_multiplier),
                         ratios[-1])
  else:
    assert local_epsilon is not None  # exactly one is given
    pairs = [_clone_pair_profile(
        lattice_users(int(start)), local_epsilon, relative_width,
        base_grid(discretization, ratio, local_epsilon), discretize)
             for start, ratio in zip(groups.starts, ratios)]
    bases = [profile for _, profile in pairs]
    reach = max(_subsampled_reach(pmf, ratio)
                for (pmf, _), ratio in zip(pairs, ratios))
  return _Mixture(groups, ratios, bases, reach)


def capped_by(pmf: discrete.GridPmf, other: discrete.GridPmf
              ) -> discrete.GridPmf:
  """`pmf` lowered to `other`'s profile where that is smaller. [DOM]

  See CHECKIN-COARSE-GRIDS.

  Both must dominate the same mechanism; `other` may lie on any grid. On
  `pmf`'s grid range the pointwise minimum of the profiles (`other`'s read
  from its chord, an upper bound everywhere) is convexified as in
  `discrete.smallest_profile`. Beyond the range the result's profile is its
  value at the ends, which still bounds the minimum: above, the profile is
  non-increasing; below, it is the chord in e^eps from (0, 1), which lies
  above every profile convex in e^eps. So a wide `other` costs only `pmf`'s
  span, and `pmf` itself is returned when `other` never wins.
  """
  d = pmf.discretization
  indices = np.arange(pmf.lower_index, pmf.upper_index + 1)
  own = discrete.grid_profile(pmf, pmf.lower_index, pmf.upper_index)
  minimum = np.minimum(own, discrete.pmf_profile(other)(indices * d))
  if np.all(minimum >= own):
    return pmf
  # x = e^{eps - eps_max} keeps the abscissae in (0, 1].
  x = np.exp((indices - indices[-1]) * d)
  envelope = discrete.lower_convex_envelope(x, minimum)
  return discrete.profile_to_pmf(d, pmf.lower_index,
                                 np.maximum(envelope, 0.0))


def scale_resolution(local_epsilon: float, num_users) -> Optional[float]:
  """The grid on which a pair's outputs are merged when only its scale is
  needed (grid choice): `SCALE_RESOLUTION` of the clone pair's loss spread,
  about 2 tanh(eps0 / 2) / sqrt(n); None (no merging) at eps0 = 0."""
  return (SCALE_RESOLUTION * np.tanh(local_epsilon / 2)
          / np.sqrt(num_users)) or None


def loss_spread(num_users: int, sampling_ratio: float,
                local_epsilon: Optional[float] = None,
                noise_multiplier: Optional[float] = None,
                relative_width: float = clone_pairs.DEFAULT_RELATIVE_WIDTH
                ) -> float:
  """Standard deviation of a typical round's privacy loss (grid choice only).

  The first subsampled order at the expected number n * ratio of reports.
  Only its scale matters: clone counts grouped to `SCALE_RELATIVE_WIDTH` and
  outputs merged on a grid far finer than the clone pair's spread (about
  2 tanh(eps0 / 2) / sqrt(users)) give it to a fraction of a percent.
  """
  return _loss_spread(num_users, sampling_ratio, local_epsilon,
                      noise_multiplier,
                      max(relative_width, SCALE_RELATIVE_WIDTH))


# The grid policy and the PMF of a check-in round both ask (one float).
@_cache.cached(2**16, lambda spread: 1)
def _loss_spread(num_users: int, ratio: float, local_epsilon: Optional[float],
                 noise_multiplier: Optional[float], relative_width: float
                 ) -> float:
  """`loss_spread` at groups `relative_width` wide (at least the scale's)."""
  if local_epsilon is not None:
    users = max(1, int(round(num_users * ratio)))
    atoms = clone_pairs.clone_pair_pld_atoms(
        users, local_epsilon, relative_width,
        discretization=scale_resolution(local_epsilon, users))
    return privacy_loss.loss_spread(
        privacy_loss.subsampled_orders(atoms, ratio)[0])
  assert noise_multiplier is not None  # exactly one is given
  shift = gaussian_shift(noise_multiplier)
  # Gauss-Hermite quadrature of the mixture r N(shift, 1) + (1 - r) N(0, 1).
  nodes, node_weights = np.polynomial.hermite_e.hermegauss(200)
  node_weights = node_weights / node_weights.sum()
  points = np.concatenate([nodes + shift, nodes])
  mass = np.concatenate([ratio * node_weights, (1 - ratio) * node_weights])
  with np.errstate(divide='ignore'):
    losses = np.logaddexp(np.log(ratio) + shift * points - shift**2 / 2,
                          np.log1p(-ratio))
  mean = np.sum(mass * losses)
  return float(np.sqrt(np.sum(mass * (losses - mean)**2)))


def _binary_rr_checkin_pair(num_users: int, checkin_rate: float,
                            local_epsilon: float):
  """(losses, P-masses, Q-masses) of the exact binary RR check-in pair.

  Every user holds 0 in D' (Q) and user 1 holds 1 in D (P); the output is
  (k, number s of 1s): k ~ Bin(n, gamma), s ~ Bin(k, 1 / (e^eps0 + 1))
  under Q, and P/Q = 1 + (s (e^eps0 - 1) + (k - s)(e^-eps0 - 1)) / n.
  Terms outside wide windows of k and s are dropped (masses only shrink).
  """
  n, gamma = num_users, checkin_rate
  flip = 1.0 / (np.exp(local_epsilon) + 1)  # P[report 1 | value 0]
  spread = 12 * np.sqrt(n * gamma * (1 - gamma)) + 12
  ks = np.arange(max(1, int(n * gamma - spread)),
                 min(n, int(n * gamma + spread)) + 1)
  width = 12 * np.sqrt(ks * flip) + 12
  first = np.maximum(0, (ks * flip - width).astype(np.int64))
  last = np.minimum(ks, (ks * flip + width).astype(np.int64))
  counts = first[:, None] + np.arange(int(np.max(last - first)) + 1)
  q = np.where(counts <= last[:, None], stats.binom.pmf(ks, n, gamma)[:, None]
               * stats.binom.pmf(counts, ks[:, None], flip), 0.0)
  ratio = 1 + (counts * np.expm1(local_epsilon)
               + (ks[:, None] - counts) * np.expm1(-local_epsilon)) / n
  keep = q > 0
  return np.log(ratio[keep]), (q * ratio)[keep], q[keep]


def _check_pair_arguments(num_users, checkin_rate, local_epsilon):
  return (_validation.check_integer('num_users', num_users, 1),
          _validation.check_real('checkin_rate', checkin_rate, 0.0, 1.0,
                                 min_inclusive=False),
          _validation.check_local_epsilon(local_epsilon))


def binary_rr_checkin_delta_lower_bound(num_users: int, checkin_rate: float,
                                        local_epsilon: float, epsilon
                                        ) -> np.ndarray:
  """Exact delta(eps) of one check-in round for one pair. [LB, PAIR]

  Binary randomized response (eps0), every user holds 0 in D and user 1
  holds 1 in D'; the output is (k, number of 1s). The larger of both orders
  is returned: a lower bound on the worst case over all pairs, never a
  guarantee. Terms with negligible probability (outside wide windows of k
  and of the count) are dropped, which can only lower the result.
  """
  arguments = _check_pair_arguments(num_users, checkin_rate, local_epsilon)
  epsilons = np.atleast_1d(np.asarray(epsilon, dtype=np.float64))
  _, p, q = _binary_rr_checkin_pair(*arguments)
  scale = np.exp(epsilons)[:, None]
  return np.maximum(np.sum(np.maximum(p - scale * q, 0.0), axis=1),
                    np.sum(np.maximum(q - scale * p, 0.0), axis=1))


def binary_rr_checkin_epsilon_lower_bound(num_users: int,
                                          checkin_rate: float,
                                          local_epsilon: float, delta: float,
                                          rounds: int = 1,
                                          discretization: float = 1e-5
                                          ) -> float:
  """eps(delta) of `rounds` check-in rounds for one pair. [LB, PAIR]

  The pair of `binary_rr_checkin_delta_lower_bound` in both orders, each
  composed with itself (losses rounded down to the grid, FFT round-off
  bounded, nothing put at +infinity: `composed_epsilon_lower_bound`,
  ROUNDOFF-LOWER), the larger epsilon. A lower
  bound on every certified epsilon of `CheckInEvent(num_categories=2)`
  (the yardstick of CHECKIN-BLANKET's targets), never a guarantee.
  """
  arguments = _check_pair_arguments(num_users, checkin_rate, local_epsilon)
  delta = _validation.check_real('delta', delta, 0.0, 1.0, False, False)
  rounds = _validation.check_integer('rounds', rounds, 1)
  losses, p, q = _binary_rr_checkin_pair(*arguments)
  return max(lower_bounds.composed_epsilon_lower_bound(
      [(order_losses, masses, rounds)], delta, discretization)
             for order_losses, masses in ((losses, p), (-losses, q)))
