"""Numeric telemetry: certified epsilon of one shuffled round of Gaussian reports.

Each of n users reports its record, clipped to norm C in R^d, plus
N(0, sigma^2 C^2 I_d) with sigma = 2, and the reports are shuffled. The
certified epsilon (ShufflePldAccountant with `GaussianRandomizer`, which
uses the continuous privacy blanket NUM-BLANKET beside the D7 Gaussian
pair) for d in {1, 2, 8, 32, 1000}, against the no-amplification Gaussian
(D7) and the exact lower bound NUM-LB (thresholded counts of scalar
reports, dashed; it holds for every d, a scalar record being a vector
whose other coordinates are 0 and the first coordinate a post-processing).

Run: python examples/numeric_telemetry.py --output figures  (a few minutes)
"""

import _figures
from _figures import pyplot
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import figure_style
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import randomizers
from shuffle_accountants.pld import continuous_blanket

DELTA = 1e-6
NOISE_MULTIPLIER = 2.0
DIMENSIONS = (1, 2, 8, 32, 1000)


def certified(num_users, dimension):
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users, randomizer=(
      randomizers.GaussianRandomizer(NOISE_MULTIPLIER, dimension))))
  return accountant.get_epsilon(DELTA)


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  populations = ([10**3, 10**5] if args.quick
                 else [10**2, 10**3, 10**4, 10**5, 10**6, 10**7])
  dimensions = (1, 1000) if args.quick else DIMENSIONS
  curves = {}
  for index, dimension in enumerate(dimensions):
    values = [certified(n, dimension) for n in populations]
    curves[f'certified, d = {dimension}'] = (figure_style.UPPER, values)
    print(f'd={dimension}: ' + ', '.join(
        f'n={n:.0e} eps={value:.4g}' for n, value in zip(populations,
                                                         values)))
    _figures.progress('dimensions', index + 1, len(dimensions))
  curves['no amplification (D7)'] = (figure_style.UPPER, [
      certified(1, 1)] * len(populations))
  curves['exact lower bound (NUM-LB)'] = (figure_style.LOWER, [
      continuous_blanket.threshold_count_epsilon_lower_bound(
          n, NOISE_MULTIPLIER, DELTA) for n in populations])
  figure, axes = pyplot.subplots(figsize=(7.5, 4.5))
  for index, (name, (kind, values)) in enumerate(curves.items()):
    axes.plot(populations, values, label=name,
              **figure_style.series_style(index, kind))
  axes.set(xscale='log', yscale='log', xlabel='users n',
           ylabel=f'epsilon of one round at delta = {DELTA:g}',
           title=f'Shuffled Gaussian reports, sigma = {NOISE_MULTIPLIER:g}')
  axes.grid(True, which='both', alpha=0.3)
  figure_style.legend_outside(axes, [kind for kind, _ in curves.values()])
  _figures.save(figure, args.output, 'numeric_telemetry.png')


if __name__ == '__main__':
  main()
