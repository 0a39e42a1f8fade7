"""delta never rounds below the truth; one answer per ledger (issue 32, item 3).

The issue's ledger: shuffled binary randomized response, n = 1375,
eps0 = 5.73e-4, 381 184 rounds. Its loss reaches 218, so delta(epsilon) > 0
for every epsilon below that; the floor is the delta of one neighbouring
pair of the mechanism (`brute_force.binary_rr_pair_log_delta_floor`).
"""

import math

from dp_accounting.rdp import rdp_privacy_accountant
import numpy as np
import pytest

import brute_force
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.rdp import accountant as rdp_accountant

NUM_USERS, LOCAL_EPSILON, COUNT = 1375, 5.73e-4, 381184
EVENT = ShuffleEvent(NUM_USERS, LOCAL_EPSILON, num_categories=2)


@pytest.fixture(scope='module')
def rdp():
  return ShuffleRdpAccountant().compose(EVENT, COUNT)


@pytest.fixture(scope='module')
def pld():
  return ShufflePldAccountant().compose(EVENT, COUNT)


def _floor(epsilon):
  return brute_force.binary_rr_pair_log_delta_floor(
      NUM_USERS, LOCAL_EPSILON, COUNT, epsilon)


@pytest.mark.parametrize('epsilon', [0.5, 1.0, 50.0, 200.0])
def test_rdp_delta_is_positive_where_the_truth_is(rdp, epsilon):
  # Was 0.0 at epsilon = 0.5: dp_accounting exponentiates log delta ~ -1e3.
  assert _floor(epsilon) > -math.inf  # the truth is positive here
  delta = rdp.get_delta(epsilon)
  assert delta > 0
  assert math.log(delta) >= _floor(epsilon)


def test_rdp_delta_rounds_up_from_dp_accounting():
  orders = np.array(rdp_accountant.DEFAULT_ORDERS, dtype=float)
  rng = np.random.default_rng(0)
  for _ in range(50):
    rdp_values = rng.uniform(1e-6, 3.0, size=orders.size) * rng.uniform(
        0.01, 1.0)
    epsilon = float(rng.uniform(0.0, 5.0))
    reference, _ = rdp_privacy_accountant.compute_delta(orders, rdp_values,
                                                        epsilon)
    log_delta, _ = rdp_accountant.log_delta_upper_bound(orders, rdp_values,
                                                        epsilon)
    delta = rdp_accountant.exp_rounded_up(log_delta)
    assert reference <= delta <= reference * (1 + 1e-9) + 1e-300


def test_exp_rounded_up_never_reaches_zero():
  assert rdp_accountant.exp_rounded_up(-1e6) > 0
  assert rdp_accountant.exp_rounded_up(-math.inf) == 0.0
  for value in np.linspace(-740, 0, 37):
    assert rdp_accountant.exp_rounded_up(value) >= math.exp(value)


def test_pld_reports_the_smaller_certified_delta(pld, rdp):
  # The PLD alone: 5.1e-10 at epsilon = 0.1; RDP certifies 7.5e-28.
  assert pld.get_delta(0.1) <= rdp.get_delta(0.1)
  assert pld.get_delta(0.1) < 1e-20
  assert pld.get_delta(0.5) > 0


def test_pld_delta_and_epsilon_are_one_monotone_pair(pld):
  epsilons = [0.0, 0.01, 0.03, 0.05, 0.08, 0.0895, 0.09, 0.1, 0.2, 0.5, 5.0]
  deltas = [pld.get_delta(e) for e in epsilons]
  assert deltas == sorted(deltas, reverse=True)
  targets = [1e-3, 1e-6, 1e-8, 1e-9, 1e-10, 1e-12, 1e-20, 1e-30, 1e-100]
  answers = [pld.get_epsilon(d) for d in targets]
  assert answers == sorted(answers)
  for target, epsilon in zip(targets, answers):
    # The smallest epsilon whose delta is at most the target.
    assert pld.get_delta(epsilon) <= target * (1 + 1e-9)
    assert pld.get_delta(epsilon * (1 - 1e-6)) > target


def test_log_delta_of_zero_infinite_and_nan_divergences():
  orders = np.array([2.0, 3.0])
  bound = rdp_accountant.log_delta_upper_bound
  assert bound(orders, np.array([0.0, 0.5]), 1.0)[0] == -math.inf  # P = Q
  assert bound(orders, np.array([np.nan, np.nan]), 1.0)[0] == 0.0  # no claim
  assert bound(orders, np.array([np.inf, np.inf]), 1.0)[0] == 0.0
  assert bound(orders, np.array([np.inf, 1e-20]), 0.0)[0] > -math.inf
