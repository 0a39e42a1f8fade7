"""NUM-LB-LIKELIHOOD: below the certificate, above NUM-LB, validated.

The exact pair it lower-bounds is checked independently in
test_likelihood_sum_reference.py.
"""

import pytest

from shuffle_accountants import randomizers
from shuffle_accountants.events import ShuffleEvent
from shuffle_accountants.pld import continuous_blanket
from shuffle_accountants.pld import likelihood_sum
from shuffle_accountants.pld.accountant import ShufflePldAccountant


def _certified(num_users, sigma, rounding=True):
  return ShufflePldAccountant().compose(ShuffleEvent(
      num_users, randomizer=randomizers.GaussianRandomizer(
          sigma, randomized_rounding=rounding))).get_epsilon(1e-6)


@pytest.mark.parametrize('num_users,sigma,floor', [
    (10**4, 2.0, 0.045), (10**5, 1.0, 0.36), (10**4, 5.0, 0.0129)])
def test_between_the_threshold_counts_and_the_certificate(num_users, sigma,
                                                          floor):
  # Before: NUM-LB alone gave 0.0326, 0.271 and 0.0101 here.
  lower = likelihood_sum.likelihood_sum_epsilon_lower_bound(num_users, sigma,
                                                            1e-6)
  assert lower >= floor
  assert lower > continuous_blanket.threshold_count_epsilon_lower_bound(
      num_users, sigma, 1e-6)
  assert lower <= _certified(num_users, sigma)
  assert likelihood_sum.gaussian_shuffle_epsilon_lower_bound(
      num_users, sigma, 1e-6) == lower


def test_the_larger_of_the_two_and_none_above_the_threshold_window():
  # One user: the threshold counts are the better pair (10.34 against 8.23;
  # the exact Gaussian pair gives 11.0).
  threshold = continuous_blanket.threshold_count_epsilon_lower_bound(
      1, 1.0, 1e-6)
  likelihood = likelihood_sum.likelihood_sum_epsilon_lower_bound(1, 1.0, 1e-6)
  assert likelihood_sum.gaussian_shuffle_epsilon_lower_bound(
      1, 1.0, 1e-6) == threshold > likelihood
  many = likelihood_sum.MAX_THRESHOLD_COUNT_USERS * 10
  assert likelihood_sum.gaussian_shuffle_epsilon_lower_bound(
      many, 0.5, 1e-6) == likelihood_sum.likelihood_sum_epsilon_lower_bound(
          many, 0.5, 1e-6) > 0


def test_small_noise_multipliers_and_loose_deltas_give_zero():
  assert likelihood_sum.likelihood_sum_epsilon_lower_bound(100, 0.1,
                                                           1e-6) == 0.0
  assert likelihood_sum.likelihood_sum_epsilon_lower_bound(10, 3.0,
                                                           0.5) == 0.0


@pytest.mark.parametrize('arguments,name', [
    ((0, 1.0, 1e-6), 'num_users'), ((2.5, 1.0, 1e-6), 'num_users'),
    ((10, 0.0, 1e-6), 'noise_multiplier'),
    ((10, float('nan'), 1e-6), 'noise_multiplier'),
    ((10, 1.0, 0.0), 'delta'), ((10, 1.0, 1.5), 'delta'),
])
def test_invalid_input_names_the_parameter(arguments, name):
  with pytest.raises(ValueError, match=name):
    likelihood_sum.likelihood_sum_epsilon_lower_bound(*arguments)


def test_a_wrong_type_is_a_type_error():
  with pytest.raises(TypeError, match='noise_multiplier'):
    likelihood_sum.likelihood_sum_epsilon_lower_bound(10, '1.0', 1e-6)
