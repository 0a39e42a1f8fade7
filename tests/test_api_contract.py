"""The public surface is a contract: every name a module exports is documented.

`__all__` lists what a module promises; docs/api.md documents it (a whole
module with `::: module`, or one name with `::: module.name`). A name also
counts when the object it names is documented under another path (a
re-export; a constant: the same name and value), and dp_accounting's types
(`NeighboringRelation`) are documented by dp_accounting. Private modules (a
part starting with `_`) promise nothing; the command line's modules promise
their flags, documented on docs/cli.md.
"""

import importlib
import pathlib
import pkgutil
import re
import types

import shuffle_accountants

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The command line's contract is its flags (docs/cli.md), not its functions.
COMMAND_LINE = ('shuffle_accountants.cli.main', 'shuffle_accountants.cli.noise')


def _documented_paths():
  text = (ROOT / 'docs' / 'api.md').read_text(encoding='utf-8')
  return re.findall(r'^::: (\S+)', text, re.MULTILINE)


def _resolve(path):
  """[(name, value)] that `::: path` documents (a module or one name)."""
  try:
    module = importlib.import_module(path)
    return [(name, getattr(module, name))
            for name in getattr(module, '__all__', ())]
  except ModuleNotFoundError:
    parent, name = path.rsplit('.', 1)
    return [(name, getattr(importlib.import_module(parent), name))]


def _public_modules():
  yield shuffle_accountants
  for info in pkgutil.walk_packages(shuffle_accountants.__path__,
                                    'shuffle_accountants.'):
    parts = info.name.split('.')
    if any(part.startswith('_') for part in parts) or info.name in COMMAND_LINE:
      continue
    try:
      yield importlib.import_module(info.name)
    except ImportError:  # an adapter whose extra is not installed
      continue


def _identified(value):
  # Strings and numbers can be equal (and the same object) by chance.
  return not isinstance(value, (str, int, float, bool, type(None)))


def _documented(paths):
  """(ids of documented objects, (name, repr) of documented constants)."""
  ids, constants = set(), set()
  for path in paths:
    for name, value in _resolve(path):
      if _identified(value):
        ids.add(id(value))
      else:
        constants.add((name, repr(value)))
  return ids, constants


def _foreign(value):
  module = getattr(value, '__module__', None) or ''
  return (isinstance(value, type) and not module.startswith(
      'shuffle_accountants'))


def test_every_exported_name_is_documented():
  paths = _documented_paths()
  ids, constants = _documented(paths)
  missing = []
  for module in _public_modules():
    if module.__name__ in paths:
      continue
    for name in getattr(module, '__all__', ()):
      value = getattr(module, name)
      if (isinstance(value, types.ModuleType)  # checked as a module
          or _foreign(value) or f'{module.__name__}.{name}' in paths
          or (id(value) in ids if _identified(value)
              else (name, repr(value)) in constants)):
        continue
      missing.append(f'{module.__name__}.{name}')
  assert missing == [], '\n'.join(missing)
