"""Puts this folder on sys.path so tests can import the brute-force helpers.

pytest runs with --import-mode=importlib, so the repository root is never
on sys.path: tests import the installed package.
"""

import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))

# Tests (and their subprocesses) compute what they check: the disk cache
# (`_disk_cache`) starts empty in a folder of the session's own.
_DISK_CACHE = tempfile.mkdtemp(prefix='shuffle-accountants-tests-')
os.environ['SHUFFLE_ACCOUNTANTS_CACHE_DIR'] = _DISK_CACHE


def pytest_unconfigure(config):
  del config
  shutil.rmtree(_DISK_CACHE, ignore_errors=True)

# Upstream (dp_accounting) tests that take about a minute on two cores.
_SLOW_UPSTREAM_TESTS = ('test_mixture_of_gaussians_basic',)
# Tests of a minute or more (up to five) on CI. `--dist worksteal` gives each
# of the two workers one half of the collection and lets an idle one take
# from the end of the other's queue: these are split between the heads of
# the two halves, so that both start on them at once (in collection order
# the six parts of the PLD robustness sweep fell to one worker, which ran
# them for minutes after the other was done).
_LONGEST_TESTS = ('test_random_valid_inputs_give_bounded_sane_answers',
                  'test_mixture_of_gaussians_basic',
                  'test_extremes_of_the_range_are_finite_quiet_and_bounded',
                  'test_seeded_sweep',
                  'test_clear_caches_returns_to_the_starting_memory')


def pytest_collection_modifyitems(items):
  for item in items:
    if item.name in _SLOW_UPSTREAM_TESTS:
      item.add_marker(pytest.mark.slow)
  longest = [item for item in items
             if getattr(item, 'originalname', item.name) in _LONGEST_TESTS]
  rest = [item for item in items if item not in longest]
  first, second = longest[::2], longest[1::2]
  # The second group starts one past the middle (the second worker's block
  # starts at the middle, rounded either way).
  before = max(0, len(items) // 2 + 1 - len(first))
  items[:] = first + rest[:before] + second + rest[before:]
