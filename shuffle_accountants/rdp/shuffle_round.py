"""The RDP composed for a shuffle round: the smallest sound bound.

IDs: KHH-RDP-CLONE, GIRGIS-UB1, WBK19-THM9

For pure eps0-LDP randomizers (docs/mathematics.md) every order gets
min{KHH-RDP-CLONE, GIRGIS-UB1, GIRGIS-UB2, GIRGIS-UB-MIX, PURE-DP-RDP-CAP};
each candidate is a proven upper bound, so their minimum is one too. Bounds
proven only at integer orders reach real orders through RDP-INTERP. For a hidden
fixed-size sample of users (item 4) WBK19-THM9 is applied on top, with the
shuffle bound of the sample as base RDP and eps0 as its pure-DP parameter.

Lower bounds and baselines (GIRGIS-LB, GIRGIS-COR2, EFM19, GIRGIS-COR1) never
enter this minimum.
"""

from typing import Dict, Optional, Tuple

import attr
import numpy as np

from shuffle_accountants import _validation
from shuffle_accountants.rdp import clone
from shuffle_accountants.rdp import generic
from shuffle_accountants.rdp import girgis
from shuffle_accountants.rdp import subsampling

__all__ = [
    'CLONE', 'CLONE_RATE', 'GIRGIS_UB1', 'GIRGIS_UB2', 'GIRGIS_UB_MIX',
    'PURE_DP_CAP', 'WBK19', 'RdpBound', 'smallest_bound',
    'at_every_other_order', 'shuffle_rdp_upper_bound',
    'subsampled_shuffle_rdp_upper_bound',
]

CLONE = 'clone (KHH-RDP-CLONE)'
CLONE_RATE = 'clone rate s(R) (NAMED-CLONE-RATE, KHH-RDP-CLONE)'
GIRGIS_UB1 = 'GIRGIS-UB1'
GIRGIS_UB2 = 'GIRGIS-UB2'
GIRGIS_UB_MIX = 'GIRGIS-UB-MIX'
PURE_DP_CAP = 'PURE-DP-RDP-CAP'
WBK19 = 'WBK19-THM9 subsampling'


@attr.s(frozen=True, slots=True, auto_attribs=True, eq=False)
class RdpBound:
  """Per-order RDP upper bounds and where each came from.

  Attributes:
    orders: the RDP orders.
    rdp: the bound composed by the accountant (the minimum of `candidates`).
    winners: for each order, the name of the candidate that attained `rdp`.
    candidates: every sound bound that was evaluated, by name.
  """
  orders: np.ndarray
  rdp: np.ndarray
  winners: Tuple[str, ...]
  candidates: Dict[str, np.ndarray]

  def winner_at(self, order: float) -> str:
    """Name of the bound that won at the order closest to `order`."""
    return self.winners[int(np.argmin(np.abs(self.orders - order)))]


def smallest_bound(orders: np.ndarray,
                   candidates: Dict[str, np.ndarray]) -> RdpBound:
  """The per-order minimum of several upper bounds, with the winners' names."""
  names = list(candidates)
  stacked = np.stack([candidates[name] for name in names])
  best = np.argmin(stacked, axis=0)
  return RdpBound(orders=orders, rdp=stacked[best, np.arange(orders.size)],
                  winners=tuple(names[i] for i in best),
                  candidates=candidates)


# Relative width of the clone-count blocks of a round's clone candidates
# (sound for any width, CLONE-MONOTONE): 1e-2 lets rounds of nearby populations
# share most conditional moments (cached per count); single-round epsilon at
# most 0.5 % above width 1e-3's over n in [300, 1e8], eps0 in [0.1, 8], T <=
# 100.
_CLONE_BLOCK_WIDTH = 1e-2
# Grids of at least this many orders are thinned by `at_every_other_order`.
_THINNED_GRID_SIZE = 12


def at_every_other_order(bound, orders: np.ndarray) -> np.ndarray:
  """`bound` at every other order of a dense grid, the rest by RDP-INTERP. [UB]

  The clone pair's and GIRGIS-UB-MIX's bounds cost time per order; on dense
  grids (the default one has 46 orders) the orders between two evaluated
  ones take the chord of (order - 1) * bound. That is an upper bound by
  convexity (RDP-INTERP): (order - 1) D_order is convex for one pair (the
  clone pair), and so is its supremum over pairs (the shuffler's RDP that
  GIRGIS-UB-MIX bounds). The first and last orders are always evaluated.
  """
  if orders.size < _THINNED_GRID_SIZE:
    return bound(orders)
  grid = np.unique(orders)
  grid = np.unique(np.append(grid[::2], grid[-1]))
  return generic.chord_interpolate(grid, bound(grid), orders)


def shuffle_rdp_upper_bound(num_users: int, local_epsilon: float,
                            orders, clone_rate: Optional[float] = None
                            ) -> RdpBound:
  """RDP of one shuffle round of pure eps0-LDP reports: the smallest UB. [UB]

  Args:
    num_users: n >= 1 users whose reports are shuffled.
    local_epsilon: eps0 >= 0 of each (pure) local randomizer.
    orders: RDP orders > 1.
    clone_rate: s(R) of the randomizer (NAMED-CLONE-RATE), or None for a generic
      one; when 2 s(R) > e^-eps0 the clone pair with that rate is a candidate.

  Returns:
    An `RdpBound` whose `rdp` is a proven upper bound at every order.
  """
  num_users = _validation.check_integer('num_users', num_users, 1)
  local_epsilon = _validation.check_local_epsilon(local_epsilon)
  orders = _validation.check_orders(orders)
  candidates = {
      CLONE: at_every_other_order(
          lambda o: clone.clone_pair_rdp_unchecked(
              num_users, local_epsilon, o,
              relative_block_width=_CLONE_BLOCK_WIDTH), orders),
      GIRGIS_UB1: generic.at_real_orders(
          lambda o: girgis.girgis_ub1(num_users, local_epsilon, o), orders),
      GIRGIS_UB2: girgis.girgis_ub2(num_users, local_epsilon, orders),
      GIRGIS_UB_MIX: at_every_other_order(
          lambda grid: generic.at_real_orders(
              lambda o: girgis.girgis_ub_mix(num_users, local_epsilon, o),
              grid), orders),
      PURE_DP_CAP: generic.pure_dp_rdp_cap_unchecked(
          local_epsilon, orders),
  }
  if clone_rate is not None and 2 * clone_rate > np.exp(-local_epsilon):
    candidates[CLONE_RATE] = at_every_other_order(
        lambda o: clone.clone_pair_rdp(
            num_users, local_epsilon, o,
            relative_block_width=_CLONE_BLOCK_WIDTH,
            clone_probability=min(1.0, 2 * clone_rate)), orders)
  return smallest_bound(orders, candidates)


def subsampled_shuffle_rdp_upper_bound(population_size: int, sample_size: int,
                                       local_epsilon: float,
                                       orders) -> RdpBound:
  """RDP when a hidden uniform sample of `sample_size` users is shuffled. [UB]

  WBK19-THM9 with base RDP `shuffle_rdp_upper_bound(sample_size, ...)` and
  base pure-DP epsilon eps0 (docs/mathematics.md SHUFFLE-LDP-CAP), replace-one
  over the population. Why the combination is sound: WBK19-THM9 holds for every
  replace-one pair (both orders) given a base bound valid for every pair of the
  m-user shuffle, which each candidate is; the un-subsampled bound is a
  candidate too, since exp((order - 1) D_order) is jointly convex and the
  sampled mechanism is a mixture of identical (differing user not sampled) and
  neighbouring m-user shuffles. No ordered-pair Renyi moment is used
  (ORDERED-RDP-UNSOUND).

  Args:
    population_size: number of users N >= 1 the sample is drawn from.
    sample_size: number m of sampled users, 1 <= m <= N.
    local_epsilon: eps0 >= 0 of each (pure) local randomizer.
    orders: RDP orders > 1.

  Returns:
    An `RdpBound`; `candidates` holds the un-subsampled bound and WBK19.
  """
  population_size = _validation.check_integer('population_size',
                                              population_size, 1)
  sample_size = _validation.check_integer('sample_size', sample_size, 1,
                                          population_size)
  orders = _validation.check_orders(orders)
  base = lambda o: shuffle_rdp_upper_bound(sample_size, local_epsilon, o).rdp
  unsubsampled = shuffle_rdp_upper_bound(sample_size, local_epsilon, orders)
  amplified = subsampling.wbk19_without_replacement_rdp(
      sample_size / population_size, base, local_epsilon, orders)
  candidates = dict(unsubsampled.candidates)
  candidates[WBK19] = amplified
  return smallest_bound(orders, candidates)
