"""A tiny Opacus training set-up shared by the adapter tests (needs torch;
import after importorskip)."""

import torch
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data import TensorDataset

NOISE_MULTIPLIER = 0.7
FEATURES = 500
CLASSES = 20


def make_data_loader(num_examples=640, batch_size=64, features=FEATURES):
  generator = torch.Generator().manual_seed(0)
  dataset = TensorDataset(
      torch.randn(num_examples, features, generator=generator),
      torch.randint(0, CLASSES, (num_examples,), generator=generator))
  return DataLoader(dataset, batch_size=batch_size)


def make_private(engine, features=FEATURES, **kwargs):
  """A linear model made private by `engine` (with epsilon if targeted)."""
  torch.manual_seed(0)
  model = nn.Linear(features, CLASSES, bias=False)
  optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
  kwargs.setdefault('data_loader', make_data_loader(features=features))
  kwargs.setdefault('max_grad_norm', 1.0)
  if 'target_epsilon' in kwargs:
    return engine.make_private_with_epsilon(module=model, optimizer=optimizer,
                                            **kwargs)
  kwargs.setdefault('noise_multiplier', NOISE_MULTIPLIER)
  return engine.make_private(module=model, optimizer=optimizer, **kwargs)


def released_noise(model, optimizer, participants):
  """One step on all-zero records: the gradient released is pure noise."""
  optimizer.zero_grad()
  inputs = torch.zeros(participants, FEATURES)
  labels = torch.zeros(participants, dtype=torch.long)
  nn.functional.cross_entropy(model(inputs), labels, reduction='sum').backward()
  optimizer.step()
  return model._module.weight.grad


def train(model, optimizer, data_loader, epochs=1):
  for _ in range(epochs):
    for inputs, labels in data_loader:
      optimizer.zero_grad()
      nn.functional.cross_entropy(model(inputs), labels).backward()
      optimizer.step()
