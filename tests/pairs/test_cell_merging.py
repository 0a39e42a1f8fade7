"""Outputs merged per grid cell leave the connect-the-dots PMF unchanged.

See CTD-MERGE-ATOMS.
"""

import numpy as np
import pytest

from shuffle_accountants import randomizers
from shuffle_accountants.pairs import blanket
from shuffle_accountants.pairs import clone_pairs
from shuffle_accountants.pld import discrete


def _pairs(num_users, discretization):
  table = randomizers.OptimizedUnaryEncoding(100, 2.0).blanket()
  return [
      (clone_pairs.clone_pair_pld_atoms(num_users, 1.0, 1e-3),
       clone_pairs.clone_pair_pld_atoms(num_users, 1.0, 1e-3,
                                        discretization=discretization)),
      (blanket.blanket_pld_atoms(num_users, table, 1e-3),
       blanket.blanket_pld_atoms(num_users, table, 1e-3, discretization)),
      # Thousands of clone counts, one log-odds each.
      (clone_pairs.krr_weak_pld_atoms(num_users, 2.0, 10, 1e-3),
       clone_pairs.krr_weak_pld_atoms(num_users, 2.0, 10, 1e-3,
                                      discretization)),
  ]


@pytest.mark.parametrize('num_users', [2, 300, 10**6])
@pytest.mark.parametrize('discretization', [1e-4, 3e-3])
def test_merged_atoms_discretize_to_the_same_pmf(num_users, discretization):
  fewer = []
  for exact, merged in _pairs(num_users, discretization):
    fewer.append(merged.losses.size < exact.losses.size)
    first_pmf = discrete.connect_the_dots(exact, discretization)
    second_pmf = discrete.connect_the_dots(merged, discretization)
    assert (second_pmf.lower_index, second_pmf.upper_index) == (
        first_pmf.lower_index, first_pmf.upper_index)
    # The same PMF up to rounding; a cell's split beta cancels (P - e^{id} Q
    # over 1 - e^-d), so compare what is read, delta at every grid point:
    # within connect-the-dots' relative safety margin (1e-10).
    first, last = first_pmf.lower_index, first_pmf.upper_index
    expected = discrete.grid_profile(first_pmf, first, last)
    got = discrete.grid_profile(second_pmf, first, last)
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(second_pmf.probs.sum(), first_pmf.probs.sum(),
                               rtol=1e-12)
    assert second_pmf.infinity_mass == pytest.approx(
        first_pmf.infinity_mass, rel=1e-12, abs=1e-18)
  # The test must exercise merging: the clone pair's where outputs are
  # dense on the grid, the blanket's and weak k-RR's across their log-odds
  # (GRID-PAIRS-FAST) always.
  assert fewer == [num_users == 10**6, True, True]


def test_runs_whose_binomial_underflows_are_dropped_not_nan():
  # The DOMINATING-ROUNDS rows above the check-in window reach clone counts
  # whose Bin(m, 1/2) terms underflow in whole grid cells; such a run has no P
  # or Q mass.
  from shuffle_accountants import CheckInEvent
  from shuffle_accountants import ShuffleRdpAccountant
  accountant = ShuffleRdpAccountant()
  accountant.compose(CheckInEvent(10**4, 0.05, local_epsilon=1.7), 10)
  epsilon = accountant.get_epsilon(1e-5)
  assert 0 < epsilon < 30
