"""The disk cache (`_disk_cache`): values read back bit for bit, and any file
that is not exactly what was stored under the key is recomputed."""

import numpy as np
import pytest

from shuffle_accountants import _disk_cache


class _Counting:
  """A computation that counts its calls."""

  def __init__(self, arrays):
    self.arrays, self.calls = arrays, 0

  def __call__(self):
    self.calls += 1
    return self.arrays


ARRAYS = (np.array(0.1 + 0.2), np.array(-7), np.array([1e-300, 0.3, 5e-324]))


def _same(first, second) -> bool:
  return len(first) == len(second) and all(
      a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
      for a, b in zip(first, second))


@pytest.fixture(name='folder')
def _folder(tmp_path, monkeypatch):
  monkeypatch.setenv(_disk_cache.ENVIRONMENT_VARIABLE, str(tmp_path))
  return tmp_path


def test_a_fresh_read_is_bit_identical_and_skips_the_computation(folder):
  compute = _Counting(ARRAYS)
  assert _same(_disk_cache.arrays('key', compute), ARRAYS)
  assert _same(_disk_cache.arrays('key', compute), ARRAYS)
  assert compute.calls == 1
  assert len(list(folder.iterdir())) == 1
  assert _disk_cache.arrays('other key', compute) is not None
  assert compute.calls == 2


def test_a_changed_or_foreign_file_is_recomputed(folder):
  compute = _Counting(ARRAYS)
  _disk_cache.arrays('key', compute)
  (path,) = folder.iterdir()
  # The same layout with one mass changed: the checksum no longer matches.
  with np.load(path) as stored:
    fields = [stored[f'arr_{i}'] for i in range(len(stored.files))]
  fields[-1] = fields[-1] * 2
  with open(path, 'wb') as stream:
    np.savez(stream, *fields)
  assert _same(_disk_cache.arrays('key', compute), ARRAYS)
  assert compute.calls == 2
  # A valid file of another key under this key's name is not used.
  _disk_cache.arrays('another', _Counting((np.array([9.0]),)))
  other = next(p for p in folder.iterdir() if p != path)
  other.replace(path)
  assert _same(_disk_cache.arrays('key', compute), ARRAYS)
  assert compute.calls == 3
  path.write_bytes(b'not a file of numpy arrays')
  assert _same(_disk_cache.arrays('key', compute), ARRAYS)
  assert compute.calls == 4


def test_off_or_unwritable_only_computes(tmp_path, monkeypatch):
  compute = _Counting(ARRAYS)
  monkeypatch.setenv(_disk_cache.ENVIRONMENT_VARIABLE, 'off')
  assert _disk_cache.folder() is None
  _disk_cache.arrays('key', compute)
  _disk_cache.arrays('key', compute)
  assert compute.calls == 2
  blocked = tmp_path / 'a file, not a folder'
  blocked.write_text('')
  monkeypatch.setenv(_disk_cache.ENVIRONMENT_VARIABLE, str(blocked))
  assert _same(_disk_cache.arrays('key', compute), ARRAYS)
  assert compute.calls == 3
