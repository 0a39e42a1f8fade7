"""The Flower App examples/flower_digits_app, run as Flower users run apps.

`flwr run` submits the app to a local SuperLink (simulation mode); the test
starts that SuperLink itself, on free localhost ports and with its own
FLWR_HOME, so that it can stop it afterwards (`flwr run` would leave the one
it starts running in the background), then runs `flwr run` exactly as the
app's README says.
"""

import contextlib
import importlib
import json
import math
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

privacy_accounting = pytest.importorskip('flwr.supercore.privacy_accounting')
flower = pytest.importorskip('shuffle_accountants.adapters.flower')
from shuffle_accountants import DistributedCheckInEvent  # noqa: E402
from shuffle_accountants import ShufflePldAccountant  # noqa: E402

ROOT = pathlib.Path(__file__).parents[2]
APP = ROOT / 'examples' / 'flower_digits_app'
DELTA = 1e-5
SUPERLINK_START_SECONDS = 60
RUN_TIMEOUT_SECONDS = 600


def test_the_app_is_a_valid_flower_app_whose_components_load(monkeypatch):
  """What `flwr run` checks and loads before it submits the app."""
  config_utils = pytest.importorskip('flwr.cli.config_utils')
  pytest.importorskip('sklearn')
  config, warnings = config_utils.load_and_validate(APP / 'pyproject.toml')
  assert not warnings
  monkeypatch.syspath_prepend(str(APP))
  components = config['tool']['flwr']['app']['components']
  from flwr.clientapp import ClientApp
  from flwr.serverapp import ServerApp
  for name, kind in (('serverapp', ServerApp), ('clientapp', ClientApp)):
    module, attribute = components[name].split(':')
    assert isinstance(getattr(importlib.import_module(module), attribute),
                      kind)


def test_the_flower_extra_brings_what_the_app_imports():
  """Issue 39 row 9: the example needs scikit-learn, which [flower] did not
  bring; the app's own dependency names the extras it needs."""
  tomllib = pytest.importorskip('tomllib')
  extras = tomllib.loads((ROOT / 'pyproject.toml').read_text())['project'][
      'optional-dependencies']
  names = lambda extra: {
      requirement.split('[')[0].split('>')[0].split('=')[0].strip()
      for requirement in extras[extra]}
  assert {'flwr', 'scikit-learn'} <= names('flower')
  assert 'matplotlib' in names('plot')
  app = tomllib.loads((APP / 'pyproject.toml').read_text())['project']
  assert app['dependencies'] == ['shuffle-accountants[flower,plot]']


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


def flwr_run(tmp_path, num_clients: int, rounds: int) -> dict:
  """`flwr run APP --stream` on a local SuperLink: the metrics file the
  ServerApp writes from Flower's Results."""
  pytest.importorskip('ray')
  pytest.importorskip('sklearn')
  pytest.importorskip('matplotlib')
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
           str(APP), '--stream', '--run-config',
           f"num-clients={num_clients} rounds={rounds} "
           f"output-dir='{output}'", '--federation-config',
           f'num-supernodes={num_clients} client-resources-num-cpus=1'],
          env=environment, capture_output=True, text=True,
          timeout=RUN_TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired as timeout:
      pytest.fail(f'flwr run did not end within {RUN_TIMEOUT_SECONDS} s: '
                  f'{str(timeout.stdout)[-3000:]}')
  assert result.returncode == 0, result.stderr[-3000:]
  metrics = output / 'flower_digits_metrics.json'
  assert metrics.exists(), (result.stdout + result.stderr)[-3000:]
  return json.loads(metrics.read_text())


def check_rounds(rows, num_clients, rounds):
  """Every round's ε against a ledger composed directly; it learns."""
  central = flower.PldAccountant(privacy_accounting.PrivacyConfig(
      target_delta=DELTA, population_size=num_clients,
      neighboring_relation=privacy_accounting.NeighboringRelation
      .ADD_OR_REMOVE_ONE,
      sampling_method=privacy_accounting.SamplingMethod.NO_AMPLIFICATION))
  secagg = ShufflePldAccountant()
  secagg_event = DistributedCheckInEvent(
      num_clients, 0.5, 1.0 / math.sqrt(num_clients * 0.5))
  for mode, ledger in (('central', central), ('secagg', secagg)):
    assert [row[0] for row in rows[mode]] == list(range(rounds + 1))
    for _, _, epsilon in rows[mode][1:]:
      if mode == 'central':
        ledger.compose(privacy_accounting.GaussianPrivacyEvent(
            1.0, num_clients, num_clients))
      else:
        ledger.compose(secagg_event)
      assert epsilon == pytest.approx(ledger.get_epsilon(DELTA), abs=5e-7)
    accuracies = [row[1] for row in rows[mode]]
    assert accuracies[0] == pytest.approx(0.1, abs=0.02)  # the zero model
    assert accuracies[-1] > accuracies[0] + 0.25


@pytest.mark.slow
def test_flwr_run_quick_both_threat_models_and_the_epsilon_plot(tmp_path):
  metrics = flwr_run(tmp_path, num_clients=10, rounds=5)
  assert metrics['delta'] == DELTA
  check_rounds(metrics['rounds'], num_clients=10, rounds=5)
  # The per-round ε plot, from Flower's Result (issue 39 row 9).
  plot = tmp_path / 'output' / 'flower_digits_epsilon.png'
  assert plot.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


@pytest.mark.slow
def test_flwr_run_default_settings(tmp_path):
  check_rounds(flwr_run(tmp_path, num_clients=20, rounds=10)['rounds'],
               num_clients=20, rounds=10)
