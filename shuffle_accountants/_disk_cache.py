"""Arrays kept on disk across processes (speed only, never a bound).

A value that takes seconds to compute and depends only on its exact
arguments and on the versions of the packages that compute it (random
allocation's epoch PMFs, `samplers.random_allocation`) is kept here, so a
fresh process (the next training run, a calibration before it) reads it in
milliseconds. A file is used only if it names exactly the same key and its
arrays hash to the checksum it stores, so a stale, truncated or foreign file
is recomputed, never trusted; every failure to read or write falls back to
computing.

The folder is ``$SHUFFLE_ACCOUNTANTS_CACHE_DIR``, else
``$XDG_CACHE_HOME/shuffle-accountants``, else
``~/.cache/shuffle-accountants``; ``SHUFFLE_ACCOUNTANTS_CACHE_DIR=off``
turns the disk cache off. Deleting the folder is always safe.
"""

import hashlib
import os
import pathlib
import tempfile
from typing import Callable, Optional, Sequence, Tuple

import numpy as np

ENVIRONMENT_VARIABLE = 'SHUFFLE_ACCOUNTANTS_CACHE_DIR'
OFF = 'off'
# Bump when the layout of the files changes.
_FORMAT = 1

Arrays = Tuple[np.ndarray, ...]


def folder() -> Optional[pathlib.Path]:
  """Where values are kept, or None if the disk cache is off."""
  configured = os.environ.get(ENVIRONMENT_VARIABLE)
  if configured is not None:
    return None if configured.strip().lower() in (OFF, '') else pathlib.Path(
        configured)
  base = os.environ.get('XDG_CACHE_HOME') or os.path.join(
      os.path.expanduser('~'), '.cache')
  return pathlib.Path(base) / 'shuffle-accountants'


def _checksum(key: str, arrays: Sequence[np.ndarray]) -> str:
  digest = hashlib.sha256(key.encode())
  for array in arrays:
    digest.update(str((array.dtype.str, array.shape)).encode())
    digest.update(np.ascontiguousarray(array).tobytes())
  return digest.hexdigest()


def _path(key: str) -> Optional[pathlib.Path]:
  where = folder()
  if where is None:
    return None
  return where / f'{hashlib.sha256(key.encode()).hexdigest()}.npz'


def _read(path: pathlib.Path, key: str) -> Optional[Arrays]:
  try:
    with np.load(path, allow_pickle=False) as stored:
      # Stored in order: the key, the format, the checksum, the arrays.
      fields = [stored[f'arr_{i}'] for i in range(len(stored.files))]
  except (OSError, ValueError, KeyError, EOFError):
    return None
  if len(fields) < 3 or str(fields[0]) != key or str(fields[1]) != str(
      _FORMAT):
    return None
  arrays = tuple(fields[3:])
  if str(fields[2]) != _checksum(key, arrays):
    return None
  return arrays


def _write(path: pathlib.Path, key: str, arrays: Arrays) -> None:
  try:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written aside and renamed: a reader never sees half a file.
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix='.tmp')
    try:
      with os.fdopen(handle, 'wb') as stream:
        np.savez(stream, np.array(key), np.array(_FORMAT),
                 np.array(_checksum(key, arrays)), *arrays)
      os.replace(temporary, path)
    finally:
      if os.path.exists(temporary):
        os.remove(temporary)
  except OSError:
    pass  # a read-only or full disk only costs the next process time


def arrays(key: str, compute: Callable[[], Arrays]) -> Arrays:
  """The arrays stored under `key` (the exact arguments and versions), or
  `compute()`'s, which are then stored."""
  path = _path(key)
  if path is not None and path.exists():
    stored = _read(path, key)
    if stored is not None:
      return stored
  computed = tuple(np.asarray(array) for array in compute())
  if path is not None:
    _write(path, key, computed)
  return computed
