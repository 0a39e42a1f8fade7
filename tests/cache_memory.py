"""Varied accounting calls, then `clear_caches()`: what memory stays held.

Run as a script in a fresh interpreter (so other tests' objects do not
count); prints one JSON object. A first pass imports every module and
fills every cache; after `clear_caches()` tracemalloc's count (Python
objects and numpy arrays) is the baseline. A second pass with other
parameters and `clear_caches()` again must return to that baseline: a
cache that `clear_caches()` misses keeps the second pass's arrays.
"""

import functools
import gc
import json
import sys
import tracemalloc

from dp_accounting import dp_event
from dp_accounting import privacy_accountant

import shuffle_accountants
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.samplers import RandomAllocationDpEvent
from shuffle_accountants.samplers import random_allocation

_ADD_OR_REMOVE = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE


def _ledger(shift: int):
  """Rounds of every kind, their parameters moved by `shift`."""
  n = 100 + 7 * shift
  epsilon = 1.0 + 0.125 * shift
  return [
      events.ShuffleEvent(n, epsilon),
      events.ShuffleEvent(n, randomizer=randomizers.KRandomizedResponse(
          8, epsilon)),
      events.ShuffleEvent(n, randomizer=randomizers.OptimizedUnaryEncoding(
          16, epsilon)),
      events.ShuffleEvent(n, randomizer=randomizers.LaplaceRandomizer(
          epsilon, randomized_rounding=True)),
      # d = 2: the GAUSS-NO-GAIN pair alone (the d = 1 blanket takes seconds;
      # the Laplace randomizer above fills the blanket's caches).
      events.ShuffleEvent(n, randomizer=randomizers.GaussianRandomizer(
          4.0 + shift, dimension=2)),
      events.CheckInEvent(n, 0.5, local_epsilon=epsilon),
      events.DistributedCheckInEvent(n, 0.5, noise_multiplier=1.0 + shift),
      events.SubsampledShuffleGaussianEvent(n, n // 2, 2.0 + shift),
  ]


def _calls(shift: int) -> None:
  ledger = _ledger(shift)
  for accountant_class in (shuffle_accountants.ShuffleRdpAccountant,
                           shuffle_accountants.ShufflePldAccountant):
    for event in ledger:
      accountant = accountant_class()
      if accountant.supports(event):
        accountant.compose(event, 3 + shift)
        accountant.get_epsilon(1e-6)
    mixed = accountant_class()
    mixed.compose(dp_event.ComposedDpEvent(
        [e for e in ledger if mixed.supports(e)]), 2)
    mixed.get_epsilon(1e-6)
  if random_allocation.is_available():
    allocated = shuffle_accountants.ShufflePldAccountant(_ADD_OR_REMOVE)
    allocated.compose(RandomAllocationDpEvent(
        dp_event.GaussianDpEvent(2.0 + shift), 1, 10 + shift), 2)
    allocated.get_epsilon(1e-6)
    random_allocation.epsilon_lower_bound(2.0 + shift, 1, 10 + shift, 2, 1e-6)


def _filled_functools_caches():
  """Names of the package's functools caches that hold anything."""
  filled = []
  for name, module in list(sys.modules.items()):
    if not name.startswith('shuffle_accountants'):
      continue
    for attribute, value in vars(module).items():
      values = [(attribute, value)]
      if isinstance(value, type):
        values += [(f'{attribute}.{key}', item)
                   for key, item in vars(value).items()]
      filled += [f'{name}.{key}' for key, item in values
                 if isinstance(item, functools._lru_cache_wrapper)
                 and item.cache_info().currsize]
  return sorted(set(filled))


def _held_after_clearing() -> int:
  shuffle_accountants.clear_caches()
  gc.collect()
  return tracemalloc.get_traced_memory()[0]


def main():
  tracemalloc.start()
  _calls(0)
  baseline = _held_after_clearing()
  _calls(1)
  held = _held_after_clearing()
  print(json.dumps(dict(
      held_bytes=held - baseline,
      cache_bytes=sum(shuffle_accountants.cache_bytes().values()),
      filled_functools_caches=_filled_functools_caches(),
      random_allocation=random_allocation.is_available())))


if __name__ == '__main__':
  main()
