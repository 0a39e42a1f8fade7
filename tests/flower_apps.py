"""`flwr run` of an example Flower App on a local SuperLink of the test's own.

`flwr run` submits an app to a local SuperLink (simulation mode), which it
starts in the background and leaves running. The tests start that SuperLink
themselves, on free localhost ports and with their own FLWR_HOME, so that
they can stop it afterwards, then run `flwr run` as the apps' READMEs say.
"""

import contextlib
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

SUPERLINK_START_SECONDS = 60
RUN_TIMEOUT_SECONDS = 600


def free_port() -> int:
  with socket.socket() as probe:
    probe.bind(('127.0.0.1', 0))
    return probe.getsockname()[1]


@contextlib.contextmanager
def local_superlink(environment):
  """The SuperLink `flwr run` would start, as a process group of ours."""
  executable = shutil.which('flower-superlink',
                            path=os.path.dirname(sys.executable))
  if executable is None:
    pytest.skip('flower-superlink is not installed next to this Python')
  log_file = pathlib.Path(environment['FLWR_HOME']) / 'superlink.log'
  port = environment['FLWR_LOCAL_SUPERLINK_HTTP_API_PORT']
  process = subprocess.Popen(  # pylint: disable=consider-using-with
      [executable, '--insecure', '--simulation', '--isolation', 'subprocess',
       '--control-api-address',
       f"127.0.0.1:{environment['FLWR_LOCAL_CONTROL_API_PORT']}",
       '--host', '127.0.0.1', '--port', port, '--log-file', str(log_file)],
      env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
      start_new_session=True)
  try:
    httpx = pytest.importorskip('httpx')
    deadline = time.monotonic() + SUPERLINK_START_SECONDS
    while True:
      with contextlib.suppress(httpx.HTTPError):
        if httpx.get(f'http://127.0.0.1:{port}/health', timeout=1).is_success:
          break
      if process.poll() is not None or time.monotonic() > deadline:
        log = log_file.read_text()[-2000:] if log_file.exists() else ''
        pytest.skip('the local SuperLink could not start in this sandbox '
                    f'(exit code {process.poll()}): {log}')
      time.sleep(0.2)
    yield
  finally:
    with contextlib.suppress(ProcessLookupError):
      os.killpg(process.pid, signal.SIGTERM)
    try:
      process.wait(timeout=30)
    except subprocess.TimeoutExpired:
      os.killpg(process.pid, signal.SIGKILL)
      process.wait()


def flwr_run(app: pathlib.Path, tmp_path: pathlib.Path, run_config: str,
             num_supernodes: int) -> dict:
  """`flwr run APP --stream` with `run_config`, in which ``{OUT}`` stands
  for an output directory: {file name: parsed JSON} of the files the
  ServerApp wrote there."""
  pytest.importorskip('ray')
  pytest.importorskip('sklearn')
  home = tmp_path / 'flwr-home'
  home.mkdir()
  environment = dict(
      os.environ, FLWR_HOME=str(home),
      FLWR_LOCAL_SUPERLINK_HTTP_API_PORT=str(free_port()),
      FLWR_LOCAL_CONTROL_API_PORT=str(free_port()),
      # The app's dependencies are installed here (`uv sync` would need
      # the network).
      FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION='1')
  output = tmp_path / 'output'
  with local_superlink(environment):
    try:
      result = subprocess.run(
          [os.path.join(os.path.dirname(sys.executable), 'flwr'), 'run',
           str(app), '--stream', '--run-config',
           run_config.replace('{OUT}', f"'{output}'"), '--federation-config',
           f'num-supernodes={num_supernodes} client-resources-num-cpus=1'],
          env=environment, capture_output=True, text=True,
          timeout=RUN_TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired as timeout:
      pytest.fail(f'flwr run did not end within {RUN_TIMEOUT_SECONDS} s: '
                  f'{str(timeout.stdout)[-3000:]}')
  log = (result.stdout + result.stderr)[-3000:]
  assert result.returncode == 0, log
  written = {path.name: json.loads(path.read_text())
             for path in output.glob('*.json')} if output.exists() else {}
  assert written, log
  return written
