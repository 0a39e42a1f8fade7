"""Choosing a frequency oracle: certified epsilon of one shuffled round per randomizer.

A telemetry team picks a local randomizer for a domain of 100 values at
eps0 = 1 and asks what one shuffled round costs centrally, for populations
from 10^3 to 10^8 users: the certified epsilon (ShufflePldAccountant with
the randomizer named, so that its D15 / D16 pairs count) against the
generic eps0-LDP bound (FMT21), with the exact lower bound of
`randomizer_epsilon_lower_bound` (dataset pairs, dashed) for unary encoding.

Run: python examples/randomizer_choice.py --output figures  (about a minute)
"""

import _figures
from _figures import pyplot
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import randomizers
from shuffle_accountants.pld import lower_bounds

DELTA = 1e-6
LOCAL_EPSILON = 1.0
DOMAIN = 100
CHOICES = {
    'k-RR': randomizers.KRandomizedResponse(DOMAIN, LOCAL_EPSILON),
    'optimized unary encoding': randomizers.OptimizedUnaryEncoding(
        DOMAIN, LOCAL_EPSILON),
    'optimized local hashing': randomizers.OptimizedLocalHashing(
        DOMAIN, LOCAL_EPSILON),
    'Hadamard response': randomizers.HadamardResponse(DOMAIN, LOCAL_EPSILON),
    'subset selection': randomizers.SubsetSelection(DOMAIN, LOCAL_EPSILON),
}


def certified(num_users, randomizer=None):
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users, LOCAL_EPSILON,
                                  randomizer=randomizer))
  return accountant.get_epsilon(DELTA)


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  populations = ([10**3, 10**4, 10**5] if args.quick
                 else [10**3, 10**4, 10**5, 10**6, 10**7, 10**8])
  figure, axes = pyplot.subplots(figsize=(6.5, 4.5))
  generic = [certified(n) for n in populations]
  axes.plot(populations, generic, color='black',
            label='generic eps0-LDP (FMT21)',
            **_figures.line_styles('upper bound'))
  for index, (name, randomizer) in enumerate(CHOICES.items()):
    values = [certified(n, randomizer) for n in populations]
    axes.plot(populations, values, label=name,
              **_figures.line_styles('upper bound'))
    print(f'{name}: ' + ', '.join(
        f'n={n:.0e} eps={value:.4g} ({value / base:.2f} x generic)'
        for n, value, base in zip(populations, values, generic)))
    _figures.progress('randomizers', index + 1, len(CHOICES))
  lower = [lower_bounds.randomizer_epsilon_lower_bound(
      CHOICES['optimized unary encoding'], n, 1, DELTA) for n in populations]
  axes.plot(populations, lower, label='unary encoding, exact lower bound',
            **_figures.line_styles('lower bound'))
  axes.set(xscale='log', yscale='log', xlabel='users n',
           ylabel=f'epsilon of one round at delta = {DELTA:g}',
           title=f'eps0 = {LOCAL_EPSILON:g}, d = {DOMAIN}')
  axes.legend(fontsize=8)
  _figures.save(figure, args.output, 'randomizer_choice.png')


if __name__ == '__main__':
  main()
