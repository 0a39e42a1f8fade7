"""Benchmark of shuffled check-in accounting (prints a table; not a test).

Epsilon at delta = 1/n after T in {100, 1e4} rounds of `CheckInEvent` for
n in {1e4, 6e4, 1e6} and check-in rate gamma in {1e-3, 1e-2, 0.1}, with
* pure local randomizers, eps0 in {1, 2, 8};
* local Gaussian noise, sigma in {0.86, 2, 5} (clip norm C, noise sigma C per
  participant, no shuffling gain claimed, docs/mathematics.md D7);
and the end-to-end wall time of `ShufflePldAccountant` (construct, compose,
query). With --rdp, `ShuffleRdpAccountant` too (slower, looser).

For the Gaussian rows the last column is central DP-SGD with the same sigma:
the server adds N(0, sigma^2 C^2) once to the sum of Poisson-sampled clipped
gradients (dp_accounting's PLD accountant, add/remove, its default). The gap
is what local noise costs: a participant's report carries its own noise of
standard deviation sigma C against a replace-one shift of 2C.

Run: python benchmarks/checkin.py [--quick] [--rdp]
"""

import argparse
import time

from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant


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


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--quick', action='store_true',
                      help='only n = 6e4 and T = 100')
  parser.add_argument('--rdp', action='store_true',
                      help='also time ShuffleRdpAccountant')
  args = parser.parse_args()
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
