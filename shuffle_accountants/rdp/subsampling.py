"""RDP amplification by subsampling without replacement.

IDs: WBK19-THM9

WBK19-THM9 [UB] (Wang, Balle, Kasiviswanathan 2019, Thm 9), replace-one: if a
mechanism on datasets of `sample_size` records is (j, eps(j))-RDP for integers
2 <= j <= order and eps(inf)-DP, then running it on a uniformly random
`sample_size`-subset of `population_size` records (gamma = ratio) is
(order, eps'(order))-RDP for integer order >= 2 with

  eps'(order) <= log(1 + gamma^2 C(order,2)
                             min{4(e^{eps(2)} - 1),
                                 e^{eps(2)} min{2, (e^{eps(inf)} - 1)^2}}
                    + sum_{j=3}^{order} gamma^j C(order,j) e^{(j-1) eps(j)}
                          min{2, (e^{eps(inf)} - 1)^j}) / (order - 1),

and also eps'(order) <= eps(order) (subsampling never hurts), which callers
apply by taking the minimum with the base bound.
"""

from typing import Callable

import numpy as np
from scipy import special

from shuffle_accountants import _numerics
from shuffle_accountants import _validation
from shuffle_accountants.rdp import generic

__all__ = [
    'MAX_SUMMED_ORDER', 'wbk19_without_replacement_rdp',
    'wbk19_without_replacement_rdp_unchecked',
]

# The bound has `order` terms; above this order only eps(order) is used.
MAX_SUMMED_ORDER = 1 << 14


def _base_grid(largest: int, needed: np.ndarray) -> np.ndarray:
  """Integer orders at which to evaluate the base mechanism's RDP."""
  dense = np.arange(2, min(largest, 64) + 1)
  sparse = np.round(64 * 1.1 ** np.arange(200))
  sparse = sparse[sparse <= largest]
  return np.unique(np.concatenate([dense, sparse, needed, [largest]]))


def wbk19_without_replacement_rdp(
    sampling_ratio: float, base_rdp: Callable[[np.ndarray], np.ndarray],
    base_pure_epsilon: float, orders) -> np.ndarray:
  """WBK19-THM9 at real orders > 1. [UB]

  The base RDP is evaluated on a grid of integer orders and bounded at the
  other integers by RDP-INTERP (chords of the convex (j-1) eps(j)); the
  theorem is applied at integer orders and extended to real orders by
  RDP-INTERP. Orders above MAX_SUMMED_ORDER get +inf; callers take the
  minimum with the base mechanism's own RDP.

  Args:
    sampling_ratio: sample_size / population_size, in (0, 1].
    base_rdp: maps an array of orders > 1 to RDP upper bounds of the base
      mechanism on a sample.
    base_pure_epsilon: the base mechanism's pure-DP epsilon (inf if none).
    orders: real orders > 1.

  Returns:
    Upper bounds on the RDP of the subsampled mechanism.
  """
  return wbk19_without_replacement_rdp_unchecked(
      _validation.check_real('sampling_ratio', sampling_ratio, 0.0, 1.0,
                             min_inclusive=False),
      base_rdp, base_pure_epsilon, _validation.check_orders(orders))


def wbk19_without_replacement_rdp_unchecked(
    sampling_ratio: float, base_rdp: Callable[[np.ndarray], np.ndarray],
    base_pure_epsilon: float, orders: np.ndarray) -> np.ndarray:
  """`wbk19_without_replacement_rdp` on checked arguments."""
  summed = orders <= MAX_SUMMED_ORDER
  result = np.full(orders.size, np.inf)
  if not np.any(summed):
    return result
  needed = np.unique(np.concatenate([np.maximum(np.floor(orders[summed]), 2),
                                     np.maximum(np.ceil(orders[summed]), 2)]))
  largest = int(needed.max())
  grid = _base_grid(largest, needed)
  grid_rdp = np.asarray(base_rdp(grid), dtype=np.float64)
  all_integers = np.arange(2, largest + 1, dtype=np.float64)
  eps = generic.chord_interpolate(grid, grid_rdp, all_integers)
  log_gamma = np.log(sampling_ratio)
  log_pure_factor = _numerics.log_expm1(base_pure_epsilon) if np.isfinite(
      base_pure_epsilon) else np.inf
  # Terms j >= 3 without the binomial coefficient, indexed by j - 3.
  j = all_integers[1:]
  log_higher = (j * log_gamma + (j - 1) * eps[1:]
                + np.minimum(np.log(2.0), j * log_pure_factor))
  eps2 = eps[0]
  with np.errstate(divide='ignore'):
    log_second_factor = min(
        np.log(4.0) + _numerics.log_expm1(eps2) if eps2 > 0 else -np.inf,
        eps2 + min(np.log(2.0), 2 * log_pure_factor))
  subsampled = np.empty(needed.size)
  for index, order in enumerate(needed):
    order = int(order)
    ks = np.arange(3, order + 1, dtype=np.float64)
    log_comb = (special.gammaln(order + 1) - special.gammaln(ks + 1)
                - special.gammaln(order - ks + 1))
    terms = np.append(log_comb + log_higher[:order - 2],
                      2 * log_gamma + np.log(order * (order - 1) / 2)
                      + log_second_factor)
    subsampled[index] = np.logaddexp(0.0, _numerics.log_sum_exp(terms)) / (
        order - 1)
  subsampled *= 1 + _numerics.RELATIVE_SAFETY_MARGIN
  at_orders = generic.chord_interpolate(needed, subsampled, orders[summed])
  result[summed] = at_orders
  return result
