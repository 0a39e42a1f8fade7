"""TF-Privacy-style statements: numbers, errors, and TF-Privacy's own
accounting."""

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
  """{label: value} of the example-level lines (before any user-level one)."""
  example_level = statement.split('User-level DP', 1)[0]
  return {label.strip(): float(value) for label, value in re.findall(
      r'^ {4}(Epsilon[^:]*):\s+([0-9.]+|inf)$', example_level, re.MULTILINE)}


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
  unsampled = pld.PLDAccountant() if kind == 'PLD' else rdp.RdpAccountant()
  replace_one = pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
  assert numbers == {
      'Epsilon in the shuffle model': pytest.approx(
          shuffle.compose(event).get_epsilon(DELTA), abs=5e-4),
      'Epsilon with each example occurring once per epoch': pytest.approx(
          unsampled.compose(dp_accounting.SelfComposedDpEvent(
              dp_accounting.GaussianDpEvent(SIGMA), EPOCHS)).get_epsilon(
                  DELTA), abs=5e-4),
      'Epsilon assuming Poisson sampling (*)': pytest.approx(
          _central(add_remove), abs=5e-4),
      'Epsilon, Poisson sampling, replace-one (PLD)': pytest.approx(
          _central(replace_one), abs=5e-4),
  }
  assert 'replace-one adjacency' in statement
  assert 'certified upper bound' in statement
  assert 'No user-level privacy guarantee is possible' in statement


def test_default_accountant_is_rdp_as_in_tf_privacy():
  # Issue 48: it was PLD, where TF-Privacy's is RDP.
  statement = tf_privacy.compute_shuffle_privacy_statement(
      2000, 20, 1, 2.0, DELTA)
  assert 'computed with RDP accounting' in statement
  assert statement == tf_privacy.compute_shuffle_privacy_statement(
      2000, 20, 1, 2.0, DELTA, False, None, 'RDP')


def test_tf_privacy_arguments_are_accepted_by_position_and_name():
  # Issue 48: used_microbatching and max_examples_per_user raised TypeError.
  statement = tf_privacy.compute_shuffle_privacy_statement(
      2000, 20, 1, 2.0, DELTA, True, 3, 'RDP')
  assert 'with microbatching' in statement
  assert 'Epsilon in the shuffle model: n/a: with microbatching' in statement
  assert 'User-level DP with replace-one adjacency' in statement
  keywords = tf_privacy.compute_shuffle_privacy_statement(
      number_of_examples=2000, batch_size=20, num_epochs=1,
      noise_multiplier=2.0, delta=DELTA, used_microbatching=False,
      max_examples_per_user=3, accountant_type=tf_privacy.AccountantType.PLD)
  assert 'at most 3 examples per user' in keywords
  user_level = keywords.split('User-level DP', 1)[1]
  example = _numbers(keywords)['Epsilon in the shuffle model']
  user = float(re.search(r'Epsilon in the shuffle model:\s+([0-9.]+)',
                         user_level)[1])
  assert 3 * example <= user < math.inf


def test_group_privacy_is_k_epsilon_for_pure_dp_and_above_the_exact_gaussian():
  # Pure epsilon-DP: every example-level delta works, so k * epsilon.
  assert tf_privacy.group_privacy_epsilon(lambda d: 0.5, 4, 1e-6) == 2.0
  assert tf_privacy.group_privacy_epsilon(lambda d: 0.7, 1, 1e-6) == 0.7
  # The Gaussian mechanism (sensitivity 1, sigma 4): a group of k is exactly
  # the Gaussian mechanism at sensitivity k, i.e. sigma 4 / k. [UB] >= truth.
  def gaussian(sigma):
    accountant = pld.PLDAccountant()
    accountant.compose(dp_accounting.GaussianDpEvent(sigma))
    return lambda d: float(accountant.get_epsilon(d))
  for k in (2, 3):
    bound = tf_privacy.group_privacy_epsilon(gaussian(4.0), k, 1e-6)
    assert gaussian(4.0 / k)(1e-6) <= bound < 3 * k * gaussian(4.0)(1e-6)


def test_statement_for_pure_ldp_reports_only_the_shuffle_model():
  statement = tf_privacy.compute_shuffle_privacy_statement(
      10**5, None, 1, None, 1e-6, checkin_rate=0.01, local_epsilon=1.0)
  # noise_multiplier may be left out when local_epsilon describes the reports.
  assert statement == tf_privacy.compute_shuffle_privacy_statement(
      10**5, None, 1, delta=1e-6, checkin_rate=0.01, local_epsilon=1.0)
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
    ({'delta': None}, 'delta .the target delta. is required'),
    ({'max_examples_per_user': 0}, 'max_examples_per_user must be'),
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


@pytest.mark.parametrize('kind, options', [
    ('RDP', dict(used_microbatching=False)),
    ('RDP', dict(used_microbatching=True)),
    # Seconds each (the PLD route; group privacy's search): slow.
    pytest.param('PLD', dict(used_microbatching=False), marks=pytest.mark.slow),
    pytest.param('RDP', dict(used_microbatching=False, max_examples_per_user=3),
                 marks=pytest.mark.slow),
])
def test_central_lines_are_tf_privacys_line_for_line(kind, options):
  # Issue 48: the statement is a drop-in for TF-Privacy's: its central lines
  # (example-level, and user-level by group privacy) are TF-Privacy's own,
  # character for character, in TF-Privacy's order.
  lib = _tf_privacy_lib()
  arguments = (2000, 20, 2, 1.5, DELTA)
  theirs = lib.compute_dp_sgd_privacy_statement(
      *arguments, accountant_type=lib.AccountantType[kind], **options)
  ours = tf_privacy.compute_shuffle_privacy_statement(
      *arguments, accountant_type=kind, **options)
  central = [line for line in theirs.splitlines() if line.startswith(
      '    Epsilon')]
  assert len(central) == (4 if 'max_examples_per_user' in options else 2)
  ours_central = [line for line in ours.splitlines() if line in central]
  assert ours_central == central
  for paragraph in ('No user-level privacy guarantee', '(*) Poisson sampling'):
    assert (paragraph in theirs) == (paragraph in ours), paragraph


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
