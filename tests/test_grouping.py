"""Grouping of similar rounds, batched PLD composition and RDP order extensions.

Grouping and caching may only make epsilon larger (never smaller) than the
ungrouped computation; the batched FFT must equal pairwise composition.
"""

from dp_accounting import dp_event
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np
import pytest

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.core import _grouping
from shuffle_accountants.pld import composition
from shuffle_accountants.pld import discrete
from shuffle_accountants.rdp import accountant as rdp_accountant


def _daily_rounds(seed, count, low=1e5, high=1e7):
  rng = np.random.default_rng(seed)
  return [int(n) for n in np.exp(rng.uniform(np.log(low), np.log(high),
                                             count))]


def test_representative_has_fewest_users_and_highest_rate_of_its_bin():
  grouping = _grouping.Grouping(0.01)
  # All in the bins [1.01^1157, 1.01^1158) of n, [1.005^-924, 1.005^-923) of
  # gamma.
  rounds = [CheckInEvent(100_500, 0.010001, 1.0),
            CheckInEvent(100_100, 0.010001, 1.0),
            CheckInEvent(100_900, 0.010003, 1.0)]
  for event in rounds:
    grouping.observe(event)
  for event in rounds:
    assert grouping.representative(event) == CheckInEvent(100_100, 0.010003,
                                                           1.0)
  # A round in another bin, or differing otherwise, stays itself.
  far = CheckInEvent(200_000, 0.01, 1.0)
  assert grouping.representative(far) == far
  other_epsilon = CheckInEvent(100_500, 0.01, 2.0)
  grouping.observe(other_epsilon)
  assert grouping.representative(other_epsilon) == other_epsilon


def test_grouped_ledger_merges_counts_and_keeps_other_events():
  ledger = dp_event.ComposedDpEvent([
      ShuffleEvent(1000, 1.0), dp_event.SelfComposedDpEvent(
          ShuffleEvent(1005, 1.0), 3), dp_event.GaussianDpEvent(2.0),
      dp_event.NoOpDpEvent(), ShuffleEvent(1003, 1.0, num_categories=3)])
  grouped = _grouping.grouped_ledger(ledger, 0.01)
  assert grouped == dp_event.ComposedDpEvent([
      dp_event.SelfComposedDpEvent(ShuffleEvent(1000, 1.0), 4),
      ShuffleEvent(1003, 1.0, num_categories=3),
      dp_event.GaussianDpEvent(2.0)])
  assert _grouping.grouped_ledger(ledger, 0.0) == dp_event.ComposedDpEvent([
      ShuffleEvent(1000, 1.0),
      dp_event.SelfComposedDpEvent(ShuffleEvent(1005, 1.0), 3),
      ShuffleEvent(1003, 1.0, num_categories=3),
      dp_event.GaussianDpEvent(2.0)])


@pytest.mark.parametrize('accountant_class', [ShufflePldAccountant,
                                              ShuffleRdpAccountant])
def test_grouping_never_lowers_epsilon_and_costs_little(accountant_class):
  rounds = _daily_rounds(0, 40, 1e4, 1e5)
  values = {}
  for step in (0.0, 0.01, 0.1):
    accountant = accountant_class(relative_grouping=step)
    for num_users in rounds:
      accountant.compose(ShuffleEvent(num_users, 1.0))
    values[step] = accountant.get_epsilon(1e-6)
  assert values[0.0] <= values[0.01] <= values[0.0] * 1.005
  assert values[0.0] <= values[0.1]


def test_checkin_grouping_never_lowers_epsilon():
  rng = np.random.default_rng(1)
  rates = rng.uniform(0.009, 0.011, 12)
  values = {}
  for step in (0.0, 0.02):
    accountant = ShufflePldAccountant(relative_grouping=step)
    for rate, num_users in zip(rates, _daily_rounds(1, 12, 5e3, 6e3)):
      accountant.compose(CheckInEvent(num_users, float(rate), 1.0))
    values[step] = accountant.get_epsilon(1e-6)
  assert values[0.0] <= values[0.02] <= values[0.0] * 1.01


def test_homogeneous_ledger_is_accounted_exactly():
  event = ShuffleEvent(12_345, 0.7)
  grouped = ShufflePldAccountant().compose(event, 7)
  exact = ShufflePldAccountant(relative_grouping=0.0).compose(event, 7)
  assert grouped.get_epsilon(1e-6) == exact.get_epsilon(1e-6)
  assert [c.event for c in grouped.contributions] == [event]


def test_rdp_contribution_says_what_it_was_accounted_as():
  accountant = ShuffleRdpAccountant()
  accountant.compose(ShuffleEvent(10_000, 1.0))
  accountant.compose(ShuffleEvent(10_020, 1.0))  # same bin: 1.01^925...926
  accountant.compose(ShuffleEvent(9_990, 1.0))
  assert [c.accounted_as.num_users for c in accountant.contributions] == [
      10_000, 10_000, 9_990]
  assert [c.event.num_users for c in accountant.contributions] == [
      10_000, 10_020, 9_990]


@settings(max_examples=15, deadline=None)
@given(counts=st.lists(st.integers(0, 40), min_size=1, max_size=4),
       seed=st.integers(0, 1000))
def test_batched_composition_equals_pairwise(counts, seed):
  rng = np.random.default_rng(seed)
  plds = []
  for _ in counts:
    probs = rng.dirichlet(np.ones(rng.integers(1, 30))) * 0.99
    pmf = discrete.GridPmf(1e-2, int(rng.integers(-20, 20)), probs, 0.01)
    plds.append(composition.to_privacy_loss_distribution(pmf))
  batched = composition.compose_all(list(zip(plds, counts)))
  reference = None
  for pld, count in zip(plds, counts):
    for _ in range(count):
      reference = pld if reference is None else reference.compose(pld, 0.0)
  for epsilon in (0.0, 0.05, 0.3, 1.0):
    expected = 0.0 if reference is None else reference.get_delta_for_epsilon(
        epsilon)
    got = composition.DirectProfile(batched).delta(epsilon)
    assert got >= expected - 1e-12
    assert got == pytest.approx(expected, abs=1e-9)


def test_rdp_orders_extend_only_when_the_best_order_is_the_largest():
  small = ShuffleRdpAccountant().compose(ShuffleEvent(1000, 1.0))
  small.get_epsilon(1e-6)
  assert small._extensions == []
  large = ShuffleRdpAccountant().compose(ShuffleEvent(10**7, 0.3))
  fixed = ShuffleRdpAccountant(rdp_accountant.DEFAULT_ORDERS).compose(
      ShuffleEvent(10**7, 0.3))
  epsilon, order = large.get_epsilon_and_optimal_order(1e-6)
  assert order > max(rdp_accountant.DEFAULT_ORDERS)
  assert epsilon < fixed.get_epsilon(1e-6) / 5
  assert large.get_delta(epsilon) <= 1e-6 * (1 + 1e-9)
  assert large.explain(1e-6)[0]['order'] == order


def test_fixed_grid_composes_at_once_and_says_when_it_is_too_fine():
  accountant = ShufflePldAccountant(value_discretization_interval=1e-7)
  with pytest.raises(ValueError, match='value_discretization_interval'):
    accountant.compose(ShuffleEvent(10**6, 1.0), 10**9)
  # Automatic grids choose a coarser spacing for the same ledger.
  automatic = ShufflePldAccountant().compose(ShuffleEvent(10**6, 1.0), 10**9)
  assert np.isfinite(automatic.get_epsilon(1e-6))


@pytest.mark.parametrize('accountant_class', [ShufflePldAccountant,
                                              ShuffleRdpAccountant])
@pytest.mark.parametrize('value', [-0.01, 0.5, float('nan'), '0.01', True])
def test_relative_grouping_is_validated(accountant_class, value):
  with pytest.raises((ValueError, TypeError), match='relative_grouping'):
    accountant_class(relative_grouping=value)
