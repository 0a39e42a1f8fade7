"""Opacus adapter: DP-SGD on check-ins with per-participant noise.

Shuffled (GAUSS-NO-GAIN, LABEL-MIXTURE, LIEW-THM2) or securely aggregated
(SECAGG-REVEALED, SECAGG-HIDDEN, LIEW-THM4) check-in, and central DP-SGD on the
samplers of `shuffle_accountants.samplers`.

Importing this package (the one entry point; `import shuffle_accountants`
alone touches no other library) registers these Opacus accountants
(idempotently), under their names only, through Opacus'
`register_accountant` (`registration`):

* ``"shuffle_checkin"``: `ShuffleCheckinAccountant`, which composes one
  `CheckInEvent` per optimizer step in `ShufflePldAccountant` (the default);
* ``"shuffle_checkin_rdp"``: the same through `ShuffleRdpAccountant`;
* ``"distributed_checkin"`` / ``"distributed_checkin_rdp"``:
  `DistributedCheckinAccountant` (and its RDP twin), one
  `DistributedCheckInEvent` per step: the participants' noise is summed by
  secure aggregation, so the update is as noisy as central DP-SGD's (below).
* ``"random_allocation"`` and ``"shuffled_batches"``: central DP-SGD on those
  samplers (`sampler_accountants`, `samplers`).

Importing changes nothing else in Opacus. `make_private` checks the sampler
contract for these accountants in `ShufflePrivacyEngine`, and in the stock
`PrivacyEngine` after `install_data_loader_check()` (an explicit call,
process-wide; every other accountant, Opacus' "rdp", "prv" and "gdp"
included, still goes to Opacus' method unchanged). Without that call the
stock engine's `make_private` stops at our accountants with an error that
names both ways.

The mechanism accounted is DP-SGD with *local* noise and shuffled check-in
(LIEW-THM2, GAUSS-NO-GAIN/LABEL-MIXTURE in docs/mathematics.md): each of the n
training examples (users) independently checks in with probability q, clips its
gradient to norm C and adds its own N(0, σ²C²) noise; a shuffler hands the
server the participants' reports, which it sums. The released sum of k
participants therefore carries noise of standard deviation √k·σ·C, not Opacus'
central σ·C. Adjacency is replace-one over the n examples (the shuffle model's
relation), whereas Opacus' own accountants use add/remove-one.

The mechanism trained is the mechanism accounted:

* `ShufflePrivacyEngine` builds a local-noise optimizer
  (`LocalNoiseDPOptimizer`) that counts the participants while clipping and
  adds noise of standard deviation √k·σ·C, and passes the exact data set
  size to the accountant. It works with `BatchMemoryManager`.
* With the stock ``PrivacyEngine(accountant="shuffle_checkin")``, the
  accountant's step hook upgrades the stock optimizer to the local-noise one
  at the first step (topping up that step's noise from σ·C to √k·σ·C; see
  `optimizers` for why in place), and infers n from Opacus' expected batch
  size (never more than the data set size, see `ShuffleCheckinAccountant`).
  Set-ups it cannot train correctly (distributed training, ghost or adaptive
  clipping, BatchMemoryManager before the upgrade, accumulated
  micro-batches) stop with an error that names the fix.

The realized number of participants sets the noise, as the mechanism
prescribes, but never feeds ε: the accountant sees only (σ, q, n).

Distributed check-in keeps Opacus' meaning of σ: the aggregate
noise multiplier at the expected cohort q·n. Each participant adds
N(0, σ²C²/(q·n)), so the sum of k participants carries σ·C·√(k/(q·n)) (σ·C
at k = q·n, Opacus' central noise) and the accountant composes
`DistributedCheckInEvent(n, q, σ/√(q·n), participation=...)`: by default
``'revealed'`` (the server sees who took part, as with standard secure
aggregation; SECAGG-REVEALED), or ``'hidden'`` (an anonymous check-in channel;
SECAGG-HIDDEN, LIEW-THM4). Secure aggregation itself is
simulated: the optimizer adds that sum of per-participant noises to the
clipped sum, which is exactly what the protocol would deliver.

Modules: `base` (`OpacusAccountant`, the base of every accountant here),
`accountants` (check-in), `sampler_accountants`, `samplers` (the sampler
contract), `optimizers` (local noise), `engine` (`ShufflePrivacyEngine`,
the data loader check), `registration`.
"""

# Without the extra: an install hint, not a bare ModuleNotFoundError from
# deep inside a submodule.
try:
  import opacus as _opacus  # noqa: F401
  import torch as _torch  # noqa: F401
except ImportError as missing:
  from shuffle_accountants import _validation
  raise _validation.missing_extra(missing, 'opacus', __name__) from missing

from shuffle_accountants.adapters.opacus.accountants import (
    DEFAULT_PARTICIPATION,
)
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
from shuffle_accountants.adapters.opacus.accountants import (
    stock_engine_population,
)
from shuffle_accountants.adapters.opacus.base import OpacusAccountant
from shuffle_accountants.adapters.opacus.base import SavedHistory
from shuffle_accountants.adapters.opacus.base import record_step
from shuffle_accountants.adapters.opacus.engine import ShufflePrivacyEngine
from shuffle_accountants.adapters.opacus.engine import install_data_loader_check
from shuffle_accountants.adapters.opacus.engine import prepare_data_loader
from shuffle_accountants.adapters.opacus.optimizers import LocalNoiseDPOptimizer
from shuffle_accountants.adapters.opacus.optimizers import (
    LocalNoiseDPPerLayerOptimizer,
)
from shuffle_accountants.adapters.opacus.optimizers import LocalNoiseMixin
from shuffle_accountants.adapters.opacus.optimizers import install_local_noise
from shuffle_accountants.adapters.opacus.registration import (
    register_accountants,
)
from shuffle_accountants.adapters.opacus.sampler_accountants import ACCOUNTANTS
from shuffle_accountants.adapters.opacus.sampler_accountants import (
    ADD_OR_REMOVE_ONE,
)
from shuffle_accountants.adapters.opacus.sampler_accountants import (
    RandomAllocationAccountant,
)
from shuffle_accountants.adapters.opacus.sampler_accountants import (
    ShuffledBatchesAccountant,
)
from shuffle_accountants.adapters.opacus.sampler_accountants import (
    is_sampler_accountant,
)
from shuffle_accountants.adapters.opacus.samplers import RANDOM_ALLOCATION
from shuffle_accountants.adapters.opacus.samplers import SHUFFLED_BATCHES
from shuffle_accountants.adapters.opacus.samplers import RandomAllocationSampler
from shuffle_accountants.adapters.opacus.samplers import check_sampler_contract
from shuffle_accountants.adapters.opacus.samplers import sampler_kind

__all__ = [
    'ACCOUNTANTS', 'ADD_OR_REMOVE_ONE', 'DEFAULT_PARTICIPATION',
    'DISTRIBUTED_MECHANISM', 'DISTRIBUTED_RDP_MECHANISM',
    'DistributedCheckinAccountant', 'DistributedCheckinRdpAccountant',
    'LocalNoiseDPOptimizer', 'LocalNoiseDPPerLayerOptimizer',
    'LocalNoiseMixin', 'MECHANISM', 'OpacusAccountant', 'RANDOM_ALLOCATION',
    'RDP_MECHANISM', 'RandomAllocationAccountant', 'RandomAllocationSampler',
    'SHUFFLED_BATCHES', 'SavedHistory', 'ShuffleCheckinAccountant',
    'ShuffleCheckinRdpAccountant', 'ShufflePrivacyEngine',
    'ShuffledBatchesAccountant', 'check_sampler_contract',
    'install_data_loader_check', 'install_local_noise',
    'is_sampler_accountant', 'prepare_data_loader', 'record_step',
    'register_accountants', 'sampler_kind', 'stock_engine_population',
]

register_accountants()
