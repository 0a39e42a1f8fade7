"""`--release sum`: the CLI accounts the sum-only release."""

import json
import subprocess
import sys

import pytest

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.cli import protocols


def _run(*arguments):
  return subprocess.run(
      [sys.executable, '-m', 'shuffle_accountants', *arguments],
      capture_output=True, text=True, cwd='/', check=False)


def test_epsilon_of_a_sum_equals_the_python_api():
  result = _run('epsilon', '--num-users', '5000', '--local-epsilon', '6',
                '--randomizer', 'sue', '--domain-size', '8', '--release',
                'sum', '--rounds', '3', '--delta', '1e-8', '--accountant',
                'pld', '--json')
  assert result.returncode == 0, result.stderr
  report = json.loads(result.stdout)
  accountant = ShufflePldAccountant().compose(events.SumOfReportsEvent(
      5000, randomizers.SymmetricUnaryEncoding(8, 6.0)), 3)
  assert report['certified']['epsilon'] == accountant.get_epsilon(1e-8)
  lower = report['lower_bound']
  assert lower['method'] == 'sum-configurations'
  assert 0 < lower['epsilon'] <= report['certified']['epsilon']


@pytest.mark.parametrize('fields,message', [
    (dict(randomizer='olh', domain_size=4), 'needs randomizer sue'),
    (dict(randomizer='oue', domain_size=4, checkin_rate=0.5),
     'every user every round'),
    (dict(num_categories=3, release='histogram'), 'release must be one of'),
])
def test_a_sum_of_other_reports_is_refused(fields, message):
  fields = dict(dict(release='sum'), **fields)
  with pytest.raises(ValueError, match=message):
    protocols.Protocol(num_users=100, local_epsilon=1.0, **fields)


def test_a_krr_sum_is_accounted_as_its_shuffle():
  event = protocols.Protocol(num_users=50, local_epsilon=1.0,
                             num_categories=3, release='sum').round_event()
  assert event.as_shuffle_event() == events.ShuffleEvent(
      50, randomizer=randomizers.KRandomizedResponse(3, 1.0))
