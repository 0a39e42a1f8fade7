"""The opt-in progress option of the PLD accountant."""

import io
import sys

import pytest

from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import _progress


def _ledger(accountant):
  for num_users in (1000, 2000, 4000):
    accountant.compose(ShuffleEvent(num_users, 1.0))
  return accountant


def test_callable_receives_every_round_of_each_phase():
  steps = []
  accountant = _ledger(ShufflePldAccountant(
      progress=lambda phase, done, total: steps.append((phase, done, total))))
  quiet = _ledger(ShufflePldAccountant()).get_epsilon(1e-6)
  assert accountant.get_epsilon(1e-6) == quiet
  assert [s for s in steps if s[0] == 'rounds'] == [
      ('rounds', i, 3) for i in (1, 2, 3)]
  assert [s for s in steps if s[0] == 'choosing the grid'] == [
      ('choosing the grid', i, 3) for i in (1, 2, 3)]


def test_true_writes_to_stderr_only_after_the_delay(monkeypatch):
  stderr = io.StringIO()
  monkeypatch.setattr(sys, 'stderr', stderr)
  _ledger(ShufflePldAccountant(progress=True)).get_epsilon(1e-6)
  assert stderr.getvalue() == ''  # a short call stays silent
  monkeypatch.setattr(_progress, 'DELAY', 0.0)
  _ledger(ShufflePldAccountant(progress=True)).get_epsilon(1e-6)
  assert 'rounds 3/3\n' in stderr.getvalue()


def test_default_is_silent(capsys):
  _ledger(ShufflePldAccountant()).get_epsilon(1e-6)
  assert capsys.readouterr().err == ''


def test_invalid_option_names_the_parameter():
  with pytest.raises(TypeError, match='progress'):
    ShufflePldAccountant(progress='yes')
