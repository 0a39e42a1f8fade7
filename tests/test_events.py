"""ShuffleEvent construction, validation and serialisation."""

import dp_accounting
import pytest

from shuffle_accountants import ShuffleEvent
from shuffle_accountants import events


def test_round_trip_through_named_tuple():
  event = ShuffleEvent(num_users=1000, local_epsilon=1.5, num_categories=4)
  restored = dp_accounting.DpEvent.from_named_tuple(event.to_named_tuple())
  assert restored == event
  assert isinstance(event, dp_accounting.DpEvent)


def test_events_are_frozen_and_hashable():
  event = ShuffleEvent(10, 1.0)
  with pytest.raises(AttributeError):  # attrs' FrozenInstanceError
    event.num_users = 11
  assert hash(event) == hash(ShuffleEvent(10, 1.0))


@pytest.mark.parametrize('kwargs,error,words', [
    (dict(num_users=0, local_epsilon=1.0), ValueError, ['num_users', '0']),
    (dict(num_users=-3, local_epsilon=1.0), ValueError, ['num_users', '-3']),
    (dict(num_users=2.5, local_epsilon=1.0), ValueError, ['num_users', '2.5']),
    (dict(num_users=True, local_epsilon=1.0), TypeError, ['num_users']),
    (dict(num_users=10, local_epsilon=-0.1), ValueError,
     ['local_epsilon', '-0.1', '[0.0']),
    (dict(num_users=10, local_epsilon=float('nan')), ValueError,
     ['local_epsilon', 'nan']),
    (dict(num_users=10, local_epsilon=float('inf')), ValueError,
     ['local_epsilon', 'inf']),
    (dict(num_users=10, local_epsilon='1'), TypeError, ['local_epsilon']),
    (dict(num_users=10, local_epsilon=1.0, num_categories=1), ValueError,
     ['num_categories', '1', '[2, 1e+06]']),
    (dict(num_users=10, local_epsilon=1.0, local_delta=1.0), ValueError,
     ['local_delta', '1.0', '[0.0, 1.0)']),
    (dict(num_users=10, local_epsilon=1.0, local_delta=-1e-9), ValueError,
     ['local_delta']),
])
def test_invalid_parameters_are_explained(kwargs, error, words):
  with pytest.raises(error) as info:
    ShuffleEvent(**kwargs)
  for word in words:
    assert word in str(info.value)


def test_numpy_integers_are_accepted():
  import numpy as np
  assert ShuffleEvent(np.int64(10), np.float32(1.0)).num_users == 10


@pytest.mark.parametrize('make', [
    lambda: events.ShuffleEvent(1000, 800.0, num_categories=4),
    lambda: events.ShuffleEvent(1000, 710.0),
    lambda: events.CheckInEvent(1000, 0.1, local_epsilon=1e4)])
def test_a_local_epsilon_whose_exponential_overflows_is_rejected(make):
  # e^eps0 overflows above ~709.8; 4-RR at eps0 = 800 once gave epsilon 0.
  with pytest.raises(ValueError, match=r'local_epsilon must be a finite '
                     r'number in \[0.0, 700.0\]'):
    make()


def test_whole_numbers_written_as_floats_are_accepted():
  # As on the command line (--num-users 1e6): stored as Python ints.
  event = ShuffleEvent(num_users=1e6, local_epsilon=1.0, num_categories=4.0)
  assert event == ShuffleEvent(10**6, 1.0, num_categories=4)
  assert type(event.num_users) is int and type(event.num_categories) is int
  gaussian = events.SubsampledShuffleGaussianEvent(1e4, 1e2, 2.0)
  assert (gaussian.num_users, gaussian.sample_size) == (10000, 100)
  for bad in (2.5, float('inf'), float('nan')):
    with pytest.raises(ValueError, match='num_users must be a whole number'):
      ShuffleEvent(bad, 1.0)
