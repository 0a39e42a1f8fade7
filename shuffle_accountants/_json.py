"""Standard JSON only: no NaN or Infinity tokens.

Strict parsers (JavaScript's JSON.parse, Python's json.loads with
parse_constant) reject them.
"""

import json
import math
from typing import Any

__all__ = ['finite_only', 'dumps']


def _describe(value: float) -> str:
  if math.isnan(value):
    return 'not a number'
  return ('+infinity: no finite value at these settings' if value > 0
          else '-infinity')


def finite_only(value: Any) -> Any:
  """`value` with every non-finite float replaced by None.

  A dict holding one (or a list holding one) gains a 'reason' entry naming
  the key and what it was ("epsilon was +infinity: ..."), appended to a
  reason already there.
  Lists and tuples are walked too; anything else is kept as is.
  """
  if isinstance(value, float) and not math.isfinite(value):
    return None
  if isinstance(value, (list, tuple)):
    return [finite_only(item) for item in value]
  if not isinstance(value, dict):
    return value
  result, reasons = {}, []
  for key, item in value.items():
    if isinstance(item, float) and not math.isfinite(item):
      reasons.append(f'{key} was {_describe(item)}')
    elif isinstance(item, (list, tuple)):
      reasons.extend(f'{key}[{index}] was {_describe(entry)}'
                     for index, entry in enumerate(item)
                     if isinstance(entry, float) and not math.isfinite(entry))
    result[key] = finite_only(item)
  if reasons:
    held = result.get('reason')
    result['reason'] = '; '.join(([held] if held else []) + reasons)
  return result


def dumps(value: Any, **options) -> str:
  """json.dumps of `finite_only(value)`, refusing any NaN/Infinity left."""
  return json.dumps(finite_only(value), allow_nan=False, **options)
