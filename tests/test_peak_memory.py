"""The memory guard of the robustness tests measures and stops what it
should."""

import sys

import peak_memory

_ALLOCATE = 'import numpy; a = numpy.ones({} // 8); print(a.sum())'


def test_peak_resident_memory_is_measured():
  result = peak_memory.run(
      [sys.executable, '-c', _ALLOCATE.format(400 * 2**20)], timeout=120,
      cap_bytes=2 * 10**9)
  assert result.returncode == 0, result.stderr
  assert 400 * 2**20 <= result.peak_bytes < 2 * 10**9


def test_a_child_past_the_cap_or_the_time_limit_is_killed():
  grown = peak_memory.run(
      [sys.executable, '-c', _ALLOCATE.format(2 * 10**9)], timeout=120,
      cap_bytes=300 * 2**20)
  assert grown.returncode != 0 and 'resident memory above' in grown.stderr
  stuck = peak_memory.run([sys.executable, '-c', 'while True: pass'],
                          timeout=1, cap_bytes=10**9)
  assert stuck.returncode != 0 and 'still running after' in stuck.stderr
