"""Distributed check-in, participants hidden, against independent references.

See SECAGG-HIDDEN and LIEW-THM4. The references are written without the
library.

The exact delta(eps) of one round for small n is computed by quadrature of
the released law: the count k ~ Bin(n, gamma) and, given k, the mixture over
the k-subsets T of N(sum_T x_i, k sigma^2 I) (clip norm C = 1). Both
accountants must be at least every configuration's exact value, in both
orders; the limits are the Gaussian mechanism (gamma = 1) and the add/remove
Poisson-subsampled Gaussian (large n). The revealed model (SECAGG-REVEALED, the
default) is tested in tests/cross_route/test_participation.py.
"""

import functools
import itertools
import math
import sys
import textwrap
import warnings

import dp_accounting
from dp_accounting import dp_event
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np
import pytest
from scipy import stats

import benchmark_scripts
import peak_memory
from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import events
from shuffle_accountants.pld import distributed as pld_distributed
from shuffle_accountants.rdp import distributed as rdp_distributed

DistributedCheckInEvent = functools.partial(events.DistributedCheckInEvent,
                                            participation='hidden')
EPSILONS = np.array([0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0])
ADD_OR_REMOVE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
REPLACE_ONE = dp_accounting.NeighboringRelation.REPLACE_ONE


def _laws(values, sigma, gamma, grid, cell):
  """[(P[k], density of the sum on `grid`)] for k = 0..n; values[i] in R^d."""
  n = len(values)
  laws = []
  for k in range(n + 1):
    weight = stats.binom.pmf(k, n, gamma)
    if k == 0:
      laws.append((weight, None))
      continue
    scale = sigma * math.sqrt(k)
    density = np.zeros(grid.shape[:-1])
    subsets = list(itertools.combinations(range(n), k))
    for subset in subsets:
      mean = np.sum([values[i] for i in subset], axis=0)
      squared = np.sum((grid - mean)**2, axis=-1)
      density += np.exp(-squared / (2 * scale**2)) / (
          2 * math.pi * scale**2)**(grid.shape[-1] / 2)
    laws.append((weight, density / len(subsets) * cell))
  return laws


def exact_delta(target, other_target, others, sigma, gamma, dimension):
  """delta(eps) of (M(D) || M(D')) on EPSILONS by quadrature (C = 1)."""
  values = [np.atleast_1d(np.asarray(target, float))] + [
      np.atleast_1d(np.asarray(o, float)) for o in others]
  values_prime = [np.atleast_1d(np.asarray(other_target, float))] + values[1:]
  n = len(values)
  reach = n + 9 * sigma * math.sqrt(n)
  points = 6001 if dimension == 1 else 361
  axis = np.linspace(-reach, reach, points)
  step = axis[1] - axis[0]
  grid = np.stack(np.meshgrid(*[axis] * dimension, indexing='ij'), axis=-1)
  first = _laws(values, sigma, gamma, grid, step**dimension)
  second = _laws(values_prime, sigma, gamma, grid, step**dimension)
  delta = np.zeros(EPSILONS.size)
  for (weight, p), (_, q) in zip(first, second):
    if p is None:  # k = 0: nothing released
      continue
    for i, eps in enumerate(EPSILONS):
      delta[i] += weight * np.sum(np.maximum(p - np.exp(eps) * q, 0.0))
  return delta


def _configurations():
  """(name, x, x', others, dimension): SECAGG-HIDDEN candidates, random ones."""
  rng = np.random.default_rng(17)
  yield 'others at x\', |x - x\'| = 2C', 1.0, -1.0, [-1.0] * 5, 1
  yield 'others at x, reverse order', -1.0, 1.0, [1.0] * 5, 1
  yield 'others at the centre, x = +-C', 1.0, -1.0, [0.0] * 5, 1
  yield 'one user alone', 1.0, -1.0, [], 1
  for _ in range(3):
    angles = rng.uniform(0, 2 * np.pi, 6)
    radii = np.sqrt(rng.uniform(0, 1, 6))
    points = np.stack([radii * np.cos(angles), radii * np.sin(angles)], 1)
    yield 'random in the disc', points[0], points[1], list(points[2:5]), 2


CONFIGURATIONS = list(_configurations())


@pytest.mark.parametrize('sigma,gamma', [(0.5, 0.3), (1.0, 0.7), (0.7, 1.0)])
@pytest.mark.parametrize('name,x,x_prime,others,dimension', CONFIGURATIONS)
def test_both_routes_bound_the_exact_delta(name, x, x_prime, others,
                                           dimension, sigma, gamma):
  n = len(others) + 1
  event = DistributedCheckInEvent(n, gamma, sigma)
  pld = ShufflePldAccountant().compose(event)
  rdp = ShuffleRdpAccountant().compose(event)
  for order in (1, -1):  # both orders of the pair
    pair = (x, x_prime) if order == 1 else (x_prime, x)
    exact = exact_delta(*pair, others, sigma, gamma, dimension)
    for eps, truth in zip(EPSILONS, exact):
      allowance = 1e-6 + 1e-5 * truth  # quadrature error
      assert pld.get_delta(eps) >= truth - allowance, (name, eps, truth)
      assert rdp.get_delta(eps) >= truth - allowance, (name, eps, truth)


def test_the_worst_configuration_is_nearly_attained():
  """Others at x' is the SECAGG-HIDDEN pair itself: the PLD is tight there."""
  exact = exact_delta(1.0, -1.0, [-1.0] * 3, 0.8, 0.5, 1)
  event = DistributedCheckInEvent(4, 0.5, 0.8)
  profile = pld_distributed.distributed_checkin_profile(
      4, 0.5, 0.8, EPSILONS, relative_width=1e-6, participation='hidden')
  np.testing.assert_allclose(profile, exact, rtol=1e-4, atol=1e-7)
  pld = ShufflePldAccountant().compose(event)
  for eps, truth in zip(EPSILONS, exact):
    assert pld.get_delta(eps) <= truth * 1.01 + 1e-6


@pytest.mark.parametrize('num_users,sigma', [(1, 1.0), (10, 0.4),
                                             (10**6, 3e-3)])
def test_everyone_checking_in_is_the_gaussian_mechanism(num_users, sigma):
  """gamma = 1: sensitivity 2C, noise sigma C sqrt(n)."""
  reference = dp_accounting.pld.PLDAccountant(REPLACE_ONE, 1e-4)
  reference.compose(dp_event.GaussianDpEvent(sigma * math.sqrt(num_users)), 20)
  event = DistributedCheckInEvent(num_users, 1.0, sigma)
  ours = ShufflePldAccountant().compose(event, 20).get_epsilon(1e-6)
  truth = reference.get_epsilon(1e-6)
  assert truth * (1 - 1e-3) <= ours <= truth * 1.01
  rdp = ShuffleRdpAccountant().compose(event, 20).get_epsilon(1e-6)
  gaussian_rdp = ShuffleRdpAccountant().compose(
      dp_event.GaussianDpEvent(sigma * math.sqrt(num_users)), 20)
  assert rdp == pytest.approx(gaussian_rdp.get_epsilon(1e-6), rel=1e-6)


@pytest.mark.parametrize('expected_cohort,aggregate_sigma', [(1000, 1.0),
                                                             (100, 2.0)])
def test_large_populations_approach_the_add_remove_subsampled_gaussian(
    expected_cohort, aggregate_sigma):
  num_users = 10**6
  rate = expected_cohort / num_users
  sigma = aggregate_sigma / math.sqrt(expected_cohort)
  ours = ShufflePldAccountant().compose(
      DistributedCheckInEvent(num_users, rate, sigma), 200).get_epsilon(1e-5)
  reference = dp_accounting.pld.PLDAccountant(ADD_OR_REMOVE, 1e-4)
  reference.compose(dp_event.PoissonSampledDpEvent(
      rate, dp_event.GaussianDpEvent(aggregate_sigma / 2)), 200)
  assert 1.0 <= ours / reference.get_epsilon(1e-5) <= 1.2


def test_composes_nested_and_with_other_events():
  event = DistributedCheckInEvent(10**4, 0.01, 0.1)
  for accountant_type in (ShufflePldAccountant, ShuffleRdpAccountant):
    alone = accountant_type().compose(event, 10).get_epsilon(1e-6)
    nested = accountant_type().compose(dp_event.SelfComposedDpEvent(
        dp_event.ComposedDpEvent([event]), 10)).get_epsilon(1e-6)
    assert nested == pytest.approx(alone, rel=1e-9)
    mixed = accountant_type().compose(dp_event.ComposedDpEvent(
        [dp_event.SelfComposedDpEvent(event, 10),
         dp_event.GaussianDpEvent(20.0)])).get_epsilon(1e-6)
    assert mixed > alone
    with pytest.raises(dp_accounting.UnsupportedEventError, match='Poisson'):
      accountant_type().compose(dp_event.PoissonSampledDpEvent(0.5, event))
    with pytest.raises(dp_accounting.UnsupportedEventError,
                       match='REPLACE_ONE'):
      accountant_type(neighboring_relation=ADD_OR_REMOVE).compose(event)


@pytest.mark.parametrize('arguments,match', [
    ((0, 0.5, 1.0), 'num_users'), ((10, 0.0, 1.0), 'checkin_rate'),
    ((10, 1.5, 1.0), 'checkin_rate'), ((10, 0.5, 0.0), 'noise_multiplier'),
    ((10, 0.5, float('nan')), 'noise_multiplier'),
])
def test_invalid_arguments_name_the_parameter(arguments, match):
  with pytest.raises(ValueError, match=match):
    DistributedCheckInEvent(*arguments)
  with pytest.raises(ValueError, match='num_users'):
    DistributedCheckInEvent(10.5, 0.5, 1.0)
  # Whole numbers written as floats are accepted, as by every event.
  assert DistributedCheckInEvent(1e6, 0.5, 1.0).num_users == 10**6
  assert isinstance(DistributedCheckInEvent(1e6, 0.5, 1.0).num_users, int)


def test_round_trips_through_named_tuples():
  event = DistributedCheckInEvent(100, 0.1, 2.0)
  assert dp_event.DpEvent.from_named_tuple(event.to_named_tuple()) == event


PROPERTY_SETTINGS = settings(max_examples=12, deadline=None, derandomize=True)
populations = st.integers(min_value=1, max_value=10**10)
rates = st.floats(min_value=1e-12, max_value=1.0)
sigmas = st.floats(min_value=1e-3, max_value=1e4)


def _pld_epsilon(num_users, rate, sigma, count=3):
  return ShufflePldAccountant().compose(
      DistributedCheckInEvent(num_users, rate, sigma), count).get_epsilon(1e-6)


def _rdp(num_users, rate, sigma):
  return rdp_distributed.distributed_checkin_rdp_upper_bound(
      num_users, rate, sigma, [1.5, 2.0, 8.0, 64.0],
      participation='hidden').rdp


@PROPERTY_SETTINGS
@given(populations, rates, sigmas, st.floats(1.0, 10.0))
def test_monotone_in_population_and_noise(num_users, rate, sigma, factor):
  """More noise, or more users at the same rate, is a post-processing."""
  more_users = min(10**10, int(num_users * factor))
  with warnings.catch_warnings():
    warnings.simplefilter('error')
    base = _pld_epsilon(num_users, rate, sigma)
    assert math.isfinite(base) and base >= 0
    # The grid and groups depend on the parameters: monotone up to ~1 %.
    assert _pld_epsilon(more_users, rate, sigma) <= base * 1.01 + 1e-9
    assert _pld_epsilon(num_users, rate, sigma * factor) <= base * 1.01 + 1e-9
    rdp = _rdp(num_users, rate, sigma)
    assert np.all(np.isfinite(rdp)) and np.all(rdp >= 0)
    assert np.all(_rdp(num_users, rate, sigma * factor) <= rdp * (1 + 1e-9))


def test_epsilon_is_not_monotone_in_the_checkin_rate():
  """More participants add more noise to the sum: the exact delta drops.

  n = 2, sigma = 1: at gamma = 1 the round is the Gaussian mechanism with
  shift 2 / sqrt(2) (exact worst case); at gamma = 1/2 one configuration
  already exceeds it, so no sound bound is non-decreasing in gamma.
  """
  shift = 2 / math.sqrt(2)
  everyone = (stats.norm.cdf(shift / 2 - EPSILONS / shift) - np.exp(EPSILONS)
              * stats.norm.cdf(-shift / 2 - EPSILONS / shift))
  half = exact_delta(1.0, -1.0, [-1.0], 1.0, 0.5, 1)
  assert half[EPSILONS == 3.0] > everyone[EPSILONS == 3.0] * 1.05
  for accountant_type in (ShufflePldAccountant, ShuffleRdpAccountant):
    assert accountant_type().compose(
        DistributedCheckInEvent(2, 0.5, 1.0)).get_delta(3.0) > (
            accountant_type().compose(
                DistributedCheckInEvent(2, 1.0, 1.0)).get_delta(3.0))


@PROPERTY_SETTINGS
@given(populations, rates, sigmas)
def test_monotone_in_the_count(num_users, rate, sigma):
  accountant = ShufflePldAccountant()
  event = DistributedCheckInEvent(num_users, rate, sigma)
  once = accountant.compose(event, 2).get_epsilon(1e-6)
  twice = accountant.compose(event, 2).get_epsilon(1e-6)
  assert twice >= once * (1 - 1e-3)


EXTREMES = textwrap.dedent('''
    import itertools, sys, warnings
    warnings.simplefilter('error')
    from shuffle_accountants import (DistributedCheckInEvent,
        ShufflePldAccountant, ShuffleRdpAccountant)
    model = eval(sys.argv[1])
    for n, rate, sigma, count in itertools.product(
        [1, 10**10], [1e-12, 1.0], [1e-3, 1e4], [1, 10**9]):
      for kind in (ShufflePldAccountant, ShuffleRdpAccountant):
        accountant = kind().compose(
            DistributedCheckInEvent(n, rate, sigma, **model), count)
        epsilons = [accountant.get_epsilon(d) for d in (1e-12, 1e-5, 0.5)]
        delta = accountant.get_delta(1.0)
        assert all(e == e and e >= 0 for e in epsilons), epsilons
        assert epsilons[0] >= epsilons[1] >= epsilons[2], epsilons
        assert 0 <= delta <= 1
        assert epsilons[1] < float('inf'), (n, rate, sigma, count, kind)
''')


# One process per participation model, so that the four share the workers.
@pytest.mark.parametrize('model', [
    "dict(participation='hidden')", "dict(participation='revealed')",
    'dict(min_reporting=1)', "dict(participation='hidden_count')"])
def test_extremes_of_the_range_are_finite_quiet_and_bounded(model):
  # The time limit guards against a hang (tests assert no timings).
  memory_cap = 3 * 10**9
  result = peak_memory.run([sys.executable, '-c', EXTREMES, model],
                           timeout=600, cap_bytes=memory_cap)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.peak_bytes <= memory_cap


def _benchmark():
  """benchmarks/distributed_checkin.py, whose numbers docs/checkin.md prints."""
  return benchmark_scripts.load('distributed_checkin')


def test_the_documented_target_numbers():
  target = _benchmark().row(60_000, 256, 1.0, 2340)
  assert target['pld'] == pytest.approx(10.53, abs=0.01)
  assert target['pair'] == pytest.approx(9.436, abs=0.002)
  assert target['ratio'] == pytest.approx(1.116, abs=0.002)
  assert target['central_add_remove'] == pytest.approx(1.099, abs=0.002)
  assert target['central_replace_one'] == pytest.approx(1.762, abs=0.002)
  assert target['rdp'] == pytest.approx(48.65, abs=0.01)
  local = ShufflePldAccountant().compose(
      CheckInEvent(60_000, 256 / 60_000, noise_multiplier=1.0), 2340)
  assert local.get_epsilon(1e-5) == pytest.approx(10.45, abs=0.01)


@pytest.mark.slow
@pytest.mark.parametrize('cohort,pld,pair,central_add_remove', [
    (10, 0.3392, 0.03253, 0.002795), (100, 0.8637, 0.7465, 0.01832),
    (1000, 3.901, 3.76, 0.2257), (10_000, 22.75, 19.52, 2.802),
    (100_000, 300.4, 236.8, 44.05)])
def test_the_documented_cohort_table(cohort, pld, pair, central_add_remove):
  result = _benchmark().row(10**6, cohort, 1.0, 2340, with_rdp=False)
  assert result['pld'] == pytest.approx(pld, rel=2e-3)
  assert result['pair'] == pytest.approx(pair, rel=2e-3)
  assert result['central_add_remove'] == pytest.approx(central_add_remove,
                                                       rel=2e-3)
