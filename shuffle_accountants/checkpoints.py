"""Saves and restores accountants exactly, as versioned JSON-ready state.

Training runs crash and resume. An accountant restored from its state holds
the same ledger and configuration and returns the same epsilon, bit for bit:
the state records every `compose(event, count)` call in order (consecutive
identical calls run-length encoded) and the constructor's settings, and
restoring replays those calls in a fresh accountant, so every floating-point
operation happens again in the same order.

Events are written generically from their attrs fields, so a field added to
an event class later round-trips without changes here (a state written
before the field existed loads with the field's default). Every event class
of this package and of `dp_accounting.dp_event` is known by its class name;
`register_event_class` adds others. Accountant classes register themselves
by subclassing `Checkpointable`, so this module imports no route. Values
are JSON-native (None, bool, int,
float, str, list) or tagged objects: {"type": name, "fields": {...}} for a
nested event or randomizer, {"tuple": [...]} for a tuple, {"float": "inf"}
or {"float": "-inf"} for an infinite float. NaN is refused: no valid event
holds it. Floats are written with `repr`, which Python reads back bit-exact.

The state is plain data, never pickle, so loading it runs no code beyond
the constructors of the known event classes (which validate their fields).

>>> state = accountant.state_dict()            # JSON-compatible dict
>>> restored = ShufflePldAccountant(); restored.load_state_dict(state)
>>> save_accountant(accountant, 'ledger.json')  # atomic
>>> load_accountant('ledger.json').get_epsilon(1e-6)
"""

import json
import math
import os
import sys
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Tuple, Type

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant

import shuffle_accountants
from shuffle_accountants import _cache
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.samplers import events as sampler_events

# Bump when the layout changes; readers refuse versions they do not know.
STATE_VERSION = 1
EVENT_FORMAT = 'shuffle_accountants.event'
ACCOUNTANT_FORMAT = 'shuffle_accountants.accountant'

# Modules whose public attrs classes are known event (and field) types.
_EVENT_MODULES = (dp_event, events, randomizers, sampler_events)
_registered: Dict[str, type] = {}
# Every `Checkpointable` class by name (`Checkpointable.__init_subclass__`).
_accountant_classes: Dict[str, Type['Checkpointable']] = {}


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


def _encode(value: Any, path: str) -> Any:
  """`value` as JSON-compatible data (see the module docstring)."""
  if value is None or isinstance(value, (bool, str)):
    return value
  if isinstance(value, int):
    return int(value)
  if isinstance(value, float):
    if math.isnan(value):
      raise ValueError(f'{path} is NaN, which no valid event holds; the '
                       'event cannot be saved.')
    if math.isinf(value):
      return {'float': 'inf' if value > 0 else '-inf'}
    return float(value)
  if isinstance(value, list):
    return [_encode(item, f'{path}[{i}]') for i, item in enumerate(value)]
  if isinstance(value, tuple) and not hasattr(value, '_fields'):
    return {'tuple': [_encode(item, f'{path}[{i}]')
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
                            f'{path}.{field.name}')
        for field in attr.fields(cls) if field.init}}
  raise TypeError(f'{path} = {value!r} of type {type(value).__name__} cannot '
                  'be saved: event fields must be None, bool, int, float, '
                  'str, list, tuple or events (convert arrays to tuples).')


def _decode(data: Any, path: str) -> Any:
  """The value `_encode` wrote as `data`, events rebuilt and validated."""
  if data is None or isinstance(data, (bool, int, str)):
    return data
  if isinstance(data, float):
    if not math.isfinite(data):
      raise ValueError(f'{path} = {data!r}: infinite floats are written '
                       '{"float": "inf"} and NaN is never valid.')
    return data
  if isinstance(data, list):
    return [_decode(item, f'{path}[{i}]') for i, item in enumerate(data)]
  if isinstance(data, Mapping):
    if set(data) == {'tuple'} and isinstance(data['tuple'], list):
      return tuple(_decode(item, f'{path}[{i}]')
                   for i, item in enumerate(data['tuple']))
    if set(data) == {'float'} and data['float'] in ('inf', '-inf'):
      return float(data['float'])
    if set(data) == {'type', 'fields'} and isinstance(data['fields'],
                                                      Mapping):
      return _decode_attrs(data['type'], data['fields'], path)
  raise ValueError(
      f'{path} = {data!r} is not a saved value: expected JSON null, bool, '
      'number, string or list, or an object {"type", "fields"}, {"tuple"} '
      'or {"float": "inf" | "-inf"}; was it written by shuffle-accountants?')


def _decode_attrs(name: Any, fields: Mapping, path: str) -> Any:
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
  values = {key: _decode(value, f'{path}.fields.{key}')
            for key, value in fields.items()}
  try:
    return cls(**values)
  except (TypeError, ValueError) as error:
    raise ValueError(f'{path}: cannot rebuild {name}: {error}') from error


def _check_header(state: Any, expected_format: str) -> None:
  if not isinstance(state, Mapping):
    raise TypeError(f'state must be a dict written by shuffle-accountants; '
                    f'got {type(state).__name__}.')
  if state.get('format') != expected_format:
    raise ValueError(f"state['format'] = {state.get('format')!r}; expected "
                     f'{expected_format!r} (is this the right file?).')
  if state.get('version') != STATE_VERSION:
    raise ValueError(
        f"state['version'] = {state.get('version')!r} is not supported: this "
        f'shuffle-accountants reads version {STATE_VERSION}; upgrade '
        'shuffle-accountants to read a newer state.')


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
  _check_header(state, EVENT_FORMAT)
  event = _decode(state.get('event'), 'event')
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
    return (json.dumps(_encode(saved, 'event'))
            == json.dumps(_encode(event, 'event')))
  except (TypeError, ValueError):  # not saveable: state_dict will say so
    return False


class Checkpointable:
  """Mixin of the accountants: records compose calls, saves and restores.

  A subclass lists its constructor's settings in `configuration()`; those
  settings and the compose calls determine its answers. Every subclass is
  known to `load_accountant` by its class name.
  """

  def __init_subclass__(cls, **kwargs):
    super().__init_subclass__(**kwargs)
    _accountant_classes[cls.__name__] = cls

  def configuration(self) -> Dict[str, Any]:
    """The constructor's settings that determine the answers (JSON-ready)."""
    raise NotImplementedError

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

  def state_dict(self) -> Dict[str, Any]:
    """A JSON-compatible dict from which `load_state_dict` restores this.

    Keys: 'format', 'version', 'accountant' (the class name),
    'configuration' (the neighbouring relation and every grid or order
    setting) and 'compositions' (the compose calls in order, each
    {'event', 'count', 'repeat'}: `repeat` consecutive calls).
    """
    return {
        'format': ACCOUNTANT_FORMAT, 'version': STATE_VERSION,
        'accountant': type(self).__name__,
        'configuration': self.configuration(),
        'compositions': [
            {'event': _encode(event, f'compositions[{i}].event'),
             'count': count, 'repeat': repeat}
            for i, (event, count, repeat) in enumerate(self._compose_calls())]}

  def load_state_dict(self, state: Mapping[str, Any]) -> None:
    """Replaces this accountant's ledger by the one of `state`.

    The state must come from the same accountant class with the same
    configuration (the error names every difference). Epsilon afterwards
    equals the saved accountant's, bit for bit.
    """
    _check_header(state, ACCOUNTANT_FORMAT)
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
    calls = _decode_calls(state.get('compositions'))
    fresh = self.fresh()
    fresh._compose_calls()
    for index, (event, count, repeat) in enumerate(calls):
      try:
        for _ in range(repeat):
          fresh.compose(event, count)
      except (privacy_accountant.UnsupportedEventError, TypeError,
              ValueError) as error:
        raise ValueError(f'compositions[{index}] cannot be composed by a '
                         f'{type(self).__name__}: {error}') from error
    # Take over the fresh accountant's whole state (same class and
    # configuration); the progress option is not configuration: keep ours.
    progress = vars(self).get('_progress_option')
    vars(self).clear()
    vars(self).update(vars(fresh))
    if progress is not None:
      self._progress_option = progress

  def fresh(self, **changes):
    """A new, empty accountant of this configuration, with `changes`
    (constructor settings) applied: what a query builds beside this one."""
    return type(self).from_configuration({**self.configuration(), **changes})

  @classmethod
  def from_configuration(cls, configuration: Mapping[str, Any]):
    """A fresh accountant with the settings of `configuration()`."""
    settings = dict(configuration)
    name = settings.get('neighboring_relation')
    try:
      settings['neighboring_relation'] = (
          privacy_accountant.NeighboringRelation[name])
    except (KeyError, TypeError):
      raise ValueError(
          f"configuration['neighboring_relation'] = {name!r} is not one of "
          f'{[r.name for r in privacy_accountant.NeighboringRelation]}.'
      ) from None
    try:
      return cls(**settings)
    except TypeError as error:
      raise ValueError(f'configuration {dict(configuration)!r} does not fit '
                       f'{cls.__name__}: {error}') from error

  @classmethod
  def from_state_dict(cls, state: Mapping[str, Any]):
    """A new accountant restored from `state` (its saved configuration)."""
    _check_header(state, ACCOUNTANT_FORMAT)
    configuration = state.get('configuration')
    if not isinstance(configuration, Mapping):
      raise ValueError("state['configuration'] must be a dict; got "
                       f'{configuration!r}.')
    accountant = cls.from_configuration(configuration)
    accountant.load_state_dict(state)
    return accountant


def _decode_calls(compositions: Any) -> List[Tuple[dp_event.DpEvent, int, int]]:
  if not isinstance(compositions, list):
    raise ValueError("state['compositions'] must be a list; got "
                     f'{compositions!r}.')
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
    event = _decode(entry['event'], f'{where}.event')
    if not isinstance(event, dp_event.DpEvent):
      raise ValueError(f'{where}.event is not an event: {event!r}.')
    calls.append((event, entry['count'], entry['repeat']))
  return calls


def _accountant_class(name: Any) -> Optional[Type['Checkpointable']]:
  """The `Checkpointable` class called `name`, or None.

  A public accountant of the package not imported yet is imported through
  the package's lazy exports (from above), and registers itself.
  """
  if not isinstance(name, str):
    return None
  if name not in _accountant_classes and name in shuffle_accountants.__all__:
    getattr(shuffle_accountants, name)
  return _accountant_classes.get(name)


def save_accountant(accountant: Checkpointable,
                    path: 'os.PathLike[str] | str') -> None:
  """Writes `accountant.state_dict()` as JSON to `path`, atomically.

  The JSON goes to a temporary file in the same directory, is flushed to
  disk (fsync), and then replaces `path` in one step (`os.replace`), so a
  crash leaves either the old file or the new one, never half a ledger.
  The file is readable by its owner only (as `tempfile.mkstemp` makes it).
  """
  if not isinstance(accountant, Checkpointable):
    raise TypeError('accountant must be a ShufflePldAccountant or '
                    f'ShuffleRdpAccountant; got {type(accountant).__name__}.')
  text = json.dumps(accountant.state_dict(), allow_nan=False, indent=1)
  path = os.fspath(path)
  directory = os.path.dirname(os.path.abspath(path))
  handle, temporary = tempfile.mkstemp(
      dir=directory, prefix=f'.{os.path.basename(path)}.', suffix='.tmp')
  try:
    with os.fdopen(handle, 'w', encoding='utf-8') as file:
      file.write(text)
      file.flush()
      os.fsync(file.fileno())
    os.replace(temporary, path)
  except BaseException:
    os.unlink(temporary)
    raise
  if hasattr(os, 'O_DIRECTORY'):  # make the rename itself durable
    directory_handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
      os.fsync(directory_handle)
    finally:
      os.close(directory_handle)


def load_accountant(path: 'os.PathLike[str] | str'):
  """The accountant `save_accountant` wrote to `path`, restored exactly."""
  with open(os.fspath(path), encoding='utf-8') as file:
    try:
      state = json.load(file, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
      raise ValueError(f'{os.fspath(path)} is not JSON written by '
                       f'save_accountant: {error}') from error
  _check_header(state, ACCOUNTANT_FORMAT)
  cls = _accountant_class(state.get('accountant'))
  if cls is None:
    raise ValueError(f"state['accountant'] = {state.get('accountant')!r} is "
                     f'not one of {sorted(_accountant_classes)}.')
  return cls.from_state_dict(state)


def _refuse_constant(name: str):
  raise ValueError(f'{name} is not valid in a saved state (infinite floats '
                   'are written {"float": "inf"}; NaN is never valid).')


__all__ = ['STATE_VERSION', 'Checkpointable', 'register_event_class',
           'event_to_dict', 'event_from_dict', 'save_accountant',
           'load_accountant']
