"""The computed numbers of docs/cli.md."""

import re
import subprocess
import sys
import tempfile

from .core import output


def cli_output(*arguments: str) -> str:
  """What `python -m shuffle_accountants ARGUMENTS` prints; wall times
  elided."""
  result = subprocess.run(
      [sys.executable, '-m', 'shuffle_accountants', *arguments],
      capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
  return re.sub(r'\(\d+(?:\.\d+)? s\)', '(… s)', result.stdout)


def main_job_output() -> str:
  """What `python -m shuffle_accountants` prints; wall times elided.

  It is the first command of docs/cli.md and the README's first CLI line.
  """
  return cli_output()


# The DAP draft's client randomizer (basic RAPPOR, per-bit eps0 5) with one
# honest aggregator's discrete Gaussian, under deletion: a row of
# docs/secure_sums.md's combined table, from the command line.
NOISY_SUM_COMMAND = (
    'epsilon', '--num-users', '100000', '--randomizer', 'sue',
    '--domain-size', '16', '--local-epsilon', '10', '--release', 'sum',
    '--relation', 'deletion', '--noise', 'discrete-gaussian', '--sigma',
    '5.5', '--delta', '1e-9')


def noisy_sum_output() -> str:
  """The command (as typed) and its output."""
  return (f'$ shuffle-accountant {" ".join(NOISY_SUM_COMMAND)}\n'
          + cli_output(*NOISY_SUM_COMMAND))


output('cli.epsilon_example')(main_job_output)
output('cli.noisy_sum_example')(noisy_sum_output)
