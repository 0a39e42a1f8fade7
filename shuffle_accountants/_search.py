"""Monotone searches: the package's one bisection.

Every search for the point where a monotone condition turns (the epsilon
at which a profile falls to delta, an optimal threshold) halves its bracket
here, so the arithmetic is the same everywhere: the middle is (low +
high) / 2 and the condition holds at `low`, fails at `high`. Callers
choose which end is sound for them (the upper end for an epsilon that must
not be too small, the lower end for a lower bound).
"""

import math
from typing import Callable, Tuple

__all__ = ['widened', 'bisected', 'whole_bisected']


def widened(holds: Callable[[float], bool], low: float, high: float,
            cap: float = math.inf) -> Tuple[float, float]:
  """(low, high) with `high` doubled (and `low` moved up to the old high)
  until the condition fails at `high` or `high` reaches `cap`."""
  while high < cap and holds(high):
    low, high = high, 2 * high
  return low, high


def bisected(holds: Callable[[float], bool], low: float, high: float,
             steps: int, relative_width: float = 0.0) -> Tuple[float, float]:
  """(low, high) after halving [low, high] `steps` times, or until
  high - low <= `relative_width` * high: `holds` true at low, false at high."""
  for _ in range(steps):
    middle = (low + high) / 2
    if holds(middle):
      low = middle
    else:
      high = middle
    if high - low <= relative_width * high:
      break
  return low, high


def whole_bisected(holds: Callable[[int], bool], good: int, bad: int
                   ) -> Tuple[int, int]:
  """(good, bad), neighbouring whole numbers, after halving the whole
  numbers between them: `holds` true at `good`, false at `bad` (either may
  be the larger)."""
  while abs(bad - good) > 1:
    middle = (good + bad) // 2
    if holds(middle):
      good = middle
    else:
      bad = middle
  return good, bad
