"""Benchmark of accounting where users loop (prints tables; not a test).

Times are ratios to a reference computed in the same run: dp_accounting's
PLDAccountant composing one Poisson-subsampled Gaussian (q = 0.01, sigma = 1)
1000 times and answering epsilon at delta = 1e-6 (its seconds are printed
too). Tables:

1. The Opacus epoch loop: n = 60000, sigma = 1, q = 256 / 60000, epsilon at
   delta = 1e-5 after each epoch (an epoch is n / 256 steps); ours
   (`ShuffleCheckinAccountant`, `ShuffleCheckinRdpAccountant`) against
   Opacus' `prv` and `rdp` accountants. The per-epoch time excludes the
   first epoch (reported apart).
2. 365 daily rounds whose population differs every day (eps0 = 1; n
   log-uniform in [1e5, 1e7], or uniform in [8e5, 1.2e6]; check-in rounds at
   gamma = 0.01 with n in [5e4, 7e4]): end-to-end time and epsilon with the
   default grouping against no grouping (the looseness grouping costs).
3. One check-in round (eps0 = 1 and sigma = 1) at several n and gamma.
4. ShuffleRdpAccountant's epsilon over ShufflePldAccountant's, one event
   type (eps0-LDP shuffle) composed T times, delta = 1e-6.

Run: python benchmarks/loops.py [--quick] [--epochs E] [--no-opacus]
"""

import argparse
import time

from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
import numpy as np

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant


def _timed(function):
  start = time.perf_counter()
  value = function()
  return value, time.perf_counter() - start


def _reference_seconds() -> float:
  def run():
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.PoissonSampledDpEvent(
        0.01, dp_event.GaussianDpEvent(1.0)), 1000)
    return accountant.get_epsilon(1e-6)
  return min(_timed(run)[1] for _ in range(3))


def _epoch_loop(make_accountant, epochs, num_users=60_000, batch=256,
                sigma=1.0, delta=1e-5):
  """(first epoch seconds, mean later epoch seconds, final epsilon)."""
  accountant = make_accountant()
  rate, steps = batch / num_users, num_users // batch
  times, epsilon = [], None
  for _ in range(epochs):
    for _ in range(steps):
      accountant.step(noise_multiplier=sigma, sample_rate=rate)
    epsilon, seconds = _timed(lambda: accountant.get_epsilon(delta))
    times.append(seconds)
  return times[0], float(np.mean(times[1:])), epsilon


def _opacus_table(reference, epochs):
  # pylint: disable=import-outside-toplevel
  from opacus.accountants import PRVAccountant
  from opacus.accountants import RDPAccountant
  from shuffle_accountants.adapters import opacus as adapter
  rows = [
      ('ours, PLD (shuffle_checkin)',
       lambda: adapter.ShuffleCheckinAccountant(num_users=60_000)),
      ('ours, RDP', lambda: adapter.ShuffleCheckinRdpAccountant(
          num_users=60_000)),
      ('Opacus prv', PRVAccountant),
      ('Opacus rdp', RDPAccountant),
  ]
  print(f'\n1. Opacus loop, {epochs} epochs: get_epsilon after each epoch')
  print(f'{"accountant":<30} {"first s":>8} {"per epoch s":>12} '
        f'{"x ref":>7} {"eps":>8}')
  for name, make in rows:
    first, later, epsilon = _epoch_loop(make, epochs)
    print(f'{name:<30} {first:8.3f} {later:12.4f} {later / reference:7.2f} '
          f'{epsilon:8.3f}')
  print('(Opacus\' accountants assume central noise; ours a shuffled local '
        'one, so their epsilons differ by design.)')


def _cold_caches():
  """Empties the caches shared across accountants, so each run starts cold."""
  # pylint: disable=import-outside-toplevel,protected-access
  from shuffle_accountants.pld import candidates
  from shuffle_accountants.pld import clone_pairs
  from shuffle_accountants.rdp import accountant
  from shuffle_accountants.rdp import clone
  candidates.event_pmf.cache_clear()
  candidates.shuffle_round_pairs.cache_clear()
  clone_pairs._SHARED_PAIRS.clear()
  accountant._BOUNDS.clear()
  clone._shared_conditional_log_excess.cache_clear()


def _daily(accountant_class, make_event, count, grouping):
  def run():
    accountant = accountant_class(relative_grouping=grouping)
    for day in range(count):
      accountant.compose(make_event(day))
    return accountant.get_epsilon(1e-6)
  _cold_caches()
  return _timed(run)


def _daily_table(reference, count):
  rng = np.random.default_rng(0)
  wide = np.exp(rng.uniform(np.log(1e5), np.log(1e7), count)).astype(int)
  narrow = rng.integers(800_000, 1_200_000, count)
  checkin_users = rng.integers(50_000, 70_000, count)
  cases = [
      ('Shuffle, n in [1e5, 1e7]',
       lambda day: ShuffleEvent(int(wide[day]), 1.0)),
      ('Shuffle, n in [8e5, 1.2e6]',
       lambda day: ShuffleEvent(int(narrow[day]), 1.0)),
      ('CheckIn g=0.01, n in [5e4, 7e4]',
       lambda day: CheckInEvent(int(checkin_users[day]), 0.01, 1.0)),
  ]
  print(f'\n2. {count} daily rounds, eps0 = 1, every population different '
        '(caches emptied before each run)')
  print(f'{"rounds":<32} {"route":<5} {"grouped s":>10} {"x ref":>7} '
        f'{"ungrouped s":>12} {"eps grouped / ungrouped":>24}')
  for name, make_event in cases:
    for route, accountant_class in (('PLD', ShufflePldAccountant),
                                    ('RDP', ShuffleRdpAccountant)):
      grouped, grouped_s = _daily(accountant_class, make_event, count, 0.01)
      exact, exact_s = _daily(accountant_class, make_event, count, 0.0)
      print(f'{name:<32} {route:<5} {grouped_s:10.2f} '
            f'{grouped_s / reference:7.1f} {exact_s:12.2f} '
            f'{grouped / exact:24.5f}', flush=True)


def _checkin_table(reference, populations):
  print('\n3. One check-in round, end to end (construct, compose, epsilon at '
        '1e-6)')
  print(f'{"n":>9} {"gamma":>6} {"local":>10} {"PLD s":>7} {"x ref":>7} '
        f'{"RDP s":>7} {"RDP / PLD eps":>14}')
  for n in populations:
    for gamma in (1e-3, 1e-2, 0.1):
      for local in (dict(local_epsilon=1.0), dict(noise_multiplier=1.0)):
        event = CheckInEvent(n, gamma, **local)
        pld, pld_s = _timed(lambda: ShufflePldAccountant().compose(
            event).get_epsilon(1e-6))
        rdp, rdp_s = _timed(lambda: ShuffleRdpAccountant().compose(
            event).get_epsilon(1e-6))
        name = ('eps0=1' if 'local_epsilon' in local else 'sigma=1')
        print(f'{n:>9} {gamma:>6} {name:>10} {pld_s:7.2f} '
              f'{pld_s / reference:7.1f} {rdp_s:7.2f} {rdp / pld:14.2f}')


def _ratio_table(populations, round_counts):
  print('\n4. ShuffleRdpAccountant / ShufflePldAccountant epsilon, delta = 1e-6 '
        '(target <= 2)')
  print(f'{"n":>12} {"eps0":>5} ' + ' '.join(f'{"T=" + str(t):>9}'
                                            for t in round_counts)
        + f' {"RDP s (max)":>12}')
  for n in populations:
    for local_epsilon in (0.1, 1.0, 8.0):
      ratios, slowest = [], 0.0
      for rounds in round_counts:
        event = ShuffleEvent(n, local_epsilon)
        pld = ShufflePldAccountant().compose(event, rounds).get_epsilon(1e-6)
        rdp, seconds = _timed(lambda: ShuffleRdpAccountant().compose(
            event, rounds).get_epsilon(1e-6))
        ratios.append(rdp / pld)
        slowest = max(slowest, seconds)
      print(f'{n:>12} {local_epsilon:>5} '
            + ' '.join(f'{r:9.2f}' for r in ratios) + f' {slowest:12.2f}')


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--quick', action='store_true',
                      help='fewer epochs, rounds and table cells')
  parser.add_argument('--epochs', type=int, default=None,
                      help='epochs of the Opacus loop (default 50; 5 quick)')
  parser.add_argument('--no-opacus', action='store_true',
                      help='skip the Opacus loop (Opacus not installed)')
  args = parser.parse_args()
  reference = _reference_seconds()
  print(f'reference: dp_accounting PLD, Poisson Gaussian x 1000: '
        f'{reference:.3f} s')
  if not args.no_opacus:
    _opacus_table(reference, args.epochs or (5 if args.quick else 50))
  _daily_table(reference, 30 if args.quick else 365)
  _checkin_table(reference, [60_000] if args.quick
                 else [10_000, 60_000, 1_000_000, 10_000_000])
  _ratio_table([10**3, 10**7] if args.quick else [10**3, 10**5, 10**7, 10**9],
               [1, 1000] if args.quick else [1, 10, 1000, 100_000])


if __name__ == '__main__':
  main()
