"""Generic RDP tools used by every shuffle bound.

IDs: PURE-DP-RDP-CAP, RDP-INTERP

* PURE-DP-RDP-CAP [UB]: the RDP of any epsilon0-DP mechanism.
* RDP-INTERP [UB]: upper bounds at real orders from upper bounds on a grid of
  orders, using convexity of (order - 1) * D_order (van Erven-Harremoes).
"""

from typing import Union

import numpy as np

from shuffle_accountants import _numerics
from shuffle_accountants import _validation

__all__ = [
    'pure_dp_rdp_cap', 'pure_dp_rdp_cap_unchecked', 'chord_interpolate',
    'at_real_orders',
]


def _log_cosh(y: Union[float, np.ndarray]) -> np.ndarray:
  """log cosh(y) with full relative accuracy: log1p(2 sinh^2(y/2)) near 0."""
  y = np.abs(np.asarray(y, dtype=np.float64))
  small = np.log1p(2 * np.sinh(np.minimum(y, 20.0) / 2)**2)
  large = y - np.log(2.0) + np.log1p(np.exp(-2 * y))
  return np.where(y < 20.0, small, large)


def pure_dp_rdp_cap(local_epsilon: float, orders) -> np.ndarray:
  """PURE-DP-RDP-CAP: RDP of any `local_epsilon`-DP pair. [UB], exact for RR.

  cap(order) = log((e^{order eps0} + e^{(1-order) eps0}) / (e^{eps0} + 1))
  / (order - 1), the Renyi divergence of binary randomized response, which
  dominates every eps0-DP pair (Kairouz-Oh-Viswanath simulation). A shuffle of
  eps0-LDP reports is eps0-DP under replace-one, so this caps every bound.

  Args:
    local_epsilon: epsilon0 >= 0.
    orders: RDP orders > 1.

  Returns:
    Upper bounds on the RDP, one per order (rounded up).
  """
  return pure_dp_rdp_cap_unchecked(
      _validation.check_local_epsilon(local_epsilon),
      _validation.check_orders(orders))


def pure_dp_rdp_cap_unchecked(local_epsilon: float,
                              orders: np.ndarray) -> np.ndarray:
  """`pure_dp_rdp_cap` on checked arguments (the package's callers)."""
  # (e^{a x} + e^{(1-a) x}) / (e^x + 1) = cosh((a - 1/2) x) / cosh(x / 2):
  # a difference of log-cosh terms, each accurate down to tiny eps0 (the
  # direct form rounds to 0 below eps0 ~ 1e-8, which is not an upper bound).
  log_moment = (_log_cosh((orders - 0.5) * local_epsilon)
                - _log_cosh(0.5 * local_epsilon))
  cap = np.maximum(log_moment, 0.0) / (orders - 1)
  return np.minimum(cap * (1 + _numerics.RELATIVE_SAFETY_MARGIN),
                    local_epsilon)


def chord_interpolate(grid_orders: np.ndarray, grid_values: np.ndarray,
                      orders: np.ndarray) -> np.ndarray:
  """RDP-INTERP: upper bounds at `orders` from upper bounds on a grid. [UB]

  (order - 1) * D_order is convex in the order, so between two grid points it
  lies below the chord through the (upper-bounded) grid values; below the
  first grid point the RDP is bounded by its value there (monotonicity).

  Args:
    grid_orders: increasing orders > 1 at which upper bounds are known.
    grid_values: the upper bounds (may be +inf).
    orders: orders in (1, grid_orders[-1]].

  Returns:
    Upper bounds at `orders`.
  """
  grid_orders = np.asarray(grid_orders, dtype=np.float64)
  grid_values = np.asarray(grid_values, dtype=np.float64)
  orders = np.asarray(orders, dtype=np.float64)
  if np.any(orders > grid_orders[-1]):
    raise ValueError(f'orders must be <= {grid_orders[-1]} to interpolate; '
                     f'got {orders.max()}.')
  upper = np.clip(np.searchsorted(grid_orders, orders, side='left'), 0,
                  grid_orders.size - 1)
  lower = np.maximum(upper - 1, 0)
  hi_order, lo_order = grid_orders[upper], grid_orders[lower]
  hi_mass = (hi_order - 1) * grid_values[upper]
  lo_mass = (lo_order - 1) * grid_values[lower]
  span = hi_order - lo_order
  with np.errstate(invalid='ignore', divide='ignore'):
    weight = np.where(span > 0, (orders - lo_order) / np.where(span > 0, span,
                                                               1.0), 1.0)
    chord = ((1 - weight) * np.where(weight < 1, lo_mass, 0.0)
             + weight * hi_mass) / (orders - 1)
  on_grid = orders == hi_order
  below_grid = orders < grid_orders[0]
  result = np.where(on_grid, grid_values[upper], chord)
  return np.where(below_grid, grid_values[0], result)


def at_real_orders(integer_bound, orders) -> np.ndarray:
  """Evaluates a bound proven for integer orders >= 2 at real orders > 1.

  Uses RDP-INTERP between the neighbouring integers, and the order-2 value
  for orders in (1, 2).

  Args:
    integer_bound: callable mapping an array of integer orders to bounds.
    orders: real orders > 1.

  Returns:
    Upper bounds at `orders`.
  """
  orders = _validation.check_orders(orders)
  needed = np.unique(np.concatenate([
      np.maximum(np.floor(orders), 2), np.maximum(np.ceil(orders), 2)]))
  return chord_interpolate(needed, integer_bound(needed), orders)
