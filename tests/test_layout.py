"""Packaging guards: adapters ship inside the package, never top level."""

import importlib.util
import subprocess
import sys

import shuffle_accountants


def test_adapters_are_a_subpackage():
  import shuffle_accountants.adapters  # pylint: disable=g-import-not-at-top
  assert shuffle_accountants.adapters.__name__ == 'shuffle_accountants.adapters'


def test_no_top_level_adapters_package_is_installed_by_us():
  spec = importlib.util.find_spec('adapters')
  assert spec is None or 'shuffle_accountants' not in str(spec.origin)


def test_main_job_prints_a_certified_epsilon():
  output = subprocess.run([sys.executable, '-m', 'shuffle_accountants'],
                          capture_output=True, text=True, check=True,
                          cwd='/').stdout
  assert 'certified epsilon (upper bound)' in output
  assert shuffle_accountants.__version__
