"""Runs a command in a subprocess and measures its peak resident memory.

Tests used to cap address space (`ulimit -v`), which fails on many-core
machines where thread pools reserve gigabytes of address space they never
touch. The resident peak is what a user's machine pays; a watchdog kills the
child once its resident set passes the cap, so a runaway case fails its test
instead of exhausting the machine.
"""

import os
import signal
import subprocess
import tempfile
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


def run(command: List[str], timeout: float, cap_bytes: int,
        cwd: str = '/') -> Finished:
  """Runs `command`; kills it past `timeout` seconds or `cap_bytes` resident."""
  with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
    process = subprocess.Popen(command, stdout=out, stderr=err, cwd=cwd)
    deadline = time.monotonic() + timeout
    reason = ''
    while True:
      pid, status, usage = os.wait4(process.pid, os.WNOHANG)
      if pid:
        break
      if _resident_bytes(process.pid) > cap_bytes:
        reason = f'killed: resident memory above {cap_bytes} bytes'
      elif time.monotonic() > deadline:
        reason = f'killed: still running after {timeout} s'
      if reason:
        os.kill(process.pid, signal.SIGKILL)
        pid, status, usage = os.wait4(process.pid, 0)
        break
      time.sleep(0.05)
    process.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    err.seek(0)
    stderr = err.read().decode(errors='replace')
    return Finished(process.returncode, out.read().decode(),
                    stderr + ('\n' + reason if reason else ''),
                    usage.ru_maxrss * 1024)
