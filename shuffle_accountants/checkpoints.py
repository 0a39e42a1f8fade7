"""Saves and restores accountants exactly, as versioned JSON-ready state.

Training runs crash and resume. An accountant restored from its state holds
the same ledger and configuration and returns the same epsilon, bit for bit:
the state records every `compose(event, count)` call in order (consecutive
identical calls run-length encoded) and the constructor's settings, and
restoring empties the accountant in place and replays those calls, so every
floating-point operation happens again in the same order.

Events are written generically from their attrs fields, so a field added to
an event class later round-trips without changes here. A state of the
current version must hold every field (a missing one was deleted); adding a
field to an event class bumps STATE_VERSION, and states of older versions
load with the field's default. Every event class of this package and of
`dp_accounting.dp_event` is known by its class name; `register_event_class`
adds others. Accountant classes register themselves by subclassing the
accountants' base (their `fresh()` siblings need no code of this module),
and this module imports both routes, so `load_accountant` knows every
accountant of the package by name. Values are JSON-native (None, bool, int,
float, str, list) or tagged objects: {"type": name, "fields": {...}} for a
nested event or randomizer, {"tuple": [...]} for a tuple, {"float": "inf"}
or {"float": "-inf"} for an infinite float. NaN is refused: no valid event
holds it. Floats are written with `repr`, which Python reads back bit-exact.

The state is plain data, never pickle, so loading it runs no code beyond
the constructors of the known event classes (which validate their fields).

Every state (`state_dict()`, a ledger file of `save_accountant`) carries
a SHA-256 of its canonical JSON, or an HMAC-SHA256 with a key, which
`load_state_dict` and `load_accountant` check (`seal_state` /
`verified_state`, which the Opacus and Flower adapters' states use too); a
state without one loads only with `allow_unverified=True`; in a
state of the current version every field must be present; loading stops at
the limits below before any work grows with them; writers hold a lock and
refuse to drop rounds another writer saved (docs/checkpoints.md).

>>> state = accountant.state_dict()            # JSON-compatible dict
>>> restored = ShufflePldAccountant(); restored.load_state_dict(state)
>>> save_accountant(accountant, 'ledger.json')  # atomic, hashed, locked
>>> load_accountant('ledger.json').get_epsilon(1e-6)
"""

import contextlib
import hashlib
import json
import os
import tempfile
import time
from typing import Iterator, Optional

try:
  import fcntl
except ImportError:  # not POSIX: writers are not locked (documented)
  fcntl = None  # type: ignore[assignment]

from shuffle_accountants import _checkpointable
from shuffle_accountants._checkpointable import INTEGRITY_KEY
from shuffle_accountants._checkpointable import MAX_COMPOSE_CALLS
from shuffle_accountants._checkpointable import MAX_INTEGER
from shuffle_accountants._checkpointable import MAX_NESTING
from shuffle_accountants._checkpointable import READABLE_VERSIONS
from shuffle_accountants._checkpointable import STATE_VERSION
from shuffle_accountants._checkpointable import Checkpointable
from shuffle_accountants._checkpointable import LedgerFileError
from shuffle_accountants._checkpointable import LedgerKeyError
from shuffle_accountants._checkpointable import LedgerLimitError
from shuffle_accountants._checkpointable import UnverifiedLedgerWarning
from shuffle_accountants._checkpointable import event_from_dict
from shuffle_accountants._checkpointable import event_to_dict
from shuffle_accountants._checkpointable import register_event_class
from shuffle_accountants._checkpointable import seal_state
from shuffle_accountants._checkpointable import verified_state
from shuffle_accountants.core import _ledger
from shuffle_accountants.pld import accountant as pld_accountant
from shuffle_accountants.rdp import accountant as rdp_accountant

# The package's accountants, imported here (above both routes) so that
# every one is known by name to `load_accountant`, whatever the caller
# imported (they register themselves: `_ledger.accountant_class`).
_ACCOUNTANTS = (pld_accountant.ShufflePldAccountant,
                rdp_accountant.ShuffleRdpAccountant)

# Limits of a ledger file (the limits of a state: MAX_NESTING,
# MAX_COMPOSE_CALLS, MAX_INTEGER), checked before it is read.
MAX_FILE_BYTES = 256 * 2**20
# How long a writer waits for another writer's lock.
LOCK_TIMEOUT_SECONDS = 10.0


class LedgerConflictError(LedgerFileError):
  """Saving would replace rounds another writer saved, or another writer
  holds the file's lock."""


def _raw_digest(data: bytes) -> str:
  return hashlib.sha256(data).hexdigest()


def _read_limited(path: str) -> Optional[bytes]:
  """The bytes of the file at `path` (None if there is none), refused
  above MAX_FILE_BYTES before they are read."""
  try:
    file = open(path, 'rb')
  except FileNotFoundError:
    return None
  with file:
    size = os.fstat(file.fileno()).st_size
    data = file.read(MAX_FILE_BYTES + 1)
  if max(size, len(data)) > MAX_FILE_BYTES:
    raise LedgerLimitError(
        f'{path} holds {max(size, len(data))} bytes, more than '
        f'MAX_FILE_BYTES = {MAX_FILE_BYTES} (256 MiB: over a million '
        'distinct compose calls); it is not a ledger this library wrote.')
  return data


@contextlib.contextmanager
def _locked(target: str) -> Iterator[None]:
  """Holds an exclusive advisory lock on `target`'s sidecar `.lock` file.

  A sidecar, not the target itself: `os.replace` gives the target a new
  inode, which a lock on the old one would not cover. The lock file stays.
  """
  if fcntl is None:
    yield
    return
  handle = os.open(target + '.lock', os.O_RDWR | os.O_CREAT, 0o600)
  try:
    deadline = time.monotonic() + LOCK_TIMEOUT_SECONDS
    while True:
      try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        break
      except BlockingIOError:
        if time.monotonic() > deadline:
          raise LedgerConflictError(
              f'{target}.lock is held by another writer for more than '
              f'LOCK_TIMEOUT_SECONDS = {LOCK_TIMEOUT_SECONDS}; is another '
              'process saving this ledger? Retry when it is done.') from None
        time.sleep(0.005)
    yield
  finally:
    os.close(handle)  # releases the lock


def _remember(accountant: Checkpointable, target: str, data: bytes) -> None:
  files = vars(accountant).setdefault(_checkpointable.FILES_ATTRIBUTE, {})
  files[target] = _raw_digest(data)


def save_accountant(accountant: Checkpointable,
                    path: 'os.PathLike[str] | str', *,
                    key: Optional[bytes] = None,
                    overwrite: bool = False) -> None:
  """Writes `accountant.state_dict()` as a ledger file at `path`.

  The file holds the state and its SHA-256 (with `key`: its HMAC-SHA256),
  which `load_accountant` checks. Writing is atomic: the JSON goes to a
  temporary file in the target's directory, is flushed to disk (fsync), and
  replaces the target in one step (`os.replace`), so a crash leaves either
  the old file or the new one, never half a ledger. A symbolic link is
  followed: its target is replaced and the link stays. Writers take an
  advisory lock (`fcntl.flock`) on `<target>.lock`, and a save refuses
  (`LedgerConflictError`) to replace a file this accountant neither loaded
  nor saved as it is now (another writer's rounds would be lost) unless
  `overwrite` is true. The file is readable by its owner only.

  Raises:
    LedgerConflictError: another writer changed the file or holds the lock.
    LedgerLimitError: the state exceeds a load-time limit.
  """
  if not isinstance(accountant, Checkpointable):
    raise TypeError(
        'accountant must be a '
        + ' or '.join(cls.__name__ for cls in _ACCOUNTANTS)
        + f'; got {type(accountant).__name__}.')
  key = _checkpointable.check_key(key)
  # Compact (about 190 bytes a distinct compose call).
  text = json.dumps(seal_state(accountant.state_dict(), key),
                    allow_nan=False, separators=(',', ':'))
  data = text.encode('utf-8')
  if len(data) > MAX_FILE_BYTES:
    raise LedgerLimitError(
        f'the ledger would take {len(data)} bytes, more than MAX_FILE_BYTES '
        f'= {MAX_FILE_BYTES}; compose rounds in batches (compose(event, '
        'count=k)) to record fewer distinct calls.')
  target = os.path.realpath(os.fspath(path))
  directory = os.path.dirname(target)
  with _locked(target):
    current = _read_limited(target)
    known = vars(accountant).get(_checkpointable.FILES_ATTRIBUTE,
                                 {}).get(target)
    if current is not None and not overwrite and _raw_digest(
        current) != known:
      raise LedgerConflictError(
          f'{os.fspath(path)} holds a ledger that this accountant did not '
          'load or save (another writer saved rounds since, or it is '
          "another run's): saving would drop its rounds. Load it again "
          '(load_accountant), compose your rounds onto it and save; or pass '
          'overwrite=True to replace it on purpose.')
    handle, temporary = tempfile.mkstemp(
        dir=directory, prefix=f'.{os.path.basename(target)}.', suffix='.tmp')
    try:
      with os.fdopen(handle, 'wb') as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
      os.replace(temporary, target)
    except BaseException:
      os.unlink(temporary)
      raise
    if hasattr(os, 'O_DIRECTORY'):  # make the rename itself durable
      directory_handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
      try:
        os.fsync(directory_handle)
      finally:
        os.close(directory_handle)
  _remember(accountant, target, data)


def load_accountant(path: 'os.PathLike[str] | str', *,
                    key: Optional[bytes] = None,
                    allow_unverified: bool = False):
  """The accountant `save_accountant` wrote to `path`, restored exactly.

  The file's SHA-256 (or, with `key`, its HMAC-SHA256) is checked before
  anything else is read from it. A file without a digest (version 1,
  written before digests, or the digest removed) is refused unless
  `allow_unverified=True`; it then loads with an `UnverifiedLedgerWarning`.

  Raises:
    LedgerFileError: the file was damaged or edited (digest or a missing
      field), has no digest (without `allow_unverified`), or is not a
      ledger file.
    LedgerKeyError: `key` does not fit the file.
    LedgerLimitError: the file exceeds a load-time limit (MAX_* of this
      module), checked before the work that grows with it.
    FileNotFoundError: there is no file at `path`.
  """
  key = _checkpointable.check_key(key)
  name = os.fspath(path)
  target = os.path.realpath(name)
  data = _read_limited(target)
  if data is None:
    raise FileNotFoundError(f'no ledger file at {name}.')
  try:
    state = json.loads(data.decode('utf-8'), parse_constant=_refuse_constant)
  except RecursionError:
    raise LedgerLimitError(
        f'{name} nests JSON deeper than Python can read (MAX_NESTING = '
        f'{MAX_NESTING} levels within an event); it is not a ledger this '
        'library wrote.') from None
  except ValueError as error:  # also UnicodeDecodeError, JSONDecodeError
    raise LedgerFileError(f'{name} is not JSON written by save_accountant '
                          f'(damaged or not a ledger file): {error}') from error
  version = _checkpointable.check_header(state,
                                         _checkpointable.ACCOUNTANT_FORMAT)
  state = verified_state(state, key=key, allow_unverified=allow_unverified,
                         source=name)
  cls = _ledger.accountant_class(state.get('accountant'))
  if cls is None or not issubclass(cls, Checkpointable):
    raise ValueError(f"state['accountant'] = {state.get('accountant')!r} is "
                     f'not one of {_ledger.accountant_names()}.')
  accountant = cls._from_verified(state, version)
  _remember(accountant, target, data)
  return accountant


def _refuse_constant(name: str):
  raise ValueError(f'{name} is not valid in a saved state (infinite floats '
                   'are written {"float": "inf"}; NaN is never valid).')


__all__ = ['STATE_VERSION', 'READABLE_VERSIONS', 'MAX_FILE_BYTES',
           'MAX_NESTING', 'MAX_COMPOSE_CALLS', 'MAX_INTEGER',
           'LOCK_TIMEOUT_SECONDS', 'LedgerFileError', 'LedgerLimitError',
           'LedgerKeyError', 'LedgerConflictError', 'UnverifiedLedgerWarning',
           'Checkpointable', 'register_event_class', 'event_to_dict',
           'event_from_dict', 'save_accountant', 'load_accountant',
           'INTEGRITY_KEY', 'seal_state', 'verified_state']
