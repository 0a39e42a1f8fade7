"""Noisy integer sums (BINOMIAL-SUM, DISCRETE-GAUSSIAN-SUM) against brute force.

The references enumerate the exact laws with mpmath at 50 digits, written
independently of the library: binomial coefficients, discrete Gaussian
weights over a support far wider than the library's window, and the sum of
two aggregators' noise by explicit convolution.
"""

import mpmath
import numpy as np
import pytest

from shuffle_accountants import calibration
from shuffle_accountants import events
from shuffle_accountants.pairs import lattice_noise
from shuffle_accountants.pld import noise_sums
from shuffle_accountants.pld.accountant import NeighboringRelation
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.rdp.accountant import ShuffleRdpAccountant

mpmath.mp.dps = 50
EPSILONS = (0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0)


def _exact_delta(p_law, q_law, epsilon, truncated=False):
  """sup over both orders of sum (P - e^eps Q)_+ over the union support.

  `truncated`: the laws are cut at a far reach; only their common support
  is summed, which lowers the truth by at most the mass beyond the reach.
  """
  support = (set(p_law) & set(q_law)) if truncated else (set(p_law)
                                                         | set(q_law))
  factor = mpmath.exp(epsilon)
  return max(
      sum(max(first.get(s, 0) - factor * second.get(s, 0), 0)
          for s in support)
      for first, second in ((p_law, q_law), (q_law, p_law)))


def _binomial_law(trials, shift):
  return {k + shift: mpmath.binomial(trials, k) / mpmath.mpf(2)**trials
          for k in range(trials + 1)}


def _discrete_gaussian_law(sigma, shift, copies=1):
  # Beyond 20 sigma the mass is below e^-200: far under the tolerance.
  reach = int(20 * sigma) + 5
  weights = {z: mpmath.exp(-mpmath.mpf(z)**2 / (2 * mpmath.mpf(sigma)**2))
             for z in range(-reach, reach + 1)}
  total = sum(weights.values())
  law = {z: w / total for z, w in weights.items()}
  summed = {0: mpmath.mpf(1)}
  for _ in range(copies):
    nxt = {}
    for a, pa in summed.items():
      for b, pb in law.items():
        nxt[a + b] = nxt.get(a + b, 0) + pa * pb
    summed = nxt
  return {z + shift: p for z, p in summed.items()}


def _discrete_laplace_law(scale, shift, copies=1):
  # Beyond 60 scales the mass is below e^-60: under the tolerance.
  reach = int(60 * scale) + 5
  weights = {z: mpmath.exp(-abs(z) / mpmath.mpf(scale))
             for z in range(-reach, reach + 1)}
  total = sum(weights.values())
  summed = {0: mpmath.mpf(1)}
  for _ in range(copies):
    nxt = {}
    for a, pa in summed.items():
      for b, w in weights.items():
        nxt[a + b] = nxt.get(a + b, 0) + pa * w / total
    summed = nxt
  return {z + shift: p for z, p in summed.items()}


def _worst_exact(laws, sensitivity, epsilon, truncated=False):
  return max(_exact_delta(laws(shift), laws(0), epsilon, truncated)
             for shift in range(-sensitivity, sensitivity + 1) if shift)


def _certified(event, epsilon, relation=NeighboringRelation.REPLACE_ONE):
  accountant = ShufflePldAccountant(neighboring_relation=relation)
  accountant.compose(event)
  return accountant.get_delta(epsilon)


@pytest.mark.parametrize('trials,sensitivity', [(1, 1), (4, 1), (25, 1),
                                                (40, 2), (60, 3), (3, 5)])
def test_binomial_certified_at_least_exact(trials, sensitivity):
  event = events.BinomialSecureSumEvent(trials, sensitivity)
  atoms, _ = noise_sums.worst_pair(event)
  for epsilon in EPSILONS:
    exact = float(_worst_exact(lambda h: _binomial_law(trials, h),
                               sensitivity, epsilon))
    direct = noise_sums.hockey_stick(atoms, epsilon)
    assert exact <= direct <= exact * (1 + 1e-8) + 1e-15
    assert _certified(event, epsilon) >= exact


def test_binomial_coordinates_compose():
  # Two coordinates, each moved by +-1: the product of the two pairs.
  trials = 12
  one = _binomial_law(trials, 1)
  zero = _binomial_law(trials, 0)
  def product(first, second):
    return {(a, b): pa * pb for a, pa in first.items()
            for b, pb in second.items()}
  accountant = ShufflePldAccountant()
  accountant.compose(events.BinomialSecureSumEvent(trials), 2)
  for epsilon in (0.3, 1.0, 2.0):
    exact = _exact_delta(product(one, one), product(zero, zero), epsilon)
    assert accountant.get_delta(epsilon) >= float(exact)


def _check_aggregator_noise(event, law, slack):
  """Direct and certified delta of `event` against `law`'s exact pair."""
  atoms, _ = noise_sums.worst_pair(event)
  for epsilon in EPSILONS:
    exact = float(_worst_exact(law, event.sensitivity, epsilon,
                               truncated=True))
    assert exact <= noise_sums.hockey_stick(atoms, epsilon) <= (
        exact * (1 + 1e-8) + slack)
    assert _certified(event, epsilon) >= exact


def _trust(copies):
  return 'all-honest' if copies > 1 else 'one-honest'


@pytest.mark.parametrize('sigma,sensitivity,copies', [(0.8, 1, 1), (1.5, 2, 1),
                                                      (2.0, 1, 2), (1.2, 1, 3),
                                                      (0.3, 1, 12)])
def test_discrete_gaussian_certified_at_least_exact(sigma, sensitivity,
                                                    copies):
  event = events.DiscreteGaussianSumEvent(sigma, sensitivity, copies,
                                          _trust(copies))
  _check_aggregator_noise(
      event, lambda h: _discrete_gaussian_law(sigma, h, copies), 1e-15)


@pytest.mark.parametrize('scale,sensitivity,copies', [(0.7, 1, 1), (1.0, 2, 1),
                                                      (0.8, 1, 2)])
def test_discrete_laplace_certified_at_least_exact(scale, sensitivity,
                                                   copies):
  event = events.DiscreteLaplaceSumEvent(scale, sensitivity, copies,
                                         _trust(copies))
  # At eps = Delta / b the losses sit on eps, raised by their round-off
  # bound: delta picks up that bound times their mass.
  _check_aggregator_noise(
      event, lambda h: _discrete_laplace_law(scale, h, copies), 1e-12)
  # Pure (Delta / b)-DP: the RDP route reaches Delta / b at any delta.
  rdp = ShuffleRdpAccountant().compose(event)
  assert rdp.get_epsilon(1e-9) <= sensitivity / scale * (1 + 1e-5)


def test_one_honest_ignores_other_aggregators_and_all_honest_helps():
  one = events.DiscreteGaussianSumEvent(5.0, num_aggregators=3)
  alone = events.DiscreteGaussianSumEvent(5.0)
  every = events.DiscreteGaussianSumEvent(5.0, num_aggregators=3,
                                          trust='all-honest')
  assert _certified(one, 0.5) == _certified(alone, 0.5)
  assert _certified(every, 0.5) < _certified(alone, 0.5)
  # Too wide to convolve: one aggregator's noise, named as such.
  wide = events.DiscreteGaussianSumEvent(2000.0, num_aggregators=2,
                                         trust='all-honest')
  assert lattice_noise.noise_window(wide)[1] == lattice_noise.ONE_AGGREGATOR
  many = events.DiscreteGaussianSumEvent(5.0, num_aggregators=1000,
                                         trust='all-honest')
  assert '313 of the 1000' in lattice_noise.noise_window(many)[1]


@pytest.mark.parametrize('sigma,aggregators', [
    (0.5, range(1, 13)), (5.0, range(1, 13)), (200.0, (3, 4, 5, 9)),
    (5.0, (300, 313, 314, 10**6))])
def test_all_honest_epsilon_never_grows_with_more_aggregators(sigma,
                                                              aggregators):
  # With c > 4 (or sigma > 200) it was one aggregator's noise: sigma = 5,
  # c = 4 -> 5 gave 0.536 -> 1.100. Now the most copies the budget allows
  # are convolved, a number non-decreasing in c.
  epsilons = []
  for count in aggregators:
    accountant = ShufflePldAccountant()
    accountant.compose(events.DiscreteGaussianSumEvent(
        sigma, num_aggregators=count, trust='all-honest'))
    epsilons.append(accountant.get_epsilon(1e-9))
  assert all(np.isfinite(epsilons))
  assert all(b <= a for a, b in zip(epsilons, epsilons[1:])), epsilons
  assert epsilons[-1] < epsilons[0] or aggregators[0] > 300


def test_every_relation_accepted_with_the_same_pair():
  event = events.BinomialSecureSumEvent(100)
  replace = _certified(event, 0.5)
  assert _certified(event, 0.5,
                    NeighboringRelation.ADD_OR_REMOVE_ONE) == replace
  rdp = ShuffleRdpAccountant(
      neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE)
  rdp.compose(events.DiscreteGaussianSumEvent(3.0))
  assert np.isfinite(rdp.get_epsilon(1e-6))
  # Deletion to a reference contribution changes the sum by at most Delta
  # too: the same pair as replace-one.
  special = ShufflePldAccountant(
      neighboring_relation=NeighboringRelation.REPLACE_SPECIAL)
  assert special.supports(event)
  assert special.compose(event).get_epsilon(1e-6) == (
      ShufflePldAccountant().compose(event).get_epsilon(1e-6))


def test_binomial_rdp_is_infinite_and_discrete_gaussian_rdp_is_above_pld():
  binomial = ShuffleRdpAccountant()
  binomial.compose(events.BinomialSecureSumEvent(1000))
  assert binomial.get_epsilon(1e-6) == np.inf
  event = events.DiscreteGaussianSumEvent(4.0, sensitivity=2)
  rdp = ShuffleRdpAccountant()
  rdp.compose(event)
  epsilon = rdp.get_epsilon(1e-6)
  exact = float(_worst_exact(lambda h: _discrete_gaussian_law(4.0, h), 2,
                             epsilon, truncated=True))
  assert exact <= 1e-6


def test_calibrate_num_trials_is_certified_and_tight():
  trials = calibration.calibrate_num_trials(1.0, 1e-5)
  assert _certified_epsilon(trials) <= 1.0 < _certified_epsilon(trials - 1)
  # The exact smallest N (direct sum of the exact pair, Delta = 1).
  exact = trials
  while noise_sums.hockey_stick(noise_sums.worst_pair(
      events.BinomialSecureSumEvent(exact - 1))[0], 1.0) <= 1e-5:
    exact -= 1
  assert exact <= trials <= 1.02 * exact


def _certified_epsilon(trials):
  return calibration.certified_epsilon(events.BinomialSecureSumEvent(trials),
                                       1, 1e-5)


@pytest.mark.parametrize('build,match', [
    (lambda: events.BinomialSecureSumEvent(0), 'num_trials'),
    (lambda: events.BinomialSecureSumEvent(10, sensitivity=10**4 + 1),
     'sensitivity'),
    (lambda: events.BinomialSecureSumEvent(10**10 + 1), 'num_trials'),
    (lambda: events.DiscreteGaussianSumEvent(0.0), 'sigma'),
    (lambda: events.DiscreteLaplaceSumEvent(2e4), 'scale'),
    (lambda: events.DiscreteGaussianSumEvent(1.0, trust='some'), 'trust'),
    (lambda: events.DiscreteGaussianSumEvent(1.0, num_aggregators=0),
     'num_aggregators'),
    (lambda: calibration.calibrate_num_trials(1.0, 1e-5, sensitivity=0),
     'sensitivity'),
])
def test_bad_input_names_the_parameter(build, match):
  with pytest.raises(ValueError, match=match):
    build()


def test_copies_convolved_as_documented():
  # docs/mathematics.md DISCRETE-GAUSSIAN-SUM (ii), docs/secure_sums.md and
  # the event's docstring: 313 copies at sigma = 5, 8 at sigma = 200, 2 up
  # to sigma = 1129.
  def copies(sigma):
    window = lattice_noise.discrete_gaussian_window(sigma)[0]
    return lattice_noise.exact_copies(window.size, 10**6)
  assert (copies(5.0), copies(200.0), copies(1129.0), copies(1130.0)) == (
      313, 8, 2, 1)


def test_binomial_is_finite_and_sound_at_tiny_delta():
  # The window used to leave 4e-35 outside: epsilon was inf below that
  # delta at every N, and calibrate_num_trials(1, 1e-50) was unreachable.
  trials = 1000
  accountant = ShufflePldAccountant()
  accountant.compose(events.BinomialSecureSumEvent(trials))
  epsilon = accountant.get_epsilon(1e-60)
  assert 1.0 < epsilon < 1.2
  exact = _worst_exact(lambda h: _binomial_law(trials, h), 1, epsilon)
  assert exact <= 1e-60
  # Tight: the exact pair needs delta above 1e-60 a little below it.
  assert _worst_exact(lambda h: _binomial_law(trials, h), 1,
                      epsilon * 0.99) > 1e-60
  trials = calibration.calibrate_num_trials(1.0, 1e-50)
  assert calibration.certified_epsilon(events.BinomialSecureSumEvent(trials),
                                       1, 1e-50) <= 1.0
