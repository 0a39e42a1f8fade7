"""Flower adapter: PldAccountant against Flower's protocol, closed forms and Flower's RDP backend."""

import inspect
import json
import math

import numpy as np
import pytest
from scipy import integrate
from scipy import optimize
from scipy import special
from scipy import stats

privacy_accounting = pytest.importorskip('flwr.supercore.privacy_accounting')
flower = pytest.importorskip('shuffle_accountants.adapters.flower')
from flwr.supercore.privacy_accounting import rdp_accountant  # pylint: disable=wrong-import-position

PrivacyConfig = privacy_accounting.PrivacyConfig
GaussianPrivacyEvent = privacy_accounting.GaussianPrivacyEvent
SamplingMethod = privacy_accounting.SamplingMethod
Relation = privacy_accounting.NeighboringRelation
PldAccountant = flower.PldAccountant

NO_AMPLIFICATION = (SamplingMethod.NO_AMPLIFICATION, Relation.ADD_OR_REMOVE_ONE)
POISSON = (SamplingMethod.POISSON, Relation.ADD_OR_REMOVE_ONE)
WITHOUT_REPLACEMENT = (SamplingMethod.WITHOUT_REPLACEMENT, Relation.REPLACE_ONE)
MODELS = (NO_AMPLIFICATION, POISSON, WITHOUT_REPLACEMENT)
DELTA = 1e-5


def config(model, population=1000, max_epsilon=None):
  sampling, relation = model
  return PrivacyConfig(target_delta=DELTA, population_size=population,
                       neighboring_relation=relation, sampling_method=sampling,
                       max_epsilon=max_epsilon)


def gaussian_delta(mu: float, epsilon: float) -> float:
  """Exact delta(eps) of N(mu, 1) vs N(0, 1) (Balle & Wang 2018)."""
  return (stats.norm.cdf(mu / 2 - epsilon / mu)
          - math.exp(epsilon + special.log_ndtr(-mu / 2 - epsilon / mu)))


def gaussian_epsilon(mu: float, delta: float) -> float:
  return optimize.brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0,
                         mu**2 / 2 + 40 * mu, xtol=1e-13, rtol=1e-15)


def mixture_delta(shift: float, ratio: float, epsilon: float) -> float:
  """Larger delta(eps) of both orders of (r N(shift) + (1-r) N(0), N(0)), by quadrature."""
  p = lambda x: ratio * stats.norm.pdf(x - shift) + (1 - ratio) * stats.norm.pdf(x)
  q = stats.norm.pdf
  def hockey(first, second):
    return integrate.quad(lambda x: max(0.0, first(x) - math.exp(epsilon) * second(x)),
                          -40, 40 + shift, points=[0.0, shift], limit=400,
                          epsabs=1e-14)[0]
  return max(hockey(p, q), hockey(q, p))


def test_implements_flowers_protocol_with_its_signatures():
  protocol = privacy_accounting.PrivacyAccountant
  members = [name for name in vars(protocol) if not name.startswith('_')]
  assert set(members) >= {'config', 'num_releases', 'compose', 'get_epsilon',
                          'get_delta', 'get_privacy_spent', 'would_exceed',
                          'state_dict', 'load_state_dict'}
  for name in members:
    ours = getattr(PldAccountant, name)
    theirs = getattr(protocol, name)
    if isinstance(theirs, property):
      assert isinstance(ours, property), name
      continue
    assert (list(inspect.signature(ours).parameters)
            == list(inspect.signature(theirs).parameters)), name
  assert (list(inspect.signature(PldAccountant).parameters)
          == list(inspect.signature(rdp_accountant.RdpAccountant).parameters)[:1])


@pytest.mark.parametrize('backend', [PldAccountant, rdp_accountant.RdpAccountant])
@pytest.mark.parametrize('model', MODELS)
def test_protocol_behaviour_shared_with_flowers_backend(backend, model):
  """What the protocol promises, checked on Flower's backend and ours alike."""
  accountant = backend(config(model, max_epsilon=2.0))
  event = GaussianPrivacyEvent(noise_multiplier=2.0, sample_size=50,
                               population_size=1000)
  assert accountant.num_releases == 0
  assert accountant.get_epsilon(DELTA) == 0.0
  accountant.compose(event)
  accountant.compose(event, count=2)
  assert accountant.num_releases == 3
  spent = accountant.get_privacy_spent()
  assert spent.delta == DELTA and spent.num_releases == 3
  assert spent.epsilon == accountant.get_epsilon(DELTA) > 0
  assert accountant.get_delta(spent.epsilon) <= DELTA * (1 + 1e-9)
  # A prospective check leaves the ledger alone.
  before = accountant.get_epsilon(DELTA)
  accountant.would_exceed(event, count=1000)
  assert accountant.num_releases == 3
  assert accountant.get_epsilon(DELTA) == before
  state = json.loads(json.dumps(accountant.state_dict()))
  restored = backend(config(model, max_epsilon=2.0))
  restored.load_state_dict(state)
  assert restored.num_releases == 3
  assert restored.get_epsilon(DELTA) == before  # bit for bit
  with pytest.raises(ValueError):
    restored.load_state_dict(backend(config(model, population=999)).state_dict())
  with pytest.raises(ValueError):
    accountant.compose(GaussianPrivacyEvent(2.0, 5, 999))
  with pytest.raises(ValueError):
    accountant.compose(event, count=0)
  with pytest.raises(ValueError):
    accountant.get_epsilon(0.0)


@pytest.mark.parametrize('sigma', [0.3, 0.7, 1.0, 2.0, 5.0, 20.0])
@pytest.mark.parametrize('rounds', [1, 10, 300])
def test_no_amplification_within_one_percent_of_the_gdp_closed_form(sigma, rounds):
  accountant = PldAccountant(config(NO_AMPLIFICATION))
  accountant.compose(GaussianPrivacyEvent(sigma, 10, 1000), rounds)
  exact = gaussian_epsilon(math.sqrt(rounds) / sigma, DELTA)
  epsilon = accountant.get_epsilon(DELTA)
  assert exact <= epsilon <= 1.01 * exact
  assert accountant.get_delta(exact) >= gaussian_delta(
      math.sqrt(rounds) / sigma, exact) * (1 - 1e-9)


def test_rounds_of_different_noise_compose_to_the_gdp_of_their_sum():
  accountant = PldAccountant(config(NO_AMPLIFICATION))
  for sigma in (1.0, 2.0, 4.0):
    accountant.compose(GaussianPrivacyEvent(sigma, 10, 1000), 3)
  mu = math.sqrt(3 * (1 + 1 / 4 + 1 / 16))
  exact = gaussian_epsilon(mu, DELTA)
  assert exact <= accountant.get_epsilon(DELTA) <= 1.01 * exact


@pytest.mark.parametrize('model, shift_per_inverse_sigma',
                         [(POISSON, 1.0), (WITHOUT_REPLACEMENT, 2.0)])
@pytest.mark.parametrize('sigma, sample_size', [(0.8, 100), (1.5, 30), (3.0, 500)])
@pytest.mark.parametrize('epsilon', [0.0, 0.3, 1.5])
def test_one_sampled_release_is_above_its_pair_by_quadrature(
    model, shift_per_inverse_sigma, sigma, sample_size, epsilon):
  """Poisson: the pair is the mechanism's (exact); without replacement, the
  pair at sensitivity 2C is what Balle et al.'s bound gives."""
  accountant = PldAccountant(config(model))
  accountant.compose(GaussianPrivacyEvent(sigma, sample_size, 1000))
  truth = mixture_delta(shift_per_inverse_sigma / sigma, sample_size / 1000,
                        epsilon)
  delta = accountant.get_delta(epsilon)
  assert truth <= delta <= truth * 1.05 + 1e-9


@pytest.mark.parametrize('model', MODELS)
@pytest.mark.parametrize('sigma', [0.6, 1.0, 2.5])
@pytest.mark.parametrize('rounds, sample_size', [(1, 100), (50, 10), (500, 10)])
def test_never_above_flowers_rdp_accountant(model, sigma, rounds, sample_size):
  ours = PldAccountant(config(model))
  ours.compose(GaussianPrivacyEvent(sigma, sample_size, 1000), rounds)
  theirs = rdp_accountant.RdpAccountant(config(model))
  # Flower's RDP backend under replace-one reads σ against the replace-one
  # sensitivity (dp_accounting's RDP convention): the same release as σ/2
  # against the clipping norm C, which is what our σ means (module docstring).
  flower_sigma = sigma / 2 if model is WITHOUT_REPLACEMENT else sigma
  theirs.compose(GaussianPrivacyEvent(flower_sigma, sample_size, 1000), rounds)
  for delta in (1e-3, DELTA, 1e-10):
    assert ours.get_epsilon(delta) <= theirs.get_epsilon(delta)


@pytest.mark.parametrize('model', MODELS)
def test_would_exceed_is_the_epsilon_after_composing(model):
  accountant = PldAccountant(config(model, max_epsilon=1.0))
  event = GaussianPrivacyEvent(3.0, 20, 1000)
  for _ in range(3):
    probe = PldAccountant(config(model, max_epsilon=1.0))
    probe.load_state_dict(accountant.state_dict())
    probe.compose(event, 4)
    after = probe.get_epsilon(DELTA)
    for limit in (after * 0.999, after * 1.001):
      assert accountant.would_exceed(event, max_epsilon=limit, count=4) == (
          after > limit)
    assert accountant.would_exceed(event, count=4) == (after > 1.0)
    accountant.compose(event, 4)
  without_limit = PldAccountant(config(model))
  with pytest.raises(ValueError, match='max_epsilon'):
    without_limit.would_exceed(event)
  with pytest.raises(ValueError, match='max_epsilon'):
    accountant.would_exceed(event, max_epsilon=-1.0)


def test_state_is_json_and_restores_epsilon_bit_for_bit_across_events():
  accountant = PldAccountant(config(POISSON))
  for sigma, size, count in ((1.0, 10, 5), (1.3, 20, 1), (1.0, 10, 2)):
    accountant.compose(GaussianPrivacyEvent(sigma, size, 1000), count)
  text = json.dumps(accountant.state_dict())
  restored = PldAccountant(config(POISSON))
  restored.load_state_dict(json.loads(text))
  for delta in (1e-2, DELTA, 1e-12):
    assert restored.get_epsilon(delta) == accountant.get_epsilon(delta)
  assert restored.get_delta(0.5) == accountant.get_delta(0.5)
  assert restored.state_dict() == accountant.state_dict()


def test_refuses_foreign_state_and_types_with_named_parameters():
  accountant = PldAccountant(config(NO_AMPLIFICATION))
  flower_state = rdp_accountant.RdpAccountant(config(NO_AMPLIFICATION)).state_dict()
  with pytest.raises(ValueError, match='backend'):
    accountant.load_state_dict(flower_state)
  state = accountant.state_dict()
  state['compositions'] = [{'event': {'noise_multiplier': -1.0, 'sample_size': 1,
                                      'population_size': 1000}, 'count': 1}]
  with pytest.raises(ValueError, match='state'):
    accountant.load_state_dict(state)
  with pytest.raises(TypeError, match='config'):
    PldAccountant({'target_delta': 1e-5})
  with pytest.raises(TypeError, match='event'):
    accountant.compose((1.0, 10, 1000))
  with pytest.raises(ValueError, match='delta'):
    accountant.get_epsilon(1.5)
  with pytest.raises(ValueError, match='epsilon'):
    accountant.get_delta(-0.1)
  with pytest.raises(ValueError, match='population_size=999'):
    accountant.compose(GaussianPrivacyEvent(1.0, 10, 999))


def test_a_model_flower_might_add_is_refused_by_name():
  # PrivacyConfig validates in __post_init__; a future Flower may accept
  # more models, which must not be accounted by guess.
  unsupported = object.__new__(PrivacyConfig)
  for name, value in (('target_delta', DELTA), ('population_size', 100),
                      ('neighboring_relation', Relation.REPLACE_ONE),
                      ('sampling_method', SamplingMethod.POISSON),
                      ('max_epsilon', None)):
    object.__setattr__(unsupported, name, value)
  with pytest.raises(ValueError, match='poisson.*replace-one'):
    PldAccountant(unsupported)


def test_accepted_by_flowers_dp_wrappers():
  strategy_module = pytest.importorskip('flwr.serverapp.strategy')
  for wrapper in (strategy_module.DifferentialPrivacyServerSideFixedClipping,
                  strategy_module.DifferentialPrivacyClientSideFixedClipping):
    accountant = PldAccountant(config(NO_AMPLIFICATION, max_epsilon=5.0))
    wrapped = wrapper(strategy_module.FedAvg(), noise_multiplier=1.0,
                      clipping_norm=1.0, num_sampled_clients=10,
                      accountant=accountant)
    assert wrapped.accountant is accountant
    assert wrapped.privacy_spent().epsilon == 0.0
