"""The digits task of the Flower App: data, model, training, strategies, plot.

Each client holds a share of `sklearn.datasets.load_digits` and trains a
multinomial logistic regression (numpy) for a few local gradient steps per
round; the server evaluates the global model on a held-out public split
(``evaluate_fn``: the clients' own evaluation would release unaccounted
metrics). Two threat models:

* ``central``: Flower's own ``DifferentialPrivacyServerSideFixedClipping``
  with ``accountant=PldAccountant(...)`` (trusted server, no amplification,
  add-or-remove-one): every client takes part in every round.
* ``secagg``: `DistributedNoiseFixedClipping` with `distributed_noise_mod`:
  each client checks in with probability q, clips its update and adds its
  noise share; a secure sum would show the server only the sum and who
  took part (``participation='revealed'``), accounted as one
  `DistributedCheckInEvent` per round. Here the sum is simulated (the
  strategy warns so, and its metrics carry the ε of what this server sees).

`server_app.py` and `client_app.py` build Flower's apps from these pieces;
run them with ``flwr run`` (README.md).
"""

import json
import pathlib

from flwr.app import ArrayRecord
from flwr.app import Message
from flwr.app import MetricRecord
from flwr.app import RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp.strategy import DifferentialPrivacyServerSideFixedClipping
from flwr.serverapp.strategy import FedAvg
from flwr.supercore.privacy_accounting import NeighboringRelation
from flwr.supercore.privacy_accounting import PrivacyConfig
from flwr.supercore.privacy_accounting import SamplingMethod
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from shuffle_accountants.adapters.flower import DistributedNoiseFixedClipping
from shuffle_accountants.adapters.flower import PldAccountant
from shuffle_accountants.adapters.flower import distributed_noise_mod

DELTA = 1e-5
NUM_CLASSES = 10
LOCAL_STEPS = 10
LEARNING_RATE = 0.5
SEED = 0
ACTION = 'distributed_noise'


def digits():
  """((train x, train y), (test x, test y)): 80/20, standardized."""
  features, labels = load_digits(return_X_y=True)
  train_x, test_x, train_y, test_y = train_test_split(
      features, labels, test_size=0.2, random_state=SEED, stratify=labels)
  scaler = StandardScaler().fit(train_x)
  return ((scaler.transform(train_x), train_y),
          (scaler.transform(test_x), test_y))


def initial_model() -> ArrayRecord:
  return ArrayRecord(numpy_ndarrays=[np.zeros((64, NUM_CLASSES)),
                                     np.zeros(NUM_CLASSES)])


def predict(weights, bias, features):
  return features @ weights + bias


def local_training(weights, bias, features, labels):
  """LOCAL_STEPS full-batch gradient steps of the cross-entropy."""
  onehot = np.eye(NUM_CLASSES)[labels]
  for _ in range(LOCAL_STEPS):
    logits = predict(weights, bias, features)
    logits -= logits.max(axis=1, keepdims=True)
    probabilities = np.exp(logits)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    error = (probabilities - onehot) / len(labels)
    weights = weights - LEARNING_RATE * features.T @ error
    bias = bias - LEARNING_RATE * error.sum(axis=0)
  return weights, bias


def client_app() -> ClientApp:
  """Default train function for central DP (the server clips), and the
  action ``distributed_noise`` with the mod that clips and adds a share."""
  app = ClientApp()
  train_set, _ = digits()

  def train(msg: Message, context) -> Message:
    partition = int(context.node_config['partition-id'])
    parts = int(context.node_config['num-partitions'])
    features, labels = (part[partition::parts] for part in train_set)
    weights, bias = msg.content['arrays'].to_numpy_ndarrays()
    weights, bias = local_training(weights, bias, features, labels)
    return Message(content=RecordDict({
        'arrays': ArrayRecord(numpy_ndarrays=[weights, bias]),
        'metrics': MetricRecord({'num-examples': 1})}), reply_to=msg)

  app.train()(train)
  app.train(ACTION, mods=[distributed_noise_mod])(train)
  return app


def strategy_for(mode: str, num_clients: int, noise_multiplier: float,
                 clipping_norm: float, checkin_rate: float):
  """(strategy, a function returning its certified ε so far)."""
  fedavg = FedAvg(fraction_train=1.0, fraction_evaluate=0.0,
                  min_available_nodes=num_clients, min_train_nodes=num_clients)
  if mode == 'central':
    accountant = PldAccountant(PrivacyConfig(
        target_delta=DELTA, population_size=num_clients,
        neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE,
        sampling_method=SamplingMethod.NO_AMPLIFICATION))
    strategy = DifferentialPrivacyServerSideFixedClipping(
        fedavg, noise_multiplier, clipping_norm, num_clients,
        accountant=accountant)
    return strategy, lambda: accountant.get_privacy_spent().epsilon
  strategy = DistributedNoiseFixedClipping(
      fedavg, noise_multiplier, clipping_norm, num_users=num_clients,
      checkin_rate=checkin_rate, target_delta=DELTA, train_action=ACTION)
  return strategy, strategy.epsilon


def plot_epsilon(rows, out_dir: str) -> pathlib.Path:
  """Each mode's certified ε after each round (`run_modes`' rows)."""
  import matplotlib
  matplotlib.use('Agg')
  from matplotlib import pyplot
  figure, axes = pyplot.subplots(figsize=(5, 3.5))
  for mode, mode_rows in rows.items():
    axes.plot([row[0] for row in mode_rows], [row[2] for row in mode_rows],
              marker='o', label=mode)
  axes.set_xlabel('round')
  axes.set_ylabel(f'certified ε at δ = {DELTA:g}')
  axes.legend()
  path = pathlib.Path(out_dir) / 'flower_digits_epsilon.png'
  figure.savefig(path, dpi=100, bbox_inches='tight')
  pyplot.close(figure)
  return path


def run_modes(grid, modes, num_clients: int, rounds: int, out_dir: str,
              **settings) -> dict:
  """Runs each mode's strategy in turn on the grid's clients.

  Prints, per round, the lines ``mode round accuracy epsilon``; returns
  {mode: [[round, accuracy, epsilon], ...]} read from each Flower
  ``Result`` and, if `out_dir` is not empty, writes it to
  DIR/flower_digits_metrics.json and plots it (flower_digits_epsilon.png).
  """
  _, (test_x, test_y) = digits()
  results = {}
  for mode in modes:
    strategy, epsilon = strategy_for(mode, num_clients, **settings)

    def evaluate(server_round: int, arrays: ArrayRecord,
                 mode=mode, epsilon=epsilon) -> MetricRecord:
      weights, bias = arrays.to_numpy_ndarrays()
      accuracy = float(np.mean(
          predict(weights, bias, test_x).argmax(axis=1) == test_y))
      print(f'{mode} {server_round} {accuracy:.4f} {epsilon():.6f}',
            flush=True)
      return MetricRecord({'accuracy': accuracy, 'dp-epsilon': epsilon()})

    results[mode] = strategy.start(
        grid=grid, initial_arrays=initial_model(), num_rounds=rounds,
        evaluate_fn=evaluate)
  rows = {mode: [[server_round, metrics['accuracy'], metrics['dp-epsilon']]
                 for server_round, metrics in sorted(
                     result.evaluate_metrics_serverapp.items())]
          for mode, result in results.items()}
  if out_dir:
    path = pathlib.Path(out_dir) / 'flower_digits_metrics.json'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({'delta': DELTA, 'rounds': rows}, indent=1))
    print(f'# metrics: {path}\n# plot: {plot_epsilon(rows, out_dir)}',
          flush=True)
  return rows
