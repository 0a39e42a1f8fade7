"""Every Python block of the README and docs runs as written, so they never rot."""

import glob
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)
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
  # Outside the checkout, so the folder adapters/ cannot shadow anything.
  result = subprocess.run([sys.executable, '-c', block], capture_output=True,
                          text=True, cwd=tmp_path, check=False)
  assert result.returncode == 0, result.stderr
