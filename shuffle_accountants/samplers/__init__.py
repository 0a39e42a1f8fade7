"""DP-SGD batch samplers: random allocation and shuffled batches.

IDs: FS26-RANDOM-ALLOCATION, RANDOM-ALLOCATION-GRID, SHUFFLED-BATCHES-UB,
  SHUFFLED-BATCHES-LB

* `RandomAllocationDpEvent(event, num_selected, num_steps)`: one epoch of
  random allocation, composed by `ShufflePldAccountant` (needs the extra
  `samplers`, i.e. the `PLD_accounting` package, under add/remove).
* `ShuffledBatchesDpEvent(noise_multiplier, steps_per_epoch, num_epochs)`:
  composed as its certified upper bound by both accountants.
* `shuffled_batches_epsilon(...)`: `EpsilonRange(lower, upper)` for shuffled
  batches; report `.upper`.
"""

from shuffle_accountants.samplers.events import RandomAllocationDpEvent
from shuffle_accountants.samplers.events import ShuffledBatchesDpEvent
from shuffle_accountants.samplers.shuffled_batches import EpsilonRange
from shuffle_accountants.samplers.shuffled_batches import (
           shuffled_batches_epsilon,
)

__all__ = ['EpsilonRange', 'RandomAllocationDpEvent',
           'ShuffledBatchesDpEvent', 'shuffled_batches_epsilon']
