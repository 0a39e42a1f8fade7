"""DP-SGD on scikit-learn's digits with three batch samplers, each with the epsilon it can honestly claim.

Logistic regression, central DP-SGD (Opacus), the same noise multiplier and
about the same batch size for all three samplers:

* Poisson subsampling (Opacus' default, accountant "prv");
* random allocation (`RandomAllocationSampler`, accountant
  "random_allocation": certified, below Poisson's epsilon);
* shuffled fixed-size batches (a shuffled DataLoader, accountant
  "shuffled_batches": the certified upper bound, and Chua et al.'s lower
  bound, which no analysis of shuffling can go below).

All epsilons are add/remove at delta = 1e-5.

Needs: pip install ".[opacus,examples,samplers]" (from a checkout)
Run:   python examples/samplers_digits.py [--quick]
"""  # noqa: E501

import argparse
import math
import warnings

from opacus import PrivacyEngine
import torch
from torch import nn
from torch.utils.data import DataLoader

import _digits
from shuffle_accountants.adapters.opacus import RandomAllocationSampler
from shuffle_accountants.adapters.opacus import install_data_loader_check

DELTA = 1e-5


def _parse_args():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--epochs', type=int, default=10)
  parser.add_argument('--batch-size', type=int, default=64)
  parser.add_argument('--noise-multiplier', type=float, default=1.0)
  parser.add_argument('--max-grad-norm', type=float, default=1.0)
  parser.add_argument('--learning-rate', type=float, default=0.5)
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--quick', action='store_true',
                      help='2 epochs (for the tests)')
  return parser.parse_args()


def _loaders(train, batch_size):
  """(name, accountant, data loader, poisson_sampling) per sampler."""
  steps = math.ceil(len(train) / batch_size)
  return [
      ('Poisson', 'prv', DataLoader(train, batch_size=batch_size), True),
      ('random allocation', 'random_allocation',
       DataLoader(train, batch_sampler=RandomAllocationSampler(len(train),
                                                               steps)), False),
      ('shuffled batches', 'shuffled_batches',
       DataLoader(train, batch_size=batch_size, shuffle=True), False),
  ]


def _train(arguments, accountant, data_loader, poisson_sampling, test):
  torch.manual_seed(arguments.seed)
  model = nn.Linear(64, 10)
  optimizer = torch.optim.SGD(model.parameters(), lr=arguments.learning_rate)
  engine = PrivacyEngine(accountant=accountant)
  model, optimizer, data_loader = engine.make_private(
      module=model, optimizer=optimizer, data_loader=data_loader,
      noise_multiplier=arguments.noise_multiplier,
      max_grad_norm=arguments.max_grad_norm, poisson_sampling=poisson_sampling)
  for _ in range(arguments.epochs):
    _digits.train_epoch(model, optimizer, data_loader)
  return _digits.accuracy(model, test), engine


def main():
  arguments = _parse_args()
  if arguments.quick:
    arguments.epochs = 2
  warnings.filterwarnings('ignore')  # Opacus' secure-RNG and hook notices
  # The stock make_private checks the data loader for our accountants.
  install_data_loader_check()
  train, test = _digits.digits(arguments.seed)
  print(f'n = {len(train)}, sigma = {arguments.noise_multiplier}, '
        f'{arguments.epochs} epochs, batch ~ {arguments.batch_size}, '
        f'delta = {DELTA:g}, add/remove')
  print(f'{"sampler":18} {"accuracy":>8}  epsilon')
  for name, accountant, loader, poisson in _loaders(train,
                                                     arguments.batch_size):
    accuracy, engine = _train(arguments, accountant, loader, poisson, test)
    if accountant == 'shuffled_batches':
      lower, upper = engine.accountant.get_epsilon_range(DELTA)
      claim = f'{upper:.3f} certified (lower bound {lower:.3f})'
    else:
      claim = f'{engine.get_epsilon(DELTA):.3f} certified'
    print(f'{name:18} {accuracy:8.3f}  {claim}')


if __name__ == '__main__':
  main()
