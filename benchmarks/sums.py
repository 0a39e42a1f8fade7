"""Benchmark of the sum-only release (prints a table; not a test).

`SumOfReportsEvent` with symmetric unary encoding (per-bit eps0, local
epsilon 2 eps0), delta = 1e-9: per population n and eps0, the certified
epsilon of one round and of 365 rounds, the lower bound
LB-SUM-CONFIGURATIONS, and the time of each against a reference measured in
the same run: dp_accounting's own PLD of the exact all-at-x pair (both
coordinates, `from_two_probability_mass_functions`), composed as many
rounds (the work any exact accountant of that one pair does).

Run: python benchmarks/sums.py [--quick]
"""

import argparse
import time

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import SumOfReportsEvent
from shuffle_accountants import clear_caches
from shuffle_accountants import randomizers
from shuffle_accountants.pld import sums

DELTA = 1e-9


def _timed(function):
  start = time.perf_counter()
  value = function()
  return value, time.perf_counter() - start


def row(num_users, bit_epsilon, rounds):
  clear_caches()
  event = SumOfReportsEvent(num_users, randomizers.SymmetricUnaryEncoding(
      16, 2 * bit_epsilon))
  certified, seconds = _timed(lambda: ShufflePldAccountant().compose(
      event, rounds).get_epsilon(DELTA))
  # The reference: the exact pairs of a domain of two (every other user
  # at x or at x'), each composed by dp_accounting.
  _, reference = _timed(lambda: sums.sum_release_lower_bound(
      SumOfReportsEvent(num_users, randomizers.SymmetricUnaryEncoding(
          2, 2 * bit_epsilon)), DELTA, rounds))
  lower = sums.sum_release_lower_bound(event, DELTA, rounds)
  return (f'{num_users:>12.0e} {bit_epsilon:>5g} {rounds:>4} '
          f'{certified:>10.4g} {lower:>10.4g} {certified / lower:>7.4f} '
          f'{seconds:>8.2f} {seconds / reference:>8.2f}')


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--quick', action='store_true')
  args = parser.parse_args()
  cases = ([(10**5, 5.0, 1)] if args.quick else
           [(n, e, t) for n in (10**5, 10**7) for e in (0.5, 5.0, 8.0)
            for t in (1, 365)] + [(10**9, 5.0, 1), (10**9, 8.0, 1)])
  print(f'{"n":>12} {"eps0":>5} {"T":>4} {"certified":>10} {"lower":>10} '
        f'{"ratio":>7} {"seconds":>8} {"x ref":>8}')
  for num_users, bit_epsilon, rounds in cases:
    print(row(num_users, bit_epsilon, rounds), flush=True)


if __name__ == '__main__':
  main()
