"""Argument checks whose messages name the parameter, value and range.

Every message names the parameter, the offending value and the allowed range,
so that a user can fix the call without reading the source.
"""

import math
import numbers
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
  import numpy as np

# numpy is imported by the functions that need it: the command line checks
# its flags with this module before it loads the numerical stack.


def whole_if_integral(value):
  """`value` as an int if it is a finite whole float (1e6), else unchanged.

  An attrs converter: integer fields accept whole numbers written as floats
  (as the command line does, `--num-users 1e6`); anything else is left for
  `check_integer` to reject with a message.
  """
  if (isinstance(value, numbers.Real) and not isinstance(
      value, (bool, numbers.Integral)) and math.isfinite(value)
      and value == math.floor(value)):
    return int(value)
  return value


def check_integer(name: str, value, minimum: int,
                  maximum: Optional[float] = None) -> int:
  """`value` as a Python int; raises unless it is a whole number in range.

  Whole numbers written as floats (1e6, 1000.0) are accepted, as on the
  command line; 2.5, inf and NaN are not.
  """
  allowed = (f'>= {minimum}' if maximum is None
             else f'in [{minimum:g}, {maximum:g}]')
  if isinstance(value, bool) or not isinstance(value, numbers.Real):
    raise TypeError(
        f'{name} must be a whole number {allowed}; got {value!r} of type '
        f'{type(value).__name__}.')
  if whole_if_integral(value) is value and not isinstance(
      value, numbers.Integral):
    raise ValueError(f'{name} must be a whole number {allowed} (whole '
                     f'floats such as 1e6 are accepted); got {value!r}.')
  value = int(value)  # type: ignore[call-overload]  # Real lacks __int__
  if value < minimum or (maximum is not None and value > maximum):
    raise ValueError(f'{name} must be a whole number {allowed}; got {value}.')
  return value


def check_neighboring_relation(value):
  """`value` if it is a dp_accounting `NeighboringRelation`, else TypeError
  naming the members (a string such as 'REPLACE_ONE' is not one: the parent
  would fail on it only at the first event)."""
  from dp_accounting.privacy_accountant import NeighboringRelation
  if not isinstance(value, NeighboringRelation):
    members = ', '.join(f'NeighboringRelation.{member.name}'
                        for member in NeighboringRelation)
    raise TypeError(f'neighboring_relation must be one of {members}; got '
                    f'{value!r} of type {type(value).__name__}.')
  return value


def check_real(name: str, value, minimum: float = -math.inf,
               maximum: float = math.inf, min_inclusive: bool = True,
               max_inclusive: bool = True) -> float:
  """Returns `value` as a float, or raises if it is not a finite real in
  range."""
  if isinstance(value, bool) or not isinstance(value, numbers.Real):
    raise TypeError(f'{name} must be a real number; got {value!r} of type '
                    f'{type(value).__name__}.')
  value = float(value)
  low_ok = value >= minimum if min_inclusive else value > minimum
  high_ok = value <= maximum if max_inclusive else value < maximum
  if math.isnan(value) or math.isinf(value) or not (low_ok and high_ok):
    # An infinite end is never in the range of a finite number.
    left = '[' if min_inclusive and math.isfinite(minimum) else '('
    right = ']' if max_inclusive and math.isfinite(maximum) else ')'
    raise ValueError(f'{name} must be a finite number in {left}{minimum}, '
                     f'{maximum}{right}; got {value}.')
  return value


# Largest local epsilon accepted: e^eps0 must stay finite in double
# precision (e^709.8 overflows), and an eps0-LDP report beyond that is
# effectively the data itself.
MAX_LOCAL_EPSILON = 700.0


def check_local_epsilon(value, name: str = 'local_epsilon') -> float:
  """A pure local epsilon eps0 in [0, MAX_LOCAL_EPSILON]."""
  return check_real(name, value, 0.0, MAX_LOCAL_EPSILON)


def check_orders(orders, minimum: float = 1.0, name: str = 'orders'
                 ) -> 'np.ndarray':
  """Returns RDP orders as a 1-d float array; every order must exceed
  `minimum`."""
  import numpy as np
  array = np.atleast_1d(np.asarray(orders, dtype=np.float64))
  if array.ndim != 1 or array.size == 0:
    raise ValueError(f'{name} must be a non-empty 1-d sequence of numbers; '
                     f'got {orders!r}.')
  bad = ~np.isfinite(array) | (array <= minimum)
  if np.any(bad):
    raise ValueError(f'every entry of {name} must be a finite number > '
                     f'{minimum}; got {array[bad][0]}.')
  return array


def check_integer_orders(orders, name: str = 'orders') -> 'np.ndarray':
  """Like `check_orders` but every order must be an integer >= 2."""
  import numpy as np
  array = check_orders(orders, minimum=1.0, name=name)
  bad = (array != np.floor(array)) | (array < 2)
  if np.any(bad):
    raise ValueError(f'every entry of {name} must be an integer >= 2 (this '
                     f'bound is proven for integer orders only); got '
                     f'{array[bad][0]}.')
  return array


def check_delta(name: str, value) -> float:
  """A target delta: a real number in [0, 1]."""
  return check_real(name, value, 0.0, 1.0)


def check_epsilon(name: str, value) -> float:
  """A target epsilon: a real number >= 0 (+inf allowed: delta is then 0)."""
  if isinstance(value, numbers.Real) and not isinstance(value, bool) and (
      value == math.inf):
    return math.inf
  return check_real(name, value, 0.0)


# Documented ranges (docs/limits.md) that the library enforces as the
# command line does: beyond them the time and memory figures were never
# measured (10^12 rounds, a domain of 10^9 values).
MAX_COUNT = 10**9
MAX_DOMAIN_SIZE = 10**6


def check_count(count) -> int:
  """How many times an event is composed: an integer in [1, MAX_COUNT].

  dp_accounting refuses a count of 0 (`count` must be positive); the range
  said here is the range accepted.
  """
  return check_integer('count', count, 1, MAX_COUNT)


def check_domain_size(name: str, value) -> int:
  """A domain size or number of categories: an integer in
  [2, MAX_DOMAIN_SIZE]."""
  return check_integer(name, value, 2, MAX_DOMAIN_SIZE)


def positive_integer_field(instance, attribute, value) -> None:
  """attrs validator: a whole number >= 1, named after its field."""
  del instance
  check_integer(attribute.name, value, 1)


def install_hint(extra: str) -> str:
  """How to install the optional dependencies of `extra` (pyproject's name).

  The extra from a checkout, or the extra's own requirements as the
  installed metadata lists them: shuffle-accountants is not on PyPI, so
  `pip install "shuffle-accountants[extra]"` would fail.
  """
  from importlib import metadata
  try:
    requirements = metadata.requires('shuffle-accountants') or []
  except metadata.PackageNotFoundError:
    requirements = []
  marker = f'extra == "{extra}"'
  own = [line.split(';')[0].strip() for line in requirements
         if marker in line]
  quoted = ' '.join(f"'{name}'" for name in own)
  direct = f', or pip install {quoted}' if own else ''
  return (f'pip install ".[{extra}]" from a checkout of '
          f'shuffle-accountants{direct}')


def missing_extra(error: ImportError, extra: str,
                  feature: str) -> ModuleNotFoundError:
  """The error to raise when `feature` cannot import what `extra` installs.

  `feature` names what needs it ("shuffle_accountants.adapters.opacus");
  `error` is the ImportError of the missing module. A ModuleNotFoundError,
  so `pytest.importorskip` and `except ImportError` still see it.
  """
  module = getattr(error, 'name', None) or 'a dependency'
  return ModuleNotFoundError(
      f'{feature} needs {module}, which is not installed: '
      f'{install_hint(extra)}.', name=getattr(error, 'name', None))
