"""Every upper bound >= the exact worst case; every lower bound <= it."""

import numpy as np
import pytest

import brute_force
from shuffle_accountants.rdp import clone
from shuffle_accountants.rdp import generic
from shuffle_accountants.rdp import girgis
from shuffle_accountants.rdp import shuffle_round

ORDERS = np.array([1.5, 2.0, 3.0, 4.5, 8.0, 16.0])
INTEGER_ORDERS = np.array([2.0, 3.0, 4.0, 8.0, 16.0])


def upper_bounds(num_users, local_epsilon, orders):
  yield 'clone', clone.clone_pair_rdp(num_users, local_epsilon, orders)
  yield 'ub2', girgis.girgis_ub2(num_users, local_epsilon, orders)
  yield 'ub1', generic.at_real_orders(
      lambda o: girgis.girgis_ub1(num_users, local_epsilon, o), orders)
  yield 'ub_mix', generic.at_real_orders(
      lambda o: girgis.girgis_ub_mix(num_users, local_epsilon, o), orders)
  yield 'cap', generic.pure_dp_rdp_cap(local_epsilon, orders)
  yield 'accountant', shuffle_round.shuffle_rdp_upper_bound(
      num_users, local_epsilon, orders).rdp


@pytest.mark.parametrize('num_users,num_categories',
                         [(1, 2), (2, 2), (3, 2), (4, 2), (6, 2), (2, 3),
                          (3, 3), (4, 3)])
@pytest.mark.parametrize('local_epsilon', [0.3, 1.0, 2.5])
def test_upper_bounds_dominate_every_shuffled_krr_pair(
    num_users, num_categories, local_epsilon):
  truth = brute_force.worst_case_shuffled_krr_rdp(
      num_users, num_categories, local_epsilon, ORDERS)
  for name, bound in upper_bounds(num_users, local_epsilon, ORDERS):
    assert np.all(bound >= truth * (1 - 1e-12)), (name, bound, truth)
  # The cap is binary RR's exact Renyi divergence (PURE-DP-RDP-CAP),
  # computed here from RR's two output laws; the accountant stays below it.
  rr = brute_force.binary_rr_rdp(local_epsilon, ORDERS)
  np.testing.assert_allclose(generic.pure_dp_rdp_cap(local_epsilon, ORDERS),
                             rr, rtol=1e-9)
  accountant = shuffle_round.shuffle_rdp_upper_bound(num_users, local_epsilon,
                                                     ORDERS).rdp
  assert np.all(accountant <= rr * (1 + 1e-9))


@pytest.mark.parametrize('num_users', [2, 3, 5, 6])
@pytest.mark.parametrize('local_epsilon', [0.3, 1.0, 2.5])
def test_lower_bounds_below_binary_rr_worst_case(num_users, local_epsilon):
  truth = brute_force.worst_case_shuffled_krr_rdp(num_users, 2, local_epsilon,
                                                  INTEGER_ORDERS)
  lower_bounds = {
      'girgis_lb': girgis.girgis_lower_bound(num_users, local_epsilon,
                                             INTEGER_ORDERS),
      'cor2': girgis.girgis_cor2_lower_bound(num_users, local_epsilon,
                                             INTEGER_ORDERS),
      'all_equal': girgis.binary_rr_all_equal_pair_rdp_lower_bound(
          num_users, local_epsilon, INTEGER_ORDERS),
  }
  for name, bound in lower_bounds.items():
    assert np.all(bound <= truth * (1 + 1e-9)), (name, bound, truth)


@pytest.mark.parametrize('num_users,local_epsilon',
                         [(1, 1.0), (2, 0.5), (7, 3.0), (40, 1.0), (150, 0.2),
                          (400, 2.0), (1000, 0.5)])
def test_clone_rdp_equals_its_definition(num_users, local_epsilon):
  orders = np.array([1.1, 2.0, 2.5, 7.0, 30.0, 120.0])
  truth = brute_force.clone_pair_rdp(num_users, local_epsilon, orders)
  exactish = clone.clone_pair_rdp(num_users, local_epsilon, orders,
                                   tolerance=1e-13)
  np.testing.assert_allclose(exactish, truth, rtol=1e-9)
  assert np.all(exactish >= truth)
  default = clone.clone_pair_rdp(num_users, local_epsilon, orders)
  assert np.all(default >= truth)
  np.testing.assert_allclose(default, truth, rtol=1e-6)


@pytest.mark.parametrize('num_users,local_epsilon',
                         [(2, 0.5), (7, 3.0), (40, 1.0), (150, 0.2),
                          (400, 2.0)])
def test_thinned_clone_candidate_above_its_definition(num_users,
                                                      local_epsilon):
  """On a dense grid the clone candidate is evaluated at every other order
  and interpolated (RDP-INTERP): still >= the exact clone-pair divergence,
  and equal to it up to the interpolation at the evaluated orders."""
  orders = np.array([1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 11.0,
                     16.0, 22.0, 32.0, 48.0, 64.0, 96.0, 128.0])
  bound = shuffle_round.shuffle_rdp_upper_bound(num_users, local_epsilon,
                                                orders)
  truth = brute_force.clone_pair_rdp(num_users, local_epsilon, orders)
  thinned = bound.candidates[shuffle_round.CLONE]
  assert np.all(thinned >= truth)
  np.testing.assert_allclose(thinned[::2], truth[::2], rtol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize('num_users,local_epsilon',
                         [(2000, 1.0), (2000, 4.0)])
def test_clone_rdp_at_the_enumeration_limit(num_users, local_epsilon):
  orders = np.array([2.0, 16.0, 256.0])
  truth = brute_force.clone_pair_rdp(num_users, local_epsilon, orders)
  value = clone.clone_pair_rdp(num_users, local_epsilon, orders,
                                tolerance=1e-13)
  assert np.all(value >= truth)
  np.testing.assert_allclose(value, truth, rtol=1e-9)


@pytest.mark.parametrize('num_users', [2, 10, 300])
@pytest.mark.parametrize('local_epsilon', [0.1, 1.0, 3.0])
def test_all_equal_pair_matches_enumeration(num_users, local_epsilon):
  forward, backward = brute_force.binary_rr_all_equal_rdp(
      num_users, local_epsilon, INTEGER_ORDERS)
  np.testing.assert_allclose(
      girgis.girgis_lower_bound(num_users, local_epsilon, INTEGER_ORDERS),
      forward, rtol=1e-8)
  both = girgis.binary_rr_all_equal_pair_rdp_lower_bound(
      num_users, local_epsilon, INTEGER_ORDERS)
  np.testing.assert_allclose(both, np.maximum(forward, backward), rtol=1e-8)
  # The reference itself is only accurate to ~1e-12 relative.
  assert np.all(both <= np.maximum(forward, backward) * (1 + 1e-10))


@pytest.mark.parametrize('population,sample', [(4, 2), (5, 3), (6, 1)])
def test_subsampled_bound_dominates_enumerated_sampling(population, sample):
  """Hidden sample of `sample` users out of `population`, binary RR."""
  import itertools
  local_epsilon = 1.5
  orders = np.array([2.0, 3.0, 8.0])
  bound = shuffle_round.subsampled_shuffle_rdp_upper_bound(
      population, sample, local_epsilon, orders).rdp
  worst = np.zeros(orders.size)
  subsets = list(itertools.combinations(range(population), sample))
  for rest in itertools.product(range(2), repeat=population - 1):
    laws = []
    for changed in (0, 1):
      data = rest + (changed,)
      law = {}
      for subset in subsets:
        part = brute_force.shuffled_histogram([data[i] for i in subset], 2,
                                              local_epsilon)
        for key, mass in part.items():
          law[key] = law.get(key, 0.0) + mass / len(subsets)
      laws.append(law)
    keys = sorted(set(laws[0]) | set(laws[1]))
    p = [laws[0].get(k, 0.0) for k in keys]
    q = [laws[1].get(k, 0.0) for k in keys]
    worst = np.maximum(worst, [max(brute_force.renyi(p, q, o),
                                   brute_force.renyi(q, p, o))
                               for o in orders])
  assert np.all(bound >= worst), (bound, worst)
