"""TF-Privacy-style statements: numbers, errors, and TF-Privacy's own accounting."""

import importlib.util
import math
import os
import pathlib
import re
import sys
import zipfile

import dp_accounting
from dp_accounting import pld
from dp_accounting import rdp
import pytest

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.adapters import tf_privacy

# TF-Privacy's example: MNIST, 60000 examples, batch 256, 15 epochs, sigma 1.1.
EXAMPLES, BATCH, EPOCHS, SIGMA, DELTA = 60000, 256, 15, 1.1, 1e-5


def _numbers(statement):
  return {label.strip(): float(value) for label, value in re.findall(
      r'^ {4}(Epsilon[^:]*):\s+([0-9.]+|inf)$', statement, re.MULTILINE)}


def _central(accountant):
  return accountant.compose(dp_accounting.SelfComposedDpEvent(
      dp_accounting.PoissonSampledDpEvent(BATCH / EXAMPLES,
                                          dp_accounting.GaussianDpEvent(SIGMA)),
      math.ceil(EPOCHS * EXAMPLES / BATCH))).get_epsilon(DELTA)


@pytest.mark.parametrize('kind', ['PLD', 'RDP'])
def test_statement_reports_the_accountants_numbers(kind):
  statement = tf_privacy.compute_shuffle_privacy_statement(
      EXAMPLES, BATCH, EPOCHS, SIGMA, DELTA, accountant_type=kind)
  numbers = _numbers(statement)
  event = tf_privacy.shuffle_dp_sgd_event(EXAMPLES, EPOCHS, batch_size=BATCH,
                                          noise_multiplier=SIGMA)
  assert event.count == 3516
  assert event.event == CheckInEvent(num_users=EXAMPLES,
                                     checkin_rate=BATCH / EXAMPLES,
                                     noise_multiplier=SIGMA)
  shuffle = ShufflePldAccountant() if kind == 'PLD' else ShuffleRdpAccountant()
  add_remove = pld.PLDAccountant() if kind == 'PLD' else rdp.RdpAccountant()
  replace_one = pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
  assert numbers == {
      'Epsilon in the shuffle model': pytest.approx(
          shuffle.compose(event).get_epsilon(DELTA), abs=5e-4),
      f'Epsilon, add-or-remove-one adjacency ({kind})': pytest.approx(
          _central(add_remove), abs=5e-4),
      'Epsilon, replace-one adjacency (PLD)': pytest.approx(
          _central(replace_one), abs=5e-4),
  }
  assert 'replace-one adjacency' in statement
  assert 'certified upper bound' in statement


def test_statement_for_pure_ldp_reports_only_the_shuffle_model():
  statement = tf_privacy.compute_shuffle_privacy_statement(
      10**5, None, 1, None, 1e-6, checkin_rate=0.01, local_epsilon=1.0)
  numbers = _numbers(statement)
  assert list(numbers) == ['Epsilon in the shuffle model']
  assert 0 < numbers['Epsilon in the shuffle model'] < 100 * 1.0
  assert '1.0-LDP randomizer' in statement


def test_more_noise_never_costs_more_epsilon():
  values = [_numbers(tf_privacy.compute_shuffle_privacy_statement(
      2000, 20, 1, sigma, DELTA))['Epsilon in the shuffle model']
            for sigma in (1.6, 3.2, 6.4)]
  assert values[0] > values[1] > values[2] > 0


def test_event_composes_with_tf_privacy_events_under_replace_one():
  # What a TF-Privacy loop's GaussianSumQuery ledger yields, plus shuffled
  # telemetry rounds: one accountant, one certified epsilon.
  central = dp_accounting.SelfComposedDpEvent(
      dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(
          1.0)), 100)
  shuffled = tf_privacy.shuffle_dp_sgd_event(10**4, 1, checkin_rate=0.01,
                                             noise_multiplier=2.0)
  accountant = ShufflePldAccountant()
  accountant.compose(central).compose(shuffled).compose(
      ShuffleEvent(num_users=10**4, local_epsilon=1.0), 10)
  both = accountant.get_epsilon(DELTA)
  alone = ShufflePldAccountant().compose(central).get_epsilon(DELTA)
  assert both > alone > 0


@pytest.mark.parametrize('kwargs, message', [
    ({'batch_size': None}, 'exactly one of batch_size'),
    ({'checkin_rate': 0.1}, 'exactly one of batch_size'),
    ({'batch_size': 0}, 'batch_size must be'),
    ({'batch_size': 10**6}, 'batch_size must be'),
    ({'noise_multiplier': None}, 'exactly one of local_epsilon'),
    ({'local_epsilon': 1.0}, 'exactly one of local_epsilon'),
    ({'num_epochs': 0}, 'num_epochs must be'),
    ({'delta': 1.0}, 'delta must be'),
    ({'accountant_type': 'PRV'}, "accountant_type must be 'RDP' or 'PLD'"),
])
def test_bad_arguments_name_the_parameter(kwargs, message):
  arguments = dict(number_of_examples=1000, batch_size=10, num_epochs=1,
                   noise_multiplier=1.0, delta=1e-5)
  arguments.update(kwargs)
  with pytest.raises(ValueError, match=message):
    tf_privacy.compute_shuffle_privacy_statement(**arguments)


def _tf_privacy_lib():
  """TF-Privacy's accounting module, loaded from its wheel without TensorFlow.

  tensorflow-privacy pins dp-accounting 0.4.3, numpy < 2 and (to import) TF
  2.15, so it cannot share an environment with this library; its
  `compute_dp_sgd_privacy_lib` needs only absl and dp_accounting. CI
  downloads the wheel and points TF_PRIVACY_WHEEL at it.
  """
  wheel = os.environ.get('TF_PRIVACY_WHEEL')
  if not wheel or not os.path.exists(wheel):
    pytest.skip('TF_PRIVACY_WHEEL (a tensorflow-privacy wheel) is not set')
  pytest.importorskip('absl')
  member = 'tensorflow_privacy/privacy/analysis/compute_dp_sgd_privacy_lib.py'
  with zipfile.ZipFile(wheel) as archive:
    source = archive.read(member)
  spec = importlib.util.spec_from_loader('tfp_compute_dp_sgd_privacy_lib',
                                         loader=None)
  module = importlib.util.module_from_spec(spec)
  exec(compile(source, member, 'exec'), module.__dict__)
  sys.modules.pop(spec.name, None)
  return module


@pytest.mark.parametrize('kind', ['RDP', 'PLD'])
def test_central_line_matches_tf_privacy(kind):
  lib = _tf_privacy_lib()
  theirs = lib._compute_dp_sgd_example_privacy(
      EPOCHS, SIGMA, DELTA, used_microbatching=False,
      poisson_subsampling_probability=BATCH / EXAMPLES,
      accountant_type=lib.AccountantType[kind])
  ours = _numbers(tf_privacy.compute_shuffle_privacy_statement(
      EXAMPLES, BATCH, EPOCHS, SIGMA, DELTA, accountant_type=kind))
  assert ours[f'Epsilon, add-or-remove-one adjacency ({kind})'] == (
      pytest.approx(theirs, abs=5e-4))
  statement = lib.compute_dp_sgd_privacy_statement(
      EXAMPLES, BATCH, EPOCHS, SIGMA, DELTA, used_microbatching=False,
      accountant_type=lib.AccountantType[kind])
  assert f'{theirs:12.3f}' in statement


def test_docs_sample_statement_is_what_the_function_prints():
  page = pathlib.Path(__file__).resolve().parents[2] / 'docs' / 'tf_privacy.md'
  sample = page.read_text(encoding='utf-8').split(
      '<!-- output: tf_privacy.statement -->\n```\n')[1].split('```')[0]
  printed = tf_privacy.compute_shuffle_privacy_statement(
      number_of_examples=60_000, batch_size=256, num_epochs=15,
      noise_multiplier=1.1, delta=1e-5)
  assert printed == sample
  assert tf_privacy.WHY_LARGER.replace(' ', '') in printed.replace(
      '\n', '').replace(' ', '')
