"""Flower adapter: certified accounting, secret sampling, distributed noise.

References: GAUSS-NO-GAIN, KHH-SUBSAMPLED, ZDW22-ONE-ORDER, SECAGG-REVEALED,
  SECAGG-HIDDEN.

Needs the extra ``[flower]`` (``flwr[simulation]>=1.42,<2``).

* `PldAccountant(config)` (`accountant`) implements Flower's
  ``flwr.supercore.privacy_accounting.PrivacyAccountant`` protocol with the
  constructor shape of Flower's ``RdpAccountant(config)``, so it works as
  ``accountant=`` of ``DifferentialPrivacyServerSideFixedClipping`` /
  ``DifferentialPrivacyClientSideFixedClipping``.
* `DistributedNoiseFixedClipping` (server, `strategies`) with
  `distributed_noise_mod` (clients, `mod`): every participant clips its
  update and adds its own share of the Gaussian noise; the server only
  needs the sum (secure aggregation, simulated here: the strategy warns
  and reports the ε of what its server sees). One
  `DistributedCheckInEvent` is accounted per round.
* `SampledServerSideFixedClipping` (`strategies`): central DP with
  server-side clipping on secretly sampled clients (Poisson or fixed size),
  accounted with a `PldAccountant` of that sampling method, which Flower's
  wrappers refuse.

* `SkellamSecAggFedAvg` with `skellam_mod` and `skellam_secaggplus_workflow`
  (`secagg`): Flower's real SecAgg+ summing clipped, randomly rounded
  updates with Skellam noise, each round accounted as the
  `SkellamSecureSumEvent` it releases (SKELLAM-SUM); on Flower's current
  API (``strategy.start``) `SkellamNoiseFixedClipping` with
  `skellam_noise_mod`, the same release with the secure sum simulated.

What the accountant certifies for Flower's Gaussian release, and against
whom, is in `accountant`; `wrapper` holds what the two strategies share.
"""

# Without the extra: an install hint, not a bare ModuleNotFoundError from
# deep inside a submodule.
try:
  import flwr as _flwr  # noqa: F401
except ImportError as missing:
  from shuffle_accountants import _validation
  raise _validation.missing_extra(missing, 'flower', __name__) from missing

from shuffle_accountants.adapters.flower.accountant import ACCOUNTING_METHOD
from shuffle_accountants.adapters.flower.accountant import STATE_SCHEMA_VERSION
from shuffle_accountants.adapters.flower.accountant import GaussianPrivacyEvent
from shuffle_accountants.adapters.flower.accountant import NeighboringRelation
from shuffle_accountants.adapters.flower.accountant import PldAccountant
from shuffle_accountants.adapters.flower.accountant import PrivacyConfig
from shuffle_accountants.adapters.flower.accountant import PrivacySpent
from shuffle_accountants.adapters.flower.accountant import SamplingMethod
from shuffle_accountants.adapters.flower.mod import KEY_CHECKIN_RATE
from shuffle_accountants.adapters.flower.mod import KEY_CLIPPING_NORM
from shuffle_accountants.adapters.flower.mod import KEY_NOISE_SHARE
from shuffle_accountants.adapters.flower.mod import KEY_PARTICIPANT
from shuffle_accountants.adapters.flower.mod import KEY_PARTICIPATION
from shuffle_accountants.adapters.flower.mod import distributed_noise_mod
from shuffle_accountants.adapters.flower.mod import participant_noise_multiplier
from shuffle_accountants.adapters.flower.mod import uploader_noise_multiplier
from shuffle_accountants.adapters.flower.secagg import SkellamNoiseFixedClipping
from shuffle_accountants.adapters.flower.secagg import SkellamSecAggFedAvg
from shuffle_accountants.adapters.flower.secagg import skellam_mod
from shuffle_accountants.adapters.flower.secagg import skellam_noise_mod
from shuffle_accountants.adapters.flower.secagg import (
    skellam_secaggplus_workflow,
)
from shuffle_accountants.adapters.flower.strategies import (
    DistributedNoiseFixedClipping,
)
from shuffle_accountants.adapters.flower.strategies import (
    SampledServerSideFixedClipping,
)
from shuffle_accountants.adapters.flower.wrapper import NotEnoughClients

__all__ = [
    'ACCOUNTING_METHOD', 'DistributedNoiseFixedClipping',
    'GaussianPrivacyEvent', 'KEY_CHECKIN_RATE', 'KEY_CLIPPING_NORM',
    'KEY_NOISE_SHARE', 'KEY_PARTICIPANT', 'KEY_PARTICIPATION',
    'NeighboringRelation', 'NotEnoughClients', 'PldAccountant',
    'PrivacyConfig', 'PrivacySpent', 'STATE_SCHEMA_VERSION',
    'SampledServerSideFixedClipping', 'SamplingMethod',
    'SkellamNoiseFixedClipping', 'SkellamSecAggFedAvg',
    'distributed_noise_mod', 'participant_noise_multiplier', 'skellam_mod',
    'skellam_noise_mod', 'skellam_secaggplus_workflow',
    'uploader_noise_multiplier',
]
