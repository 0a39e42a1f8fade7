"""The computed numbers of docs/performance.md and docs/limits.md."""

import functools

from .core import power_of_ten
from .core import table
from .core import value

RATIO_POPULATIONS = (10**3, 10**5, 10**7, 10**9)
RATIO_EPSILONS = (0.1, 1.0, 8.0)
RATIO_ROUNDS = (1, 10, 1000, 100_000)


@functools.lru_cache(maxsize=None)
def _rdp_over_pld(num_users: int, local_epsilon: float, rounds: int) -> float:
  """benchmarks/loops.py's table 4: RDP epsilon / PLD epsilon at 1e-6."""
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import ShuffleRdpAccountant
  event = ShuffleEvent(num_users, local_epsilon)
  pld = ShufflePldAccountant().compose(event, rounds).get_epsilon(1e-6)
  return ShuffleRdpAccountant().compose(event, rounds).get_epsilon(1e-6) / pld


def _all_ratios():
  return {(n, e, t): _rdp_over_pld(n, e, t) for n in RATIO_POPULATIONS
          for e in RATIO_EPSILONS for t in RATIO_ROUNDS}


@table('performance.rdp_over_pld', slow=True)
def _performance_ratio_table():
  header = ['n', 'ε0'] + [f'T = {power_of_ten(t)}' for t in RATIO_ROUNDS]
  return header, [[power_of_ten(n), f'{e:g}'] + [
      f'{_rdp_over_pld(n, e, t):.2f}' for t in RATIO_ROUNDS]
                  for n in RATIO_POPULATIONS for e in RATIO_EPSILONS]


value('performance.ratio_cells_within_2', slow=True)(
    lambda: str(sum(r <= 2 for r in _all_ratios().values())))
value('performance.ratio_cells', slow=True)(lambda: str(len(_all_ratios())))
value('performance.ratio_worst', slow=True)(
    lambda: f'{max(_all_ratios().values()):.1f}')
value('performance.ratio_near_pure', slow=True)(
    lambda: f'{_rdp_over_pld(10**5, 8.0, 1):.1f}')
