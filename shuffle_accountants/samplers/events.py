"""`DpEvent`s of DP-SGD batch samplers: random allocation, shuffled batches.

IDs: FS26-RANDOM-ALLOCATION, SHUFFLED-BATCHES-UB

Like `dp_accounting.dp_event`, each event documents the mechanism it stands
for completely. Both are frozen `attrs` classes at module level, so that
`DpEvent.to_named_tuple()` / `from_named_tuple()` round-trip them; invalid
parameters raise at construction.
"""

import attr
from dp_accounting import dp_event

from shuffle_accountants import _validation

__all__ = ['RandomAllocationDpEvent', 'ShuffledBatchesDpEvent']


def _noise_multiplier(instance, attribute, value):
  del instance
  _validation.check_real(attribute.name, value, 0.0)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class RandomAllocationDpEvent(dp_event.DpEvent):
  """One epoch of random allocation ("balls and bins") of `event`.

  Each example is placed in `num_selected` of the `num_steps` steps of the
  epoch, a uniformly random subset drawn independently of the data and of
  the other examples. Step s releases `event` (the Gaussian mechanism: the
  sum of the clipped contributions of the examples placed in s, plus noise
  of standard deviation `noise_multiplier` times the clipping norm) on the
  examples placed in it; steps may be chosen adaptively. Composing the
  event `count` times is `count` epochs with fresh allocations.

  The signature is that of dp_accounting's `RandomAllocationDpEvent`
  (pull request 414), so code moves over when it is released.

  Neighbouring relation: that of the accountant. Under ADD_OR_REMOVE_ONE
  the certified bound is Feldman and Shenfeld's (FS26-RANDOM-ALLOCATION,
  docs/mathematics.md RANDOM-ALLOCATION-GRID); under REPLACE_ONE it is the bound
  without amplification (`num_selected` Gaussian releases of sensitivity 2 per
  epoch, RANDOM-ALLOCATION-GRID), because replace-one is *not* covered by
  composing the remove and add directions.

  Attributes:
    event: the per-step mechanism; `GaussianDpEvent` is supported.
    num_selected: k, steps per epoch each example is placed in, in
      [1, num_steps].
    num_steps: t, steps per epoch, an integer >= 1.
  """
  event: dp_event.DpEvent
  num_selected: int = attr.ib(
      converter=_validation.whole_if_integral,
      validator=_validation.positive_integer_field)
  num_steps: int = attr.ib(
      converter=_validation.whole_if_integral,
      validator=_validation.positive_integer_field)

  def __attrs_post_init__(self):
    if not isinstance(self.event, dp_event.DpEvent):
      raise TypeError('event must be a dp_accounting DpEvent (e.g. '
                      'GaussianDpEvent(noise_multiplier)); got '
                      f'{self.event!r}.')
    if self.num_selected > self.num_steps:
      raise ValueError(
          f'num_selected must be in [1, num_steps={self.num_steps}]; got '
          f'{self.num_selected}.')


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ShuffledBatchesDpEvent(dp_event.DpEvent):
  """DP-SGD on shuffled fixed-size batches, for `num_epochs` epochs.

  Every epoch draws a uniformly random permutation of the examples,
  independent of the data, and cuts it into `steps_per_epoch` batches, so
  each example is in exactly one batch (one step) per epoch. Each step
  releases the sum of the clipped gradients (L2 norm <= C) of its batch
  plus Gaussian noise N(0, noise_multiplier^2 C^2 I); steps may be adaptive.

  Neighbouring relation: that of the accountant. Under REPLACE_ONE one
  example's data changes (its position in every permutation is the same in
  both worlds); under ADD_OR_REMOVE_ONE the differing example's slot is
  empty in one world (zero-out: the other examples keep their batches).

  Accounted as its certified upper bound (SHUFFLED-BATCHES-UB): the composition
  over epochs of one Gaussian release of sensitivity 1 (add/remove) or 2
  (replace-one), in units of noise_multiplier times C; no amplification by
  shuffling is claimed. `shuffle_accountants.samplers.shuffled_batches_epsilon`
  also gives the published lower bound (CHUA24-SHUFFLE-LB).

  Attributes:
    noise_multiplier: sigma >= 0 (0: no privacy).
    steps_per_epoch: t, batches per epoch, an integer >= 1.
    num_epochs: epochs, an integer >= 1.
  """
  noise_multiplier: float = attr.ib(validator=_noise_multiplier)
  steps_per_epoch: int = attr.ib(
      converter=_validation.whole_if_integral,
      validator=_validation.positive_integer_field)
  num_epochs: int = attr.ib(
      default=1, converter=_validation.whole_if_integral,
      validator=_validation.positive_integer_field)
