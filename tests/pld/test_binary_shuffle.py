"""BINARY-RR-CONFIGURATIONS: shuffled binary RR against every configuration."""

import itertools
import math

import numpy as np
import pytest

import brute_force
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import randomizers
from shuffle_accountants.pld import binary_shuffle

DELTAS = (0.3, 1e-2, 1e-4, 1e-6, 1e-9)


def _hockey_stick(law_p, law_q, epsilon):
  return float(np.sum(np.maximum(law_p - math.exp(epsilon) * law_q, 0.0)))


def _every_configuration(num_users, local_epsilon):
  """(P, Q) for every number of others at 1 and both orders."""
  pairs = []
  for ones in range(num_users):
    law_one, law_zero = brute_force.binary_rr_count_pair(
        num_users, local_epsilon, ones)
    pairs += [(law_one, law_zero), (law_zero, law_one)]
  return pairs


def _certified(events_and_counts, delta, **options):
  accountant = ShufflePldAccountant(**options)
  for event, count in events_and_counts:
    accountant.compose(event, count)
  return accountant.get_epsilon(delta)


def _assert_covers(pair_sequences, ledger):
  """The certified epsilon at each of `DELTAS` against every sequence of
  per-round pairs, composed exactly."""
  epsilons = [_certified(ledger, delta) for delta in DELTAS]
  worst = np.zeros(len(DELTAS))
  for sequence in pair_sequences:
    law_p, law_q = brute_force.composed_pair(sequence)
    worst = np.maximum(worst, [_hockey_stick(law_p, law_q, epsilon)
                               for epsilon in epsilons])
  assert np.all(worst <= np.array(DELTAS) * (1 + 1e-9) + 1e-15), (
      epsilons, worst)


@pytest.mark.parametrize('num_users,local_epsilon', [
    (3, 0.3), (12, 1.0), (30, 2.0), (30, 4.0)])
@pytest.mark.parametrize('rounds', [1, 2, 3])
def test_certified_covers_every_configuration(num_users, local_epsilon,
                                              rounds):
  # Per round the adversary fixes the configuration and the order; here it
  # keeps them over the rounds (the next test varies them).
  _assert_covers([[pair] * rounds for pair in _every_configuration(
      num_users, local_epsilon)],
                 [(ShuffleEvent(num_users, local_epsilon, 2), rounds)])


def test_certified_covers_configurations_varying_over_rounds():
  # Two rounds of 2-RR at different n and eps0 (a mixed ledger): every pair
  # of (configuration, order), one per round.
  first = _every_configuration(6, 1.5)
  second = _every_configuration(5, 0.7)
  ledger = [(ShuffleEvent(6, 1.5, 2), 1),
            (ShuffleEvent(5, randomizer=randomizers.KRandomizedResponse(
                2, 0.7)), 1)]
  _assert_covers(itertools.product(first, second), ledger)


def test_the_worst_configuration_is_not_always_an_extreme():
  # The brute force above would catch a bound over the all-equal
  # configurations only: at n = 3 the middle one is the worst at small
  # epsilon, and the certified bound covers it.
  pairs = _every_configuration(3, 0.3)
  middle = _hockey_stick(*pairs[2], 0.0)
  extremes = max(_hockey_stick(*pair, 0.0) for pair in pairs[:2] + pairs[4:])
  assert middle > extremes * 1.01
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(3, 0.3, 2))
  assert accountant.get_delta(0.0) >= middle


def _all_equal_epsilon(num_users, local_epsilon, delta):
  """epsilon(delta) of the all-equal pair, by bisection on its exact H."""
  law_one, law_zero = brute_force.binary_rr_count_pair(
      num_users, local_epsilon, num_users - 1)
  low, high = 0.0, local_epsilon
  for _ in range(60):
    middle = (low + high) / 2
    if max(_hockey_stick(law_one, law_zero, middle),
           _hockey_stick(law_zero, law_one, middle)) > delta:
      low = middle
    else:
      high = middle
  return low


@pytest.mark.parametrize('num_users,local_epsilon,delta', [
    (10**4, 1.0, 1e-6), (10**5, 4.0, 1e-6)])
def test_one_round_is_within_two_percent_of_the_exact_pair(
    num_users, local_epsilon, delta):
  exact = _all_equal_epsilon(num_users, local_epsilon, delta)
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users, local_epsilon, 2))
  certified = accountant.get_epsilon(delta)
  assert exact <= certified <= 1.02 * exact
  names = [name for contribution in accountant.contributions
           for name in contribution.pairs]
  assert binary_shuffle.BINARY_RR_CONFIGURATIONS in names


def test_only_for_the_shuffled_output_and_no_hidden_sample():
  event = ShuffleEvent(100, 1.0, 2)
  assert binary_shuffle.applies(event, None, 'shuffled_output')
  assert not binary_shuffle.applies(event, None, 'weak')
  assert not binary_shuffle.applies(event, 0.5, 'shuffled_output')
  assert not binary_shuffle.applies(ShuffleEvent(100, 1.0, 3), None,
                                    'shuffled_output')
  assert not binary_shuffle.applies(ShuffleEvent(100, 0.0, 2), None,
                                    'shuffled_output')
  largest = binary_shuffle.LARGEST_LOCAL_EPSILON
  assert binary_shuffle.applies(ShuffleEvent(100, largest, 2), None,
                                'shuffled_output')
  assert not binary_shuffle.applies(ShuffleEvent(100, 2 * largest, 2), None,
                                    'shuffled_output')


@pytest.mark.slow
@pytest.mark.parametrize('num_users,local_epsilon,rounds', [
    (60, 0.5, 3), (120, 3.0, 2), (200, 1.0, 1), (200, 6.0, 1), (200, 2.0, 2)])
def test_certified_covers_every_configuration_up_to_200_users(
    num_users, local_epsilon, rounds):
  _assert_covers([[pair] * rounds for pair in _every_configuration(
      num_users, local_epsilon)],
                 [(ShuffleEvent(num_users, local_epsilon, 2), rounds)])
