"""Types: the package is typed (py.typed) and mypy accepts its public API
(issue 24)."""

import os
import pathlib
import subprocess
import sys

import pytest

import shuffle_accountants

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = pathlib.Path(shuffle_accountants.__file__).parent

USER_SCRIPT = '''
import dp_accounting
from shuffle_accountants import (CheckInEvent, ShuffleEvent,
                                 ShufflePldAccountant, ShuffleRdpAccountant)
from shuffle_accountants import calibration, reference
from shuffle_accountants.randomizers import OptimizedUnaryEncoding

accountant = ShufflePldAccountant()
accountant.compose(ShuffleEvent(num_users=10**6, local_epsilon=1.0), 1000)
epsilon: float = accountant.get_epsilon(1e-6)
rdp = ShuffleRdpAccountant()
rdp.compose(CheckInEvent(num_users=1000, checkin_rate=0.1, local_epsilon=1.0))
event = ShuffleEvent(10**4, randomizer=OptimizedUnaryEncoding(100, 1.0))
local_epsilon: float = calibration.calibrate_local_epsilon(
    num_users=10**6, rounds=1000, target_epsilon=1.0, target_delta=1e-6)
rounds: int = calibration.calibrate_rounds(event, 1.0, 1e-6)
status: str = reference.entry('POISSON-UNSOUND').status
hidden = dp_accounting.SampledWithoutReplacementDpEvent(
    100, 10, ShuffleEvent(10, 1.0))
'''


def test_the_package_is_marked_typed():
  assert (PACKAGE / 'py.typed').is_file()
  assert '"py.typed"' in (ROOT / 'pyproject.toml').read_text()


def _mypy(*arguments, cwd=ROOT, env=None):
  pytest.importorskip('mypy')
  return subprocess.run([sys.executable, '-m', 'mypy', '--no-incremental',
                         '--cache-dir', os.devnull, *arguments],
                        capture_output=True, text=True, cwd=cwd, env=env,
                        timeout=600, check=False)


def test_mypy_accepts_the_public_modules():
  result = _mypy()  # the files and settings of pyproject.toml
  assert result.returncode == 0, result.stdout


def test_mypy_checks_a_user_script_against_the_api(tmp_path):
  (tmp_path / 'good.py').write_text(USER_SCRIPT)
  (tmp_path / 'bad.py').write_text(
      USER_SCRIPT + 'wrong: str = accountant.get_epsilon(1e-6)\n')
  environment = dict(os.environ, MYPYPATH=str(ROOT))
  options = ('--config-file', str(ROOT / 'pyproject.toml'))
  good = _mypy(*options, 'good.py', cwd=tmp_path, env=environment)
  assert good.returncode == 0, good.stdout
  bad = _mypy(*options, 'bad.py', cwd=tmp_path, env=environment)
  wrong_line = len(USER_SCRIPT.splitlines()) + 1
  assert bad.returncode == 1, bad.stdout
  assert f'bad.py:{wrong_line}: error: Incompatible types' in bad.stdout
