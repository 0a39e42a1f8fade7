"""Shared data of the Opacus examples: scikit-learn's digits, standardized, as tensors."""

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
import torch
from torch.utils.data import TensorDataset


def digits(seed: int):
  """(training TensorDataset, (test features, test labels)), 80/20 split."""
  features, labels = load_digits(return_X_y=True)
  train_x, test_x, train_y, test_y = train_test_split(
      features, labels, test_size=0.2, random_state=seed, stratify=labels)
  scaler = StandardScaler().fit(train_x)
  as_tensors = lambda x, y: (torch.tensor(scaler.transform(x),
                                          dtype=torch.float32),
                             torch.tensor(y))
  return (TensorDataset(*as_tensors(train_x, train_y)),
          as_tensors(test_x, test_y))
