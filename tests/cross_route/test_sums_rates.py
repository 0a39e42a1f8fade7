"""UnaryEncoding (any per-bit rates) and RAPPOR against brute force.

UNARY-ENCODING-RATES, RAPPOR-ONE-REPORT, RAPPOR-LONGITUDINAL. The exact law
of the summed (or shuffled) reports is enumerated over every neighbouring
dataset pair (every report vector of every user, both orders), from the
randomizers' definitions, not from the library's pairs.
"""

import functools
import itertools
import math

from dp_accounting import NeighboringRelation
import numpy as np
import pytest

import brute_force
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import calibration
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.pld import sums

DELETION = NeighboringRelation.REPLACE_SPECIAL
RELATIONS = [NeighboringRelation.REPLACE_ONE, DELETION]
ACCOUNTANTS = [ShufflePldAccountant,
               lambda relation: ShuffleRdpAccountant(
                   neighboring_relation=relation)]
# Asymmetric rates, neither optimized (p = 1/2) nor symmetric (p + q = 1).
CASES = [((2, 0.8, 0.3), 4), ((3, 0.6, 0.1), 4), ((3, 0.9, 0.45), 3)]


@functools.lru_cache(maxsize=None)
def _pairs(num_users, domain_size, on_true, on_other, relation, rounds):
  """Every neighbouring pair's exact laws, composed over `rounds`."""
  matrix = brute_force.unary_encoding_matrix(domain_size, on_true, on_other)
  reference = None
  if relation is DELETION:  # the all-zero vector: every bit Bern(on_other)
    reference = np.array([math.prod(on_other if bit else 1 - on_other
                                    for bit in bits) for bits in
                          itertools.product((0, 1), repeat=domain_size)])
  return [(brute_force.composed(np.array(p), rounds),
           brute_force.composed(np.array(q), rounds))
          for p, q in brute_force.neighbouring_sum_laws(num_users, matrix,
                                                        reference)]


def _truth(case, num_users, relation, rounds, epsilon):
  """The exact worst-case delta(epsilon) of the sum release."""
  return brute_force.largest_hockey_stick(
      _pairs(num_users, *case, relation, rounds), epsilon)


@pytest.mark.parametrize('case,num_users', CASES)
@pytest.mark.parametrize('relation', RELATIONS, ids=['replace', 'deletion'])
@pytest.mark.parametrize('accountant', ACCOUNTANTS, ids=['pld', 'rdp'])
def test_certified_delta_is_above_every_dataset_pair(case, num_users,
                                                     relation, accountant):
  event = events.SumOfReportsEvent(num_users, randomizers.UnaryEncoding(*case))
  for rounds in (1, 2):
    certified = accountant(relation).compose(event, rounds)
    for epsilon in (0.2, 0.6, 1.2):
      assert certified.get_delta(epsilon) >= _truth(
          case, num_users, relation, rounds, epsilon) * (1 - 1e-9)
    for delta in (1e-2, 1e-5):
      assert _truth(case, num_users, relation, rounds,
                    certified.get_epsilon(delta)) <= delta * (1 + 1e-9)


@pytest.mark.parametrize('case,num_users', CASES)
@pytest.mark.parametrize('relation', RELATIONS, ids=['replace', 'deletion'])
def test_pld_certificate_is_close_and_the_lower_bound_below(case, num_users,
                                                            relation):
  # At delta = 0.05 epsilon is well below eps0 (about 2/3 of it).
  event = events.SumOfReportsEvent(num_users, randomizers.UnaryEncoding(*case))
  delta = 0.05
  certified = ShufflePldAccountant(relation).compose(event).get_epsilon(delta)
  lower = sums.sum_release_lower_bound(event, delta, 1, 1e-4,
                                       deletion=relation is DELETION)
  assert _truth(case, num_users, relation, 1, lower * 0.999) >= delta
  assert lower <= certified
  # Groups of one label: deletion's family is the exact release; under
  # replace-one the decoupled coordinates (SUM-OF-BITS 2) meet the truth
  # here too (they exceed it at larger delta: 1.49 times at 0.2, n = 3).
  assert _truth(case, num_users, relation, 1, certified / 1.01) > delta


def test_the_shuffle_of_the_vectors_is_above_every_dataset_pair():
  # ShuffleEvent with the same randomizer (blanket, clone and third-value
  # pairs), against the exact shuffled histogram.
  randomizer = randomizers.UnaryEncoding(3, 0.7, 0.15)
  matrix = brute_force.unary_encoding_matrix(3, 0.7, 0.15)
  assert brute_force.matrix_local_epsilon(matrix) == pytest.approx(
      randomizer.local_epsilon, rel=1e-12)
  epsilons = [0.5, 1.5, 2.5]
  orders = np.array([2.0, 4.0, 8.0])
  rdp, truth, _ = brute_force.worst_case(3, matrix, orders, epsilons)
  event = events.ShuffleEvent(3, randomizer=randomizer)
  pld = ShufflePldAccountant().compose(event)
  for epsilon, true_delta in zip(epsilons, truth):
    assert pld.get_delta(epsilon) >= true_delta * (1 - 1e-9)
  bound = ShuffleRdpAccountant(orders=orders).compose(event)
  assert np.all(np.asarray(bound.rdp) >= rdp * (1 - 1e-9))


@pytest.mark.parametrize('relation', RELATIONS, ids=['replace', 'deletion'])
@pytest.mark.parametrize('accountant', ACCOUNTANTS, ids=['pld', 'rdp'])
def test_optimized_rates_give_optimized_unary_encoding_bit_for_bit(
    relation, accountant):
  named = randomizers.OptimizedUnaryEncoding(8, 3.0)
  rates = randomizers.UnaryEncoding(8, *named.bit_probabilities())
  assert rates.local_epsilon == pytest.approx(3.0, rel=1e-12)
  for num_users in (50, 3000):
    answers = [accountant(relation).compose(
        events.SumOfReportsEvent(num_users, randomizer), 3).get_epsilon(1e-6)
               for randomizer in (named, rates)]
    assert answers[0] == answers[1]


@pytest.mark.parametrize('relation', RELATIONS, ids=['replace', 'deletion'])
def test_symmetric_rates_agree_with_symmetric_unary_encoding(relation):
  # The symmetric class reflects one family; the rates compute both.
  named = randomizers.SymmetricUnaryEncoding(8, 4.0)
  rates = randomizers.UnaryEncoding(8, *named.bit_probabilities())
  for num_users in (50, 3000):
    answers = [ShufflePldAccountant(relation).compose(
        events.SumOfReportsEvent(num_users, randomizer), 3).get_epsilon(1e-6)
               for randomizer in (named, rates)]
    assert answers[1] == pytest.approx(answers[0], rel=5e-3)


def _rappor_bit_law(f, p, q, bit):
  """P[S_i = 1 | B_i = bit], every permanent outcome enumerated."""
  permanent = {1: f / 2 + (1 - f) * bit, 0: f / 2 + (1 - f) * (1 - bit)}
  return sum(mass * (q if memo else p) for memo, mass in permanent.items())


@pytest.mark.parametrize('f,p,q', [(0.5, 0.5, 0.75), (0.25, 0.1, 0.6),
                                   (0.0, 0.2, 0.9), (0.9, 0.0, 1.0)])
def test_rappor_rates_are_one_reports_law_and_eps_one(f, p, q):
  randomizer = randomizers.UnaryEncoding.from_rappor(5, f, p, q)
  on, off = _rappor_bit_law(f, p, q, 1), _rappor_bit_law(f, p, q, 0)
  assert randomizer.bit_probabilities() == pytest.approx((on, off),
                                                         rel=1e-14)
  # The paper's eps_1 with h = 1.
  assert randomizer.local_epsilon == pytest.approx(
      math.log(on * (1 - off) / (off * (1 - on))), rel=1e-12)


def _memoized_rounds_law(value, domain_size, f, p, q, rounds):
  """Law of one user's `rounds` reports from one memoized permanent B'.

  value None: the all-zero vector.
  """
  vectors = list(itertools.product((0, 1), repeat=domain_size))
  law = np.zeros(len(vectors) ** rounds)
  for memo in vectors:
    weight = math.prod(
        f / 2 + (1 - f) * (bit == (position == value))
        for position, bit in enumerate(memo))
    report = np.array([math.prod((q if m else p) if s else 1 - (q if m else p)
                                 for m, s in zip(memo, bits))
                       for bits in vectors])
    law += weight * brute_force.composed(report, rounds)
  return law


@pytest.mark.parametrize('f,p,q', [(0.3, 0.05, 0.95), (0.6, 0.25, 0.75)])
def test_memoized_rounds_stay_within_the_longitudinal_epsilon(f, p, q):
  # One user's reports themselves (the sum is a post-processing): every
  # output's log-ratio over six rounds is at most eps_inf, and the rounds
  # leak more than one report.
  one_report = randomizers.UnaryEncoding.from_rappor(2, f, p, q).local_epsilon
  for deletion, other in ((False, 1), (True, None)):
    bound = randomizers.rappor_longitudinal_epsilon(f, deletion=deletion)
    first = _memoized_rounds_law(0, 2, f, p, q, 6)
    second = _memoized_rounds_law(other, 2, f, p, q, 6)
    largest = float(np.max(np.abs(np.log(first) - np.log(second))))
    assert largest <= bound * (1 + 1e-12)
    if not deletion:
      assert largest > one_report
  assert randomizers.rappor_longitudinal_epsilon(0.5) == pytest.approx(
      2 * math.log(3))
  assert randomizers.rappor_longitudinal_epsilon(0.0) == math.inf


@pytest.mark.parametrize('arguments,message', [
    ((3, 0.3, 0.7), r'rate_if_zero=0.7 must be below rate_if_one=0.3'),
    ((3, 0.5, 0.5), r'rate_if_zero=0.5 must be below'),
    ((3, 1.0, 0.5), r'rate_if_one must be a finite number in \(0.0, 1.0\); '
     r'got 1.0'),
    ((3, 0.5, 0.0), r'rate_if_zero must be a finite number in \(0.0, 1.0\)'),
    ((3, 0.5, float('nan')), r'rate_if_zero must be a finite number'),
    ((3, 1 - 1e-16, 1e-305), r'above 700'),
    ((1, 0.6, 0.2), r'domain_size'),
])
def test_invalid_rates_name_the_parameter_value_and_range(arguments, message):
  with pytest.raises(ValueError, match=message):
    randomizers.UnaryEncoding(*arguments)


def test_invalid_types_and_rappor_parameters_are_refused():
  with pytest.raises(TypeError, match='rate_if_one must be a real number'):
    randomizers.UnaryEncoding(3, True, 0.1)
  with pytest.raises(TypeError, match='rate_if_zero must be a real number'):
    randomizers.UnaryEncoding(3, 0.5, '0.1')
  with pytest.raises(ValueError, match=r'f must be a finite number in '
                     r'\[0.0, 1.0\)'):
    randomizers.UnaryEncoding.from_rappor(3, 1.0, 0.5, 0.75)
  with pytest.raises(ValueError, match=r'q=0.5 must exceed p=0.75'):
    randomizers.UnaryEncoding.from_rappor(3, 0.5, 0.75, 0.5)
  with pytest.raises(ValueError, match=r'per-bit rates 1.0 and 0.0'):
    randomizers.UnaryEncoding.from_rappor(3, 0.0, 0.0, 1.0)
  with pytest.raises(ValueError, match=r'f must be'):
    randomizers.rappor_longitudinal_epsilon(-0.1)
  with pytest.raises(ValueError, match='has no local_epsilon parameter'):
    calibration.calibrate_local_epsilon(
        1.0, 1e-6, num_users=1000, release='sum',
        randomizer=randomizers.UnaryEncoding(3, 0.6, 0.2))


@pytest.mark.slow
def test_sparse_bits_stay_close_to_the_lower_bound():
  # p, q small: the groups' window ends carry large losses of almost no
  # mass; at +infinity (TAILS-TO-INFINITY) they no longer widen the grid
  # (before: 8.8 times the lower bound here).
  event = events.SumOfReportsEvent(3000, randomizers.UnaryEncoding(4, 3e-4,
                                                                   3e-7))
  certified = ShufflePldAccountant().compose(event).get_epsilon(1e-9)
  lower = sums.sum_release_lower_bound(event, 1e-9)
  assert lower <= certified <= 1.01 * lower
