"""Pins what `_upstream` relies on in dp_accounting (one test per accessor).

A dp_accounting upgrade that moves one of these internals fails here first;
`shuffle_accountants/_upstream.py` is then the one module to port.
"""

from importlib import metadata

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution
from dp_accounting.rdp import rdp_privacy_accountant
import numpy as np
import pytest

from shuffle_accountants import _upstream


def _laplace(sampling_prob=1.0):
  return privacy_loss_distribution.from_laplace_mechanism(
      1.0, value_discretization_interval=1e-2, sampling_prob=sampling_prob)


def test_checked_version_is_the_installed_one():
  assert metadata.version('dp_accounting') == _upstream.CHECKED_VERSION


def test_pld_pmfs_are_the_remove_and_add_pmfs():
  symmetric = _laplace()
  remove, add = _upstream.pld_pmfs(symmetric)
  assert remove is add
  assert isinstance(remove, pld_pmf.PLDPmf)
  subsampled = _laplace(0.5)  # asymmetric: a different PMF per relation
  remove, add = _upstream.pld_pmfs(subsampled)
  assert remove is not add
  rebuilt = privacy_loss_distribution.PrivacyLossDistribution(remove, add)
  assert rebuilt.get_delta_for_epsilon(0.1) == pytest.approx(
      subsampled.get_delta_for_epsilon(0.1), rel=0, abs=0)


def test_is_symmetric():
  assert _upstream.is_symmetric(_laplace())
  assert not _upstream.is_symmetric(_laplace(0.5))


def test_is_pessimistic():
  remove, _ = _upstream.pld_pmfs(_laplace())
  assert _upstream.is_pessimistic(remove)
  optimistic = privacy_loss_distribution.from_laplace_mechanism(
      1.0, value_discretization_interval=1e-2,
      pessimistic_estimate=False)
  assert not _upstream.is_pessimistic(_upstream.pld_pmfs(optimistic)[0])


def test_dense_pmf_fields_give_delta_as_dp_accounting_does():
  pmf = pld_pmf.create_pmf({-2: 0.25, 1: 0.5, 3: 0.2}, 0.1, 0.05, True)
  discretization, lower, probs, infinity_mass = _upstream.dense_pmf_fields(
      pmf.to_dense_pmf())
  assert (discretization, lower, infinity_mass) == (0.1, -2, 0.05)
  np.testing.assert_array_equal(probs, [0.25, 0, 0, 0.5, 0, 0.2])
  losses = (lower + np.arange(probs.size)) * discretization
  epsilon = 0.15
  delta = infinity_mass + np.sum(
      probs * np.maximum(0.0, 1 - np.exp(epsilon - losses)))
  assert delta == pytest.approx(pmf.get_delta_for_epsilon(epsilon), rel=1e-12)


def test_value_discretization_interval():
  accountant = pld_privacy_accountant.PLDAccountant(
      value_discretization_interval=0.003)
  assert _upstream.value_discretization_interval(accountant) == 0.003


def test_forget_parent_pld_makes_the_parent_fail_loudly():
  accountant = pld_privacy_accountant.PLDAccountant()
  _upstream.forget_parent_pld(accountant)
  with pytest.raises(AttributeError):
    accountant.get_epsilon(1e-6)


def test_compose_parent_pld_event_checks_and_composes():
  accountant = pld_privacy_accountant.PLDAccountant()
  event = dp_event.GaussianDpEvent(2.0)
  assert _upstream.compose_parent_pld_event(accountant, event, 3,
                                            False) is None
  assert accountant.get_epsilon(1e-6) == 0  # checked, not composed
  assert _upstream.compose_parent_pld_event(accountant, event, 3,
                                            True) is None
  expected = pld_privacy_accountant.PLDAccountant().compose(event, 3)
  assert accountant.get_epsilon(1e-6) == expected.get_epsilon(1e-6)
  error = _upstream.compose_parent_pld_event(
      accountant, dp_event.UnsupportedDpEvent(), 1, False)
  assert error is not None and error.invalid_event is not None


def test_parent_pld_builder_returns_the_event_pld_alone():
  builder = _upstream.ParentPldBuilder(
      value_discretization_interval=1e-3)
  event = dp_event.GaussianDpEvent(2.0)
  built, non_dp = builder.build(event, 2)
  assert not non_dp
  expected = pld_privacy_accountant.PLDAccountant(
      value_discretization_interval=1e-3).compose(event, 2)
  # The accountant then composes it into its identity PLD (round-off only).
  assert built.get_epsilon_for_delta(1e-6) == pytest.approx(
      expected.get_epsilon(1e-6), rel=1e-9)
  assert builder.build(dp_event.NoOpDpEvent(), 1) == (None, False)
  assert builder.build(dp_event.NonPrivateDpEvent(), 1) == (None, True)


def test_add_rdp_moves_what_the_accountant_reports():
  accountant = rdp_privacy_accountant.RdpAccountant([2.0, 4.0])
  _upstream.add_rdp(accountant, np.array([0.5, 1.0]))
  np.testing.assert_array_equal(accountant.rdp, [0.5, 1.0])
  epsilon, order = accountant.get_epsilon_and_optimal_order(1e-3)
  expected = rdp_privacy_accountant.compute_epsilon(
      [2.0, 4.0], [0.5, 1.0], 1e-3)
  assert (epsilon, order) == expected[:2]


def test_compose_parent_rdp_event_checks_and_composes():
  accountant = rdp_privacy_accountant.RdpAccountant([2.0, 4.0])
  event = dp_event.GaussianDpEvent(2.0)
  assert _upstream.compose_parent_rdp_event(accountant, event, 3,
                                            False) is None
  np.testing.assert_array_equal(accountant.rdp, [0.0, 0.0])
  assert _upstream.compose_parent_rdp_event(accountant, event, 3,
                                            True) is None
  np.testing.assert_allclose(accountant.rdp, 3 * np.array([2.0, 4.0]) / 8,
                             rtol=1e-15)
  error = _upstream.compose_parent_rdp_event(
      accountant, dp_event.UnsupportedDpEvent(), 1, False)
  assert error is not None and error.invalid_event is not None


@pytest.mark.parametrize('event, relation', [
    (dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.0)),
     privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE),
    (dp_event.SampledWithoutReplacementDpEvent(
        100, 10, dp_event.GaussianDpEvent(1.0)),
     privacy_accountant.NeighboringRelation.REPLACE_ONE)])
def test_sampled_rdp_is_the_parents_floats_once_computed(event, relation):
  """The kept one-round RDP of a sampled Gaussian adds what the parent adds
  (bit for bit), also on the second call; a bad relation stays an error."""
  orders = [1.5, 2.0, 7.0]
  for _ in range(2):
    ours = rdp_privacy_accountant.RdpAccountant(orders, relation)
    assert _upstream.compose_parent_rdp_event(ours, event, 3, True) is None
    parents = rdp_privacy_accountant.RdpAccountant(orders, relation)
    parents.compose(event, 3)
    np.testing.assert_array_equal(ours.rdp, parents.rdp)
  other = next(r for r in privacy_accountant.NeighboringRelation
               if r not in (relation,
                            privacy_accountant.NeighboringRelation
                            .REPLACE_SPECIAL))
  wrong = rdp_privacy_accountant.RdpAccountant(orders, other)
  assert _upstream.compose_parent_rdp_event(wrong, event, 1, True) is not None
  np.testing.assert_array_equal(wrong.rdp, np.zeros(3))


def test_effective_gaussian_noise_multiplier():
  gaussians = dp_event.ComposedDpEvent([
      dp_event.GaussianDpEvent(1.0),
      dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(2.0), 4)])
  assert _upstream.effective_gaussian_noise_multiplier(
      gaussians) == pytest.approx(2**-0.5, rel=1e-15)
  laplace = dp_event.LaplaceDpEvent(1.0)
  assert _upstream.effective_gaussian_noise_multiplier(
      dp_event.ComposedDpEvent([gaussians, laplace])) is laplace
