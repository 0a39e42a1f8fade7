"""Benchmark of distributed check-in accounting (prints tables; not a test).

`DistributedCheckInEvent(participation='hidden')` (SECAGG-HIDDEN): every user
checks in with probability q, each participant adds N(0, sigma^2 C^2 I) to its
clipped vector, secure aggregation reveals the sum and the count only (an
anonymous check-in channel; with the participants revealed, the default,
the round is exact, SECAGG-REVEALED, and
tests/cross_route/test_participation.py checks it).
Opacus' aggregate noise multiplier sigma_agg at the expected cohort q n is per
participant sigma = sigma_agg / sqrt(q n), so the update is as noisy as central
DP-SGD's.

Table 1, the target of issue 21: n = 60,000, q = 256 / 60,000, sigma_agg = 1,
10 epochs (2,340 steps), delta = 1e-5: our certified epsilon (PLD and RDP
routes) against dp_accounting's `PoissonSampledDpEvent(q,
GaussianDpEvent(sigma_agg / 2))` under ADD_OR_REMOVE_ONE (the SECAGG-HIDDEN pair
at the expected cohort, composed one order at a time), and against central
DP-SGD (`PoissonSampledDpEvent(q, GaussianDpEvent(sigma_agg))`, add/remove
and replace-one). Table 2: the same over q n in {10, ..., 1e5} at
n = 10^6. Table 3: the worst time and memory over the corners of the
documented range (n 1 / 1e10, gamma 1e-12 / 1, sigma 1e-3 / 1e4, count
1 / 1e9), as a ratio to dp_accounting's PLD time for the reference of
Table 1 measured in the same run.

Run: python benchmarks/distributed_checkin.py [--quick]
"""

import argparse
import itertools
import math
import resource
import time
import warnings

import dp_accounting
from dp_accounting import dp_event

from shuffle_accountants import DistributedCheckInEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant

DELTA = 1e-5
ADD_OR_REMOVE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
REPLACE_ONE = dp_accounting.NeighboringRelation.REPLACE_ONE


def _timed(accountant, event, count):
  start = time.perf_counter()
  accountant.compose(event, count)
  epsilon = accountant.get_epsilon(DELTA)
  return epsilon, time.perf_counter() - start


def _poisson_gaussian(rate, sigma, count, relation):
  return _timed(dp_accounting.pld.PLDAccountant(relation),
                dp_event.PoissonSampledDpEvent(
                    rate, dp_event.GaussianDpEvent(sigma)), count)


def row(num_users, cohort, aggregate_sigma, steps, with_rdp=True):
  """The numbers of one setting, as a dict."""
  rate = cohort / num_users
  event = DistributedCheckInEvent(num_users, rate,
                                  aggregate_sigma / math.sqrt(cohort),
                                  participation='hidden')
  pld, pld_time = _timed(ShufflePldAccountant(), event, steps)
  rdp = (_timed(ShuffleRdpAccountant(), event, steps)[0] if with_rdp
         else math.nan)
  pair, pair_time = _poisson_gaussian(rate, aggregate_sigma / 2, steps,
                                      ADD_OR_REMOVE)
  return dict(
      n=num_users, cohort=cohort, sigma=event.noise_multiplier, steps=steps,
      pld=pld, rdp=rdp, pair=pair, ratio=pld / pair,
      time_ratio=pld_time / pair_time, pair_time=pair_time,
      central_add_remove=_poisson_gaussian(rate, aggregate_sigma, steps,
                                           ADD_OR_REMOVE)[0],
      central_replace_one=_poisson_gaussian(rate, aggregate_sigma, steps,
                                            REPLACE_ONE)[0])


def corners_worst_time():
  """(worst seconds, its case) over the corners of the documented range."""
  worst = (0.0, None)
  for n, rate, sigma, count in itertools.product(
      [1, 10**10], [1e-12, 1.0], [1e-3, 1e4], [1, 10**9]):
    for kind in (ShufflePldAccountant, ShuffleRdpAccountant):
      seconds = _timed(kind(), DistributedCheckInEvent(
          n, rate, sigma, participation='hidden'), count)[1]
      worst = max(worst, (seconds, (kind.__name__, n, rate, sigma, count)),
                  key=lambda w: w[0])
  return worst


def _print_rows(rows):
  print(f'{"n":>9} {"q n":>7} {"sigma":>8} {"PLD eps":>9} {"RDP eps":>10} '
        f'{"SECAGG-HIDDEN pair":>9} {"PLD/pair":>9} {"central a/r":>12} '
        f'{"central r-1":>12} {"time/dp_acc":>12}')
  for r in rows:
    print(f'{r["n"]:>9} {r["cohort"]:>7g} {r["sigma"]:>8.4g} {r["pld"]:>9.4g} '
          f'{r["rdp"]:>10.4g} {r["pair"]:>9.4g} {r["ratio"]:>9.4f} '
          f'{r["central_add_remove"]:>12.4g} {r["central_replace_one"]:>12.4g}'
          f' {r["time_ratio"]:>12.2f}', flush=True)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--quick', action='store_true',
                      help='only the target setting')
  args = parser.parse_args()
  warnings.simplefilter('ignore')
  print('Target: n = 60000, q n = 256, sigma_agg = 1, 2340 steps, '
        f'delta = {DELTA}')
  target = row(60_000, 256, 1.0, 2340)
  _print_rows([target])
  if args.quick:
    return
  print('\nOver the expected cohort q n (n = 10^6, sigma_agg = 1, 2340 steps)')
  _print_rows([row(10**6, cohort, 1.0, 2340)
               for cohort in (10, 100, 1_000, 10_000, 100_000)])
  seconds, case = corners_worst_time()
  print(f'\nWorst time over the corners of the range: '
        f'{seconds / target["pair_time"]:.1f} x dp_accounting\'s PLD time for '
        f'the target\'s reference pair ({case}); peak memory '
        f'{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB')


if __name__ == '__main__':
  main()
