"""The base of every Opacus accountant of this package: history, hook, state.

`OpacusAccountant` holds what the check-in accountants (`accountants`) and
the sampler accountants (`sampler_accountants`) share.
"""

import math

from opacus.accountants import IAccountant

from shuffle_accountants import _validation
from shuffle_accountants import checkpoints

# The layout of Opacus' state below (its own, not the ledger file's of
# `shuffle_accountants.checkpoints`). Version 2: sealed with the ledger
# files' digest (`checkpoints.seal_state`).
STATE_VERSION = 2
READABLE_STATE_VERSIONS = (1, 2)


def record_step(history: list, noise_multiplier: float,
                sample_rate: float) -> None:
  """Appends one step to Opacus' run-length history (validated)."""
  noise_multiplier = _validation.check_real('noise_multiplier',
                                            noise_multiplier, 0.0)
  sample_rate = _validation.check_real('sample_rate', sample_rate, 0.0, 1.0,
                                       min_inclusive=False)
  if history and history[-1][:2] == (noise_multiplier, sample_rate):
    history[-1] = (noise_multiplier, sample_rate, history[-1][2] + 1)
  else:
    history.append((noise_multiplier, sample_rate, 1))


def _restored_history(entries) -> list:
  """Opacus' history from a saved state, validated as `record_step` does."""
  if not isinstance(entries, (list, tuple)):
    raise ValueError(f"state_dict['history'] must be a list of "
                     f'(noise_multiplier, sample_rate, num_steps); got '
                     f'{entries!r}.')
  history = []
  for entry in entries:
    if not isinstance(entry, (list, tuple)) or len(entry) != 3:
      raise ValueError(f"state_dict['history'] entry {entry!r} is not "
                       '(noise_multiplier, sample_rate, num_steps).')
    history.append((
        _validation.check_real('noise_multiplier', entry[0], 0.0),
        _validation.check_real('sample_rate', entry[1], 0.0, 1.0,
                               min_inclusive=False),
        _validation.check_integer('num_steps', entry[2], 0)))
  return history


class OpacusAccountant(IAccountant):
  """Base of this package's Opacus accountants (check-in and samplers).

  Holds what they share: Opacus' run-length `history` of (noise_multiplier,
  sample_rate, num_steps), filled by the step hook; `get_epsilon`'s checks
  (0 before any step, inf after a step without noise); the step hook, which
  validates the sample rate and calls `_check_step` before recording; and a
  versioned, validated `state_dict` / `load_state_dict`, which Opacus'
  `PrivacyEngine.save_checkpoint` / `load_checkpoint` store. Besides Opacus'
  'history' and 'mechanism' the state holds 'state_version' and what
  `_extra_state` adds, and 'integrity': the digest of the ledger files
  (`shuffle_accountants.checkpoints.seal_state`: SHA-256 of its canonical
  JSON, HMAC-SHA256 with a key), which `load_state_dict` checks, so an
  edited step count, noise, sample rate or participation is refused, not
  loaded at a lower epsilon. Everything epsilon depends on is in it, so a
  resumed run reports the epsilon of the uninterrupted one. A state
  without a digest (version 1, or without 'state_version', which read as
  version 1) loads only with ``allow_unverified=True``. The state is plain
  data (Opacus' ``save_checkpoint`` passes it through ``torch.save``).

  Only accountants of this class get the data loader check at
  `make_private` (`engine.prepare_data_loader`, which calls `attach`); Opacus'
  own are untouched. `get_optimizer_hook_fn`, which `make_private` calls
  next, refuses an accountant whose data loader was not checked.
  Subclasses set `_mechanism_name` and define `_certified_epsilon`.
  """

  _mechanism_name: str

  def __init__(self):
    self.history = []
    self._data_loader_checked = False

  @classmethod
  def mechanism(cls) -> str:
    return cls._mechanism_name

  def step(self, *, noise_multiplier: float, sample_rate: float):
    record_step(self.history, noise_multiplier, sample_rate)

  def __len__(self) -> int:
    return sum(steps for _, _, steps in self.history)

  def get_epsilon(self, delta: float, **options) -> float:
    """Certified epsilon (upper bound) after the steps so far, at `delta`."""
    delta = _validation.check_real('delta', delta, 0.0, 1.0,
                                   min_inclusive=False, max_inclusive=False)
    history = [entry for entry in self.history if entry[2] > 0]
    if not history:
      return 0.0
    if any(noise_multiplier == 0 for noise_multiplier, _, _ in history):
      return math.inf
    return self._certified_epsilon(delta, history, **options)

  def _certified_epsilon(self, delta: float, history: list,
                         **options) -> float:
    """`get_epsilon` on a non-empty history of noisy steps."""
    raise NotImplementedError

  def get_optimizer_hook_fn(self, sample_rate: float):
    """Step hook: `_check_step`, then records (σ, q) for the step."""
    sample_rate = _validation.check_real('sample_rate', sample_rate, 0.0, 1.0,
                                         min_inclusive=False)
    if not self._data_loader_checked:
      raise ValueError(
          f'make_private did not check the data loader against the '
          f'{self.mechanism()!r} accountant, so it may train another sampler '
          'than the one accounted. Use shuffle_accountants.adapters.opacus.'
          'ShufflePrivacyEngine, or call shuffle_accountants.adapters.opacus.'
          'install_data_loader_check() once before make_private with the '
          'stock PrivacyEngine.')

    def hook_fn(optimizer):
      self._check_step(optimizer, sample_rate)
      self.step(noise_multiplier=optimizer.noise_multiplier,
                sample_rate=sample_rate)

    return hook_fn

  def _check_step(self, optimizer, sample_rate: float) -> None:
    """Refuses (or adapts) what this accountant cannot certify."""
    del optimizer, sample_rate

  def attach(self, data_loader, batch_first: bool):
    """Called by make_private after the data loader check: the loader to use."""
    self._data_loader_checked = True
    return self._loader_to_train(data_loader, batch_first)

  def _loader_to_train(self, data_loader, batch_first: bool):
    del batch_first
    return data_loader

  def _extra_state(self) -> dict:
    return {}

  def _load_extra_state(self, state_dict) -> None:
    del state_dict

  def state_dict(self, destination=None, *, key=None):
    """Opacus' state, with 'state_version', the extras and the digest
    ('integrity', with `key` an HMAC-SHA256)."""
    destination = super().state_dict(destination)
    destination['state_version'] = STATE_VERSION
    destination.update(self._extra_state())
    destination.pop(checkpoints.INTEGRITY_KEY, None)
    destination[checkpoints.INTEGRITY_KEY] = checkpoints.seal_state(
        destination, key)[checkpoints.INTEGRITY_KEY]
    return destination

  def load_state_dict(self, state_dict, *, key=None,
                      allow_unverified: bool = False):
    """Restores `state_dict()`, after checking its digest (`key`: the one
    it was sealed with); one without a digest only with
    `allow_unverified=True`."""
    state_dict = checkpoints.verified_state(
        state_dict or {}, key=key, allow_unverified=allow_unverified,
        source="the accountant's state_dict")
    version = state_dict.get('state_version', 1)
    if isinstance(version, bool) or version not in READABLE_STATE_VERSIONS:
      raise ValueError(
          f"state_dict['state_version'] = {version!r} is not supported: this "
          f'shuffle-accountants reads versions {list(READABLE_STATE_VERSIONS)}'
          '; upgrade shuffle-accountants to read a newer checkpoint.')
    previous = self.history
    super().load_state_dict(state_dict)
    try:  # an invalid state leaves the accountant as it was
      history = _restored_history(state_dict['history'])
      self._load_extra_state(state_dict)
    except (TypeError, ValueError):
      self.history = previous
      raise
    self.history = history


# The base's name before it held the history and the step hook.
SavedHistory = OpacusAccountant
