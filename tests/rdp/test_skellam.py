"""SKELLAM-SUM >= exact Renyi divergences of Skellam shifts, by enumeration."""

import itertools

from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant
import numpy as np
import pytest
from scipy import special

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import checkpoints
from shuffle_accountants import events
from shuffle_accountants.rdp import skellam

ORDERS = np.array([1.5, 2.0, 3.0, 4.5, 8.0, 16.0, 64.0])
# Skellam(mu) laws on |z| <= 3000 carry all but < 1e-300 of the mass here.
SUPPORT = np.arange(-3000, 3001)


def skellam_log_pmf(values, noise_variance):
  """log P[Sk = z] = log(e^-mu I_|z|(mu)), the difference of two
  Poisson(mu / 2): computed from the Bessel function, not the library."""
  with np.errstate(divide='ignore'):
    return np.log(special.ive(np.abs(values), noise_variance))


def renyi(log_p, log_q, order):
  """D_order(P || Q) over the points where both are representable (a lower
  bound on the full sum, which only drops positive terms)."""
  finite = np.isfinite(log_p) & np.isfinite(log_q)
  return special.logsumexp(order * log_p[finite]
                           + (1 - order) * log_q[finite]) / (order - 1)


@pytest.mark.parametrize('noise_variance', [0.3, 3.0, 40.0, 1000.0])
@pytest.mark.parametrize('shift', [1, 3, 12])
def test_one_dimension_both_orders(noise_variance, shift):
  shifted = skellam_log_pmf(SUPPORT - shift, noise_variance)
  centred = skellam_log_pmf(SUPPORT, noise_variance)
  bound = skellam.skellam_rdp_upper_bound(shift, shift, noise_variance, ORDERS)
  for order, value in zip(ORDERS, bound):
    assert renyi(shifted, centred, order) <= value
    assert renyi(centred, shifted, order) <= value
  # Near-tight at large mu: the bound is useful, not vacuous.
  if noise_variance == 1000.0 and shift == 12:
    assert renyi(shifted, centred, 2.0) > 0.99 * bound[1]


@pytest.mark.parametrize('shift', [(1, 1), (2, -3), (0, 4), (5, 5)])
@pytest.mark.parametrize('noise_variance', [0.5, 6.0])
def test_two_dimensions(shift, noise_variance):
  grid = np.arange(-60, 61)
  first, second = np.meshgrid(grid, grid, indexing='ij')
  joint = lambda a, b: (skellam_log_pmf(a, noise_variance)
                        + skellam_log_pmf(b, noise_variance)).ravel()
  shifted = joint(first - shift[0], second - shift[1])
  centred = joint(first, second)
  h = np.asarray(shift, dtype=float)
  bound = skellam.skellam_rdp_upper_bound(
      np.abs(h).sum(), np.sqrt((h**2).sum()), noise_variance, ORDERS)
  for order, value in zip(ORDERS, bound):
    assert renyi(shifted, centred, order) <= value
    assert renyi(centred, shifted, order) <= value


def rounded_law(value, granularity):
  """The randomized rounding of granularity * value: {(integer, prob)}."""
  scaled = granularity * value
  low = np.floor(scaled)
  return [(int(low), 1 - (scaled - low)), (int(low) + 1, scaled - low)]


@pytest.mark.parametrize('clip_norm,granularity,noise_variance',
                         [(1.0, 1.5, 2.0), (1.0, 0.4, 0.7), (2.0, 3.3, 30.0)])
def test_the_event_bounds_the_mechanism_with_its_rounding(
    clip_norm, granularity, noise_variance):
  # Two users, d = 2: the target's vector x or x' (norm <= C), the other's
  # y; the released sum is round(g x) + round(g y) + Sk(mu)^2, every
  # rounding outcome weighted.
  event = events.SkellamSecureSumEvent(2, clip_norm, granularity,
                                       noise_variance)
  bound = skellam.skellam_sum_rdp_upper_bound(event, ORDERS).rdp
  grid = np.arange(-70, 71)
  first, second = np.meshgrid(grid, grid, indexing='ij')

  def released(vectors):
    laws = [rounded_law(v, granularity) for vector in vectors
            for v in vector]
    log_mass = np.full(first.size, -np.inf)
    for outcome in itertools.product(*laws):
      (a, pa), (b, pb), (c, pc), (e, pe) = outcome
      weight = pa * pb * pc * pe
      if weight > 0:
        log_mass = np.logaddexp(log_mass, np.log(weight) + (
            skellam_log_pmf(first - a - c, noise_variance)
            + skellam_log_pmf(second - b - e, noise_variance)).ravel())
    return log_mass

  other = (0.3 * clip_norm, -0.5 * clip_norm)
  target = (clip_norm * 0.6, clip_norm * 0.8)
  replaced = (-clip_norm * 0.6, -clip_norm * 0.8)
  p, q = released([target, other]), released([replaced, other])
  for order, value in zip(ORDERS, bound):
    assert renyi(p, q, order) <= value
    assert renyi(q, p, order) <= value


def test_sensitivities_bound_every_rounding():
  rng = np.random.default_rng(0)
  event = events.SkellamSecureSumEvent(5, 1.0, 2.7, 1.0)
  for _ in range(200):
    x = rng.normal(size=5)
    x /= max(1.0, np.linalg.norm(x))
    y = -x
    for coins in itertools.product([0, 1], repeat=5):
      r = np.floor(2.7 * x) + coins
      s = np.ceil(2.7 * y) - coins
      assert np.linalg.norm(r - s) <= event.l2_sensitivity
      assert np.abs(r - s).sum() <= event.l1_sensitivity


def test_composes_with_other_events_on_the_rdp_route():
  event = events.SkellamSecureSumEvent(100, 1.0, 50.0, 2.0e4)
  ledger = dp_event.ComposedDpEvent([dp_event.SelfComposedDpEvent(event, 7),
                                     dp_event.GaussianDpEvent(3.0)])
  accountant = ShuffleRdpAccountant(orders=ORDERS)
  accountant.compose(ledger)
  expected = (7 * skellam.skellam_rdp_upper_bound(
      event.l1_sensitivity, event.l2_sensitivity, 2.0e4, ORDERS)
              + 2 * ORDERS / 3.0**2)  # replace-one Gaussian, sensitivity 2
  reference = rdp_privacy_accountant.RdpAccountant(orders=list(ORDERS))
  reference._rdp = expected  # pylint: disable=protected-access
  assert accountant.get_epsilon(1e-6) == pytest.approx(
      reference.get_epsilon(1e-6), rel=1e-9)


def test_composes_with_other_events_on_the_pld_route():
  event = events.SkellamSecureSumEvent(100, 1.0, 50.0, 2.0e4)
  gaussian = dp_event.GaussianDpEvent(3.0)
  epsilon = lambda ledger, delta: ShufflePldAccountant().compose(
      ledger).get_epsilon(delta)
  both = epsilon(dp_event.ComposedDpEvent(
      [dp_event.SelfComposedDpEvent(event, 5), gaussian]), 1e-6)
  alone = epsilon(dp_event.SelfComposedDpEvent(event, 5), 5e-7)
  assert max(alone, epsilon(gaussian, 1e-6)) < both
  assert both < alone + epsilon(gaussian, 5e-7)  # basic composition


@pytest.mark.parametrize('field,value', [
    ('dimension', 0), ('dimension', 2.5), ('clip_norm', 0.0),
    ('granularity', -1.0), ('noise_variance', float('nan'))])
def test_invalid_fields_are_named(field, value):
  fields = dict(dimension=3, clip_norm=1.0, granularity=2.0,
                noise_variance=5.0)
  fields[field] = value
  with pytest.raises(ValueError, match=field):
    events.SkellamSecureSumEvent(**fields)


def test_invalid_arguments_are_named():
  with pytest.raises(ValueError, match='noise_variance'):
    skellam.skellam_rdp_upper_bound(1.0, 1.0, 0.0, ORDERS)
  with pytest.raises(ValueError, match='l2_sensitivity'):
    skellam.skellam_rdp_upper_bound(1.0, -1.0, 1.0, ORDERS)


@pytest.mark.parametrize('route', [ShuffleRdpAccountant, ShufflePldAccountant])
def test_a_saved_ledger_loads_to_the_same_epsilon(route, tmp_path):
  accountant = route().compose(
      events.SkellamSecureSumEvent(650, 2.0, 1000.0, 3.7e7), 3)
  checkpoints.save_accountant(accountant, tmp_path / 'ledger.json')
  loaded = checkpoints.load_accountant(tmp_path / 'ledger.json')
  assert loaded.get_epsilon(1e-5) == accountant.get_epsilon(1e-5)
