"""Opacus accountants for DP-SGD samplers and the sampler <-> accountant contract (FS26-RANDOM-ALLOCATION, D21, D22, CHUA24-SHUFFLE-LB).

Imported by `shuffle_accountants.adapters.opacus`, which registers:

* ``"random_allocation"``: `RandomAllocationAccountant`, for a DataLoader whose
  batch sampler is `RandomAllocationSampler` (each example in one uniformly
  random step of every epoch); certified by `RandomAllocationDpEvent` in
  `ShufflePldAccountant` under add/remove (D21);
* ``"shuffled_batches"``: `ShuffledBatchesAccountant`, for a shuffled (or
  sequential) DataLoader of fixed-size batches; `get_epsilon` is the
  certified upper bound (D22), `get_epsilon_range` adds Chua et al.'s lower
  bound (CHUA24-SHUFFLE-LB).

The contract is checked when `make_private` prepares the data loader, for
this package's accountants in both engines (the stock `PrivacyEngine` too,
whose `_prepare_data_loader` is wrapped when this module is imported; other
accountants pass through it untouched): Poisson sampling with the check-in
accountants ("shuffle_checkin", ...), a shuffled or sequential DataLoader only
with "shuffled_batches", a `RandomAllocationSampler` only with
"random_allocation"; any other sampler (weighted, with replacement, custom
batch samplers) stops with an error that names the fix. Opacus' own
accountants ("rdp", "prv", "gdp") keep Opacus' behaviour; call
`check_sampler_contract(engine.accountant, data_loader, poisson_sampling=...,
distributed=False)` before `make_private` for the same check with them.

The noise trained is the noise accounted: Opacus' optimizer adds
N(0, sigma^2 C^2) to the sum of the clipped gradients of each step, so one
example moves a step's sum by at most C (add/remove), the Gaussian of the
events. Adaptive clipping (other noise) and distributed training are refused;
accumulated micro-batches are refused with random allocation (they merge
steps, so fewer steps per epoch than accounted).
"""

import math
from typing import List, Optional, Tuple

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from opacus import PrivacyEngine
from opacus.accountants import IAccountant
from opacus.data_loader import dtype_safe
from opacus.data_loader import shape_safe
from opacus.data_loader import wrap_collate_with_empty
from opacus.optimizers.adaclipoptimizer import AdaClipDPOptimizer
from opacus.utils.uniform_sampler import DistributedUniformWithReplacementSampler
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
import torch
from torch.utils import data as torch_data

from shuffle_accountants import _validation
from shuffle_accountants import checkpoints
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.samplers import shuffled_batches
from shuffle_accountants.samplers.events import RandomAllocationDpEvent
from shuffle_accountants.samplers.events import ShuffledBatchesDpEvent

RANDOM_ALLOCATION = 'random_allocation'
SHUFFLED_BATCHES = 'shuffled_batches'
ADD_OR_REMOVE_ONE = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE

_FIXES = (
    'keep poisson_sampling=True with a Poisson accountant ("rdp", "prv", '
    '"gdp", ...); or pass poisson_sampling=False with '
    'accountant="shuffled_batches" and a DataLoader(dataset, '
    'batch_size=..., shuffle=True); or with accountant="random_allocation" '
    'and DataLoader(dataset, batch_sampler=RandomAllocationSampler('
    'len(dataset), num_steps)) (shuffle_accountants.adapters.'
    'opacus_samplers)')


class RandomAllocationSampler(torch_data.Sampler):
  """Batch sampler of random allocation: every example in one random step.

  Each iteration (epoch) places each of the `num_examples` examples in one of
  the `num_steps` steps, uniformly and independently, and yields the steps'
  index lists in order; a step may be empty (Opacus then trains on an empty
  batch: noise only). Batches have num_examples / num_steps examples on
  average. Pass it as ``DataLoader(dataset, batch_sampler=...)``.

  Attributes:
    num_examples: the data set size n.
    num_steps: t, steps (batches) per epoch.
    generator: torch.Generator or None (set by a secure-mode engine).
    epochs_started: how many allocations were drawn (the accountant reads
      it, so an epoch broken off and restarted counts as two).
  """

  def __init__(self, num_examples: int, num_steps: int,
               generator: Optional[torch.Generator] = None):
    super().__init__()
    self.num_examples = _validation.check_integer('num_examples',
                                                  num_examples, 1)
    self.num_steps = _validation.check_integer('num_steps', num_steps, 1)
    self.generator = generator
    self.epochs_started = 0

  def __len__(self) -> int:
    return self.num_steps

  def __iter__(self):
    self.epochs_started += 1
    steps = torch.randint(self.num_steps, (self.num_examples,),
                          generator=self.generator)
    order = torch.argsort(steps, stable=True)
    counts = torch.bincount(steps, minlength=self.num_steps).tolist()
    start = 0
    for count in counts:
      yield order[start:start + count].tolist()
      start += count


class _EpochCounter(torch_data.Sampler):
  """A batch sampler that counts its iterations (epochs started)."""

  def __init__(self, batch_sampler):
    super().__init__()
    self.batch_sampler = batch_sampler
    self.epochs_started = 0

  def __len__(self) -> int:
    return len(self.batch_sampler)

  def __iter__(self):
    self.epochs_started += 1
    yield from self.batch_sampler


def sampler_kind(data_loader) -> str:
  """'poisson', 'random_allocation', 'shuffled', 'sequential' or 'other'."""
  batch_sampler = getattr(data_loader, 'batch_sampler', None)
  if isinstance(batch_sampler, _EpochCounter):
    batch_sampler = batch_sampler.batch_sampler
  if isinstance(batch_sampler, (UniformWithReplacementSampler,
                                DistributedUniformWithReplacementSampler)):
    return 'poisson'
  if isinstance(batch_sampler, RandomAllocationSampler):
    return 'random_allocation'
  if type(batch_sampler) is torch_data.BatchSampler:  # pylint: disable=unidiomatic-typecheck
    sampler = batch_sampler.sampler
    if type(sampler) is torch_data.SequentialSampler:  # pylint: disable=unidiomatic-typecheck
      return 'sequential'
    if (type(sampler) is torch_data.RandomSampler  # pylint: disable=unidiomatic-typecheck
        and not sampler.replacement
        and sampler.num_samples == len(sampler.data_source)):
      return 'shuffled'
  return 'other'


def _describe(data_loader) -> str:
  batch_sampler = getattr(data_loader, 'batch_sampler', None)
  inner = getattr(batch_sampler, 'sampler', None)
  return (f'batch_sampler={type(batch_sampler).__name__}'
          + (f' over {type(inner).__name__}' if inner is not None else ''))


def check_sampler_contract(accountant: IAccountant, data_loader, *,
                           poisson_sampling: bool, distributed: bool) -> None:
  """Raises ValueError naming the fix unless the sampler fits the accountant."""
  mechanism = accountant.mechanism()
  kind = sampler_kind(data_loader)
  if mechanism in (RANDOM_ALLOCATION, SHUFFLED_BATCHES):
    wanted = (('random_allocation',) if mechanism == RANDOM_ALLOCATION
              else ('shuffled', 'sequential'))
    if poisson_sampling or kind not in wanted:
      sampler = ('a DataLoader(dataset, batch_sampler=RandomAllocationSampler('
                 'len(dataset), num_steps))' if mechanism == RANDOM_ALLOCATION
                 else 'a DataLoader(dataset, batch_size=..., shuffle=True) '
                 '(or shuffle=False)')
      raise ValueError(
          f'the {mechanism!r} accountant certifies {sampler} trained with '
          f'make_private(..., poisson_sampling=False); got poisson_sampling='
          f'{poisson_sampling} and {_describe(data_loader)}. Fix: pass that '
          'data loader and poisson_sampling=False, or use the accountant of '
          f'your sampler ({_FIXES}).')
    if distributed:
      raise ValueError(
          f'the {mechanism!r} accountant does not support distributed '
          'training (each rank samples its own batches); train in one '
          'process.')
    return
  if kind == 'poisson' or (poisson_sampling and kind != 'other'
                           and kind != 'random_allocation'):
    return
  if poisson_sampling:
    raise ValueError(
        f'poisson_sampling=True would replace the data loader\'s '
        f'{_describe(data_loader)} by uniform Poisson sampling, silently '
        f'changing what you train. Fix: {_FIXES}.')
  raise ValueError(
      f'the {mechanism!r} accountant assumes Poisson sampling, but '
      f'poisson_sampling=False trains {_describe(data_loader)}, for which its '
      f'epsilon is not valid. Fix: {_FIXES}.')


def record_step(history: list, noise_multiplier: float,
                sample_rate: float) -> None:
  """Appends one step to Opacus' run-length history (validated)."""
  noise_multiplier = _validation.check_real('noise_multiplier',
                                            noise_multiplier, 0.0)
  sample_rate = _validation.check_real('sample_rate', sample_rate, 0.0, 1.0,
                                       min_inclusive=False)
  if history and history[-1][:2] == (noise_multiplier, sample_rate):
    history[-1] = (noise_multiplier, sample_rate, history[-1][2] + 1)
  else:
    history.append((noise_multiplier, sample_rate, 1))


def _restored_history(entries) -> list:
  """Opacus' history from a saved state, validated as `record_step` does."""
  if not isinstance(entries, (list, tuple)):
    raise ValueError(f"state_dict['history'] must be a list of "
                     f'(noise_multiplier, sample_rate, num_steps); got '
                     f'{entries!r}.')
  history = []
  for entry in entries:
    if not isinstance(entry, (list, tuple)) or len(entry) != 3:
      raise ValueError(f"state_dict['history'] entry {entry!r} is not "
                       '(noise_multiplier, sample_rate, num_steps).')
    history.append((
        _validation.check_real('noise_multiplier', entry[0], 0.0),
        _validation.check_real('sample_rate', entry[1], 0.0, 1.0,
                               min_inclusive=False),
        _validation.check_integer('num_steps', entry[2], 0)))
  return history


class OpacusAccountant(IAccountant):
  """Base of this package's Opacus accountants (check-in and samplers).

  Holds what they share: Opacus' run-length `history` of (noise_multiplier,
  sample_rate, num_steps), filled by the step hook; `get_epsilon`'s checks
  (0 before any step, inf after a step without noise); the step hook, which
  validates the sample rate and calls `_check_step` before recording; and a
  versioned, validated `state_dict` / `load_state_dict`, which Opacus'
  `PrivacyEngine.save_checkpoint` / `load_checkpoint` store. Besides Opacus'
  'history' and 'mechanism' the state holds 'state_version' and what
  `_extra_state` adds; everything epsilon depends on is in it, so a resumed
  run reports the epsilon of the uninterrupted one. A state without
  'state_version' (saved before it existed) reads as version 1.

  Only accountants of this class get the sampler contract check at
  `make_private` (see `install_contract_check`); Opacus' own are untouched.
  Subclasses set `_mechanism_name` and define `_certified_epsilon`.
  """

  _mechanism_name: str

  def __init__(self):
    self.history = []

  @classmethod
  def mechanism(cls) -> str:
    return cls._mechanism_name

  def step(self, *, noise_multiplier: float, sample_rate: float):
    record_step(self.history, noise_multiplier, sample_rate)

  def __len__(self) -> int:
    return sum(steps for _, _, steps in self.history)

  def get_epsilon(self, delta: float, **options) -> float:
    """Certified epsilon (upper bound) after the steps so far, at `delta`."""
    delta = _validation.check_real('delta', delta, 0.0, 1.0,
                                   min_inclusive=False, max_inclusive=False)
    history = [entry for entry in self.history if entry[2] > 0]
    if not history:
      return 0.0
    if any(noise_multiplier == 0 for noise_multiplier, _, _ in history):
      return math.inf
    return self._certified_epsilon(delta, history, **options)

  def _certified_epsilon(self, delta: float, history: list,
                         **options) -> float:
    """`get_epsilon` on a non-empty history of noisy steps."""
    raise NotImplementedError

  def get_optimizer_hook_fn(self, sample_rate: float):
    """Step hook: `_check_step`, then records (σ, q) for the step."""
    sample_rate = _validation.check_real('sample_rate', sample_rate, 0.0, 1.0,
                                         min_inclusive=False)

    def hook_fn(optimizer):
      self._check_step(optimizer, sample_rate)
      self.step(noise_multiplier=optimizer.noise_multiplier,
                sample_rate=sample_rate)

    return hook_fn

  def _check_step(self, optimizer, sample_rate: float) -> None:
    """Refuses (or adapts) what this accountant cannot certify."""
    del optimizer, sample_rate

  def attach(self, data_loader, batch_first: bool):
    """Called at make_private, after the contract check: the loader to train."""
    del batch_first
    return data_loader

  def _extra_state(self) -> dict:
    return {}

  def _load_extra_state(self, state_dict) -> None:
    del state_dict

  def state_dict(self, destination=None):
    destination = super().state_dict(destination)
    destination['state_version'] = checkpoints.STATE_VERSION
    destination.update(self._extra_state())
    return destination

  def load_state_dict(self, state_dict):
    version = (state_dict or {}).get('state_version',
                                     checkpoints.STATE_VERSION)
    if version != checkpoints.STATE_VERSION:
      raise ValueError(
          f"state_dict['state_version'] = {version!r} is not supported: this "
          f'shuffle-accountants reads version {checkpoints.STATE_VERSION}; '
          'upgrade shuffle-accountants to read a newer checkpoint.')
    previous = self.history
    super().load_state_dict(state_dict)
    try:  # an invalid state leaves the accountant as it was
      history = _restored_history(state_dict['history'])
      self._load_extra_state(state_dict)
    except (TypeError, ValueError):
      self.history = previous
      raise
    self.history = history


# The base's name before it held the history and the step hook.
SavedHistory = OpacusAccountant


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
    steps_by_t, sigma_by_t = {}, {}
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
    """Certified epsilon (upper bound, add/remove) after the steps so far."""
    del history  # grouped by steps per epoch
    accountant = ShufflePldAccountant(ADD_OR_REMOVE_ONE)
    for noise_multiplier, t, epochs in self._groups():
      accountant.compose(self._event(noise_multiplier, t), epochs)
    return accountant.get_epsilon(delta)

  def _check_step(self, optimizer, sample_rate: float) -> None:
    del sample_rate
    if isinstance(optimizer, AdaClipDPOptimizer):
      raise ValueError(
          f'the {self.mechanism()!r} accountant assumes noise sigma * C on '
          'a fixed clipping norm C; adaptive clipping changes it. Use '
          'clipping="flat" or "per_layer".')


class RandomAllocationAccountant(_SamplerAccountant):
  """Random allocation (`RandomAllocationSampler`), add/remove (D21).

  Each epoch is `RandomAllocationDpEvent(GaussianDpEvent(sigma), 1, t)`;
  `get_epsilon` composes them in `ShufflePldAccountant` (needs the
  `samplers` extra). The first call at a new (sigma, t) takes seconds
  (about 10 s at t = 1000); later ones are cached.
  """

  _mechanism_name = RANDOM_ALLOCATION

  def _event(self, noise_multiplier, steps_per_epoch):
    return RandomAllocationDpEvent(dp_event.GaussianDpEvent(noise_multiplier),
                                   1, steps_per_epoch)

  def attach(self, data_loader, batch_first: bool):
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
  """Shuffled (or sequential) fixed-size batches, add/remove (D22, D23).

  `get_epsilon` is the certified upper bound, no amplification claimed:
  the epochs' Gaussians composed in closed form (D22).
  `get_epsilon_range(delta)` returns (lower, upper), the lower bound being
  Chua et al.'s (CHUA24-SHUFFLE-LB) for shuffled batches and the upper
  bound itself for a sequential loader (there the Gaussian bound is exact).
  """

  _mechanism_name = SHUFFLED_BATCHES
  sequential = False

  def _event(self, noise_multiplier, steps_per_epoch):
    return ShuffledBatchesDpEvent(noise_multiplier, steps_per_epoch)

  def attach(self, data_loader, batch_first: bool):
    del batch_first
    self.sequential = sampler_kind(data_loader) == 'sequential'
    counter = _EpochCounter(data_loader.batch_sampler)
    self._epoch_source = counter
    return _rebuild(data_loader, counter, data_loader.collate_fn)

  def _certified_epsilon(self, delta, history):
    """Certified epsilon (upper bound, add/remove, D22), in closed form.

    Each epoch at sigma is one Gaussian release of mu = 1 / sigma (D22);
    Gaussians compose exactly, mu^2 adding over the epochs of every group,
    so the ledger is one Gaussian of mu = sqrt(sum E / sigma^2): the number
    `shuffled_batches_epsilon(...).upper` gives, in milliseconds at any
    number of epochs (composing the PLD took 10 s at 300 epochs).
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


# The unwrapped stock method (also when this module is reloaded).
_STOCK_PREPARE = getattr(PrivacyEngine._prepare_data_loader,  # pylint: disable=protected-access
                         '__wrapped__', PrivacyEngine._prepare_data_loader)  # pylint: disable=protected-access


def _prepare_data_loader(self, data_loader, *, poisson_sampling: bool,
                         distributed: bool, **kwargs):
  """Opacus' own preparation; for our accountants after the contract check.

  Any other accountant (Opacus' "rdp", "prv", "gdp", ...) goes straight to
  Opacus' method with the same arguments: nothing changes for it.
  """
  if not isinstance(self.accountant, OpacusAccountant):
    return _STOCK_PREPARE(self, data_loader,
                          poisson_sampling=poisson_sampling,
                          distributed=distributed, **kwargs)
  check_sampler_contract(self.accountant, data_loader,
                         poisson_sampling=poisson_sampling,
                         distributed=distributed)
  prepared = _STOCK_PREPARE(self, data_loader,
                            poisson_sampling=poisson_sampling,
                            distributed=distributed, **kwargs)
  if self.secure_mode and sampler_kind(prepared) == 'random_allocation':
    prepared.batch_sampler.generator = self.secure_rng
  return self.accountant.attach(prepared, kwargs.get('batch_first', True))


_prepare_data_loader.__wrapped__ = _STOCK_PREPARE


def install_contract_check() -> None:
  """Wraps the stock engine's data loader preparation (idempotent).

  The wrapper checks the sampler contract for this package's accountants
  (`OpacusAccountant`) and passes every other accountant through untouched;
  `check_sampler_contract` can be called directly for Opacus' own.
  """
  PrivacyEngine._prepare_data_loader = _prepare_data_loader  # pylint: disable=protected-access
