"""`--noise binomial|discrete-gaussian`: the CLI accounts a noisy integer
sum."""

import json

import pytest

from shuffle_accountants import BinomialSecureSumEvent
from shuffle_accountants import DiscreteGaussianSumEvent
from shuffle_accountants import DiscreteLaplaceSumEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants.cli import main
from shuffle_accountants.cli import noise


def _json(capsys, *arguments):
  assert main.main([*arguments, '--json']) == 0, capsys.readouterr().err
  return json.loads(capsys.readouterr().out)


def test_binomial_epsilon_equals_the_python_api(capsys):
  report = _json(capsys, 'epsilon', '--noise', 'binomial', '--num-trials',
                 '500', '--dimension', '3', '--delta', '1e-6')
  accountant = ShufflePldAccountant().compose(BinomialSecureSumEvent(500), 3)
  assert report['certified'] == dict(
      epsilon=accountant.get_epsilon(1e-6), accountant='pld')


def test_all_honest_aggregators_and_calibrate(capsys):
  report = _json(capsys, 'epsilon', '--noise', 'discrete-gaussian',
                 '--sigma', '4', '--aggregators', '2', '--trust',
                 'all-honest', '--delta', '1e-9', '--accountant', 'pld')
  event = DiscreteGaussianSumEvent(4.0, num_aggregators=2, trust='all-honest')
  assert report['certified']['epsilon'] == ShufflePldAccountant().compose(
      event).get_epsilon(1e-9)
  solved = _json(capsys, 'calibrate', '--solve', 'num-trials', '--noise',
                 'binomial', '--target-epsilon', '1', '--delta', '1e-5',
                 '--accountant', 'pld')
  assert solved['value'] == 62 and solved['certified']['epsilon'] <= 1


def test_discrete_laplace_equals_the_python_api(capsys):
  report = _json(capsys, 'epsilon', '--noise', 'discrete-laplace', '--scale',
                 '2', '--aggregators', '2', '--trust', 'all-honest',
                 '--dimension', '3', '--delta', '1e-6', '--accountant', 'pld')
  event = DiscreteLaplaceSumEvent(2.0, num_aggregators=2, trust='all-honest')
  assert report['certified']['epsilon'] == ShufflePldAccountant().compose(
      event, 3).get_epsilon(1e-6)


@pytest.mark.parametrize('arguments,status,message', [
    (('epsilon', '--noise', 'binomial', '--delta', '1e-5'), 2,
     'needs --num-trials'),
    (('epsilon', '--noise', 'binomial', '--num-trials', '9', '--sigma', '2',
      '--delta', '1e-5'), 2, '--sigma does not describe'),
    (('epsilon', '--noise', 'binomial', '--num-trials', '9'), 2,
     'give --delta'),
    (('epsilon', '--noise', 'binomial', '--num-trials', '9',
      '--local-epsilon', '1', '--delta', '1e-5'), 2, 'on its own'),
    (('epsilon', '--noise', 'binomial', '--num-trials', '0', '--delta',
      '1e-5'), 2, 'in [1, 1e+10]'),
    (('epsilon', '--local-epsilon', '1'), 2, 'required: --num-users'),
    # Flags that would have been ignored.
    (('epsilon', '--noise', 'discrete-gaussian', '--sigma', '5', '--delta',
      '1e-9', '--num-users', '1000'), 2, '--num-users=1000 counts the '
     'clients'),
    (('epsilon', '--local-epsilon', '1', '--num-users', '1000',
      '--aggregators', '2'), 2, '--aggregators describes the noise'),
    (('epsilon', '--noise', 'binomial', '--num-trials', '9', '--trust',
      'all-honest', '--delta', '1e-5'), 2, '--trust describes the '
     'aggregators'),
    (('calibrate', '--solve', 'num-trials', '--target-epsilon', '1',
      '--delta', '1e-5'), 2, '--solve num-trials needs --noise'),
    (('calibrate', '--solve', 'sigma', '--noise', 'binomial',
      '--target-epsilon', '1', '--delta', '1e-5'), 2, 'does not describe'),
    (('calibrate', '--solve', 'num-trials', '--noise', 'binomial',
      '--target-epsilon', '1e-6', '--delta', '1e-12', '--accountant', 'pld'),
     1, 'impossible'),
])
def test_bad_requests_answer_in_one_line(capsys, arguments, status, message):
  assert main.main(list(arguments)) == status
  error = capsys.readouterr().err
  assert message in error and 'Traceback' not in error


def test_a_solved_value_is_printed_on_its_certified_side(capsys):
  # A new user's trial: 5,796,093,091 coin flips printed as 5.79609e+09,
  # and 1,995,542 users as 1.99554e+06, fewer than certified.
  assert main.main(['calibrate', '--solve', 'num-trials', '--noise',
                    'binomial', '--target-epsilon', '1e-3', '--delta',
                    '1e-5', '--accountant', 'pld']) == 0
  text = capsys.readouterr().out
  solved = _json(capsys, 'calibrate', '--solve', 'num-trials', '--noise',
                 'binomial', '--target-epsilon', '1e-3', '--delta', '1e-5',
                 '--accountant', 'pld')
  assert solved['value'] > 10**6
  assert f': {solved["value"]}\n' in text
  assert noise.solved_text(5796093091, larger_meets=True) == '5796093091'
  assert noise.solved_text(5.511912345, larger_meets=True) == '5.51192'
  assert noise.solved_text(3.440129, larger_meets=False) == '3.44012'
  assert noise.solved_text(1.23456789e-4, larger_meets=False) == '0.000123456'


@pytest.mark.parametrize('noise,size', [('discrete-laplace', '--scale'),
                                        ('discrete-gaussian', '--sigma')])
def test_the_relation_asked_for_is_the_one_named(capsys, noise, size):
  # A new user's trial: --relation deletion was reported as REPLACE_ONE.
  reports = {relation: _json(capsys, 'epsilon', '--noise', noise, size, '5',
                             '--delta', '1e-9', '--relation', relation)
             for relation in ('replace-one', 'deletion')}
  assert reports['replace-one']['relation'] == 'REPLACE_ONE'
  assert reports['deletion']['relation'] == 'REPLACE_SPECIAL'
  # The change of the sum is the same under both: one number.
  assert (reports['deletion']['certified']
          == reports['replace-one']['certified'])
  assert main.main(['epsilon', '--noise', noise, size, '5', '--delta',
                    '1e-9', '--relation', 'deletion']) == 0
  assert '(deletion:' in capsys.readouterr().out
