"""Peers' bug reports, replayed against our accountants (issue 48).

Each test cites the report it replays. The scenario is the report's; the
assertion is what the reporter expected and did not get.
"""

import math

import dp_accounting
import pytest

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant

ACCOUNTANTS = [ShufflePldAccountant, ShuffleRdpAccountant]


def _poisson_gaussian(accountant_type, rate, sigma, steps):
  # Add/remove-one, the relation of the reports (PRV, Opacus).
  accountant = accountant_type(
      neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
  accountant.compose(dp_accounting.PoissonSampledDpEvent(
      rate, dp_accounting.GaussianDpEvent(sigma)), steps)
  return accountant


@pytest.mark.parametrize('accountant_type', ACCOUNTANTS)
def test_prv_accountant_17_small_delta_is_finite_and_monotone(
    accountant_type):
  # microsoft/prv_accountant#17: q = 0.00033, sigma = 4, 10,000 steps; PRV
  # gave 0.156 at delta = 1.1e-18 and 3.9 at 1.13e-18 (epsilon jumping up
  # as delta grows).
  accountant = _poisson_gaussian(accountant_type, 0.00033, 4.0, 10_000)
  deltas = [1.1e-18, 1.11e-18, 1.12e-18, 1.13e-18]
  epsilons = [accountant.get_epsilon(delta) for delta in deltas]
  assert all(math.isfinite(epsilon) and 0 < epsilon < 5
             for epsilon in epsilons)
  assert all(later <= earlier for earlier, later in zip(epsilons,
                                                        epsilons[1:]))


@pytest.mark.slow
@pytest.mark.parametrize('accountant_type', ACCOUNTANTS)
def test_prv_accountant_42_large_rate_gives_an_answer(accountant_type):
  # microsoft/prv_accountant#42: q = 0.2, sigma = 1, 10 steps, delta = 1e-5
  # raised instead of answering.
  epsilon = _poisson_gaussian(accountant_type, 0.2, 1.0, 10).get_epsilon(
      1e-5)
  assert math.isfinite(epsilon) and epsilon > 0


@pytest.mark.parametrize('accountant_type', ACCOUNTANTS)
def test_opacus_844_epsilon_is_never_negative(accountant_type):
  # meta-pytorch/opacus#844: a negative epsilon was reported; epsilon >= 0
  # by definition, at every delta.
  accountant = _poisson_gaussian(accountant_type, 0.01, 2.0, 100)
  for delta in (0.5, 0.9, 0.999999):
    assert accountant.get_epsilon(delta) >= 0.0


@pytest.mark.slow
@pytest.mark.parametrize('target_epsilon', [10.0, 0.5])
def test_opacus_775_and_flamby_301_calibration_succeeds(target_epsilon):
  # meta-pytorch/opacus#775: calibrating sigma for epsilon = 10 failed;
  # owkin/FLamby#301: make_private_with_epsilon (get_noise_multiplier)
  # raised "Discrete mean differs significantly from continuous mean" in
  # FLamby's DP example. Through Opacus' get_noise_multiplier with our
  # accountants the search ends and meets its target.
  pytest.importorskip('opacus')
  from opacus.accountants.utils import create_accountant
  from opacus.accountants.utils import get_noise_multiplier

  from shuffle_accountants.adapters import opacus as adapter
  name = adapter.RDP_MECHANISM
  sigma = get_noise_multiplier(target_epsilon=target_epsilon,
                               target_delta=1e-5, sample_rate=0.05,
                               steps=200, accountant=name, num_users=10**4)
  assert math.isfinite(sigma) and sigma > 0
  accountant = create_accountant(name)
  accountant.history = [(sigma, 0.05, 200)]
  assert 0 <= accountant.get_epsilon(1e-5, num_users=10**4) <= target_epsilon
