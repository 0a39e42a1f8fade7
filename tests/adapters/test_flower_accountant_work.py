"""Flower's PldAccountant: Poisson's two halves, dp_accounting's notices, work
per round."""

import logging
import math

import numpy as np
import pytest
from scipy import integrate
from scipy import optimize
from scipy import stats

flower_accountant = pytest.importorskip(
    'shuffle_accountants.adapters.flower.accountant')
from dp_accounting import dp_event  # noqa: E402
from dp_accounting.pld import pld_privacy_accountant  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant  # noqa: E402
from flwr.supercore.privacy_accounting import GaussianPrivacyEvent  # noqa: E402
from flwr.supercore.privacy_accounting import NeighboringRelation as Relation  # noqa: E402
from flwr.supercore.privacy_accounting import PrivacyConfig  # noqa: E402
from flwr.supercore.privacy_accounting import SamplingMethod  # noqa: E402

import shuffle_accountants  # noqa: E402
from shuffle_accountants import _upstream  # noqa: E402

PldAccountant = flower_accountant.PldAccountant

POISSON = (SamplingMethod.POISSON, Relation.ADD_OR_REMOVE_ONE)
MODELS = ((SamplingMethod.NO_AMPLIFICATION, Relation.ADD_OR_REMOVE_ONE),
          POISSON,
          (SamplingMethod.WITHOUT_REPLACEMENT, Relation.REPLACE_ONE))
DELTA = 1e-5
POPULATION = 1000


def config(model, max_epsilon=None):
  sampling, relation = model
  return PrivacyConfig(target_delta=DELTA, population_size=POPULATION,
                       neighboring_relation=relation, sampling_method=sampling,
                       max_epsilon=max_epsilon)


# ---- the Poisson-subsampled Gaussian, written out independently

def one_round_delta(rate: float, shift: float, t: float, remove: bool
                    ) -> float:
  """delta(t) of one round, any real t, in closed form.

  Remove: M = (1-r) N(0,1) + r N(shift,1) against N(0,1); add: the
  reverse. M / N(0,1) = (1-r) + r e^{shift y - shift^2/2} grows with y, so
  each hockey-stick integral runs over a half-line.
  """
  a = math.exp(t) if remove else math.exp(-t)
  if a <= 1 - rate:
    return 1 - math.exp(t) if remove else 0.0
  edge = (math.log((a - (1 - rate)) / rate) + shift**2 / 2) / shift
  if remove:
    return ((1 - rate) * stats.norm.sf(edge)
            + rate * stats.norm.sf(edge - shift)
            - math.exp(t) * stats.norm.sf(edge))
  return stats.norm.cdf(edge) - math.exp(t) * (
      (1 - rate) * stats.norm.cdf(edge) + rate * stats.norm.cdf(edge - shift))


def two_rounds_delta(rate: float, shift: float, epsilon: float) -> float:
  """Exact delta(eps) of two rounds: the larger of the two halves, each
  E_x[delta_1(eps - L(x))] over the first round's output x."""
  def loss(x):
    return np.logaddexp(np.log1p(-rate),
                        np.log(rate) + shift * x - shift**2 / 2)

  def half(remove):
    def density(x):
      mixture = ((1 - rate) * stats.norm.pdf(x)
                 + rate * stats.norm.pdf(x - shift))
      return mixture if remove else stats.norm.pdf(x)

    def integrand(x):
      first = loss(x) if remove else -loss(x)
      return density(x) * one_round_delta(rate, shift, epsilon - first,
                                          remove)
    return integrate.quad(integrand, -40, 40 + shift, limit=400,
                          epsabs=1e-15, epsrel=1e-12)[0]
  return max(half(True), half(False))


def test_poisson_two_rounds_between_the_exact_and_a_thousandth_above():
  rate, sigma = 0.1, 1.0
  accountant = PldAccountant(config(POISSON))
  accountant.compose(GaussianPrivacyEvent(sigma, 100, POPULATION), 2)
  exact = optimize.brentq(
      lambda e: two_rounds_delta(rate, 1 / sigma, e) - DELTA, 0.1, 20,
      xtol=1e-12)
  assert exact <= accountant.get_epsilon(DELTA) <= exact * 1.001
  for epsilon in (0.5, 2.0):
    truth = two_rounds_delta(rate, 1 / sigma, epsilon)
    assert truth * (1 - 1e-9) <= accountant.get_delta(epsilon) <= truth * 1.01


def test_one_round_reference_is_the_hockey_stick_integral():
  """The closed form above against quadrature of (p - e^t q)_+."""
  rate, shift = 0.3, 0.8
  mixture = lambda x: ((1 - rate) * stats.norm.pdf(x)
                       + rate * stats.norm.pdf(x - shift))
  for t in (-0.5, 0.0, 0.4):
    for remove, (p, q) in ((True, (mixture, stats.norm.pdf)),
                           (False, (stats.norm.pdf, mixture))):
      quadrature = integrate.quad(
          lambda x: max(0.0, p(x) - math.exp(t) * q(x)), -30, 30,
          limit=400, epsabs=1e-13)[0]
      assert one_round_delta(rate, shift, t, remove) == pytest.approx(
          quadrature, rel=1e-8, abs=1e-12)


def test_poisson_within_a_thousandth_of_dp_accountings_pld():
  """Issue 39's cell: 7.807 (one symmetrized pair) against 7.047."""
  accountant = PldAccountant(config(POISSON))
  accountant.compose(GaussianPrivacyEvent(1.0, 100, POPULATION), 100)
  reference = pld_privacy_accountant.PLDAccountant().compose(
      dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.0)),
      100).get_epsilon(DELTA)
  assert accountant.get_epsilon(DELTA) <= reference * 1.001


# ---- dp_accounting's notices

def absl_records(caplog):
  return [record for record in caplog.records if record.name == 'absl']


def test_no_dp_accounting_notice_reaches_the_user(caplog, recwarn):
  shuffle_accountants.clear_caches()
  event = GaussianPrivacyEvent(1.0, 100, POPULATION)
  with caplog.at_level(logging.WARNING):
    accountant = PldAccountant(config(POISSON, max_epsilon=100.0))
    accountant.would_exceed(event)
    accountant.compose(event, 10)
    accountant.get_privacy_spent()
    accountant.get_delta(1.0)
  assert not absl_records(caplog)
  assert not recwarn.list


def test_silenced_orders_are_left_out_and_only_they_are_silenced(caplog):
  """dp_accounting's series fails at some orders of this event and
  returns +inf there (no claim: the order drops out of the conversion);
  the same call outside ours still logs, and other notices pass."""
  event = dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.0))
  with caplog.at_level(logging.WARNING):
    upstream = rdp_privacy_accountant.RdpAccountant(
        flower_accountant._RDP_ORDERS).compose(event)
    assert len(absl_records(caplog)) > 0
    caplog.clear()
    with _upstream.quiet_upstream():
      logging.getLogger('absl').warning('another notice')
    assert [r.getMessage() for r in absl_records(caplog)] == ['another notice']
  rdp = upstream._rdp
  assert np.isinf(rdp).any() and np.isfinite(rdp).any()
  assert math.isfinite(upstream.get_epsilon(DELTA))


# ---- work per round

def flower_rounds(accountant, events):
  """As Flower's wrappers ask, round after round: the ε after each."""
  spent = []
  for event in events:
    accountant.would_exceed(event)
    accountant.compose(event)
    spent.append(accountant.get_privacy_spent().epsilon)
  return spent


@pytest.mark.parametrize('model', MODELS)
def test_round_by_round_equals_a_fresh_accountant_bit_for_bit(model):
  events = [GaussianPrivacyEvent(sigma, 50, POPULATION)
            for sigma in (1.0, 1.0, 2.0, 1.0)]
  stepped = PldAccountant(config(model, max_epsilon=1e3))
  spent = flower_rounds(stepped, events)
  for rounds in range(1, len(events) + 1):
    fresh = PldAccountant(config(model))
    for event in events[:rounds]:
      fresh.compose(event)
    assert spent[rounds - 1] == fresh.get_epsilon(DELTA)
  restored = PldAccountant(config(model, max_epsilon=1e3))
  restored.load_state_dict(stepped.state_dict())
  grouped = PldAccountant(config(model))
  grouped.compose(events[0], 3)
  grouped.compose(events[2])
  for other in (restored, grouped):
    assert other.get_epsilon(DELTA) == spent[-1]
    assert other.get_delta(1.0) == stepped.get_delta(1.0)


def test_each_round_builds_one_ledger_and_sampled_rdp_once(monkeypatch):
  """would_exceed's projection serves the round it projects, and the RDP
  of a release without replacement (a second each) is computed once."""
  built = []

  class Counting(flower_accountant.ShufflePldAccountant):
    def __init__(self, *args, **kwargs):
      super().__init__(*args, **kwargs)
      built.append(self)

  series = []
  series_function = rdp_privacy_accountant._compute_rdp_sample_wor_gaussian
  monkeypatch.setattr(
      rdp_privacy_accountant, '_compute_rdp_sample_wor_gaussian',
      lambda *args, **kwargs: series.append(1) or series_function(
          *args, **kwargs))
  monkeypatch.setattr(flower_accountant, 'ShufflePldAccountant', Counting)
  shuffle_accountants.clear_caches()
  rounds = 4
  accountant = PldAccountant(config(MODELS[2], max_epsilon=1e3))
  flower_rounds(accountant, [GaussianPrivacyEvent(1.0, 10, POPULATION)]
                * rounds)
  assert len(built) == rounds
  assert len(series) == 1


@pytest.mark.parametrize('route', [shuffle_accountants.ShuffleRdpAccountant,
                                   shuffle_accountants.ShufflePldAccountant])
def test_the_budget_projection_is_the_ledger_with_the_round(route):
  """`with_round` (every strategy's budget check) holds the accountant's
  ledger and the round, and leaves the accountant as it was."""
  from shuffle_accountants.adapters.flower.wrapper import with_round
  first = shuffle_accountants.SkellamSecureSumEvent(100, 1.0, 100.0, 1e6)
  second = shuffle_accountants.SkellamSecureSumEvent(100, 1.0, 100.0, 4e6)
  accountant = route().compose(first, 3).compose(second)
  ledger = accountant.ledger
  projected = with_round(accountant, first)
  assert accountant.ledger == ledger and projected is not accountant
  composed = route().compose(first, 3).compose(second).compose(first)
  assert projected.get_epsilon(DELTA) == composed.get_epsilon(DELTA)
  assert projected.get_epsilon(DELTA) > accountant.get_epsilon(DELTA)
  assert with_round(route(), first).ledger == route().compose(first).ledger
