"""Least-recently-used caches bounded in bytes (speed only, not a bound).

Every cache of the library registers here, so that `clear_caches()` empties
them all (the public `shuffle_accountants.clear_caches`) and
`cache_bytes()` reports what they hold.
"""

import collections
import functools
from typing import Any, Callable, Dict, Hashable, List

_REGISTRY: List['Lru'] = []


class Lru:
  """Keeps the most recently used values whose summed sizes fit a budget.

  Rounds with nearby parameters (daily rounds, an accountant rebuilt after
  every epoch) need the same intermediate results again; a value larger
  than the whole budget is computed but not kept.
  """

  def __init__(self, capacity: float, size_of: Callable[[Any], float],
               name: str = ''):
    self._capacity = capacity
    self._size_of = size_of
    self._size = 0.0
    self._entries: collections.OrderedDict[Hashable, Any] = (
        collections.OrderedDict())
    self.name = name
    _REGISTRY.append(self)

  @property
  def size(self) -> float:
    """Bytes held (as counted by `size_of`)."""
    return self._size

  def __contains__(self, key: Hashable) -> bool:
    return key in self._entries

  def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
    """The value for `key`, computed by `compute()` if not kept."""
    if key in self._entries:
      self._entries.move_to_end(key)
      return self._entries[key]
    value = compute()
    size = self._size_of(value)
    if size <= self._capacity:
      self._entries[key] = value
      self._size += size
      while self._size > self._capacity:
        _, evicted = self._entries.popitem(last=False)
        self._size -= self._size_of(evicted)
    return value

  def clear(self) -> None:
    """Forgets every value."""
    self._entries.clear()
    self._size = 0.0


def cached(capacity: float, size_of: Callable[[Any], float]):
  """Decorator: memoizes a function of hashable arguments in an `Lru`.

  The wrapper has `cache_clear()` like `functools.lru_cache`, and
  `holds(*args, **kwargs)`: whether the value of those arguments is kept.
  """
  def decorate(function):
    cache = Lru(capacity, size_of, f'{function.__module__}.{function.__name__}')

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
      key = (args, tuple(sorted(kwargs.items())))
      return cache.get(key, lambda: function(*args, **kwargs))

    wrapper.cache_clear = cache.clear
    wrapper.holds = lambda *args, **kwargs: (
        args, tuple(sorted(kwargs.items()))) in cache
    wrapper.cache = cache
    return wrapper
  return decorate


def clear_caches() -> None:
  """Empties every cache of the library (memory is returned to Python)."""
  for cache in _REGISTRY:
    cache.clear()


def cache_bytes() -> Dict[str, float]:
  """Bytes held by each byte-bounded cache, by name."""
  return {cache.name: cache.size for cache in _REGISTRY}


def atoms_bytes(value) -> int:
  """Bytes of an array, of the arrays of a PLD (atoms or grid PMF), or of
  a tuple of them or of (name, PLD) pairs; other values count nothing."""
  if hasattr(value, 'nbytes'):  # an array (numpy not imported here)
    return value.nbytes
  if isinstance(value, tuple):
    return sum(atoms_bytes(item) for item in value)
  return sum(getattr(value, field).nbytes
             for field in ('losses', 'masses', 'probs')
             if hasattr(value, field))
