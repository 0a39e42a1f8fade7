"""Random allocation (RANDOM-ALLOCATION-GRID): the accountant's bound.

Checked against an exact 2-step quadrature, the paper's values and the
package's lower bound.
"""

import math
import threading

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
import numpy as np
import pytest
from scipy import stats

import shuffle_accountants
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.samplers import RandomAllocationDpEvent
from shuffle_accountants.samplers import random_allocation
from shuffle_accountants.samplers import shuffled_batches

pytest.importorskip('PLD_accounting')

ADD_OR_REMOVE = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE
REPLACE = privacy_accountant.NeighboringRelation.REPLACE_ONE


def _epsilon(event, count=1, relation=ADD_OR_REMOVE, delta=1e-6):
  accountant = ShufflePldAccountant(relation)
  accountant.compose(event, count)
  return accountant.get_epsilon(delta)


def _two_step_epsilon(sigma, delta, step=0.01):
  """Exact epsilon of 1-of-2 allocation, both orders, by 2-d quadrature.

  Independent of the library: P = (N(e_1) + N(e_2)) / 2 against
  Q = N(0), densities on a grid (Riemann sum of (p - e^eps q)_+),
  epsilon by bisection.
  """
  axis = np.arange(-9 * sigma, 1 + 9 * sigma, step)
  first, second = np.meshgrid(axis, axis, sparse=True)
  density = lambda x, mean: stats.norm.pdf(x, mean, sigma)
  q = (density(first, 0) * density(second, 0)).ravel()
  p = ((density(first, 1) * density(second, 0)
        + density(first, 0) * density(second, 1)) / 2).ravel()

  def delta_of(epsilon):
    remove = np.sum(np.maximum(p - math.exp(epsilon) * q, 0))
    add = np.sum(np.maximum(q - math.exp(epsilon) * p, 0))
    return max(remove, add) * step**2

  low, high = 0.0, 20.0
  for _ in range(30):
    middle = (low + high) / 2
    low, high = ((middle, high) if delta_of(middle) > delta
                 else (low, middle))
  return (low + high) / 2


@pytest.mark.parametrize('sigma', [0.7, 1.5])
def test_two_steps_upper_bound_is_above_exact_quadrature_and_close(sigma):
  delta = 1e-3
  truth = _two_step_epsilon(sigma, delta)
  upper = _epsilon(RandomAllocationDpEvent(dp_event.GaussianDpEvent(sigma),
                                           1, 2), delta=delta)
  lower = random_allocation.epsilon_lower_bound(sigma, 1, 2, 1, delta)
  assert lower - 1e-3 <= truth <= upper + 1e-3
  assert upper <= truth * 1.05 + 0.01


def test_one_step_is_the_gaussian_mechanism():
  upper = _epsilon(RandomAllocationDpEvent(dp_event.GaussianDpEvent(1.0),
                                           1, 1))
  exact = shuffled_batches.gaussian_epsilon(1.0, 1e-6)
  assert exact <= upper <= exact * 1.02


def test_paper_setting_meets_the_target():
  # Feldman & Shenfeld: sigma = 1, 1 of 1000 steps, delta = 1e-6: eps in
  # [0.1687, 0.1757] (add/remove); Poisson at rate 1/1000: 0.1856.
  event = RandomAllocationDpEvent(dp_event.GaussianDpEvent(1.0), 1, 1000)
  upper = _epsilon(event)
  assert 0.1687 <= upper <= 1.01 * 0.1757
  poisson = ShufflePldAccountant(ADD_OR_REMOVE)
  poisson.compose(dp_event.PoissonSampledDpEvent(
      1e-3, dp_event.GaussianDpEvent(1.0)), 1000)
  assert upper < poisson.get_epsilon(1e-6)
  # Composes with every other event, and more epochs cost more.
  assert _epsilon(event, 2) > upper
  mixed = ShufflePldAccountant(ADD_OR_REMOVE)
  mixed.compose(event).compose(dp_event.GaussianDpEvent(20.0))
  assert mixed.get_epsilon(1e-6) > upper


def test_replace_one_is_the_unamplified_sensitivity_two_gaussian():
  event = RandomAllocationDpEvent(dp_event.GaussianDpEvent(2.0), 2, 10)
  expected = shuffled_batches.gaussian_epsilon(2 * math.sqrt(2) / 2.0, 1e-6)
  assert expected <= _epsilon(event, relation=REPLACE) <= expected * 1.01


def test_rdp_accountant_refuses_random_allocation_and_says_which_to_use():
  event = RandomAllocationDpEvent(dp_event.GaussianDpEvent(1.0), 1, 10)
  with pytest.raises(privacy_accountant.UnsupportedEventError,
                     match='ShufflePldAccountant'):
    ShuffleRdpAccountant().compose(event)


def test_non_gaussian_inner_event_is_refused():
  event = RandomAllocationDpEvent(dp_event.LaplaceDpEvent(1.0), 1, 10)
  with pytest.raises(privacy_accountant.UnsupportedEventError,
                     match='GaussianDpEvent'):
    ShufflePldAccountant(ADD_OR_REMOVE).compose(event)


@pytest.mark.parametrize('arguments, message', [
    ((dp_event.GaussianDpEvent(1.0), 0, 10), 'num_selected'),
    ((dp_event.GaussianDpEvent(1.0), 11, 10), 'num_selected'),
    ((dp_event.GaussianDpEvent(1.0), 1, 0), 'num_steps'),
    ((1.0, 1, 10), 'event'),
])
def test_invalid_events_name_the_parameter(arguments, message):
  with pytest.raises((ValueError, TypeError), match=message):
    RandomAllocationDpEvent(*arguments)


def test_epoch_pmfs_read_from_disk_give_the_same_epsilon(tmp_path,
                                                         monkeypatch):
  """A fresh process reads the epoch PMFs from disk: bit for bit the
  computed ones, so the same epsilon to the last bit."""
  event = RandomAllocationDpEvent(dp_event.GaussianDpEvent(2.0), 1, 6)
  fields = random_allocation.dominating_epoch_fields_unchecked
  monkeypatch.setenv('SHUFFLE_ACCOUNTANTS_CACHE_DIR', 'off')
  shuffle_accountants.clear_caches()
  computed = fields(2.0, 1, 6, random_allocation.LOSS_DISCRETIZATION)
  expected = _epsilon(event, 3, delta=1e-5)
  monkeypatch.setenv('SHUFFLE_ACCOUNTANTS_CACHE_DIR', str(tmp_path))
  for _ in range(2):  # computed and stored, then read back
    shuffle_accountants.clear_caches()
    stored = fields(2.0, 1, 6, random_allocation.LOSS_DISCRETIZATION)
    for (*scalars, probs, infinity), (*computed_scalars, computed_probs,
                                      computed_infinity) in zip(stored,
                                                                computed):
      assert (*scalars, infinity) == (*computed_scalars, computed_infinity)
      assert probs.tobytes() == np.asarray(computed_probs).tobytes()
    assert _epsilon(event, 3, delta=1e-5) == expected
  assert len(list(tmp_path.iterdir())) == 1


def test_epoch_counts_in_any_order_answer_as_with_every_cache_cleared():
  """The Opacus accountant asks after every epoch: what is kept across
  queries (the epoch PMF, the locator's transform and squares, the
  certificate's tilted powers, extended past powers of two) keeps a later
  query as cheap as an early one, and must give every epoch count the
  bits of a cold start, whatever was asked before. (At 20 steps the
  certificate's window changes size between these counts: the certificate's
  powers kept without their length fail here, not at 6 steps.)"""
  event = RandomAllocationDpEvent(dp_event.GaussianDpEvent(2.0), 1, 20)

  def epsilon(epochs):
    return ShufflePldAccountant(ADD_OR_REMOVE, 2.0**-10).compose(
        event, epochs).get_epsilon(1e-5)

  cold = {}
  for epochs in (2, 3, 5, 8, 9, 17, 30):
    shuffle_accountants.clear_caches()
    cold[epochs] = epsilon(epochs)
  shuffle_accountants.clear_caches()
  order = (3, 2, 9, 17, 30, 5, 8, 3, 30)
  assert [epsilon(epochs) for epochs in order] == [cold[e] for e in order]
  kept = shuffle_accountants.cache_bytes()
  assert kept['pld.roundoff.powers'] and kept['pld.composition.spectra']


def test_an_epoch_prefetched_in_a_thread_is_the_computed_one(monkeypatch):
  """prefetch_epoch computes in another thread, once, what the query then
  takes, bit for bit; an error there is raised by the query itself."""
  fields = random_allocation.dominating_epoch_fields_unchecked
  arguments = (2.0, 1, 6, random_allocation.LOSS_DISCRETIZATION)
  monkeypatch.setenv('SHUFFLE_ACCOUNTANTS_CACHE_DIR', 'off')
  shuffle_accountants.clear_caches()
  computed = fields(*arguments)
  shuffle_accountants.clear_caches()
  threads = []
  compute = random_allocation._epoch_pld

  def recorded(*args):
    threads.append(threading.current_thread())
    return compute(*args)

  monkeypatch.setattr(random_allocation, '_epoch_pld', recorded)
  random_allocation.prefetch_epoch(*arguments)
  prefetched = fields(*arguments)
  assert len(threads) == 1 and threads[0] is not threading.main_thread()
  for (*scalars, probs, infinity), (*computed_scalars, computed_probs,
                                    computed_infinity) in zip(prefetched,
                                                              computed):
    assert (*scalars, infinity) == (*computed_scalars, computed_infinity)
    assert probs.tobytes() == np.asarray(computed_probs).tobytes()
  random_allocation.prefetch_epoch(*arguments)  # kept: nothing started
  assert len(threads) == 1
  random_allocation.prefetch_epoch(0.01, 1, 79, 0.015)
  with pytest.raises(ValueError, match=r'noise_multiplier=0\.01 is outside'):
    fields(0.01, 1, 79, 0.015)


def test_noise_outside_the_packages_range_is_refused_with_the_limit():
  event = RandomAllocationDpEvent(dp_event.GaussianDpEvent(0.01), 1, 79)
  with pytest.raises(ValueError,
                     match=r'noise_multiplier=0\.01 is outside \[0\.1, 1000'):
    _epsilon(event, delta=1e-5)
  with pytest.raises(ValueError, match='noise_multiplier=10000 .*shuffled'):
    random_allocation.epsilon_lower_bound(1e4, 1, 79, 1, 1e-5)
