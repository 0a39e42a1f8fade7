"""benchmarks/gpu_share.py (issue 41) at a tiny setting: every registered
accountant trains and answers after every epoch, and the table reports it."""

import math

import pytest

pytest.importorskip('opacus')
pytest.importorskip('PLD_accounting')

import benchmark_scripts  # noqa: E402

GPU_SHARE = benchmark_scripts.load('gpu_share')


def test_every_accountant_answers_every_epoch_and_is_tabled_against_prv():
  names = GPU_SHARE.registered_accountants()
  assert {'random_allocation', 'shuffle_checkin', 'prv', 'rdp'} <= set(names)
  results = [GPU_SHARE.run_one(name, epochs=2, examples=32, batch=16,
                               accounting_only=True) for name in names]
  for result in results:
    assert len(result['queries']) == 2
    assert 0 < result['epsilon'] < math.inf
  lines = GPU_SHARE.table(results, accounting_only=True).splitlines()
  assert len(lines) == 1 + len(names)
  assert lines[1 + names.index('prv')].split()[-2] == '1.00'


def test_training_reports_the_share_of_wall_time():
  result = GPU_SHARE.run_one('shuffled_batches', epochs=1, examples=32,
                             batch=16, accounting_only=False)
  assert result['device'] in ('cpu', 'cuda')
  row = GPU_SHARE.table([result, result | {'name': 'prv'}],
                        accounting_only=False).splitlines()[1]
  share = float(row.split()[1])
  assert 0 <= share <= 100


@pytest.mark.slow
def test_each_accountant_trains_in_a_fresh_process(capsys):
  GPU_SHARE.main(['--epochs', '2', '--examples', '32', '--batch', '16',
                  '--accountants', 'shuffled_batches'])
  output = capsys.readouterr().out
  assert 'training device: c' in output
  rows = {line.split()[0]: line.split() for line in output.splitlines()[2:]}
  assert set(rows) == {'shuffled_batches', 'prv'}
  assert all(0 <= float(row[1]) <= 100 for row in rows.values())
