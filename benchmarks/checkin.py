"""Benchmark of shuffled check-in accounting (prints a table; not a test).

Epsilon at delta = 1/n after T in {100, 1e4} rounds of `CheckInEvent` for
n in {1e4, 6e4, 1e6} and check-in rate gamma in {1e-3, 1e-2, 0.1}, with
* pure local randomizers, eps0 in {1, 2, 8};
* local Gaussian noise, sigma in {0.86, 2, 5} (clip norm C, noise sigma C per
  participant, no shuffling gain claimed, docs/mathematics.md GAUSS-NO-GAIN);
and the end-to-end wall time of `ShufflePldAccountant` (construct, compose,
query). With --rdp, `ShuffleRdpAccountant` too (slower, looser).

For the Gaussian rows the last column is central DP-SGD with the same sigma:
the server adds N(0, sigma^2 C^2) once to the sum of Poisson-sampled clipped
gradients (dp_accounting's PLD accountant, add/remove, its default). The gap
is what local noise costs: a participant's report carries its own noise of
standard deviation sigma C against a replace-one shift of 2C.

With --blanket, issue 34's table instead: at the named points (delta =
1e-6), epsilon of `CheckInEvent` before CHECKIN-BLANKET (the LABEL-MIXTURE
check-in mixture and the rate-1 round only), after (with the CHECKIN-BLANKET
pairs), the exact binary pair (a lower bound,
`binary_rr_checkin_epsilon_lower_bound`), their ratios, and the time after
CHECKIN-BLANKET as a ratio to the time before, both in this run. "After" is
the accountant as it is (for k = 2 also with BINARY-RR-CHECKIN, issue 53).

Run: python benchmarks/checkin.py [--quick] [--rdp] [--blanket]
"""

import argparse
import contextlib
import time
from unittest import mock

from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import clear_caches
from shuffle_accountants.pld import binary_shuffle
from shuffle_accountants.pld import candidates
from shuffle_accountants.pld import checkin

# Issue 34's points: (n, gamma, eps0, rounds).
BLANKET_POINTS = [
    (1_000, 0.03, 3.0, 1), (1_000, 0.3, 1.0, 1), (10_000, 0.003, 6.0, 1),
    (10_000, 0.03, 3.0, 1), (100_000, 0.003, 6.0, 1),
    (10_000, 0.03, 3.0, 100), (100_000, 0.003, 6.0, 100),
    (1_000_000, 0.001, 6.0, 1)]
BLANKET_DELTA = 1e-6


def _timed_epsilon(accountant, event, rounds, delta):
  start = time.perf_counter()
  accountant.compose(event, rounds)
  epsilon = accountant.get_epsilon(delta)
  return epsilon, time.perf_counter() - start


def _central_dp_sgd(checkin_rate, noise_multiplier, rounds, delta):
  accountant = pld_privacy_accountant.PLDAccountant()
  accountant.compose(dp_event.PoissonSampledDpEvent(
      checkin_rate, dp_event.GaussianDpEvent(noise_multiplier)), rounds)
  return accountant.get_epsilon(delta)


@contextlib.contextmanager
def without_d31():
  """The accountant as before CHECKIN-BLANKET (its check-in pairs withheld,
  and the later BINARY-RR-CHECKIN family, grid choice included)."""
  with mock.patch.object(candidates, 'checkin_blanket_pairs',
                         lambda *args, **kwargs: ()), mock.patch.object(
                             binary_shuffle, 'checkin_applies',
                             lambda event: False):
    yield


def blanket_row(num_users, checkin_rate, local_epsilon, rounds,
                num_categories):
  """(before, after, after time / before time) for one point."""
  results = []
  for patch in (without_d31(), contextlib.nullcontext()):
    clear_caches()
    with patch:
      results.append(_timed_epsilon(ShufflePldAccountant(), CheckInEvent(
          num_users, checkin_rate, local_epsilon=local_epsilon,
          num_categories=num_categories), rounds, BLANKET_DELTA))
  (before, before_time), (after, after_time) = results
  return before, after, after_time / before_time


def blanket_table(points=BLANKET_POINTS):
  """Issue 34's before/after rows: one per point, k-RR (k = 2) and generic."""
  rows = []
  for n, gamma, eps0, rounds in points:
    exact = (checkin.binary_rr_checkin_epsilon_lower_bound(
        n, gamma, eps0, BLANKET_DELTA, rounds) if n <= 100_000 else None)
    row = [n, gamma, eps0, rounds, exact]
    for categories in (2, None):
      row.extend(blanket_row(n, gamma, eps0, rounds, categories))
    rows.append(row)
  return rows


def _print_blanket_table():
  print(f'{"n":>9} {"gamma":>6} {"eps0":>5} {"T":>4} {"exact pair":>10} '
        f'{"k=2 before":>10} {"after":>8} {"/exact":>7} {"time x":>6} '
        f'{"generic before":>14} {"after":>8} {"/exact":>7} {"time x":>6}')
  for row in blanket_table():
    n, gamma, eps0, rounds, exact = row[:5]
    text = (f'{n:>9} {gamma:>6g} {eps0:>5g} {rounds:>4} '
            + (f'{exact:>10.4g}' if exact else f'{"-":>10}'))
    for before, after, slower in (row[5:8], row[8:11]):
      ratio = f'{after / exact:>7.2f}' if exact else f'{"-":>7}'
      text += f' {before:>10.4g} {after:>8.4g} {ratio} {slower:>6.2f}'
    print(text, flush=True)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--quick', action='store_true',
                      help='only n = 6e4 and T = 100')
  parser.add_argument('--rdp', action='store_true',
                      help='also time ShuffleRdpAccountant')
  parser.add_argument('--blanket', action='store_true',
                      help="issue 34's before/after table (CHECKIN-BLANKET)")
  args = parser.parse_args()
  if args.blanket:
    _print_blanket_table()
    return
  populations = [60_000] if args.quick else [10_000, 60_000, 1_000_000]
  round_counts = [100] if args.quick else [100, 10_000]
  header = (f'{"n":>9} {"gamma":>6} {"T":>6} {"local":>12} {"PLD eps":>10} '
            f'{"time s":>7}')
  if args.rdp:
    header += f' {"RDP eps":>10} {"time s":>7}'
  print(header + f' {"central DP-SGD":>15}')
  for n in populations:
    for gamma in [1e-3, 1e-2, 0.1]:
      for rounds in round_counts:
        locals_ = ([('eps0', e) for e in (1.0, 2.0, 8.0)]
                   + [('sigma', s) for s in (0.86, 2.0, 5.0)])
        for kind, value in locals_:
          keyword = 'local_epsilon' if kind == 'eps0' else 'noise_multiplier'
          event = CheckInEvent(n, gamma, **{keyword: value})
          delta = 1 / n
          pld, pld_time = _timed_epsilon(ShufflePldAccountant(), event, rounds,
                                         delta)
          row = (f'{n:>9} {gamma:>6g} {rounds:>6} {kind + "=" + str(value):>12}'
                 f' {pld:>10.4g} {pld_time:>7.2f}')
          if args.rdp:
            rdp, rdp_time = _timed_epsilon(ShuffleRdpAccountant(), event,
                                           rounds, delta)
            row += f' {rdp:>10.4g} {rdp_time:>7.2f}'
          if kind == 'sigma':
            row += f' {_central_dp_sgd(gamma, value, rounds, delta):>15.4g}'
          print(row, flush=True)


if __name__ == '__main__':
  main()
