"""Benchmark of the PLD accountant (prints a table; not a test).

For eps0 in {1, 4}, n in {1e4, 1e6, 1e9} and T in {1, 10, 1e4} rounds at
delta = 1e-6: epsilon and end-to-end wall time (construct, compose, query) of
* ShufflePldAccountant (automatic grid, relative accuracy 1e-3), with its
  optimistic estimate to show the discretization gap;
* ShuffleRdpAccountant (default orders);
* what users can assemble today from public pieces: FMT21's closed form
  (official code's form, per round at delta / (2T)) composed optimally as
  (eps, delta) pairs by dp_accounting's PLD (`from_privacy_parameters`).
The FMT21 numerical analysis vendored in the PyPI package `random-allocation`
is not compared here (see docs/pld_accountant.md).

Run: python benchmarks/pld_accountant.py
"""

import time

from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.pairs import fmt21

DELTA = 1e-6


def _timed(function):
  start = time.perf_counter()
  value = function()
  return value, time.perf_counter() - start


def _accountant_epsilon(accountant, event, rounds):
  accountant.compose(event, rounds)
  return accountant.get_epsilon(DELTA)


def main():
  print(f'{"eps0":>4} {"n":>6} {"T":>6} | {"PLD":>10} {"optimistic":>10} '
        f'{"s":>5} | {"RDP":>10} {"s":>5} | {"FMT21 closed":>12} {"s":>5}')
  for local_epsilon in (1.0, 4.0):
    for num_users in (10**4, 10**6, 10**9):
      for rounds in (1, 10, 10**4):
        event = ShuffleEvent(num_users, local_epsilon)
        pld = ShufflePldAccountant()
        pld_epsilon, pld_time = _timed(
            lambda: _accountant_epsilon(pld, event, rounds))
        optimistic = pld.get_optimistic_epsilon(DELTA)
        rdp_epsilon, rdp_time = _timed(lambda: _accountant_epsilon(
            ShuffleRdpAccountant(), event, rounds))
        closed, closed_time = _timed(
            lambda: fmt21.composed_closed_form_epsilon(
                num_users, local_epsilon, rounds, DELTA))
        print(f'{local_epsilon:>4g} {num_users:>6.0e} {rounds:>6} | '
              f'{pld_epsilon:>10.5g} {optimistic:>10.5g} {pld_time:>5.2f} | '
              f'{rdp_epsilon:>10.5g} {rdp_time:>5.2f} | {closed:>12.5g} '
              f'{closed_time:>5.2f}')


if __name__ == '__main__':
  main()
