"""A sum of unary-encoding reports with aggregator noise on every coordinate.

SUM-OF-BITS-WITH-NOISE: both accountants, both relations, against the
exact release enumerated here (every report pattern of every user, the
noise added coordinate by coordinate), and against each part alone.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import signal

import brute_force
from shuffle_accountants import checkpoints
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.pld import sums as pld_sums
from shuffle_accountants.pld.accountant import NeighboringRelation
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.rdp.accountant import ShuffleRdpAccountant

DOMAIN = 3
REPLACE_ONE = NeighboringRelation.REPLACE_ONE
DELETION = NeighboringRelation.REPLACE_SPECIAL


def _noise_law(kind, parameter, copies):
  """The noise's masses on [-T, T] (not renormalised: a sub-distribution
  below the truth) and T. Normalised over +-80 scales, far beyond."""
  far = np.arange(-80 * math.ceil(parameter) - 40,
                  80 * math.ceil(parameter) + 41)
  if kind == 'gaussian':
    weights = np.exp(-far.astype(float)**2 / (2 * parameter**2))
  else:
    weights = np.exp(-np.abs(far).astype(float) / parameter)
  law = weights / weights.sum()
  total = law
  for _ in range(copies - 1):
    total = np.convolve(total, law)
  centre = (total.size - 1) // 2
  reach = int(16 * parameter * math.sqrt(copies)) + 6
  return total[centre - reach:centre + reach + 1], reach


def _report_law(value, p, q):
  """The law of one report on {0, 1}^d: bit `value` Bern(p), others Bern(q)
  (value None: the empty input, every bit Bern(q))."""
  # product((0, 1), repeat=d) order is the C order of a (2,) * d array.
  return brute_force.unary_encoding_row(value, DOMAIN, p, q).reshape(
      (2,) * DOMAIN)


def _release_law(values, p, q, noise):
  """The law of the d noisy counts for users holding `values`."""
  counts = np.ones((1,) * DOMAIN)
  for value in values:
    counts = signal.convolve(counts, _report_law(value, p, q),
                             method='direct')
  for axis in range(DOMAIN):
    counts = np.apply_along_axis(np.convolve, axis, counts, noise)
  return counts.ravel()


def _hockey_stick(first, second, epsilon):
  return float(np.sum(np.maximum(first - math.exp(epsilon) * second, 0.0)))


def _exact_deltas(num_users, p, q, noise, relation, epsilons):
  """The largest delta(eps) over every neighbouring pair, both orders."""
  worst = np.zeros(len(epsilons))
  for others in itertools.product(range(DOMAIN), repeat=num_users - 1):
    for x in range(DOMAIN):
      neighbours = [None] if relation is DELETION else [
          v for v in range(DOMAIN) if v != x]
      first = _release_law((x,) + others, p, q, noise)
      for other in neighbours:
        second = _release_law((other,) + others, p, q, noise)
        for i, epsilon in enumerate(epsilons):
          worst[i] = max(worst[i], _hockey_stick(first, second, epsilon),
                         _hockey_stick(second, first, epsilon))
  return worst


EPSILONS = (0.0, 0.3, 1.0)
CASES = [
    # (users, randomizer, noise kind, parameter, aggregators, trust)
    pytest.param(3, randomizers.SymmetricUnaryEncoding(DOMAIN, 2.0),
                 'gaussian', 0.8, 1, 'one-honest'),
    pytest.param(2, randomizers.UnaryEncoding(DOMAIN, 0.75, 0.2), 'gaussian',
                 1.5, 1, 'one-honest'),
    pytest.param(2, randomizers.OptimizedUnaryEncoding(DOMAIN, 1.5),
                 'gaussian', 0.7, 2, 'all-honest', marks=pytest.mark.slow),
    pytest.param(2, randomizers.UnaryEncoding(DOMAIN, 0.75, 0.2), 'laplace',
                 1.0, 1, 'one-honest', marks=pytest.mark.slow),
]


def _noise_event(kind, parameter, aggregators, trust):
  if kind == 'gaussian':
    return events.DiscreteGaussianSumEvent(
        parameter, num_aggregators=aggregators, trust=trust)
  return events.DiscreteLaplaceSumEvent(
      parameter, num_aggregators=aggregators, trust=trust)


@pytest.mark.parametrize('relation', [REPLACE_ONE, DELETION])
@pytest.mark.parametrize(
    'num_users,randomizer,kind,parameter,aggregators,trust', CASES)
def test_certified_delta_is_above_the_exact_release(
    num_users, randomizer, kind, parameter, aggregators, trust, relation):
  p, q = randomizer.bit_probabilities()
  # all-honest: the accountants convolve the c draws (small sigma).
  noise, reach = _noise_law(kind, parameter,
                            aggregators if trust == 'all-honest' else 1)
  exact = _exact_deltas(num_users, p, q, noise, relation, EPSILONS)
  # The window drops at most this much Q-mass per coordinate: the true
  # delta is at least the enumerated one minus e^eps d times it.
  dropped = 1 - noise.sum()
  event = events.SumOfReportsEvent(
      num_users, randomizer,
      aggregator_noise=_noise_event(kind, parameter, aggregators, trust))
  for accountant in (ShufflePldAccountant(relation),
                     ShuffleRdpAccountant(neighboring_relation=relation)):
    accountant.compose(event)
    for epsilon, truth in zip(EPSILONS, exact):
      certified = accountant.get_delta(epsilon)
      floor = truth - math.exp(epsilon) * DOMAIN * dropped - 1e-12
      assert certified >= floor, (type(accountant).__name__, epsilon,
                                  certified, truth, reach)
  # The noise lowers the exact delta below the reports' alone: the test
  # has teeth (a bound of the noise-free release would also pass above).
  noise_free = _exact_deltas(num_users, p, q, np.ones(1), relation,
                             EPSILONS)
  assert exact[1] < noise_free[1]


def _epsilon(accountant, event, count=1):
  return accountant.compose(event, count).get_epsilon(1e-9)


@pytest.mark.parametrize('relation', [REPLACE_ONE, DELETION])
def test_combined_is_below_each_part_alone(relation):
  # The DAP draft's point: n = 1e5, per-bit eps0 = 5 (basic RAPPOR), one
  # honest aggregator's sigma for eps = 1 (docs/secure_sums.md).
  noise = events.DiscreteGaussianSumEvent(5.5)
  randomizer = randomizers.SymmetricUnaryEncoding(16, 10.0)
  event = events.SumOfReportsEvent(10**5, randomizer,
                                   aggregator_noise=noise)
  noise_free = events.SumOfReportsEvent(10**5, randomizer)
  coordinates = 1 if relation is DELETION else 2
  combined = _epsilon(ShufflePldAccountant(relation), event)
  reports = _epsilon(ShufflePldAccountant(relation), noise_free)
  alone = _epsilon(ShufflePldAccountant(relation), noise, coordinates)
  assert combined < min(reports, alone) - 0.005
  rdp = _epsilon(ShuffleRdpAccountant(neighboring_relation=relation), event)
  rdp_alone = _epsilon(ShuffleRdpAccountant(neighboring_relation=relation),
                       noise, coordinates)
  assert rdp <= rdp_alone * (1 + 1e-9)


@pytest.mark.parametrize('num_users,noise', [
    (30, events.DiscreteGaussianSumEvent(1.0)),
    (300, events.DiscreteGaussianSumEvent(3.0)),
    # A new user's trial: far more noise than the reports' grid resolves
    # gave 0.0100 on the PLD route against 3.4e-5 for the noise alone.
    (1, events.DiscreteGaussianSumEvent(1e5)),
    (10**5, events.DiscreteLaplaceSumEvent(100.0))])
def test_combined_never_exceeds_either_part(num_users, noise):
  randomizer = randomizers.OptimizedUnaryEncoding(8, 4.0)
  event = events.SumOfReportsEvent(num_users, randomizer,
                                   aggregator_noise=noise)
  noise_free = events.SumOfReportsEvent(num_users, randomizer)
  for relation, coordinates in ((REPLACE_ONE, 2), (DELETION, 1)):
    for make in (lambda: ShufflePldAccountant(relation),
                 lambda: ShuffleRdpAccountant(neighboring_relation=relation)):
      combined = _epsilon(make(), event, 3)
      bound = min(_epsilon(make(), noise_free, 3),
                  _epsilon(make(), noise, 3 * coordinates))
      assert combined <= bound * (1 + 1e-6) + 1e-9, (relation, combined,
                                                     bound)


def test_no_noise_leaves_the_event_unchanged():
  randomizer = randomizers.SymmetricUnaryEncoding(4, 3.0)
  assert (events.SumOfReportsEvent(100, randomizer, aggregator_noise=None)
          == events.SumOfReportsEvent(100, randomizer))


def test_bad_noise_is_refused_at_once():
  randomizer = randomizers.SymmetricUnaryEncoding(4, 3.0)
  with pytest.raises(ValueError, match='sensitivity=2 must be 1'):
    events.SumOfReportsEvent(10, randomizer, aggregator_noise=(
        events.DiscreteGaussianSumEvent(2.0, sensitivity=2)))
  with pytest.raises(TypeError, match='aggregator_noise must be None'):
    events.SumOfReportsEvent(10, randomizer, aggregator_noise=(
        events.BinomialSecureSumEvent(100)))
  with pytest.raises(ValueError, match='k-RR'):
    events.SumOfReportsEvent(
        10, randomizers.KRandomizedResponse(4, 1.0),
        aggregator_noise=events.DiscreteGaussianSumEvent(2.0))
  with pytest.raises(ValueError, match='aggregator_noise=None'):
    pld_sums.sum_release_lower_bound(events.SumOfReportsEvent(
        10, randomizer, aggregator_noise=events.DiscreteGaussianSumEvent(
            2.0)), 1e-6)


def test_checkpoints_keep_the_noise():
  event = events.SumOfReportsEvent(
      50, randomizers.OptimizedUnaryEncoding(4, 2.0),
      aggregator_noise=events.DiscreteLaplaceSumEvent(
          3.0, num_aggregators=2, trust='all-honest'))
  state = checkpoints.event_to_dict(event)
  assert checkpoints.event_from_dict(state) == event


@pytest.mark.parametrize('accountant', [
    ShufflePldAccountant,
    lambda relation: ShuffleRdpAccountant(neighboring_relation=relation)])
@pytest.mark.parametrize('relation', [REPLACE_ONE, DELETION])
def test_discrete_laplace_is_pure_dp_at_delta_zero(accountant, relation):
  # A new user's trial: epsilon was inf at delta = 0 for the noise alone
  # (1 / b is its largest loss), and eps0 with the reports, not 2 / b.
  scale, sensitivity = 1.5, 2
  noise = events.DiscreteLaplaceSumEvent(scale, sensitivity=sensitivity)
  alone = accountant(relation).compose(noise, 3).get_epsilon(0.0)
  assert 3 * sensitivity / scale <= alone <= 3 * sensitivity / scale * (
      1 + 1e-9)
  law = _laplace_window(scale, 120)
  shifted = np.concatenate([np.zeros(sensitivity), law[:-sensitivity]])
  loss = sensitivity / scale
  assert _hockey_stick(law, shifted, loss) <= 1e-15
  assert _hockey_stick(law, shifted, 0.999 * loss) > 0  # tight
  # With the reports: the smaller of theirs and the noise's, which moves
  # two coordinates under replace-one and one under deletion.
  randomizer = randomizers.UnaryEncoding(DOMAIN, 0.75, 0.2)
  p, q = randomizer.bit_probabilities()
  one_bit = max(math.log(p / q), math.log((1 - q) / (1 - p)))
  reports = one_bit if relation is DELETION else randomizer.local_epsilon
  for unit in (0.4, 5.0):  # the reports win, then the noise
    event = events.SumOfReportsEvent(
        2, randomizer, aggregator_noise=events.DiscreteLaplaceSumEvent(unit))
    expected = min(reports, (1 if relation is DELETION else 2) / unit)
    certified = accountant(relation).compose(event).get_epsilon(0.0)
    assert expected <= certified <= expected * (1 + 1e-9)
  # The exact release where the noise wins (its window's edges carry
  # e^-60 of mass): no delta at that epsilon, some just below it.
  noise_wins = (1 if relation is DELETION else 2) / 1.0
  assert noise_wins < reports
  window = _laplace_window(1.0, 60)
  assert _exact_deltas(2, p, q, window, relation, [noise_wins])[0] <= 1e-15
  assert _exact_deltas(2, p, q, window, relation, [0.99 * noise_wins])[0] > 0


def _laplace_window(scale, reach):
  """Discrete Laplace masses exp(-|z| / b) on [-reach, reach], normalised
  there (both neighbours get the same law, so the ratios are exact)."""
  weights = np.exp(-np.abs(np.arange(-reach, reach + 1)) / scale)
  return weights / weights.sum()
