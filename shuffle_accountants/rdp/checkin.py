"""RDP of shuffled check-in and of shuffled Gaussian reports.

IDs: LIEW-THM2, WBK19-THM9, ORDERED-RDP-UNSOUND, LIEW-THM3 [LB]

Upper bounds (what the accountants compose):

* LIEW-THM2 [UB]: the number k of check-ins is revealed and its law does not
  depend on the data, so for every ordered pair of neighbours
  E[(p/q)^lambda] = sum_k Bin(n, gamma)(k) E_k, where E_k is the moment of
  "k users sampled without replacement from n, then shuffled"
  (docs/mathematics.md LABEL-MIXTURE). Any upper bound A_k >= E_k valid for all
  pairs gives an upper bound; the k = 0 term is exactly 1 and is included
  (docs/mathematics.md LIEW-ZERO-COUNT).
* Per k this module bounds E_k by the smaller of
  - WBK19-THM9 with sampling ratio k/n and the base RDP of a k-user shuffle
    (pure eps0-LDP: PURE-DP-RDP-CAP; on the clone-pair RDP, KHH-RDP-CLONE,
    it was never below the symmetrized moment in any sweep and cost 3/4 of
    the time; Gaussian: GAUSS-NO-GAIN, no shuffling gain, sensitivity 2), and
  - for pure LDP, the Renyi moment of the *symmetric* pair whose profile is
    the first-order KHH-SUBSAMPLED profile of the clone pair of k users
    (`_symmetrized_subsampled_log_moments`). The larger of the two ordered
    KHH-SUBSAMPLED pairs' own moments, used before, is not a bound: a Renyi
    divergence depends on the profile at alpha < 1 too, and third-value
    datasets exceed it (docs/mathematics.md ORDERED-RDP-UNSOUND).
  The minimum of two upper bounds on E_k is one; the weighted sum over k is
  the LIEW-THM2 identity, valid for every ordered pair, so the result bounds
  both orders. Why each combination is sound, point by point:
  - the min over candidates per k: each bounds E_k for every ordered pair;
  - WBK19-THM9: a theorem for arbitrary replace-one pairs of a
    without-replacement sample, with a base RDP valid for every pair of the
    k-user shuffle (PURE-DP-RDP-CAP, SHUFFLE-LDP-CAP) and eps(inf) = eps0;
  - the check-in counts above the window: the shuffle RDP of the window's
    last count, KHH-RDP-CLONE (the Renyi divergence of a dominating pair,
    docs/mathematics.md CLONE-RDP-SOUND, both orders by swap symmetry
    CLONE-SWAP-SYMMETRY);
  - the symmetrized moment: advanced joint convexity bounds *both* orders at
    alpha >= 1 by the first-order profile, and the integral identity turns
    two order-wise profile bounds into a moment bound;
  - grouped labels and tails: post-processing, as stated below;
  - the final min with PURE-DP-RDP-CAP: another bound for every pair.
  Labels k are grouped [a, b]: the a-user shuffle bound is valid for every
  k >= a (a k-user shuffle is a post-processing of an a-user one: add the
  other reports and reshuffle) and both bounds grow with the ratio, taken as
  b / n. Labels outside a Chernoff window get crude but valid bounds.
* For pure LDP the round is eps0-DP (one report differs), so
  PURE-DP-RDP-CAP at eps0 is a further candidate. Note that check-in does
  *not* make it log(1 + gamma (e^eps0 - 1))-DP, as Poisson subsampling
  under add/remove would: when all n users check in, k = n reveals that the
  differing user participated (the brute-force tests catch that claim).

Lower bounds and heuristics (never composed by an accountant):

* LIEW-THM3, eq. (8) [LB, PAIR]: the RDP of the shuffled Gaussian for one
  specific pair, evaluated exactly by the polynomial method of LIEW-APPC.
* LIEW-THM5 [HEUR]: WBK19-THM9 fed with eq. (8), which is a lower bound, so
  the result is neither an upper nor a lower bound (docs/mathematics.md
  LIEW-THM5-HEURISTIC).

LIEW-LEMMA1 (the DP-to-RDP conversion of Liew et al.) is false
(docs/mathematics.md APPROX-LDP-NO-RDP) and is deliberately not implemented: an
(eps, delta) guarantee with delta > 0 implies no finite RDP.
"""

from typing import TYPE_CHECKING, Callable, Optional

import numpy as np
from scipy import special

from shuffle_accountants import _cache
from shuffle_accountants import _deprecated
from shuffle_accountants import _numerics
from shuffle_accountants import _validation
from shuffle_accountants.pairs import binomial
from shuffle_accountants.pairs import clone_pairs
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.rdp import clone
from shuffle_accountants.rdp import generic
from shuffle_accountants.rdp import profiles
from shuffle_accountants.rdp import shuffle_round
from shuffle_accountants.rdp import subsampling

__all__ = [
    'LIEW_THM2', 'GAUSSIAN_NO_GAIN', 'WBK19_GAUSSIAN', 'MAX_CHECKIN_GROUPS',
    'CHECKIN_RELATIVE_WIDTH', 'GAUSSIAN_SENSITIVITY', 'gaussian_rdp',
    'gaussian_rdp_unchecked', 'log_wbk19_moment_unchecked', 'mixture_rdp',
    'checkin_rdp_upper_bound', 'subsampled_shuffle_gaussian_rdp_upper_bound',
    'liew_eq8_rdp', 'shuffled_gaussian_rdp_lower_bound',
    'liew_thm5_heuristic_rdp',
]

LIEW_THM2 = ('LIEW-THM2 (per k: min of WBK19-THM9 and the symmetrized '
             'KHH-SUBSAMPLED moment)')
GAUSSIAN_NO_GAIN = 'Gaussian RDP without shuffling gain (GAUSS-NO-GAIN)'
WBK19_GAUSSIAN = 'WBK19-THM9 on the Gaussian RDP (GAUSS-NO-GAIN)'
# The name before the proofs were named (until 0.2): deprecated (hidden
# from type checkers, which would read every attribute through it).
if not TYPE_CHECKING:
  __getattr__ = _deprecated.renamed(__name__,
                                    {'GAUSSIAN_D7': 'GAUSSIAN_NO_GAIN'})

# At most this many groups of check-in counts (each costs one clone PLD),
# and their default relative width (the bound is ~1.5% above width 1e-3's).
MAX_CHECKIN_GROUPS = 40
# Single labels 2, 4, ... times the window's last one evaluated above it
# (DOMINATING-ROUNDS), up to this many and up to `_LARGEST_LABEL_ABOVE_WINDOW`
# users: larger labels' clone PLDs cost seconds over the order stages and never
# lowered epsilon in sweeps once the round's rate-1 bound is a candidate
# (accountant).
_LABELS_ABOVE_WINDOW = 6
_LARGEST_LABEL_ABOVE_WINDOW = 10**7
CHECKIN_RELATIVE_WIDTH = 1e-2

# Truncated clone-PLD mass enters a Renyi moment times e^{(order - 1) L},
# L its largest loss; the cut is e^{-(order - 1) L - 45}, at most e^-700.
_BASE_LOG_TAIL = -45.0
_SMALLEST_LOG_TAIL = -700.0
_SHARED_TAIL_ORDER = 1024.0


# Replacing one clipped record (L2 norm <= C) moves its report by up to 2C;
# the noise has standard deviation noise_multiplier * C.
GAUSSIAN_SENSITIVITY = 2.0


def _check_checkin(num_users, checkin_rate, orders):
  num_users = _validation.check_integer('num_users', num_users, 1)
  checkin_rate = _validation.check_real('checkin_rate', checkin_rate, 0.0, 1.0,
                                        min_inclusive=False)
  return num_users, checkin_rate, _validation.check_orders(orders)


def gaussian_rdp(noise_multiplier: float, orders) -> np.ndarray:
  """GAUSS-NO-GAIN [UB]: RDP of Gaussian reports, shuffled or not, replace-one.

  order * 2^2 / (2 sigma^2): shuffling is a post-processing of the vector of
  reports, in which one report's mean moves by at most 2C (noise sigma C).
  """
  return gaussian_rdp_unchecked(_check_noise_multiplier(noise_multiplier),
                                _validation.check_orders(orders))


def _check_noise_multiplier(noise_multiplier) -> float:
  return _validation.check_real('noise_multiplier', noise_multiplier, 0.0,
                                min_inclusive=False)


def gaussian_rdp_unchecked(noise_multiplier: float,
                           orders: np.ndarray) -> np.ndarray:
  """`gaussian_rdp` on checked arguments."""
  return (orders * GAUSSIAN_SENSITIVITY**2 / (2 * noise_multiplier**2)
          * (1 + _numerics.RELATIVE_SAFETY_MARGIN))


def _log_tail(orders: np.ndarray, largest_loss: float) -> float:
  """How far to truncate a PLD whose moments are taken up to these orders.

  Orders above `_SHARED_TAIL_ORDER` (the accountants' order extensions) all
  take the deepest cut, so that every extension stage reuses one cached
  clone PLD per label instead of computing a deeper one per stage (a deeper
  cut only moves less mass to the largest loss: still sound, TAILS-TO-INFINITY).
  """
  if np.max(orders) > _SHARED_TAIL_ORDER:
    return _SMALLEST_LOG_TAIL
  return float(max(_SMALLEST_LOG_TAIL, _BASE_LOG_TAIL - (np.max(orders) - 1)
                   * largest_loss))


@_cache.cached(128 * 2**20, _cache.atoms_bytes)
def _clone_atoms(num_users: int, local_epsilon: float, relative_width: float,
                 log_tail: float) -> privacy_loss.PldAtoms:
  return clone_pairs.clone_pair_pld_atoms_unchecked(
      num_users, local_epsilon, relative_width, log_tail=log_tail)


def _symmetrized_subsampled_log_moments(num_users: int, local_epsilon: float,
                                        sampling_ratio: float,
                                        orders: np.ndarray,
                                        relative_width: float) -> np.ndarray:
  """log E[(p/q)^order] bound for a hidden sample of k users. [UB]

  See ORDERED-RDP-UNSOUND.

  By advanced joint convexity (Balle et al. 2018, Thm 2), for eps >= 0 *both*
  orders of the k-conditional mechanism have hockey-stick divergence at most
  delta_1(eps), the first-order profile of KHH-SUBSAMPLED (r P + (1 - r) Q, Q)
  on the clone pair of k users. A Renyi moment is an integral of the
  profile of both orders (Liese-Vajda; the order < 1 part is the reverse
  order at 1 / alpha):
    E_q[(p/q)^lam] = 1 + lam (lam - 1) int_0^inf [e^{(lam-1) eps} H(p||q)
                                                  + e^{-lam eps} H(q||p)] deps,
  increasing in both profiles, so replacing both by delta_1 bounds it. For
  delta_1 = sum_i mu_i (1 - e^{eps - m_i})_+ (atoms of loss m_i > 0, mass
  mu_i) the integral is closed form:
    1 + sum_{m_i > 0} mu_i expm1((lam - 1) m_i) (1 - e^{-lam m_i}).
  This is the moment of the *symmetric* pair with profile delta_1. The
  larger of the two ordered pairs' own moments is not a bound
  (docs/mathematics.md ORDERED-RDP-UNSOUND: third-value datasets exceed it).
  Truncated clone-pair mass (losses in [-eps0, eps0]) enters as an atom at the
  largest subsampled loss, which only raises delta_1 for eps >= 0
  (docs/mathematics.md TAILS-TO-INFINITY).
  """
  if num_users == 0:  # no check-in (a label below a tiny rate's window)
    return np.zeros(orders.size)  # nothing is released: the moment is 1
  largest = float(np.log1p(sampling_ratio * np.expm1(local_epsilon)))
  atoms = _clone_atoms(num_users, local_epsilon, relative_width,
                       _log_tail(orders, largest))
  first, _ = privacy_loss.subsampled_orders(atoms, sampling_ratio)
  losses = np.append(first.losses, largest)
  masses = np.append(first.masses, first.infinity_mass)
  keep = (losses > 0) & (masses > 0)
  losses, masses = losses[keep], masses[keep]
  if losses.size == 0:
    return np.zeros(orders.size)
  return profiles.symmetric_profile_log_moments(losses, masses, orders)


def log_wbk19_moment_unchecked(sampling_ratio: float,
                               base_rdp: Callable[[np.ndarray], np.ndarray],
                               base_pure_epsilon: float, orders: np.ndarray
                               ) -> np.ndarray:
  """(order - 1) * min(WBK19-THM9, base RDP): log of a moment bound. [UB]"""
  base = base_rdp(orders)
  if sampling_ratio <= 0:
    return np.zeros(orders.size)
  amplified = subsampling.wbk19_without_replacement_rdp_unchecked(
      float(min(sampling_ratio, 1.0)), base_rdp, base_pure_epsilon, orders)
  return (orders - 1) * np.minimum(amplified, base)


def mixture_rdp(log_weights, log_moments, orders: np.ndarray) -> np.ndarray:
  """RDP of a label mixture from per-label log-moment bounds (LIEW-THM2). [UB]

  log(1 + sum_k w_k (e^{x_k} - 1)) / (order - 1) in excess form: the plain
  log-sum-exp of moments near 1 rounds tiny RDP (gamma = 1e-6, n = 1e10) to
  0. The weights bound the labels' true probabilities from above and each
  e^x - 1 is >= 0, so this bounds the sum over labels (k = 0 adds nothing).
  """
  excess = _numerics.log_sum_exp(
      np.array(log_weights)[:, None]
      + _numerics.log_expm1(np.maximum(np.stack(log_moments), 0.0)), axis=0)
  return (np.logaddexp(0.0, excess) / (orders - 1)
          * (1 + _numerics.RELATIVE_SAFETY_MARGIN))


def checkin_rdp_upper_bound(
    num_users: int, checkin_rate: float, orders,
    local_epsilon: Optional[float] = None,
    noise_multiplier: Optional[float] = None,
    relative_width: float = CHECKIN_RELATIVE_WIDTH
) -> shuffle_round.RdpBound:
  """RDP of one round of shuffled check-in: LIEW-THM2 with k = 0. [UB]

  Args:
    num_users: population size n >= 1.
    checkin_rate: participation probability gamma in (0, 1].
    orders: RDP orders > 1.
    local_epsilon: eps0 >= 0 of a pure LDP randomizer, or None.
    noise_multiplier: sigma > 0 of local Gaussian noise (clip norm C, noise
      sigma C), or None. Exactly one of the two must be given.
    relative_width: relative width of groups of check-in counts (and of
      clone counts inside each clone PLD).

  Returns:
    An `RdpBound` whose `rdp` is a proven upper bound at every order.
  """
  num_users, checkin_rate, orders = _check_checkin(num_users, checkin_rate,
                                                   orders)
  if (local_epsilon is None) == (noise_multiplier is None):
    raise ValueError('exactly one of local_epsilon and noise_multiplier must '
                     f'be given; got local_epsilon={local_epsilon}, '
                     f'noise_multiplier={noise_multiplier}.')
  relative_width = _validation.check_real('relative_width', relative_width,
                                          0.0, 0.1, min_inclusive=False)
  n = num_users
  if noise_multiplier is not None:
    noise_multiplier = _check_noise_multiplier(noise_multiplier)
    base = lambda o: gaussian_rdp_unchecked(noise_multiplier, o)
    if checkin_rate == 1:  # everyone reports: no subsampling gain
      return shuffle_round.smallest_bound(orders,
                                          {GAUSSIAN_NO_GAIN: base(orders)})
    pure, cap = np.inf, base
  else:
    eps0 = _validation.check_local_epsilon(local_epsilon)
    if checkin_rate == 1:  # everyone reports: a plain shuffle round
      return shuffle_round.shuffle_rdp_upper_bound(n, eps0, orders)
    cap = lambda o: generic.pure_dp_rdp_cap_unchecked(eps0, o)
    pure = eps0
  groups = binomial.label_groups(n, checkin_rate, 1 - checkin_rate,
                                 relative_width, MAX_CHECKIN_GROUPS, first=1)
  def pure_row(start, end):
    # WBK19 on the pure-DP base: on the clone-pair base it was never below
    # the symmetrized moment in any sweep, and cost 3/4 of the time.
    return np.minimum(
        log_wbk19_moment_unchecked(end / n, cap, pure, orders),
        _symmetrized_subsampled_log_moments(start, eps0, end / n, orders,
                                            relative_width))

  # (weight, log-moment bound) per range of labels, in increasing order.
  weighted_rows = []

  def add(weight, log_moment):
    weighted_rows.append((weight, log_moment))

  # k < starts[0] (including k = 0, whose moment is 1): ratio below
  # (starts[0] - 1) / n and the weakest base bound.
  add(groups.lower_tail, log_wbk19_moment_unchecked(
      (groups.starts[0] - 1) / n, cap, pure, orders))
  for start, end, weight in zip(groups.starts, groups.ends, groups.weights):
    start, end = int(start), int(end)
    if noise_multiplier is not None:
      add(weight, log_wbk19_moment_unchecked(end / n, base, pure, orders))
      continue
    add(weight, pure_row(start, end))
  if noise_multiplier is None:
    # DOMINATING-ROUNDS: rows for single labels above the window, doubling up to
    # n; they enter the sum only through the suffix minimum below.
    label = 2 * int(groups.ends[-1])
    for _ in range(_LABELS_ABOVE_WINDOW):
      if label >= min(n, _LARGEST_LABEL_ABOVE_WINDOW):
        break
      add(0.0, pure_row(label, label))
      label *= 2
  # k > ends[-1]: subsampling cannot hurt, the shuffle bound of the last
  # start (at least one user) holds for every larger k.
  last_base = cap if noise_multiplier is not None else (
      lambda o: clone.clone_pair_rdp_unchecked(
          max(1, int(groups.starts[-1])), eps0, o))
  add(groups.upper_tail, (orders - 1) * last_base(orders))
  # DOMINATING-ROUNDS: given k check-ins the round is a post-processing of the
  # round with any k' >= k check-ins (drop k' - k reports at random), so every
  # range of labels may use the smallest bound of the ranges above it.
  suffix_minimum = np.minimum.accumulate(
      np.stack([row for _, row in weighted_rows])[::-1], axis=0)[::-1]
  rows = [row for (weight, _), row in zip(weighted_rows, suffix_minimum)
          if weight > 0]
  log_weights = [np.log(weight) for weight, _ in weighted_rows if weight > 0]
  mixture = mixture_rdp(log_weights, rows, orders)
  if noise_multiplier is not None:
    candidates = {LIEW_THM2: mixture, GAUSSIAN_NO_GAIN: base(orders)}
  else:
    candidates = {LIEW_THM2: mixture, shuffle_round.PURE_DP_CAP: cap(orders)}
  return shuffle_round.smallest_bound(orders, candidates)


def subsampled_shuffle_gaussian_rdp_upper_bound(
    num_users: int, sample_size: int, noise_multiplier: float,
    orders) -> shuffle_round.RdpBound:
  """Shuffled Gaussian reports of a hidden sample of m of n users. [UB]

  WBK19-THM9 with ratio m / n on the sound Gaussian RDP of GAUSS-NO-GAIN (what
  LIEW-THM5 would be with a valid base bound), and GAUSS-NO-GAIN itself.
  """
  num_users = _validation.check_integer('num_users', num_users, 1)
  sample_size = _validation.check_integer('sample_size', sample_size, 1,
                                          num_users)
  orders = _validation.check_orders(orders)
  noise_multiplier = _check_noise_multiplier(noise_multiplier)
  base = lambda o: gaussian_rdp_unchecked(noise_multiplier, o)
  amplified = subsampling.wbk19_without_replacement_rdp_unchecked(
      sample_size / num_users, base, np.inf, orders)
  return shuffle_round.smallest_bound(orders, {GAUSSIAN_NO_GAIN: base(orders),
                                             WBK19_GAUSSIAN: amplified})


def _log_polynomial_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """Log-coefficients of a * b truncated to the degree of a (log space)."""
  degree = a.size
  out = np.full(degree, -np.inf)
  for i in range(degree):
    if np.isfinite(a[i]):
      out[i:] = np.logaddexp(out[i:], a[i] + b[:degree - i])
  return out


def liew_eq8_rdp(num_users: int, noise_ratio: float, orders) -> np.ndarray:
  """LIEW-THM3, eq. (8): RDP of the shuffled Gaussian for one pair. [LB, PAIR]

  D = (0, ..., 0) and D' = (1, 0, ..., 0), each report x_i + N(0, s^2) with
  s = `noise_ratio` (noise standard deviation over the distance between the
  two values), then shuffled. Exact value of D_order for that pair, hence a
  *lower* bound on the worst case; never a guarantee.

  Evaluated by LIEW-APPC's exact polynomial method: the sum over compositions
  is order! [t^order] f(t)^n with f(t) = sum_j e^{j^2 / (2 s^2)} t^j / j!,
  computed by binary exponentiation of log-space polynomials truncated at
  the largest order, O(order^2 log n).

  Args:
    num_users: n >= 1.
    noise_ratio: s > 0.
    orders: integer orders >= 2.

  Returns:
    E_{n,s}(order) for each order.
  """
  num_users = _validation.check_integer('num_users', num_users, 1)
  noise_ratio = _validation.check_real('noise_ratio', noise_ratio, 0.0,
                                       min_inclusive=False)
  orders = _validation.check_integer_orders(orders)
  largest = int(orders.max())
  j = np.arange(largest + 1, dtype=np.float64)
  factor = j**2 / (2 * noise_ratio**2) - special.gammaln(j + 1)
  power = np.full(largest + 1, -np.inf)
  power[0] = 0.0
  exponent = num_users
  while exponent:
    if exponent & 1:
      power = _log_polynomial_product(power, factor)
    exponent >>= 1
    if exponent:
      factor = _log_polynomial_product(factor, factor)
  lam = orders.astype(np.int64)
  log_sum = special.gammaln(orders + 1) + power[lam]
  return ((-orders / (2 * noise_ratio**2) - orders * np.log(num_users)
           + log_sum) / (orders - 1))


def shuffled_gaussian_rdp_lower_bound(num_users: int, noise_multiplier: float,
                                      orders) -> np.ndarray:
  """Lower bound on the RDP of shuffled Gaussian DP-SGD reports. [LB, PAIR]

  eq. (8) for records clipped to norm C with noise sigma C: the pair with
  one record at -C v and all others at +C v has distance 2C, i.e.
  noise_ratio = sigma / 2. Every user reports (no subsampling).
  """
  noise_multiplier = _validation.check_real('noise_multiplier',
                                            noise_multiplier, 0.0,
                                            min_inclusive=False)
  return liew_eq8_rdp(num_users, noise_multiplier / GAUSSIAN_SENSITIVITY,
                      orders)


def liew_thm5_heuristic_rdp(num_users: int, sample_size: int,
                            noise_multiplier: float, orders) -> np.ndarray:
  """LIEW-THM5 [HEUR]: not an upper bound, not a lower bound.

  WBK19-THM9 with ratio m / n applied to eq. (8) for m users, as Liew et al.
  do "to estimate optimistically". WBK19 needs an upper bound on the base
  RDP and eq. (8) is a lower bound for one pair (docs/mathematics.md
  LIEW-THM5-HEURISTIC), so this is only a heuristic. No accountant composes it.
  """
  num_users = _validation.check_integer('num_users', num_users, 1)
  sample_size = _validation.check_integer('sample_size', sample_size, 1,
                                          num_users)
  orders = _validation.check_integer_orders(orders)
  base = lambda o: shuffled_gaussian_rdp_lower_bound(
      sample_size, noise_multiplier, np.maximum(np.round(o), 2))
  return subsampling.wbk19_without_replacement_rdp(
      sample_size / num_users, base, np.inf, orders)
