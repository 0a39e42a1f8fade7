"""Shuffled Gaussian vectors: certified epsilon against the dimension d and n.

Each of n users reports a vector of L2 norm at most C plus N(0, sigma^2 C^2 I_d)
with sigma = 5, and the reports are shuffled. Certified: FMT-EQ10-11 along
the report's privacy profile (GAUSS-PROFILE-LDP), the same in every
dimension, with the un-shuffled Gaussian (GAUSS-NO-GAIN) beside it; for
d = 1 (plain clipping) also the NUM-BLANKET (v) envelope. Dashed: the
lower bound NUM-LB / NUM-LB-LIKELIHOOD, which holds in every dimension (the
pair along one axis; the other coordinates are pure noise).

Run: python examples/numeric_vectors.py --output figures  (a few minutes)
"""

import _figures
from _figures import pyplot
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import figure_style
from shuffle_accountants import randomizers
from shuffle_accountants.pld import likelihood_sum

DELTA = 1e-6
NOISE_MULTIPLIER = 5.0


def certified(num_users, dimension):
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users, randomizer=(
      randomizers.GaussianRandomizer(NOISE_MULTIPLIER, dimension))))
  return accountant.get_epsilon(DELTA)


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  populations = ([10**4, 10**6] if args.quick
                 else [10**3, 10**4, 10**5, 10**6, 10**7, 10**8, 10**9])
  lower_populations = [10**4] if args.quick else [10**3, 10**4, 10**5]
  dimensions = ([10, 10**6] if args.quick
                else [2, 10, 100, 10**3, 10**4, 10**6, 10**9])
  by_n = {'certified, d = 100 (any d > 1)': (
      figure_style.UPPER, populations,
      [certified(n, 100) for n in populations])}
  by_n['un-shuffled Gaussian (GAUSS-NO-GAIN)'] = (
      figure_style.UPPER, populations, [certified(1, 100)] * len(populations))
  by_n['lower bound (NUM-LB, NUM-LB-LIKELIHOOD; any d)'] = (
      figure_style.LOWER, lower_populations, [
          likelihood_sum.gaussian_shuffle_epsilon_lower_bound(
              n, NOISE_MULTIPLIER, DELTA) for n in lower_populations])
  by_d = {f'certified, n = 10^{exponent}': (
      figure_style.UPPER, dimensions,
      [certified(10**exponent, d) for d in dimensions])
          for exponent in ((4, 6) if args.quick else (4, 6, 8))}
  for name, (_, xs, values) in {**by_n, **by_d}.items():
    print(f'{name}: ' + ', '.join(f'{x:.0e}: eps={value:.4g}'
                                  for x, value in zip(xs, values)))
  figure, (left, right) = pyplot.subplots(1, 2, figsize=(11, 4.5))
  for axes, curves, label in ((left, by_n, 'users n'),
                              (right, by_d, 'dimension d')):
    for index, (name, (kind, xs, values)) in enumerate(curves.items()):
      axes.plot(xs, values, label=name,
                **figure_style.series_style(index, kind))
    axes.set(xscale='log', yscale='log', xlabel=label,
             ylabel=f'epsilon of one round at delta = {DELTA:g}')
    axes.grid(True, which='both', alpha=0.3)
    kinds = [kind for kind, _, _ in curves.values()]
    axes.legend(title=figure_style.legend_title(kinds), fontsize='small',
                loc='lower left' if axes is left else 'center right')
  figure.suptitle(f'Shuffled Gaussian vectors, sigma = {NOISE_MULTIPLIER:g}')
  _figures.save(figure, args.output, 'numeric_vectors.png')


if __name__ == '__main__':
  main()
