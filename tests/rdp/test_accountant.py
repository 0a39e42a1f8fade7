"""ShuffleRdpAccountant: shuffle events, delegation, composition and errors."""

import dp_accounting
from dp_accounting import privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant
import numpy as np
import pytest

from shuffle_accountants import DEFAULT_ORDERS
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.rdp import shuffle_round

REPLACE_ONE = dp_accounting.NeighboringRelation.REPLACE_ONE
ADD_OR_REMOVE_ONE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
ORDERS = [1.5, 2.0, 3.0, 8.0, 32.0, 128.0, 1024.0]
EVENT = ShuffleEvent(num_users=5000, local_epsilon=1.0)


def test_defaults():
  accountant = ShuffleRdpAccountant()
  assert accountant.neighboring_relation is REPLACE_ONE
  assert max(DEFAULT_ORDERS) >= 1024
  np.testing.assert_array_equal(accountant.orders, DEFAULT_ORDERS)
  assert accountant.get_epsilon(1e-6) == 0


def test_shuffle_event_uses_smallest_sound_bound_and_honours_count():
  accountant = ShuffleRdpAccountant(orders=ORDERS)
  accountant.compose(EVENT, count=7)
  bound = shuffle_round.shuffle_rdp_upper_bound(5000, 1.0, ORDERS)
  np.testing.assert_allclose(accountant.rdp, 7 * bound.rdp, rtol=1e-12)
  assert np.all(bound.rdp <= np.min(np.stack(list(
      bound.candidates.values())), axis=0))
  assert len(accountant.contributions) == 1
  assert accountant.contributions[0].count == 7


def test_self_composed_and_composed_equal_the_sum_of_their_parts():
  gaussian = dp_accounting.GaussianDpEvent(3.0)
  together = ShuffleRdpAccountant(orders=ORDERS)
  together.compose(dp_accounting.SelfComposedDpEvent(
      dp_accounting.ComposedDpEvent([EVENT, gaussian]), 10))
  shuffle_only = ShuffleRdpAccountant(orders=ORDERS).compose(EVENT, 10)
  # Replace-one sensitivity 2 (as the PLD route): the parent's sigma / 2.
  gaussian_only = rdp_privacy_accountant.RdpAccountant(
      orders=ORDERS, neighboring_relation=REPLACE_ONE).compose(
          dp_accounting.GaussianDpEvent(1.5), 10)
  np.testing.assert_allclose(together.rdp,
                             shuffle_only.rdp + gaussian_only.rdp, rtol=1e-12)
  assert together.get_epsilon(1e-6) > max(shuffle_only.get_epsilon(1e-6),
                                          gaussian_only.get_epsilon(1e-6))


def test_explain_names_the_winning_bound_at_the_optimal_order():
  accountant = ShuffleRdpAccountant(orders=ORDERS).compose(EVENT, 100)
  (entry,) = accountant.explain(1e-6)
  _, order = accountant.get_epsilon_and_optimal_order(1e-6)
  assert entry['order'] == order
  assert entry['bound'] in shuffle_round.shuffle_rdp_upper_bound(
      5000, 1.0, ORDERS).candidates
  assert entry['count'] == 100


def test_subsampled_shuffle_is_amplified_and_bounded_by_unsampled():
  sampled = dp_accounting.SampledWithoutReplacementDpEvent(
      100_000, 1000, ShuffleEvent(1000, 3.0))
  accountant = ShuffleRdpAccountant(orders=ORDERS).compose(sampled)
  unsampled = ShuffleRdpAccountant(orders=ORDERS).compose(
      ShuffleEvent(1000, 3.0))
  assert np.all(accountant.rdp <= unsampled.rdp)
  assert accountant.get_epsilon(1e-5) < unsampled.get_epsilon(1e-5) / 5


def test_unsampled_is_the_limit_of_sampling_everyone():
  everyone = dp_accounting.SampledWithoutReplacementDpEvent(
      1000, 1000, ShuffleEvent(1000, 1.0))
  accountant = ShuffleRdpAccountant(orders=ORDERS).compose(everyone)
  direct = ShuffleRdpAccountant(orders=ORDERS).compose(ShuffleEvent(1000, 1.0))
  np.testing.assert_allclose(accountant.rdp, direct.rdp, rtol=1e-12)


@pytest.mark.parametrize('event,words', [
    (dp_accounting.PoissonSampledDpEvent(0.01, EVENT),
     ['Poisson', 'POISSON-UNSOUND', 'SampledWithoutReplacementDpEvent']),
    (dp_accounting.PoissonSampledDpEvent(
        0.01, dp_accounting.ComposedDpEvent([EVENT])), ['Poisson']),
    (ShuffleEvent(100, 1.0, local_delta=1e-6),
     ['local_delta', 'APPROX-LDP-NO-RDP']),
    (dp_accounting.SampledWithoutReplacementDpEvent(
        1000, 10, ShuffleEvent(20, 1.0)), ['num_users=20', 'sample_size=10']),
    (dp_accounting.SampledWithoutReplacementDpEvent(
        1000, 10, dp_accounting.ComposedDpEvent([ShuffleEvent(10, 1.0)])),
     ['directly']),
])
def test_unsupported_shuffle_uses_are_explained(event, words):
  accountant = ShuffleRdpAccountant(orders=ORDERS)
  assert not accountant.supports(event)
  with pytest.raises(privacy_accountant.UnsupportedEventError) as info:
    accountant.compose(event)
  for word in words:
    assert word in str(info.value)
  assert accountant.get_epsilon(1e-6) == 0  # nothing was composed
  assert not accountant.contributions


def test_add_or_remove_relation_rejects_shuffle_but_serves_others():
  accountant = ShuffleRdpAccountant(orders=ORDERS,
                                    neighboring_relation=ADD_OR_REMOVE_ONE)
  assert not accountant.supports(EVENT)
  with pytest.raises(privacy_accountant.UnsupportedEventError,
                     match='REPLACE_ONE'):
    accountant.compose(EVENT)
  poisson = dp_accounting.PoissonSampledDpEvent(
      0.01, dp_accounting.GaussianDpEvent(1.0))
  accountant.compose(poisson, 100)
  reference = rdp_privacy_accountant.RdpAccountant(orders=ORDERS).compose(
      poisson, 100)
  np.testing.assert_array_equal(accountant.rdp, reference.rdp)


def test_poisson_gaussian_under_replace_one_says_what_to_use_instead():
  # dp_accounting's message alone named the relation and no way forward.
  poisson = dp_accounting.PoissonSampledDpEvent(
      0.01, dp_accounting.GaussianDpEvent(1.0))
  ledger = dp_accounting.ComposedDpEvent(
      [EVENT, dp_accounting.SelfComposedDpEvent(poisson, 3)])
  with pytest.raises(privacy_accountant.UnsupportedEventError) as error:
    ShuffleRdpAccountant(orders=ORDERS).compose(ledger)
  for words in ('REPLACE_ONE', 'ShufflePldAccountant', 'ADD_OR_REMOVE_ONE',
                'SampledWithoutReplacementDpEvent'):
    assert words in str(error.value)


def test_orders_at_or_below_one_are_rejected_for_shuffle_events():
  accountant = ShuffleRdpAccountant(orders=[1.0, 2.0])
  assert not accountant.supports(EVENT)
  assert accountant.supports(dp_accounting.GaussianDpEvent(1.0))


def test_supports_has_no_side_effects():
  accountant = ShuffleRdpAccountant(orders=ORDERS)
  assert accountant.supports(dp_accounting.ComposedDpEvent([EVENT, EVENT]))
  assert np.all(accountant.rdp == 0)
  assert not accountant.contributions


def test_calibration_with_dp_accounting():
  """dp_accounting's calibrate_dp_mechanism works with the subclass."""
  epsilon0 = dp_accounting.calibrate_dp_mechanism(
      lambda: ShuffleRdpAccountant(orders=ORDERS),
      lambda eps0: dp_accounting.SelfComposedDpEvent(
          ShuffleEvent(1000, eps0), 100),
      target_epsilon=3.0, target_delta=1e-6,
      bracket_interval=dp_accounting.ExplicitBracketInterval(0.01, 5.0),
      tol=1e-3)
  achieved = ShuffleRdpAccountant(orders=ORDERS).compose(
      ShuffleEvent(1000, epsilon0), 100).get_epsilon(1e-6)
  assert achieved <= 3.0
  assert epsilon0 > 0.5


def test_huge_population_and_extreme_epsilons_stay_finite():
  for num_users, local_epsilon in [(10**9, 0.01), (10**9, 20.0), (1, 20.0),
                                   (10**10, 1.0), (2, 0.01)]:
    accountant = ShuffleRdpAccountant(orders=[2.0, 64.0, 1024.0])
    accountant.compose(ShuffleEvent(num_users, local_epsilon), 10**5)
    assert np.all(np.isfinite(accountant.rdp))
    assert np.all(accountant.rdp >= 0)
    # RDP conversion can exceed basic composition only by its log(1/delta)
    # overhead (order 1024: 14 / 1023 per unit of order spacing).
    assert np.isfinite(accountant.get_epsilon(1e-6))
    assert accountant.get_epsilon(1e-6) <= 10**5 * local_epsilon + 1.0
