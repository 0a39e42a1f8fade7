"""Distributed check-in, participants revealed, against independent references.

See SECAGG-REVEALED. The references are written without the library.

Revealed participation (standard secure aggregation): in a round the target
joins (probability gamma) the server sees it and the count k (k - 1 ~
Bin(n - 1, gamma)), and the round is N(mu_k, 1) vs N(0, 1), mu_k =
2 / (sigma sqrt(k)). After R rounds the pair is a mixture over the rounds
joined of Gaussian pairs with mu_tot^2 = sum mu_k^2, so

  delta(eps) = E[Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)], mu = mu_tot,

which the references below enumerate exactly (small n and R) or sandwich
(the docs/training.md setting) with scipy only. Dropouts (min_reporting) are
brute-forced over every deterministic choice of the survivors.
"""

import functools
import itertools
import math

import dp_accounting
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np
import pytest
from scipy import optimize
from scipy import signal
from scipy import special
from scipy import stats

from shuffle_accountants import DistributedCheckInEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.rdp import distributed as rdp_distributed

EPSILONS = np.array([0.0, 0.3, 1.0, 2.0, 4.0])
ORDERS = np.array([1.5, 2.0, 3.0, 8.0, 32.0])
# docs/training.md: digits, n = 1437, q = 1/12, sigma_agg = 1.5, 180 steps.
TRAINING_USERS, TRAINING_RATE, TRAINING_STEPS = 1437, 1 / 12, 180
TRAINING_SIGMA = 1.5 / math.sqrt(TRAINING_USERS * TRAINING_RATE)


def gaussian_delta(mu_squared, eps):
  """delta(eps) of N(mu, 1) vs N(0, 1); mu = 0 gives (1 - e^eps)_+."""
  mu = math.sqrt(mu_squared)
  if mu == 0:
    return max(0.0, -math.expm1(eps))
  first = stats.norm.cdf(mu / 2 - eps / mu)
  second = math.exp(eps + stats.norm.logcdf(-mu / 2 - eps / mu))
  return max(0.0, first - second)


def round_outcomes(n, gamma, sigma):
  """[(probability, mu^2)] of one round: skipped, or joined with count k."""
  outcomes = [(1 - gamma, 0.0)]
  for k in range(1, n + 1):
    outcomes.append((gamma * stats.binom.pmf(k - 1, n - 1, gamma),
                     4 / (sigma**2 * k)))
  return outcomes


def exact_delta(n, gamma, sigma, rounds, eps):
  """Every sequence of outcomes over `rounds` rounds, enumerated."""
  total = 0.0
  for sequence in itertools.product(round_outcomes(n, gamma, sigma),
                                    repeat=rounds):
    probability = math.prod(p for p, _ in sequence)
    total += probability * gaussian_delta(sum(m for _, m in sequence), eps)
  return total


def exact_rdp(n, gamma, sigma, order):
  """D_order of the labelled mixture: log E[e^{(a-1) a mu_k^2 / 2}] / (a-1)."""
  weights, shifts = np.array(round_outcomes(n, gamma, sigma)).T
  return special.logsumexp((order - 1) * order * shifts / 2,
                           b=weights) / (order - 1)


SMALL_CASES = [  # n, gamma, sigma, rounds
    (1, 0.3, 1.0, 3), (2, 0.5, 1.0, 2), (3, 0.2, 0.7, 3), (4, 0.9, 0.5, 2),
    (5, 1.0, 1.5, 3), (6, 0.05, 0.3, 4)]


@pytest.mark.parametrize('n,gamma,sigma,rounds', SMALL_CASES)
def test_both_routes_bound_the_exact_delta_and_the_pld_attains_it(
    n, gamma, sigma, rounds):
  event = DistributedCheckInEvent(n, gamma, sigma)
  pld = ShufflePldAccountant().compose(event, rounds)
  rdp = ShuffleRdpAccountant().compose(event, rounds)
  for eps in EPSILONS:
    truth = exact_delta(n, gamma, sigma, rounds, eps)
    assert pld.get_delta(eps) >= truth * (1 - 1e-9), eps
    assert rdp.get_delta(eps) >= truth * (1 - 1e-9), eps
    # Exact up to the grid: within 2 % (and 1e-7) of the truth.
    assert pld.get_delta(eps) <= truth * 1.02 + 1e-7, (eps, truth)


@pytest.mark.parametrize('n,gamma,sigma,rounds', SMALL_CASES)
def test_the_rdp_route_is_the_exact_renyi_divergence(n, gamma, sigma, rounds):
  del rounds
  bound = rdp_distributed.distributed_checkin_rdp_upper_bound(
      n, gamma, sigma, ORDERS).rdp
  exact = np.array([exact_rdp(n, gamma, sigma, a) for a in ORDERS])
  assert np.all(bound >= exact * (1 - 1e-12))
  # Counts below the Chernoff window are grouped [a, 2a - 1] with a
  # Chernoff weight: at these sizes within 25 %, mostly far closer.
  assert np.all(bound <= exact * 1.25 + 1e-12), bound / exact


def _epsilon_at(delta_of_eps, delta):
  return optimize.brentq(lambda e: delta_of_eps(e) - delta, 0.0, 500.0,
                         xtol=1e-10)


@functools.lru_cache(maxsize=None)
def training_reference(spacing=2e-3, reach=600.0):
  """(lower, upper) epsilon at 1e-5 of the training.md setting, revealed.

  The law of mu_tot^2 over 180 rounds, each round's mu^2 rounded down
  (lower) or up (upper) to a grid and convolved by FFT; mass above the grid
  counts as delta 1 (upper) or 0 (lower). delta grows with mu^2.
  """
  n, gamma, sigma = TRAINING_USERS, TRAINING_RATE, TRAINING_SIGMA
  size = int(reach / spacing) + 1
  results = []
  for rounding in (np.floor, np.ceil):
    one_round = np.zeros(size)
    for probability, mu_squared in round_outcomes(n, gamma, sigma):
      index = int(rounding(mu_squared / spacing))
      one_round[min(index, size - 1)] += probability
    law = np.zeros(size)
    law[0] = 1.0
    power, count = one_round, TRAINING_STEPS
    while count:  # binary powering of the convolution, truncated at reach
      if count & 1:
        law = np.maximum(signal.fftconvolve(law, power)[:size], 0.0)
      power = np.maximum(signal.fftconvolve(power, power)[:size], 0.0)
      count >>= 1
    beyond = max(0.0, 1.0 - law.sum()) if rounding is np.ceil else 0.0
    grid = np.arange(size) * spacing
    mus = np.sqrt(grid)

    def delta(eps, law=law, mus=mus, beyond=beyond):
      with np.errstate(divide='ignore', invalid='ignore'):
        values = (stats.norm.cdf(mus / 2 - eps / mus)
                  - np.exp(eps + stats.norm.logcdf(-mus / 2 - eps / mus)))
      values[0] = 0.0
      return float(np.sum(law * np.maximum(values, 0.0))) + beyond

    results.append(_epsilon_at(delta, 1e-5))
  return tuple(results)


def test_training_setting_is_within_five_percent_of_the_exact_value():
  lower, upper = training_reference()
  assert upper <= lower * 1.01  # the sandwich is tight
  assert 44.0 < lower < 45.0  # the independent estimate, 44.4
  event = DistributedCheckInEvent(TRAINING_USERS, TRAINING_RATE,
                                  TRAINING_SIGMA)
  pld = ShufflePldAccountant().compose(event, TRAINING_STEPS).get_epsilon(1e-5)
  rdp = ShuffleRdpAccountant().compose(event, TRAINING_STEPS).get_epsilon(1e-5)
  assert lower <= pld <= 1.05 * lower
  assert lower <= rdp
  hidden = ShufflePldAccountant().compose(
      DistributedCheckInEvent(TRAINING_USERS, TRAINING_RATE, TRAINING_SIGMA,
                              participation='hidden'),
      TRAINING_STEPS).get_epsilon(1e-5)
  assert hidden < pld / 2  # the anonymous channel's gain


def worst_dropout_delta(n, gamma, sigma, min_reporting, eps):
  """Largest delta(eps) of one round over every deterministic dropout rule.

  A rule maps (target joined?, k) to the survivors: an abort, or k' in
  [m, k] survivors with the target kept or dropped (it may know identities
  and check-ins, never the data). Each label's choice adds independently.
  """
  best = 0.0
  for k in range(1, n + 1):
    weight = gamma * stats.binom.pmf(k - 1, n - 1, gamma)
    choices = [0.0]  # abort, or the target dropped: nothing about it
    for survivors in range(min_reporting, k + 1):
      choices.append(gaussian_delta(4 / (sigma**2 * survivors), eps))
    best += weight * max(choices)
  # The target skipped: the others' sum says nothing about it.
  return best


@pytest.mark.parametrize('participation', ['revealed', 'hidden'])
@pytest.mark.parametrize('n,gamma,sigma,min_reporting', [
    (3, 0.5, 1.0, 1), (5, 0.6, 0.8, 2), (6, 0.9, 0.5, 4), (4, 0.3, 2.0, 4)])
def test_dropouts_are_the_worst_choice_of_survivors(n, gamma, sigma,
                                                    min_reporting,
                                                    participation):
  event = DistributedCheckInEvent(n, gamma, sigma, participation=participation,
                                  min_reporting=min_reporting)
  pld = ShufflePldAccountant().compose(event)
  rdp = ShuffleRdpAccountant().compose(event)
  for eps in EPSILONS:
    worst = worst_dropout_delta(n, gamma, sigma, min_reporting, eps)
    assert worst * (1 - 1e-9) <= pld.get_delta(eps) <= worst * 1.02 + 1e-7
    assert rdp.get_delta(eps) >= worst * (1 - 1e-9)
  # Its RDP is the exact moment of that pair.
  weight = gamma * stats.binom.sf(min_reporting - 2, n - 1, gamma)
  mu_squared = 4 / (sigma**2 * min_reporting)
  exact = np.logaddexp(np.log1p(-weight), np.log(weight) + (
      ORDERS - 1) * ORDERS * mu_squared / 2) / (ORDERS - 1)
  bound = rdp_distributed.distributed_checkin_rdp_upper_bound(
      n, gamma, sigma, ORDERS, participation=participation,
      min_reporting=min_reporting).rdp
  np.testing.assert_allclose(bound, np.minimum(exact, 2 * ORDERS / sigma**2),
                             rtol=1e-8)


def test_rounds_with_dropouts_are_not_grouped_with_fewer_users():
  """Their bound grows with n: a bin's smallest n would under-report."""
  small = DistributedCheckInEvent(1000, 0.05, 0.3, min_reporting=60)
  large = DistributedCheckInEvent(1004, 0.05, 0.3, min_reporting=60)
  for kind in (ShufflePldAccountant, ShuffleRdpAccountant):
    accountant = kind().compose(small).compose(large)
    accountant.get_epsilon(1e-6)
    assert {getattr(c, 'accounted_as', c.event)  # RDP: the representative
            for c in accountant.contributions} == {small, large}
  assert (ShufflePldAccountant().compose(large).get_delta(1.0)
          > ShufflePldAccountant().compose(small).get_delta(1.0))


PROPERTY_SETTINGS = settings(max_examples=15, deadline=None, derandomize=True)
populations = st.integers(min_value=1, max_value=10**9)
rates = st.floats(min_value=1e-9, max_value=1.0)
sigmas = st.floats(min_value=1e-2, max_value=1e3)
models = st.sampled_from(['revealed', 'hidden', 'hidden_count'])


def _epsilon(kind, event, count=3):
  return kind().compose(event, count).get_epsilon(1e-6)


@PROPERTY_SETTINGS
@given(populations, rates, sigmas, st.floats(1.0, 10.0), models)
def test_monotone_in_the_noise(num_users, rate, sigma, factor, participation):
  for kind in (ShufflePldAccountant, ShuffleRdpAccountant):
    base = _epsilon(kind, DistributedCheckInEvent(
        num_users, rate, sigma, participation=participation))
    assert math.isfinite(base) and base >= 0
    more_noise = _epsilon(kind, DistributedCheckInEvent(
        num_users, rate, sigma * factor, participation=participation))
    assert more_noise <= base * 1.01 + 1e-9


@PROPERTY_SETTINGS
@given(st.integers(1, 10**6), rates, sigmas, st.floats(0.0, 1.0),
       st.floats(1.0, 10.0), models)
def test_monotone_in_min_reporting_and_the_noise(num_users, rate, sigma, where,
                                                 factor, participation):
  fewer = 1 + int(where * (num_users - 1))
  more = min(num_users, fewer + 1 + int(where * num_users))
  event = functools.partial(DistributedCheckInEvent, num_users, rate,
                            participation=participation)
  for kind in (ShufflePldAccountant, ShuffleRdpAccountant):
    base = _epsilon(kind, event(sigma, min_reporting=fewer))
    assert math.isfinite(base) and base >= 0
    assert _epsilon(kind, event(sigma, min_reporting=more)) <= (
        base * 1.01 + 1e-9)
    assert _epsilon(kind, event(sigma * factor, min_reporting=fewer)) <= (
        base * 1.01 + 1e-9)


@pytest.mark.parametrize('keywords,error,match', [
    (dict(participation='anonymous'), ValueError, "participation.*'anonymous'"),
    (dict(participation=None), ValueError, 'participation.*None'),
    (dict(min_reporting=0), ValueError, r'min_reporting.*\[1, 10\].*0'),
    (dict(min_reporting=11), ValueError, r'min_reporting.*\[1, 10\].*11'),
    (dict(min_reporting=2.5), ValueError, 'min_reporting.*2.5'),
    (dict(min_reporting=True), TypeError, 'min_reporting'),
    (dict(min_reporting='3'), TypeError, 'min_reporting'),
])
def test_invalid_arguments_name_the_parameter_value_and_range(keywords, error,
                                                              match):
  with pytest.raises(error, match=match):
    DistributedCheckInEvent(10, 0.5, 1.0, **keywords)


def test_defaults_positional_fields_and_named_tuples():
  event = DistributedCheckInEvent(100, 0.1, 2.0)
  assert (event.participation, event.min_reporting) == ('revealed', None)
  assert DistributedCheckInEvent(100, 0.1, 2.0, 'hidden',
                                 5.0).min_reporting == 5
  for event in (DistributedCheckInEvent(100, 0.1, 2.0),
                DistributedCheckInEvent(100, 0.1, 2.0, participation='hidden',
                                        min_reporting=7),
                dp_accounting.ComposedDpEvent(
                    [DistributedCheckInEvent(10, 0.5, 1.0, 'hidden')])):
    assert dp_accounting.DpEvent.from_named_tuple(
        event.to_named_tuple()) == event


def hidden_count_delta(target, other_target, others, sigma, gamma, eps):
  """delta(eps) of one round where every client uploads, by quadrature.

  Each client joins with its own coin; the sum of the joined vectors plus
  N(0, n sigma^2) (every client's noise share) is released (C = 1).
  """
  n = len(others) + 1
  scale = sigma * math.sqrt(n)
  grid = np.linspace(-n - 12 * scale, n + 12 * scale, 40001)
  step = grid[1] - grid[0]

  def law(value):
    density = np.zeros_like(grid)
    for coins in itertools.product((0, 1), repeat=n):
      probability = math.prod(gamma if c else 1 - gamma for c in coins)
      mean = sum(v for v, c in zip([value] + others, coins) if c)
      density += probability * stats.norm.pdf(grid, mean, scale)
    return density * step

  first, second = law(target), law(other_target)
  return np.array([np.sum(np.maximum(first - np.exp(e) * second, 0.0))
                   for e in eps])


HIDDEN_COUNT_CONFIGURATIONS = [
    (1.0, -1.0, [-1.0, -1.0, -1.0]), (1.0, -1.0, [1.0, 1.0, 1.0]),
    (1.0, -1.0, [0.0, 0.0, 0.0]), (1.0, 0.0, [0.0, 0.0, 0.0]),
    (0.3, -0.8, [0.5, -0.2, 0.9])]


@pytest.mark.parametrize('sigma,gamma', [(0.5, 0.3), (1.0, 0.8), (0.3, 0.05)])
@pytest.mark.parametrize('x,x_prime,others', HIDDEN_COUNT_CONFIGURATIONS)
def test_hidden_count_bounds_every_configuration(x, x_prime, others, sigma,
                                                 gamma):
  event = DistributedCheckInEvent(len(others) + 1, gamma, sigma,
                                  participation='hidden_count')
  pld = ShufflePldAccountant().compose(event)
  rdp = ShuffleRdpAccountant().compose(event)
  for pair in ((x, x_prime), (x_prime, x)):
    exact = hidden_count_delta(*pair, others, sigma, gamma, EPSILONS)
    for eps, truth in zip(EPSILONS, exact):
      allowance = 1e-7 + 1e-6 * truth  # quadrature
      assert pld.get_delta(eps) >= truth - allowance, (pair, eps)
      assert rdp.get_delta(eps) >= truth - allowance, (pair, eps)


def test_hidden_count_with_dropouts_bounds_the_fewest_survivors():
  """An adversary keeps the target and one other (m = 2) of 4 clients."""
  event = DistributedCheckInEvent(4, 0.5, 0.6, participation='hidden_count',
                                  min_reporting=2)
  exact = hidden_count_delta(1.0, -1.0, [-1.0], 0.6, 0.5, EPSILONS)
  for kind in (ShufflePldAccountant, ShuffleRdpAccountant):
    accountant = kind().compose(event)
    for eps, truth in zip(EPSILONS, exact):
      assert accountant.get_delta(eps) >= truth - 1e-7 - 1e-6 * truth
  # More noise than the participants' own: far below the revealed model.
  assert (ShufflePldAccountant().compose(event).get_epsilon(1e-5)
          < ShufflePldAccountant().compose(DistributedCheckInEvent(
              4, 0.5, 0.6, min_reporting=2)).get_epsilon(1e-5))
