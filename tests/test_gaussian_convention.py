"""One Gaussian convention under REPLACE_ONE on both routes (W17, issue 21 item 5).

`GaussianDpEvent(sigma)` means noise sigma C on a sum of records clipped to
C, replace-one sensitivity 2C, in `ShufflePldAccountant` (as dp_accounting's
PLD accountant) and in `ShuffleRdpAccountant` (dp_accounting's RDP
accountant alone reads sensitivity 1).
"""

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant
import numpy as np
import pytest
from scipy import optimize
from scipy import stats

from shuffle_accountants import CheckInEvent
from shuffle_accountants import DEFAULT_ORDERS
from shuffle_accountants import DistributedCheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant

REPLACE_ONE = dp_accounting.NeighboringRelation.REPLACE_ONE


def exact_gaussian_epsilon(shift, delta):
  """Exact eps(delta) of N(shift, 1) vs N(0, 1) (independent closed form)."""
  def excess(eps):
    return (stats.norm.cdf(shift / 2 - eps / shift) - np.exp(eps)
            * stats.norm.cdf(-shift / 2 - eps / shift) - delta)
  return optimize.brentq(excess, 0.0, 10 * shift**2 + 100)


def test_one_gaussian_means_sensitivity_two_on_both_routes():
  rdp = ShuffleRdpAccountant().compose(dp_event.GaussianDpEvent(1.0))
  pld = ShufflePldAccountant().compose(dp_event.GaussianDpEvent(1.0))
  parent = rdp_privacy_accountant.RdpAccountant(
      DEFAULT_ORDERS, REPLACE_ONE).compose(dp_event.GaussianDpEvent(1.0))
  exact = exact_gaussian_epsilon(2.0, 1e-5)
  assert pld.get_epsilon(1e-5) == pytest.approx(9.997, abs=1e-3)
  assert rdp.get_epsilon(1e-5) == pytest.approx(10.77, abs=5e-3)
  assert parent.get_epsilon(1e-5) == pytest.approx(4.75, abs=5e-3)
  assert exact <= pld.get_epsilon(1e-5) <= rdp.get_epsilon(1e-5)


def test_a_mixed_ledger_describes_one_mechanism_on_both_routes():
  sigma, steps = 3.0, 40
  gaussians = dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(sigma),
                                           steps)
  ledger = dp_event.ComposedDpEvent([
      gaussians,
      dp_event.SelfComposedDpEvent(ShuffleEvent(10**4, 1.0), 5),
      CheckInEvent(10**4, 0.01, noise_multiplier=4.0),
      DistributedCheckInEvent(10**4, 0.01, 0.5)])
  pld = ShufflePldAccountant().compose(ledger)
  rdp = ShuffleRdpAccountant().compose(ledger)
  # The Gaussian part alone is one Gaussian of shift 2 sqrt(steps) / sigma.
  for delta in (1e-6, 1e-3):
    exact = exact_gaussian_epsilon(2 * np.sqrt(steps) / sigma, delta)
    assert exact <= pld.get_epsilon(delta) <= rdp.get_epsilon(delta)
    assert rdp.get_epsilon(delta) <= 1.6 * pld.get_epsilon(delta)
  # Under sensitivity 1 the RDP route would report less than the exact
  # epsilon of the Gaussians alone: the convention is what makes it sound.
  halved = rdp_privacy_accountant.RdpAccountant(
      neighboring_relation=REPLACE_ONE).compose(gaussians)
  assert halved.get_epsilon(1e-6) < exact


def test_nested_and_sampled_gaussians_follow_the_convention():
  orders = [1.5, 2.0, 8.0]
  parent = lambda: rdp_privacy_accountant.RdpAccountant(orders, REPLACE_ONE)
  nested = ShuffleRdpAccountant(orders).compose(dp_event.SelfComposedDpEvent(
      dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(2.0)]), 3))
  np.testing.assert_allclose(
      nested._rdp, parent().compose(dp_event.GaussianDpEvent(1.0), 3)._rdp)  # pylint: disable=protected-access
  sampled = dp_event.SampledWithoutReplacementDpEvent(
      1000, 10, dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(2.0),
                                          dp_event.GaussianDpEvent(2.0)]))
  ours = ShuffleRdpAccountant(orders).compose(sampled)
  reference = parent().compose(dp_event.SampledWithoutReplacementDpEvent(
      1000, 10, dp_event.GaussianDpEvent(2.0 / np.sqrt(2) / 2)))
  np.testing.assert_allclose(ours._rdp, reference._rdp, rtol=1e-12)  # pylint: disable=protected-access
  with pytest.raises(dp_accounting.UnsupportedEventError, match='REPLACE_ONE'):
    ShuffleRdpAccountant().compose(dp_event.PoissonSampledDpEvent(
        0.1, dp_event.GaussianDpEvent(1.0)))
