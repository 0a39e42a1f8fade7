"""RDP of shuffled scalar Gaussian reports from their blanket profile.

IDs: NUM-BLANKET-RDP [UB], NUM-BLANKET, GAUSS-NO-GAIN, SYMMETRIZED-MOMENT

Scale C = 1, reports x + N(0, sigma^2), mu = 2 / sigma. The PLD route's
dominating pair (`continuous_blanket.gaussian_shuffle_atoms`: the smaller of
NUM-BLANKET and GAUSS-NO-GAIN, convexified, both orders by mirror symmetry)
has profile A(eps) + h on every eps >= 0, A from its finite atoms (all at
losses <= m), h its mass at +infinity (TAILS-TO-INFINITY). GAUSS-NO-GAIN's
profile is at most Phi-bar((eps - mu^2 / 2) / mu) for every eps, both
orders. So both orders' profiles are at most

  b(eps) = A(eps) + h on [0, s],   Phi-bar((eps - mu^2 / 2) / mu) above s,

for any s >= m; s is where that tail falls to h. By SYMMETRIZED-MOMENT the
Renyi moment is at most 1 + (atoms) + (h on [0, s]) + lam (lam - 1) times
the tail's integral, which (e^{-lam eps} <= e^{(lam - 1) eps}; by parts,
dropping the negative boundary term) is at most

  2 lam e^{lam (lam - 1) mu^2 / 2} Phi-bar((s - mu^2 / 2) / mu - (lam - 1) mu).

The minimum with GAUSS-NO-GAIN's RDP is taken by the route. The pair's mass
at +infinity (about 1e-20: the blanket's leak past its last clamp) caps the
orders at which this gains: the PLD accountant stays the tighter one.
"""

import math

import numpy as np
from scipy import special

from shuffle_accountants import _cache
from shuffle_accountants.pld import checkin as pld_checkin
from shuffle_accountants.pld import continuous_blanket
from shuffle_accountants.rdp import profiles

__all__ = ['NAME', 'gaussian_shuffle_rdp_upper_bound']

NAME = 'NUM-BLANKET-RDP Renyi moment of the blanket profile'

# Grid of the dominating pair's losses (its atoms are rounded up to it).
_DISCRETIZATION = 1e-5

_ATOMS = _cache.Lru(16, lambda atoms: 1, 'rdp.numeric.atoms (entries)')


def gaussian_shuffle_rdp_upper_bound(num_users: int, noise_multiplier: float,
                                     randomized_rounding: bool,
                                     orders: np.ndarray) -> np.ndarray:
  """NUM-BLANKET-RDP: RDP of n shuffled scalar Gaussian reports. [UB]

  For randomized rounding to +-1 (NUM-BLANKET (iv)) or plain clipping to
  [-1, 1] (the envelope, NUM-BLANKET (v)); checked arguments, orders > 1.
  """
  sigma = float(noise_multiplier)
  atoms = _ATOMS.get(
      (num_users, sigma, bool(randomized_rounding)),
      lambda: continuous_blanket.gaussian_shuffle_atoms(
          num_users, sigma, _DISCRETIZATION, randomized_rounding))
  keep = (atoms.losses > 0) & (atoms.masses > 0)
  losses, masses = atoms.losses[keep], atoms.masses[keep]
  height = float(atoms.infinity_mass)
  mu = pld_checkin.gaussian_shift(sigma)
  last = float(losses.max()) if losses.size else 0.0
  switch = (max(last, mu * mu / 2 - mu * float(special.ndtri(height)))
            if height > 0 else last)
  score = (switch - mu * mu / 2) / mu
  tail = (math.log(2.0) + np.log(orders) + orders * (orders - 1) * mu * mu / 2
          + special.log_ndtr((orders - 1) * mu - score))
  flat = profiles.flat_profile_log_excess(height, switch, orders)
  log_moments = profiles.symmetric_profile_log_moments(
      losses, masses, orders, np.logaddexp(tail, flat))
  return log_moments / (orders - 1)
