"""The computed numbers of docs/rdp_accountant.md."""

import functools

from .core import sig
from .core import table
from .core import value


@functools.lru_cache(maxsize=None)
def _rdp_row(local_epsilon: float, num_users: int, rounds: int):
  """(UB1, EFM19, accountant, order, winner) as benchmarks/rdp_accountant.py."""
  from dp_accounting.rdp import rdp_privacy_accountant
  import numpy as np

  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShuffleRdpAccountant
  from shuffle_accountants.rdp import girgis
  orders = np.arange(2, 2049)
  ub1, _ = rdp_privacy_accountant.compute_epsilon(
      orders, rounds * girgis.girgis_ub1(num_users, local_epsilon, orders),
      1e-6)
  efm, _ = rdp_privacy_accountant.compute_epsilon(
      orders, rounds * girgis.efm19_rdp_baseline(num_users, local_epsilon,
                                                 orders), 1e-6)
  accountant = ShuffleRdpAccountant()
  accountant.compose(ShuffleEvent(num_users, local_epsilon), rounds)
  ours, order = accountant.get_epsilon_and_optimal_order(1e-6)
  winner = accountant.explain(1e-6)[0]['bound']
  return ub1, efm, ours, order, winner


RDP_SETTINGS = [(0.5, 10**6, 10**3), (0.5, 10**6, 10**5), (1.0, 10**4, 10**3),
                (1.0, 10**6, 10**3), (2.0, 10**6, 10**3), (4.0, 10**6, 10**3),
                (4.0, 10**9, 10**5), (0.5, 10**9, 1)]


@table('rdp.benchmark', slow=True)
def _rdp_benchmark():
  header = ['ε0', 'n', 'T', 'GIRGIS-UB1', 'EFM19 (baseline)', 'accountant',
            'UB1/ours', 'order', 'winner']
  rows = []
  for local_epsilon, num_users, rounds in RDP_SETTINGS:
    ub1, efm, ours, order, winner = _rdp_row(local_epsilon, num_users, rounds)
    rows.append([f'{local_epsilon:g}', f'{num_users:.0e}'.replace('+0', ''),
                 f'{rounds:.0e}'.replace('+0', '') if rounds > 1 else '1',
                 sig(ub1, 4), sig(efm, 2) if efm >= 1e4 else sig(efm, 4),
                 sig(ours, 4), f'{ub1 / ours:.2f}', f'{order:g}', winner])
  return header, rows


@value('rdp.ub1_ratio_range', slow=True)
def _rdp_ratio_range():
  ratios = [_rdp_row(*setting)[0] / _rdp_row(*setting)[2]
            for setting in RDP_SETTINGS]
  return f'{sig(min(ratios), 2)}–{sig(max(ratios), 2)}'


@value('rdp.girgis_8x_ub1', slow=True)
def _rdp_8x_ub1():
  return sig(_rdp_row(0.5, 10**6, 10**5)[0], 4)


@value('rdp.girgis_8x_ours', slow=True)
def _rdp_8x_ours():
  return sig(_rdp_row(0.5, 10**6, 10**5)[2], 3)


@functools.lru_cache(maxsize=None)
def _large_n_one_round():
  """n = 10^7, eps0 = 0.3, one round: order-1024 cap, staged, PLD."""
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import ShuffleRdpAccountant
  from shuffle_accountants.rdp.accountant import DEFAULT_ORDERS
  event = ShuffleEvent(num_users=10**7, local_epsilon=0.3)
  capped = ShuffleRdpAccountant(orders=DEFAULT_ORDERS)  # no extensions
  staged = ShuffleRdpAccountant()
  pld = ShufflePldAccountant()
  return tuple(accountant.compose(event).get_epsilon(1e-6)
               for accountant in (capped, staged, pld))


def _times_ten(number: float) -> str:
  mantissa, exponent = f'{number:.1e}'.split('e')
  superscript = str.maketrans('-0123456789', '⁻⁰¹²³⁴⁵⁶⁷⁸⁹')
  return f'{mantissa}·10{str(int(exponent)).translate(superscript)}'


for _index, _name in enumerate(('capped', 'staged', 'pld')):
  value(f'rdp.large_n_{_name}')(
      lambda index=_index: _times_ten(_large_n_one_round()[index]))


@functools.lru_cache(maxsize=None)
def _thinned_orders_example():
  """n = 1e5, eps0 = 4, delta = 1e-6, one round: the accountant, the same
  with clone blocks of width 1e-3, and the clone pair at every order."""
  from dp_accounting.rdp import rdp_privacy_accountant
  import numpy as np

  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShuffleRdpAccountant
  from shuffle_accountants import clear_caches
  from shuffle_accountants.rdp import clone
  from shuffle_accountants.rdp import shuffle_round
  from shuffle_accountants.rdp.accountant import DEFAULT_ORDERS
  event = ShuffleEvent(num_users=10**5, local_epsilon=4.0)
  accountant = ShuffleRdpAccountant().compose(event).get_epsilon(1e-6)
  width = shuffle_round._CLONE_BLOCK_WIDTH
  # The round's bound is cached: emptied so that the narrow width is used,
  # and again so that no later call sees it.
  clear_caches()
  try:
    shuffle_round._CLONE_BLOCK_WIDTH = 1e-3
    narrow = ShuffleRdpAccountant().compose(event).get_epsilon(1e-6)
  finally:
    shuffle_round._CLONE_BLOCK_WIDTH = width
    clear_caches()
  orders = np.asarray(DEFAULT_ORDERS, dtype=float)
  every_order, _ = rdp_privacy_accountant.compute_epsilon(
      orders, clone.clone_pair_rdp(10**5, 4.0, orders), 1e-6)
  return accountant, narrow, every_order


for _index, _name in enumerate(('accountant', 'narrow_blocks', 'every_order')):
  value(f'rdp.thinned_{_name}')(
      lambda index=_index: sig(_thinned_orders_example()[index], 4))


@value('rdp.thinned_excess')
def _thinned_excess():
  accountant, _, every_order = _thinned_orders_example()
  return f'{100 * (accountant / every_order - 1):.1f} %'
