"""A least-recently-used cache within a budget (not a bound: speed only)."""

import collections
from typing import Any, Callable, Hashable


class Lru:
  """Keeps the most recently used values whose summed sizes fit a budget.

  Rounds with nearby parameters (daily rounds, an accountant rebuilt after
  every epoch) need the same intermediate results again; a value larger
  than the whole budget is computed but not kept.
  """

  def __init__(self, capacity: float, size_of: Callable[[Any], float]):
    self._capacity = capacity
    self._size_of = size_of
    self._size = 0.0
    self._entries = collections.OrderedDict()

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
    """Forgets every value (benchmarks start cold with it)."""
    self._entries.clear()
    self._size = 0.0
