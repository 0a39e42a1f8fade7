"""PLDs of integer sums with binomial or discrete Gaussian noise.

IDs: BINOMIAL-SUM, DISCRETE-GAUSSIAN-SUM, LATTICE-NOISE-PAIR,
  TAILS-TO-INFINITY, ROUNDOFF-CERTIFIED

One coordinate moved by h in {-Delta, ..., Delta} is the shifted lattice
pair of its noise (`pairs.lattice_noise`); the noise is symmetric, so shift
-h is shift h reflected and each pair bounds both orders. The pairs of h =
1, ..., Delta are discretized (connect-the-dots, pessimistic) and one PMF
whose profile is at least each of theirs dominates the coordinate [UB];
the d coordinates are independent, so the d-fold composition of that PMF
dominates the release (composed by the certified convolution of
`pld.sums.composed`).
"""

import math
from typing import Tuple

import numpy as np

from shuffle_accountants import events
from shuffle_accountants.pairs import lattice_noise
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import sums

__all__ = ['BINOMIAL_PAIR', 'DISCRETE_GAUSSIAN_PAIR', 'ONE_AGGREGATOR',
           'EXACT_SUM_MAX_SIGMA', 'EXACT_SUM_MAX_AGGREGATORS',
           'noise_window', 'coordinate_pairs', 'hockey_stick', 'round_pmf',
           'round_scales']

BINOMIAL_PAIR = 'BINOMIAL-SUM: shifted Bin(N, 1/2) pair, exact on its lattice'
DISCRETE_GAUSSIAN_PAIR = ('DISCRETE-GAUSSIAN-SUM: shifted discrete Gaussian '
                          'pair, exact on its lattice')
ONE_AGGREGATOR = ('DISCRETE-GAUSSIAN-SUM (ii): all-honest noise accounted '
                  "as one aggregator's (post-processing)")
# The all-honest noise is convolved exactly (direct sums of positive
# terms) up to this scale and this many aggregators.
EXACT_SUM_MAX_SIGMA = 200.0
EXACT_SUM_MAX_AGGREGATORS = 4


def noise_window(event) -> Tuple[Tuple[np.ndarray, float, float], str]:
  """(log-masses, their error bound, tail bound) of one coordinate's noise
  as accounted, and the pair's name."""
  if isinstance(event, events.BinomialSecureSumEvent):
    return lattice_noise.binomial_window(event.num_trials), BINOMIAL_PAIR
  window = lattice_noise.discrete_gaussian_window(event.sigma)
  if event.trust == 'one-honest' or event.num_aggregators == 1:
    return window, DISCRETE_GAUSSIAN_PAIR
  if (event.sigma <= EXACT_SUM_MAX_SIGMA
      and event.num_aggregators <= EXACT_SUM_MAX_AGGREGATORS):
    return (lattice_noise.summed_window(window, event.num_aggregators),
            DISCRETE_GAUSSIAN_PAIR)
  return window, ONE_AGGREGATOR


def coordinate_pairs(event) -> Tuple[Tuple[privacy_loss.PldAtoms, ...], str]:
  """The atoms of the shifts 1, ..., Delta of one coordinate [UB]."""
  (log_pmf, error, tail), name = noise_window(event)
  return tuple(lattice_noise.shifted_pair_atoms(log_pmf, error, shift, tail)
               for shift in range(1, event.sensitivity + 1)), name


def hockey_stick(atoms: privacy_loss.PldAtoms, epsilon: float) -> float:
  """delta(epsilon) of a pair's atoms, summed directly [UB: the atoms are]."""
  gaps = -np.expm1(epsilon - atoms.losses)
  return min(1.0, math.fsum(atoms.masses[gaps > 0] * gaps[gaps > 0])
             + atoms.infinity_mass)


def _self_composed(pmf: discrete.GridPmf, times: int) -> discrete.GridPmf:
  """`times`-fold composition by repeated squaring [UB]."""
  result = None
  power = pmf
  while True:
    if times & 1:
      result = power if result is None else sums.composed(result, power)
    times >>= 1
    if not times:
      return result
    power = sums.composed(power, power)


def round_pmf(event, unused_sampling_ratio, discretization: float,
              discretize: checkin.Discretize, unused_krr_adversary,
              unused_relative_width
              ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """`candidates.ROUND_PMFS`' entry: the release's PMF and its pair's name."""
  pairs, name = coordinate_pairs(event)
  coordinate = discrete.largest_profile(
      [discretize(atoms, discretization) for atoms in pairs])
  return _self_composed(coordinate, event.dimension), (name,)


def round_scales(event, unused_ratio, unused_krr_adversary,
                 unused_relative_width) -> Tuple[float, float, float]:
  """`candidates.ROUND_PMFS`' entry: (spread, reach, spread bound)."""
  pairs, _ = coordinate_pairs(event)
  widest = pairs[-1]
  if widest.losses.size == 0:
    return 1.0, 1.0, 1.0
  spread = math.sqrt(event.dimension) * privacy_loss.loss_spread(widest)
  reach = event.dimension * float(np.max(np.abs(widest.losses)))
  return spread, reach, 2 * spread
