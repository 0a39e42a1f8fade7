"""The proven FFT round-off bound (pld/roundoff.py, docs/mathematics.md D24),
against compositions computed directly in extended precision (np.longdouble,
sums of non-negative products: relative error ~1e-19 per operation)."""

import math

import numpy as np
import pytest

from shuffle_accountants import events
from shuffle_accountants.pld import accountant as pld_accountant
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import roundoff


def _exact_power(values, count):
  """count-fold convolution in long double (direct sums, by squaring)."""
  result, power = np.ones(1, np.longdouble), values.astype(np.longdouble)
  while count:
    if count & 1:
      result = np.convolve(result, power)
    count >>= 1
    if count:
      power = np.convolve(power, power)
  return result


def _adversarial_pmf(rng, size):
  """A PMF whose masses span 1 down to 1e-280 (the tails delta reads)."""
  probs = 10.0 ** -rng.uniform(0, 280, size)
  probs[rng.integers(size)] = 1.0
  return probs / probs.sum()


@pytest.mark.parametrize('seed', range(6))
def test_fft_error_bounds_exceed_the_true_error(seed):
  rng = np.random.default_rng(seed)
  first = _adversarial_pmf(rng, int(rng.integers(2, 40)))
  second = rng.random(int(rng.integers(2, 300))) ** 8
  count = int(rng.integers(2, 300))
  computed, length = roundoff._fft_power(first, count, 1 << 30)  # pylint: disable=protected-access
  error = np.linalg.norm(computed - _exact_power(first, count)
                         .astype(np.float64))
  assert 0 < error <= roundoff.fft_power_error(first, count, length)
  computed, length = roundoff._fft_convolve(first, second, 1 << 30)  # pylint: disable=protected-access
  exact = np.convolve(first.astype(np.longdouble), second.astype(np.longdouble))
  error = np.linalg.norm(computed - exact.astype(np.float64))
  assert error <= roundoff.fft_convolution_error(first, second, length)


def test_fft_model_constant_is_higham_times_two_per_level():
  u = 2.0**-53
  eta = 2 * (2 * u + 4 * u / (1 - 4 * u) * (math.sqrt(2) + 2 * u))
  assert roundoff.fft_relative_error(2**20) == pytest.approx(
      20 * eta / (1 - 20 * eta), rel=1e-12)
  with pytest.raises(ValueError, match='power of two'):
    roundoff.fft_relative_error(3 * 2**10)


def _exact_composition(rounds):
  """(lowest index, long-double finite masses) of a `roundoff.Rounds`."""
  total, lower = np.ones(1, np.longdouble), 0
  for first, probs, _, count in rounds.rounds:
    total = np.convolve(total, _exact_power(probs, count))
    lower += count * first
  return lower, total


def _ledger(seed):
  rng = np.random.default_rng(seed)
  rounds = []
  for _ in range(int(rng.integers(1, 4))):
    size = int(rng.integers(2, 30))
    probs = _adversarial_pmf(rng, size) * (1 - 1e-6)
    rounds.append((int(rng.integers(-size, 2)), probs, 1e-6,
                   int(rng.integers(1, 40))))
  return roundoff.Rounds(float(rng.uniform(0.01, 0.5)), rounds)


@pytest.mark.parametrize('seed', range(8))
@pytest.mark.parametrize('window', [None, 64, 16])
def test_certified_masses_bound_the_exact_composition(seed, window,
                                                      monkeypatch):
  """Entry by entry, at every tilt, on full and on wrapped-around windows."""
  if window is not None:  # force the cyclic window and the Chernoff tail
    monkeypatch.setattr(roundoff, 'MAX_CERTIFIED_BUCKETS', window)
  rounds = _ledger(seed)
  lowest, exact = _exact_composition(rounds)
  d = rounds.discretization
  top = (lowest + exact.size - 1) * d
  for epsilon in np.linspace(0.0, top, 5):
    tilt = rounds.saddle_point(epsilon)
    first, length = rounds.window(tilt, epsilon)
    lower, masses, infinity = rounds.certified_masses(tilt, first, length)
    assert lower == first and masses.size == length
    index = np.arange(first, first + length) - lowest
    inside = (index >= 0) & (index < exact.size)
    truth = np.zeros(length, np.longdouble)
    truth[inside] = exact[index[inside]]
    assert np.all(masses >= truth.astype(np.float64) * (1 - 1e-15))
    above = np.sum(exact[max(0, first + length - lowest):])
    finite = np.prod([(1 - np.longdouble(1e-6)) ** c
                      for *_, c in rounds.rounds])
    assert infinity >= float((1 - finite) + above) * (1 - 1e-15)


@pytest.mark.parametrize('num_users,rounds_count', [(20, 30), (300, 200)])
def test_accountant_stays_above_the_exact_composition(num_users,
                                                      rounds_count):
  accountant = pld_accountant.ShufflePldAccountant(
      value_discretization_interval=0.02)
  accountant.compose(events.ShuffleEvent(num_users=num_users,
                                         local_epsilon=2.0), rounds_count)
  profile = discrete.DirectProfile(accountant._pld)  # pylint: disable=protected-access
  assert profile.certified
  rounds = discrete._ROUNDS[accountant._pld]  # pylint: disable=protected-access
  lowest, exact = _exact_composition(rounds)
  losses = (lowest + np.arange(exact.size)).astype(np.longdouble) * 0.02
  infinity = rounds.infinity_mass()

  def exact_delta(epsilon):
    terms = exact * -np.expm1(np.longdouble(epsilon) - losses)
    return float(np.sum(terms[losses > epsilon])) + infinity * (1 - 1e-12)

  for delta in [1e-3, 1e-8, 1e-12, 1e-15]:
    epsilon = accountant.get_epsilon(delta)
    assert exact_delta(epsilon) <= delta
    assert accountant.get_delta(epsilon) <= delta * (1 + 1e-9)
  for epsilon in np.linspace(0, float(losses[-1]), 9):
    assert accountant.get_delta(epsilon) >= exact_delta(epsilon) * (1 - 1e-12)
