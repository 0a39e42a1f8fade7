"""How tight is the certified epsilon of each named randomizer: certified / exact lower bound against eps0.

For each catalogue randomizer (domain d = 100) the certified epsilon of
`ShufflePldAccountant` with the randomizer named is divided by the largest
of its dataset-pair lower bounds (`randomizer_epsilon_lower_bound`: every
other user holds x', or a third value, BLANKET-TWO-LEVEL and LB-THIRD-SPLIT),
for one round at n = 10^4 and for 365 rounds at n = 10^6, delta = 10^-6. A ratio
of 1 means the certified value is the exact epsilon of the worst pair; the
truth lies between the lower bound and the certified value.

Run: python examples/randomizer_tightness.py --output figures  (a few minutes)
"""  # noqa: E501

import _figures
from _figures import pyplot
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import figure_style
from shuffle_accountants import randomizers
from shuffle_accountants.pld import lower_bounds

DELTA = 1e-6
DOMAIN = 100
FAMILIES = {
    'k-RR': lambda eps: randomizers.KRandomizedResponse(DOMAIN, eps),
    'optimized unary encoding': lambda eps: randomizers.OptimizedUnaryEncoding(
        DOMAIN, eps),
    'optimized local hashing': lambda eps: randomizers.OptimizedLocalHashing(
        DOMAIN, eps),
    'Hadamard response': lambda eps: randomizers.HadamardResponse(DOMAIN, eps),
    'subset selection': lambda eps: randomizers.SubsetSelection(DOMAIN, eps),
}
# (users, rounds) of the two panels.
SETTINGS = ((10**4, 1), (10**6, 365))


def tightness(name: str, local_epsilon: float, num_users: int,
              rounds: int):
  """(certified epsilon, lower bound) of `rounds` shuffled rounds."""
  randomizer = FAMILIES[name](local_epsilon)
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users, randomizer=randomizer), rounds)
  return (accountant.get_epsilon(DELTA),
          lower_bounds.randomizer_epsilon_lower_bound(
              randomizer, num_users, rounds, DELTA))


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  epsilons = ([1.0, 4.0] if args.quick
              else [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
  settings = SETTINGS[:1] if args.quick else SETTINGS
  figure, panels = pyplot.subplots(1, len(settings), squeeze=False,
                                   figsize=(5.5 * len(settings), 4.2))
  done = 0
  for panel, (num_users, rounds) in zip(panels[0], settings):
    for index, name in enumerate(FAMILIES):
      ratios = []
      for eps0 in epsilons:
        certified, lower = tightness(name, eps0, num_users, rounds)
        ratios.append(certified / lower)
        print(f'{name}, n={num_users:.0e}, T={rounds}, eps0={eps0:g}: '
              f'certified {certified:.5g}, lower bound {lower:.5g}, '
              f'ratio {certified / lower:.3f}')
      panel.plot(epsilons, ratios, label=name,
                 **figure_style.series_style(index, figure_style.UPPER))
      done += 1
      _figures.progress('randomizers', done, len(FAMILIES) * len(settings))
    for level in (1.1, 1.5):
      panel.axhline(level, color='grey', linewidth=0.8, linestyle=':')
    panel.set(xlabel='local epsilon eps0',
              ylabel='certified epsilon / exact lower bound',
              title=f'n = {num_users:.0e}, {rounds} round'
              f'{"s" if rounds > 1 else ""}, delta = {DELTA:g}',
              yscale='log')
    panel.grid(True, which='both', alpha=0.3)
  figure.suptitle(f'Tightness per randomizer (domain d = {DOMAIN}): dotted '
                  'lines at 1.1 and 1.5')
  figure_style.legend_outside(panels[0][-1], [figure_style.UPPER]
                              * len(FAMILIES), all_axes=list(panels[0]))
  _figures.save(figure, args.output, 'randomizer_tightness.png')


if __name__ == '__main__':
  main()
