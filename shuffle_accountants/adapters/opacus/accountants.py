"""Opacus accountants of shuffled and distributed check-in (local noise).

* ``"shuffle_checkin"`` / ``"shuffle_checkin_rdp"``: one `CheckInEvent` per
  optimizer step, composed in `ShufflePldAccountant` / `ShuffleRdpAccountant`
  (GAUSS-NO-GAIN, LABEL-MIXTURE, LIEW-THM2);
* ``"distributed_checkin"`` / ``"distributed_checkin_rdp"``: one
  `DistributedCheckInEvent` per step, the participants' noise summed by
  secure aggregation (SECAGG-REVEALED, SECAGG-HIDDEN, LIEW-THM4).

Their step hook also trains what they account: it checks every step and
upgrades the stock engine's optimizer to local noise (`optimizers`).
"""

import math
import os
import sys
from typing import Optional, Type, Union
import warnings

import opacus
from opacus.optimizers import DPOptimizer
import torch

from shuffle_accountants import _validation
from shuffle_accountants.adapters.opacus.base import OpacusAccountant
from shuffle_accountants.adapters.opacus.optimizers import LocalNoiseMixin
from shuffle_accountants.adapters.opacus.optimizers import (
  upgrade_stock_optimizer,
)
from shuffle_accountants.events import CheckInEvent
from shuffle_accountants.events import DistributedCheckInEvent
from shuffle_accountants.events import check_participation
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.rdp.accountant import ShuffleRdpAccountant

MECHANISM = 'shuffle_checkin'
RDP_MECHANISM = 'shuffle_checkin_rdp'
DISTRIBUTED_MECHANISM = 'distributed_checkin'
DISTRIBUTED_RDP_MECHANISM = 'distributed_checkin_rdp'
DEFAULT_PARTICIPATION = 'revealed'


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


class ShuffleCheckinAccountant(OpacusAccountant):
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
  _library_accountant_class: Type[
      Union[ShufflePldAccountant, ShuffleRdpAccountant]] = ShufflePldAccountant

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
    assert self.num_users is not None  # set by _check_population
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
      upgrade_stock_optimizer(optimizer, scale)
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
  aggregation such as Flower's SecAgg+; SECAGG-REVEALED, exact) or ``'hidden'``
  (an anonymous check-in channel the deployment must provide; SECAGG-HIDDEN,
  LIEW-THM4). Set it at construction, as ``accountant.participation``, or
  through `ShufflePrivacyEngine(participation=...)`. The population n is set as
  for `ShuffleCheckinAccountant`, and the per-participant noise depends on it,
  so the optimizer reads it from here (`participant_noise_scale`) and the
  step hook checks they agree.
  """

  _mechanism_name = DISTRIBUTED_MECHANISM

  def __init__(self, num_users: Optional[int] = None,
               participation: str = DEFAULT_PARTICIPATION):
    super().__init__(num_users)
    self.participation = trained_participation(participation)

  def participant_noise_scale(self, sample_rate: float) -> float:
    """1/√(q·n): each participant's share of the aggregate noise σ·C."""
    return _aggregate_to_participant(self._population(None), sample_rate)

  def _event(self, num_users: int, sample_rate: float,
             noise_multiplier: float, participation: Optional[str] = None):
    return DistributedCheckInEvent(
        num_users=num_users, checkin_rate=sample_rate,
        noise_multiplier=noise_multiplier * _aggregate_to_participant(
            num_users, sample_rate),
        participation=trained_participation(
            participation or self.participation))

  def _first_step_warning(self, sample_rate: float) -> Optional[str]:
    del sample_rate
    return None

  def _extra_state(self) -> dict:
    return {**super()._extra_state(), 'participation': self.participation}

  def _load_extra_state(self, state_dict) -> None:
    # Checkpoints from before the choice existed load as the default.
    participation = trained_participation(
        state_dict.get('participation', DEFAULT_PARTICIPATION))
    super()._load_extra_state(state_dict)
    self.participation = participation


class DistributedCheckinRdpAccountant(DistributedCheckinAccountant):
  """`DistributedCheckinAccountant` composing in `ShuffleRdpAccountant`."""

  _mechanism_name = DISTRIBUTED_RDP_MECHANISM
  _library_accountant_class = ShuffleRdpAccountant


def trained_participation(participation):
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


# Packages between the user's `optimizer.step()` and the step hook.
# Typeshed's ModuleType.__file__ is Optional; a package's is a str.
_LIBRARY_FOLDERS = tuple(os.path.dirname(module.__file__) + os.sep  # type: ignore[arg-type]
                         for module in (opacus, torch))
_ADAPTERS_FOLDER = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_stacklevel() -> int:
  """The `warnings.warn` stacklevel, from its caller, of the user's line.

  The step hook runs inside Opacus' (and torch's) `optimizer.step()`, a
  depth that varies with their versions: the first frame outside them and
  this adapter is where the warning belongs.
  """
  frame, level = sys._getframe(1), 1
  while frame.f_back is not None and (
      frame.f_code.co_filename.startswith(_LIBRARY_FOLDERS)
      or os.path.abspath(frame.f_code.co_filename).startswith(
          _ADAPTERS_FOLDER)):
    frame, level = frame.f_back, level + 1
  return level
