"""`SubsampledShuffleGaussianEvent(..., dimension=d)` (issue 31 item 2).

At d = 1 the event is exactly the hidden sample of m of n users of the
shuffle of m scalar GaussianRandomizer reports; the PLD route must certify
it at most as the explicit `SampledWithoutReplacementDpEvent` ledger does
(NUM-BLANKET (v) under KHH-SUBSAMPLED), far below the Gaussian pair alone.
An unknown dimension keeps the Gaussian pair's value and says why; so does
d > 1 where GAUSS-PROFILE-LDP does not apply (m = 1e4, sigma = 2: n delta0
is too large at every eps0 FMT-EQ10-11 allows).
"""

import math

from dp_accounting import dp_event
import pytest

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import checkpoints
from shuffle_accountants import events
from shuffle_accountants import randomizers

NUM_USERS, SAMPLE_SIZE, SIGMA, DELTA = 10**5, 10**4, 2.0, 1e-6
# ShufflePldAccountant's epsilon of SubsampledShuffleGaussianEvent(1e5, 1e4,
# 2.0) at delta = 1e-6 before the dimension field existed (KHH-SUBSAMPLED
# of the GAUSS-NO-GAIN Gaussian pair alone). Its last digits follow scipy's
# special functions (scipy 1.17.1 gives 2.181734093211054): compared at 1e-9.
GAUSSIAN_PAIR_EPSILON = 2.181734093922661


def _pld(event, **options):
  accountant = ShufflePldAccountant(**options).compose(event)
  return accountant.get_epsilon(DELTA), accountant.contributions[-1].pairs


def _explicit_scalar_ledger():
  return dp_event.SampledWithoutReplacementDpEvent(
      NUM_USERS, SAMPLE_SIZE, events.ShuffleEvent(
          num_users=SAMPLE_SIZE,
          randomizer=randomizers.GaussianRandomizer(SIGMA)))


def _event(dimension):
  return events.SubsampledShuffleGaussianEvent(NUM_USERS, SAMPLE_SIZE, SIGMA,
                                               dimension=dimension)


def test_scalars_match_the_explicit_hidden_sample_of_a_shuffle():
  scalar, names = _pld(_event(1))
  explicit, _ = _pld(_explicit_scalar_ledger())
  unknown, _ = _pld(_event(None))
  assert scalar <= explicit * (1 + 1e-9)
  assert scalar < 0.1 * unknown
  assert any('NUM-BLANKET' in name and 'shuffle of m reports' in name
             for name in names)
  # On one fixed grid the two ledgers give the same profile.
  fixed = dict(value_discretization_interval=2e-3)
  assert _pld(_event(1), **fixed)[0] == pytest.approx(
      _pld(_explicit_scalar_ledger(), **fixed)[0], rel=1e-9)


@pytest.mark.parametrize('dimension, reason', [
    (None, 'dimension unknown'), (5, 'd > 1'), (10**4, 'd > 1')])
def test_other_dimensions_keep_the_gaussian_pair_and_say_why(dimension,
                                                             reason):
  epsilon, names = _pld(_event(dimension))
  assert epsilon == pytest.approx(GAUSSIAN_PAIR_EPSILON, rel=1e-9)
  assert names[0] == 'KHH-SUBSAMPLED of the Gaussian pair (GAUSS-NO-GAIN)'
  assert any('NUM-BLANKET' in name and 'not used' in name and reason in name
             for name in names[1:])


def test_rdp_route_gains_for_scalars_only():
  values = [ShuffleRdpAccountant().compose(_event(d)).get_epsilon(DELTA)
            for d in (None, 1, 5)]
  assert values[0] == values[2]
  # WBK19-THM9 on the shuffle's NUM-BLANKET-RDP: the explicit ledger of
  # plainly clipped scalars is the same mechanism and the same bound.
  assert values[1] < 0.8 * values[0]
  explicit = ShuffleRdpAccountant().compose(_explicit_scalar_ledger())
  assert explicit.get_epsilon(DELTA) == pytest.approx(values[1], rel=1e-12)


@pytest.mark.parametrize('dimension, error', [
    (0, ValueError), (-1, ValueError), (1.5, ValueError), (math.nan,
                                                           ValueError),
    ('a', TypeError), (True, TypeError)])
def test_bad_dimension_names_parameter_value_and_range(dimension, error):
  with pytest.raises(error, match=r'dimension must be a whole number >= 1'):
    _event(dimension)


def test_whole_float_dimension_is_accepted():
  assert _event(3.0).dimension == 3


@pytest.mark.parametrize('dimension', [None, 1, 7])
def test_checkpoint_round_trip_and_old_states(dimension):
  event = _event(dimension)
  state = checkpoints.event_to_dict(event)
  assert checkpoints.event_from_dict(state) == event
  # A state saved before the field existed (version 1) loads as an unknown
  # dimension; in a state of the current version the field was deleted.
  del state['event']['fields']['dimension']
  with pytest.raises(checkpoints.LedgerFileError, match='dimension'):
    checkpoints.event_from_dict(state)
  state['version'] = 1
  assert checkpoints.event_from_dict(state).dimension is None
