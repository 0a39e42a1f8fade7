"""The BLANKET-TWO-LEVEL blanket pair: k-RR, one user exactly, mass accounting.

Its k-RR case is checked against KHH-KRR-WEAK.
"""

import math

import numpy as np
import pytest

from shuffle_accountants import randomizers
from shuffle_accountants.pairs import blanket
from shuffle_accountants.pairs import clone_pairs


def _profile(atoms, epsilon):
  return atoms.infinity_mass + float(np.sum(
      atoms.masses * np.maximum(0.0, -np.expm1(epsilon - atoms.losses))))


@pytest.mark.parametrize('num_users', [10, 1000, 10**5])
def test_krr_table_is_the_weak_pair_up_to_grouping(num_users):
  # BLANKET-TWO-LEVEL: the k-RR blanket is KHH-KRR-WEAK; the (s, V) labels are
  # coarser (pessimistic), so the profile is above it, and close once the
  # dropped target's share of V is small.
  table = randomizers.KRandomizedResponse(10, 1.0).blanket()
  ours = blanket.blanket_pld_atoms(num_users, table, 1e-3)
  weak = clone_pairs.krr_weak_pld_atoms(num_users, 1.0, 10)
  for epsilon in (0.01, 0.05, 0.2, 0.5):
    reference = _profile(weak, epsilon)
    assert _profile(ours, epsilon) >= reference * (1 - 1e-6) - 1e-15
    if num_users >= 1000:
      assert _profile(ours, epsilon) <= reference * 1.5 + 1e-12


@pytest.mark.parametrize('randomizer', [
    randomizers.OptimizedUnaryEncoding(10, 2.0),
    randomizers.HadamardResponse(10, 0.5),
    randomizers.SubsetSelection(10, 1.0, subset_size=3)])
def test_one_user_is_the_randomizer_itself(randomizer):
  # With n = 1 the view is the target's cell: loss +-eta on the single
  # cells, 0 elsewhere, exactly.
  table = randomizer.blanket()
  atoms = blanket.blanket_pld_atoms(1, table, 1e-3)
  e = math.exp(table.log_ratio)
  alpha = 1 / (1 + (e - 1) * (table.single_mass + table.double_mass))
  single = alpha * table.single_mass
  for epsilon in (0.0, 0.3 * table.log_ratio):
    exact = single * max(0.0, e - math.exp(epsilon))
    assert _profile(atoms, epsilon) == pytest.approx(exact, abs=1e-14)


@pytest.mark.parametrize('num_users', [2, 300, 10**6, 10**9])
def test_masses_sum_to_one_and_little_goes_to_infinity(num_users):
  table = randomizers.OptimizedLocalHashing(100, 1.0).blanket()
  atoms = blanket.blanket_pld_atoms(num_users, table, 1e-3)
  total = float(np.sum(atoms.masses)) + atoms.infinity_mass
  assert total == pytest.approx(1.0, abs=1e-9)
  assert atoms.infinity_mass < 1e-9
  assert np.all(atoms.masses >= 0) and np.all(np.isfinite(atoms.losses))


@pytest.mark.parametrize('local_epsilon', [100.0, 700.0])
@pytest.mark.parametrize('family', [randomizers.OptimizedUnaryEncoding,
                                    randomizers.HadamardResponse,
                                    randomizers.OptimizedLocalHashing])
def test_huge_local_epsilon_stays_finite_and_sound(family, local_epsilon):
  # e^eta near 1e304 once overflowed into NaN atoms that were dropped with
  # their mass (Hadamard response at eps0 = 700 reported epsilon 0).
  table = family(100, local_epsilon).blanket()
  atoms = blanket.blanket_pld_atoms(1000, table, 1e-3)
  assert np.all(np.isfinite(atoms.losses)) and np.all(atoms.masses >= 0)
  total = float(np.sum(atoms.masses)) + atoms.infinity_mass
  assert total == pytest.approx(1.0, abs=1e-9)
  # The target's own single-cell report is nearly certain to reveal it.
  assert _profile(atoms, 1.0) > 0.2


@pytest.mark.parametrize('num_users, double_rate, zero_rate, log_ratio', [
    (40, 0.1, 0.5, 2.0), (3000, 0.2, 0.3, 0.3), (20000, 0.05, 0.6, 0.2),
    (20000, 0.009, 0.47, 2.0)])
def test_weight_groups_are_stochastically_below_the_enumerated_law(
    num_users, double_rate, zero_rate, log_ratio):
  # GRID-PAIRS-FAST: the groups of V = z + e^eta t (t, z trinomial counts) are
  # computed over blocks of t, each at its worst end; P[V < end] from them must
  # be at least the exact one, enumerated here over every t with scipy's
  # binomial.
  from scipy import stats
  ends, masses, infinity = blanket._common_weight_groups(
      num_users, double_rate, zero_rate, log_ratio, 1e-3)
  assert float(np.sum(masses)) + infinity == pytest.approx(1.0, abs=1e-9)
  e = math.exp(log_ratio)
  t = np.arange(num_users + 1)
  t_pmf = stats.binom.pmf(t, num_users, double_rate)
  zero_given_t = zero_rate / (1 - double_rate)
  claimed = infinity + np.concatenate([[0.0], np.cumsum(masses)[:-1]])
  for end, upper in zip(ends, claimed):
    exact = float(np.sum(t_pmf * stats.binom.cdf(
        np.ceil(end - e * t) - 1, num_users - t, zero_given_t)))
    assert upper >= exact - 1e-12
  # Blocks of t do not make it loose: the median group barely moves.
  exact_median = float(np.sum(t_pmf * stats.binom.cdf(
      np.ceil(ends[len(ends) // 2] - e * t) - 1, num_users - t, zero_given_t)))
  assert claimed[len(ends) // 2] <= exact_median + 0.05
