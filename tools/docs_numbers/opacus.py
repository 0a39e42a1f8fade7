"""The computed numbers of docs/opacus.md."""

import functools
import re
import subprocess
import sys
import tempfile

from .core import ROOT
from .core import sig
from .core import value


@functools.lru_cache(maxsize=None)
def _opacus_sigma(mechanism: str) -> str:
  """sigma for eps = 3 at delta = 1e-5, q = 0.1, 2 epochs, n = 600."""
  from opacus.accountants.utils import get_noise_multiplier

  # Registers the accountants.
  import shuffle_accountants.adapters.opacus  # noqa: F401
  return sig(get_noise_multiplier(
      target_epsilon=3.0, target_delta=1e-5, sample_rate=0.1, epochs=2,
      accountant=mechanism, epsilon_tolerance=0.01, num_users=600), 3)


value('opacus.sigma_pld', slow=True)(lambda: _opacus_sigma('shuffle_checkin'))
value('opacus.sigma_rdp', slow=True)(
    lambda: _opacus_sigma('shuffle_checkin_rdp'))


@functools.lru_cache(maxsize=None)
def _opacus_example():
  """(shuffle accuracy, shuffle eps, central accuracy, central eps)."""
  result = subprocess.run(
      [sys.executable, str(ROOT / 'examples' / 'opacus_shuffle_checkin.py')],
      capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
  found = re.findall(r'accuracy ([\d.]+), (?:certified )?epsilon ([\d.]+)',
                     result.stdout)
  (shuffle_accuracy, shuffle_epsilon), (central_accuracy, central_epsilon) = (
      found)
  return (float(shuffle_accuracy), float(shuffle_epsilon),
          float(central_accuracy), float(central_epsilon))


for _index, _name in enumerate(('shuffle_accuracy', 'shuffle_epsilon',
                                'central_accuracy', 'central_epsilon')):
  value(f'opacus.example_{_name}', slow=True)(
      lambda index=_index: (f'{100 * _opacus_example()[index]:.0f}'
                            if index % 2 == 0
                            else sig(_opacus_example()[index], 2)))
