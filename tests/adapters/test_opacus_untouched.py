"""Opacus' own accountants train and account the same with or without
shuffle-accountants imported.

Each run is a fresh interpreter: Opacus' "prv" or "rdp" accountant trains the
tiny model of `opacus_training` once with Poisson sampling and once on
fixed-size batches (``poisson_sampling=False``, which Opacus accepts and our
sampler contract refuses for our own accountants), after importing nothing of
ours, `shuffle_accountants`, or the Opacus adapter. The epsilons and the
trained parameters must agree bit for bit, and an error (there should be
none) would have to be the same too.
"""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip('torch')
pytest.importorskip('opacus')

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

IMPORTS = {
    'nothing of ours': '',
    'shuffle_accountants': 'import shuffle_accountants',
    'the Opacus adapter': 'import shuffle_accountants.adapters.opacus',
}

# Trains with `accountant` under both samplings; prints one JSON line.
RUN = '''
import hashlib, json, sys, warnings
sys.path.insert(0, {tests!r})
{imports}
import torch
from opacus import PrivacyEngine
import opacus_training

warnings.simplefilter('ignore')
results = {{}}
for poisson_sampling in (True, False):
  torch.manual_seed(0)
  engine = PrivacyEngine(accountant={accountant!r})
  try:
    model, optimizer, loader = opacus_training.make_private(
        engine, features=20, poisson_sampling=poisson_sampling,
        data_loader=opacus_training.make_data_loader(features=20))
    opacus_training.train(model, optimizer, loader)
    digest = hashlib.sha256()
    for parameter in model.parameters():
      digest.update(parameter.detach().numpy().tobytes())
    results[str(poisson_sampling)] = [
        len(engine.accountant), engine.get_epsilon(1e-5).hex(),
        digest.hexdigest()]
  except Exception as error:  # reported, so a refusal differs from training
    results[str(poisson_sampling)] = repr(error)
print(json.dumps(results))
'''


def _run(accountant: str, imports: str, tmp_path) -> dict:
  code = RUN.format(tests=TESTS, imports=imports, accountant=accountant)
  result = subprocess.run([sys.executable, '-c', code], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # six interpreters importing torch: about a minute
@pytest.mark.parametrize('accountant', ['prv', 'rdp'])
def test_opacus_accountants_are_unchanged_by_our_imports(accountant, tmp_path):
  runs = {name: _run(accountant, imports, tmp_path)
          for name, imports in IMPORTS.items()}
  alone = runs['nothing of ours']
  for sampling in ('True', 'False'):
    steps, epsilon, _ = alone[sampling]  # Opacus alone trains both
    assert steps > 0 and 0 < float.fromhex(epsilon) < float('inf')
  for name, result in runs.items():
    assert result == alone, name
