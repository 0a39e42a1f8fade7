"""Old public names kept for one release, with a DeprecationWarning."""

import importlib
from typing import Any, Callable, Dict
import warnings

__all__ = ['renamed']


def renamed(module: str, old_to_new: Dict[str, str]) -> Callable[[str], Any]:
  """A module `__getattr__` answering each old name with its new value.

  The warning names the replacement; `__all__` lists the new names only.
  """

  def __getattr__(name: str) -> Any:
    if name not in old_to_new:
      raise AttributeError(f'module {module!r} has no attribute {name!r}')
    new = old_to_new[name]
    warnings.warn(f'{module}.{name} is deprecated (its name carried a retired '
                  f'proof number) and will be removed in the next release; '
                  f'use {module}.{new}.', DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(module), new)

  return __getattr__
