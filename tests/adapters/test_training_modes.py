"""examples/training_modes.py runs (quick mode), and docs/training.md shows the
table its full run prints."""

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip('torch')
pytest.importorskip('opacus')
pytest.importorskip('sklearn')

ROOT = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir)
EXAMPLE = os.path.join(ROOT, 'examples', 'training_modes.py')
PAGE = os.path.join(ROOT, 'docs', 'training.md')
CENTRAL, LOCAL_SAME_SIGMA, LOCAL_EQUAL_NOISE, DISTRIBUTED, HIDDEN = (
    'central DP-SGD', '"shuffle_checkin", s = σ',
    '"shuffle_checkin", s = σ/√(qn)',
    '"distributed_checkin" (participants revealed, default)',
    '"distributed_checkin", participation="hidden"')
# Columns after the label: trusted, per participant, update formula, noise at
# k = q·n, replace-one ε, add/remove ε, accuracy.
NOISE, REPLACE_ONE, ADD_REMOVE, ACCURACY = 3, 4, 5, 6


def _rows(text):
  """The markdown table's data rows, by mode label."""
  rows = {}
  for line in text.splitlines():
    cells = [cell.strip() for cell in line.strip().strip('|').split('|')]
    if line.startswith('| ') and cells[0] not in ('mode', '---'):
      rows[cells[0]] = cells[1:]
  return rows


def _number(cell):
  return float(re.sub(r'·C$', '', cell))


def _run(*flags):
  result = subprocess.run([sys.executable, EXAMPLE, *flags],
                          capture_output=True, text=True, check=False,
                          cwd=os.path.dirname(EXAMPLE))
  assert result.returncode == 0, result.stderr
  return result.stdout


def test_quick_run_compares_the_modes_at_equal_update_noise():
  rows = _rows(_run('--quick'))
  assert set(rows) == {CENTRAL, LOCAL_SAME_SIGMA, LOCAL_EQUAL_NOISE,
                       DISTRIBUTED, HIDDEN}
  # σ = 1.5 and q·n = 119.75: equal noise in the update, except local noise
  # at s = σ, which carries √(q·n) times more.
  for label in (CENTRAL, LOCAL_EQUAL_NOISE, DISTRIBUTED, HIDDEN):
    assert _number(rows[label][NOISE]) == pytest.approx(1.5, rel=1e-3)
  assert _number(rows[LOCAL_SAME_SIGMA][NOISE]) == pytest.approx(
      1.5 * 119.75**0.5, rel=1e-2)
  # Local noise at equal update noise is the same training as distributed
  # check-in (same per-participant noise, same seed), at a far larger ε.
  assert rows[LOCAL_EQUAL_NOISE][ACCURACY] == rows[DISTRIBUTED][ACCURACY]
  # Hiding who took part changes the accounting, not the training.
  assert rows[HIDDEN][ACCURACY] == rows[DISTRIBUTED][ACCURACY]
  replace_one = {label: _number(row[REPLACE_ONE])
                 for label, row in rows.items()}
  assert (replace_one[CENTRAL] < replace_one[HIDDEN] < replace_one[DISTRIBUTED]
          < replace_one[LOCAL_EQUAL_NOISE])
  assert rows[CENTRAL][ADD_REMOVE] != '—'


@pytest.mark.slow
def test_training_page_shows_the_full_run():
  # Tolerances stated on the page: ε 1 % relative, accuracy 0.02 absolute.
  printed = _rows(_run())
  with open(PAGE, encoding='utf-8') as page:
    # The page has other tables: only the one the script prints.
    marked = page.read().split('<!-- table: training.modes -->')[1]
    shown = _rows(marked.split('<!-- /table -->')[0])
  assert set(shown) == set(printed)
  for label, row in printed.items():
    assert shown[label][:NOISE + 1] == row[:NOISE + 1]
    for column in (REPLACE_ONE, ADD_REMOVE):
      if row[column] == '—':
        assert shown[label][column] == '—'
      else:
        assert _number(shown[label][column]) == pytest.approx(
            _number(row[column]), rel=0.01)
    assert _number(shown[label][ACCURACY]) == pytest.approx(
        _number(row[ACCURACY]), abs=0.02)
