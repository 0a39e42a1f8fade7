"""Opacus optimizers that add the sum of per-participant Gaussian noises.

`ShufflePrivacyEngine` builds them directly (`local_noise_optimizer`). With
the stock `PrivacyEngine`, Opacus hands a check-in accountant only the
optimizer the user already holds, at its first step; the step hook then
gives that object its local-noise class (`upgrade_stock_optimizer`), a
subclass that only overrides methods, so no state is lost. Replacing the
object instead is impossible: the user's training loop keeps calling it.
"""

import math
from typing import Optional

from opacus.optimizers import DPOptimizer
from opacus.optimizers import DPPerLayerOptimizer

from shuffle_accountants import _validation

FIX = ('use shuffle_accountants.adapters.opacus.ShufflePrivacyEngine (one '
       'process, Poisson sampling, flat or per-layer clipping, '
       'grad_sample_mode="hooks")')


def check_noise(noise_multiplier, max_grad_norm) -> None:
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
  _is_last_step_skipped: bool  # DPOptimizer's

  def clip_and_accumulate(self):
    self._participants += len(self.grad_samples[0])
    super().clip_and_accumulate()

  def add_noise(self):
    # Before torch sees it: a negative or NaN σ would fail there cryptically.
    check_noise(self.noise_multiplier, self.max_grad_norm)
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
    super().zero_grad(set_to_none)  # type: ignore[misc]  # DPOptimizer's


class LocalNoiseDPOptimizer(LocalNoiseMixin, DPOptimizer):
  """`DPOptimizer` (flat clipping) with the shuffle model's local noise."""


class LocalNoiseDPPerLayerOptimizer(LocalNoiseMixin, DPPerLayerOptimizer):
  """`DPPerLayerOptimizer` with local noise; C is the L2 norm of the layers'."""


_LOCAL_NOISE_CLASSES = {
    DPOptimizer: LocalNoiseDPOptimizer,
    DPPerLayerOptimizer: LocalNoiseDPPerLayerOptimizer,
}


def _local_noise_class(optimizer: DPOptimizer) -> type:
  """The local-noise twin of a stock optimizer's exact class.

  Only `DPOptimizer` and `DPPerLayerOptimizer` qualify: distributed
  optimizers add noise on one rank, ghost clipping has no per-sample
  gradients to count, and adaptive clipping changes the noise.
  """
  local_class = _LOCAL_NOISE_CLASSES.get(type(optimizer))
  if local_class is None:
    raise ValueError(
        'per-participant noise cannot be trained with '
        f'{type(optimizer).__name__}: it needs one process, flat or '
        'per-layer clipping and per-sample gradients '
        '(grad_sample_mode="hooks"); distributed training, ghost clipping '
        'and adaptive clipping are not supported.')
  return local_class


def _checked_scale(participant_noise_scale: float) -> float:
  return _validation.check_real('participant_noise_scale',
                                participant_noise_scale, 0.0,
                                min_inclusive=False)


def local_noise_optimizer(stock: DPOptimizer, max_grad_norm,
                          participant_noise_scale: float) -> DPOptimizer:
  """A new local-noise optimizer built as Opacus built `stock`.

  Opacus chose the class, the noise generator and the wrapped optimizer;
  the twin class is constructed on the same arguments (`max_grad_norm` as
  passed to `make_private`: per-layer clipping keeps the list), and
  `stock`, which drew nothing yet, is dropped.
  """
  participant_noise_scale = _checked_scale(participant_noise_scale)
  optimizer = _local_noise_class(stock)(
      stock.original_optimizer, noise_multiplier=stock.noise_multiplier,
      max_grad_norm=max_grad_norm,
      expected_batch_size=stock.expected_batch_size,
      loss_reduction=stock.loss_reduction, generator=stock.generator,
      secure_mode=stock.secure_mode)
  optimizer.participant_noise_scale = participant_noise_scale
  return optimizer


def install_local_noise(optimizer: DPOptimizer,
                        participant_noise_scale: float = 1.0) -> DPOptimizer:
  """Upgrades a stock Opacus optimizer in place to its local-noise class.

  Each participant then adds N(0, (s·σ·C)²), s = `participant_noise_scale`
  (1 for the shuffle model, 1/√(q·n) for distributed check-in). Only the
  exact classes `DPOptimizer` and `DPPerLayerOptimizer` qualify
  (`_local_noise_class` says why).
  """
  participant_noise_scale = _checked_scale(participant_noise_scale)
  if not isinstance(optimizer, LocalNoiseMixin):
    # Same instance, subclass that only overrides methods: no state is lost.
    optimizer.__class__ = _local_noise_class(optimizer)
  optimizer.participant_noise_scale = participant_noise_scale
  return optimizer


def upgrade_stock_optimizer(optimizer: DPOptimizer,
                            participant_noise_scale: float) -> None:
  """First step of the stock engine: upgrade, then redraw this step's noise.

  The stock optimizer has added central N(0, σ²C²) and scaled the gradient,
  but the hook runs before the update is applied: that noise is discarded
  (never released), and the upgraded class adds this step's per-participant
  noise to the clipped sum the optimizer kept. Later steps count k while
  clipping.
  """
  if optimizer._is_last_step_skipped:
    raise ValueError(
        'BatchMemoryManager (or signal_skip_step) split this step into '
        'physical batches, so its participants cannot be counted from the '
        f'stock PrivacyEngine\'s optimizer; {FIX}.')
  check_noise(optimizer.noise_multiplier, optimizer.max_grad_norm)
  install_local_noise(optimizer, participant_noise_scale)
  optimizer._participants = len(optimizer.grad_samples[0])
  for parameter in optimizer.params:
    # Opacus marks a clipped sum once noised; this redraws the same step.
    del parameter.summed_grad._processed
  optimizer.add_noise()
  optimizer.scale_grad()
