"""The task of the SecAgg+ Flower App: Skellam noise against the Gaussian sum.

Each client holds a share of `sklearn.datasets.load_digits` and trains a
multinomial logistic regression (numpy, bias folded into the features:
d = 65 x 10 = 650 parameters) for a few local steps per round. Two
mechanisms, every client in every round, the same clipping norm C:

* ``skellam``: the Flower run (`server_app.py`, `client_app.py`) of
  Flower's ``SecAggPlusWorkflow`` + ``secaggplus_mod``, with `skellam_mod`
  (clip, scale by g, random rounding, Sk(mu / n) noise, mod 2^bits) and
  `SkellamSecAggFedAvg`, which decodes the modular sum and accounts each
  round as the `SkellamSecureSumEvent` released (SKELLAM-SUM,
  `ShuffleRdpAccountant`).
* ``gaussian``: the continuous Gaussian sum simulated in numpy (the clipped
  updates summed plus N(0, (sigma C)^2 I)), sigma calibrated so that its
  epsilon (`ShuffleRdpAccountant`, replace-one, the same route) equals the
  Skellam run's; next to it the Skellam release simulated in numpy with the
  same `encode_update` (both averaged over a few seeds, the Flower run is
  one).

`report` prints the Flower run's per-round lines ``skellam round accuracy
epsilon`` and a table with the settings (bits, modulus, clipping range,
granularity, a bound on the probability that a coordinate wraps around).
"""

import json
import math
import pathlib
import types

from dp_accounting import dp_event
from flwr.client import NumPyClient
from flwr.common import ndarrays_to_parameters
import numpy as np
from scipy import optimize
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.adapters.flower import secagg

DELTA = 1e-5
CLASSES = 10
# Below this multiple of chance (1 / CLASSES) the run is reported as a
# smoke test, not a trained model.
USEFUL_OVER_CHANCE = 2.0
DIMENSION = 65 * CLASSES
SEED = 0


def split():
  """(train features, train labels, test features, test labels), 80/20,
  standardized, with a constant feature for the bias."""
  features, labels = load_digits(return_X_y=True)
  train_x, test_x, train_y, test_y = train_test_split(
      features, labels, test_size=0.2, random_state=SEED, stratify=labels)
  scaler = StandardScaler().fit(train_x)
  with_bias = lambda x: np.hstack([scaler.transform(x),
                                   np.ones((len(x), 1))])
  return with_bias(train_x), train_y, with_bias(test_x), test_y


def train_locally(model, features, labels, steps: int, rate: float):
  """`steps` full-batch gradient steps of the softmax cross-entropy."""
  targets = np.eye(CLASSES)[labels]
  for _ in range(steps):
    scores = features @ model
    scores = np.exp(scores - scores.max(axis=1, keepdims=True))
    residual = scores / scores.sum(axis=1, keepdims=True) - targets
    model = model - rate * features.T @ residual / len(labels)
  return model


def accuracy(model, features, labels) -> float:
  return float(np.mean((features @ model).argmax(axis=1) == labels))


def partition(index: int, parts: int):
  train_x, train_y, _, _ = split()
  return train_x[index::parts], train_y[index::parts]


class DigitsClient(NumPyClient):
  """One client's share of the training set."""

  def __init__(self, features, labels, steps, rate):
    self.features, self.labels = features, labels
    self.steps, self.rate = steps, rate

  def fit(self, parameters, config):
    del config
    model = train_locally(parameters[0], self.features, self.labels,
                          self.steps, self.rate)
    return [model], len(self.labels), {}


def settings_from(run_config) -> types.SimpleNamespace:
  """The run config ([tool.flwr.app.config]) with mu, the Skellam noise of
  a Gaussian sum with multiplier sigma on the rounded vectors' norm bound
  g C + sqrt(d)."""
  settings = types.SimpleNamespace(
      clients=int(run_config['num-clients']),
      rounds=int(run_config['rounds']), clip=float(run_config['clip']),
      noise_multiplier=float(run_config['noise-multiplier']),
      granularity=float(run_config['granularity']),
      bits=int(run_config['bits']), steps=int(run_config['steps']),
      rate=float(run_config['rate']), seeds=int(run_config['seeds']),
      out_dir=str(run_config['output-dir']))
  for name, value, least in (('num-clients', settings.clients, 2),
                             ('rounds', settings.rounds, 1)):
    if value < least:
      raise ValueError(f'run config {name!r} is {value}; allowed: an integer '
                       f'>= {least}')
  settings.mu = (settings.noise_multiplier * (
      settings.granularity * settings.clip + math.sqrt(DIMENSION)))**2
  return settings


def client(context) -> NumPyClient:
  """The client of this node's partition (the ClientApp's client_fn)."""
  settings = settings_from(context.run_config)
  features, labels = partition(int(context.node_config['partition-id']),
                               int(context.node_config['num-partitions']))
  return DigitsClient(features, labels, settings.steps, settings.rate)


def skellam_strategy(settings, accuracies: list):
  """`SkellamSecAggFedAvg` evaluating on the public split into
  `accuracies`."""
  _, _, test_x, test_y = split()

  def evaluate(server_round, arrays, config):
    del server_round, config
    accuracies.append(accuracy(arrays[0], test_x, test_y))
    return 0.0, {'accuracy': accuracies[-1]}

  return secagg.SkellamSecAggFedAvg(
      clipping_norm=settings.clip, granularity=settings.granularity,
      noise_variance=settings.mu, modulus_bits=settings.bits,
      target_delta=DELTA, fraction_fit=1.0,
      min_fit_clients=settings.clients,
      min_available_clients=settings.clients, evaluate_fn=evaluate,
      initial_parameters=ndarrays_to_parameters(
          [np.zeros((test_x.shape[1], CLASSES))]))


def gaussian_epsilon(noise_multiplier: float, rounds: int) -> float:
  accountant = ShuffleRdpAccountant()
  accountant.compose(dp_event.GaussianDpEvent(noise_multiplier), rounds)
  return accountant.get_epsilon(DELTA)


def matched_noise_multiplier(epsilon: float, rounds: int) -> float:
  """The sigma whose Gaussian sum reaches `epsilon` after `rounds`."""
  return optimize.brentq(lambda s: gaussian_epsilon(s, rounds) - epsilon,
                         0.05, 100.0, xtol=1e-10)


def gaussian_sum(settings, noise_multiplier):
  """The continuous Gaussian sum of the clipped updates, over n."""
  def aggregate(updates, rng):
    total = sum(u * min(1.0, settings.clip / np.linalg.norm(u))
                for u in updates)
    noise = rng.normal(0.0, noise_multiplier * settings.clip, total.shape)
    return (total + noise) / len(updates)
  return aggregate


def skellam_sum(settings):
  """What the Flower run releases, simulated with the same `encode_update`
  and the modular sum decoded, over n."""
  m = 2**settings.bits
  def aggregate(updates, rng):
    uploads = [secagg.encode_update(
        [u], settings.clip, settings.granularity, settings.mu / len(updates),
        m, rng)[0] for u in updates]
    residue = np.mod(sum(u + m // 2 for u in uploads), m)
    residue = np.where(residue >= m // 2, residue - m, residue)
    return residue / (settings.granularity * len(updates))
  return aggregate


def simulated_run(settings, aggregate, seed: int):
  """Federated averaging with `aggregate`, in numpy: the final accuracy."""
  rng = np.random.default_rng(seed)
  train_x, train_y, test_x, test_y = split()
  parts = [(train_x[i::settings.clients], train_y[i::settings.clients])
           for i in range(settings.clients)]
  model = np.zeros((train_x.shape[1], CLASSES))
  for _ in range(settings.rounds):
    model = model + aggregate([
        train_locally(model, features, labels, settings.steps,
                      settings.rate) - model for features, labels in parts],
                              rng)
  return accuracy(model, test_x, test_y)


def report(settings, skellam_accuracies, strategy) -> dict:
  """Prints the Flower run's rounds and the comparison table; returns
  them, also written to DIR/flower_secagg_metrics.json if `out_dir`.

  `skellam_accuracies` has one evaluation per round (0 = the initial
  model), released or not; a round SecAgg+ released nothing in keeps the
  epsilon of the rounds before it.
  """
  epsilons = [max([r.epsilon for r in strategy.rounds
                   if r.server_round <= index], default=0.0)
              for index in range(len(skellam_accuracies))]
  for index, value in enumerate(skellam_accuracies):
    print(f'skellam {index} {value:.4f} {epsilons[index]:.6f}', flush=True)
  released = len(strategy.rounds)
  # The Gaussian sum of as many releases, at the same epsilon.
  sigma = (matched_noise_multiplier(epsilons[-1], released) if released
           else None)
  seeds = range(settings.seeds)
  mean = lambda aggregate: float(np.mean([
      simulated_run(settings, aggregate, seed) for seed in seeds]))
  wrap = secagg.wraparound_probability_bound(
      DIMENSION, settings.clients, settings.clip, settings.granularity,
      settings.mu, settings.bits)
  print(f'# n={settings.clients} rounds={settings.rounds} C={settings.clip} '
        f'd={DIMENSION} delta={DELTA:g}')
  print(f'# SecAgg+: modulus m = 2^{settings.bits}, clipping_range = '
        f'{2**(settings.bits - 1)}, quantization_range = 2^{settings.bits}, '
        f'modulus_range = 2^32; granularity g = {settings.granularity:g}, '
        f'mu = {settings.mu:.6g}; P[a coordinate wraps] <= {wrap:.2e} per '
        'round')
  rows = [
      ('Skellam, Flower SecAgg+ (1 run)', epsilons[-1],
       skellam_accuracies[-1]),
      (f'Skellam, simulated ({len(seeds)} seeds)', epsilons[-1],
       mean(skellam_sum(settings)))]
  if sigma is not None:  # nothing released: no Gaussian to match
    rows.append((f'Gaussian sum sigma={sigma:.3f} ({len(seeds)} seeds)',
                 gaussian_epsilon(sigma, released),
                 mean(gaussian_sum(settings, sigma))))
  rows.append(('no noise', math.inf, mean(gaussian_sum(settings, 0.0))))
  print(f'# {"mechanism":<38} {"epsilon":>8} {"accuracy":>9}')
  for name, epsilon, value in rows:
    print(f'# {name:<38} {epsilon:>8.3f} {value:>9.4f}')
  print(f'# rounds released by SecAgg+: {released} of {settings.rounds}')
  useful = skellam_accuracies[-1] >= USEFUL_OVER_CHANCE / CLASSES
  if not useful:
    print(f'# SMOKE TEST: accuracy {skellam_accuracies[-1]:.3f} is near '
          f'chance ({1 / CLASSES:.2f}): with {settings.clients} clients the '
          f'noise (noise-multiplier={settings.noise_multiplier:g} on the sum) '
          'drowns the updates. The pipeline ran; for a useful model run the '
          'defaults (20 clients, 10 rounds).')
  results = {
      'delta': DELTA, 'mu': settings.mu, 'wraparound_bound': wrap,
      'released_rounds': [r.server_round for r in strategy.rounds],
      'useful': useful,
      'rounds': [[index, value, epsilons[index]]
                 for index, value in enumerate(skellam_accuracies)],
      'gaussian_noise_multiplier': sigma,
      'table': [[name, None if math.isinf(epsilon) else epsilon, value]
                for name, epsilon, value in rows]}
  if settings.out_dir:
    path = pathlib.Path(settings.out_dir) / 'flower_secagg_metrics.json'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results))
    print(f'# metrics: {path}', flush=True)
  return results
