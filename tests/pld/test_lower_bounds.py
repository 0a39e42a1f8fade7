"""The all-equal binary-RR pair's ε is a lower bound: below the truth, below
ours."""

import warnings

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

import brute_force
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import randomizers
from shuffle_accountants.pld import lower_bounds
from shuffle_accountants.pld.lower_bounds import (
  binary_rr_all_equal_pair_epsilon_lower_bound as lower_bound,
)


@pytest.mark.parametrize('num_users', [1, 2, 5, 30, 200])
@pytest.mark.parametrize('local_epsilon', [0.1, 1.0, 3.0])
@pytest.mark.parametrize('delta', [1e-2, 1e-6])
def test_single_round_is_below_and_close_to_the_exact_value(
    num_users, local_epsilon, delta):
  epsilon = lower_bound(num_users, local_epsilon, 1, delta)
  # delta(eps) is decreasing: eps > 0 is below the exact eps(delta) iff the
  # exact delta at eps is at least delta.
  assert epsilon == 0 or brute_force.binary_rr_all_equal_delta(
      num_users, local_epsilon, epsilon) >= delta * (1 - 1e-9)
  exact_slightly_above = brute_force.binary_rr_all_equal_delta(
      num_users, local_epsilon, epsilon * 1.05 + 1e-3)
  assert exact_slightly_above <= delta or epsilon == 0


@settings(max_examples=15, deadline=None)
@given(num_users=st.integers(10, 10**6), local_epsilon=st.floats(0.05, 5),
       rounds=st.sampled_from([1, 10, 1000]))
def test_never_above_the_certified_upper_bound(num_users, local_epsilon,
                                               rounds):
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users, local_epsilon), rounds)
  assert lower_bound(num_users, local_epsilon, rounds, 1e-6) <= (
      accountant.get_epsilon(1e-6))


def test_bad_arguments_name_the_parameter():
  with pytest.raises(ValueError, match='rounds must be'):
    lower_bound(10, 1.0, 0, 1e-6)
  with pytest.raises(ValueError, match='delta must be'):
    lower_bound(10, 1.0, 1, 0.0)


def test_randomizer_lower_bound_is_quiet_where_upstream_overflows():
  """dp_accounting's Chernoff bounds overflow at some orders for 365 rounds
  of k-RR at eps0 = 8 (scipy warned from inside self_compose); the library
  is quiet on valid input, and the bound stays below the certificate."""
  randomizer = randomizers.KRandomizedResponse(100, 8.0)
  with warnings.catch_warnings():
    warnings.simplefilter('error')
    lower = lower_bounds.randomizer_epsilon_lower_bound(randomizer, 10**6, 365,
                                                        1e-6)
  certified = ShufflePldAccountant().compose(
      ShuffleEvent(10**6, randomizer=randomizer), 365).get_epsilon(1e-6)
  assert lower is not None and 0 < lower <= certified
