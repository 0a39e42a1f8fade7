"""Shuffled check-in before and after CHECKIN-BLANKET: certified epsilon.

Certified epsilon over the exact binary pair's epsilon.

One round of `CheckInEvent` (n = 10^4 users, check-in rate gamma, pure
eps0-LDP reports, delta = 1e-6), certified by `ShufflePldAccountant` before
CHECKIN-BLANKET (the LABEL-MIXTURE check-in mixture alone,
`benchmarks/checkin.py`'s `without_d31`) and after (the round as a shuffle of
R'(x) = bottom w.p. 1 - gamma, else R(x), through the privacy blanket; for
binary randomized response also BINARY-RR-CHECKIN, issue 53), divided
by the exact binary randomized-response pair
(`binary_rr_checkin_epsilon_lower_bound`, a lower bound: every certified curve
must stay at or above 1). Left: binary randomized response named
(`num_categories=2`); right: the generic bound, which covers every eps0-LDP
randomizer.

Run: python examples/checkin_blanket.py --output figures  (about a minute)
"""

import contextlib
import os
import sys

import _figures
from _figures import pyplot
from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import clear_caches
from shuffle_accountants import figure_style
from shuffle_accountants.pld import checkin

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, 'benchmarks'))
from checkin import without_d31

NUM_USERS = 10_000
DELTA = 1e-6


def certified(checkin_rate, local_epsilon, num_categories, before):
  clear_caches()
  with without_d31() if before else contextlib.nullcontext():
    accountant = ShufflePldAccountant()
    accountant.compose(CheckInEvent(NUM_USERS, checkin_rate,
                                    local_epsilon=local_epsilon,
                                    num_categories=num_categories))
    return accountant.get_epsilon(DELTA)


def ratios(checkin_rates, local_epsilons):
  """{(num_categories, gamma, before): [certified / exact per eps0]}."""
  curves = {}
  for index, gamma in enumerate(checkin_rates):
    exact = [checkin.binary_rr_checkin_epsilon_lower_bound(
        NUM_USERS, gamma, eps0, DELTA, 1) for eps0 in local_epsilons]
    for categories in (2, None):
      for before in (True, False):
        curves[categories, gamma, before] = [
            certified(gamma, eps0, categories, before) / pair
            for eps0, pair in zip(local_epsilons, exact)]
    _figures.progress('check-in rates', index + 1, len(checkin_rates))
  return curves


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  checkin_rates = [0.003, 0.3] if args.quick else [0.003, 0.03, 0.3]
  local_epsilons = ([1.0, 4.0, 8.0] if args.quick
                    else [0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0])
  curves = ratios(checkin_rates, local_epsilons)
  figure, panels = pyplot.subplots(1, 2, figsize=(11, 4.2), sharey=True)
  for panel, categories in zip(panels, (2, None)):
    index = 0
    for gamma in checkin_rates:
      for before in (True, False):
        values = curves[categories, gamma, before]
        label = (f'gamma = {gamma:g}, '
                 + ('before CHECKIN-BLANKET (check-in mixture)' if before
                    else 'CHECKIN-BLANKET (absent users in the blanket)'))
        panel.plot(local_epsilons, values, label=label,
                   **figure_style.series_style(index))
        print(f'{"k=2" if categories else "generic"} {label}: ' + ', '.join(
            f'eps0={eps0:g} {value:.3g}x'
            for eps0, value in zip(local_epsilons, values)))
        index += 1
    panel.axhline(1.0, color='black', linestyle='--', linewidth=1.0,
                  label='exact binary pair (lower bound)')
    panel.set(yscale='log', xlabel='local epsilon eps0',
              title=('binary randomized response (num_categories=2)'
                     if categories else 'generic eps0-LDP randomizer'))
    panel.grid(True, which='both', alpha=0.3)
  panels[0].set_ylabel('certified epsilon / exact binary pair')
  figure.suptitle(f'One shuffled check-in round, n = {NUM_USERS:,} users, '
                  f'delta = {DELTA:g}')
  figure_style.legend_outside(panels[1], [figure_style.UPPER,
                                          figure_style.LOWER],
                              all_axes=[panels[0]])
  _figures.save(figure, args.output, 'checkin_blanket.png')


if __name__ == '__main__':
  main()
