"""The package's one bisection (shuffle_accountants._search)."""

import math

from shuffle_accountants import _search


def test_bisection_brackets_the_turning_point():
  low, high = _search.bisected(lambda x: x * x < 2, 0.0, 2.0, 60)
  assert low < math.sqrt(2) <= high
  assert high - low <= 2 * math.ulp(high)  # halved to adjacent doubles


def test_relative_width_stops_early():
  calls = []

  def below(x):
    calls.append(x)
    return x < 1.0

  low, high = _search.bisected(below, 0.0, 4.0, 100, relative_width=1e-3)
  assert low < 1.0 <= high and high - low <= 1e-3 * high
  assert len(calls) < 20


def test_widening_doubles_until_the_condition_fails_or_the_cap():
  assert _search.widened(lambda x: x < 5, 0.0, 1.0) == (4.0, 8.0)
  assert _search.widened(lambda x: True, 0.0, 1.0, cap=10.0) == (8.0, 16.0)
  assert _search.widened(lambda x: False, 0.0, 1.0) == (0.0, 1.0)


def test_whole_bisection_ends_on_neighbours_in_either_order():
  # The smallest batch meeting a target (good above bad) and the largest
  # grid offset still above delta (good below bad) share it.
  assert _search.whole_bisected(lambda n: n >= 137, 10**6, 1) == (137, 136)
  assert _search.whole_bisected(lambda k: k <= 41, 0, 1000) == (41, 42)
  calls = []
  assert _search.whole_bisected(lambda k: calls.append(k) or True,
                                5, 6) == (5, 6)
  assert calls == []  # already neighbours: nothing asked
