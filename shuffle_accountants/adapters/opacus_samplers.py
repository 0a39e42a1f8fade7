"""Opacus accountants for DP-SGD samplers, and their sampler contract.

IDs: FS26-RANDOM-ALLOCATION, RANDOM-ALLOCATION-GRID, SHUFFLED-BATCHES-UB,
  CHUA24-SHUFFLE-LB

They live in the package `shuffle_accountants.adapters.opacus` now
(`samplers`, `sampler_accountants`, `base`), which importing this module
imports, so the accountants are registered. `install_contract_check` is the
old name of `install_data_loader_check`.
"""

from shuffle_accountants.adapters.opacus import ACCOUNTANTS
from shuffle_accountants.adapters.opacus import ADD_OR_REMOVE_ONE
from shuffle_accountants.adapters.opacus import RANDOM_ALLOCATION
from shuffle_accountants.adapters.opacus import SHUFFLED_BATCHES
from shuffle_accountants.adapters.opacus import OpacusAccountant
from shuffle_accountants.adapters.opacus import RandomAllocationAccountant
from shuffle_accountants.adapters.opacus import RandomAllocationSampler
from shuffle_accountants.adapters.opacus import SavedHistory
from shuffle_accountants.adapters.opacus import ShuffledBatchesAccountant
from shuffle_accountants.adapters.opacus import check_sampler_contract
from shuffle_accountants.adapters.opacus import (
    install_data_loader_check as install_contract_check,
)
from shuffle_accountants.adapters.opacus import is_sampler_accountant
from shuffle_accountants.adapters.opacus import record_step
from shuffle_accountants.adapters.opacus import sampler_kind

__all__ = [
    'ACCOUNTANTS', 'ADD_OR_REMOVE_ONE', 'OpacusAccountant', 'RANDOM_ALLOCATION',
    'RandomAllocationAccountant', 'RandomAllocationSampler',
    'SHUFFLED_BATCHES', 'SavedHistory', 'ShuffledBatchesAccountant',
    'check_sampler_contract', 'install_contract_check',
    'is_sampler_accountant', 'record_step', 'sampler_kind',
]
