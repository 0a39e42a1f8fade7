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


def pytest_collection_modifyitems(items):
  for item in items:
    if item.name in _SLOW_UPSTREAM_TESTS:
      item.add_marker(pytest.mark.slow)
