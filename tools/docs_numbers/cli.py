"""The computed numbers of docs/cli.md."""

import re
import subprocess
import sys
import tempfile

from .core import output


def main_job_output() -> str:
  """What `python -m shuffle_accountants` prints; wall times elided.

  It is the first command of docs/cli.md and the README's first CLI line.
  """
  result = subprocess.run(
      [sys.executable, '-m', 'shuffle_accountants'],
      capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
  return re.sub(r'\(\d+(?:\.\d+)? s\)', '(… s)', result.stdout)


output('cli.epsilon_example')(main_job_output)
