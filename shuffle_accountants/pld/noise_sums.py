"""PLDs of integer sums with binomial, discrete Gaussian or Laplace noise.

IDs: BINOMIAL-SUM, DISCRETE-GAUSSIAN-SUM, LATTICE-NOISE-PAIR,
  TAILS-TO-INFINITY, ROUNDOFF-CERTIFIED

A sum moved by h in {-Delta, ..., Delta} is the shifted lattice pair of
its noise (`pairs.lattice_noise`); the noise is symmetric, so shift -h is
shift h reflected and each pair bounds both orders. The noise laws are
log-concave (binomial, discrete Gaussian, and their convolutions), so the
shift Delta dominates every smaller one (LATTICE-NOISE-PAIR (v)); its atoms
are discretized by the accountant's connect-the-dots [UB].
"""

import math
from typing import Tuple

import numpy as np

from shuffle_accountants import events
from shuffle_accountants.pairs import lattice_noise
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import discrete

__all__ = ['BINOMIAL_PAIR', 'worst_pair', 'hockey_stick', 'round_pmf',
           'round_scales']

BINOMIAL_PAIR = 'BINOMIAL-SUM: shifted Bin(N, 1/2) pair, exact on its lattice'


def worst_pair(event) -> Tuple[privacy_loss.PldAtoms, str]:
  """The atoms of the shift Delta, which dominates every |h| <= Delta [UB]."""
  shift = event.sensitivity
  if isinstance(event, events.BinomialSecureSumEvent):
    log_pmf, error, tail, lo = lattice_noise.binomial_window(
        event.num_trials)
    losses = (None if log_pmf.size <= shift else
              lattice_noise.binomial_losses(event.num_trials, lo,
                                            log_pmf.size, shift, log_pmf,
                                            error))
    return lattice_noise.shifted_pair_atoms(log_pmf, error, shift, tail,
                                            losses), BINOMIAL_PAIR
  (log_pmf, error, tail), name = lattice_noise.noise_window(event)
  return lattice_noise.shifted_pair_atoms(log_pmf, error, shift, tail), name


def hockey_stick(atoms: privacy_loss.PldAtoms, epsilon: float) -> float:
  """delta(epsilon) of a pair's atoms, summed directly [UB: the atoms are]."""
  gaps = -np.expm1(epsilon - atoms.losses)
  return min(1.0, math.fsum(atoms.masses[gaps > 0] * gaps[gaps > 0])
             + atoms.infinity_mass)


def round_pmf(event, unused_sampling_ratio, discretization: float,
              discretize: checkin.Discretize, unused_krr_adversary,
              unused_relative_width
              ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """`routes.ROUND_PMFS`' entry: the release's PMF and its pair's name."""
  atoms, name = worst_pair(event)
  return discretize(atoms, discretization), (name,)


def round_scales(event, unused_ratio, unused_krr_adversary,
                 unused_relative_width) -> Tuple[float, float, float]:
  """`routes.ROUND_PMFS`' entry: (spread, reach, spread bound)."""
  atoms, _ = worst_pair(event)
  if atoms.losses.size == 0:  # disjoint supports: all at +infinity
    return 1.0, 1.0, 1.0
  spread = privacy_loss.loss_spread(atoms)
  return spread, float(np.max(np.abs(atoms.losses))), 2 * spread
