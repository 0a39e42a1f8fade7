"""Share of a DP-SGD run spent accounting, per Opacus accountant (issue 41).

Trains a small CNN with Opacus on synthetic 3x32x32 images (20,000 images,
batch 256: 79 steps per epoch, sigma = 1, C = 1; on CUDA when available,
else CPU) and asks `get_epsilon(1e-5)` after every epoch, for every
accountant this package registers and for Opacus' `rdp` and `prv`, each in a
fresh process. Prints, per accountant, the share of wall time spent
accounting, the first and the later per-query times, the epoch-E / epoch-3
query ratio, and the total accounting time as a ratio to Opacus `prv`'s in
the same run (the reference, so numbers compare across machines).

`--accounting-only` skips the training: the step hook's record of every step
is simulated (`accountant.step`), so the schedule's accounting (30 epochs on
a CPU) is measured in seconds; the share column is then empty.

Run: python benchmarks/gpu_share.py [--epochs 5] [--accounting-only]
  [--examples 20000] [--batch 256] [--accountants prv,random_allocation]
"""

import argparse
import json
import math
import subprocess
import sys
import time

from opacus import PrivacyEngine
from opacus.accountants import create_accountant
import torch
from torch import nn
from torch.utils import data

# Importing the adapter registers this package's accountants with Opacus.
from shuffle_accountants import _json
from shuffle_accountants.adapters import opacus as adapter

DELTA = 1e-5
NOISE_MULTIPLIER = 1.0
REFERENCE = 'prv'
OPACUS_ACCOUNTANTS = ('rdp', 'prv')
# The schedule of the issue; the random allocation sampler places each
# example in one of the epoch's len(data_loader) steps.
EXAMPLES, BATCH = 20_000, 256


def registered_accountants() -> tuple:
  """This package's Opacus accountant names, then Opacus' references."""
  ours = (adapter.MECHANISM, adapter.DISTRIBUTED_MECHANISM,
          adapter.RDP_MECHANISM, adapter.DISTRIBUTED_RDP_MECHANISM,
          *(name for name, _ in adapter.ACCOUNTANTS))
  return ours + OPACUS_ACCOUNTANTS


def _steps_per_epoch(examples: int, batch: int) -> int:
  return math.ceil(examples / batch)


def _model():
  return nn.Sequential(
      nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
      nn.Flatten(), nn.Linear(32 * 8 * 8, 10))


def _data_loader(name: str, examples: int, batch: int):
  generator = torch.Generator().manual_seed(0)
  dataset = data.TensorDataset(
      torch.randn(examples, 3, 32, 32, generator=generator),
      torch.randint(0, 10, (examples,), generator=generator))
  if name == adapter.RANDOM_ALLOCATION:
    sampler = adapter.RandomAllocationSampler(
        examples, _steps_per_epoch(examples, batch))
    return data.DataLoader(dataset, batch_sampler=sampler)
  return data.DataLoader(dataset, batch_size=batch,
                         shuffle=name == adapter.SHUFFLED_BATCHES)


def _private_run(name: str, examples: int, batch: int):
  """(model, optimizer, data loader, accountant) made private for `name`."""
  device = 'cuda' if torch.cuda.is_available() else 'cpu'
  torch.manual_seed(0)
  model = _model().to(device)
  engine = (PrivacyEngine(accountant=name) if name in OPACUS_ACCOUNTANTS
            else adapter.ShufflePrivacyEngine(accountant=name))
  model, optimizer, loader = engine.make_private(
      module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.05),
      data_loader=_data_loader(name, examples, batch),
      noise_multiplier=NOISE_MULTIPLIER, max_grad_norm=1.0,
      poisson_sampling=name not in (adapter.RANDOM_ALLOCATION,
                                    adapter.SHUFFLED_BATCHES))
  return model, optimizer, loader, engine.accountant, device


def _train_epoch(model, optimizer, loader, device) -> None:
  for inputs, labels in loader:
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(inputs.to(device)),
                                labels.to(device)).backward()
    optimizer.step()


def run_one(name: str, epochs: int, examples: int, batch: int,
            accounting_only: bool) -> dict:
  """One accountant's run in this process: times of every query."""
  if accounting_only:
    accountant = create_accountant(name)
    if hasattr(accountant, 'num_users'):
      accountant.num_users = examples
    steps = _steps_per_epoch(examples, batch)
  else:
    model, optimizer, loader, accountant, device = _private_run(
        name, examples, batch)
  queries, epsilon = [], math.nan
  wall_start = time.perf_counter()
  for _ in range(epochs):
    if accounting_only:
      for _ in range(steps):
        accountant.step(noise_multiplier=NOISE_MULTIPLIER,
                        sample_rate=1 / steps)
    else:
      _train_epoch(model, optimizer, loader, device)
    query_start = time.perf_counter()
    epsilon = accountant.get_epsilon(DELTA)
    queries.append(time.perf_counter() - query_start)
  return dict(name=name, queries=queries, epsilon=epsilon,
              wall=time.perf_counter() - wall_start,
              device=None if accounting_only else device)


def _child(name: str, args) -> dict:
  command = [sys.executable, __file__, '--child', name,
             '--epochs', str(args.epochs), '--examples', str(args.examples),
             '--batch', str(args.batch)]
  if args.accounting_only:
    command.append('--accounting-only')
  output = subprocess.run(command, check=True, capture_output=True,
                          text=True).stdout
  return json.loads(output.strip().splitlines()[-1])


def table(results: list, accounting_only: bool) -> str:
  """The printed table: shares, query times and ratios to Opacus prv."""
  reference = next((sum(r['queries']) for r in results
                    if r['name'] == REFERENCE), math.nan)
  lines = [f'{"accountant":24} {"share %":>8} {"first s":>8} '
           f'{"later s":>15} {"last/3rd":>9} {"total s":>8} '
           f'{"x prv":>7} {"epsilon":>9}']
  for r in results:
    queries = r['queries']
    total = sum(queries)
    later = queries[1:] or [math.nan]
    share = ('' if accounting_only
             else f'{100 * total / r["wall"]:.1f}')
    last_over_third = (queries[-1] / queries[2] if len(queries) > 3
                       else math.nan)
    lines.append(
        f'{r["name"]:24} {share:>8} {queries[0]:8.3f} '
        f'{min(later):7.3f}-{max(later):<7.3f} {last_over_third:9.2f} '
        f'{total:8.3f} {total / reference:7.2f} {r["epsilon"]:9.4f}')
  return '\n'.join(lines)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--epochs', type=int, default=5)
  parser.add_argument('--examples', type=int, default=EXAMPLES)
  parser.add_argument('--batch', type=int, default=BATCH)
  parser.add_argument('--accounting-only', action='store_true',
                      help='simulate the steps instead of training')
  parser.add_argument('--accountants', default=None,
                      help='comma-separated names (default: all registered '
                      'and Opacus rdp, prv)')
  parser.add_argument('--child', help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  if args.child:
    print(_json.dumps(run_one(args.child, args.epochs, args.examples,
                              args.batch, args.accounting_only)))
    return
  names = (args.accountants.split(',') if args.accountants
           else registered_accountants())
  if REFERENCE not in names:
    names = [*names, REFERENCE]
  results = [_child(name, args) for name in names]
  device = results[0]['device'] or 'none (accounting only)'
  print(f'{args.epochs} epochs of {_steps_per_epoch(args.examples, args.batch)}'
        f' steps, sigma = {NOISE_MULTIPLIER:g}, get_epsilon({DELTA:g}) after '
        f'each; training device: {device}; each accountant in a fresh process')
  print(table(results, args.accounting_only))


if __name__ == '__main__':
  main()
