"""Numeric telemetry: certified epsilon of one shuffled round of Gaussian reports.

Each of n users reports a scalar in [-C, C] plus N(0, sigma^2 C^2) with
sigma = 2, and the reports are shuffled. Two mechanisms: randomized
rounding (the value is rounded to +-C, unbiased, before the noise;
certified with the continuous privacy blanket NUM-BLANKET beside the
GAUSS-NO-GAIN Gaussian pair) and plain clipping (certified with the envelope of
every pair's blanket loss, NUM-BLANKET (v): the blanket's worst-pair step is
unproven for interior inputs). Dotted: the blanket at
the extreme pair for plain clipping in R^d, d in {1, 2, 8, 32}
(`continuous_blanket.extreme_pair_epsilon`): estimates, not certificates.
Dashed: the lower bound NUM-LB / NUM-LB-LIKELIHOOD (thresholded counts or
the sum of likelihood ratios of scalar reports; it holds for both mechanisms
and every d).

Run: python examples/numeric_telemetry.py --output figures  (a few minutes)
"""  # noqa: E501

import _figures
from _figures import pyplot
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import figure_style
from shuffle_accountants import randomizers
from shuffle_accountants.pld import continuous_blanket
from shuffle_accountants.pld import likelihood_sum

DELTA = 1e-6
NOISE_MULTIPLIER = 2.0
DIMENSIONS = (1, 2, 8, 32)
ESTIMATE = 'estimate'


def certified(num_users, randomized_rounding):
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users, randomizer=(
      randomizers.GaussianRandomizer(
          NOISE_MULTIPLIER, randomized_rounding=randomized_rounding))))
  return accountant.get_epsilon(DELTA)


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  populations = ([10**3, 10**5] if args.quick
                 else [10**2, 10**3, 10**4, 10**5, 10**6, 10**7])
  dimensions = (1,) if args.quick else DIMENSIONS
  curves = {
      'certified, randomized rounding': (figure_style.UPPER, [
          certified(n, True) for n in populations]),
      'certified, plain clipping (envelope)': (figure_style.UPPER, [
          certified(n, False) for n in populations]),
  }
  for index, dimension in enumerate(dimensions):
    values = [continuous_blanket.extreme_pair_epsilon(
        n, DELTA, noise_multiplier=NOISE_MULTIPLIER, dimension=dimension)
              for n in populations]
    curves[f'estimate, clipping, d = {dimension}'] = (ESTIMATE, values)
    _figures.progress('dimensions', index + 1, len(dimensions))
  curves['lower bound (NUM-LB, NUM-LB-LIKELIHOOD)'] = (figure_style.LOWER, [
      likelihood_sum.gaussian_shuffle_epsilon_lower_bound(
          n, NOISE_MULTIPLIER, DELTA) for n in populations])
  for name, (_, values) in curves.items():
    print(f'{name}: ' + ', '.join(
        f'n={n:.0e} eps={value:.4g}' for n, value in zip(populations,
                                                         values)))
  figure, axes = pyplot.subplots(figsize=(7.5, 4.5))
  for index, (name, (kind, values)) in enumerate(curves.items()):
    style = figure_style.series_style(
        index, figure_style.UPPER if kind == ESTIMATE else kind)
    if kind == ESTIMATE:
      style['linestyle'] = ':'  # not a certified bound
    axes.plot(populations, values, label=name, **style)
  axes.set(xscale='log', yscale='log', xlabel='users n',
           ylabel=f'epsilon of one round at delta = {DELTA:g}',
           title=f'Shuffled Gaussian reports, sigma = {NOISE_MULTIPLIER:g}')
  axes.grid(True, which='both', alpha=0.3)
  kinds = [kind for kind, _ in curves.values() if kind != ESTIMATE]
  legend = figure_style.legend_outside(axes, kinds)
  legend.set_title(figure_style.legend_title(kinds)
                   + '\ndotted: estimate (worst pair unproven)')
  _figures.save(figure, args.output, 'numeric_telemetry.png')


if __name__ == '__main__':
  main()
