"""Runs a command in a subprocess and measures its peak resident memory.

Tests used to cap address space (`ulimit -v`), which fails on many-core
machines where thread pools reserve gigabytes of address space they never
touch. The resident peak is what a user's machine pays; a watchdog kills the
command once its resident set passes the cap, so a runaway case fails its
test instead of exhausting the machine.

The command runs under a small watchdog process (this file as a script): a
child's `ru_maxrss` counts the pages it shared with its parent when forked,
so forking it straight from a large test process would report that
process's size.
"""

import json
import os
import signal
import subprocess
import sys
import time
from typing import List, NamedTuple


class Finished(NamedTuple):
  returncode: int
  stdout: str
  stderr: str
  peak_bytes: int


def _resident_bytes(pid: int) -> int:
  try:
    with open(f'/proc/{pid}/status', encoding='ascii') as status:
      for line in status:
        if line.startswith('VmRSS:'):
          return int(line.split()[1]) * 1024
  except OSError:  # exited meanwhile
    pass
  return 0


class Watched(NamedTuple):
  status: int  # as os.wait4 returns it
  peak_bytes: int
  reason: str  # why it was killed, or ''


def watch(pid: int, timeout: float, cap_bytes: int) -> Watched:
  """Waits for child `pid`; kills it past `timeout` s or `cap_bytes`
  resident."""
  deadline = time.monotonic() + timeout
  reason = ''
  while True:
    done, status, usage = os.wait4(pid, os.WNOHANG)
    if done:
      break
    if _resident_bytes(pid) > cap_bytes:
      reason = f'killed: resident memory above {cap_bytes} bytes'
    elif time.monotonic() > deadline:
      reason = f'killed: still running after {timeout} s'
    if reason:
      os.kill(pid, signal.SIGKILL)
      _, status, usage = os.wait4(pid, 0)
      break
    time.sleep(0.05)
  return Watched(status, usage.ru_maxrss * 1024, reason)


def _watch(report_fd: int, timeout: float, cap_bytes: int,
           command: List[str]) -> None:
  """Runs `command`; writes its exit status, peak and reason to report_fd."""
  report = os.fdopen(report_fd, 'w')
  pid = os.fork()
  if pid == 0:
    os.close(report_fd)
    os.execvp(command[0], command)
  watched = watch(pid, timeout, cap_bytes)
  json.dump({'returncode': os.waitstatus_to_exitcode(watched.status),
             'peak_bytes': watched.peak_bytes, 'reason': watched.reason},
            report)
  report.close()


def run(command: List[str], timeout: float, cap_bytes: int,
        cwd: str = '/') -> Finished:
  """Runs `command`; kills it past `timeout` seconds or `cap_bytes` resident."""
  read_end, write_end = os.pipe()
  try:
    result = subprocess.run(
        [sys.executable, os.path.abspath(__file__), str(write_end),
         str(timeout), str(cap_bytes), *command], capture_output=True,
        text=True, cwd=cwd, timeout=timeout + 60, pass_fds=(write_end,),
        check=False)
  finally:
    os.close(write_end)
  with os.fdopen(read_end) as report:
    watched = json.loads(report.read() or '{}')
  if not watched:
    raise RuntimeError(f'the watchdog failed: {result.stderr[-3000:]}')
  return Finished(
      watched['returncode'], result.stdout,
      result.stderr + ('\n' + watched['reason'] if watched['reason'] else ''),
      watched['peak_bytes'])


if __name__ == '__main__':
  _watch(int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
