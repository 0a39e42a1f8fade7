"""`ShufflePrivacyEngine` and the data loader check of `make_private`.

`prepare_data_loader` is Opacus' data loader preparation preceded, for this
package's accountants, by the sampler contract check
(`samplers.check_sampler_contract`) and followed by the accountant's
`attach`. `ShufflePrivacyEngine` always uses it. The stock `PrivacyEngine`
uses it only after `install_data_loader_check()`, an explicit call, because
Opacus gives an accountant no hook of its own into `make_private`'s data
loader; without that call `make_private` stops at our accountants (see
`OpacusAccountant.get_optimizer_hook_fn`).
"""

from typing import Optional

from opacus import PrivacyEngine

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
  ShuffleCheckinAccountant,
)
from shuffle_accountants.adapters.opacus.accountants import (
  trained_participation,
)
from shuffle_accountants.adapters.opacus.base import OpacusAccountant
from shuffle_accountants.adapters.opacus.optimizers import check_noise
from shuffle_accountants.adapters.opacus.optimizers import local_noise_optimizer
from shuffle_accountants.adapters.opacus.sampler_accountants import (
  is_sampler_accountant,
)
from shuffle_accountants.adapters.opacus.samplers import check_sampler_contract
from shuffle_accountants.adapters.opacus.samplers import sampler_kind

# Opacus' own method, also once `install_data_loader_check` replaced it (or
# when this module is reloaded).
_STOCK_PREPARE = getattr(PrivacyEngine._prepare_data_loader,
                         '__wrapped__', PrivacyEngine._prepare_data_loader)


def prepare_data_loader(engine: PrivacyEngine, data_loader, *,
                        poisson_sampling: bool, distributed: bool, **kwargs):
  """Opacus' own preparation; for our accountants after the contract check.

  Any other accountant (Opacus' "rdp", "prv", "gdp", ...) goes straight to
  Opacus' method with the same arguments: nothing changes for it.
  """
  if not isinstance(engine.accountant, OpacusAccountant):
    return _STOCK_PREPARE(engine, data_loader,
                          poisson_sampling=poisson_sampling,
                          distributed=distributed, **kwargs)
  check_sampler_contract(engine.accountant, data_loader,
                         poisson_sampling=poisson_sampling,
                         distributed=distributed)
  prepared = _STOCK_PREPARE(engine, data_loader,
                            poisson_sampling=poisson_sampling,
                            distributed=distributed, **kwargs)
  if engine.secure_mode and sampler_kind(prepared) == 'random_allocation':
    prepared.batch_sampler.generator = engine.secure_rng
  return engine.accountant.attach(prepared, kwargs.get('batch_first', True))


# Mypy does not know attributes set on a function.
prepare_data_loader.__wrapped__ = _STOCK_PREPARE  # type: ignore[attr-defined]


def install_data_loader_check() -> None:
  """Makes the stock `PrivacyEngine.make_private` check the data loader.

  Replaces `PrivacyEngine._prepare_data_loader`, for the whole process, by
  `prepare_data_loader`: the sampler contract check for this package's
  accountants, every other accountant (Opacus' "rdp", "prv", "gdp", ...)
  passed through to Opacus' method untouched. Idempotent. Needed only to
  use our accountants with the stock engine (`ShufflePrivacyEngine` checks
  by itself); importing the adapter does not call it.
  """
  PrivacyEngine._prepare_data_loader = prepare_data_loader


class ShufflePrivacyEngine(PrivacyEngine):
  """`PrivacyEngine` for DP-SGD on check-ins with per-participant noise.

  Differences from the stock engine, all in service of training exactly the
  mechanism the accountant certifies:

  * the accountant defaults to ``"shuffle_checkin"`` and must be one of the
    check-in accountants (``"distributed_checkin"`` for secure aggregation;
    ``"random_allocation"`` / ``"shuffled_batches"`` train central DP-SGD
    on their sampler, see `sampler_accountants`);
  * Poisson sampling (each example checks in with q = 1/len(data_loader)) is
    required, and so is a single process;
  * the optimizer is the local-noise version of the stock one (noise
    √k·σ·C on the sum of k participants, or σ·C·√(k/(q·n)) for distributed
    check-in), also under BatchMemoryManager;
  * the accountant gets the exact data set size as n, and
    `make_private_with_epsilon` calibrates σ with it;
  * ``participation`` (distributed check-in only, default ``'revealed'``):
    what the server sees besides the sum and the count, see
    `DistributedCheckinAccountant`; calibration uses it too.
  """

  def __init__(self, *, accountant: str = MECHANISM,
               secure_mode: bool = False,
               participation: Optional[str] = None):
    super().__init__(accountant=accountant, secure_mode=secure_mode)
    if participation is not None:
      if not isinstance(self.accountant, DistributedCheckinAccountant):
        raise ValueError(
            f'participation={participation!r} describes secure aggregation: '
            f'use accountant={DISTRIBUTED_MECHANISM!r} or '
            f'{DISTRIBUTED_RDP_MECHANISM!r}, or leave participation unset; '
            f'got accountant={accountant!r}.')
      self.accountant.participation = trained_participation(
          participation)
    if is_sampler_accountant(self.accountant):
      return  # central DP-SGD on that sampler (sampler_accountants)
    if not isinstance(self.accountant, ShuffleCheckinAccountant):
      raise ValueError(
          'ShufflePrivacyEngine needs a check-in accountant '
          f'({MECHANISM!r}, {RDP_MECHANISM!r}, {DISTRIBUTED_MECHANISM!r} or '
          f'{DISTRIBUTED_RDP_MECHANISM!r}); got accountant={accountant!r}.')

  def _prepare_data_loader(self, data_loader, *, poisson_sampling: bool,
                           distributed: bool, **kwargs):
    if is_sampler_accountant(self.accountant):
      return prepare_data_loader(
          self, data_loader, poisson_sampling=poisson_sampling,
          distributed=distributed, **kwargs)
    if not poisson_sampling:
      raise ValueError(
          'poisson_sampling=False: shuffled check-in means every example '
          'participates independently with probability q; keep '
          'poisson_sampling=True.')
    if distributed:
      raise ValueError('distributed training is not supported: every rank '
                       'would add its own noise; train in one process.')
    num_users = len(data_loader.dataset)
    if num_users == 0 or len(data_loader) == 0:
      raise ValueError(
          f'the data loader is empty (len(dataset)={num_users}, '
          f'len(data_loader)={len(data_loader)}); shuffled check-in needs at '
          'least one example and one batch.')
    if self.accountant.num_users not in (None, num_users):
      raise ValueError(
          f'this engine already accounts for num_users='
          f'{self.accountant.num_users}, but the data loader holds '
          f'{num_users} examples; use a new ShufflePrivacyEngine per data '
          'set.')
    self.accountant.num_users = num_users
    dp_data_loader = prepare_data_loader(
        self, data_loader, poisson_sampling=poisson_sampling,
        distributed=distributed, **kwargs)
    # Opacus samples at q = 1/len(data_loader) but runs int(1/q) batches per
    # epoch, which is one fewer for some lengths (93, ...); make_private then
    # reports q' = 1/int(1/q) to the hook. Run len(data_loader) batches so the
    # q accounted is the q sampled and calibration sees the same q.
    dp_data_loader.batch_sampler.steps = len(data_loader)
    # make_private hands the step hook 1 / len(dp_data_loader); so here.
    self._sample_rate = 1 / len(dp_data_loader)
    return dp_data_loader

  def _prepare_optimizer(self, **kwargs):
    check_noise(kwargs.get('noise_multiplier'), kwargs.get('max_grad_norm'))
    stock = super()._prepare_optimizer(**kwargs)
    if is_sampler_accountant(self.accountant):
      return stock
    return local_noise_optimizer(
        stock, kwargs['max_grad_norm'],
        self.accountant.participant_noise_scale(self._sample_rate))

  def make_private_with_epsilon(self, *, data_loader, **kwargs):
    if not is_sampler_accountant(self.accountant):
      kwargs.setdefault('num_users', len(data_loader.dataset))
    if isinstance(self.accountant, DistributedCheckinAccountant):
      # The calibration's fresh accountant must see this engine's model.
      kwargs['participation'] = self.accountant.participation
    return super().make_private_with_epsilon(data_loader=data_loader,
                                             **kwargs)
