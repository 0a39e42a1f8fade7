"""A training run killed after its checkpoint resumes with the epsilon of an
uninterrupted run."""

import os
import signal
import subprocess
import sys
import threading

import pytest

torch = pytest.importorskip('torch')
pytest.importorskip('opacus')

# ruff: noqa: E402
from opacus.accountants import create_accountant

import resume_training
from resume_training import STEPS_PER_EPOCH
from shuffle_accountants import checkpoints
from shuffle_accountants.adapters import opacus as adapter

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(__file__)),
                      'resume_training.py')
DELTA = 1e-5


def _killed_after_checkpoint(mechanism, path, steps):
  """Runs the child until it has written its checkpoint, then SIGKILLs it."""
  child = subprocess.Popen(
      [sys.executable, SCRIPT, mechanism, str(path), str(steps)],
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
      cwd=os.path.dirname(path))
  watchdog = threading.Timer(600, child.kill)  # a hung child fails the test
  watchdog.start()
  try:
    line = child.stdout.readline()  # synchronises on what the child prints
    child.send_signal(signal.SIGKILL)
    _, errors = child.communicate(timeout=600)
  finally:
    watchdog.cancel()
  assert line.strip() == resume_training.WRITTEN, errors
  assert child.returncode == -signal.SIGKILL, errors


@pytest.mark.parametrize('mechanism', [adapter.MECHANISM, 'shuffled_batches'])
def test_a_killed_run_resumes_with_the_epsilon_of_an_uninterrupted_one(
    tmp_path, mechanism):
  path = tmp_path / 'checkpoint.pt'
  before, after = STEPS_PER_EPOCH, 2 * STEPS_PER_EPOCH  # at an epoch's end
  _killed_after_checkpoint(mechanism, path, before)

  engine, model, optimizer, data_loader = resume_training.start(mechanism)
  engine.load_checkpoint(path=path, module=model, optimizer=optimizer)
  assert len(engine.accountant) == before
  resume_training.train(model, optimizer, data_loader, after)

  straight = resume_training.start(mechanism)
  resume_training.train(*straight[1:], before + after)
  assert engine.accountant.history == straight[0].accountant.history
  resumed_epsilon = engine.get_epsilon(DELTA)
  assert resumed_epsilon == straight[0].get_epsilon(DELTA)
  assert 0 < resumed_epsilon < float('inf')


def test_an_epoch_broken_off_by_the_crash_still_counts():
  # Saved mid-epoch; the resumed loader starts a new epoch: four epochs
  # were started (2 + 2), though the 30 steps fill only three.
  mechanism = 'shuffled_batches'
  engine, model, optimizer, data_loader = resume_training.start(mechanism)
  resume_training.train(model, optimizer, data_loader, 15)
  state = engine.accountant.state_dict()
  assert state['epochs_started'] == 2

  resumed, model, optimizer, data_loader = resume_training.start(mechanism)
  resumed.accountant.load_state_dict(state)
  resume_training.train(model, optimizer, data_loader, 15)
  sigma = resumed.accountant.history[0][0]
  assert resumed.accountant._groups() == [(sigma, STEPS_PER_EPOCH, 4)]
  four_epochs = create_accountant(mechanism)
  four_epochs.load_state_dict(
      checkpoints.seal_state({**state, 'epochs_started': 4}))
  assert resumed.get_epsilon(DELTA) == four_epochs.get_epsilon(DELTA)


@pytest.mark.parametrize('mechanism', [
    adapter.MECHANISM, adapter.DISTRIBUTED_RDP_MECHANISM,
    'random_allocation', 'shuffled_batches'])
def test_invalid_states_are_refused_and_leave_the_accountant_alone(mechanism):
  accountant = create_accountant(mechanism)
  accountant.step(noise_multiplier=1.0, sample_rate=0.1)
  if hasattr(accountant, 'num_users'):
    accountant.num_users = 100
  good = accountant.state_dict()
  assert good['state_version'] == 2
  restored = create_accountant(mechanism)
  restored.load_state_dict(good)
  assert restored.state_dict() == good
  for bad, message in [
      ({**good, 'state_version': 3}, r"'state_version'\] = 3 is not supported"),
      ({**good, 'history': [(1.0, 1.5, 3)]}, 'sample_rate'),
      ({**good, 'history': [(-1.0, 0.5, 3)]}, 'noise_multiplier'),
      ({**good, 'history': [(1.0, 0.5, 2.5)]}, 'num_steps'),
      ({**good, 'history': [(1.0, 0.5)]}, 'is not'),
  ]:
    # Refused by the digest, and by the check of the field when resealed.
    with pytest.raises(checkpoints.LedgerFileError, match='edited'):
      restored.load_state_dict(bad)
    with pytest.raises(ValueError, match=message):
      restored.load_state_dict(checkpoints.seal_state(bad))
    assert restored.state_dict() == good
  if hasattr(accountant, 'num_users'):
    with pytest.raises(ValueError, match='num_users'):
      restored.load_state_dict(checkpoints.seal_state(
          {**good, 'num_users': 0}))
  else:
    with pytest.raises(ValueError, match='epochs_started'):
      restored.load_state_dict(checkpoints.seal_state(
          {**good, 'epochs_started': -1}))
  assert restored.state_dict() == good


def test_a_state_saved_before_digests_loads_only_when_allowed():
  accountant = create_accountant(adapter.MECHANISM)
  old = {'history': [(1.0, 0.1, 5)], 'num_users': 1000,
         'mechanism': adapter.MECHANISM}
  with pytest.raises(checkpoints.LedgerFileError, match='allow_unverified'):
    accountant.load_state_dict(old)
  with pytest.warns(checkpoints.UnverifiedLedgerWarning):
    accountant.load_state_dict(old, allow_unverified=True)
  assert accountant.history == [(1.0, 0.1, 5)]
  sampler = create_accountant('shuffled_batches')
  with pytest.warns(checkpoints.UnverifiedLedgerWarning):
    sampler.load_state_dict({'history': [(1.0, 0.1, 5)], 'sequential': True,
                             'mechanism': 'shuffled_batches'},
                            allow_unverified=True)
  assert sampler.state_dict()['epochs_started'] == 0
  assert isinstance(sampler, adapter.ShuffledBatchesAccountant)


@pytest.mark.parametrize('edit', [
    lambda s: s.update(history=[(1.0, 0.01, 1)]),       # 100 steps -> 1
    lambda s: s.update(history=[(4.0, 0.01, 100)]),     # noise 1 -> 4
    lambda s: s.update(participation='hidden'),         # trust model
    lambda s: s.update(state_version=1),
    lambda s: s['integrity'].update(digest='0' * 64),
    lambda s: s.pop('integrity'),
])
def test_an_edited_state_never_loads_below_the_true_epsilon(edit):
  # Issue 49, on 88ed8df: steps 100 -> 1 loaded at 7.74 instead of 23.17,
  # participation revealed -> hidden at 6.85.
  accountant = adapter.DistributedCheckinRdpAccountant(num_users=1000)
  accountant.history = [(1.0, 0.01, 100)]
  epsilon = accountant.get_epsilon(1e-5)
  key = b'k' * 32
  for options in ({}, {'key': key}):
    state = accountant.state_dict(**options)
    edit(state)
    restored = adapter.DistributedCheckinRdpAccountant(num_users=1000)
    with pytest.raises(checkpoints.LedgerFileError):
      restored.load_state_dict(state, **options)
    assert restored.history == []
  # Through torch.save / torch.load (Opacus' checkpoints), plain data.
  state = accountant.state_dict(key=key)
  buffer = __import__('io').BytesIO()
  torch.save(state, buffer)
  buffer.seek(0)
  restored = adapter.DistributedCheckinRdpAccountant(num_users=1000)
  restored.load_state_dict(torch.load(buffer, weights_only=True), key=key)
  assert restored.get_epsilon(1e-5) == epsilon
