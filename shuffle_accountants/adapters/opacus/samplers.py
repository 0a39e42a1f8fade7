"""Batch samplers and the sampler <-> accountant contract for Opacus.

`check_sampler_contract` is what `make_private` checks for this package's
accountants (`engine.prepare_data_loader`): Poisson sampling with the
check-in accountants ("shuffle_checkin", ...), a shuffled or sequential
DataLoader only with "shuffled_batches", a `RandomAllocationSampler` only
with "random_allocation"; any other sampler (weighted, with replacement,
custom batch samplers) stops with an error that names the fix. Opacus' own
accountants ("rdp", "prv", "gdp") keep Opacus' behaviour; call
`check_sampler_contract(engine.accountant, data_loader, poisson_sampling=...,
distributed=False)` before `make_private` for the same check with them.
"""

from typing import Optional

from opacus.accountants import IAccountant
from opacus.utils.uniform_sampler import (
  DistributedUniformWithReplacementSampler,
)
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
import torch
from torch.utils import data as torch_data

from shuffle_accountants import _validation

RANDOM_ALLOCATION = 'random_allocation'
SHUFFLED_BATCHES = 'shuffled_batches'

_FIXES = (
    'keep poisson_sampling=True with a Poisson accountant ("rdp", "prv", '
    '"gdp", ...); or pass poisson_sampling=False with '
    'accountant="shuffled_batches" and a DataLoader(dataset, '
    'batch_size=..., shuffle=True); or with accountant="random_allocation" '
    'and DataLoader(dataset, batch_sampler=RandomAllocationSampler('
    'len(dataset), num_steps)) (shuffle_accountants.adapters.opacus)')


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


class EpochCounter(torch_data.Sampler):
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
  if isinstance(batch_sampler, EpochCounter):
    batch_sampler = batch_sampler.batch_sampler
  if isinstance(batch_sampler, (UniformWithReplacementSampler,
                                DistributedUniformWithReplacementSampler)):
    return 'poisson'
  if isinstance(batch_sampler, RandomAllocationSampler):
    return 'random_allocation'
  if type(batch_sampler) is torch_data.BatchSampler:
    sampler = batch_sampler.sampler
    if type(sampler) is torch_data.SequentialSampler:
      return 'sequential'
    if (type(sampler) is torch_data.RandomSampler
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

