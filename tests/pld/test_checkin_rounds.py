"""PLD check-in rounds: lattice users, base grids, rate-1 and higher-rate caps.

See CHECKIN-COARSE-GRIDS and CHECKIN-LATTICE.

Every shortcut must keep each value an upper bound: checked against exact
binary randomized response check-in (a lower bound on the worst case, so
the accountant must lie above it) in the regimes each shortcut serves, and
against the construction without it.
"""

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np
import pytest

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import clear_caches
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import discrete

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True,
                    database=None)
ROUNDING = 1e-9


@given(st.integers(min_value=1, max_value=10**12))
@settings(max_examples=200, deadline=None, derandomize=True, database=None)
def test_lattice_users_is_a_nearby_smaller_count(num_users):
  point = checkin.lattice_users(num_users)
  assert point <= num_users
  assert (point + 1) * (1 + checkin.LATTICE_STEP) >= num_users
  if num_users < checkin.EXACT_LATTICE:
    assert point == num_users


def test_lattice_users_is_non_decreasing():
  counts = np.unique(np.geomspace(1, 1e9, 5000).astype(np.int64))
  points = [checkin.lattice_users(int(n)) for n in counts]
  assert np.all(np.diff(points) >= 0)


@pytest.mark.parametrize('ratio', [1.0, 0.3, 0.01, 1e-4])
@pytest.mark.parametrize('largest_loss', [0.1, 1.0, 8.0])
def test_base_grid_resolves_the_subsampled_losses(ratio, largest_loss):
  # One base step anywhere in [0, U] moves a subsampled loss (either order)
  # by at most half the round's grid, or the base grid is the round's.
  d = 1e-5
  base = checkin.base_grid(d, ratio, largest_loss)
  assert base >= d and np.log2(base / d) == int(np.log2(base / d))
  losses = np.linspace(base, largest_loss, 1000)
  first = np.log1p(ratio * np.expm1(losses))
  first_step = first - np.log1p(ratio * np.expm1(losses - base))
  second = -np.log1p(-ratio * -np.expm1(-losses))
  second_step = second + np.log1p(-ratio * -np.expm1(-(losses - base)))
  resolution = max(first_step.max(), second_step.max())
  assert resolution <= checkin.BASE_GRID_RESOLUTION * d * (1 + 1e-6) or (
      base == d)


@pytest.mark.parametrize('num_users,rate,local_epsilon,epsilons', [
    # Many clones: lattice users and a base grid 64x coarser.
    (20_000, 0.01, 1.0, [0.002, 0.005, 0.01]),
    (3_000, 0.2, 1.0, [0.01, 0.03, 0.06]),
    # Few clones: the higher rates are candidates (CHECKIN-LATTICE).
    (3_000, 0.01, 4.0, [0.05, 0.2, 0.5]),
    (1_000, 0.05, 6.0, [0.3, 1.0, 2.0]),
])
def test_exact_binary_rr_lies_below_the_accountant(num_users, rate,
                                                    local_epsilon, epsilons):
  accountant = ShufflePldAccountant().compose(
      CheckInEvent(num_users, rate, local_epsilon=local_epsilon))
  lower = checkin.binary_rr_checkin_delta_lower_bound(
      num_users, rate, local_epsilon, epsilons)
  upper = [accountant.get_delta(e) for e in epsilons]
  assert np.all(lower <= upper)
  assert np.any(lower > 0)  # the comparison is not vacuous


def _pmf(num_users, rate, local_epsilon, d):
  return checkin.checkin_pmf(num_users, rate, d, discrete.connect_the_dots,
                             local_epsilon=local_epsilon)


@pytest.mark.parametrize('num_users,rate,local_epsilon', [
    (5_666_071, 0.001323, 7.848), (2_000, 0.02, 5.0), (50_752, 7.3e-4, 0.4)])
def test_higher_rates_only_lower_the_profile(num_users, rate, local_epsilon,
                                             monkeypatch):
  assert checkin.higher_rates(num_users, rate, local_epsilon)
  d = 1e-4
  capped = _pmf(num_users, rate, local_epsilon, d)
  monkeypatch.setattr(checkin, 'MAX_HIGHER_RATES', 0)
  alone = _pmf(num_users, rate, local_epsilon, d)
  lower, upper = (min(capped.lower_index, alone.lower_index),
                  max(capped.upper_index, alone.upper_index))
  assert np.all(discrete.grid_profile(capped, lower, upper)
                <= discrete.grid_profile(alone, lower, upper) * (1 + ROUNDING)
                + 1e-15)


def test_higher_rates_fix_the_issue_22_sweep_case():
  """Found by a random sweep: 0.88 at rate 0.001323, 0.71 at 0.00274."""
  def epsilon(rate):
    return ShufflePldAccountant().compose(
        CheckInEvent(5_666_071, rate, local_epsilon=7.848, num_categories=3),
        767).get_epsilon(1.18e-5)
  assert epsilon(0.001323) <= epsilon(0.00274) * (1 + ROUNDING)


def test_capped_by_keeps_the_smaller_profile_on_the_range():
  d = 1e-3
  own = _pmf(2_000, 0.5, 2.0, d)
  wide = _pmf(2_000, 1.0, 2.0, 4 * d)  # the rate-1 round, coarser grid
  capped = checkin.capped_by(own, wide)
  indices = np.arange(own.lower_index, own.upper_index + 1)
  achieved = discrete.grid_profile(capped, own.lower_index, own.upper_index)
  assert np.all(achieved <= discrete.grid_profile(
      own, own.lower_index, own.upper_index) * (1 + ROUNDING) + 1e-15)
  assert np.all(achieved <= discrete.pmf_profile(wide)(indices * d)
                * (1 + ROUNDING) + 1e-15)
  assert checkin.capped_by(own, own) is own  # nothing to lower


@SETTINGS
@given(st.integers(min_value=2, max_value=10**6),
       st.floats(min_value=1e-3, max_value=0.5),
       st.floats(min_value=1.0, max_value=4.0),
       st.floats(min_value=0.5, max_value=8.0),
       st.sampled_from([1, 10, 100]), st.sampled_from([1e-9, 1e-6, 1e-3]))
def test_non_decreasing_in_the_rate(num_users, rate, factor, local_epsilon,
                                    count, delta):
  """Not constructed for every pair of rates: a regression guard.

  CHECKIN-LATTICE.
  """
  def epsilon(gamma):
    return ShufflePldAccountant().compose(
        CheckInEvent(num_users, gamma, local_epsilon=local_epsilon),
        count).get_epsilon(delta)
  assert epsilon(rate) <= epsilon(min(1.0, rate * factor)) * (1 + ROUNDING)


def test_a_year_of_daily_rounds_shares_clone_pairs():
  """Rounds of nearby populations reuse the kept clone pairs (speed)."""
  clear_caches()
  d = 1e-5
  first = _pmf(100_000, 0.01, 1.0, d)
  kept = checkin._clone_pair_profile.cache.size
  second = _pmf(100_100, 0.01, 1.0, d)
  assert checkin._clone_pair_profile.cache.size < 1.5 * kept
  assert first.probs.size > 0 and second.probs.size > 0


def _brute_force_envelope(x, y):
  """Largest convex minorant at each x_i: the smallest chord value over
  every pair of points around it (O(n^3), for a handful of points)."""
  values = y.astype(float).copy()
  for i in range(x.size):
    for a in range(i + 1):
      for b in range(i, x.size):
        if a < b:
          chord = y[a] + (y[b] - y[a]) * (x[i] - x[a]) / (x[b] - x[a])
          values[i] = min(values[i], chord)
  return values


@pytest.mark.parametrize('seed', range(6))
def test_lower_convex_envelope_is_the_largest_convex_minorant(seed):
  rng = np.random.default_rng(seed)
  x = np.sort(rng.uniform(0, 1, 25)) + np.arange(25) * 1e-3
  y = rng.uniform(0, 1, 25) * (seed % 2) + (1 - x)**2
  envelope = discrete.lower_convex_envelope(x, y)
  np.testing.assert_allclose(envelope, _brute_force_envelope(x, y),
                             rtol=0, atol=1e-12)
