"""The RDP of the shuffle model by Girgis et al. (CCS 2021).

IDs: GIRGIS-UB1, GIRGIS-UB2, GIRGIS-UB-MIX [UB]; GIRGIS-LB, GIRGIS-COR2 [LB]

GIRGIS-* in docs/mathematics.md (arXiv numbering). Setting: `num_users` users,
each applies a pure `local_epsilon`-LDP randomizer, outputs are shuffled;
replace-one neighbours over a public population. With
n_bar = floor((n - 1) / (2 e^{eps0})) + 1:

* GIRGIS-UB1 (Thm 1, eq. 6)  [UB], integer orders.
* GIRGIS-UB2 (Thm 2, eq. 9)  [UB], real orders >= 2.
* GIRGIS-COR1 (Cor 1, eq. 7) [UB with a proof caveat, GIRGIS-ERRATA]: not
implemented.
* GIRGIS-UB-MIX (derived from Thm 4-6, Lemma 8) [UB], integer orders.
* GIRGIS-LB (Thm 3, eq. 11, closed form GIRGIS-LB-BINOMIAL) [LB, PAIR] and
GIRGIS-COR2 [LB].
* EFM19-RDP (quoted as eq. 10) [UB ?]: unverified baseline for comparisons only.

All upper bounds are capped by PURE-DP-RDP-CAP. GIRGIS-POISSON (their Section 4)
is unsound (docs/mathematics.md POISSON-UNSOUND) and deliberately not
implemented.
"""

from typing import Tuple

import numpy as np
from scipy import special

from shuffle_accountants import _cache
from shuffle_accountants import _numerics
from shuffle_accountants import _validation
from shuffle_accountants.rdp import generic

__all__ = [
    'MAX_SUMMED_ORDER', 'girgis_ub1', 'girgis_ub2', 'girgis_ub_mix',
    'efm19_rdp_baseline', 'girgis_lower_bound',
    'binary_rr_all_equal_pair_rdp_lower_bound', 'girgis_cor2_lower_bound',
]

# O(order) bounds are evaluated up to this order; beyond it they return +inf
# (never the minimum), since the sum has `order` terms.
MAX_SUMMED_ORDER = 1 << 14


def _check_common(num_users, local_epsilon):
  num_users = _validation.check_integer('num_users', num_users, 1)
  local_epsilon = _validation.check_local_epsilon(local_epsilon)
  return num_users, local_epsilon


def _n_bar(num_users: int, local_epsilon: float) -> float:
  return np.floor((num_users - 1) / (2 * np.exp(local_epsilon))) + 1


def _log_comb(n, k):
  return special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(
      n - k + 1)


# The order/index matrix of B5 depends on the orders only: every round of a
# ledger (and GIRGIS-UB1 and GIRGIS-UB-MIX) shares it.
@_cache.cached(16 * 2**20, _cache.atoms_bytes)
def _b5_terms(orders_bytes: bytes
              ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
  """(summed, i, kept, log of the i-th B5 coefficient per order), read-only."""
  orders = np.frombuffer(orders_bytes)
  summed = orders <= MAX_SUMMED_ORDER
  largest = int(orders[summed].max()) if np.any(summed) else 2
  i = np.arange(3, largest + 1, dtype=np.float64)[None, :]
  kept = np.where(summed, orders, 2.0)[:, None]
  with np.errstate(invalid='ignore'):
    fixed = np.where(i <= kept, _log_comb(kept, i) + np.log(i)
                     + special.gammaln(i / 2), -np.inf)
  for array in (summed, i, kept, fixed):
    array.setflags(write=False)
  return summed, i, kept, fixed


def _log_b5_excess_fn(local_epsilon: float, orders: np.ndarray):
  """Returns users -> log(B5(users, order) - 1) for each integer order (Thm 5).

  B5 = 1 + C(order, 2) (e^eps0 - 1)^2 / (users e^eps0)
         + sum_{i=3}^{order} C(order, i) i Gamma(i/2)
             ((e^{2 eps0} - 1)^2 / (2 users e^{2 eps0}))^{i/2}.
  The order/index matrix is built once, so each user count costs one
  vectorised pass. Orders above MAX_SUMMED_ORDER give +inf.
  """
  summed, i, kept, fixed = _b5_terms(
      np.ascontiguousarray(orders, np.float64).tobytes())
  log_second_fixed = (_log_comb(kept[:, 0], 2.0)
                      + 2 * _numerics.log_expm1(local_epsilon) - local_epsilon)
  log_base_fixed = (2 * _numerics.log_expm1(2 * local_epsilon) - np.log(2.0)
                    - 2 * local_epsilon)

  def log_excess(users: float) -> np.ndarray:
    log_users = np.log(users)
    higher = _numerics.log_sum_exp(
        fixed + (i / 2) * (log_base_fixed - log_users),
        axis=1) if i.size else -np.inf
    value = np.logaddexp(log_second_fixed - log_users, higher)
    return np.where(summed, value, np.inf)

  return log_excess


def girgis_ub1(num_users: int, local_epsilon: float, orders) -> np.ndarray:
  """GIRGIS-UB1 (Thm 1, eq. 6): RDP upper bound at integer orders >= 2. [UB]

  eps(order) <= log(B5(n_bar, order) + exp(eps0 order - (n-1)/(8 e^eps0)))
  / (order - 1), capped by PURE-DP-RDP-CAP. Orders above MAX_SUMMED_ORDER
  get only the cap.
  """
  num_users, local_epsilon = _check_common(num_users, local_epsilon)
  orders = _validation.check_integer_orders(orders)
  if local_epsilon == 0:
    return np.zeros(orders.size)
  n_bar = _n_bar(num_users, local_epsilon)
  chernoff = (local_epsilon * orders
              - (num_users - 1) / (8 * np.exp(local_epsilon)))
  log_excess = np.logaddexp(_log_b5_excess_fn(local_epsilon, orders)(n_bar),
                            chernoff)
  raw = np.logaddexp(0.0, log_excess) / (orders - 1)
  return _capped(raw, local_epsilon, orders)


def girgis_ub2(num_users: int, local_epsilon: float, orders) -> np.ndarray:
  """GIRGIS-UB2 (Thm 2, eq. 9): RDP upper bound at real orders > 1. [UB]

  eps(order) <= log(exp(order^2 (e^eps0 - 1)^2 / n_bar)
                    + exp(eps0 order - (n-1)/(8 e^eps0))) / (order - 1)
  for real orders >= 2 (Thm 6); orders in (1, 2) use the order-2 value
  (monotonicity). Computed in log space and capped by PURE-DP-RDP-CAP.
  """
  num_users, local_epsilon = _check_common(num_users, local_epsilon)
  orders = _validation.check_orders(orders)
  if local_epsilon == 0:
    return np.zeros(orders.size)
  effective = np.maximum(orders, 2.0)
  n_bar = _n_bar(num_users, local_epsilon)
  log_moment = np.logaddexp(
      effective**2 * np.expm1(local_epsilon)**2 / n_bar,
      local_epsilon * effective
      - (num_users - 1) / (8 * np.exp(local_epsilon)))
  return _capped(log_moment / (effective - 1), local_epsilon, orders)


def girgis_ub_mix(num_users: int, local_epsilon: float, orders,
                  relative_block_width: float = 1e-3) -> np.ndarray:
  """GIRGIS-UB-MIX (docs/mathematics.md, derived): RDP bound at integer
  orders. [UB]

  By Thm 4 the moment is at most E_m[E_{m}] with m ~ Bin(n-1, e^{-eps0})
  clones-like users, E_m <= min{e^{(order-1) cap}, B5(m+1), B6(m+1)} (Thm 5,
  Thm 6, Lemma 8), non-increasing in m. Evaluated with the same sound Binomial
  grouping as the clone RDP. Never weaker than GIRGIS-UB1/UB2. Orders above
  MAX_SUMMED_ORDER use B6 and the cap only.
  """
  num_users, local_epsilon = _check_common(num_users, local_epsilon)
  orders = _validation.check_integer_orders(orders)
  if local_epsilon == 0:
    return np.zeros(orders.size)
  orders_bytes = np.ascontiguousarray(orders, np.float64).tobytes()
  log_excess_total = _numerics.log_binomial_mixture_excess(
      num_users - 1, np.exp(-local_epsilon), -np.expm1(-local_epsilon),
      orders, lambda count, block_orders: _shared_mix_log_excess(
          count + 1, local_epsilon, orders_bytes),
      _log_worst_excess(local_epsilon, orders), relative_block_width,
      gap_tolerance=1e-6)
  raw = np.logaddexp(0.0, log_excess_total) / (orders - 1)
  return _capped(raw, local_epsilon, orders)


def _log_worst_excess(local_epsilon: float, orders: np.ndarray) -> np.ndarray:
  """log(e^{(order - 1) cap} - 1): the moment's excess at zero clones."""
  cap = generic.pure_dp_rdp_cap_unchecked(local_epsilon, orders)
  return _numerics.log_expm1((orders - 1) * cap)


# Rounds with similar populations share most anchor labels of the mixture
# (`_numerics.log_binomial_mixture_excess`); each entry is one float per order.
@_cache.cached(16 * 2**20, _cache.atoms_bytes)
def _shared_mix_log_excess(users: int, local_epsilon: float,
                           orders_bytes: bytes) -> np.ndarray:
  """log(E_m - 1) of GIRGIS-UB-MIX for m + 1 = `users`, read-only."""
  log_b5_excess, b6_numerator, log_worst = _mix_row_terms(local_epsilon,
                                                          orders_bytes)
  excess = np.minimum(np.minimum(
      log_b5_excess(users), _numerics.log_expm1(b6_numerator / users)),
                      log_worst)
  excess.setflags(write=False)
  return excess


# What every E_m row of one eps0 and order grid shares (B5's matrices are
# counted in `_b5_terms`).
@_cache.cached(2**20, lambda value: _cache.atoms_bytes(value[1:]))
def _mix_row_terms(local_epsilon: float, orders_bytes: bytes):
  """(users -> log(B5 - 1), B6's exponent times users, log worst excess)."""
  orders = np.frombuffer(orders_bytes)
  return (_log_b5_excess_fn(local_epsilon, orders),
          orders**2 * np.expm1(local_epsilon)**2,
          _log_worst_excess(local_epsilon, orders))


def _capped(raw, local_epsilon: float, orders: np.ndarray) -> np.ndarray:
  """`raw` rounded up, capped by PURE-DP-RDP-CAP (checked arguments)."""
  rounded = np.asarray(raw) * (1 + _numerics.RELATIVE_SAFETY_MARGIN)
  return np.minimum(rounded, generic.pure_dp_rdp_cap_unchecked(
      local_epsilon, orders))


def efm19_rdp_baseline(num_users: int, local_epsilon: float,
                       orders) -> np.ndarray:
  """EFM19-RDP as quoted by Girgis et al. (eq. 10). [UB ?] Baseline only.

  order * 2 e^{4 eps0} (e^eps0 - 1)^2 / n. Its original conditions are not
  verified (docs/mathematics.md), so it is shown for comparison and never used
  to account.
  """
  num_users, local_epsilon = _check_common(num_users, local_epsilon)
  orders = _validation.check_orders(orders)
  return orders * 2 * np.exp(4 * local_epsilon) * np.expm1(
      local_epsilon)**2 / num_users


def _all_equal_pair_log_moments(num_users, local_epsilon, exponents):
  """log E_{k ~ Bin(n, 1/(e^eps0+1))}[R(k)^exponent],
  R = (k e^eps0 + (n-k) e^-eps0)/n.

  R(k) is the likelihood ratio M(D')/M(D) of shuffled binary randomized
  response on D = (0, ..., 0), D' = (0, ..., 0, 1); E[R] = 1. Terms outside a
  Hoeffding window are dropped, which can only lower the value: fine for a
  lower bound.
  """
  p = 1.0 / (np.exp(local_epsilon) + 1)
  one_minus_p = 1.0 / (np.exp(-local_epsilon) + 1)
  lo, hi = _numerics.hoeffding_window(num_users, p, tau=40.0)
  if hi - lo > 4_000_000:  # keep memory bounded; dropping mass is still sound
    lo, hi = int(num_users * p - 2e6), int(num_users * p + 2e6)
  k = np.arange(lo, hi + 1, dtype=np.float64)
  log_pmf = _numerics.binomial_window_log_pmf(num_users, p, one_minus_p, lo, hi)
  # R - 1 = (k - n p) (e^eps0 - e^-eps0) / n, exact at the mean.
  log_ratio = np.log1p((k - num_users * p) * 2 * np.sinh(local_epsilon)
                       / num_users)
  exponents = np.asarray(exponents, dtype=np.float64)
  x = exponents[:, None] * log_ratio[None, :]
  if np.max(np.abs(x)) < 600:
    # E[R^e] - 1 summed directly keeps full relative precision when it is
    # tiny; rounding is charged against it (this is a lower bound).
    terms = np.exp(log_pmf)[None, :] * np.expm1(x)
    excess = terms.sum(axis=1) - 1e-13 * np.abs(terms).sum(axis=1)
    log_moment = np.log1p(np.maximum(excess, -1.0 + 1e-300))
  else:
    log_moment = special.logsumexp(log_pmf[None, :] + x, axis=1) - 1e-12
  # The window pmf is normalised up; scale it back by Hoeffding's lower bound
  # on the window mass so the result stays a lower bound.
  mean = num_users * p
  outside = ((lo > 0) * np.exp(-2 * (mean - lo)**2 / num_users)
             + (hi < num_users) * np.exp(-2 * (hi - mean)**2 / num_users))
  return log_moment + np.log1p(-min(outside, 1.0 - 1e-16))


def girgis_lower_bound(num_users: int, local_epsilon: float,
                       orders) -> np.ndarray:
  """GIRGIS-LB (Thm 3, eq. 11; closed form GIRGIS-LB-BINOMIAL). [LB, PAIR]

  Never a guarantee.

  log E_{k ~ Bin(n, 1/(e^eps0+1))}[((k e^eps0 + (n-k) e^-eps0)/n)^order]
  / (order - 1): exactly D_order(M(D') || M(D)) for shuffled binary RR with
  D = (0,...,0), D' = (0,...,0,1); valid for every real order > 1. It lower
  bounds the worst-case RDP of every class containing binary RR.
  """
  num_users, local_epsilon = _check_common(num_users, local_epsilon)
  orders = _validation.check_orders(orders)
  if local_epsilon == 0:
    return np.zeros(orders.size)
  log_moment = _all_equal_pair_log_moments(num_users, local_epsilon, orders)
  return np.maximum(log_moment, 0.0) / (orders - 1)


def binary_rr_all_equal_pair_rdp_lower_bound(num_users: int,
                                             local_epsilon: float,
                                             orders) -> np.ndarray:
  """Exact RDP of shuffled binary RR on the all-equal pair, both orders.
  [LB, PAIR]

  max(D_order(M(D') || M(D)), D_order(M(D) || M(D'))) for D = (0,...,0),
  D' = (0,...,0,1). The first is GIRGIS-LB; the second uses the same
  expectation with exponent 1 - order. A lower bound on the worst-case RDP of
  shuffled eps0-LDP randomizers, never a guarantee.
  """
  num_users, local_epsilon = _check_common(num_users, local_epsilon)
  orders = _validation.check_orders(orders)
  if local_epsilon == 0:
    return np.zeros(orders.size)
  forward = _all_equal_pair_log_moments(num_users, local_epsilon, orders)
  backward = _all_equal_pair_log_moments(num_users, local_epsilon, 1 - orders)
  return np.maximum(np.maximum(forward, backward), 0.0) / (orders - 1)


def girgis_cor2_lower_bound(num_users: int, local_epsilon: float,
                            orders) -> np.ndarray:
  """GIRGIS-COR2 (Cor 2, eq. 12). [LB] Never a guarantee.

  log(1 + C(order, 2) (e^eps0 - 1)^2 / (n e^eps0)) / (order - 1) at integer
  orders. The paper's Jensen step is invalid for odd moments; the conclusion was
  checked numerically (GIRGIS-ERRATA). Prefer GIRGIS-LB.
  """
  num_users, local_epsilon = _check_common(num_users, local_epsilon)
  orders = _validation.check_integer_orders(orders)
  return np.log1p(special.comb(orders, 2) * np.expm1(local_epsilon)**2
                  / (num_users * np.exp(local_epsilon))) / (orders - 1)
