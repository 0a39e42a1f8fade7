"""The linter as part of the tests, so that `pytest` is the one test command.

`ruff check` with pyproject's [tool.ruff] over every tree CI lints; skipped
where ruff is not installed (the `test` extra installs the pinned version).
"""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
LINTED = ('shuffle_accountants', 'tests', 'tools', 'benchmarks', 'examples')


def test_ruff_check_passes():
  pytest.importorskip('ruff')
  result = subprocess.run(
      [sys.executable, '-m', 'ruff', 'check', '--no-cache', *LINTED],
      capture_output=True, text=True, cwd=ROOT, check=False, timeout=300)
  assert result.returncode == 0, result.stdout + result.stderr
