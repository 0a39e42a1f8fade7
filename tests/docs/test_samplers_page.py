"""docs/samplers.md: its table is what benchmarks/samplers.py computes, and the
digits example runs.

The whole table (random allocation too) is rerun by tests/docs/test_numbers.py
in the slow run (key samplers.table).
"""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir,
                                    os.pardir))


def _script():
  spec = importlib.util.spec_from_file_location(
      'samplers_benchmark', os.path.join(ROOT, 'benchmarks', 'samplers.py'))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def _rows(table):
  return [[cell.strip() for cell in line.strip('|').split('|')]
          for line in table.strip().splitlines()[2:]]


def _page_table():
  page = open(os.path.join(ROOT, 'docs', 'samplers.md'), encoding='utf-8')
  with page:
    return re.search(r'<!-- table: samplers.table -->\n(.*?)<!-- /table -->',
                     page.read(), re.S).group(1)


def test_table_poisson_and_shuffled_columns_are_rerun():
  page = _rows(_page_table())
  fresh = _rows(_script().table(('poisson', 'shuffled')))
  assert len(page) == len(fresh) == 6
  for documented, computed in zip(page, fresh):
    assert documented[:3] == computed[:3]
    assert documented[5:] == computed[5:]


def test_table_states_the_issue_numbers():
  rows = {(row[0], row[1]): row for row in _rows(_page_table())}
  poisson, upper, lower, shuffled_lower, shuffled_upper = rows['1', '1'][2:]
  assert (poisson, shuffled_lower, shuffled_upper) == ('0.186', '3.724',
                                                        '4.887')
  assert float(lower) <= 0.1757 and float(upper) <= 1.01 * 0.1757
  for (sigma, epochs), row in rows.items():
    values = [float(cell) for cell in row[2:]]
    assert values[2] <= values[1] and values[3] <= values[4]
    if float(sigma) <= 1 and epochs == '1':  # below Poisson there
      assert values[1] < values[0]


@pytest.mark.slow
def test_digits_example_runs_quickly(tmp_path):
  pytest.importorskip('opacus')
  pytest.importorskip('sklearn')
  pytest.importorskip('PLD_accounting')
  result = subprocess.run(
      [sys.executable, os.path.join(ROOT, 'examples', 'samplers_digits.py'),
       '--quick'], cwd=tmp_path, capture_output=True, text=True, check=False)
  assert result.returncode == 0, result.stderr
  for sampler in ('Poisson', 'random allocation', 'shuffled batches'):
    line = next(text for text in result.stdout.splitlines()
                if text.startswith(sampler))
    accuracy = float(re.findall(r'\d+\.\d+', line)[0])
    assert 0.5 < accuracy <= 1
  assert re.search(r'lower bound \d', result.stdout)


def test_page_explains_the_lower_bounds_plateau():
  from shuffle_accountants.samplers import shuffled_batches
  page = open(os.path.join(ROOT, 'docs', 'samplers.md'),
              encoding='utf-8').read()
  cap = shuffled_batches.LOWER_BOUND_MAX_EPOCHS
  marked = re.search(r'<!-- value: samplers.plateau_epochs -->(\d+)', page)
  assert marked and int(marked.group(1)) == cap
  assert 'LOWER_BOUND_MAX_EPOCHS' in page
  at_cap = shuffled_batches.shuffled_batches_epsilon(1.0, 1000, cap, 1e-6)
  beyond = shuffled_batches.shuffled_batches_epsilon(1.0, 1000, 100, 1e-6)
  assert beyond.lower == at_cap.lower and beyond.upper > at_cap.upper
