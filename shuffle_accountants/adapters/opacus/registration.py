"""Registers this package's accountants with Opacus, under their names only."""

import warnings

from opacus.accountants import create_accountant
from opacus.accountants import register_accountant

from shuffle_accountants.adapters.opacus.accountants import (
  DISTRIBUTED_MECHANISM,
)
from shuffle_accountants.adapters.opacus.accountants import (
  DISTRIBUTED_RDP_MECHANISM,
)
from shuffle_accountants.adapters.opacus.accountants import MECHANISM
from shuffle_accountants.adapters.opacus.accountants import RDP_MECHANISM
from shuffle_accountants.adapters.opacus.accountants import (
  DistributedCheckinAccountant,
)
from shuffle_accountants.adapters.opacus.accountants import (
  DistributedCheckinRdpAccountant,
)
from shuffle_accountants.adapters.opacus.accountants import (
  ShuffleCheckinAccountant,
)
from shuffle_accountants.adapters.opacus.accountants import (
  ShuffleCheckinRdpAccountant,
)
from shuffle_accountants.adapters.opacus.sampler_accountants import ACCOUNTANTS


def register_accountants() -> None:
  """Registers our mechanisms with Opacus; safe to call any number of times.

  Called when `shuffle_accountants.adapters.opacus` is imported. It adds our
  names to Opacus' registry and nothing else: Opacus' entries and its
  `PrivacyEngine` are untouched (`install_data_loader_check` is a call of
  its own).

  A different class that someone else registered under one of our names is
  left in place, with a warning.
  """
  for name, accountant_class in (
      (MECHANISM, ShuffleCheckinAccountant),
      (RDP_MECHANISM, ShuffleCheckinRdpAccountant),
      (DISTRIBUTED_MECHANISM, DistributedCheckinAccountant),
      (DISTRIBUTED_RDP_MECHANISM, DistributedCheckinRdpAccountant),
      *ACCOUNTANTS):
    try:
      register_accountant(name, accountant_class)
    except ValueError:
      existing = type(create_accountant(name))
      # A reloaded module defines an equal class under the same name.
      if (existing.__module__, existing.__qualname__) == (
          accountant_class.__module__, accountant_class.__qualname__):
        register_accountant(name, accountant_class, force=True)
      else:
        warnings.warn(
            f'Opacus accountant {name!r} is already registered to '
            f'{existing.__module__}.{existing.__qualname__}; '
            'shuffle-accountants leaves it in place.', stacklevel=2)
