"""The computed numbers of docs/numeric.md."""

import functools
import math

from .core import power_of_ten
from .core import sig
from .core import table
from .core import value

NUMERIC_POPULATIONS = (10**3, 10**4, 10**5, 10**6)
NUMERIC_DIMENSIONS = (1, 2, 8, 32)


@functools.lru_cache(maxsize=None)
def _gaussian_shuffle(num_users, sigma, rounding=True, delta=1e-6,
                      dimension=1):
  """Certified epsilon of one shuffled round of GaussianRandomizer reports
  (randomized rounding, or plain clipping)."""
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import randomizers
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users, randomizer=(
      randomizers.GaussianRandomizer(sigma, dimension,
                                     randomized_rounding=rounding))))
  return accountant.get_epsilon(delta)


@functools.lru_cache(maxsize=None)
def _extreme_pair(num_users, sigma, dimension, delta=1e-6):
  """The extreme pair's blanket value (an estimate for plain clipping)."""
  from shuffle_accountants.pld import continuous_blanket
  return continuous_blanket.extreme_pair_epsilon(
      num_users, delta, noise_multiplier=sigma, dimension=dimension)


@functools.lru_cache(maxsize=None)
def _gaussian_lower(num_users, sigma, delta=1e-6):
  from shuffle_accountants.pld import likelihood_sum
  return likelihood_sum.gaussian_shuffle_epsilon_lower_bound(
      num_users, sigma, delta)


@table('numeric.epsilons', slow=True)
def _numeric_epsilons():
  header = (['n', 'lower bound (NUM-LB, NUM-LB-LIKELIHOOD)',
             'certified: randomized rounding (d = 1)',
             'certified: plain clipping, d = 1 (envelope)',
             'certified: plain clipping, d > 1 (GAUSS-NO-GAIN)']
            + [f'estimate, clipping, d = {d} (unproven)'
               for d in NUMERIC_DIMENSIONS])
  rows = [[f'10^{round(math.log10(n))}', sig(_gaussian_lower(n, 2.0), 3),
           sig(_gaussian_shuffle(n, 2.0), 3),
           sig(_gaussian_shuffle(n, 2.0, rounding=False), 3),
           sig(_gaussian_shuffle(n, 2.0, rounding=False, dimension=2), 3)]
          + [sig(_extreme_pair(n, 2.0, d), 3) for d in NUMERIC_DIMENSIONS]
          for n in NUMERIC_POPULATIONS]
  return header, rows


# Issue 31's targets: 0.1x and 0.25x the no-amplification epsilon
# (GAUSS-NO-GAIN).
@value('numeric.target_sigma2')
def _numeric_target_sigma2():
  return sig(0.1 * _gaussian_shuffle(1, 2.0, rounding=False), 3)


@value('numeric.target_sigma1')
def _numeric_target_sigma1():
  return sig(0.25 * _gaussian_shuffle(1, 1.0, rounding=False), 3)


def _subsampled_shuffle_gaussian(dimension):
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import SubsampledShuffleGaussianEvent
  return ShufflePldAccountant().compose(SubsampledShuffleGaussianEvent(
      10**5, 10**4, 2.0, dimension=dimension)).get_epsilon(1e-6)


@value('numeric.subsampled_scalar')
def _numeric_subsampled_scalar():
  return sig(_subsampled_shuffle_gaussian(1), 3)


@value('numeric.subsampled_unknown')
def _numeric_subsampled_unknown():
  return sig(_subsampled_shuffle_gaussian(None), 3)


@table('numeric.targets', slow=True)
def _numeric_targets():
  header = ['sigma', 'n', 'certified: randomized rounding',
            'lower bound (NUM-LB, NUM-LB-LIKELIHOOD)', 'rounding / lower',
            'certified: plain clipping (envelope)', 'clipping / lower',
            'no amplification (GAUSS-NO-GAIN)']
  rows = []
  for sigma, n in ((2.0, 10**4), (1.0, 10**5), (2.0, 10**6), (5.0, 10**4),
                   (0.5, 10**5)):
    upper, lower = _gaussian_shuffle(n, sigma), _gaussian_lower(n, sigma)
    plain = _gaussian_shuffle(n, sigma, rounding=False)
    rows.append([f'{sigma:g}', f'10^{round(math.log10(n))}', sig(upper, 3),
                 sig(lower, 3), f'{upper / lower:.1f}', sig(plain, 3),
                 f'{plain / lower:.1f}',
                 sig(_gaussian_shuffle(1, sigma, rounding=False), 3)])
  return header, rows


VECTOR_DIMENSIONS = (10, 100, 10**6)


@table('numeric.vectors', slow=True)
def _numeric_vectors():
  header = (['sigma', 'n', 'lower bound (NUM-LB, NUM-LB-LIKELIHOOD; any d)']
            + [f'certified, d = {power_of_ten(d) if d > 1000 else d}'
               for d in VECTOR_DIMENSIONS]
            + ['certified / lower', 'un-shuffled (GAUSS-NO-GAIN)'])
  rows = []
  for sigma, n in ((5.0, 10**4), (5.0, 10**5), (5.0, 10**6), (10.0, 10**4),
                   (2.0, 10**6)):
    certified = [_gaussian_shuffle(n, sigma, rounding=False, dimension=d)
                 for d in VECTOR_DIMENSIONS]
    lower = _gaussian_lower(n, sigma)
    rows.append([f'{sigma:g}', f'10^{round(math.log10(n))}', sig(lower, 3)]
                + [sig(value, 3) for value in certified]
                + [f'{max(certified) / lower:.1f}',
                   sig(_gaussian_shuffle(1, sigma, rounding=False,
                                         dimension=2), 3)])
  return header, rows


@value('numeric.vector_target')
def _numeric_vector_target():
  return sig(_gaussian_shuffle(10**6, 5.0, rounding=False, dimension=100), 3)


@value('numeric.vector_unshuffled')
def _numeric_vector_unshuffled():
  return sig(_gaussian_shuffle(1, 5.0, rounding=False, dimension=100), 3)
