"""SumOfReportsEvent and ShuffleEvent under deletion (REPLACE_SPECIAL).

Brute force: every user's report vector is enumerated (2^d outcomes each),
over every configuration of the others, both orders of the pair target at
x versus target's report replaced by the all-zero vector's (every bit
Bern(q)), written without the library's pairs.
"""

import itertools
import math

from dp_accounting import NeighboringRelation
from dp_accounting import dp_event
from dp_accounting import privacy_accountant
import numpy as np
import pytest

import brute_force
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.pld import sums

DELETION = NeighboringRelation.REPLACE_SPECIAL
ACCOUNTANTS = [ShufflePldAccountant,
               lambda relation: ShuffleRdpAccountant(
                   neighboring_relation=relation)]


def _bits(randomizer):
  """(p, q) from the randomizer's definition (not the library's helper)."""
  eps0 = randomizer.local_epsilon
  if isinstance(randomizer, randomizers.SymmetricUnaryEncoding):
    on = math.exp(eps0 / 2) / (math.exp(eps0 / 2) + 1)
    return on, 1 - on
  return 0.5, 1 / (math.exp(eps0) + 1)


def _report_law(value, domain_size, on_own, on_other):
  """{bit vector: probability} of one report; value None: the all-zero."""
  return dict(zip(itertools.product((0, 1), repeat=domain_size),
                  brute_force.unary_encoding_row(value, domain_size, on_own,
                                                 on_other)))


def _sum_law(dataset, domain_size, on_own, on_other):
  """Law of the coordinate-wise sum, every report vector enumerated."""
  laws = [_report_law(value, domain_size, on_own, on_other)
          for value in dataset]
  total = {}
  for reports in itertools.product(*[law.items() for law in laws]):
    key = tuple(sum(bits[j] for bits, _ in reports)
                for j in range(domain_size))
    total[key] = total.get(key, 0.0) + math.prod(m for _, m in reports)
  return total


def _aligned(first, second):
  keys = sorted(set(first) | set(second))
  return (np.array([first.get(k, 0.0) for k in keys]),
          np.array([second.get(k, 0.0) for k in keys]))


def _worst_delta(num_users, domain_size, randomizer, rounds, epsilons):
  """max over the others' values and both orders of delta(eps)."""
  on_own, on_other = _bits(randomizer)
  worst = np.zeros(len(epsilons))
  for rest in itertools.combinations_with_replacement(range(domain_size),
                                                      num_users - 1):
    law_p, law_q = _aligned(
        _sum_law(rest + (0,), domain_size, on_own, on_other),
        _sum_law(rest + (None,), domain_size, on_own, on_other))
    for first, second in ((law_p, law_q), (law_q, law_p)):
      composed_p, composed_q = first, second
      for _ in range(rounds - 1):
        composed_p = np.multiply.outer(composed_p, first).ravel()
        composed_q = np.multiply.outer(composed_q, second).ravel()
      worst = np.maximum(worst, [
          float(np.sum(np.maximum(composed_p - math.exp(e) * composed_q, 0)))
          for e in epsilons])
  return worst


CASES = [
    (randomizers.SymmetricUnaryEncoding(2, 3.0), 4),
    (randomizers.OptimizedUnaryEncoding(3, 2.5), 3),
    (randomizers.SymmetricUnaryEncoding(3, 6.0), 3),
]


@pytest.mark.parametrize('randomizer,num_users', CASES)
@pytest.mark.parametrize('rounds', [1, 2])
@pytest.mark.parametrize('accountant', ACCOUNTANTS)
def test_certified_delta_is_above_every_configuration(randomizer, num_users,
                                                      rounds, accountant):
  d = randomizer.domain_size
  epsilons = [0.2, 0.6, 1.2]
  truth = _worst_delta(num_users, d, randomizer, rounds, epsilons)
  certified = accountant(DELETION).compose(
      events.SumOfReportsEvent(num_users, randomizer), rounds)
  for epsilon, true_delta in zip(epsilons, truth):
    assert certified.get_delta(epsilon) >= true_delta * (1 - 1e-9)
  for delta in (1e-2, 1e-5):
    epsilon = certified.get_epsilon(delta)
    assert _worst_delta(num_users, d, randomizer, rounds,
                        [epsilon])[0] <= delta * (1 + 1e-9)


@pytest.mark.parametrize('randomizer,num_users', CASES)
def test_pld_route_is_the_exact_worst_case_and_the_lower_bound_below(
    randomizer, num_users):
  event = events.SumOfReportsEvent(num_users, randomizer)
  d = randomizer.domain_size
  for rounds in (1, 2):
    certified = ShufflePldAccountant(DELETION).compose(event, rounds
                                                       ).get_epsilon(1e-3)
    lower = sums.sum_release_lower_bound(event, 1e-3, rounds, 1e-4,
                                         deletion=True)
    truth_below, truth_above = _worst_delta(
        num_users, d, randomizer, rounds, [lower * 0.999, certified * 0.98])
    # The lower bound is below the truth; no decoupling under deletion:
    # the certificate is within 2% of the exact worst case.
    assert truth_below >= 1e-3
    assert truth_above > 1e-3
    assert lower <= certified


@pytest.mark.parametrize('accountant', ACCOUNTANTS)
def test_deletion_is_below_replace_one_and_a_reference_value_is_replace_one(
    accountant):
  randomizer = randomizers.OptimizedUnaryEncoding(4, 3.0)
  event = events.SumOfReportsEvent(300, randomizer)
  replace_one = accountant(NeighboringRelation.REPLACE_ONE).compose(
      event, 3).get_epsilon(1e-6)
  deletion = accountant(DELETION).compose(event, 3).get_epsilon(1e-6)
  assert deletion < 0.85 * replace_one
  to_value = accountant(DELETION).compose(
      events.SumOfReportsEvent(300, randomizer, reference_input=2), 3)
  assert to_value.get_epsilon(1e-6) == replace_one


@pytest.mark.parametrize('accountant', ACCOUNTANTS)
def test_shuffle_rounds_under_deletion_are_their_replace_one_bound(
    accountant):
  # Deletion to a fixed input of the domain is a replace-one pair.
  for event in (events.ShuffleEvent(60, local_epsilon=2.0),
                events.ShuffleEvent(60, randomizer=randomizers
                                    .KRandomizedResponse(3, 2.0)),
                events.SumOfReportsEvent(60, randomizers
                                         .KRandomizedResponse(3, 2.0))):
    replace_one = accountant(NeighboringRelation.REPLACE_ONE).compose(
        event, 2).get_epsilon(1e-6)
    assert accountant(DELETION).compose(event, 2).get_epsilon(
        1e-6) == replace_one


@pytest.mark.parametrize('accountant', ACCOUNTANTS)
def test_other_events_are_refused_under_deletion_naming_the_relation(
    accountant):
  with pytest.raises(privacy_accountant.UnsupportedEventError,
                     match='REPLACE_SPECIAL'):
    accountant(DELETION).compose(
        events.CheckInEvent(100, 0.5, local_epsilon=1.0))
  with pytest.raises(privacy_accountant.UnsupportedEventError,
                     match='REPLACE_SPECIAL'):
    accountant(DELETION).compose(dp_event.SampledWithoutReplacementDpEvent(
        1000, 100, events.ShuffleEvent(100, local_epsilon=1.0)))


def test_reference_input_outside_the_domain_is_refused_naming_it():
  with pytest.raises(ValueError, match=r'reference_input=4 is outside the '
                     r'domain \{0, ..., 3\}'):
    events.SumOfReportsEvent(10, randomizers.SymmetricUnaryEncoding(4, 1.0),
                             reference_input=4)
  with pytest.raises(ValueError, match='reference_input=-1'):
    events.SumOfReportsEvent(10, randomizers.KRandomizedResponse(3, 1.0),
                             reference_input=-1)
  with pytest.raises(TypeError, match='reference_input must be None'):
    events.SumOfReportsEvent(10, randomizers.KRandomizedResponse(3, 1.0),
                             reference_input=1.5)
  assert events.SumOfReportsEvent(
      10, randomizers.KRandomizedResponse(3, 1.0),
      reference_input=2.0).reference_input == 2


@pytest.mark.parametrize('accountant', ACCOUNTANTS)
def test_rounds_above_the_direct_limit_stay_above_the_truth(accountant,
                                                            monkeypatch):
  # Computed at fewer users and as coordinate x's shuffle (SUM-OF-BITS 6).
  from shuffle_accountants.pairs import sums as pair_sums
  monkeypatch.setattr(pair_sums, 'MAX_DIRECT_VARIANCE', 1.0)
  randomizer = randomizers.OptimizedUnaryEncoding(2, 3.0)
  epsilons = [0.3, 0.8]
  truth = _worst_delta(5, 2, randomizer, 1, epsilons)
  certified = accountant(DELETION).compose(
      events.SumOfReportsEvent(5, randomizer))
  for epsilon, true_delta in zip(epsilons, truth):
    assert certified.get_delta(epsilon) >= true_delta * (1 - 1e-9)


def test_every_contribution_names_how_deletion_was_accounted():
  summed = events.SumOfReportsEvent(200, randomizers.OptimizedUnaryEncoding(
      3, 2.0))
  shuffled = events.ShuffleEvent(200, local_epsilon=1.0)
  pld = ShufflePldAccountant(DELETION).compose(summed).compose(shuffled)
  pld.get_epsilon(1e-6)
  names = [' '.join(c.pairs) for c in pld.contributions]
  assert 'SUM-OF-BITS-DELETION' in names[0]
  assert 'DELETION-AS-REPLACE-ONE' in names[1]
  rdp = ShuffleRdpAccountant(neighboring_relation=DELETION).compose(
      summed).compose(shuffled)
  bounds = [row['bound'] for row in rdp.explain(1e-6)]
  assert 'SUM-OF-BITS-DELETION' in bounds[0]
  assert 'DELETION-AS-REPLACE-ONE' in bounds[1]


@pytest.mark.parametrize('randomizer,num_users', CASES)
@pytest.mark.parametrize('accountant', ACCOUNTANTS)
def test_delta_zero_is_the_one_bit_guarantee_composed(randomizer, num_users,
                                                      accountant):
  # Under deletion one bit of the report changes, so a round is
  # (max |log-ratio of one bit|, 0)-DP: eps0 / 2 for SUE, where basic
  # composition had eps0 (a new user's trial: 6.0 for SUE(16, 6) at
  # delta = 0).
  on_own, on_other = _bits(randomizer)
  one_bit = max(math.log(on_own / on_other),
                math.log((1 - on_other) / (1 - on_own)))
  for rounds in (1, 2):
    certified = accountant(DELETION).compose(
        events.SumOfReportsEvent(num_users, randomizer), rounds
    ).get_epsilon(0.0)
    assert rounds * one_bit <= certified <= rounds * one_bit * (1 + 1e-9)
    assert certified < rounds * randomizer.local_epsilon
    d = randomizer.domain_size
    assert _worst_delta(num_users, d, randomizer, rounds,
                        [certified])[0] <= 1e-15
  # One user: the bound is the exact largest loss.
  assert _worst_delta(1, randomizer.domain_size, randomizer, 1,
                      [one_bit * 0.999])[0] > 0
