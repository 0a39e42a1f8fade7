"""The computed numbers of docs/cli.md."""

import re
import subprocess
import sys
import tempfile

from .core import output


@output('cli.epsilon_example')
def _cli_epsilon_example():
  """The first command of docs/cli.md; its wall times are elided."""
  result = subprocess.run(
      [sys.executable, '-m', 'shuffle_accountants', 'epsilon', '--num-users',
       '1000000', '--local-epsilon', '1', '--rounds', '1000', '--delta',
       '1e-6'],
      capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
  return re.sub(r'\(\d+(?:\.\d+)? s\)', '(… s)', result.stdout)
