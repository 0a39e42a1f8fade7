"""--json is standard JSON at extreme delta (issue 48): no NaN/Infinity."""

import json
import math

import pytest

from shuffle_accountants import _json
from shuffle_accountants.cli import main


def _refuse(token):
  raise ValueError(f'non-standard JSON token {token}')


def _strict(capsys, *arguments):
  assert main.main([*arguments, '--json']) == 0
  return json.loads(capsys.readouterr().out, parse_constant=_refuse)


PROTOCOL = ('--num-users', '1000', '--local-epsilon', '1', '--delta',
            '1e-300')


@pytest.mark.parametrize('arguments', [
    ('epsilon', *PROTOCOL, '--accountant', 'rdp'),
    ('compare', *PROTOCOL, '--num-users', '1000000', '--rounds', '10',
     '--methods', 'pld,fmt21-closed,binary-rr-pair'),
    ('calibrate', *PROTOCOL, '--solve', 'rounds', '--target-epsilon', '3'),
    ('reference', 'GIRGIS-UB1'),
])
def test_every_subcommand_writes_standard_json(capsys, arguments):
  report = _strict(capsys, *arguments)
  assert report


@pytest.mark.slow
def test_plot_writes_standard_json(capsys, tmp_path):
  pytest.importorskip('matplotlib')
  report = _strict(capsys, 'plot', *PROTOCOL, '--x', 'rounds', '--values',
                   '1,2', '--output', str(tmp_path / 'p.png'))
  assert report['values'] == [1, 2]


def test_non_finite_values_become_null_with_a_reason():
  text = _json.dumps({'epsilon': math.inf, 'series': [1.0, math.nan],
                      'nested': [{'delta': -math.inf}]})
  report = json.loads(text, parse_constant=_refuse)
  assert report['epsilon'] is None and report['series'] == [1.0, None]
  assert 'epsilon was +infinity' in report['reason']
  assert 'series[1] was not a number' in report['reason']
  assert report['nested'][0] == {'delta': None,
                                 'reason': 'delta was -infinity'}


@pytest.mark.parametrize('arguments,status,message', [
    (('epsilon', '--num-users', '-1', '--local-epsilon', '1'), 2,
     '--num-users must be a whole number in [1, 1e+10]; got -1.'),
    (('epsilon', '--num-users', '10', '--local-epsilon', '1', '--zz', '2'),
     2, 'unrecognized arguments: --zz 2'),
    (('calibrate', '--num-users', '10', '--local-epsilon', '1',
      '--target-epsilon', '1e-6', '--solve', 'rounds'), 1, ''),
])
def test_a_failure_with_json_is_also_a_json_object(capsys, arguments, status,
                                                   message):
  assert main.main([*arguments, '--json']) == status
  captured = capsys.readouterr()
  report = json.loads(captured.out, parse_constant=_refuse)
  assert report['exit_status'] == status
  assert message in report['error']
  assert captured.err == f'shuffle-accountant: error: {report["error"]}\n'
