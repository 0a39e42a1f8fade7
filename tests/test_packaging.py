"""Packaging basics: license, version, changelog, install lines, what a wheel
ships (issue 24)."""

import importlib.metadata
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest
import tomllib

import shuffle_accountants

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / 'pyproject.toml').read_text())


def test_license_file_matches_the_metadata():
  assert PYPROJECT['project']['license'] == 'Apache-2.0'
  text = (ROOT / 'LICENSE').read_text()
  assert 'Apache License' in text and 'Version 2.0, January 2004' in text
  assert 'END OF TERMS AND CONDITIONS' in text  # the full text


def test_version_comes_from_the_installed_metadata():
  assert shuffle_accountants.__version__ == importlib.metadata.version(
      'shuffle-accountants') == PYPROJECT['project']['version']


def test_changelog_has_unreleased_and_the_current_version():
  changelog = (ROOT / 'CHANGELOG.md').read_text()
  headings = re.findall(r'^## \[([^\]]+)\]', changelog, re.MULTILINE)
  assert headings[0] == 'Unreleased'
  assert PYPROJECT['project']['version'] in headings


def test_readme_quick_start_is_two_commands_that_ci_runs_as_written():
  # Issue 48: set-up took five commands, the first a torch line that hangs
  # on a machine that cannot reach PyTorch's index.
  readme = (ROOT / 'README.md').read_text()
  quick_start = readme.split('## Quick start', 1)[1].split('\n## ', 1)[0]
  blocks = re.findall(r'```bash\n(.*?)```', quick_start, re.DOTALL)
  assert blocks == ['pip install . && python -m shuffle_accountants\n'
                    'pip install ".[dev]" && pytest\n']
  ci = [line.replace('--quiet ', '') for line in
        (ROOT / '.ci' / 'run').read_text().splitlines()
        if line and not line.startswith('#')]
  commands = [line for line in ci if 'shuffle_accountants' in line
              or 'pytest' in line]
  assert commands == blocks[0].splitlines()
  # The CPU build of torch is an optional tip, not a step.
  assert 'download.pytorch.org/whl/cpu' in quick_start
  assert 'optional' in quick_start


def test_dev_extra_holds_every_other_extra_and_all_every_user_one():
  extras = PYPROJECT['project']['optional-dependencies']
  named = lambda extra: set(re.fullmatch(
      r'shuffle-accountants\[(.*)\]', extras[extra][0])[1].split(','))
  assert len(extras['dev']) == len(extras['all']) == 1
  assert named('dev') == set(extras) - {'dev', 'all'}
  assert named('all') == set(extras) - {'dev', 'all', 'test', 'docs'}


@pytest.mark.slow
def test_a_wheel_built_from_a_fresh_copy_ships_the_reference(tmp_path):
  source = tmp_path / 'checkout'
  shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(
      '.git', 'build', '*.egg-info', '__pycache__', 'site'))
  # As `pip install .` does: an isolated build with the declared backend.
  subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps',
                  '--quiet', '-w', str(tmp_path), str(source)], check=True,
                 capture_output=True, timeout=600)
  wheel, = tmp_path.glob('shuffle_accountants-*.whl')
  with zipfile.ZipFile(wheel) as archive:
    names = archive.namelist()
    page = archive.read('shuffle_accountants/mathematics.md')
  assert page == (ROOT / 'docs' / 'mathematics.md').read_bytes()
  assert 'shuffle_accountants/py.typed' in names
  assert 'shuffle_accountants/adapters/opacus/__init__.py' in names
  assert any(name.endswith('licenses/LICENSE') for name in names)


def test_dir_lists_each_public_name_once_and_no_private_imports():
  # Names read once were listed twice (cached and exported), beside the
  # modules __init__ imports for itself.
  assert shuffle_accountants.ShufflePldAccountant is not None  # now cached
  names = dir(shuffle_accountants)
  assert len(names) == len(set(names))
  assert not {'sys', 'Any', 'importlib', 'warnings', 'TYPE_CHECKING'} & set(
      names)
  assert set(shuffle_accountants.__all__) <= set(names)
  assert '__version__' in names


def test_every_import_of_the_api_pages_table_works():
  # docs/api.md did not say where RandomAllocationSampler, the samplers and
  # the adapters are imported from.
  pytest.importorskip('opacus')
  page = (pathlib.Path(__file__).parent.parent / 'docs' / 'api.md').read_text(
      encoding='utf-8')
  table = page.split('## Where to import', 1)[1].split('\n## ', 1)[0]
  lines = re.findall(r'`(from shuffle_accountants[^`]*)`', table)
  assert any('RandomAllocationSampler' in line for line in lines)
  assert any('shuffle_accountants.samplers import' in line for line in lines)
  assert any('adapters' in line for line in lines)
  for line in lines:
    exec(line.replace(', ...', ''), {})
