"""Benchmark of the RDP accountant (prints a table; not a test).

For eps0 in {0.5, 1, 2, 4}, n in {1e3, 1e4, 1e6, 1e9} and T in {1, 1e3, 1e5}
rounds at delta = 1e-6: epsilon from GIRGIS-UB1 alone (integer orders 2..2048),
from the EFM19 baseline (unverified, comparison only), and from
ShuffleRdpAccountant (default orders), the ratio UB1 / accountant, the
accountant's optimal order, the winning bound, and the wall time of composing
one ShuffleEvent (bounds are computed once per event; T only scales them).

Run: python benchmarks/rdp_accountant.py
"""

import time

from dp_accounting.rdp import rdp_privacy_accountant
import numpy as np

from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.rdp import girgis

DELTA = 1e-6
UB1_ORDERS = np.arange(2, 2049)


def main():
  header = (f'{"eps0":>5} {"n":>6} {"T":>6} | {"UB1":>9} {"EFM19":>9} '
            f'{"ours":>9} {"UB1/ours":>8} {"order":>6} {"winner":<22} '
            f'{"time s":>6}')
  print(header)
  print('-' * len(header))
  for local_epsilon in (0.5, 1.0, 2.0, 4.0):
    for num_users in (10**3, 10**4, 10**6, 10**9):
      ub1 = girgis.girgis_ub1(num_users, local_epsilon, UB1_ORDERS)
      efm = girgis.efm19_rdp_baseline(num_users, local_epsilon, UB1_ORDERS)
      start = time.perf_counter()
      accountant = ShuffleRdpAccountant()
      accountant.compose(ShuffleEvent(num_users, local_epsilon))
      elapsed = time.perf_counter() - start
      one_round = accountant.rdp
      for rounds in (1, 10**3, 10**5):
        ub1_eps, _ = rdp_privacy_accountant.compute_epsilon(
            UB1_ORDERS, rounds * ub1, DELTA)
        efm_eps, _ = rdp_privacy_accountant.compute_epsilon(
            UB1_ORDERS, rounds * efm, DELTA)
        ours, order = rdp_privacy_accountant.compute_epsilon(
            accountant.orders, rounds * one_round, DELTA)
        index = int(np.argmin(np.abs(accountant.orders - order)))
        winner = accountant.contributions[0].bound.winners[index]
        print(f'{local_epsilon:>5} {num_users:>6.0e} {rounds:>6.0e} | '
              f'{ub1_eps:>9.4g} {efm_eps:>9.4g} {ours:>9.4g} '
              f'{ub1_eps / ours:>8.2f} {order:>6g} {winner:<22} '
              f'{elapsed:>6.2f}')


if __name__ == '__main__':
  main()
