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
5. Issue 22's year ledgers: 365 daily rounds, n log-spaced over [1e5, 1e7],
   delta = 1e-8 (OUE(1000, 2) and check-in PLD, eps0 = 1 shuffle RDP), each
   in a fresh process: time, peak memory, and the time to add a 366th day.
6. A named randomizer against the generic FMT21 call: one round's time
   (PLD, delta = 1e-6, cold caches) as a ratio to the generic call at the
   same n and eps0 (target <= 2), and its epsilon as a ratio.
7. Issue 30's calibration loop: the largest eps0 of OUE(1000, eps0) for the
   year of table 5 with epsilon <= 1 at delta = 1e-8
   (`calibrate_local_epsilon`, in a fresh process): time, the eps0 found,
   its certified epsilon (target <= 100x the reference).
8. Issue 41's before and after (with --before PATH, a copy of the package
   as it was): the runs of tables 5 and 7 and the slowest documented calls
   (`_CALLS`), each in a fresh process importing the package from PATH,
   then from here.

Run: python benchmarks/loops.py [--quick] [--epochs E] [--no-opacus]
                                [--only 1,2,5] [--write-docs] [--before PATH]
--write-docs replaces the measurement block of docs/performance.md with
this run's output (table 8: its own block).
"""

import argparse
import contextlib
import io
import json
import os
import pathlib
import resource
import subprocess
import sys
import time
from typing import Optional

from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
import numpy as np

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import _json

# Wall-clock seconds; CPU seconds for table 8 (`--cpu-time`), which a
# machine shared with other work distorts far less.
_clock = time.perf_counter


def _timed(function):
  start = _clock()
  value = function()
  return value, _clock() - start


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
  from shuffle_accountants import clear_caches
  clear_caches()


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
  print('\n4. ShuffleRdpAccountant / ShufflePldAccountant epsilon, '
        'delta = 1e-6 (target <= 2)')
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


_LEDGERS = {
    'OUE(1000, 2), PLD': 'oue',
    'CheckIn g=0.01 eps0=1, PLD': 'checkin',
    'Shuffle eps0=1, RDP': 'shuffle_rdp',
}


def _year_populations() -> np.ndarray:
  return np.exp(np.linspace(np.log(1e5), np.log(1e7), 365)).astype(int)


# Issue 41's slowest calls of the documented range (epsilon at 1e-6).
_CALLS = {
    'ShuffleEvent(18135353, 20, num_categories=3) x 1e9': (
        lambda: ShuffleEvent(18135353, 20, num_categories=3), 10**9, {}),
    'GaussianRandomizer(1) round, n = 1e4': (
        lambda: ShuffleEvent(10_000, randomizer=_gaussian_randomizer()), 1,
        {}),
    'GaussianDpEvent(1) x 1000, accuracy 0.05': (
        lambda: dp_event.GaussianDpEvent(1.0), 1000,
        dict(relative_accuracy=0.05)),
}


def _gaussian_randomizer():
  from shuffle_accountants import randomizers
  return randomizers.GaussianRandomizer(1.0)


def _call(name: str) -> dict:
  """One of `_CALLS` in this process: seconds, epsilon, peak memory."""
  make_event, count, options = _CALLS[name]
  epsilon, seconds = _timed(lambda: ShufflePldAccountant(**options).compose(
      make_event(), count).get_epsilon(1e-6))
  return dict(seconds=seconds, epsilon=epsilon, peak_mib=_peak_mib())


def _year_ledger(kind: str) -> dict:
  """Runs one of issue 22's ledgers in this process (see `_ledger_table`)."""
  from shuffle_accountants import randomizers
  populations = _year_populations()
  if kind == 'calibration':
    return _year_calibration(populations)
  if kind in _CALLS:
    return _call(kind)
  if kind == 'oue':
    unary = randomizers.OptimizedUnaryEncoding(1000, 2.0)
    make = lambda n: ShuffleEvent(int(n), randomizer=unary)
    accountant = ShufflePldAccountant()
  elif kind == 'checkin':
    make = lambda n: CheckInEvent(int(n), 0.01, 1.0)
    accountant = ShufflePldAccountant()
  else:
    make = lambda n: ShuffleEvent(int(n), 1.0)
    accountant = ShuffleRdpAccountant()
  def year():
    for n in populations:
      accountant.compose(make(n))
    return accountant.get_epsilon(1e-8)
  epsilon, seconds = _timed(year)
  day_epsilon, day_seconds = _timed(lambda: accountant.compose(
      make(123_457)).get_epsilon(1e-8))
  return dict(seconds=seconds, epsilon=epsilon, day_seconds=day_seconds,
              day_epsilon=day_epsilon, peak_mib=_peak_mib())


def _year_calibration(populations) -> dict:
  """Issue 30's loop: eps0 of a year of OUE(1000, eps0) rounds, eps <= 1."""
  from shuffle_accountants import calibration
  from shuffle_accountants import randomizers
  def year(local_epsilon):
    unary = randomizers.OptimizedUnaryEncoding(1000, local_epsilon)
    return dp_event.ComposedDpEvent([
        ShuffleEvent(int(n), randomizer=unary) for n in populations])
  local_epsilon, seconds = _timed(lambda: calibration.calibrate_local_epsilon(
      1.0, 1e-8, make_event=year))
  epsilon = ShufflePldAccountant().compose(year(local_epsilon)).get_epsilon(
      1e-8)
  return dict(seconds=seconds, local_epsilon=local_epsilon, epsilon=epsilon,
              peak_mib=_peak_mib())


def _calibration_table():
  print('\n7. Calibrating eps0 of OUE(1000, eps0) for the year of table 5 '
        '(epsilon <= 1 at delta = 1e-8, tolerance 1 %), in a fresh process '
        '(target <= 100x)')
  print(f'{"seconds":>8} {"x ref":>7} {"peak MiB":>9} {"eps0":>8} '
        f'{"certified eps":>14}')
  reference = _issue_reference_seconds()
  result = _child('calibration')
  print(f'{result["seconds"]:8.1f} {result["seconds"] / reference:7.1f} '
        f'{result["peak_mib"]:9.0f} {result["local_epsilon"]:8.4f} '
        f'{result["epsilon"]:14.4f}', flush=True)


def _peak_mib() -> float:
  """This process's peak resident memory. On Linux from VmHWM, which exec
  resets (ru_maxrss keeps the parent's peak across fork and exec)."""
  status = pathlib.Path('/proc/self/status')
  if status.exists():
    for line in status.read_text().splitlines():
      if line.startswith('VmHWM:'):
        return int(line.split()[1]) / 1024
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _issue_reference_seconds() -> float:
  """dp_accounting's SelfComposed(PoissonSampled(0.01, Gaussian(1)), 1000)."""
  def run():
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)),
        1000))
    return accountant.get_epsilon(1e-8)
  return min(_timed(run)[1] for _ in range(3))


def _ledger_table():
  print('\n5. 365 daily rounds, n log-spaced over [1e5, 1e7], delta = 1e-8, '
        'each ledger in a fresh process (target <= 15x, aim <= 3x; peak '
        '<= 1.5 GiB; day 366 <= 0.3 s)')
  print(f'{"ledger":<28} {"seconds":>8} {"x ref":>7} {"peak MiB":>9} '
        f'{"eps":>9} {"day 366 s":>10} {"x ref":>7}')
  for name, kind in _LEDGERS.items():
    reference = _issue_reference_seconds()
    result = _child(kind)
    print(f'{name:<28} {result["seconds"]:8.1f} '
          f'{result["seconds"] / reference:7.1f} {result["peak_mib"]:9.0f} '
          f'{result["epsilon"]:9.4f} {result["day_seconds"]:10.2f} '
          f'{result["day_seconds"] / reference:7.2f}', flush=True)


def _child(kind: str, package: Optional[str] = None) -> dict:
  """`_year_ledger(kind)` in a fresh process, importing the package from
  `package` (a directory) instead of this checkout's if given (then timed in
  CPU seconds)."""
  environment = dict(os.environ)
  if package is not None:
    environment['PYTHONPATH'] = package
  return json.loads(subprocess.run(
      [sys.executable, __file__, '--ledger-child', kind]
      + ['--cpu-time'] * (_clock is time.process_time), check=True,
      capture_output=True, text=True, env=environment).stdout)


def _before_after_table(before: str):
  print(f'\n8. Issue 41, before (the package at {before}) and after, each in '
        'a fresh process; CPU seconds and ratios to the reference of table 5')
  print(f'{"run":<46} {"before s":>9} {"x ref":>7} {"after s":>8} '
        f'{"x ref":>7} {"peak MiB":>13} {"eps before / after":>20}')
  runs = [(name, kind) for name, kind in _LEDGERS.items()]
  runs += [('calibration of table 7 (eps0)', 'calibration')]
  runs += [(name, name) for name in _CALLS]
  for name, kind in runs:
    reference = _issue_reference_seconds()
    old, new = _child(kind, before), _child(kind, str(_CHECKOUT))
    value = 'local_epsilon' if kind == 'calibration' else 'epsilon'
    print(f'{name:<46} {old["seconds"]:9.1f} '
          f'{old["seconds"] / reference:7.1f} {new["seconds"]:8.1f} '
          f'{new["seconds"] / reference:7.1f} '
          f'{old["peak_mib"]:6.0f}/{new["peak_mib"]:<6.0f} '
          f'{old[value] / new[value]:20.12f}', flush=True)


def _randomizer_table(populations):
  from shuffle_accountants import randomizers
  named = [
      ('OUE(1000)', lambda e: randomizers.OptimizedUnaryEncoding(1000, e)),
      ('Hadamard(64)', lambda e: randomizers.HadamardResponse(64, e)),
      ('k-RR(10)', lambda e: randomizers.KRandomizedResponse(10, e)),
  ]
  print('\n6. One round with a named randomizer / the generic FMT21 call '
        '(PLD, delta = 1e-6, cold caches; time target <= 2)')
  print(f'{"randomizer":<14} {"eps0":>5} ' + ' '.join(
      f'{"n=" + f"{n:.0e}":>10}' for n in populations) + '   (time ratio, '
        'eps ratio)')
  def one(event):
    _cold_caches()
    return _timed(lambda: ShufflePldAccountant().compose(event).get_epsilon(
        1e-6))
  for name, make in named:
    for local_epsilon in (1.0, 4.0):
      cells = []
      for n in populations:
        generic, generic_s = one(ShuffleEvent(n, local_epsilon))
        ours, ours_s = one(ShuffleEvent(n, randomizer=make(local_epsilon)))
        cells.append(f'{ours_s / generic_s:4.1f},{ours / generic:5.2f}')
      print(f'{name:<14} {local_epsilon:>5} ' + ' '.join(
          f'{c:>10}' for c in cells), flush=True)


_CHECKOUT = pathlib.Path(__file__).resolve().parent.parent
_DOCS = _CHECKOUT / 'docs'
_BLOCKS = {
    'tables': ('<!-- loops.py output -->', '<!-- end of loops.py output -->'),
    'before_after': ('<!-- loops.py before/after -->',
                     '<!-- end of loops.py before/after -->'),
}


def _write_docs(output: str, block: str = 'tables') -> None:
  """Replaces a measurement block of docs/performance.md by `output`."""
  begin, end = _BLOCKS[block]
  path = _DOCS / 'performance.md'
  text = path.read_text()
  head, rest = text.split(begin)
  _, tail = rest.split(end)
  path.write_text(f'{head}{begin}\n```\n{output.rstrip()}\n```\n{end}'
                  f'{tail}')


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--quick', action='store_true',
                      help='fewer epochs, rounds and table cells')
  parser.add_argument('--epochs', type=int, default=None,
                      help='epochs of the Opacus loop (default 50; 5 quick)')
  parser.add_argument('--no-opacus', action='store_true',
                      help='skip the Opacus loop (Opacus not installed)')
  parser.add_argument('--only', default='1,2,3,4,5,6,7',
                      help='comma-separated table numbers to run')
  parser.add_argument('--write-docs', action='store_true',
                      help='put this run\'s output into docs/performance.md')
  parser.add_argument('--before', default=None,
                      help='a directory holding the package as it was: '
                      'table 8 (before and after) only')
  parser.add_argument('--ledger-child', help=argparse.SUPPRESS)
  parser.add_argument('--cpu-time', action='store_true',
                      help=argparse.SUPPRESS)
  args = parser.parse_args()
  global _clock
  if args.cpu_time or args.before:
    _clock = time.process_time
  if args.ledger_child:
    print(_json.dumps(_year_ledger(args.ledger_child)))
    return
  if args.before:
    output = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, output)):
      _before_after_table(args.before)
    if args.write_docs:
      _write_docs(output.getvalue(), 'before_after')
    return
  tables = set(args.only.split(','))
  output = io.StringIO()
  with contextlib.redirect_stdout(_Tee(sys.stdout, output)):
    reference = _reference_seconds()
    print(f'reference: dp_accounting PLD, Poisson Gaussian x 1000: '
          f'{reference:.3f} s')
    if '1' in tables and not args.no_opacus:
      _opacus_table(reference, args.epochs or (5 if args.quick else 50))
    if '2' in tables:
      _daily_table(reference, 30 if args.quick else 365)
    if '3' in tables:
      _checkin_table(reference, [60_000] if args.quick
                     else [10_000, 60_000, 1_000_000, 10_000_000])
    if '4' in tables:
      _ratio_table([10**3, 10**7] if args.quick
                   else [10**3, 10**5, 10**7, 10**9],
                   [1, 1000] if args.quick else [1, 10, 1000, 100_000])
    if '5' in tables:
      _ledger_table()
    if '6' in tables:
      _randomizer_table([10**5, 10**8] if args.quick
                        else [10**3, 10**5, 10**6, 10**8, 10**10])
    if '7' in tables:
      _calibration_table()
  if args.write_docs:
    _write_docs(output.getvalue())


class _Tee(io.TextIOBase):
  """Writes to several streams (the terminal and the docs' copy)."""

  def __init__(self, *streams):
    super().__init__()
    self._streams = streams

  def write(self, text):
    for stream in self._streams:
      stream.write(text)
    return len(text)

  def flush(self):
    for stream in self._streams:
      stream.flush()


if __name__ == '__main__':
  main()
