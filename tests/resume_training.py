"""A small Opacus run that checkpoints, shared by the resume tests (needs
torch).

Run as a script (`python resume_training.py MECHANISM PATH STEPS`) it trains
with accountant MECHANISM, saves a checkpoint to PATH after STEPS steps,
prints `checkpoint written` and trains on until it is killed (or, should
nobody kill it, stops with exit code 3 after 100 times as many steps).
"""

import sys

from opacus import PrivacyEngine
from torch import nn

import opacus_training
from shuffle_accountants.adapters import opacus as adapter

# The stock PrivacyEngine checks the data loader only after this call.
adapter.install_data_loader_check()

FEATURES = 20
STEPS_PER_EPOCH = 10
WRITTEN = 'checkpoint written'


def start(mechanism: str):
  """(engine, model, optimizer, data_loader) of a fresh, seeded run."""
  if mechanism == adapter.MECHANISM:
    engine, poisson_sampling = adapter.ShufflePrivacyEngine(), True
  else:  # the sampler accountants train the loader's fixed-size batches
    engine, poisson_sampling = PrivacyEngine(accountant=mechanism), False
  data_loader = opacus_training.make_data_loader(
      num_examples=32 * STEPS_PER_EPOCH, batch_size=32, features=FEATURES)
  model, optimizer, data_loader = opacus_training.make_private(
      engine, features=FEATURES, data_loader=data_loader,
      poisson_sampling=poisson_sampling)
  return engine, model, optimizer, data_loader


def train(model, optimizer, data_loader, steps: int, after_step=None) -> None:
  """`steps` optimizer steps over as many epochs as they take."""
  done = 0
  while done < steps:
    for inputs, labels in data_loader:
      optimizer.zero_grad()
      nn.functional.cross_entropy(model(inputs), labels).backward()
      optimizer.step()
      done += 1
      if after_step is not None:
        after_step(done)
      if done == steps:
        return


def main(mechanism: str, path: str, steps: int) -> int:
  engine, model, optimizer, data_loader = start(mechanism)

  def checkpoint(done: int) -> None:
    if done == steps:
      engine.save_checkpoint(path=path, module=model, optimizer=optimizer)
      print(WRITTEN, flush=True)

  train(model, optimizer, data_loader, 100 * steps, checkpoint)
  return 3


if __name__ == '__main__':
  sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
