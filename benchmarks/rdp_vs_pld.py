"""RDP route against PLD route for shuffle rounds (prints tables; not a test).

Table 1, for `ShuffleEvent(n, eps0)` with n in {1e2, ..., 1e10}, eps0 in
{0.1, 1, 3, 8} and T in {1, 10} rounds at delta = 1e-6: epsilon of each
route, their ratio RDP / PLD (issue 22 asks for at most 2; a PLD epsilon of
0 with an RDP epsilon of 0 counts as 1) and, for the first count of each
round (whose bounds later counts reuse), the time ratio RDP / PLD. Times are
also given as ratios to dp_accounting's own PLD of
`SelfComposedDpEvent(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.0)), 1000)`
computed in the same run.

Table 2 (issue 22 item 5): for random check-in rounds (fixed seed), the
share of pairs gamma < gamma' whose epsilon falls as the rate rises, per
route, and the largest such fall; both routes guarantee only that no rate
exceeds rate 1 (docs/mathematics.md DOMINATING-ROUNDS, NOT-MONOTONE).

Run: python benchmarks/rdp_vs_pld.py [--quick]
"""

import sys
import time

from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
import numpy as np

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant

DELTA = 1e-6


def _timed(function):
  start = time.perf_counter()
  value = function()
  return value, time.perf_counter() - start


def _reference_seconds() -> float:
  event = dp_event.SelfComposedDpEvent(
      dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)),
      1000)
  accountant = pld_privacy_accountant.PLDAccountant()
  return _timed(lambda: accountant.compose(event).get_epsilon(DELTA))[1]


def _ratio(rdp: float, pld: float) -> float:
  if pld == 0:
    return 1.0 if rdp == 0 else np.inf
  return rdp / pld


def ratio_table(num_users_list, local_epsilons, counts, reference):
  header = (f'{"eps0":>4} {"n":>6} {"T":>3} | {"RDP eps":>10} '
            f'{"PLD eps":>10} {"RDP/PLD":>7} | {"t RDP/PLD":>9} '
            f'{"t RDP/ref":>9}')
  print(header)
  print('-' * len(header))
  ratios = []
  for local_epsilon in local_epsilons:
    for num_users in num_users_list:
      for count in counts:
        event = ShuffleEvent(num_users=num_users, local_epsilon=local_epsilon)
        rdp, rdp_time = _timed(lambda: ShuffleRdpAccountant().compose(
            event, count).get_epsilon(DELTA))
        pld, pld_time = _timed(lambda: ShufflePldAccountant().compose(
            event, count).get_epsilon(DELTA))
        ratio = _ratio(rdp, pld)
        ratios.append(ratio)
        # Later counts of a round reuse its cached bounds: timed once.
        times = (f'{rdp_time / pld_time:>9.2f} {rdp_time / reference:>9.2f}'
                 if count == counts[0] else f'{"cached":>9} {"":>9}')
        print(f'{local_epsilon:>4g} {num_users:>6.0e} {count:>3} | '
              f'{rdp:>10.4g} {pld:>10.4g} {ratio:>7.2f} | {times}')
  ratios = np.array(ratios)
  print(f'\nRDP within 2x of PLD in {np.sum(ratios <= 2)} of {ratios.size} '
        f'cells; worst {np.max(ratios):.2f}x\n')


def monotonicity_table(num_pairs: int, seed: int = 0):
  rng = np.random.default_rng(seed)
  header = f'{"route":<22} {"pairs":>5} {"falls":>5} {"largest fall":>12}'
  print(header)
  print('-' * len(header))
  cases = []
  for _ in range(num_pairs):
    num_users = int(10**rng.uniform(1, 5))
    low = float(10**rng.uniform(-3, 0))
    high = min(1.0, low * float(10**rng.uniform(0, 1)))
    cases.append((num_users, low, high, float(rng.uniform(0.1, 6.0)),
                  [None, 3][int(rng.integers(2))],
                  int(rng.choice([1, 10, 100])),
                  float(10**rng.uniform(-9, -2))))
  for route in (ShuffleRdpAccountant, ShufflePldAccountant):
    falls = []
    for num_users, low, high, local_epsilon, categories, count, delta in cases:
      values = [route().compose(CheckInEvent(
          num_users, rate, local_epsilon=local_epsilon,
          num_categories=categories), count).get_epsilon(delta)
                for rate in (low, high)]
      if values[0] > values[1] * (1 + 1e-9):
        falls.append(values[0] / values[1])
    print(f'{route.__name__:<22} {len(cases):>5} {len(falls):>5} '
          f'{max(falls, default=1.0):>12.3f}')


def main():
  quick = '--quick' in sys.argv
  reference = _reference_seconds()
  print(f'reference (dp_accounting PLD, Poisson-sampled Gaussian x 1000): '
        f'{reference:.2f} s\n')
  ratio_table([10**k for k in ((2, 6, 10) if quick else range(2, 11))],
              (0.1, 1.0, 3.0, 8.0), (1, 10), reference)
  monotonicity_table(10 if quick else 60)


if __name__ == '__main__':
  main()
