"""Every Python block of the README and docs runs as written, so they never
rot."""

import glob
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir)
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import docs_numbers  # noqa: E402

PAGES = [os.path.join(ROOT, 'README.md')] + sorted(
    glob.glob(os.path.join(ROOT, 'docs', '*.md')))


def _python_blocks():
  blocks = []
  for page in PAGES:
    with open(page, encoding='utf-8') as text:
      found = re.findall(r'```python\n(.*?)```', text.read(), re.DOTALL)
    blocks += [pytest.param(block, id=f'{os.path.basename(page)}-{number}')
               for number, block in enumerate(found)]
  return blocks


@pytest.mark.parametrize('block', _python_blocks())
def test_python_block_runs(block, tmp_path):
  if 'opacus' in block:
    pytest.importorskip('opacus')
  if 'flwr' in block:
    pytest.importorskip('flwr')
  # Outside the checkout, so the installed package is the one imported.
  result = subprocess.run([sys.executable, '-c', block], capture_output=True,
                          text=True, cwd=tmp_path, check=False)
  assert result.returncode == 0, result.stderr
  # `print(...)  # 0.6237 ...`: the comment is the output at its digits
  # (rewrite with `python -m tools.docs_numbers`).
  for line, page, code in docs_numbers.printed_values(block, result.stdout):
    assert page == code, (line, block.splitlines()[line], code)


def _cli_lines():
  """Each distinct `shuffle-accountant ...` command of the README and docs."""
  commands = {}
  for page in PAGES:
    with open(page, encoding='utf-8') as text:
      for block in re.findall(r'```bash\n(.*?)```', text.read(), re.DOTALL):
        for line in block.replace('\\\n', ' ').splitlines():
          if line.startswith('shuffle-accountant '):
            commands.setdefault(tuple(line.split()[1:]),
                                f'{os.path.basename(page)}-{line[19:50]}')
  # calibrate searches (about 13 s): in the slow run.
  return [pytest.param(list(arguments), id=name, marks=(
      [pytest.mark.slow] if 'calibrate' in arguments else []))
          for arguments, name in commands.items()]


@pytest.mark.parametrize('arguments', _cli_lines())
def test_cli_line_runs(arguments, tmp_path):
  if 'plot' in arguments:
    pytest.importorskip('matplotlib')
  result = subprocess.run(
      [sys.executable, '-m', 'shuffle_accountants', *arguments],
      capture_output=True, text=True, cwd=tmp_path, check=False)
  assert result.returncode == 0, result.stderr
