"""`plotting.epsilon_history` / `plot_history` on tiny synthetic runs
(issue 48)."""

import math

import pytest

from shuffle_accountants import plotting


class _LinearAccountant:
  """An Opacus-like accountant: epsilon = the sum over steps of q / sigma."""

  def __init__(self, history):
    self.history = history
    self.calls = []

  def get_epsilon(self, delta):
    self.calls.append(delta)
    return sum(math.inf if sigma == 0 else q * steps / sigma
               for sigma, q, steps in self.history)


class _Engine:
  def __init__(self, accountant):
    self.accountant = accountant


class _Result:
  """What Flower's strategy.start returns: metrics by round."""

  def __init__(self, metrics):
    self.train_metrics_clientapp = metrics


def test_one_point_per_epoch_each_the_epsilon_of_the_steps_so_far():
  # q = 1/4: an epoch is 4 steps; 10 steps in three run-length entries
  # (sigma changed after step 3) end mid-epoch.
  accountant = _LinearAccountant([(1.0, 0.25, 3), (2.0, 0.25, 5),
                                  (2.0, 0.25, 2)])
  history = plotting.epsilon_history(_Engine(accountant), delta=1e-5)
  assert history.unit == 'epoch' and history.delta == 1e-5
  assert history.points == (1.0, 2.0, 2.5)
  # After 4 steps: 3 at sigma 1, 1 at sigma 2; after 8: 3 and 5; all 10.
  assert history.epsilons == pytest.approx(
      (0.25 * 3 + 0.125, 0.25 * 3 + 0.125 * 5, 0.25 * 3 + 0.125 * 7))
  assert history.epsilons[-1] == accountant.get_epsilon(1e-5)
  assert accountant.history == [(1.0, 0.25, 3), (2.0, 0.25, 5),
                                (2.0, 0.25, 2)]  # left as it was


def test_changing_sample_rates_give_one_point_per_step():
  accountant = _LinearAccountant([(1.0, 0.5, 2), (1.0, 0.25, 1)])
  history = plotting.epsilon_history(accountant, delta=1e-6)
  assert history.unit == 'step' and history.points == (1.0, 2.0, 3.0)
  assert history.epsilons == pytest.approx((0.5, 1.0, 1.25))


def test_flower_result_rounds_and_their_delta():
  result = _Result({2: {'dp-epsilon': 0.4, 'dp-delta': 1e-5},
                    1: {'dp-epsilon': 0.3, 'dp-delta': 1e-5},
                    3: {'loss': 1.0}})
  history = plotting.epsilon_history(result)
  assert (history.unit, history.points, history.epsilons, history.delta) == (
      'round', (1.0, 2.0), (0.3, 0.4), 1e-5)
  with pytest.raises(ValueError, match='differs from the dp-delta'):
    plotting.epsilon_history(result, delta=1e-6)
  with pytest.raises(ValueError, match='no round with a dp-epsilon'):
    plotting.epsilon_history(_Result({1: {'loss': 1.0}}))


@pytest.mark.parametrize('source, delta, error, match', [
    (_LinearAccountant([]), 1e-5, ValueError, 'no steps yet'),
    (_LinearAccountant([(1.0, 0.5, 1)]), None, ValueError, 'delta is required'),
    (_LinearAccountant([(1.0, 0.5, 1)]), 1.5, ValueError, 'delta'),
    (object(), 1e-5, TypeError, 'source must be'),
])
def test_invalid_sources_name_the_problem(source, delta, error, match):
  with pytest.raises(error, match=match):
    plotting.epsilon_history(source, delta)


def test_plot_history_draws_the_curve_and_says_where_it_becomes_infinite():
  matplotlib = pytest.importorskip('matplotlib')
  matplotlib.use('Agg')
  from matplotlib import pyplot
  accountant = _LinearAccountant([(1.0, 0.5, 4), (0.0, 0.5, 2)])
  axes = plotting.plot_history(accountant, delta=1e-5)
  line, = axes.lines
  assert line.get_xydata().tolist() == [[1.0, 1.0], [2.0, 2.0]]
  assert line.get_label() == 'certified epsilon (infinite from epoch 3)'
  assert axes.get_xlabel() == 'epoch'
  assert axes.get_ylabel() == 'epsilon at delta = 1e-05'
  pyplot.close(axes.figure)


@pytest.mark.slow
def test_a_real_check_in_accountant_ends_at_its_own_epsilon():
  pytest.importorskip('opacus')
  from shuffle_accountants.adapters.opacus import ShuffleCheckinAccountant
  accountant = ShuffleCheckinAccountant(num_users=1000)
  for _ in range(25):
    accountant.step(noise_multiplier=2.0, sample_rate=0.1)
  history = plotting.epsilon_history(accountant, 1e-5)
  assert history.points == (1.0, 2.0, 2.5)
  assert history.epsilons[-1] == accountant.get_epsilon(1e-5)
  assert list(history.epsilons) == sorted(history.epsilons)
  assert len(accountant) == 25  # its history untouched
