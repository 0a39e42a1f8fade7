"""Random allocation's dominating PLD on the PLD accountant's grid.

IDs: FS26-RANDOM-ALLOCATION, RANDOM-ALLOCATION-GRID

The two directions (remove, add) of the `PLD_accounting` package's
dominating PLD of one epoch (`samplers.random_allocation`) are moved to the
accountant's grid by rounding every loss up, and merged into one PMF whose
delta profile is the larger of the two at every grid point
(RANDOM-ALLOCATION-GRID), so the result dominates both orders of the pair and
composes like any other symmetric round.
"""

from typing import Tuple

import numpy as np

from shuffle_accountants import _cache
from shuffle_accountants import _upstream
from shuffle_accountants.pld import discrete
from shuffle_accountants.samplers import events as sampler_events
from shuffle_accountants.samplers import random_allocation

__all__ = ['random_allocation_pmf', 'prefetch', 'to_grid']


def random_allocation_pmf(event: sampler_events.RandomAllocationDpEvent,
                          discretization: float, relative_accuracy: float):
  """One epoch's dominating grid PMF under add/remove (RANDOM-ALLOCATION-GRID).

  The package's loss discretization follows the accountant's
  `relative_accuracy` (1e-3: 0.015), within [0.0075, 0.05]: finer is
  tighter and slower (0.0075: about 4x the time).
  """
  # The event's fields are checked by the event, the grid by the accountant.
  noise_multiplier, num_selected, num_steps, loss_discretization = (
      _epoch_arguments(event, relative_accuracy))
  return _cached_pmf(noise_multiplier, num_selected, num_steps,
                     float(discretization), loss_discretization)


def prefetch(event: sampler_events.RandomAllocationDpEvent,
             relative_accuracy: float) -> None:
  """Starts computing the package's PMFs of `random_allocation_pmf(event,
  ..., relative_accuracy)` in a background thread (speed only:
  `samplers.random_allocation.prefetch_epoch`)."""
  random_allocation.prefetch_epoch(*_epoch_arguments(event, relative_accuracy))


def _epoch_arguments(event: sampler_events.RandomAllocationDpEvent,
                     relative_accuracy: float
                     ) -> Tuple[float, int, int, float]:
  """(sigma, selected, steps, the package's loss discretization)."""
  # Below sigma = 1 the losses spread as 1 / sigma^2 (and so does epsilon):
  # the grid follows, keeping the relative slack and the time about fixed.
  scale = max(1.0, event.event.noise_multiplier**-2)
  loss_discretization = scale * min(max(
      random_allocation.LOSS_DISCRETIZATION_PER_ACCURACY * relative_accuracy,
      0.0075), 0.05)
  return (float(event.event.noise_multiplier), int(event.num_selected),
          int(event.num_steps), float(loss_discretization))


def to_grid(pmf, discretization: float) -> discrete.GridPmf:
  """A dp_accounting PMF moved to the grid {i d} by rounding losses up. [DOM]

  Raising every loss raises delta(eps) = E[(1 - e^{eps - L})_+] at every
  eps, so the result dominates the input.
  """
  return _fields_to_grid(_upstream.dense_pmf_fields(pmf.to_dense_pmf()),
                         discretization)


def _fields_to_grid(fields: random_allocation.DenseFields,
                    discretization: float) -> discrete.GridPmf:
  """`to_grid` of a dense PMF's (discretization, lower index, probabilities,
  mass at +infinity)."""
  discretization_in, lower_index, probs, infinity_mass = fields
  probs = np.maximum(np.asarray(probs, dtype=np.float64), 0.0)
  losses = (lower_index + np.arange(probs.size)) * discretization_in
  # +1e-9: the float quotient is within ~1e-10 of the true one here, so the
  # ceiling is never below the loss.
  index = np.ceil(losses / discretization + 1e-9).astype(np.int64)
  lower = int(index.min())
  return discrete.GridPmf(discretization, lower,
                          np.bincount(index - lower, weights=probs),
                          infinity_mass)


@_cache.cached(16 * 2**20, _cache.atoms_bytes)
def _cached_pmf(noise_multiplier: float, num_selected: int, num_steps: int,
                discretization: float, loss_discretization: float
                ) -> discrete.GridPmf:
  return discrete.largest_profile([
      _fields_to_grid(fields, discretization)
      for fields in random_allocation.dominating_epoch_fields_unchecked(
          noise_multiplier, num_selected, num_steps, loss_discretization)])
