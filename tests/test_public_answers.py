"""The recorder of public answers (benchmarks/public_answers.py, issue 52)."""

import math

import benchmark_scripts

public_answers = benchmark_scripts.load('public_answers')


def test_every_registered_event_is_in_the_battery():
  from shuffle_accountants.core import _event_specs
  battery = {type(build()) for _, build in public_answers.BATTERY}
  missing = [spec.__name__ for spec in _event_specs._SPECS
             if spec not in battery]
  assert not missing


def test_a_record_is_repeatable_and_answers_every_query():
  first = public_answers.record(('shuffle', 'discrete_laplace_sum'))
  assert len(first) == 2 * 2 * 2 * 4  # events, counts, routes, queries
  assert all(isinstance(answer, float) and not math.isnan(answer)
             for answer in first.values())
  assert public_answers.record(('shuffle', 'discrete_laplace_sum')) == first


def test_the_diff_sorts_every_moved_answer():
  old = {'a': 1.0, 'b': 2.0, 'c': 3.0, 'd': 'refused: TypeError', 'e': 0.5}
  new = {'a': 1.0, 'b': 1.5, 'c': 3.5, 'd': 4.0}
  counts, moved = public_answers.diff(old, new)
  assert counts == {'same': 1, 'lower': 1, 'higher': 1, 'other': 2}
  assert [(key, change) for key, _, _, change in moved] == [
      ('b', 'lower 0.750000000'), ('c', 'higher 1.166666667'),
      ('d', 'other'), ('e', 'other')]
