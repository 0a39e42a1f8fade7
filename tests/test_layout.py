"""Packaging guards: the public API, the tree's shape, adapters inside the package."""

import ast
import importlib.util
import pathlib
import re
import subprocess
import sys

import shuffle_accountants


def test_adapters_are_a_subpackage_in_the_package_folder():
  import shuffle_accountants.adapters  # pylint: disable=g-import-not-at-top
  assert shuffle_accountants.adapters.__name__ == 'shuffle_accountants.adapters'
  package = pathlib.Path(shuffle_accountants.__file__).parent
  adapters = pathlib.Path(shuffle_accountants.adapters.__file__).parent
  assert adapters == package / 'adapters'


def test_no_top_level_adapters_package_is_installed_by_us():
  spec = importlib.util.find_spec('adapters')
  assert spec is None or 'shuffle_accountants' not in str(spec.origin)


def test_main_job_prints_a_certified_epsilon():
  output = subprocess.run([sys.executable, '-m', 'shuffle_accountants'],
                          capture_output=True, text=True, check=True,
                          cwd='/').stdout
  assert 'certified epsilon (upper bound)' in output
  assert shuffle_accountants.__version__


# Every name `shuffle_accountants` exported before the subpackages existed.
PUBLIC_NAMES = (
    'CheckInEvent', 'DEFAULT_ORDERS', 'KRR_ADVERSARIES', 'ShuffleEvent',
    'ShufflePldAccountant', 'ShuffleRdpAccountant',
    'SubsampledShuffleGaussianEvent', 'checkin_rdp_upper_bound',
    'shuffle_rdp_upper_bound', 'shuffled_gaussian_rdp_lower_bound',
    'subsampled_shuffle_gaussian_rdp_upper_bound',
    'subsampled_shuffle_rdp_upper_bound')


def test_top_level_exports_are_kept():
  assert set(PUBLIC_NAMES) <= set(shuffle_accountants.__all__)
  for name in shuffle_accountants.__all__:
    assert getattr(shuffle_accountants, name) is not None


def test_the_routes_are_visible_in_the_tree():
  package = pathlib.Path(shuffle_accountants.__file__).parent
  modules = {str(p.relative_to(package)) for p in package.rglob('*.py')}
  for expected in ('events.py', 'rdp/accountant.py', 'rdp/checkin.py',
                   'pld/accountant.py', 'pld/checkin.py', 'pld/grid.py',
                   'pld/candidates.py', 'cli/main.py', 'cli/protocols.py'):
    assert expected in modules


def test_every_module_opens_with_a_one_line_summary_citing_its_ids():
  package = pathlib.Path(shuffle_accountants.__file__).parent
  id_pattern = re.compile(r'\b(W\d+|D\d+|[A-Z][A-Z0-9]*(?:-[A-Z0-9*]+)+)\b')
  for path in package.rglob('*.py'):
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding='utf-8')))
    assert docstring, path
    summary = docstring.split('\n')[0]
    assert summary.endswith(('.', ')')), (path, summary)
    math_module = path.parent.name in ('rdp', 'pld') and (
        path.name != '__init__.py')
    if math_module:
      assert id_pattern.search(summary), (path, summary)
