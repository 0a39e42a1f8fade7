"""Shared plumbing for the Opacus examples: scikit-learn's digits, a linear
model, training."""

import argparse

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
import torch
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data import TensorDataset


def parser(description: str, *, noise_multiplier: float,
           noise_help: str) -> argparse.ArgumentParser:
  """The training flags both examples take."""
  arguments = argparse.ArgumentParser(description=description)
  arguments.add_argument('--epochs', type=int, default=15)
  arguments.add_argument('--batch-size', type=int, default=128,
                         help='expected participants per step (q = batch / n)')
  arguments.add_argument('--noise-multiplier', type=float,
                         default=noise_multiplier, help=noise_help)
  arguments.add_argument('--max-grad-norm', type=float, default=1.0)
  arguments.add_argument('--learning-rate', type=float, default=0.1)
  arguments.add_argument('--seed', type=int, default=0)
  return arguments


def digits(seed: int):
  """(training TensorDataset, (test features, test labels)), 80/20 split,
  standardized."""
  features, labels = load_digits(return_X_y=True)
  train_x, test_x, train_y, test_y = train_test_split(
      features, labels, test_size=0.2, random_state=seed, stratify=labels)
  scaler = StandardScaler().fit(train_x)
  as_tensors = lambda x, y: (torch.tensor(scaler.transform(x),
                                          dtype=torch.float32),
                             torch.tensor(y))
  return (TensorDataset(*as_tensors(train_x, train_y)),
          as_tensors(test_x, test_y))


def data(batch_size: int, seed: int):
  """(train DataLoader, (test inputs, test labels)): 80/20 split,
  standardized."""
  train, test = digits(seed)
  return DataLoader(train, batch_size=batch_size), test


def private_model(engine, *, batch_size, noise_multiplier, max_grad_norm,
                  learning_rate, seed):
  """Multinomial logistic regression made private by `engine`."""
  torch.manual_seed(seed)
  train_loader, test = data(batch_size, seed)
  model = nn.Linear(64, 10)
  optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
  model, optimizer, train_loader = engine.make_private(
      module=model, optimizer=optimizer, data_loader=train_loader,
      noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm)
  return model, optimizer, train_loader, test


def train_epoch(model, optimizer, train_loader):
  """One pass over the Poisson batches; returns the batch sizes seen."""
  sizes = []
  for inputs, labels in train_loader:
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(inputs), labels).backward()
    optimizer.step()
    sizes.append(len(inputs))
  return sizes


def accuracy(model, test) -> float:
  with torch.no_grad():
    return float((model(test[0]).argmax(dim=1) == test[1]).float().mean())
