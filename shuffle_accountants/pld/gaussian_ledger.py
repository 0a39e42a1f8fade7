"""Long ledgers of Gaussian mechanisms alone, in closed form.

IDs: GAUSS-LEDGER-EXACT

A ledger whose every event is dp_accounting's `GaussianDpEvent` is one
Gaussian mechanism (GAUSS-LEDGER-EXACT); its exact profile needs no grid. The
PLD accountant answers such a ledger in closed form once its Gaussian PLD
would hold over 10^7 grid points (`CLOSED_FORM_FROM_MU`), where the grid
took minutes.
"""

import math
from typing import Optional

from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation

from shuffle_accountants.core import _ledger
from shuffle_accountants.samplers import shuffled_batches

__all__ = ['CLOSED_FORM_FROM_MU', 'ALLOWANCE', 'composed_mu',
           'ClosedFormGaussian']

# From this mu on the closed form answers (docs/performance.md). The
# Gaussian's PLD on the default grid holds 5.9e6 points at mu = 20 (20 s),
# 1.3e7 at mu = 63 (147 s). There the grid's epsilon exceeds the exact one
# by 2e-11 (relative, delta = 1e-6; at delta = 0.5 by 0.2 %), the closed form
# by less (`ALLOWANCE`); at mu = 20 the grid is within 2e-11 of exact.
CLOSED_FORM_FROM_MU = 60.0
# Relative error allowed to the double-precision profile: 23 times the
# largest measured against 50-digit arithmetic (4.3e-11, mu in [60, 1e4],
# delta in [1e-300, 0.9]; tests/pld/test_gaussian_ledger.py).
ALLOWANCE = 1e-9


def composed_mu(ledger: dp_event.DpEvent, relation: NeighboringRelation
                ) -> Optional[float]:
  """mu = s sqrt(sum of count / sigma^2) of a ledger of positive-noise
  `GaussianDpEvent`s only (GAUSS-LEDGER-EXACT; s = 1 under add/remove, 2
  under replace-one); None for any other ledger."""
  total = 0.0
  leaves = _ledger.leaves(ledger)
  for event, count in leaves:
    if not (isinstance(event, dp_event.GaussianDpEvent)
            and event.noise_multiplier > 0):
      return None
    total += count / event.noise_multiplier**2
  if not leaves or relation not in (NeighboringRelation.ADD_OR_REMOVE_ONE,
                                    NeighboringRelation.REPLACE_ONE):
    return None
  return shuffled_batches.sensitivity(relation) * math.sqrt(total)


class ClosedFormGaussian:
  """The exact profile of the Gaussian mechanism of `mu`, rounded up. [UB]

  Answers the queries the PLD accountant asks of its composed PLD.
  """

  def __init__(self, mu: float):
    self._mu = mu

  def epsilon(self, delta: float) -> float:
    """The smallest epsilon certified at `delta` (SHUFFLED-BATCHES-UB's
    inverse, on a target delta (1 - ALLOWANCE))."""
    return shuffled_batches.gaussian_epsilon(self._mu, delta, ALLOWANCE)

  def delta(self, epsilon: float) -> float:
    """delta(epsilon), rounded up by `ALLOWANCE` and never to 0 (the
    profile is positive at every finite epsilon)."""
    if epsilon == math.inf:
      return 0.0
    return min(1.0, max(shuffled_batches.gaussian_delta(self._mu, epsilon)
                        / (1 - ALLOWANCE), math.ulp(0.0)))

  located_epsilon = epsilon  # where the profile puts epsilon: its inverse
