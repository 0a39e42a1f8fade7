"""Choosing a frequency oracle: certified epsilon of one shuffled round per randomizer.

A telemetry team picks a local randomizer for a domain of 100 values at
eps0 = 1 and asks what one shuffled round costs centrally, for populations
from 10^3 to 10^8 users: the certified epsilon (ShufflePldAccountant with
the randomizer named, so that its NAMED-CLONE-RATE / BLANKET-TWO-LEVEL pairs
count) against the generic eps0-LDP bound (FMT21), with the exact lower bound of
`randomizer_epsilon_lower_bound` (dataset pairs, dashed) for unary encoding.

Run: python examples/randomizer_choice.py --output figures  (about a minute)
"""  # noqa: E501

import _figures
from _figures import pyplot
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import figure_style
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
  figure, (absolute, relative) = pyplot.subplots(1, 2, figsize=(11, 4.2))
  generic = [certified(n) for n in populations]
  curves = {'generic eps0-LDP (FMT21)': (figure_style.UPPER, generic)}
  for index, (name, randomizer) in enumerate(CHOICES.items()):
    values = [certified(n, randomizer) for n in populations]
    curves[name] = (figure_style.UPPER, values)
    print(f'{name}: ' + ', '.join(
        f'n={n:.0e} eps={value:.4g} ({value / base:.2f} x generic)'
        for n, value, base in zip(populations, values, generic)))
    _figures.progress('randomizers', index + 1, len(CHOICES))
  curves['unary encoding, exact lower bound'] = (figure_style.LOWER, [
      lower_bounds.randomizer_epsilon_lower_bound(
          CHOICES['optimized unary encoding'], n, 1, DELTA)
      for n in populations])
  # Unary encoding, local hashing, Hadamard response and subset selection
  # nearly coincide on the left: the right panel zooms on them (and the
  # lower bound) relative to the generic bound, markers shifted sideways.
  close = [name for name in curves
           if name not in ('generic eps0-LDP (FMT21)', 'k-RR')]
  for index, (name, (kind, values)) in enumerate(curves.items()):
    style = figure_style.series_style(index, kind)
    absolute.plot(populations, values, label=name, **style)
    if name in close:
      shift = 1.25 ** (close.index(name) - (len(close) - 1) / 2)
      relative.plot([n * shift for n in populations],
                    [v / g for v, g in zip(values, generic)], **style)
  absolute.set(xscale='log', yscale='log', xlabel='users n',
               ylabel=f'epsilon of one round at delta = {DELTA:g}',
               title='certified epsilon')
  relative.set(xscale='log', xlabel='users n (markers shifted sideways)',
               ylabel='epsilon / generic eps0-LDP bound',
               title='zoom: the four close oracles and the lower bound')
  for panel in (absolute, relative):
    panel.grid(True, which='both', alpha=0.3)
  figure.suptitle(f'One shuffled round, eps0 = {LOCAL_EPSILON:g}, domain '
                  f'd = {DOMAIN}, delta = {DELTA:g}')
  figure_style.legend_outside(relative, [kind for kind, _ in curves.values()],
                              all_axes=[absolute])
  _figures.save(figure, args.output, 'randomizer_choice.png')


if __name__ == '__main__':
  main()
