"""Regression values of MATH.md sections 4.1 and 4.4 (computed there)."""

from dp_accounting.rdp import rdp_privacy_accountant
import numpy as np
import pytest

from shuffle_accountants.rdp import clone
from shuffle_accountants.rdp import girgis


@pytest.mark.parametrize('num_users,local_epsilon,order,ub1,ub2,cor2', [
    (10**4, 0.1, 100, 1.53351e-4, 2.46964e-4, 4.99181e-5),
    (10**4, 3.0, 100, 2.40174, None, 0.0232352),  # UB2 exceeds the cap
    (10**6, 3.0, 100, 0.183552, 1.47802, 8.68349e-4),
    (10**6, 0.5, 2, 8.41676e-7, 5.55076e-6, 2.55252e-7),
    (10**6, 0.5, 50, 2.36383e-5, 7.08005e-5, 6.38030e-6),
])
def test_girgis_point_values(num_users, local_epsilon, order, ub1, ub2, cor2):
  assert girgis.girgis_ub1(num_users, local_epsilon, [order])[0] == (
      pytest.approx(ub1, rel=1e-5))
  ub2_value = girgis.girgis_ub2(num_users, local_epsilon, [order])[0]
  if ub2 is None:  # capped by PURE-DP-RDP-CAP (~3)
    assert ub2_value == pytest.approx(3.0, abs=1e-3)
  else:
    assert ub2_value == pytest.approx(ub2, rel=1e-5)
  assert girgis.girgis_cor2_lower_bound(num_users, local_epsilon,
                                        [order])[0] == pytest.approx(
                                            cor2, rel=1e-5)


@pytest.mark.parametrize('num_users,local_epsilon,order,value', [
    (10, 0.5, 2, 0.0252049), (10, 0.5, 5, 0.0599757), (100, 1.0, 8, 0.0414570)])
def test_girgis_lower_bound_values(num_users, local_epsilon, order, value):
  assert girgis.girgis_lower_bound(num_users, local_epsilon, [order])[0] == (
      pytest.approx(value, rel=1e-5))


@pytest.mark.parametrize('rounds,local_epsilon,num_users,epsilon', [
    (10**4, 0.5, 10**6, 0.41527), (10**4, 2.0, 10**6, 5.38519),
    (10**5, 0.5, 10**6, 1.36842)])
def test_girgis_ub1_composed(rounds, local_epsilon, num_users, epsilon):
  orders = np.arange(2, 2001)
  rdp = rounds * girgis.girgis_ub1(num_users, local_epsilon, orders)
  value, _ = rdp_privacy_accountant.compute_epsilon(orders, rdp, 1e-6)
  assert value == pytest.approx(epsilon, rel=1e-4)


# MATH.md 4.4 (n = 1000): GIRGIS-LB, clone RDP (FMT21), GIRGIS-UB1, EFM19.
TABLE_4_4 = [
    (0.5, 2, 2.5522e-4, 3.9563e-4, 8.4206e-4, 0.012438),
    (0.5, 8, 1.0198e-3, 1.5825e-3, 5.0300e-3, 0.049754),
    (0.5, 32, 4.0627e-3, 6.3300e-3, 0.037025, 0.19901),
    (1.0, 2, 1.0856e-3, 2.3233e-3, 5.8857e-3, 0.6448),
    (1.0, 8, 4.3236e-3, 9.2938e-3, 0.059225, 2.5792),
    (2.0, 2, 5.5092e-3, 0.017220, 0.078112, 486.73),
    (2.0, 32, 0.079875, 0.29487, 1.5194, 7787.7),
    (3.0, 2, 0.017973, 0.067099, 0.9283, 2.37e5),
]


@pytest.mark.parametrize('local_epsilon,order,lb,clone_rdp,ub1,efm',
                         TABLE_4_4)
def test_clone_table(local_epsilon, order, lb, clone_rdp, ub1, efm):
  n = 1000
  lb_value = girgis.girgis_lower_bound(n, local_epsilon, [order])[0]
  clone_value = clone.clone_pair_rdp(n, local_epsilon, [order])[0]
  ub1_value = girgis.girgis_ub1(n, local_epsilon, [order])[0]
  assert lb_value == pytest.approx(lb, rel=2e-4)
  assert clone_value == pytest.approx(clone_rdp, rel=2e-4)
  assert ub1_value == pytest.approx(ub1, rel=2e-4)  # no row hits the cap
  assert girgis.efm19_rdp_baseline(n, local_epsilon, [order])[0] == (
      pytest.approx(efm, rel=1e-3))  # the table prints 2.37e5
  assert lb_value <= clone_value <= ub1_value
