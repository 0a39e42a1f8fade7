"""Certified privacy accounting for the shuffle model of differential privacy.

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

Importing this package touches no other library: the Opacus accountants
("shuffle_checkin", "distributed_checkin", ...) are registered by
`import shuffle_accountants.adapters.opacus`.
"""

import importlib
import importlib.metadata
from typing import TYPE_CHECKING, Any

# Public names and the modules that define them. They are imported on first
# use (PEP 562), so that `import shuffle_accountants` and the command line's
# --help do not pay for numpy, scipy and dp_accounting.
_EXPORTS = {
    'CheckInEvent': 'shuffle_accountants.events',
    'DistributedCheckInEvent': 'shuffle_accountants.events',
    'SkellamSecureSumEvent': 'shuffle_accountants.events',
    'ShuffleEvent': 'shuffle_accountants.events',
    'SubsampledShuffleGaussianEvent': 'shuffle_accountants.events',
    'SumOfReportsEvent': 'shuffle_accountants.events',
    'BinomialSecureSumEvent': 'shuffle_accountants.events',
    'DiscreteGaussianSumEvent': 'shuffle_accountants.events',
    'DiscreteLaplaceSumEvent': 'shuffle_accountants.events',
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
    'NeighboringRelation': 'dp_accounting.privacy_accountant',
    'KRandomizedResponse': 'shuffle_accountants.randomizers',
    'SymmetricUnaryEncoding': 'shuffle_accountants.randomizers',
    'OptimizedUnaryEncoding': 'shuffle_accountants.randomizers',
    'UnaryEncoding': 'shuffle_accountants.randomizers',
    'OptimizedLocalHashing': 'shuffle_accountants.randomizers',
    'HadamardResponse': 'shuffle_accountants.randomizers',
    'SubsetSelection': 'shuffle_accountants.randomizers',
    'FiniteRandomizer': 'shuffle_accountants.randomizers',
    'GaussianRandomizer': 'shuffle_accountants.randomizers',
    'LaplaceRandomizer': 'shuffle_accountants.randomizers',
    'calibrate_local_epsilon': 'shuffle_accountants.calibration',
    'calibrate_noise_multiplier': 'shuffle_accountants.calibration',
    'calibrate_rounds': 'shuffle_accountants.calibration',
    'calibrate_num_users': 'shuffle_accountants.calibration',
    'calibrate_num_trials': 'shuffle_accountants.calibration',
    'calibrate_discrete_sigma': 'shuffle_accountants.calibration',
    'UnreachableTargetError': 'shuffle_accountants.calibration',
    'RandomAllocationDpEvent': 'shuffle_accountants.samplers',
    'ShuffledBatchesDpEvent': 'shuffle_accountants.samplers',
}
# Subpackages and modules users reach as attributes (`sa.randomizers.X`).
_SUBMODULES = frozenset({'randomizers', 'calibration', 'samplers'})


# Type checkers see the names (tests/test_layout.py keeps this block equal
# to _EXPORTS); runtime imports them lazily.
if TYPE_CHECKING:
  from dp_accounting.privacy_accountant import NeighboringRelation

  from shuffle_accountants import calibration
  from shuffle_accountants import randomizers
  from shuffle_accountants import samplers
  from shuffle_accountants._cache import cache_bytes
  from shuffle_accountants._cache import clear_caches
  from shuffle_accountants.calibration import UnreachableTargetError
  from shuffle_accountants.calibration import calibrate_discrete_sigma
  from shuffle_accountants.calibration import calibrate_local_epsilon
  from shuffle_accountants.calibration import calibrate_noise_multiplier
  from shuffle_accountants.calibration import calibrate_num_trials
  from shuffle_accountants.calibration import calibrate_num_users
  from shuffle_accountants.calibration import calibrate_rounds
  from shuffle_accountants.checkpoints import event_from_dict
  from shuffle_accountants.checkpoints import event_to_dict
  from shuffle_accountants.checkpoints import load_accountant
  from shuffle_accountants.checkpoints import save_accountant
  from shuffle_accountants.events import BinomialSecureSumEvent
  from shuffle_accountants.events import CheckInEvent
  from shuffle_accountants.events import DiscreteGaussianSumEvent
  from shuffle_accountants.events import DiscreteLaplaceSumEvent
  from shuffle_accountants.events import DistributedCheckInEvent
  from shuffle_accountants.events import ShuffleEvent
  from shuffle_accountants.events import SkellamSecureSumEvent
  from shuffle_accountants.events import SubsampledShuffleGaussianEvent
  from shuffle_accountants.events import SumOfReportsEvent
  from shuffle_accountants.pld.accountant import KRR_ADVERSARIES
  from shuffle_accountants.pld.accountant import ShufflePldAccountant
  from shuffle_accountants.randomizers import FiniteRandomizer
  from shuffle_accountants.randomizers import GaussianRandomizer
  from shuffle_accountants.randomizers import HadamardResponse
  from shuffle_accountants.randomizers import KRandomizedResponse
  from shuffle_accountants.randomizers import LaplaceRandomizer
  from shuffle_accountants.randomizers import OptimizedLocalHashing
  from shuffle_accountants.randomizers import OptimizedUnaryEncoding
  from shuffle_accountants.randomizers import SubsetSelection
  from shuffle_accountants.randomizers import SymmetricUnaryEncoding
  from shuffle_accountants.randomizers import UnaryEncoding
  from shuffle_accountants.rdp.accountant import DEFAULT_ORDERS
  from shuffle_accountants.rdp.accountant import ShuffleRdpAccountant
  from shuffle_accountants.rdp.checkin import checkin_rdp_upper_bound
  from shuffle_accountants.rdp.checkin import shuffled_gaussian_rdp_lower_bound
  from shuffle_accountants.rdp.checkin import (
    subsampled_shuffle_gaussian_rdp_upper_bound,
  )
  from shuffle_accountants.rdp.shuffle_round import shuffle_rdp_upper_bound
  from shuffle_accountants.rdp.shuffle_round import (
    subsampled_shuffle_rdp_upper_bound,
  )
  from shuffle_accountants.samplers import RandomAllocationDpEvent
  from shuffle_accountants.samplers import ShuffledBatchesDpEvent


def __getattr__(name: str) -> Any:
  if name in _EXPORTS or name in _SUBMODULES:
    value = (importlib.import_module(f'{__name__}.{name}')
             if name in _SUBMODULES
             else getattr(importlib.import_module(_EXPORTS[name]), name))
    globals()[name] = value
    return value
  raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


# Imported by this file for itself, not part of the package's namespace.
_OWN_IMPORTS = frozenset({'Any', 'TYPE_CHECKING', 'importlib'})


def __dir__():
  """The public names (and loaded submodules), each once."""
  names = {name for name in globals() if name not in _OWN_IMPORTS
           and (name.startswith('__') or not name.startswith('_'))}
  return sorted(names | set(_EXPORTS) | _SUBMODULES)


def _installed_version() -> str:
  try:
    return importlib.metadata.version('shuffle-accountants')
  except importlib.metadata.PackageNotFoundError:  # run from a bare checkout
    return '0.2.0+unknown'


__version__ = _installed_version()

__all__ = sorted(set(_EXPORTS) | _SUBMODULES)
