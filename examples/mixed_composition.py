"""One budget for a product: shuffled telemetry plus central DP-SGD training.

A service runs daily shuffled frequency estimation (4-RR, eps0 = 2, 10^5
users) and, on the same users, trains a model with central DP-SGD
(Poisson-sampled Gaussian, as TF-Privacy or Opacus emit it). Both go into one
ShufflePldAccountant (replace-one adjacency) and give one certified epsilon;
the figure shows how it grows with the days of telemetry.

Run: python examples/mixed_composition.py --output figures  (a few seconds)
"""

import dp_accounting

import _figures
from _figures import pyplot
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import figure_style

DELTA = 1e-6
TRAINING = dp_accounting.SelfComposedDpEvent(
    dp_accounting.PoissonSampledDpEvent(
        0.01, dp_accounting.GaussianDpEvent(noise_multiplier=2.0)), 1000)
TELEMETRY_DAY = ShuffleEvent(num_users=10**5, local_epsilon=2.0,
                             num_categories=4)


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  days = [1, 30, 365] if args.quick else [1, 7, 30, 90, 180, 365]
  alone = ShufflePldAccountant().compose(TRAINING).get_epsilon(DELTA)
  together, telemetry_only = [], []
  for index, count in enumerate(days):
    together.append(ShufflePldAccountant().compose(TRAINING).compose(
        TELEMETRY_DAY, count).get_epsilon(DELTA))
    telemetry_only.append(ShufflePldAccountant().compose(
        TELEMETRY_DAY, count).get_epsilon(DELTA))
    _figures.progress('days', index + 1, len(days))
  print(f'DP-SGD training alone: epsilon {alone:.4g} (replace-one)')
  for count, both, telemetry in zip(days, together, telemetry_only):
    print(f'  {count:>3} days of telemetry: alone {telemetry:.4g}, with '
          f'training {both:.4g}')
  figure, axes = pyplot.subplots(figsize=(8, 4))
  for index, (label, values) in enumerate((
      ('training + telemetry', together), ('telemetry alone', telemetry_only),
      ('training alone', [alone] * len(days)))):
    axes.plot(days, values, label=label, **figure_style.series_style(index))
  axes.set(xscale='log', xlabel='days of shuffled telemetry',
           ylabel=f'certified epsilon at delta = {DELTA:g}',
           title='4-RR telemetry (n = 10^5, eps0 = 2) and DP-SGD (1000 steps, '
           'q = 0.01, sigma = 2) in one ShufflePldAccountant')
  axes.title.set_fontsize(9)
  axes.grid(True, which='both', alpha=0.3)
  figure_style.legend_outside(axes, [figure_style.UPPER])
  _figures.save(figure, args.output, 'mixed_composition.png')


if __name__ == '__main__':
  main()
