"""shuffle-accountants: certified privacy accounting for the shuffle model (IDs: docs/mathematics.md).

Events describe shuffled rounds; accountants subclass dp_accounting's and
compose them with every other `DpEvent`:

>>> from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
>>> accountant = ShufflePldAccountant()
>>> accountant.compose(ShuffleEvent(num_users=10**6, local_epsilon=1.0), 1000)
>>> accountant.get_epsilon(target_delta=1e-6)

`save_accountant` / `load_accountant` (and each accountant's `state_dict` /
`load_state_dict`) save and restore an accountant exactly, for resuming runs.

Every epsilon a default path returns is a proven upper bound; lower bounds
live under names that say so. Formulas cite their IDs in docs/mathematics.md.

When Opacus is installed, its accountants "shuffle_checkin",
"distributed_checkin" and their "_rdp" twins are registered as soon as Opacus
is imported (see
`shuffle_accountants.adapters.opacus`).
"""

import importlib
import importlib.abc
import importlib.metadata
import importlib.util
import sys
from typing import TYPE_CHECKING, Any
import warnings

# Public names and the modules that define them. They are imported on first
# use (PEP 562), so that `import shuffle_accountants` and the command line's
# --help do not pay for numpy, scipy and dp_accounting.
_EXPORTS = {
    'CheckInEvent': 'shuffle_accountants.events',
    'DistributedCheckInEvent': 'shuffle_accountants.events',
    'ShuffleEvent': 'shuffle_accountants.events',
    'SubsampledShuffleGaussianEvent': 'shuffle_accountants.events',
    'checkin_rdp_upper_bound': 'shuffle_accountants.rdp.checkin',
    'shuffled_gaussian_rdp_lower_bound': 'shuffle_accountants.rdp.checkin',
    'subsampled_shuffle_gaussian_rdp_upper_bound':
        'shuffle_accountants.rdp.checkin',
    'KRR_ADVERSARIES': 'shuffle_accountants.pld.accountant',
    'ShufflePldAccountant': 'shuffle_accountants.pld.accountant',
    'DEFAULT_ORDERS': 'shuffle_accountants.rdp.accountant',
    'ShuffleRdpAccountant': 'shuffle_accountants.rdp.accountant',
    'shuffle_rdp_upper_bound': 'shuffle_accountants.rdp.shuffle_round',
    'subsampled_shuffle_rdp_upper_bound':
        'shuffle_accountants.rdp.shuffle_round',
    'event_from_dict': 'shuffle_accountants.checkpoints',
    'event_to_dict': 'shuffle_accountants.checkpoints',
    'load_accountant': 'shuffle_accountants.checkpoints',
    'save_accountant': 'shuffle_accountants.checkpoints',
    'clear_caches': 'shuffle_accountants._cache',
    'cache_bytes': 'shuffle_accountants._cache',
}


if TYPE_CHECKING:  # type checkers see the names; runtime imports them lazily
  from shuffle_accountants.checkpoints import (
      event_from_dict, event_to_dict, load_accountant, save_accountant)
  from shuffle_accountants.events import (
      CheckInEvent, ShuffleEvent, SubsampledShuffleGaussianEvent)
  from shuffle_accountants.pld.accountant import (
      KRR_ADVERSARIES, ShufflePldAccountant)
  from shuffle_accountants.rdp.accountant import (
      DEFAULT_ORDERS, ShuffleRdpAccountant)
  from shuffle_accountants.rdp.checkin import (
      checkin_rdp_upper_bound, shuffled_gaussian_rdp_lower_bound,
      subsampled_shuffle_gaussian_rdp_upper_bound)
  from shuffle_accountants.rdp.shuffle_round import (
      shuffle_rdp_upper_bound, subsampled_shuffle_rdp_upper_bound)


def __getattr__(name: str) -> Any:
  if name in _EXPORTS:
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
  raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


# Imported by this file for itself, not part of the package's namespace.
_OWN_IMPORTS = frozenset({'Any', 'TYPE_CHECKING', 'importlib', 'sys',
                          'warnings'})


def __dir__():
  """The public names (and loaded submodules), each once."""
  names = {name for name in globals() if name not in _OWN_IMPORTS
           and (name.startswith('__') or not name.startswith('_'))}
  return sorted(names | set(_EXPORTS))


def _installed_version() -> str:
  try:
    return importlib.metadata.version('shuffle-accountants')
  except importlib.metadata.PackageNotFoundError:  # run from a bare checkout
    return '0.1.0+unknown'


__version__ = _installed_version()

_OPACUS_ADAPTER = 'shuffle_accountants.adapters.opacus'


def _register_opacus_accountants() -> None:
  try:
    importlib.import_module(_OPACUS_ADAPTER)
  except Exception as error:  # pylint: disable=broad-except
    # A broken or too old Opacus must not break `import opacus` or ours.
    warnings.warn(f'Opacus is installed but {_OPACUS_ADAPTER} could not be '
                  f'imported, so "shuffle_checkin" is not registered: {error!r}')


class _RegisterAfterOpacusImport(importlib.abc.MetaPathFinder):
  """Registers our accountants right after `opacus` itself is imported.

  Importing Opacus (and torch) takes seconds, so `import shuffle_accountants`
  does not do it; but no PrivacyEngine can exist before `opacus` finishes
  importing, so registering then is just as good.
  """

  def find_spec(self, fullname, path=None, target=None):
    del path, target
    if fullname != 'opacus':
      return None
    sys.meta_path.remove(self)
    spec = importlib.util.find_spec('opacus')
    if spec is None or spec.loader is None:
      return spec
    execute = spec.loader.exec_module

    def exec_module(module):
      execute(module)
      _register_opacus_accountants()

    spec.loader.exec_module = exec_module
    return spec


if 'opacus' in sys.modules:
  _register_opacus_accountants()
elif importlib.util.find_spec('opacus') is not None:
  sys.meta_path.insert(0, _RegisterAfterOpacusImport())

__all__ = sorted(_EXPORTS)
