"""Property-based checks of orderings and monotonicity (hypothesis)."""

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np

import brute_force
from shuffle_accountants.rdp import girgis
from shuffle_accountants.rdp import shuffle_round

ORDERS = np.array([1.5, 2.0, 4.0, 16.0, 100.0])
users = st.integers(min_value=1, max_value=10**7)
epsilons = st.floats(min_value=0.01, max_value=12.0)
SETTINGS = settings(max_examples=25, deadline=None)


def bound(num_users, local_epsilon):
  return shuffle_round.shuffle_rdp_upper_bound(num_users, local_epsilon,
                                             ORDERS).rdp


@SETTINGS
@given(users, epsilons)
def test_finite_nonnegative_and_below_the_cap(num_users, local_epsilon):
  value = bound(num_users, local_epsilon)
  assert np.all(np.isfinite(value)) and np.all(value >= 0)
  # A shuffle of eps0-LDP reports is eps0-DP, so binary RR's own Renyi
  # divergence, computed here from its two output laws, caps it
  # (PURE-DP-RDP-CAP; the library's cap carries a 1e-10 safety margin).
  assert np.all(value <= brute_force.binary_rr_rdp(local_epsilon, ORDERS)
                * (1 + 1e-9))
  lower = girgis.binary_rr_all_equal_pair_rdp_lower_bound(
      num_users, local_epsilon, ORDERS)
  assert np.all(lower <= value * (1 + 1e-9))


@SETTINGS
@given(users, st.floats(min_value=1.0, max_value=4.0), epsilons)
def test_non_increasing_in_num_users(num_users, factor, local_epsilon):
  more = int(num_users * factor)
  # Grouping makes the computed bound monotone only up to its block width.
  assert np.all(bound(more, local_epsilon)
                <= bound(num_users, local_epsilon) * (1 + 2e-3))


@SETTINGS
@given(users, epsilons, st.floats(min_value=1.0, max_value=2.0))
def test_non_decreasing_in_local_epsilon(num_users, local_epsilon, factor):
  larger = min(local_epsilon * factor, 12.0)
  assert np.all(bound(num_users, larger) * (1 + 2e-3)
                >= bound(num_users, local_epsilon))


@SETTINGS
@given(users, epsilons)
def test_non_decreasing_in_the_order(num_users, local_epsilon):
  value = bound(num_users, local_epsilon)
  assert np.all(np.diff(value) >= -1e-12 * value[1:])
