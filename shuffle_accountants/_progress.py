"""Progress of long calls, shown only when asked (`progress=`).

`progress=True` writes one self-overwriting line to stderr once a phase has
run for `DELAY` seconds (short calls stay silent); a callable receives
`(phase, done, total)` after every step instead.
"""

import sys
import time
from typing import Callable, Optional, Union

DELAY = 2.0  # seconds before the first line
_INTERVAL = 0.5  # seconds between lines

ProgressOption = Union[bool, Callable[[str, int, int], None], None]


def _write(phase: str, done: int, total: int) -> None:
  end = '\n' if done >= total else ''
  sys.stderr.write(f'\rshuffle-accountants: {phase} {done}/{total}{end}')
  sys.stderr.flush()


class Progress:
  """Reports `done` of `total` steps of one phase (no-op when not asked)."""

  def __init__(self, option: ProgressOption, phase: str, total: int):
    if option not in (None, False, True) and not callable(option):
      raise TypeError(f'progress must be a bool or a callable '
                      f'(phase, done, total); got {option!r}.')
    self._callback: Optional[Callable[[str, int, int], None]] = (
        option if callable(option) else None)
    self._terminal = option is True
    self._phase, self._total, self._done = phase, total, 0
    self._start = time.monotonic()
    self._last = -_INTERVAL
    self._shown = False

  def step(self) -> None:
    self._done += 1
    if self._callback is not None:
      self._callback(self._phase, self._done, self._total)
    elif self._terminal:
      now = time.monotonic() - self._start
      final = self._done >= self._total
      if (now >= DELAY and now - self._last >= _INTERVAL) or (
          final and self._shown):
        self._last, self._shown = now, True
        _write(self._phase, self._done, self._total)
