"""Opacus accountants of DP-SGD samplers with central Gaussian noise.

* ``"random_allocation"``: `RandomAllocationAccountant`, for a DataLoader whose
  batch sampler is `RandomAllocationSampler` (each example in one uniformly
  random step of every epoch); certified by `RandomAllocationDpEvent` in
  `ShufflePldAccountant` under add/remove (RANDOM-ALLOCATION-GRID);
* ``"shuffled_batches"``: `ShuffledBatchesAccountant`, for a shuffled (or
  sequential) DataLoader of fixed-size batches; `get_epsilon` is the
  certified upper bound (SHUFFLED-BATCHES-UB), `get_epsilon_range` adds Chua et
  al.'s lower bound (CHUA24-SHUFFLE-LB).

References: FS26-RANDOM-ALLOCATION, RANDOM-ALLOCATION-GRID, SHUFFLED-BATCHES-UB,
  CHUA24-SHUFFLE-LB.

The noise trained is the noise accounted: Opacus' optimizer adds
N(0, sigma^2 C^2) to the sum of the clipped gradients of each step, so one
example moves a step's sum by at most C (add/remove), the Gaussian of the
events. Adaptive clipping (other noise) and distributed training are refused;
accumulated micro-batches are refused with random allocation (they merge
steps, so fewer steps per epoch than accounted).
"""

import math
from typing import Dict, List, Optional, Tuple

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from opacus.data_loader import dtype_safe
from opacus.data_loader import shape_safe
from opacus.data_loader import wrap_collate_with_empty
from opacus.optimizers.adaclipoptimizer import AdaClipDPOptimizer
from torch.utils import data as torch_data

from shuffle_accountants import _validation
from shuffle_accountants.adapters.opacus.base import OpacusAccountant
from shuffle_accountants.adapters.opacus.samplers import RANDOM_ALLOCATION
from shuffle_accountants.adapters.opacus.samplers import SHUFFLED_BATCHES
from shuffle_accountants.adapters.opacus.samplers import EpochCounter
from shuffle_accountants.adapters.opacus.samplers import sampler_kind
from shuffle_accountants.pld import random_allocation
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.samplers import shuffled_batches
from shuffle_accountants.samplers.events import RandomAllocationDpEvent
from shuffle_accountants.samplers.events import ShuffledBatchesDpEvent

ADD_OR_REMOVE_ONE = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE


def _rebuild(data_loader, batch_sampler, collate_fn):
  """The same loader with another batch sampler and collate function."""
  return torch_data.DataLoader(
      data_loader.dataset, batch_sampler=batch_sampler, collate_fn=collate_fn,
      num_workers=data_loader.num_workers, pin_memory=data_loader.pin_memory,
      timeout=data_loader.timeout, worker_init_fn=data_loader.worker_init_fn,
      multiprocessing_context=data_loader.multiprocessing_context,
      generator=data_loader.generator,
      prefetch_factor=data_loader.prefetch_factor,
      persistent_workers=data_loader.persistent_workers)


class _SamplerAccountant(OpacusAccountant):
  """Opacus accountant of a DP-SGD sampler with central Gaussian noise.

  Steps per epoch t = round(1 / sample_rate) (Opacus' sample rate is
  1 / len(data_loader)). Every started epoch is accounted in full (a partial
  epoch is a post-processing of a full one): ceil(steps / t) epochs, or the
  epochs the data loader actually started if more. Steps of one data loader
  at different noise multipliers are accounted at the smallest (more noise is
  a post-processing).

  The state (`state_dict`) also keeps the epochs started so far: a run
  resumed from it counts them plus the epochs its new loader starts, so an
  epoch broken off by a crash still counts.
  """

  def __init__(self):
    super().__init__()
    self._epoch_source = None
    self._epochs_before = 0  # started before the state was restored
    # (groups, delta) of the last query and its answer (`_certified_epsilon`).
    self._last_answer: Tuple[Optional[tuple], float] = (None, math.nan)

  def _epochs_started(self) -> int:
    return self._epochs_before + getattr(self._epoch_source,
                                         'epochs_started', 0)

  def _extra_state(self) -> dict:
    return {'epochs_started': self._epochs_started()}

  def _load_extra_state(self, state_dict) -> None:
    self._epochs_before = _validation.check_integer(
        'epochs_started', state_dict.get('epochs_started', 0), 0)

  def _groups(self) -> List[Tuple[float, int, int]]:
    """(smallest sigma, steps per epoch t, epochs) per t in the history."""
    steps_by_t: Dict[int, int] = {}
    sigma_by_t: Dict[int, float] = {}
    for noise_multiplier, sample_rate, steps in self.history:
      if steps <= 0:
        continue
      t = max(1, round(1 / sample_rate))
      steps_by_t[t] = steps_by_t.get(t, 0) + steps
      sigma_by_t[t] = min(sigma_by_t.get(t, math.inf), noise_multiplier)
    started = self._epochs_started()
    return [(sigma_by_t[t], t,
             max(math.ceil(steps / t), started if len(steps_by_t) == 1 else 0))
            for t, steps in steps_by_t.items()]

  def _event(self, noise_multiplier: float, steps_per_epoch: int
             ) -> dp_event.DpEvent:
    raise NotImplementedError

  def _certified_epsilon(self, delta, history):
    """Certified epsilon (upper bound, add/remove) after the steps so far.

    Every started epoch is accounted in full, so a loop that asks every few
    steps asks for one ledger all the epoch: the last answer is kept under
    the groups and delta, everything the composition reads, and returned
    while they stay the same (random allocation: 0.1-0.3 s a query).
    """
    del history  # grouped by steps per epoch
    groups = self._groups()
    key = (tuple(groups), delta)
    if self._last_answer[0] != key:
      accountant = ShufflePldAccountant(ADD_OR_REMOVE_ONE)
      for noise_multiplier, t, epochs in groups:
        accountant.compose(self._event(noise_multiplier, t), epochs)
      self._last_answer = (key, accountant.get_epsilon(delta))
    return self._last_answer[1]

  def _check_step(self, optimizer, sample_rate: float) -> None:
    del sample_rate
    if isinstance(optimizer, AdaClipDPOptimizer):
      raise ValueError(
          f'the {self.mechanism()!r} accountant assumes noise sigma * C on '
          'a fixed clipping norm C; adaptive clipping changes it. Use '
          'clipping="flat" or "per_layer".')


class RandomAllocationAccountant(_SamplerAccountant):
  """Random allocation (`RandomAllocationSampler`), add/remove.

  See RANDOM-ALLOCATION-GRID.

  Each epoch is `RandomAllocationDpEvent(GaussianDpEvent(sigma), 1, t)`;
  `get_epsilon` composes them in `ShufflePldAccountant` (needs the
  `samplers` extra). The first call at a new (sigma, t) takes seconds
  (docs/performance.md); later ones are cached, also on disk for the next
  process (`_disk_cache`).
  """

  _mechanism_name = RANDOM_ALLOCATION

  def __init__(self):
    super().__init__()
    self._prefetched = set()  # (sigma, t) whose epoch was started

  def _event(self, noise_multiplier, steps_per_epoch):
    return RandomAllocationDpEvent(dp_event.GaussianDpEvent(noise_multiplier),
                                   1, steps_per_epoch)

  def step(self, *, noise_multiplier: float, sample_rate: float):
    """Records the step; a new (sigma, t) starts its epoch's PMF in a
    background thread, so that the query after the epoch finds it
    computed (its first computation on a machine takes seconds)."""
    super().step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    for noise_multiplier, t, _ in self._groups():
      if noise_multiplier > 0 and (noise_multiplier, t) not in self._prefetched:
        self._prefetched.add((noise_multiplier, t))
        # The accuracy `_certified_epsilon`'s accountant composes at.
        accuracy = ShufflePldAccountant(
            ADD_OR_REMOVE_ONE).configuration()['relative_accuracy']
        random_allocation.prefetch(self._event(noise_multiplier, t), accuracy)

  def _loader_to_train(self, data_loader, batch_first: bool):
    sampler = data_loader.batch_sampler
    self._epoch_source = sampler
    sample = data_loader.dataset[0]
    return _rebuild(data_loader, sampler, wrap_collate_with_empty(
        collate_fn=data_loader.collate_fn, batch_first=batch_first,
        sample_empty_shapes=[(0, *shape_safe(x)) for x in sample],
        dtypes=[dtype_safe(x) for x in sample]))

  def _check_step(self, optimizer, sample_rate: float) -> None:
    super()._check_step(optimizer, sample_rate)
    if optimizer.accumulated_iterations != 1:
      raise ValueError(
          f'the {RANDOM_ALLOCATION!r} accountant saw '
          f'{optimizer.accumulated_iterations} batches in one optimizer '
          'step: accumulated micro-batches (or BatchMemoryManager) merge '
          'allocation steps, so an epoch has fewer steps than accounted. '
          'Call optimizer.step() after every batch.')


class ShuffledBatchesAccountant(_SamplerAccountant):
  """Shuffled (or sequential) fixed-size batches, add/remove.

  See SHUFFLED-BATCHES-UB and SHUFFLED-BATCHES-LB.

  `get_epsilon` is the certified upper bound, no amplification claimed:
  the epochs' Gaussians composed in closed form (SHUFFLED-BATCHES-UB).
  `get_epsilon_range(delta)` returns (lower, upper), the lower bound being
  Chua et al.'s (CHUA24-SHUFFLE-LB) for shuffled batches and the upper
  bound itself for a sequential loader (there the Gaussian bound is exact).
  """

  _mechanism_name = SHUFFLED_BATCHES
  sequential = False

  def _event(self, noise_multiplier, steps_per_epoch):
    return ShuffledBatchesDpEvent(noise_multiplier, steps_per_epoch)

  def _loader_to_train(self, data_loader, batch_first: bool):
    del batch_first
    self.sequential = sampler_kind(data_loader) == 'sequential'
    counter = EpochCounter(data_loader.batch_sampler)
    self._epoch_source = counter
    return _rebuild(data_loader, counter, data_loader.collate_fn)

  def _certified_epsilon(self, delta, history):
    """Certified epsilon (upper bound, add/remove), in closed form.

    Each epoch at sigma is one Gaussian release of mu = 1 / sigma
    (SHUFFLED-BATCHES-UB); Gaussians compose exactly, mu^2 adding over the
    epochs of every group, so the ledger is one Gaussian of mu = sqrt(sum E /
    sigma^2): the number `shuffled_batches_epsilon(...).upper` gives, in
    milliseconds at any number of epochs (composing the PLD took seconds:
    docs/performance.md).
    """
    del history  # grouped by steps per epoch
    precision = math.fsum(epochs / sigma**2
                          for sigma, _, epochs in self._groups())
    return shuffled_batches.upper_bound(1 / math.sqrt(precision), 1, delta,
                                        ADD_OR_REMOVE_ONE)

  def get_epsilon_range(self, delta: float) -> Tuple[float, float]:
    """(lower bound [LB], certified upper bound) on epsilon at `delta`."""
    upper = self.get_epsilon(delta)
    if self.sequential:
      return upper, upper
    lower = max((shuffled_batches.lower_bound(
        noise_multiplier, t, epochs, delta, ADD_OR_REMOVE_ONE)
                 for noise_multiplier, t, epochs in self._groups()),
                default=0.0)
    return lower, upper

  def _extra_state(self) -> dict:
    return {**super()._extra_state(), 'sequential': self.sequential}

  def _load_extra_state(self, state_dict) -> None:
    super()._load_extra_state(state_dict)
    self.sequential = bool(state_dict.get('sequential', False))


ACCOUNTANTS = ((RANDOM_ALLOCATION, RandomAllocationAccountant),
               (SHUFFLED_BATCHES, ShuffledBatchesAccountant))


def is_sampler_accountant(accountant) -> bool:
  return isinstance(accountant, _SamplerAccountant)
