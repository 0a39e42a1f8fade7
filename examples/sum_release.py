"""Sum-only release: certified epsilon over the exact lower bound, against eps0.

Each of n users reports symmetric unary encoding (basic RAPPOR) with per-bit
epsilon eps0 (each bit flipped with probability 1 / (e^eps0 + 1)); secure
aggregation releases only the per-coordinate sums (`SumOfReportsEvent`,
SUM-OF-BITS). The curves are the certified epsilon at delta = 1e-9 divided by
LB-SUM-CONFIGURATIONS (every other user at x, at x' or at a third value: the
exact epsilon of those dataset pairs), for one round and for 365 rounds.
A ratio near 1 means the certificate is nearly tight.

Run: python examples/sum_release.py --output figures  (about a minute)
"""

import _figures
from _figures import pyplot
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import events
from shuffle_accountants import figure_style
from shuffle_accountants import randomizers
from shuffle_accountants.pld import sums

DELTA = 1e-9


def ratio(num_users, bit_epsilon, rounds):
  event = events.SumOfReportsEvent(
      num_users, randomizers.SymmetricUnaryEncoding(16, 2 * bit_epsilon))
  certified = ShufflePldAccountant().compose(event, rounds).get_epsilon(DELTA)
  return certified / sums.sum_release_lower_bound(event, DELTA, rounds)


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  bit_epsilons = ([1.0, 5.0] if args.quick
                  else [0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
  settings = ([(10**3, 1)] if args.quick
              else [(10**3, 1), (10**5, 1), (10**5, 365)])
  figure, axes = pyplot.subplots(figsize=(7.5, 4.5))
  for index, (num_users, rounds) in enumerate(settings):
    values = [ratio(num_users, e, rounds) for e in bit_epsilons]
    name = f'n = {num_users:.0e}, {rounds} round(s)'
    print(f'{name}: ' + ', '.join(f'eps0={e:g} ratio={v:.4f}'
                                  for e, v in zip(bit_epsilons, values)))
    axes.plot(bit_epsilons, values, label=name,
              **figure_style.series_style(index, figure_style.UPPER))
    _figures.progress('settings', index + 1, len(settings))
  axes.axhline(1.0, color='black', linewidth=0.8)
  axes.set(xlabel='per-bit eps0', ylabel='certified / lower bound',
           title=f'Sum of RAPPOR reports, delta = {DELTA:g}')
  axes.grid(True, alpha=0.3)
  figure_style.legend_outside(axes, [figure_style.UPPER] * len(settings))
  _figures.save(figure, args.output, 'sum_release.png')


if __name__ == '__main__':
  main()
