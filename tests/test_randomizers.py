"""Randomizer catalogue: closed forms against matrices, and every pair against
brute force.

The brute force (tests/brute_force.py) builds each randomizer's matrix from
its published definition and enumerates the exact shuffled output law of
every replace-one dataset pair; every certified profile must lie above the
worst case at every epsilon, and every lower bound below it.
"""

import itertools
import math

import numpy as np
import pytest

import brute_force
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pld import accountant as pld_accountant
from shuffle_accountants.pld import candidates
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import lower_bounds

_ROUNDING = 1e-12


def _profile(atoms, epsilons):
  return np.array([atoms.infinity_mass + float(np.sum(
      atoms.masses * np.maximum(0.0, -np.expm1(e - atoms.losses))))
                   for e in epsilons])


def _random_matrix(seed, inputs, outputs, two_level):
  rng = np.random.default_rng(seed)
  if two_level:  # k-RR with extra outputs: two levels, symmetric pairs
    weights = 1 + np.expm1(rng.uniform(0.3, 2.5)) * np.eye(inputs, outputs)
  else:
    weights = np.exp(rng.uniform(0, 1.5, size=(inputs, outputs)))
  return weights / weights.sum(axis=1, keepdims=True)


# (randomizer, matrix from the definition, largest n enumerated).
_CASES = [
    (randomizers.KRandomizedResponse(3, 1.5),
     brute_force.krr_matrix(3, 1.5), 6),
    (randomizers.KRandomizedResponse(4, 3.0),
     brute_force.krr_matrix(4, 3.0), 6),
    (randomizers.SymmetricUnaryEncoding(3, 2.0),
     brute_force.unary_encoding_matrix(3, 1 / (1 + math.exp(-1.0)),
                                       1 / (1 + math.exp(1.0))), 6),
    (randomizers.OptimizedUnaryEncoding(3, 1.0),
     brute_force.unary_encoding_matrix(3, 0.5, 1 / (math.e + 1)), 6),
    (randomizers.BinaryLocalHashing(3, 1.0),
     brute_force.local_hashing_matrix(3, 2, 1.0), 4),
    (randomizers.OptimizedLocalHashing(3, 1.0, hash_range=3),
     brute_force.local_hashing_matrix(3, 3, 1.0), 2),
    (randomizers.HadamardResponse(3, 2.0),
     brute_force.hadamard_matrix(3, 2.0), 6),
    (randomizers.HadamardResponse(4, 1.0),
     brute_force.hadamard_matrix(4, 1.0), 5),
    (randomizers.SubsetSelection(4, 1.0, 2),
     brute_force.subset_selection_matrix(4, 2, 1.0), 6),
]
_IDS = [f'{type(r).__name__}-{m.shape[0]}x{m.shape[1]}'
        for r, m, _ in _CASES]


@pytest.mark.parametrize('randomizer, matrix, largest', _CASES, ids=_IDS)
def test_closed_forms_match_the_matrix(randomizer, matrix, largest):
  del largest
  np.testing.assert_allclose(randomizer.output_probabilities(), matrix,
                             rtol=1e-12)
  derived = randomizers.FiniteRandomizer(matrix)
  assert derived.local_epsilon == pytest.approx(randomizer.local_epsilon,
                                                rel=1e-9)
  # The closed-form clone rate is certified: never above the matrix one.
  assert randomizer.clone_rate() <= derived.clone_rate() * (1 + 1e-9)
  # gamma omega <= R(x) for every x, so gamma is at most the column minima.
  table = randomizer.blanket()
  assert table.blanket_mass <= matrix.min(axis=0).sum() * (1 + 1e-12)
  assert table.log_ratio == pytest.approx(randomizer.local_epsilon)


@pytest.mark.parametrize('randomizer, matrix, largest', _CASES, ids=_IDS)
def test_every_pair_is_above_the_worst_dataset_pair(randomizer, matrix,
                                                    largest):
  epsilon0 = randomizer.local_epsilon
  epsilons = np.linspace(0, epsilon0, 7)[:-1]
  for n in range(1, largest + 1):
    worst = brute_force.worst_case_delta(matrix, n, epsilons)
    pairs = candidates.shuffle_round_pairs(n, epsilon0, None, 0.0,
                                           'shuffled_output', 1e-3,
                                           randomizer)
    names = [name for name, atoms in pairs if atoms is not None]
    assert candidates.BLANKET_PAIR in names or isinstance(
        randomizer, randomizers.KRandomizedResponse)
    for name, atoms in pairs:
      if atoms is not None:
        assert np.all(_profile(atoms, epsilons) >= worst - _ROUNDING), (
            name, n)
    accountant = pld_accountant.ShufflePldAccountant()
    accountant.compose(events.ShuffleEvent(n, randomizer=randomizer))
    assert all(accountant.get_delta(e) >= w - _ROUNDING
               for e, w in zip(epsilons, worst)), n
    cells = randomizer.pair_cells()
    target = (cells.target_for, cells.target_against)
    laws = [(cells.target_against, cells.target_for) + target]
    if cells.third_value_single is not None:
      laws.append((cells.third_value_single,) * 2 + target)
    for law in laws + list(cells.third_value_laws):
      losses, upper, lower = lower_bounds.dataset_pair_atoms(n, *law)
      for signed, masses in ((losses, upper), (-losses, lower)):
        profile = _profile(privacy_loss.PldAtoms(signed, masses, 0.0), epsilons)
        assert np.all(profile <= worst + _ROUNDING), n


@pytest.mark.parametrize('seed, inputs, outputs, two_level', [
    (0, 3, 3, True), (1, 3, 4, True), (2, 4, 4, True), (3, 3, 3, False),
    (4, 3, 4, False)])
def test_finite_randomizer_pairs_are_above_the_worst_dataset_pair(
    seed, inputs, outputs, two_level):
  matrix = _random_matrix(seed, inputs, outputs, two_level)
  randomizer = randomizers.FiniteRandomizer(matrix)
  assert (randomizer.blanket() is not None) == two_level, (
      randomizer.blanket_note)
  epsilons = np.linspace(0, randomizer.local_epsilon, 7)[:-1]
  for n in range(1, 7):
    worst = brute_force.worst_case_delta(matrix, n, epsilons)
    for name, atoms in candidates.shuffle_round_pairs(
        n, randomizer.local_epsilon, None, 0.0, 'shuffled_output', 1e-3,
        randomizer):
      if atoms is not None:
        assert np.all(_profile(atoms, epsilons) >= worst - _ROUNDING), (
            name, n)


@pytest.mark.parametrize('discretization', [1e-3, 0.05])
@pytest.mark.parametrize('randomizer, matrix, largest', _CASES, ids=_IDS)
def test_pairs_merged_on_a_grid_are_above_the_worst_dataset_pair(
    randomizer, matrix, largest, discretization):
  # CTD-MERGE-ATOMS/GRID-PAIRS-FAST: atoms merged per grid cell (across the
  # blanket's log-odds too) and discretized by connect-the-dots still dominate
  # the enumerated law.
  epsilon0 = randomizer.local_epsilon
  epsilons = np.linspace(0, epsilon0, 7)[:-1]
  for n in range(1, largest + 1):
    worst = brute_force.worst_case_delta(matrix, n, epsilons)
    for name, atoms in candidates.shuffle_round_pairs(
        n, epsilon0, None, 0.0, 'shuffled_output', 1e-3, randomizer,
        discretization):
      if atoms is None:
        continue
      pmf = discrete.connect_the_dots(atoms, discretization)
      grid = privacy_loss.PldAtoms(
          discretization * (pmf.lower_index + np.arange(pmf.probs.size)),
          pmf.probs, pmf.infinity_mass)
      assert np.all(_profile(grid, epsilons) >= worst - _ROUNDING), (
          name, n)


def _supports(randomizer, matrix):
  """supports[v, y]: output y supports input v, from the definitions."""
  d = matrix.shape[0]
  if isinstance(randomizer, randomizers._UnaryEncoding):
    bits = np.array(list(itertools.product((0, 1), repeat=d)))
    return bits.T == 1
  if isinstance(randomizer, randomizers._LocalHashing):
    g = randomizer._range()
    functions = np.array(list(itertools.product(range(g), repeat=d)))
    values = np.tile(np.arange(g), len(functions))
    hashes = np.repeat(functions, g, axis=0)  # one row per output (h, v)
    return (hashes == values[:, None]).T
  # Hadamard response, subset selection: a row's high level.
  return matrix == matrix.max(axis=1, keepdims=True)


@pytest.mark.parametrize('randomizer, matrix, largest', _CASES, ids=_IDS)
def test_third_value_laws_are_cell_probabilities_of_the_matrix(
    randomizer, matrix, largest):
  # LB-THIRD-SPLIT: each stated law is, for x = 0, x' = 1 and some third
  # value z, the probability of the cells (1, 0[, c]) and (0, 1[, c]).
  del largest
  if isinstance(randomizer, randomizers.KRandomizedResponse):
    return
  supports = _supports(randomizer, matrix)
  single_for = supports[0] & ~supports[1]
  single_against = ~supports[0] & supports[1]
  found = []
  for z in range(2, matrix.shape[0]):
    for keep in (np.ones_like(supports[z]), supports[z], ~supports[z]):
      cells = (single_for & keep, single_against & keep)
      found.append([matrix[z][cells[0]].sum(), matrix[z][cells[1]].sum(),
                    matrix[0][cells[0]].sum(), matrix[0][cells[1]].sum()])
  laws = randomizer.pair_cells().third_value_laws
  assert laws or matrix.shape[0] < 3
  for law in laws:
    assert np.min(np.max(np.abs(np.array(found) - law), axis=1)) < 1e-12, (
        law, found)
