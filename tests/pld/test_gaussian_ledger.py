"""Long Gaussian-only ledgers in closed form (GAUSS-LEDGER-EXACT)."""

import math

from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation
import mpmath
import pytest

from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants.pld import gaussian_ledger
from shuffle_accountants.samplers import shuffled_batches

_REPLACE = NeighboringRelation.REPLACE_ONE
_ADD_REMOVE = NeighboringRelation.ADD_OR_REMOVE_ONE


def _exact_delta(mu, epsilon):
  """delta(eps) of N(mu, 1) against N(0, 1), in 60-digit arithmetic."""
  with mpmath.workdps(60):
    mu, epsilon = mpmath.mpf(mu), mpmath.mpf(epsilon)
    return (mpmath.ncdf(mu / 2 - epsilon / mu)
            - mpmath.exp(epsilon) * mpmath.ncdf(-mu / 2 - epsilon / mu))


@pytest.mark.parametrize('relation, sensitivity', [(_REPLACE, 2.0),
                                                   (_ADD_REMOVE, 1.0)])
def test_composed_mu_adds_the_rounds_precisions(relation, sensitivity):
  ledger = dp_event.ComposedDpEvent([
      dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(2.0), 3),
      dp_event.GaussianDpEvent(0.5)])
  assert gaussian_ledger.composed_mu(ledger, relation) == pytest.approx(
      sensitivity * math.sqrt(3 / 4 + 4), rel=1e-15)


@pytest.mark.parametrize('other', [
    dp_event.LaplaceDpEvent(1.0), dp_event.GaussianDpEvent(0.0),
    ShuffleEvent(1000, 1.0)])
def test_composed_mu_is_none_unless_every_event_is_a_gaussian(other):
  ledger = dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(1.0), other])
  assert gaussian_ledger.composed_mu(ledger, _REPLACE) is None


@pytest.mark.parametrize('mu', [60.0, 300.0, 1e4])
def test_the_profile_errs_well_within_its_allowance(mu):
  # GAUSS-LEDGER-EXACT's measured error (4.3e-11 at most) against 50 digits.
  closed_form = gaussian_ledger.ClosedFormGaussian(mu)
  for delta in (0.9, 1e-1, 1e-6, 1e-30, 1e-300):
    epsilon = closed_form.epsilon(delta)
    for at in (epsilon, epsilon * (1 - 1e-9), epsilon * (1 + 1e-9)):
      computed = shuffled_batches.gaussian_delta(mu, at)
      assert abs(computed / _exact_delta(mu, at) - 1) <= (
          gaussian_ledger.ALLOWANCE / 10)


@pytest.mark.parametrize('mu', [0.3, 3.0, 63.0])
@pytest.mark.parametrize('delta', [1e-2, 1e-6, 1e-12])
def test_closed_form_is_the_exact_profile_rounded_up(mu, delta):
  closed_form = gaussian_ledger.ClosedFormGaussian(mu)
  epsilon = closed_form.epsilon(delta)
  assert _exact_delta(mu, epsilon) <= delta
  assert _exact_delta(mu, epsilon * (1 - 1e-9)) > delta
  for at in (0.0, epsilon, 2 * epsilon + 1):
    assert closed_form.delta(at) >= _exact_delta(mu, at)
    # Below the smallest double it answers the smallest double.
    assert closed_form.delta(at) <= max(_exact_delta(mu, at) * (1 + 1e-8),
                                        math.ulp(0.0))


def test_a_thousand_gaussians_answer_in_closed_form_below_the_grid():
  # Gaussian(1) x 1000 (mu = 63): 147 s on the grid before, which answered
  # 2299.6688155268853 at delta = 1e-6.
  accountant = ShufflePldAccountant(relative_accuracy=0.05).compose(
      dp_event.GaussianDpEvent(1.0), 1000)
  epsilon = accountant.get_epsilon(1e-6)
  assert epsilon <= 2299.6688155268853
  assert _exact_delta(2 * math.sqrt(1000), epsilon) <= 1e-6
  assert accountant.get_delta(epsilon) <= 1e-6
  assert accountant.get_delta(epsilon * (1 - 1e-9)) > 1e-6
  assert accountant.contributions == ()
  assert accountant.explain_routes(1e-6)[0]['route'] == (
      'the exact Gaussian profile (GAUSS-LEDGER-EXACT)')
  assert accountant.get_optimistic_epsilon(1e-6) == epsilon


def test_short_gaussian_ledgers_keep_the_grid():
  # mu = 2 sqrt(3): the grid's answer (recorded before the closed form; the
  # safety margin on dp_accounting's masses then raised it 3e-12 relative).
  accountant = ShufflePldAccountant().compose(dp_event.GaussianDpEvent(1.0), 3)
  assert accountant.get_epsilon(1e-6) == 21.83921640561457
