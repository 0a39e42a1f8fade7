"""The accountants' saved state: its format, its digest, the mixin.

`checkpoints`, whose docstring describes the format, is the public face: it
re-exports what is public here and adds the ledger files. This part sits
below the routes, which subclass `Checkpointable`; `checkpoints` sits above
both, so that `load_accountant` knows every accountant class by name.
"""

import hashlib
import hmac
import json
import math
import sys
from typing import (
  Any,
  Dict,
  List,
  Mapping,
  Optional,
  Set,
  Tuple,
)
import warnings

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant

from shuffle_accountants import _cache
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.core import _ledger
from shuffle_accountants.samplers import events as sampler_events

# Bump when the layout changes or an event gains a field; readers refuse
# versions they do not know. Version 2: every field present, files carry
# an integrity digest. Version 3: SumOfReportsEvent's `reference_input`
# and `aggregator_noise` (issue 50).
STATE_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
# The fields each version added, by event class: a state of an older
# version (from 2 on) may lack only these, which load with their defaults
# (version 1 may lack any field).
_FIELDS_ADDED = {3: {'SumOfReportsEvent': ('reference_input',
                                           'aggregator_noise')}}
EVENT_FORMAT = 'shuffle_accountants.event'
ACCOUNTANT_FORMAT = 'shuffle_accountants.accountant'

# Modules whose public attrs classes are known event (and field) types.
_EVENT_MODULES = (dp_event, events, randomizers, sampler_events)
_registered: Dict[str, type] = {}
# The attribute in which an accountant remembers the files it was loaded
# from or saved to (`checkpoints`): {real path: SHA-256 of the file's bytes}.
FILES_ATTRIBUTE = '_ledger_files'

# Limits of what a state may ask of a load, checked before the work that
# grows with them (also when saving, so a file that saves also loads).
# Replaying a compose call takes 15 to 25 microseconds.
MAX_NESTING = 64  # levels of saved values (events, lists, tuples) in an event
MAX_COMPOSE_CALLS = 10**6  # calls replayed: the sum of 'repeat'
MAX_INTEGER = 2**53  # largest magnitude of an integer field


class LedgerFileError(ValueError):
  """A saved ledger cannot be trusted or loaded as it is: it was damaged or
  edited, breaks a limit, needs another key, or another writer changed it.
  The message names the file, the reason and what to do."""


class LedgerLimitError(LedgerFileError):
  """A state exceeds a load-time limit (MAX_* of
  `shuffle_accountants.checkpoints`)."""


class LedgerKeyError(LedgerFileError):
  """A ledger file's HMAC does not match the key given, or the key given
  (or its absence) does not fit how the file was saved."""


class UnverifiedLedgerWarning(UserWarning):
  """A state or ledger file without an integrity digest (e.g. of version 1,
  written before digests) was loaded unverified, as
  `allow_unverified=True` asked."""


def _check_integer(value: int, path: str) -> None:
  if abs(value) > MAX_INTEGER:
    raise LedgerLimitError(
        f'{path} = {value} exceeds MAX_INTEGER = 2**53 in magnitude (the '
        'largest integer a saved state may hold); no valid ledger needs it.')


def _check_nesting(depth: int, path: str) -> None:
  if depth > MAX_NESTING:
    raise LedgerLimitError(
        f'{path} is nested deeper than MAX_NESTING = {MAX_NESTING} levels '
        '(events, lists, tuples); no valid ledger needs it.')


def register_event_class(cls: type) -> type:
  """Makes an attrs event (or field value) class known to the serializer.

  The classes of this package and of `dp_accounting.dp_event` are known
  already. Its name must not clash with another known class. Usable as a
  decorator.
  """
  if not attr.has(cls):
    raise TypeError(f'cls must be an attrs class; got {cls!r}.')
  known = _known_classes().get(cls.__name__)
  if known is not None and known is not cls:
    raise ValueError(f'an event class named {cls.__name__!r} is already known '
                     f'({known.__module__}.{known.__name__}); rename {cls!r}.')
  _registered[cls.__name__] = cls
  return cls


@_cache.cached(2**20, sys.getsizeof)
def _module_classes() -> Dict[str, type]:
  """The public attrs classes of `_EVENT_MODULES`, by name."""
  known = {}
  for module in _EVENT_MODULES:
    for name, value in vars(module).items():
      if (isinstance(value, type) and attr.has(value) and not
          name.startswith('_') and value.__module__ == module.__name__):
        known[name] = value
  return known


def _known_classes() -> Dict[str, type]:
  return {**_module_classes(), **_registered}


def _encode(value: Any, path: str, depth: int = 0) -> Any:
  """`value` as JSON-compatible data (see the module docstring)."""
  _check_nesting(depth, path)
  if value is None or isinstance(value, (bool, str)):
    return value
  if isinstance(value, int):
    _check_integer(value, path)
    return int(value)
  if isinstance(value, float):
    if math.isnan(value):
      raise ValueError(f'{path} is NaN, which no valid event holds; the '
                       'event cannot be saved.')
    if math.isinf(value):
      return {'float': 'inf' if value > 0 else '-inf'}
    return float(value)
  if isinstance(value, list):
    return [_encode(item, f'{path}[{i}]', depth + 1)
            for i, item in enumerate(value)]
  if isinstance(value, tuple) and not hasattr(value, '_fields'):
    return {'tuple': [_encode(item, f'{path}[{i}]', depth + 1)
                      for i, item in enumerate(value)]}
  if attr.has(type(value)):
    cls = type(value)
    if _known_classes().get(cls.__name__) is not cls:
      raise TypeError(
          f'{path} is a {cls.__module__}.{cls.__name__}, which the serializer '
          'does not know; register it with '
          'shuffle_accountants.checkpoints.register_event_class.')
    return {'type': cls.__name__, 'fields': {
        field.name: _encode(getattr(value, field.name),
                            f'{path}.{field.name}', depth + 1)
        for field in attr.fields(cls) if field.init}}
  raise TypeError(f'{path} = {value!r} of type {type(value).__name__} cannot '
                  'be saved: event fields must be None, bool, int, float, '
                  'str, list, tuple or events (convert arrays to tuples).')


def _decode(data: Any, path: str, version: int, depth: int = 0) -> Any:
  """The value `_encode` wrote as `data`, events rebuilt and validated
  (`version`: the state's; an event of the current version has every
  field, one of an older version may lack only what later ones added)."""
  _check_nesting(depth, path)
  if isinstance(data, int) and not isinstance(data, bool):
    _check_integer(data, path)
  if data is None or isinstance(data, (bool, int, str)):
    return data
  if isinstance(data, float):
    if not math.isfinite(data):
      raise ValueError(f'{path} = {data!r}: infinite floats are written '
                       '{"float": "inf"} and NaN is never valid.')
    return data
  if isinstance(data, list):
    return [_decode(item, f'{path}[{i}]', version, depth + 1)
            for i, item in enumerate(data)]
  if isinstance(data, Mapping):
    if set(data) == {'tuple'} and isinstance(data['tuple'], list):
      return tuple(_decode(item, f'{path}[{i}]', version, depth + 1)
                   for i, item in enumerate(data['tuple']))
    if set(data) == {'float'} and data['float'] in ('inf', '-inf'):
      return float(data['float'])
    if set(data) == {'type', 'fields'} and isinstance(data['fields'],
                                                      Mapping):
      return _decode_attrs(data['type'], data['fields'], path, version,
                           depth)
  raise ValueError(
      f'{path} = {data!r} is not a saved value: expected JSON null, bool, '
      'number, string or list, or an object {"type", "fields"}, {"tuple"} '
      'or {"float": "inf" | "-inf"}; was it written by shuffle-accountants?')


def _decode_attrs(name: Any, fields: Mapping, path: str, version: int,
                  depth: int) -> Any:
  cls = _known_classes().get(name) if isinstance(name, str) else None
  if cls is None:
    raise ValueError(
        f'{path}.type = {name!r} is not a known event type; a newer '
        'shuffle-accountants may have written it (upgrade), or register '
        'the class with shuffle_accountants.checkpoints.register_event_class'
        f'. Known: {sorted(_known_classes())}.')
  names = {field.name for field in attr.fields(cls) if field.init}
  unknown = sorted(set(fields) - names)
  if unknown:
    raise ValueError(
        f'{path}.fields has {unknown}, which {name} does not have (fields: '
        f'{sorted(names)}); a newer shuffle-accountants may have written it: '
        'upgrade to read it.')
  missing = sorted(names - set(fields) - _may_lack(cls, version))
  if missing:
    raise LedgerFileError(
        f'{path}.fields lacks {missing}, which a state of version '
        f'{version} always holds: it was edited or damaged (a '
        'missing field would load with its default, a different event). '
        'Use the saved file unedited or recompute the ledger.')
  values = {key: _decode(value, f'{path}.fields.{key}', version, depth + 1)
            for key, value in fields.items()}
  try:
    return cls(**values)
  except (TypeError, ValueError) as error:
    raise ValueError(f'{path}: cannot rebuild {name}: {error}') from error


# The keys of a state of each format (besides 'format' and 'version').
_STATE_KEYS = {EVENT_FORMAT: {'event'},
               ACCOUNTANT_FORMAT: {'accountant', 'configuration',
                                   'compositions'}}
INTEGRITY_KEY = 'integrity'


def _may_lack(cls: type, version: int) -> Set[str]:
  """The fields of `cls` a state of `version` may lack: those later
  versions added (any field, for version 1)."""
  if version == 1:
    return {field.name for field in attr.fields(cls)}
  return {name for later, added in _FIELDS_ADDED.items() if later > version
          for name in added.get(cls.__name__, ())}


def check_header(state: Any, expected_format: str) -> int:
  """Checks format, version and keys; the state's version (from 2 on,
  every key present)."""
  if not isinstance(state, Mapping):
    raise TypeError(f'state must be a dict written by shuffle-accountants; '
                    f'got {type(state).__name__}.')
  if state.get('format') != expected_format:
    raise ValueError(f"state['format'] = {state.get('format')!r}; expected "
                     f'{expected_format!r} (is this the right file?).')
  version = state.get('version')
  if isinstance(version, bool) or version not in READABLE_VERSIONS:
    raise ValueError(
        f"state['version'] = {version!r} is not supported: this "
        f'shuffle-accountants reads versions {list(READABLE_VERSIONS)}; '
        'upgrade shuffle-accountants to read a newer state.')
  if version >= 2:
    keys = _STATE_KEYS[expected_format] | {'format', 'version'}
    missing, unknown = (sorted(keys - set(state)),
                        sorted(set(state) - keys - {INTEGRITY_KEY}))
    if missing or unknown:
      raise LedgerFileError(
          f'a version-{version} state holds exactly the keys '
          f'{sorted(keys)}; this one lacks {missing} and has {unknown}: it '
          'was edited or damaged.')
  return version


def event_to_dict(event: dp_event.DpEvent) -> Dict[str, Any]:
  """A versioned, JSON-compatible dict of `event` (e.g. `accountant.ledger`).

  Raises:
    TypeError: a field holds a value of an unknown type or class.
    ValueError: a float field is NaN.
  """
  if not isinstance(event, dp_event.DpEvent):
    raise TypeError(f'event must be a DpEvent; got {event!r}.')
  return {'format': EVENT_FORMAT, 'version': STATE_VERSION,
          'event': _encode(event, 'event')}


def event_from_dict(state: Mapping[str, Any]) -> dp_event.DpEvent:
  """The event `event_to_dict` wrote, equal to the original, floats bit-exact.

  Raises:
    ValueError: unknown version, event type or field, or invalid fields
      (the message names the place in the dict).
  """
  version = check_header(state, EVENT_FORMAT)
  event = _decode(state.get('event'), 'event', version)
  if not isinstance(event, dp_event.DpEvent):
    raise ValueError(f"state['event'] is not an event: {event!r}.")
  return event


def _same_bits(saved: dp_event.DpEvent, event: dp_event.DpEvent) -> bool:
  """Whether replaying `saved` composes exactly `event` (1 vs 1.0, 0.0 vs
  -0.0 are equal events, not the same bits)."""
  if saved is event:
    return True
  if saved != event:
    return False
  try:
    return (json.dumps(_encode(saved, 'event'), allow_nan=False)
            == json.dumps(_encode(event, 'event'), allow_nan=False))
  except (TypeError, ValueError):  # not saveable: state_dict will say so
    return False


class Checkpointable(_ledger.ShuffleAccountant):
  """Mixin of the accountants: records compose calls, saves and restores.

  A subclass lists its constructor's settings in `configuration()` (the
  accountants' base, `ShuffleAccountant`, which also builds `fresh()`
  siblings and knows every accountant class by name, for
  `load_accountant`); those settings and the compose calls determine its
  answers.
  """

  def _compose_calls(self) -> List[list]:
    # Created on first use: the parent's __init__ runs before ours finishes.
    if '_calls' not in vars(self):
      self._calls: List[list] = []
    return self._calls

  def compose(self, event: dp_event.DpEvent, count: int = 1):
    super().compose(event, count)  # type: ignore[misc]
    calls = self._compose_calls()
    if calls and calls[-1][1] == count and _same_bits(calls[-1][0], event):
      calls[-1][2] += 1
    else:
      calls.append([event, count, 1])
    return self

  def state_dict(self, *, key: Optional[bytes] = None) -> Dict[str, Any]:
    """A JSON-compatible dict from which `load_state_dict` restores this.

    Keys: 'format', 'version', 'accountant' (the class name),
    'configuration' (the neighbouring relation and every grid or order
    setting), 'compositions' (the compose calls in order, each
    {'event', 'count', 'repeat'}: `repeat` consecutive calls) and
    'integrity' (`seal_state`: the SHA-256 of the rest, with `key` its
    HMAC-SHA256).
    """
    calls = self._compose_calls()
    _check_compose_calls(sum(repeat for _, _, repeat in calls))
    return seal_state({
        'format': ACCOUNTANT_FORMAT, 'version': STATE_VERSION,
        'accountant': type(self).__name__,
        'configuration': self.configuration(),
        'compositions': [
            {'event': _encode(event, f'compositions[{i}].event'),
             'count': count, 'repeat': repeat}
            for i, (event, count, repeat) in enumerate(calls)]}, key)

  def load_state_dict(self, state: Mapping[str, Any], *,
                      key: Optional[bytes] = None,
                      allow_unverified: bool = False) -> None:
    """Replaces this accountant's ledger by the one of `state`.

    The state must come from the same accountant class with the same
    configuration (the error names every difference). Epsilon afterwards
    equals the saved accountant's, bit for bit. Its 'integrity' entry is
    checked first (`verified_state`; a state sealed with a key needs the
    same `key`); a state without one (version 1, or the entry removed) is
    refused unless `allow_unverified=True`.

    Raises:
      LedgerFileError: the state was edited or damaged, or has no digest.
      LedgerKeyError: `key` does not fit how the state was sealed.
    """
    version = check_header(state, ACCOUNTANT_FORMAT)
    self._restore(verified_state(state, key=key,
                                 allow_unverified=allow_unverified),
                  version)

  def _restore(self, state: Mapping[str, Any], version: int) -> None:
    """`load_state_dict` of a state whose digest was checked."""
    if state.get('accountant') != type(self).__name__:
      raise ValueError(
          f"state['accountant'] = {state.get('accountant')!r} cannot be "
          f'loaded into a {type(self).__name__}; use load_accountant or '
          f"a {state.get('accountant')}.")
    saved, mine = state.get('configuration'), self.configuration()
    if not isinstance(saved, Mapping):
      raise ValueError(f"state['configuration'] must be a dict; got {saved!r}.")
    differences = [f'{key}: saved {saved.get(key, "(missing)")!r}, this '
                   f'accountant {mine.get(key, "(missing)")!r}'
                   for key in sorted(set(saved) | set(mine))
                   if saved.get(key, KeyError) != mine.get(key, KeyError)]
    if differences:
      raise ValueError(
          'the state was saved by an accountant configured differently ('
          + '; '.join(differences) + '); construct it with the saved '
          "configuration, e.g. load_accountant or from_state_dict.")
    calls = _decode_calls(state.get('compositions'), version)
    previous = [(event, count, repeat)
                for event, count, repeat in self._compose_calls()]
    try:
      self._replay(calls)
    except Exception:
      # A load that fails leaves this accountant as it was, never holding
      # part of another ledger (a lower epsilon).
      self._replay(previous)
      raise
    # The files it loaded or saved hold another ledger now.
    vars(self).pop(FILES_ATTRIBUTE, None)

  def _replay(self, calls: List[Tuple[dp_event.DpEvent, int, int]]
              ) -> None:
    """Empties this accountant in place, then composes `calls` (event,
    count, repeat) in order: the same floating-point operations as the
    saved accountant's."""
    self._empty()
    self._compose_calls().clear()
    for index, (event, count, repeat) in enumerate(calls):
      try:
        for _ in range(repeat):
          self.compose(event, count)
      except (privacy_accountant.UnsupportedEventError, TypeError,
              ValueError) as error:
        raise ValueError(f'compositions[{index}] cannot be composed by a '
                         f'{type(self).__name__}: {error}') from error

  @classmethod
  def from_state_dict(cls, state: Mapping[str, Any], *,
                      key: Optional[bytes] = None,
                      allow_unverified: bool = False):
    """A new accountant restored from `state` (its saved configuration),
    its digest checked as `load_state_dict` does."""
    version = check_header(state, ACCOUNTANT_FORMAT)
    return cls._from_verified(verified_state(
        state, key=key, allow_unverified=allow_unverified), version)

  @classmethod
  def _from_verified(cls, state: Mapping[str, Any], version: int):
    configuration = state.get('configuration')
    if not isinstance(configuration, Mapping):
      raise ValueError("state['configuration'] must be a dict; got "
                       f'{configuration!r}.')
    accountant = cls.from_configuration(configuration)
    accountant._restore(state, version)
    return accountant


def _check_compose_calls(total: int) -> None:
  if total > MAX_COMPOSE_CALLS:
    raise LedgerLimitError(
        f'the state replays {total} compose calls (the sum of repeat), more '
        f'than MAX_COMPOSE_CALLS = {MAX_COMPOSE_CALLS}, about 15 s of '
        'replay; compose rounds in batches (compose(event, count=k)) to '
        'record fewer calls.')


def _decode_calls(compositions: Any, version: int
                  ) -> List[Tuple[dp_event.DpEvent, int, int]]:
  if not isinstance(compositions, list):
    raise ValueError("state['compositions'] must be a list; got "
                     f'{compositions!r}.')
  # Checked before any event is built: the repeats bound the replay.
  _check_compose_calls(sum(
      entry['repeat'] for entry in compositions
      if isinstance(entry, Mapping) and isinstance(entry.get('repeat'), int)
      and entry['repeat'] > 0))
  calls = []
  for i, entry in enumerate(compositions):
    where = f'compositions[{i}]'
    if not isinstance(entry, Mapping) or set(entry) != {'event', 'count',
                                                        'repeat'}:
      raise ValueError(f'{where} must be a dict with keys event, count and '
                       f'repeat; got {entry!r}.')
    for key in ('count', 'repeat'):
      value = entry[key]
      if isinstance(value, bool) or not isinstance(value, int) or value < (
          0 if key == 'count' else 1):
        raise ValueError(f'{where}.{key} = {value!r}; expected an integer >= '
                         f"{0 if key == 'count' else 1}.")
    event = _decode(entry['event'], f'{where}.event', version)
    if not isinstance(event, dp_event.DpEvent):
      raise ValueError(f'{where}.event is not an event: {event!r}.')
    calls.append((event, entry['count'], entry['repeat']))
  return calls


def _canonical(state: Mapping[str, Any]) -> bytes:
  """The bytes the digest covers: the state without its 'integrity', as
  JSON with sorted keys and no spaces (floats by `repr`, bit-exact), so
  that reformatting the file keeps the digest and any edit of a value,
  round or field changes it."""
  body = {key: value for key, value in state.items() if key != INTEGRITY_KEY}
  return json.dumps(body, sort_keys=True, separators=(',', ':'),
                    ensure_ascii=True, allow_nan=False).encode('ascii')


def check_key(key: Optional[bytes]) -> Optional[bytes]:
  if key is None:
    return None
  if not isinstance(key, (bytes, bytearray, memoryview)):
    raise TypeError(f'key must be bytes (e.g. a secret from os.urandom(32)); '
                    f'got {type(key).__name__}.')
  if not len(key):
    raise ValueError('key must not be empty; give a secret of 32 bytes or '
                     'more, or None for a file without a key.')
  return bytes(key)


def _integrity(state: Mapping[str, Any], key: Optional[bytes]) -> dict:
  canonical = _canonical(state)
  if key is None:
    return {'algorithm': 'sha256',
            'digest': hashlib.sha256(canonical).hexdigest()}
  return {'algorithm': 'hmac-sha256',
          'digest': hmac.new(key, canonical, hashlib.sha256).hexdigest()}


def _verified(state: Mapping[str, Any], key: Optional[bytes],
              source: str) -> Dict[str, Any]:
  """`state` without its integrity entry, after checking the entry."""
  saved = state.get(INTEGRITY_KEY)
  if not isinstance(saved, Mapping) or set(saved) != {'algorithm', 'digest'}:
    raise LedgerFileError(
        f"{source} has no valid 'integrity' entry ({{'algorithm', 'digest'}})"
        f', which every version-{STATE_VERSION} ledger file holds: it was '
        'damaged or edited. Restore it from a backup or recompute the '
        'ledger.')
  algorithm = saved['algorithm']
  if algorithm == 'hmac-sha256' and key is None:
    raise LedgerKeyError(
        f'{source} was saved with a key (HMAC-SHA256); pass the same key: '
        'load_accountant(path, key=...).')
  if algorithm == 'sha256' and key is not None:
    raise LedgerKeyError(
        f'{source} was saved without a key, so it is not tamper-evident: '
        'anyone who can write it can recompute its SHA-256. Check where it '
        'comes from, then save it with the key.')
  if algorithm not in ('sha256', 'hmac-sha256'):
    raise LedgerFileError(
        f"{source}: integrity algorithm {algorithm!r} is not 'sha256' or "
        "'hmac-sha256'; a newer shuffle-accountants may have written it "
        '(upgrade), or it was edited.')
  expected = _integrity(state, key)['digest']
  digest = saved['digest']
  if not (isinstance(digest, str) and digest.isascii()
          and hmac.compare_digest(digest, expected)):
    if key is not None:
      raise LedgerKeyError(
          f'{source}: the HMAC-SHA256 does not match with this key: the key '
          'is wrong, or the file was edited or damaged after it was saved. '
          'Use the key it was saved with; otherwise do not trust its ε: '
          'restore it from a backup or recompute the ledger.')
    raise LedgerFileError(
        f'{source} was damaged or edited after it was saved: its content '
        "does not match its SHA-256 ('integrity'). Its ε cannot be trusted "
        '(deleted rounds or fields lower it). Restore the file from a backup '
        'or recompute the ledger; never edit a ledger file by hand.')
  return {key_: value for key_, value in state.items()
          if key_ != INTEGRITY_KEY}


def seal_state(state: Mapping[str, Any],
               key: Optional[bytes] = None) -> Dict[str, Any]:
  """`state` with its 'integrity' entry (one already there is replaced).

  The entry is {'algorithm': 'sha256', 'digest': ...}, the SHA-256 of the
  rest of the state as canonical JSON (keys sorted, no spaces, floats by
  `repr`), or with `key` {'algorithm': 'hmac-sha256', ...}. The one digest
  of every saved state of the package: the accountants' `state_dict`, the
  ledger files, the Opacus and Flower adapters' accountant states. Without
  a key it detects damage and hand edits; only a key also detects an edit
  by someone who recomputes the SHA-256 (docs/checkpoints.md).
  """
  key = check_key(key)
  body = {name: value for name, value in state.items()
          if name != INTEGRITY_KEY}
  return {**body, INTEGRITY_KEY: _integrity(body, key)}


def verified_state(state: Mapping[str, Any], *, key: Optional[bytes] = None,
                   allow_unverified: bool = False,
                   source: str = 'the state') -> Dict[str, Any]:
  """`state` without its 'integrity' entry, after checking that entry.

  A state without the entry (written before digests, or the entry removed)
  is refused unless `allow_unverified` is true; it then loads with an
  `UnverifiedLedgerWarning` (and never with a key).

  Raises:
    LedgerFileError: no entry (without `allow_unverified`), or the state
      does not match it: it was edited or damaged.
    LedgerKeyError: `key` does not fit how the state was sealed.
  """
  if not isinstance(state, Mapping):
    raise TypeError(f'state must be a dict written by shuffle-accountants; '
                    f'got {type(state).__name__}.')
  key = check_key(key)
  if INTEGRITY_KEY in state:
    return _verified(state, key, source)
  if not allow_unverified:
    raise LedgerFileError(
        f"{source} carries no 'integrity' digest, which every state this "
        'shuffle-accountants writes holds: it was written before digests '
        '(a version-1 ledger, an older adapter state) or its digest was '
        'removed, and an edited count or deleted round would load at a '
        'lower epsilon. Pass allow_unverified=True only if you trust where '
        'it comes from, then save it again to add a digest.')
  if key is not None:
    raise LedgerKeyError(
        f'{source} carries no digest (e.g. a version-1 ledger file, written '
        'before digests and keys): it cannot be verified with a key. Check '
        'where it comes from, load it with allow_unverified=True and no '
        'key, then save it again with the key.')
  warnings.warn(
      f'{source} carries no integrity digest (e.g. a version-1 ledger file, '
      'written before digests): it is loaded unverified, as '
      'allow_unverified=True asked. Save it again to add a digest.',
      UnverifiedLedgerWarning, stacklevel=3)
  return dict(state)


