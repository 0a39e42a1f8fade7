"""One convention under REPLACE_ONE on both routes.

See UPSTREAM-SENSITIVITY and issues 21 and 43.

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

from shuffle_accountants import DEFAULT_ORDERS
from shuffle_accountants import CheckInEvent
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
      nested._rdp, parent().compose(dp_event.GaussianDpEvent(1.0), 3)._rdp)
  sampled = dp_event.SampledWithoutReplacementDpEvent(
      1000, 10, dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(2.0),
                                          dp_event.GaussianDpEvent(2.0)]))
  ours = ShuffleRdpAccountant(orders).compose(sampled)
  reference = parent().compose(dp_event.SampledWithoutReplacementDpEvent(
      1000, 10, dp_event.GaussianDpEvent(2.0 / np.sqrt(2) / 2)))
  np.testing.assert_allclose(ours._rdp, reference._rdp, rtol=1e-12)
  with pytest.raises(dp_accounting.UnsupportedEventError, match='REPLACE_ONE'):
    ShuffleRdpAccountant().compose(dp_event.PoissonSampledDpEvent(
        0.1, dp_event.GaussianDpEvent(1.0)))


# ---- every dp_accounting event, under each relation, on both routes
# (UPSTREAM-SENSITIVITY)

ADD_OR_REMOVE_ONE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
EPSILONS = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0)
GRID = np.linspace(-60.0, 60.0, 600001)


def hockey_stick(first, second, epsilon):
  """max over both orders of sum (p - e^eps q)+ for two output laws given as
  masses on a common support (a fine grid for densities)."""
  return max(float(np.sum(np.maximum(p - np.exp(epsilon) * q, 0.0)))
             for p, q in ((first, second), (second, first)))


def on_grid(density):
  mass = density(GRID) * (GRID[1] - GRID[0])
  return mass


def gaussian(mean, sigma):
  return on_grid(lambda y: stats.norm.pdf(y, mean, sigma))


def laplace(mean, scale):
  return on_grid(lambda y: np.exp(-np.abs(y - mean) / scale) / (2 * scale))


def output_laws(event, relation):
  """The two output laws of the worst neighbouring pair, from the event's
  docstring: a sum of records of norm <= C = 1 plus noise, the record at C
  replaced by one at -C (REPLACE_ONE) or removed (ADD_OR_REMOVE_ONE); a
  Poisson-sampled record is present with probability q."""
  other = -1.0 if relation is REPLACE_ONE else 0.0
  if isinstance(event, dp_event.RandomizedResponseDpEvent):
    k, p = event.num_buckets, event.noise_parameter
    law = lambda x: np.array([1 - p + p / k if y == x else p / k
                              for y in range(k)])
    return law(0), law(1)
  if isinstance(event, dp_event.DiscreteLaplaceDpEvent):
    a, c = event.noise_parameter, event.sensitivity
    support = np.arange(-400, 401)
    law = lambda shift: np.exp(-a * np.abs(support - shift)) * np.tanh(a / 2)
    return law(c), law(other * c)
  rate = 1.0
  if isinstance(event, dp_event.PoissonSampledDpEvent):
    rate, event = event.sampling_probability, event.event
  noise = (gaussian if isinstance(event, dp_event.GaussianDpEvent)
           else laplace)
  scale = event.noise_multiplier
  mixture = lambda shift: (1 - rate) * noise(0.0, scale) + rate * noise(
      shift, scale)
  return mixture(1.0), mixture(other)


# (event, relations under which both routes must refuse it as upstream does,
# route names that refuse it under any relation)
EVENTS = [
    dp_event.GaussianDpEvent(2.0),
    dp_event.LaplaceDpEvent(1.0),
    dp_event.ComposedDpEvent([dp_event.LaplaceDpEvent(1.0)]),
    dp_event.DiscreteLaplaceDpEvent(0.5, 2),
    dp_event.RandomizedResponseDpEvent(0.5, 3),
    dp_event.PoissonSampledDpEvent(0.5, dp_event.GaussianDpEvent(1.5)),
    dp_event.PoissonSampledDpEvent(0.3, dp_event.LaplaceDpEvent(1.0)),
]
ROUTES = {'rdp': lambda relation: ShuffleRdpAccountant(
              neighboring_relation=relation),
          'pld': lambda relation: ShufflePldAccountant(
              neighboring_relation=relation)}
# What each route refuses (UPSTREAM-SENSITIVITY's table): upstream's refusals,
# kept.
REFUSED = {
    ('rdp', 'DiscreteLaplaceDpEvent'): (REPLACE_ONE, ADD_OR_REMOVE_ONE),
    ('rdp', 'PoissonSampledDpEvent'): (REPLACE_ONE,),
    ('rdp', 'PoissonSampledDpEvent/LaplaceDpEvent'): (REPLACE_ONE,
                                                      ADD_OR_REMOVE_ONE),
    ('pld', 'LaplaceDpEvent'): (REPLACE_ONE,),
    ('pld', 'ComposedDpEvent'): (REPLACE_ONE,),
    ('pld', 'DiscreteLaplaceDpEvent'): (REPLACE_ONE,),
    ('pld', 'PoissonSampledDpEvent/LaplaceDpEvent'): (REPLACE_ONE,),
    ('pld', 'RandomizedResponseDpEvent'): (ADD_OR_REMOVE_ONE,),
    ('rdp', 'RandomizedResponseDpEvent'): (ADD_OR_REMOVE_ONE,),
}


def _name(event):
  if isinstance(event, dp_event.PoissonSampledDpEvent) and isinstance(
      event.event, dp_event.LaplaceDpEvent):
    return 'PoissonSampledDpEvent/LaplaceDpEvent'
  return type(event).__name__


def _leaf(event):
  return (event.events[0] if isinstance(event, dp_event.ComposedDpEvent)
          else event)


@pytest.mark.parametrize('route', sorted(ROUTES))
@pytest.mark.parametrize('relation', [REPLACE_ONE, ADD_OR_REMOVE_ONE],
                         ids=['replace_one', 'add_or_remove'])
@pytest.mark.parametrize('event', EVENTS, ids=_name)
def test_every_accepted_event_is_above_its_exact_law(event, relation, route):
  """Each route's delta(eps) is at least that of the event's docstring
  mechanism under the relation; refusals are those of UPSTREAM-SENSITIVITY's
  table."""
  accountant = ROUTES[route](relation)
  refused = relation in REFUSED.get((route, _name(event)), ()) or (
      route == 'rdp' and relation is ADD_OR_REMOVE_ONE
      and isinstance(event, dp_event.PoissonSampledDpEvent)
      and isinstance(event.event, dp_event.LaplaceDpEvent))
  if refused:
    with pytest.raises(dp_accounting.UnsupportedEventError):
      accountant.compose(event)
    return
  accountant.compose(event)
  first, second = output_laws(_leaf(event), relation)
  for epsilon in EPSILONS:
    exact = hockey_stick(first, second, epsilon)
    # 1e-7: the quadrature's error on the grid (Laplace's cusp).
    assert accountant.get_delta(epsilon) >= exact - 1e-7, epsilon


def test_laplace_under_replace_one_spends_twice_its_add_or_remove_loss():
  """The issue 43 table: LaplaceDpEvent(1) under REPLACE_ONE is refused on
  the PLD route (as upstream) and spends 2 on the RDP route, also composed."""
  for event in (dp_event.LaplaceDpEvent(1.0),
                dp_event.ComposedDpEvent([dp_event.LaplaceDpEvent(1.0)])):
    rdp = ShuffleRdpAccountant().compose(event)
    assert rdp.get_epsilon(0.0) == pytest.approx(2.0, rel=1e-9)
    assert 1.0 < rdp.get_epsilon(1e-5) <= 2.0 * (1 + 1e-9)
    with pytest.raises(dp_accounting.UnsupportedEventError):
      ShufflePldAccountant().compose(event)
  # Inside dp_accounting's other wrappers the parent's recursion reaches the
  # same reading: RepeatAndSelect of Laplace(b) under replace-one is that of
  # Laplace(b / 2) under add/remove.
  orders = [1.5, 2.0, 8.0]
  ours = ShuffleRdpAccountant(orders).compose(
      dp_event.RepeatAndSelectDpEvent(dp_event.LaplaceDpEvent(1.0), 1.0, 1.0))
  halved = rdp_privacy_accountant.RdpAccountant(
      orders, ADD_OR_REMOVE_ONE).compose(
          dp_event.RepeatAndSelectDpEvent(dp_event.LaplaceDpEvent(0.5), 1.0,
                                          1.0))
  np.testing.assert_allclose(ours._rdp, halved._rdp, rtol=1e-12)
  with pytest.raises(dp_accounting.UnsupportedEventError):
    ShuffleRdpAccountant().compose(dp_event.SampledWithoutReplacementDpEvent(
        100, 100, dp_event.LaplaceDpEvent(1.0)))


def test_laplace_of_scale_zero_is_non_private_on_the_rdp_route():
  for relation in (REPLACE_ONE, ADD_OR_REMOVE_ONE):
    accountant = ShuffleRdpAccountant(neighboring_relation=relation).compose(
        dp_event.LaplaceDpEvent(0.0))
    assert accountant.get_epsilon(1e-5) == np.inf
    assert accountant.get_delta(10.0) == 1.0
