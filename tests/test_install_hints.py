"""Without an extra, its features say how to install it (issue 48).

shuffle-accountants is not on PyPI: a hint must name the extra from a
checkout (`pip install ".[opacus]"`) and the extra's own requirements, never
`pip install "shuffle-accountants[...]"` alone, which cannot work.
"""

import subprocess
import sys

# Each case hides one library (`sys.modules[name] = None` makes its import
# fail as if it were not installed) and prints the message of what needs it.
_SCRIPT = r'''
import contextlib, io, sys
case = sys.argv[1]
if case == 'opacus':
  sys.modules['opacus'] = None
  import shuffle_accountants.adapters.opacus
elif case == 'flower':
  sys.modules['flwr'] = None
  import shuffle_accountants.adapters.flower
elif case == 'samplers':
  sys.modules['PLD_accounting'] = None
  from shuffle_accountants.samplers import random_allocation
  random_allocation._package()
elif case == 'plot':
  sys.modules['matplotlib'] = None
  from shuffle_accountants.cli import main
  error = io.StringIO()
  with contextlib.redirect_stderr(error):
    status = main.main(['plot', '--num-users', '100', '--local-epsilon', '1',
                        '--values', '1', '--output', '/tmp/unused.png'])
  raise SystemExit(f'status {status}: {error.getvalue()}')
'''


def _message(case):
  result = subprocess.run([sys.executable, '-c', _SCRIPT, case],
                          capture_output=True, text=True, cwd='/', check=False,
                          timeout=120)
  assert result.returncode != 0
  return result.stderr.strip().splitlines()[-1]


def test_each_missing_extra_names_how_to_install_it():
  for case, module, requirement in (
      ('opacus', 'opacus', "'opacus<1.7,>=1.6' 'torch'"),
      ('flower', 'flwr', "'flwr[simulation]<2,>=1.42'"),
      ('samplers', 'PLD_accounting', "'PLD_accounting[performance]<3,>=2'"),
      ('plot', 'matplotlib', "'matplotlib'")):
    message = _message(case)
    assert f'pip install ".[{case}]" from a checkout' in message, message
    assert requirement in message and module in message, message
    assert '"shuffle-accountants[' not in message, message
    if case == 'plot':  # a usage error of the CLI, not a traceback
      assert message.startswith('status 2: shuffle-accountant: error: plot '
                                'needs matplotlib'), message
