"""calibrate_num_users: the smallest batch, its neighbours certified."""

import json

from dp_accounting import NeighboringRelation
import pytest

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import calibration
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.cli import main

DELETION = NeighboringRelation.REPLACE_SPECIAL


def _certified(event, relation, rounds=1, delta=1e-6,
               accountant=ShufflePldAccountant):
  return accountant(neighboring_relation=relation).compose(
      event, rounds).get_epsilon(delta)


def test_generic_shuffle_batch_meets_and_one_fewer_fails():
  n = calibration.calibrate_num_users(1.0, 1e-6, local_epsilon=2.0,
                                      rounds=4)
  relation = NeighboringRelation.REPLACE_ONE
  at = lambda users: _certified(events.ShuffleEvent(users, 2.0), relation, 4)
  assert at(n) <= 1.0 < at(n - 1)
  # BATCH-MONOTONE holds for the certificate on this stretch, checked.
  stretch = [at(users) for users in (n // 4, n // 2, n, 2 * n, 8 * n)]
  assert stretch == sorted(stretch, reverse=True)


@pytest.mark.slow
@pytest.mark.parametrize('accountant', [ShufflePldAccountant])
def test_sum_under_deletion_batch_meets_and_one_fewer_fails(accountant):
  randomizer = randomizers.OptimizedUnaryEncoding(4, 4.0)
  n = calibration.calibrate_num_users(
      1.5, 1e-6, randomizer, release='sum', relation=DELETION,
      make_fresh_accountant=accountant)
  at = lambda users: _certified(events.SumOfReportsEvent(users, randomizer),
                                DELETION, accountant=accountant)
  assert at(n) <= 1.5 < at(n - 1)
  replace_one = calibration.calibrate_num_users(
      1.5, 1e-6, randomizer, release='sum',
      make_fresh_accountant=accountant)
  assert n < replace_one  # deletion changes one coordinate, not two


def test_one_user_can_suffice():
  assert calibration.calibrate_num_users(3.0, 1e-6, local_epsilon=1.0) == 1


def test_unreachable_target_names_it_and_the_smallest_epsilon():
  with pytest.raises(calibration.UnreachableTargetError,
                     match=r'target_epsilon=0\.01 is unreachable: even '
                     r'num_users=2000 .*certifies epsilon [0-9.]+'):
    calibration.calibrate_num_users(0.01, 1e-6, local_epsilon=3.0,
                                    max_num_users=2000)


def test_invalid_arguments_name_the_parameter():
  with pytest.raises(ValueError, match='release must be one of'):
    calibration.calibrate_num_users(1.0, 1e-6, local_epsilon=1.0,
                                    release='histogram')
  with pytest.raises(ValueError, match="release='sum' needs a randomizer"):
    calibration.calibrate_num_users(1.0, 1e-6, release='sum')
  with pytest.raises(ValueError, match='max_num_users'):
    calibration.calibrate_num_users(1.0, 1e-6, local_epsilon=1.0,
                                    max_num_users=1)
  with pytest.raises(ValueError, match='make them equal'):
    calibration.calibrate_num_users(
        1.0, 1e-6, local_epsilon=1.0, relation=DELETION,
        make_fresh_accountant=lambda: ShufflePldAccountant())
  with pytest.raises(TypeError, match='relation must be'):
    calibration.calibrate_num_users(1.0, 1e-6, local_epsilon=1.0,
                                    relation='deletion')


@pytest.mark.slow
def test_largest_local_epsilon_of_a_sum_under_deletion():
  randomizer = randomizers.SymmetricUnaryEncoding(4, 1.0)
  eps0 = calibration.calibrate_local_epsilon(
      1.0, 1e-6, 2000, release='sum', randomizer=randomizer,
      relation=DELETION)
  event = lambda e: events.SumOfReportsEvent(
      2000, randomizers.SymmetricUnaryEncoding(4, e))
  assert 0.99 <= _certified(event(eps0), DELETION) <= 1.0
  replace_one = calibration.calibrate_local_epsilon(
      1.0, 1e-6, 2000, release='sum', randomizer=randomizer)
  assert replace_one < eps0


def _cli(capsys, *arguments):
  status = main.main(list(arguments))
  captured = capsys.readouterr()
  return status, captured.out, captured.err


def test_cli_solves_num_users_under_deletion_and_names_the_relation(capsys):
  status, out, _ = _cli(
      capsys, 'calibrate', '--solve', 'num-users', '--target-epsilon', '1.5',
      '--randomizer', 'oue', '--domain-size', '4', '--local-epsilon', '4',
      '--release', 'sum', '--relation', 'deletion', '--delta', '1e-6',
      '--accountant', 'pld', '--json')
  assert status == 0
  report = json.loads(out)
  randomizer = randomizers.OptimizedUnaryEncoding(4, 4.0)
  assert report['value'] == calibration.calibrate_num_users(
      1.5, 1e-6, randomizer, release='sum', relation=DELETION)
  assert 'SUM-OF-BITS-DELETION' in report['relation']
  assert report['protocol']['relation'] == 'deletion'


def test_cli_epsilon_under_deletion_labels_every_line(capsys):
  status, out, _ = _cli(
      capsys, 'epsilon', '--num-users', '300', '--randomizer', 'oue',
      '--domain-size', '4', '--local-epsilon', '3', '--release', 'sum',
      '--relation', 'deletion', '--delta', '1e-6')
  assert status == 0
  lines = out.strip().splitlines()
  # The relation sentence, then the certified line, both name deletion.
  assert 'REPLACE_SPECIAL' in lines[1] and 'SUM-OF-BITS-DELETION' in lines[1]
  certified = _certified(events.SumOfReportsEvent(
      300, randomizers.OptimizedUnaryEncoding(4, 3.0)), DELETION)
  assert f'{certified:.6g}' in lines[3] and 'under deletion' in lines[3]


def test_cli_refuses_num_users_without_delta(capsys):
  status, _, err = _cli(capsys, 'calibrate', '--solve', 'num-users',
                        '--target-epsilon', '1', '--local-epsilon', '1')
  assert status != 0 and '--delta' in err
  status, _, err = _cli(capsys, 'calibrate', '--solve', 'rounds',
                        '--target-epsilon', '1', '--local-epsilon', '1')
  assert status != 0 and '--num-users' in err


def test_cli_refuses_deletion_for_rounds_defined_under_replace_one(capsys):
  status, _, err = _cli(capsys, 'epsilon', '--num-users', '1000',
                        '--local-epsilon', '1', '--checkin-rate', '0.5',
                        '--relation', 'deletion', '--delta', '1e-6')
  assert status == 2 and 'replace-one only' in err


def test_a_relation_without_a_bound_is_refused_at_once_naming_it():
  # A new user's trial: ADD_OR_REMOVE_ONE raised dp_accounting's
  # UnsupportedEventError from inside the search, about an event the user
  # never built.
  sue = randomizers.SymmetricUnaryEncoding(16, 1.0)
  add_remove = NeighboringRelation.ADD_OR_REMOVE_ONE
  for call in (
      lambda: calibration.calibrate_num_users(
          1.0, 1e-9, randomizer=sue, release='sum', relation=add_remove),
      lambda: calibration.calibrate_local_epsilon(
          0.5, 1e-9, 10, release='sum', randomizer=sue,
          relation=add_remove)):
    with pytest.raises(ValueError, match='relation=NeighboringRelation.'
                       'ADD_OR_REMOVE_ONE does not apply .*REPLACE_ONE or '
                       'NeighboringRelation.REPLACE_SPECIAL'):
      call()
