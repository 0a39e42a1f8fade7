"""The slowest calls of the documented range answer within 1.5 GiB (issue 41).

Each runs in a fresh process under a watchdog: the generous timeout only
guards against a hang (tests assert answers, never timings; the times are
in benchmarks/loops.py). The third, GaussianDpEvent(1) x 1000, answers in
closed form now: tests/pld/test_gaussian_ledger.py.
"""

import sys

import pytest

import peak_memory
from shuffle_accountants.samplers import shuffled_batches

MEMORY_BYTES = 3 * 2**29  # 1.5 GiB

_CALL = '''
from dp_accounting import dp_event
from shuffle_accountants import ShuffleEvent, ShufflePldAccountant, randomizers
event, count = {event}, {count}
print(repr(ShufflePldAccountant().compose(event, count).get_epsilon(1e-6)))
'''


def _epsilon_in_a_fresh_process(event: str, count: int) -> float:
  result = peak_memory.run(
      [sys.executable, '-c', _CALL.format(event=event, count=count)],
      timeout=900, cap_bytes=MEMORY_BYTES)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.peak_bytes <= MEMORY_BYTES
  return float(result.stdout)


@pytest.mark.slow
def test_a_billion_rounds_of_three_category_krr():
  # eps0 = 20: nearly no amplification; basic composition caps it at 2e10.
  epsilon = _epsilon_in_a_fresh_process(
      'ShuffleEvent(18135353, 20, num_categories=3)', 10**9)
  # 19266731710.05103 until epsilon came from the cycle of its own
  # certificates (one question, one answer): 2.9e-7 relative lower, each
  # certified (tests/cross_route/test_one_question_one_answer.py).
  assert epsilon == pytest.approx(19266726111.00866, rel=1e-9)
  assert epsilon <= 20 * 10**9


@pytest.mark.slow
def test_one_round_of_scalar_gaussian_reports():
  epsilon = _epsilon_in_a_fresh_process(
      'ShuffleEvent(10000, randomizer=randomizers.GaussianRandomizer(1.0))', 1)
  assert epsilon == pytest.approx(3.3662955188718975, rel=1e-9)
  # Never above the Gaussian mechanism without amplification (GAUSS-NO-GAIN).
  assert epsilon <= shuffled_batches.gaussian_epsilon(2.0, 1e-6)

