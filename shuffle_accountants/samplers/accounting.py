"""How the accountants compose the events of the DP-SGD samplers.

IDs: RANDOM-ALLOCATION-GRID, SHUFFLED-BATCHES-UB, FS26-RANDOM-ALLOCATION

Shared by `ShufflePldAccountant` and `ShuffleRdpAccountant`, which dispatch
`SAMPLER_EVENT_TYPES` here. Every route is an upper bound:

* `ShuffledBatchesDpEvent`: `num_epochs` Gaussian releases, sensitivity 1
  (add/remove) or 2 (replace-one) in units of sigma C (SHUFFLED-BATCHES-UB);
* `RandomAllocationDpEvent` of a `GaussianDpEvent` under add/remove: the
  dominating PLD of `random_allocation`, on the PLD accountant's grid by
  `pld.random_allocation` (RANDOM-ALLOCATION-GRID);
* the same under replace-one: `num_selected` Gaussian releases of
  sensitivity 2 per epoch, without amplification (RANDOM-ALLOCATION-GRID).
"""

from typing import Optional, Tuple, TypeAlias

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
import numpy as np

from shuffle_accountants.core import _event_checks
from shuffle_accountants.samplers import random_allocation
from shuffle_accountants.samplers import shuffled_batches
from shuffle_accountants.samplers.events import RandomAllocationDpEvent
from shuffle_accountants.samplers.events import ShuffledBatchesDpEvent

__all__ = [
    'NeighboringRelation', 'CompositionErrorDetails', 'SAMPLER_EVENT_TYPES',
    'as_gaussians', 'rdp_error', 'shuffled_batches_rdp',
]

NeighboringRelation: TypeAlias = privacy_accountant.NeighboringRelation
CompositionErrorDetails: TypeAlias = (
    privacy_accountant.PrivacyAccountant.CompositionErrorDetails)

SAMPLER_EVENT_TYPES = (RandomAllocationDpEvent, ShuffledBatchesDpEvent)

_RELATIONS = (NeighboringRelation.ADD_OR_REMOVE_ONE,
              NeighboringRelation.REPLACE_ONE)


def _relation_error(event, relation) -> Optional[CompositionErrorDetails]:
  if relation in _RELATIONS:
    return None
  return _event_checks.error(event, (
      f'{type(event).__name__} is defined under ADD_OR_REMOVE_ONE or '
      f'REPLACE_ONE; this accountant uses {relation}.'))


def _inner_error(event: RandomAllocationDpEvent
                 ) -> Optional[CompositionErrorDetails]:
  if isinstance(event.event, dp_event.GaussianDpEvent):
    return None
  return _event_checks.error(event, (
      'RandomAllocationDpEvent supports event=GaussianDpEvent('
      f'noise_multiplier) (DP-SGD); got {type(event.event).__name__}.'))


def as_gaussians(event, relation: NeighboringRelation
                 ) -> Tuple[Optional[CompositionErrorDetails],
                            Optional[dp_event.DpEvent]]:
  """(error, the Gaussian releases that bound `event`, or None for its PLD).

  dp_accounting's PLD accountant composes `GaussianDpEvent(sigma)` with
  sensitivity 1 under add/remove and 2 under replace-one, as
  RANDOM-ALLOCATION-GRID and SHUFFLED-BATCHES-UB need.
  """
  error = _relation_error(event, relation)
  if error is not None:
    return error, None
  if isinstance(event, ShuffledBatchesDpEvent):
    return None, dp_event.SelfComposedDpEvent(
        dp_event.GaussianDpEvent(event.noise_multiplier), event.num_epochs)
  error = _inner_error(event)
  if error is not None:
    return error, None
  if (relation is NeighboringRelation.REPLACE_ONE
      or event.event.noise_multiplier == 0):
    return None, dp_event.SelfComposedDpEvent(event.event, event.num_selected)
  if not random_allocation.is_available():
    return _event_checks.error(event, random_allocation.INSTALL_HINT), None
  return None, None


def rdp_error(event, relation: NeighboringRelation
              ) -> Optional[CompositionErrorDetails]:
  """The RDP accountant composes shuffled batches only."""
  if isinstance(event, RandomAllocationDpEvent):
    return _event_checks.error(event, (
        'RandomAllocationDpEvent is accounted by ShufflePldAccountant (its '
        'certified bound is a privacy loss distribution); the RDP '
        'accountant does not compose it.'))
  return _relation_error(event, relation)


def shuffled_batches_rdp(event: ShuffledBatchesDpEvent, orders: np.ndarray,
                         relation: NeighboringRelation) -> np.ndarray:
  """RDP of SHUFFLED-BATCHES-UB. [UB]

  num_epochs alpha s^2 / (2 sigma^2), s = 1 or 2.
  """
  if event.noise_multiplier == 0:
    return np.full(np.shape(orders), np.inf)
  scale = shuffled_batches.sensitivity(relation) / event.noise_multiplier
  return event.num_epochs * np.asarray(orders, dtype=np.float64) * (
      scale**2 / 2)
