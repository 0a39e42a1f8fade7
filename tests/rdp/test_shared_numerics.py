"""The shortcuts of the RDP route's mixtures change no bit of their results.

Each shortcut (a shared lattice, skipped rows, shared rows) is compared with
the plain computation it replaces, written out here.
"""

import numpy as np
import pytest

from shuffle_accountants import _numerics
from shuffle_accountants import clear_caches
from shuffle_accountants.pld import checkin
from shuffle_accountants.rdp import clone
from shuffle_accountants.rdp import girgis


def _plain_block_starts(num_trials, relative_width, exact_below=512):
  singles = np.arange(min(exact_below, num_trials + 1), dtype=np.int64)
  if num_trials < exact_below:
    return singles
  steps = int(np.ceil(np.log(num_trials / exact_below)
                      / np.log1p(relative_width))) + 2
  geometric = np.floor(exact_below * np.exp(
      np.arange(steps) * np.log1p(relative_width))).astype(np.int64)
  return np.unique(np.concatenate([singles,
                                   geometric[geometric <= num_trials]]))


@pytest.mark.parametrize('relative_width',
                         [1e-3, 2e-3, checkin.LATTICE_STEP, 1e-2, 0.1, 3.7e-3])
def test_block_starts_are_those_of_the_population_alone(relative_width):
  rng = np.random.default_rng(7)
  populations = np.concatenate([
      np.arange(500, 1100), rng.integers(1, 10**11, 300),
      [10**k for k in range(3, 13)], [2**40 - 1, 2**40, 2**41]])
  for num_trials in populations:
    np.testing.assert_array_equal(
        _numerics.block_starts(int(num_trials), relative_width),
        _plain_block_starts(int(num_trials), relative_width))


@pytest.mark.parametrize('columns', [1, 2, 23, 46])
def test_crude_log_sum_exp_is_the_full_one_bit_for_bit(columns):
  rng = np.random.default_rng(columns)
  for _ in range(20):
    # Log-weights near 0 between ones far below (Chernoff tails), some -inf.
    log_weights = np.where(rng.random(3000) < 0.5,
                           rng.uniform(-30.0, 0.0, 3000),
                           rng.uniform(-1e5, -900.0, 3000))
    log_weights[rng.integers(0, 3000, 50)] = -np.inf
    log_values = rng.normal(0.0, 30.0, columns)
    full = _numerics.log_sum_exp(log_weights[:, None] + log_values[None, :],
                                 axis=0)
    np.testing.assert_array_equal(
        _numerics._log_sum_exp_crude(log_weights, log_values), full)


def test_blocks_above_are_the_full_comparison():
  rng = np.random.default_rng(3)
  for _ in range(50):
    log_weights = -np.abs(rng.standard_cauchy(2000)) * 100
    log_weights[rng.integers(0, 2000, 20)] = -np.inf
    log_values = rng.normal(0.0, 10.0, 23)
    thresholds = log_values + rng.normal(-40.0, 20.0, 23)
    thresholds[rng.integers(0, 23)] = -np.inf
    full = np.nonzero(np.any(
        log_weights[:, None] + log_values[None, :] > thresholds[None, :],
        axis=1))[0]
    np.testing.assert_array_equal(
        _numerics._blocks_above(log_weights, log_values, thresholds), full)


@pytest.mark.parametrize('bound', ['girgis_ub_mix', 'girgis_ub1', 'clone'])
def test_a_round_is_the_same_after_its_neighbours_filled_the_caches(bound):
  orders = np.array([2.0, 3.0, 5.0, 8.0, 16.0, 64.0, 256.0, 1024.0])
  compute = {
      'girgis_ub_mix': lambda n: girgis.girgis_ub_mix(n, 1.0, orders),
      'girgis_ub1': lambda n: girgis.girgis_ub1(n, 1.0, orders),
      'clone': lambda n: clone.clone_pair_rdp(n, 1.0, orders,
                                              relative_block_width=1e-2),
  }[bound]
  clear_caches()
  alone = compute(123_457)
  clear_caches()
  for neighbour in (118_000, 121_000, 126_000, 130_000):
    compute(neighbour)
  np.testing.assert_array_equal(compute(123_457), alone)
