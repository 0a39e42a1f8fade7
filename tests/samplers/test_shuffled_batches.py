"""Shuffled batches (SHUFFLED-BATCHES-UB, SHUFFLED-BATCHES-LB).

The published lower bound, the certified upper bound, both accountants, and
an independent Monte Carlo check.
"""

import math

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
import numpy as np
import pytest
from scipy import special

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.samplers import EpsilonRange
from shuffle_accountants.samplers import ShuffledBatchesDpEvent
from shuffle_accountants.samplers import shuffled_batches_epsilon

ADD_OR_REMOVE = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE
REPLACE = privacy_accountant.NeighboringRelation.REPLACE_ONE


def test_published_values_one_epoch_of_1000_steps():
  # Chua et al.: lower bound 3.72 at sigma = 1, 1000 steps, delta = 1e-6;
  # no amplification at all: 4.89 (the numbers).
  result = shuffled_batches_epsilon(1.0, 1000, 1, 1e-6)
  assert isinstance(result, EpsilonRange)
  assert round(result.lower, 2) == 3.72
  assert round(result.upper, 2) == 4.89


def test_upper_bound_is_the_gaussian_mechanism_in_closed_form():
  # An independent delta(eps) of N(mu, 1) vs N(0, 1), by the erfc form.
  for relation, scale in ((ADD_OR_REMOVE, 1), (REPLACE, 2)):
    upper = shuffled_batches_epsilon(0.8, 100, 3, 1e-5, relation).upper
    mu = scale * math.sqrt(3) / 0.8
    delta = lambda eps: (0.5 * special.erfc((eps / mu - mu / 2) / math.sqrt(2))
                         - math.exp(eps) * 0.5 * special.erfc(
                             (eps / mu + mu / 2) / math.sqrt(2)))
    assert delta(upper) <= 1e-5 < delta(upper - 1e-6)


def _monte_carlo_lower(sigma, steps, spikes, delta, samples, seed):
  """An event's (P(E), Q(E)) estimated from samples (SHUFFLED-BATCHES-LB)."""
  rng = np.random.default_rng(seed)
  noise = rng.normal(0, sigma, (2, samples, steps))
  noise[0, :, 0] += spikes[0]  # the mixture is symmetric: spike in step 0
  noise[1, :, 0] += spikes[1]
  return np.max(noise[0], axis=1), np.max(noise[1], axis=1)


def test_one_epoch_lower_bound_matches_monte_carlo_of_the_pair():
  # Independent check of the closed form: at the bound's threshold, sampled
  # event probabilities agree with the computed ones.
  sigma, steps = 1.0, 20
  p_max, q_max = _monte_carlo_lower(sigma, steps, (2.0, 1.0), 0, 200_000, 0)
  threshold = 2.5
  p_exact = -math.expm1(special.log_ndtr(threshold - 2)
                        + (steps - 1) * special.log_ndtr(threshold))
  q_exact = -math.expm1(special.log_ndtr(threshold - 1)
                        + (steps - 1) * special.log_ndtr(threshold))
  assert np.mean(p_max > threshold) == pytest.approx(p_exact, rel=0.02)
  assert np.mean(q_max > threshold) == pytest.approx(q_exact, rel=0.02)


@pytest.mark.parametrize('sigma', [0.8, 1.0, 2.0])
@pytest.mark.parametrize('relation', [ADD_OR_REMOVE, REPLACE])
def test_lower_is_below_upper_and_monotone_in_epochs(sigma, relation):
  previous = EpsilonRange(0.0, 0.0)
  for epochs in (1, 2, 5):
    result = shuffled_batches_epsilon(sigma, 1000, epochs, 1e-6, relation)
    assert 0 <= result.lower <= result.upper
    assert result.lower >= previous.lower - 1e-9
    assert result.upper >= previous.upper
    previous = result


def test_one_step_per_epoch_lower_bound_is_nearly_the_upper_bound():
  # t = 1: the pair is N(2) vs N(1) exactly, so [LB] is the Gaussian's eps.
  result = shuffled_batches_epsilon(1.0, 1, 1, 1e-5)
  assert result.upper * 0.97 <= result.lower <= result.upper


@pytest.mark.parametrize('relation', [ADD_OR_REMOVE, REPLACE])
def test_both_accountants_compose_the_upper_bound(relation):
  event = ShuffledBatchesDpEvent(1.0, 1000, 2)
  expected = shuffled_batches_epsilon(1.0, 1000, 2, 1e-6, relation).upper
  pld = ShufflePldAccountant(relation).compose(event)
  # The closed form rounds delta 1e-8 pessimistically; the PLD differently.
  assert expected * (1 - 1e-8) <= pld.get_epsilon(1e-6) <= expected * 1.01
  rdp = ShuffleRdpAccountant(neighboring_relation=relation).compose(event)
  assert expected <= rdp.get_epsilon(1e-6) <= expected * 1.2
  # Composed with other events like any DpEvent.
  pld.compose(dp_event.GaussianDpEvent(5.0))
  assert pld.get_epsilon(1e-6) > expected


def test_zero_noise_is_infinite():
  assert shuffled_batches_epsilon(0.0, 10, 1, 1e-6) == EpsilonRange(
      math.inf, math.inf)
  accountant = ShuffleRdpAccountant().compose(ShuffledBatchesDpEvent(0.0, 10))
  assert accountant.get_epsilon(1e-6) == math.inf


@pytest.mark.parametrize('arguments, message', [
    ((-1.0, 10, 1, 1e-6), 'noise_multiplier'),
    ((1.0, 0, 1, 1e-6), 'steps_per_epoch'),
    ((1.0, 10, 0, 1e-6), 'num_epochs'),
    ((1.0, 10, 1, 0.0), 'target_delta'),
    ((1.0, 10, 1.5, 1e-6), 'num_epochs'),
])
def test_invalid_arguments_name_the_parameter(arguments, message):
  with pytest.raises((ValueError, TypeError), match=message):
    shuffled_batches_epsilon(*arguments)


def test_unknown_relation_is_refused():
  with pytest.raises(ValueError, match='neighboring_relation'):
    shuffled_batches_epsilon(1.0, 10, 1, 1e-6, 'replace')


def test_many_epochs_finish_and_stay_finite():
  result = shuffled_batches_epsilon(0.5, 10_000, 500, 1e-9)
  assert np.isfinite(result.upper) and 0 < result.lower <= result.upper
