"""shuffle_accountants.calibration: certified (epsilon <= target) and tight
(within 1 %) (issue 24)."""

import dp_accounting
import pytest

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import calibration

ACCOUNTANTS = [ShufflePldAccountant, ShuffleRdpAccountant]


def _epsilon(accountant_type, event, rounds, delta):
  """Recomputed independently of the calibration module."""
  accountant = accountant_type()
  accountant.compose(event, rounds)
  return accountant.get_epsilon(delta)


def _assert_certified_and_tight(epsilon, target):
  assert (1 - calibration.DEFAULT_RELATIVE_TOLERANCE) * target <= epsilon
  assert epsilon <= target


def test_the_issue_call_with_its_keywords():
  local_epsilon = calibration.calibrate_local_epsilon(
      num_users=10**6, rounds=1000, target_epsilon=1.0, target_delta=1e-6)
  _assert_certified_and_tight(_epsilon(
      ShufflePldAccountant, ShuffleEvent(10**6, local_epsilon), 1000, 1e-6),
                              1.0)


@pytest.mark.parametrize('accountant_type', ACCOUNTANTS)
def test_local_epsilon_of_shuffle_and_checkin_rounds(accountant_type):
  local_epsilon = calibration.calibrate_local_epsilon(
      1.0, 1e-6, num_users=10**5, rounds=100,
      make_fresh_accountant=accountant_type)
  _assert_certified_and_tight(_epsilon(
      accountant_type, ShuffleEvent(10**5, local_epsilon), 100, 1e-6), 1.0)
  checkin = lambda eps0: CheckInEvent(10**4, 0.05, local_epsilon=eps0)
  local_epsilon = calibration.calibrate_local_epsilon(
      0.5, 1e-5, rounds=10, make_event=checkin,
      make_fresh_accountant=accountant_type)
  _assert_certified_and_tight(_epsilon(
      accountant_type, checkin(local_epsilon), 10, 1e-5), 0.5)


@pytest.mark.parametrize('accountant_type', ACCOUNTANTS)
def test_noise_multiplier_of_gaussian_checkin(accountant_type):
  sigma = calibration.calibrate_noise_multiplier(
      2.0, 1e-5, num_users=10**4, rounds=20, checkin_rate=0.01,
      make_fresh_accountant=accountant_type)
  _assert_certified_and_tight(_epsilon(
      accountant_type, CheckInEvent(10**4, 0.01, noise_multiplier=sigma), 20,
      1e-5), 2.0)


@pytest.mark.parametrize('accountant_type', ACCOUNTANTS)
def test_rounds_are_the_exact_optimum(accountant_type):
  event = ShuffleEvent(10**4, 1.0)
  rounds = calibration.calibrate_rounds(event, 0.5, 1e-6,
                                        make_fresh_accountant=accountant_type)
  assert isinstance(rounds, int) and rounds > 1
  assert _epsilon(accountant_type, event, rounds, 1e-6) <= 0.5
  assert _epsilon(accountant_type, event, rounds + 1, 1e-6) > 0.5


def test_wrappers_are_monotone_in_the_target():
  local = [calibration.calibrate_local_epsilon(target, 1e-6, 10**4, 10)
           for target in (0.3, 0.6, 1.2)]
  assert local == sorted(local) and local[0] < local[-1]
  sigmas = [calibration.calibrate_noise_multiplier(
      target, 1e-5, 10**3, 5, checkin_rate=0.1) for target in (0.5, 1, 2)]
  assert sigmas == sorted(sigmas, reverse=True) and sigmas[0] > sigmas[-1]
  event = ShuffleEvent(10**4, 2.0)
  rounds = [calibration.calibrate_rounds(event, target, 1e-6)
            for target in (0.5, 1.0, 2.0)]
  assert rounds == sorted(rounds) and rounds[0] < rounds[-1]


def test_the_end_of_the_range_is_returned_when_everything_meets():
  assert calibration.calibrate_local_epsilon(100.0, 1e-6, 10, 1) == 20.0
  assert calibration.calibrate_rounds(
      ShuffleEvent(10, 0.001), 1.0, 1e-6, max_rounds=100) == 100


def test_any_event_through_the_general_function():
  # A hidden sample of m users of 10^5 (dp_accounting's own event).
  make = lambda eps0: dp_accounting.SampledWithoutReplacementDpEvent(
      10**5, 1000, ShuffleEvent(1000, eps0))
  local_epsilon = calibration.calibrate_parameter(
      make, 0.2, 1e-6, 0.0, 10.0, more_private_at_lower=True, rounds=5)
  _assert_certified_and_tight(_epsilon(ShufflePldAccountant,
                                       make(local_epsilon), 5, 1e-6), 0.2)


@pytest.mark.parametrize('call, error, words', [
    (lambda: calibration.calibrate_local_epsilon(0.0, 1e-6, 10), ValueError,
     ['target_epsilon', '0.0']),
    (lambda: calibration.calibrate_local_epsilon(1.0, 1.0, 10), ValueError,
     ['target_delta', '1.0', '(0.0, 1.0)']),
    (lambda: calibration.calibrate_local_epsilon(1.0, 1e-6), ValueError,
     ['num_users', 'make_event', 'exactly one']),
    (lambda: calibration.calibrate_local_epsilon(1.0, 1e-6, 10, rounds=0),
     ValueError, ['rounds', '0']),
    (lambda: calibration.calibrate_local_epsilon(
        1.0, 1e-6, 10, max_local_epsilon=800), ValueError,
     ['max_local_epsilon', '800']),
    (lambda: calibration.calibrate_noise_multiplier(
        1.0, 1e-6, 10, noise_multiplier_range=(0.0, 1.0)), ValueError,
     ['noise_multiplier_range[0]']),
    (lambda: calibration.calibrate_rounds('round', 1.0, 1e-6), TypeError,
     ['event', 'DpEvent']),
    (lambda: calibration.calibrate_rounds(ShuffleEvent(10, 1.0), 1e-3, 1e-6),
     calibration.UnreachableTargetError,
     ['unreachable', 'rounds=1', 'target_epsilon=0.001']),
    (lambda: calibration.calibrate_local_epsilon(
        1.0, 1e-6, 10, make_fresh_accountant=lambda: ShufflePldAccountant(
        ).compose(ShuffleEvent(10, 1.0))), ValueError, ['empty accountant']),
])
def test_invalid_inputs_are_named(call, error, words):
  with pytest.raises(error) as info:
    call()
  for word in words:
    assert word in str(info.value)


def test_a_ledger_of_many_populations_is_certified_by_the_accountant_asked():
  """The search runs on a coarser grouping first (issue 30); the answer is
  certified, and tight, with the accountant's own (finer) grouping."""
  populations = [int(10**4 * 2**(day / 29)) for day in range(30)]
  make = lambda eps0: dp_accounting.ComposedDpEvent(
      [ShuffleEvent(n, eps0) for n in populations])
  local_epsilon = calibration.calibrate_local_epsilon(1.0, 1e-6,
                                                      make_event=make)
  _assert_certified_and_tight(_epsilon(ShufflePldAccountant,
                                       make(local_epsilon), 1, 1e-6), 1.0)


@pytest.mark.parametrize('target', [float('inf'), float('nan'), 0.0, -1.0])
def test_a_target_out_of_range_names_a_range_it_could_be_in(target):
  # A new user's trial: inf was refused as outside "(0.0, inf]".
  with pytest.raises(ValueError, match=r'target_epsilon must be a finite '
                     r'number in \(0\.0, inf\); got'):
    calibration.calibrate_num_trials(target, 1e-6)
