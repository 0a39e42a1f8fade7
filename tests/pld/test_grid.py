"""The automatic grid policy (`pld.grid`): accurate, bounded, never unsound."""

import dp_accounting
from dp_accounting import dp_event
import pytest

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants.pld import grid


def _interval(ledger, relative_accuracy=1e-3):
  return grid.automatic_interval(ledger, relative_accuracy, 'shuffled_output',
                                 1e-3)


def test_no_shuffle_round_keeps_the_parent_default():
  ledger = dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(1.0)])
  assert _interval(ledger) == grid.DEFAULT_GRID


def test_finer_for_larger_populations_and_tighter_accuracy():
  small = _interval(ShuffleEvent(10**4, 1.0))
  large = _interval(ShuffleEvent(10**8, 1.0))
  assert large < small <= grid.COARSEST_GRID
  assert _interval(ShuffleEvent(10**4, 1.0), 1e-5) < small


def test_mixed_ledgers_stay_at_or_above_the_mixed_floor():
  shuffle = ShuffleEvent(10**9, 0.1)
  alone = _interval(shuffle)
  mixed = _interval(dp_event.ComposedDpEvent(
      [shuffle, dp_event.GaussianDpEvent(1.0)]))
  assert alone < grid.FINEST_MIXED_GRID <= mixed


def test_the_smallest_round_decides_and_subsampling_is_seen():
  rounds = [ShuffleEvent(10**4, 1.0), CheckInEvent(10**4, 0.01,
                                                   local_epsilon=1.0)]
  together = _interval(dp_event.ComposedDpEvent(rounds))
  assert together == min(_interval(r) for r in rounds)
  sampled = dp_accounting.SampledWithoutReplacementDpEvent(
      10**5, 10**3, ShuffleEvent(10**3, 1.0))
  assert _interval(sampled) < _interval(ShuffleEvent(10**3, 1.0))


@pytest.mark.parametrize('num_users,local_epsilon,rounds', [
    (10**4, 1.0, 100), (10**6, 4.0, 10), (10**9, 1.0, 1000)])
def test_automatic_grid_reaches_the_requested_accuracy(num_users,
                                                       local_epsilon, rounds):
  event = ShuffleEvent(num_users, local_epsilon)
  automatic = ShufflePldAccountant()
  automatic.compose(event, rounds)
  fine = ShufflePldAccountant(
      value_discretization_interval=automatic.value_discretization_interval
      / 10)
  fine.compose(event, rounds)
  converged = fine.get_epsilon(1e-6)
  assert converged <= automatic.get_epsilon(1e-6) <= converged * 1.002
  assert automatic.get_optimistic_epsilon(1e-6) <= automatic.get_epsilon(1e-6)


def test_resource_limited_grids_are_flagged():
  normal = grid.automatic_grid(ShuffleEvent(10**6, 1.0), 1e-3,
                               'shuffled_output', 1e-3)
  assert not normal[1]
  huge = dp_event.SelfComposedDpEvent(
      CheckInEvent(10**8, 1.0, local_epsilon=13.0), 10**9)
  interval, limited = grid.automatic_grid(huge, 1e-3, 'shuffled_output', 1e-3)
  assert limited and interval <= grid.COARSEST_FALLBACK_GRID
