"""The Skellam secure sum's PMF >= exact hockey-stick divergences.

The references enumerate the Skellam laws from the Bessel-function PMF
e^-mu I_|z|(mu), independently of the library (SKELLAM-SUM).
"""

import numpy as np
import pytest
from scipy import optimize
from scipy import special

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import events
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import skellam

EPSILONS = np.array([0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0])


def skellam_pmf(values, noise_variance):
  return special.ive(np.abs(values), noise_variance)


def hockey_stick(p, q, epsilon):
  return float(np.sum(np.maximum(p - np.exp(epsilon) * q, 0.0)))


def exact_epsilon(p, q, delta):
  """The smallest epsilon >= 0 with H_{e^eps}(P || Q) <= delta."""
  if hockey_stick(p, q, 0.0) <= delta:
    return 0.0
  return optimize.brentq(lambda e: hockey_stick(p, q, e) - delta, 0.0, 50.0,
                         xtol=1e-12)


def one_round(shift, noise_variance):
  """(P, Q) of a one-round shift, enumerated on a grid per coordinate."""
  grid = np.arange(-400, 401)
  p, q = np.ones(1), np.ones(1)
  for h in shift:
    p = np.outer(p, skellam_pmf(grid - h, noise_variance)).ravel()
    q = np.outer(q, skellam_pmf(grid, noise_variance)).ravel()
  return p, q


@pytest.mark.parametrize('dimension,shift,noise_variance', [
    (1, (2,), 3.0), (1, (1,), 0.4), (2, (2, -1), 40.0), (2, (1, 1), 2.0)])
def test_the_profile_is_above_the_exact_shift_both_orders(
    dimension, shift, noise_variance):
  # granularity 1e-9 and clip norm 1: the event's D2 is 2 sqrt(d) + tiny,
  # at least the shift's L2 norm (and its D1 at least the L1 norm).
  event = events.SkellamSecureSumEvent(dimension, 1.0, 1e-9, noise_variance)
  h = np.asarray(shift, dtype=float)
  assert np.sqrt(np.sum(h**2)) <= event.l2_sensitivity
  assert np.sum(np.abs(h)) <= event.l1_sensitivity
  p, q = one_round(shift, noise_variance)
  profile = discrete.pmf_profile(skellam.skellam_sum_pmf(event, 1e-3))
  for epsilon, bound in zip(EPSILONS, profile(EPSILONS)):
    assert hockey_stick(p, q, epsilon) <= bound
    assert hockey_stick(q, p, epsilon) <= bound


def test_two_composed_rounds_are_above_the_exact_composition():
  # One coordinate, shift 2 (D2 = 2 (1e-9 + 1) >= 2), two rounds: the exact
  # pair is the two-dimensional product.
  event = events.SkellamSecureSumEvent(1, 1.0, 1e-9, 6.0)
  p, q = one_round((2, 2), 6.0)
  accountant = ShufflePldAccountant().compose(event, 2)
  for delta in (1e-2, 1e-4, 1e-6):
    exact = exact_epsilon(p, q, delta)
    certified = accountant.get_epsilon(delta)
    assert exact <= certified < 2 * exact  # sound, and not vacuous


def test_invalid_arguments_are_named():
  event = events.SkellamSecureSumEvent(1, 1.0, 1.0, 1.0)
  with pytest.raises(ValueError, match='discretization'):
    skellam.skellam_sum_pmf(event, 0.0)
  with pytest.raises(TypeError, match='SkellamSecureSumEvent'):
    skellam.skellam_sum_pmf('not an event', 1e-3)
