"""Opacus adapter: DP-SGD on check-ins with per-participant noise, shuffled (D7, D8, LIEW-THM2) or securely aggregated (D30, D17, LIEW-THM4).

Importing this module (the one entry point; `import shuffle_accountants`
alone touches no other library) registers these Opacus accountants
(idempotently), under their names only, through Opacus'
`register_accountant`:

* ``"shuffle_checkin"``: `ShuffleCheckinAccountant`, which composes one
  `CheckInEvent` per optimizer step in `ShufflePldAccountant` (the default);
* ``"shuffle_checkin_rdp"``: the same through `ShuffleRdpAccountant`;
* ``"distributed_checkin"`` / ``"distributed_checkin_rdp"``:
  `DistributedCheckinAccountant` (and its RDP twin), one
  `DistributedCheckInEvent` per step: the participants' noise is summed by
  secure aggregation, so the update is as noisy as central DP-SGD's (below).
* ``"random_allocation"`` and ``"shuffled_batches"``: central DP-SGD on those
  samplers, with the sampler <-> accountant check at `make_private`
  (`opacus_samplers`).

It also wraps `PrivacyEngine._prepare_data_loader` so that `make_private`
checks the sampler contract for these accountants; every other accountant,
Opacus' "rdp", "prv" and "gdp" included, goes to Opacus' method unchanged.

The mechanism accounted is DP-SGD with *local* noise and shuffled check-in
(LIEW-THM2, D7/D8 in docs/mathematics.md): each of the n training examples (users)
independently checks in with probability q, clips its gradient to norm C and
adds its own N(0, σ²C²) noise; a shuffler hands the server the participants'
reports, which it sums. The released sum of k participants therefore carries
noise of standard deviation √k·σ·C, not Opacus' central σ·C. Adjacency is
replace-one over the n examples (the shuffle model's relation), whereas
Opacus' own accountants use add/remove-one.

The mechanism trained is the mechanism accounted:

* `ShufflePrivacyEngine` installs a local-noise optimizer
  (`LocalNoiseDPOptimizer`) that counts the participants while clipping and
  adds noise of standard deviation √k·σ·C, and passes the exact data set
  size to the accountant. It works with `BatchMemoryManager`.
* With the stock ``PrivacyEngine(accountant="shuffle_checkin")``, the
  accountant's step hook upgrades the stock optimizer to the local-noise one
  at the first step (topping up that step's noise from σ·C to √k·σ·C), and
  infers n from Opacus' expected batch size (never more than the data set
  size, see `ShuffleCheckinAccountant`). Set-ups it cannot train correctly
  (distributed training, ghost or adaptive clipping, BatchMemoryManager
  before the upgrade, accumulated micro-batches) stop with an error that
  names the fix.

The realized number of participants sets the noise, as the mechanism
prescribes, but never feeds ε: the accountant sees only (σ, q, n).

Distributed check-in keeps Opacus' meaning of σ: the aggregate
noise multiplier at the expected cohort q·n. Each participant adds
N(0, σ²C²/(q·n)), so the sum of k participants carries σ·C·√(k/(q·n)) (σ·C
at k = q·n, Opacus' central noise) and the accountant composes
`DistributedCheckInEvent(n, q, σ/√(q·n), participation=...)`: by default
``'revealed'`` (the server sees who took part, as with standard secure
aggregation; D30), or ``'hidden'`` (an anonymous check-in channel; D17,
LIEW-THM4). Secure aggregation itself is
simulated: the optimizer adds that sum of per-participant noises to the
clipped sum, which is exactly what the protocol would deliver.
"""

import math
import os
import sys
import warnings
from typing import Optional

import opacus
from opacus import PrivacyEngine
from opacus.accountants import create_accountant
from opacus.accountants import register_accountant
from opacus.optimizers import DPOptimizer
from opacus.optimizers import DPPerLayerOptimizer
import torch

from shuffle_accountants import _validation
from shuffle_accountants import DistributedCheckInEvent
from shuffle_accountants.events import CheckInEvent
from shuffle_accountants.events import check_participation
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.rdp.accountant import ShuffleRdpAccountant
from shuffle_accountants.adapters import opacus_samplers

MECHANISM = 'shuffle_checkin'
RDP_MECHANISM = 'shuffle_checkin_rdp'
DISTRIBUTED_MECHANISM = 'distributed_checkin'
DISTRIBUTED_RDP_MECHANISM = 'distributed_checkin_rdp'
DEFAULT_PARTICIPATION = 'revealed'

_FIX = ('use shuffle_accountants.adapters.opacus.ShufflePrivacyEngine (one '
        'process, Poisson sampling, flat or per-layer clipping, '
        'grad_sample_mode="hooks")')


def stock_engine_population(num_users: int, sample_rate: float) -> int:
  """Users certified by the stock engine's expected batch size.

  Opacus' `make_private` hands the optimizer only the expected batch size
  B = int(num_users * sample_rate); the step hook can recover n no better
  than floor(B / sample_rate), which is at most `num_users` and at least
  `num_users` - 1/sample_rate. Calibration applies the same rule, so the σ
  `make_private_with_epsilon` picks is the σ whose ε is reported afterwards.
  Accounting for fewer users than there are is sound: the extra users'
  reports are a post-processing the server could simulate.
  """
  num_users = _validation.check_integer('num_users', num_users, 1)
  sample_rate = _validation.check_real('sample_rate', sample_rate, 0.0, 1.0,
                                       min_inclusive=False)
  return max(1, min(num_users, _certified_population(
      int(num_users * sample_rate), sample_rate)))


def _certified_population(expected_batch_size: int, sample_rate: float) -> int:
  """The most users an expected batch size at `sample_rate` guarantees."""
  return math.floor(expected_batch_size / sample_rate)


class ShuffleCheckinAccountant(opacus_samplers.OpacusAccountant):
  """Opacus accountant for DP-SGD with local noise and shuffled check-in.

  Every optimizer step is one `CheckInEvent(num_users, checkin_rate=q,
  noise_multiplier=σ)`; `get_epsilon` composes them in the library's
  `ShufflePldAccountant` (this class) or `ShuffleRdpAccountant`
  (`ShuffleCheckinRdpAccountant`) and returns their certified upper bound
  on ε under replace-one adjacency.

  `history` is Opacus' run-length list of (noise_multiplier, sample_rate,
  num_steps), so `opacus.accountants.utils.get_noise_multiplier` can write
  it directly.

  The population n (`num_users`, the training-set size) is set, in order of
  precedence, by: `ShufflePrivacyEngine` (exactly ``len(dataset)``), by the
  caller (``accountant.num_users = len(dataset)``), or by the step hook of
  the stock engine (floor(expected_batch_size / sample_rate), see
  `stock_engine_population`). A fresh accountant without n, as
  `make_private_with_epsilon` creates for calibration, needs
  ``num_users=len(dataset)`` passed through; `get_epsilon` raises otherwise.
  """

  # Subclasses change only these: Opacus' accountant name and the library
  # accountant that composes the steps.
  _mechanism_name = MECHANISM
  _library_accountant_class = ShufflePldAccountant

  def __init__(self, num_users: Optional[int] = None):
    super().__init__()
    self.num_users = (None if num_users is None else
                      _validation.check_integer('num_users', num_users, 1))

  def _library_accountant(self):
    return self._library_accountant_class()

  def participant_noise_scale(self, sample_rate: float) -> float:
    """Each participant's noise multiplier in units of Opacus' σ (here 1)."""
    del sample_rate
    return 1.0

  def _event(self, num_users: int, sample_rate: float,
             noise_multiplier: float):
    return CheckInEvent(num_users=num_users, checkin_rate=sample_rate,
                        noise_multiplier=noise_multiplier)

  def _first_step_warning(self, sample_rate: float) -> Optional[str]:
    """Local noise changes what is trained: say so once, with the factor."""
    cohort = self.num_users * sample_rate
    return (
        f'accountant={self.mechanism()!r} trains local noise: every '
        'participant adds its own N(0, noise_multiplier² C²), so the update '
        '(the sum of k participants) carries √k times the noise of central '
        'DP-SGD at the same noise_multiplier: at the expected cohort '
        f'q·n = {cohort:.4g} that is √(q·n) = {math.sqrt(cohort):.3g} times '
        'more noise. For the update noise of central DP-SGD, use '
        "accountant='distributed_checkin' (per-participant noise summed by "
        'secure aggregation; the server is not trusted) or central DP-SGD '
        "(PrivacyEngine(accountant='prv'), trusted server).")

  def _population(self, num_users: Optional[int]) -> int:
    if num_users is not None:
      num_users = _validation.check_integer('num_users', num_users, 1)
      return min(stock_engine_population(num_users, sample_rate)
                 for _, sample_rate, _ in self.history)
    if self.num_users is None:
      raise ValueError(
          f'the {self.mechanism()!r} accountant does not know the number of '
          'users n (the training-set size), and guessing it could '
          'under-report epsilon: pass num_users=len(train_dataset) to '
          'make_private_with_epsilon or get_epsilon, set '
          'accountant.num_users, or use ShufflePrivacyEngine.')
    return self.num_users

  def get_epsilon(self, delta: float, *, num_users: Optional[int] = None,
                  **event_options) -> float:
    """Certified ε (upper bound) after all steps so far, at `delta`.

    Args:
      delta: target δ in (0, 1).
      num_users: the training-set size, for an accountant that has no
        population yet (Opacus' `make_private_with_epsilon` forwards it). It
        is counted as `stock_engine_population` (at most 1/q users fewer),
        the population the stock engine's step hook will count.
      **event_options: for distributed check-in, ``participation`` for this
        call (Opacus' `make_private_with_epsilon` forwards it to the fresh
        accountant it calibrates with).

    Returns:
      An upper bound on ε under replace-one adjacency; inf if a step had
      noise_multiplier 0; 0 before any step.
    """
    return super().get_epsilon(delta, num_users=num_users, **event_options)

  def _certified_epsilon(self, delta, history, *, num_users=None,
                         **event_options):
    population = self._population(num_users)
    accountant = self._library_accountant()
    for noise_multiplier, sample_rate, num_steps in history:
      accountant.compose(self._event(population, sample_rate,
                                     noise_multiplier, **event_options),
                         num_steps)
    return accountant.get_epsilon(delta)

  def _check_step(self, optimizer: DPOptimizer, sample_rate: float) -> None:
    """Trains local noise: checks the step, upgrades a stock optimizer."""
    if optimizer.accumulated_iterations != 1:
      raise ValueError(
          f'the {self.mechanism()} accountant saw '
          f'{optimizer.accumulated_iterations} accumulated micro-batches in '
          'one step; one check-in round is one Poisson batch. Keep '
          'poisson_sampling=True, and use BatchMemoryManager with '
          'ShufflePrivacyEngine for large batches.')
    self._check_population(optimizer.expected_batch_size, sample_rate)
    scale = self.participant_noise_scale(sample_rate)
    if not isinstance(optimizer, LocalNoiseMixin):
      _upgrade_stock_optimizer(optimizer, scale)
    elif optimizer.participant_noise_scale != scale:
      raise ValueError(
          'the optimizer adds per-participant noise '
          f'{optimizer.participant_noise_scale:.6g}·σ·C but the '
          f'{self.mechanism()} accountant (num_users={self.num_users}, '
          f'sample_rate={sample_rate:g}) accounts for {scale:.6g}·σ·C; '
          'keep accountant.num_users as make_private set it and use one '
          'engine per optimizer.')
    if not self.history:
      message = self._first_step_warning(sample_rate)
      if message:
        warnings.warn(message, UserWarning, stacklevel=_user_stacklevel())

  def _check_population(self, expected_batch_size, sample_rate: float):
    """Infers n from the stock engine, or checks a given n is not too large."""
    if expected_batch_size is None or expected_batch_size < 1:
      raise ValueError(
          f'expected_batch_size={expected_batch_size}: the {self.mechanism()} '
          'accountant needs at least one expected participant per step '
          '(len(dataset) / len(data_loader) >= 1).')
    if self.num_users is None:
      self.num_users = _certified_population(expected_batch_size, sample_rate)
    elif self.num_users * sample_rate >= expected_batch_size + 1:
      raise ValueError(
          f'num_users={self.num_users} is larger than the training set: with '
          f'sample_rate={sample_rate:g} the expected batch size '
          f'{expected_batch_size} implies fewer than '
          f'{(expected_batch_size + 1) / sample_rate:.0f} examples. '
          'Over-stating n under-reports epsilon; set num_users to '
          'len(train_dataset).')

  def _extra_state(self) -> dict:
    return {'num_users': self.num_users}

  def _load_extra_state(self, state_dict) -> None:
    num_users = state_dict.get('num_users')
    self.num_users = (None if num_users is None else
                      _validation.check_integer('num_users', num_users, 1))


class ShuffleCheckinRdpAccountant(ShuffleCheckinAccountant):
  """`ShuffleCheckinAccountant` composing in `ShuffleRdpAccountant`."""

  _mechanism_name = RDP_MECHANISM
  _library_accountant_class = ShuffleRdpAccountant


class DistributedCheckinAccountant(ShuffleCheckinAccountant):
  """Opacus accountant for distributed check-in with secure aggregation.

  Opacus' ``noise_multiplier`` σ keeps its meaning: the aggregate noise
  multiplier at the expected cohort q·n. Each of the n users checks in with
  probability q, clips its gradient to C and adds N(0, σ²C²/(q·n)); secure
  aggregation reveals the sum and the count. Every step is one
  `DistributedCheckInEvent(n, q, σ/√(q·n), participation=participation)`,
  composed in `ShufflePldAccountant` (this class) or `ShuffleRdpAccountant`
  (`DistributedCheckinRdpAccountant`); ε is certified under replace-one
  adjacency. `participation` says what the server sees besides the sum and
  the count: ``'revealed'`` (default: who took part, as with standard secure
  aggregation such as Flower's SecAgg+; D30, exact) or ``'hidden'`` (an
  anonymous check-in channel the deployment must provide; D17, LIEW-THM4).
  Set it at construction, as ``accountant.participation``, or through
  `ShufflePrivacyEngine(participation=...)`. The population n is set as for
  `ShuffleCheckinAccountant`, and the per-participant noise depends on it,
  so the optimizer reads it from here (`participant_noise_scale`) and the
  step hook checks they agree.
  """

  _mechanism_name = DISTRIBUTED_MECHANISM

  def __init__(self, num_users: Optional[int] = None,
               participation: str = DEFAULT_PARTICIPATION):
    super().__init__(num_users)
    self.participation = _trained_participation(participation)

  def participant_noise_scale(self, sample_rate: float) -> float:
    """1/√(q·n): each participant's share of the aggregate noise σ·C."""
    return _aggregate_to_participant(self._population(None), sample_rate)

  def _event(self, num_users: int, sample_rate: float,
             noise_multiplier: float, participation: Optional[str] = None):
    return DistributedCheckInEvent(
        num_users=num_users, checkin_rate=sample_rate,
        noise_multiplier=noise_multiplier * _aggregate_to_participant(
            num_users, sample_rate),
        participation=_trained_participation(
            participation or self.participation))

  def _first_step_warning(self, sample_rate: float) -> Optional[str]:
    del sample_rate
    return None

  def _extra_state(self) -> dict:
    return {**super()._extra_state(), 'participation': self.participation}

  def _load_extra_state(self, state_dict) -> None:
    # Checkpoints from before the choice existed load as the default.
    participation = _trained_participation(
        state_dict.get('participation', DEFAULT_PARTICIPATION))
    super()._load_extra_state(state_dict)
    self.participation = participation


class DistributedCheckinRdpAccountant(DistributedCheckinAccountant):
  """`DistributedCheckinAccountant` composing in `ShuffleRdpAccountant`."""

  _mechanism_name = DISTRIBUTED_RDP_MECHANISM
  _library_accountant_class = ShuffleRdpAccountant


def _trained_participation(participation):
  """A `participation` this adapter trains: 'revealed' or 'hidden'."""
  if check_participation(participation) == 'hidden_count':
    raise ValueError(
        "participation='hidden_count' is not trained by this adapter: its "
        'optimizer adds the noise shares of the k participants, not of all n '
        "clients; use 'revealed' or 'hidden', and account such a deployment "
        "with DistributedCheckInEvent(..., participation='hidden_count').")
  return participation


def _aggregate_to_participant(num_users: int, sample_rate: float) -> float:
  """1/√(q·n): σ·C at the expected cohort q·n is a sum of N(0, σ²C²/(q·n))."""
  return 1.0 / math.sqrt(num_users * sample_rate)


def _check_noise(noise_multiplier, max_grad_norm) -> None:
  """σ > 0 and C > 0 (per-layer clipping passes a list of norms)."""
  _validation.check_real('noise_multiplier', noise_multiplier, 0.0,
                         min_inclusive=False)
  for norm in (max_grad_norm if isinstance(max_grad_norm, (list, tuple))
               else [max_grad_norm]):
    _validation.check_real('max_grad_norm', norm, 0.0, min_inclusive=False)


class LocalNoiseMixin:
  """Turns a DPOptimizer into the sum of per-participant Gaussian noises.

  Counts the participants k while clipping (so the count also covers every
  physical batch of a `BatchMemoryManager` step) and adds noise of standard
  deviation √k·s·σ·C to the clipped sum: the law of k clients each adding
  N(0, s²σ²C²), where s = `participant_noise_scale` is 1 in the shuffle
  model (reports go through the shuffler) and 1/√(q·n) for distributed
  check-in (secure aggregation reveals only the sum, simulated here by the
  sum itself). An empty batch gets no noise. The realized k is kept in
  `last_participants` for logging; it never reaches ε.
  """

  _participants = 0
  last_participants: Optional[int] = None
  participant_noise_scale = 1.0

  def clip_and_accumulate(self):
    self._participants += len(self.grad_samples[0])
    super().clip_and_accumulate()

  def add_noise(self):
    # Before torch sees it: a negative or NaN σ would fail there cryptically.
    _check_noise(self.noise_multiplier, self.max_grad_norm)
    # The parent draws noise of std noise_multiplier * max_grad_norm through
    # _generate_noise (generator, secure mode); scale σ for this call only.
    local_noise_multiplier = self.noise_multiplier
    self.noise_multiplier = (local_noise_multiplier *
                             self.participant_noise_scale *
                             math.sqrt(self._participants))
    try:
      super().add_noise()
    finally:
      self.noise_multiplier = local_noise_multiplier
    self.last_participants = self._participants
    self._participants = 0

  def zero_grad(self, set_to_none: bool = False):
    if not self._is_last_step_skipped:
      self._participants = 0
    super().zero_grad(set_to_none)


class LocalNoiseDPOptimizer(LocalNoiseMixin, DPOptimizer):
  """`DPOptimizer` (flat clipping) with the shuffle model's local noise."""


class LocalNoiseDPPerLayerOptimizer(LocalNoiseMixin, DPPerLayerOptimizer):
  """`DPPerLayerOptimizer` with local noise; C is the L2 norm of the layers'."""


_LOCAL_NOISE_CLASSES = {
    DPOptimizer: LocalNoiseDPOptimizer,
    DPPerLayerOptimizer: LocalNoiseDPPerLayerOptimizer,
}


def install_local_noise(optimizer: DPOptimizer,
                        participant_noise_scale: float = 1.0) -> DPOptimizer:
  """Upgrades a stock Opacus optimizer in place to its local-noise class.

  Each participant then adds N(0, (s·σ·C)²), s = `participant_noise_scale`
  (1 for the shuffle model, 1/√(q·n) for distributed check-in).
  Only the exact classes `DPOptimizer` and `DPPerLayerOptimizer` qualify:
  distributed optimizers add noise on one rank, ghost clipping has no
  per-sample gradients to count, and adaptive clipping changes the noise.
  """
  participant_noise_scale = _validation.check_real(
      'participant_noise_scale', participant_noise_scale, 0.0,
      min_inclusive=False)
  if not isinstance(optimizer, LocalNoiseMixin):
    local_class = _LOCAL_NOISE_CLASSES.get(type(optimizer))
    if local_class is None:
      raise ValueError(
          'per-participant noise cannot be trained with '
          f'{type(optimizer).__name__}: it needs one process, flat or '
          'per-layer clipping and per-sample gradients '
          '(grad_sample_mode="hooks"); distributed training, ghost clipping '
          'and adaptive clipping are not supported.')
    # Same instance, subclass that only overrides methods: no state is lost.
    optimizer.__class__ = local_class
  optimizer.participant_noise_scale = participant_noise_scale
  return optimizer


def _upgrade_stock_optimizer(optimizer: DPOptimizer,
                             participant_noise_scale: float) -> None:
  """First step of the stock engine: upgrade, then redraw this step's noise.

  The stock optimizer has added central N(0, σ²C²) and scaled the gradient,
  but the hook runs before the update is applied: that noise is discarded
  (never released), and the upgraded class adds this step's per-participant
  noise to the clipped sum the optimizer kept. Later steps count k while
  clipping.
  """
  if optimizer._is_last_step_skipped:  # pylint: disable=protected-access
    raise ValueError(
        'BatchMemoryManager (or signal_skip_step) split this step into '
        'physical batches, so its participants cannot be counted from the '
        f'stock PrivacyEngine\'s optimizer; {_FIX}.')
  _check_noise(optimizer.noise_multiplier, optimizer.max_grad_norm)
  install_local_noise(optimizer, participant_noise_scale)
  optimizer._participants = len(optimizer.grad_samples[0])  # pylint: disable=protected-access
  for parameter in optimizer.params:
    # Opacus marks a clipped sum once noised; this redraws the same step.
    del parameter.summed_grad._processed  # pylint: disable=protected-access
  optimizer.add_noise()
  optimizer.scale_grad()


class ShufflePrivacyEngine(PrivacyEngine):
  """`PrivacyEngine` for DP-SGD on check-ins with per-participant noise.

  Differences from the stock engine, all in service of training exactly the
  mechanism the accountant certifies:

  * the accountant defaults to ``"shuffle_checkin"`` and must be one of the
    check-in accountants (``"distributed_checkin"`` for secure aggregation;
    ``"random_allocation"`` / ``"shuffled_batches"`` train central DP-SGD
    on their sampler, see `opacus_samplers`);
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
      self.accountant.participation = _trained_participation(participation)
    if opacus_samplers.is_sampler_accountant(self.accountant):
      return  # central DP-SGD on that sampler (opacus_samplers)
    if not isinstance(self.accountant, ShuffleCheckinAccountant):
      raise ValueError(
          'ShufflePrivacyEngine needs a check-in accountant '
          f'({MECHANISM!r}, {RDP_MECHANISM!r}, {DISTRIBUTED_MECHANISM!r} or '
          f'{DISTRIBUTED_RDP_MECHANISM!r}); got accountant={accountant!r}.')

  def _prepare_data_loader(self, data_loader, *, poisson_sampling: bool,
                           distributed: bool, **kwargs):
    if opacus_samplers.is_sampler_accountant(self.accountant):
      return super()._prepare_data_loader(
          data_loader, poisson_sampling=poisson_sampling,
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
    dp_data_loader = super()._prepare_data_loader(
        data_loader, poisson_sampling=poisson_sampling,
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
    _check_noise(kwargs.get('noise_multiplier'), kwargs.get('max_grad_norm'))
    if opacus_samplers.is_sampler_accountant(self.accountant):
      return super()._prepare_optimizer(**kwargs)
    return install_local_noise(
        super()._prepare_optimizer(**kwargs),
        self.accountant.participant_noise_scale(self._sample_rate))

  def make_private_with_epsilon(self, *, data_loader, **kwargs):
    if not opacus_samplers.is_sampler_accountant(self.accountant):
      kwargs.setdefault('num_users', len(data_loader.dataset))
    if isinstance(self.accountant, DistributedCheckinAccountant):
      # The calibration's fresh accountant must see this engine's model.
      kwargs['participation'] = self.accountant.participation
    return super().make_private_with_epsilon(data_loader=data_loader,
                                             **kwargs)


# Packages between the user's `optimizer.step()` and the step hook.
_LIBRARY_FOLDERS = tuple(os.path.dirname(module.__file__) + os.sep
                         for module in (opacus, torch))
_ADAPTERS_FOLDER = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_stacklevel() -> int:
  """The `warnings.warn` stacklevel, from its caller, of the user's line.

  The step hook runs inside Opacus' (and torch's) `optimizer.step()`, a
  depth that varies with their versions: the first frame outside them and
  this adapter is where the warning belongs.
  """
  frame, level = sys._getframe(1), 1  # pylint: disable=protected-access
  while frame.f_back is not None and (
      frame.f_code.co_filename.startswith(_LIBRARY_FOLDERS)
      or os.path.abspath(frame.f_code.co_filename).startswith(
          _ADAPTERS_FOLDER)):
    frame, level = frame.f_back, level + 1
  return level


def register_accountants() -> None:
  """Registers our mechanisms with Opacus; safe to call any number of times.

  Called when this module is imported. It adds our names to Opacus' registry
  and installs the sampler contract check for our accountants
  (`opacus_samplers.install_contract_check`); Opacus' entries are untouched.

  A different class that someone else registered under one of our names is
  left in place, with a warning.
  """
  opacus_samplers.install_contract_check()
  for name, accountant_class in (
      (MECHANISM, ShuffleCheckinAccountant),
      (RDP_MECHANISM, ShuffleCheckinRdpAccountant),
      (DISTRIBUTED_MECHANISM, DistributedCheckinAccountant),
      (DISTRIBUTED_RDP_MECHANISM, DistributedCheckinRdpAccountant),
      *opacus_samplers.ACCOUNTANTS):
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
            'shuffle-accountants leaves it in place.')


register_accountants()
