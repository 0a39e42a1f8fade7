"""The `shuffle-accountant` CLI end to end, in subprocesses."""

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys

import pytest

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import randomizers
from shuffle_accountants.cli import protocols
from shuffle_accountants.pld import lower_bounds


def _run(*arguments, check=True):
  result = subprocess.run(
      [sys.executable, '-m', 'shuffle_accountants', *arguments],
      capture_output=True, text=True, cwd='/', check=False)
  if check:
    assert result.returncode == 0, result.stderr
  return result


def _json(*arguments):
  return json.loads(_run(*arguments, '--json').stdout)


def test_epsilon_equals_the_python_api():
  report = _json('epsilon', '--num-users', '100000', '--local-epsilon', '1',
                 '--rounds', '100', '--delta', '1e-6', '--accountant', 'pld')
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users=100000, local_epsilon=1.0), 100)
  assert report['certified']['epsilon'] == accountant.get_epsilon(1e-6)
  assert report['certified']['kind'] == 'upper bound'
  lower = report['lower_bound']
  assert lower['method'] == 'binary-rr-pair'
  assert 0 < lower['epsilon'] < report['certified']['epsilon']


def test_epsilon_for_checkin_with_gaussian_noise():
  report = _json('epsilon', '--num-users', '20000', '--noise-multiplier', '3',
                 '--checkin-rate', '0.01', '--rounds', '50', '--delta',
                 '1e-5')
  protocol = protocols.Protocol(num_users=20000, noise_multiplier=3.0,
                                checkin_rate=0.01, rounds=50, delta=1e-5)
  assert protocol.round_event() == CheckInEvent(20000, 0.01,
                                                noise_multiplier=3.0)
  best = protocols.certified_epsilon(protocol)
  assert report['certified']['epsilon'] == best.epsilon
  assert report['certified']['method'] == best.method
  assert report['lower_bound']['epsilon'] is None


def test_default_scenario_says_the_protocol_and_the_bounds_in_words():
  # Issue 48: it printed `ShuffleEvent(num_users=1000000, ...)` and
  # "binary-rr-pair ... (specific pair)", at delta 1e-6 where the README's
  # first CLI line (the same scenario) used the default 1e-7.
  untimed = lambda text: re.sub(r'\(\d+\.\d+ s\)', '', text)
  output = _run().stdout
  assert untimed(output) == untimed(_run(
      'epsilon', '--num-users', '1000000', '--local-epsilon', '1', '--rounds',
      '1000').stdout)
  for words in ('Each of 1,000,000 users sends one report',
                'in each of 1,000 rounds', 'only the shuffler is trusted',
                'the server sees the shuffled reports',
                "differ in one user's data (replace-one)",
                'certified epsilon (upper bound)',
                'central (epsilon, delta)-DP of everything the server sees',
                'no accountant can certify less for any eps0-LDP randomizer: '
                'binary randomized response is one of them',
                'delta = 1e-07 is the default min(1e-6, 1/(10 n))'):
    assert words in output, words
  for jargon in ('ShuffleEvent(', 'randomizer=None', 'binary-rr-pair',
                 'specific pair)'):
    assert jargon not in output, jargon


def test_compare_lists_every_method_with_ratios():
  report = _json('compare', '--num-users', '10000', '--local-epsilon', '2',
                 '--rounds', '10')
  rows = {row['method']: row for row in report['methods']}
  assert list(rows) == list(protocols.METHODS)
  applicable = [row for row in rows.values()
                if row['kind'] == 'upper bound' and row['epsilon'] is not None]
  uppers = [row['epsilon'] for row in applicable]
  assert rows['pld-generic']['epsilon'] is None  # no randomizer named
  assert min(row['ratio_to_best_upper'] for row in applicable) == 1.0
  assert rows['binary-rr-pair']['epsilon'] <= min(uppers)
  assert rows['pld']['epsilon'] == min(uppers)


def test_a_named_randomizer_is_certified_below_the_generic_bound():
  report = _json('compare', '--num-users', '10000', '--local-epsilon', '1',
                 '--randomizer', 'oue', '--domain-size', '100')
  rows = {row['method']: row for row in report['methods']}
  event = ShuffleEvent(10000, randomizer=randomizers.OptimizedUnaryEncoding(
      100, 1.0))
  accountant = ShufflePldAccountant()
  accountant.compose(event)
  assert rows['pld']['epsilon'] == accountant.get_epsilon(1e-6)
  assert rows['pld']['epsilon'] < 0.6 * rows['pld-generic']['epsilon']
  assert rows['binary-rr-pair']['epsilon'] is None  # another randomizer's
  assert 0 < rows['randomizer-pairs']['epsilon'] < rows['pld']['epsilon']


def test_calibrate_finds_the_largest_local_epsilon_and_the_most_rounds():
  report = _json('calibrate', '--num-users', '100000', '--rounds', '100',
                 '--target-epsilon', '1', '--solve', 'local-epsilon',
                 '--accountant', 'pld')
  local_epsilon = report['value']
  protocol = protocols.Protocol(num_users=100000, rounds=100,
                                local_epsilon=local_epsilon)
  assert protocols.certified_epsilon(protocol, 'pld').epsilon <= 1.0
  assert protocols.certified_epsilon(
      protocol.replace(local_epsilon=local_epsilon * 1.01), 'pld'
  ).epsilon > 1.0
  report = _json('calibrate', '--num-users', '100000', '--local-epsilon',
                 '1', '--target-epsilon', '0.5', '--solve', 'rounds',
                 '--accountant', 'pld')
  rounds = report['value']
  protocol = protocols.Protocol(num_users=100000, local_epsilon=1.0,
                                rounds=rounds)
  assert protocols.certified_epsilon(protocol, 'pld').epsilon <= 0.5
  assert protocols.certified_epsilon(protocol.replace(rounds=rounds + 1),
                                     'pld').epsilon > 0.5


@pytest.mark.parametrize('arguments, status, message', [
    (('epsilon', '--num-users', '0', '--local-epsilon', '1'), 2,
     '--num-users must be a whole number in [1, 1e+10]; got 0'),
    (('epsilon', '--num-users', '10'), 2, 'give --local-epsilon'),
    (('epsilon', '--num-users', 'ten', '--local-epsilon', '1'), 2,
     "--num-users must be a whole number in [1, 1e+10]; got 'ten'"),
    (('epsilon', '--num-users', '1.5', '--local-epsilon', '1'), 2,
     '--num-users must be a whole number in [1, 1e+10] (whole floats such '
     'as 1e6 are accepted); got 1.5'),
    (('epsilon', '--num-users', '10', '--local-epsilon', '1', '--rounds',
      '1e30'), 2, '--rounds must be a whole number in [1, 1e+09]'),
    (('epsilon', '--num-users', '10', '--local-epsilon', '1e300'), 2,
     '--local-epsilon must be a number in [0, 20]'),
    (('epsilon', '--num-users', '10', '--noise-multiplier', '1e-300'), 2,
     '--noise-multiplier must be a number in [0.001, 100000]'),
    (('epsilon', '--num-users', '10', '--local-epsilon', 'nan'), 2,
     '--local-epsilon must be a number'),
    (('plot', '--num-users', '10', '--local-epsilon', '1', '--output',
      '/nonexistent-folder/p.png'), 2, 'does not exist'),
    (('plot', '--num-users', '10', '--local-epsilon', '1', '--output',
      'p.jpg'), 2, '--output must end in .png, .pdf, .svg'),
    (('epsilon', '--num-users', '10', '--local-epsilon', '1',
      '--noise-multiplier', '1'), 2, 'not allowed with'),
    (('epsilon', '--num-users', '10', '--local-epsilon', '1',
      '--checkin-rate', '2'), 2, '--checkin-rate must be'),
    (('compare', '--num-users', '10', '--local-epsilon', '1', '--methods',
      'pld,magic'), 2, '--methods must be'),
    (('calibrate', '--num-users', '10', '--local-epsilon', '1',
      '--target-epsilon', '1e-5', '--solve', 'rounds'), 1,
     'unreachable: even rounds=1'),
    (('calibrate', '--num-users', '10', '--local-epsilon', '1',
      '--target-epsilon', '1', '--solve', 'local-epsilon'), 2,
     'is what calibrate solves for'),
    (('calibrate', '--num-users', '10', '--local-epsilon', '1',
      '--rounds', '5', '--target-epsilon', '1', '--solve', 'rounds'), 2,
     '--rounds is what calibrate solves for'),
    (('frobnicate',), 2, 'invalid choice'),
    # Abbreviated flags are refused, not completed.
    (('epsilon', '--num-user', '10', '--local-epsilon', '1'), 2,
     'required: --num-users'),
    (('epsilon', '--num-users', '10', '--local-eps', '1'), 2,
     'unrecognized arguments: --local-eps 1 (did you mean --local-epsilon? '),
    (('epsilon', '--num-users', '10', '--local-epsilon', '1', '--zzz', '1'),
     2, '--zzz 1 (shuffle-accountant COMMAND --help lists its flags)'),
    (('epsilon', '--num-users', '10', '--local-epsilon', 'nan'), 2,
     "--local-epsilon must be a number in [0, 20]; got 'nan'"),
    (('reference', 'W99'), 2, "unknown ID 'W99'"),
    (('plot', '--num-users', '10', '--local-epsilon', '1', '--x',
      'num-users', '--output', 'p.png'), 2,
     '--num-users is swept by --x num-users'),
    (('plot', '--local-epsilon', '1', '--output', 'p.png'), 2,
     'required: --num-users'),
    (('epsilon', '--num-users', '10', '--local-epsilon', '1',
      '--randomizer', 'oue'), 2, "randomizer 'oue' needs --local-epsilon "
     'and --domain-size'),
    (('epsilon', '--num-users', '10', '--local-epsilon', '1',
      '--domain-size', '5'), 2, 'needs a randomizer'),
    (('epsilon', '--num-users', '10', '--local-epsilon', '1',
      '--randomizer', 'rappor', '--domain-size', '5'), 2, 'invalid choice'),
    (('epsilon', '--num-users', '10', '--local-epsilon', '1',
      '--randomizer', 'oue', '--domain-size', '1'), 2,
     '--domain-size must be a whole number in [2, 1e+06]'),
])
def test_errors_are_one_line_with_a_non_zero_status(arguments, status,
                                                    message):
  result = _run(*arguments, check=False)
  assert result.returncode == status
  assert result.stderr.count('\n') == 1
  assert result.stderr.startswith('shuffle-accountant: error: ')
  assert message in result.stderr
  assert 'Traceback' not in result.stderr


def test_plot_writes_a_png(tmp_path):
  pytest.importorskip('matplotlib')
  output = tmp_path / 'rounds.png'
  result = _run('plot', '--num-users', '10000', '--local-epsilon', '1',
                '--x', 'rounds', '--values', '1,10,100', '--output',
                str(output), '--json')
  report = json.loads(result.stdout)
  assert output.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
  assert report['values'] == [1, 10, 100]
  pld = report['series']['pld']
  assert pld == sorted(pld) and len(pld) == 3
  assert all(lower <= upper for lower, upper in zip(
      report['series']['binary-rr-pair'], pld))
  assert result.stderr == ''  # no progress bar off a terminal


def test_plot_sweeps_num_users_without_a_dummy_flag(tmp_path):
  pytest.importorskip('matplotlib')
  output = tmp_path / 'users.png'
  report = _json('plot', '--x', 'num-users', '--values', '1000,100000',
                 '--local-epsilon', '1', '--methods', 'pld', '--output',
                 str(output))
  # The default delta rule at the largest n, for the whole figure.
  assert report['delta'] == 1e-6 and report['delta_rule']
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(100000, 1.0))
  assert report['series']['pld'][1] == accountant.get_epsilon(1e-6)


def test_whole_numbers_in_scientific_notation_and_the_lower_bound_budget():
  report = _json('epsilon', '--num-users', '1e6', '--local-epsilon', '1',
                 '--rounds', '1e5')
  assert report['protocol']['rounds'] == 100000
  assert report['lower_bound']['epsilon'] is None
  assert 'skipped above' in report['lower_bound']['detail']


def test_plot_defaults_and_format_from_suffix(tmp_path):
  pytest.importorskip('matplotlib')
  output = tmp_path / 'rounds.pdf'
  result = _run('plot', '--num-users', '10000', '--local-epsilon', '1',
                '--output', str(output), '--methods', 'rdp')
  assert output.read_bytes()[:4] == b'%PDF'
  assert 'rounds' in result.stdout and '1000' in result.stdout


def test_help_and_usage_errors_do_not_import_the_numerical_stack():
  code = ('import sys\n'
          'from shuffle_accountants.cli import main\n'
          'status = main.main(["epsilon", "--num-users", "0"])\n'
          'assert status == 2, status\n'
          'assert "numpy" not in sys.modules\n')
  subprocess.run([sys.executable, '-c', code], check=True, cwd='/')


def test_no_library_warnings_on_stderr():
  result = _run('epsilon', '--num-users', '1', '--local-epsilon', '20',
                '--rounds', '36')
  assert result.stderr.count('Warning') == 0
  assert 'certified epsilon' in result.stdout


def _drain(terminal: int) -> bytes:
  """What is left to read on a pseudo-terminal whose process has ended."""
  chunks = []
  while True:
    try:
      chunk = os.read(terminal, 4096)
    except OSError:  # the terminal closed with the process
      break
    if not chunk:
      break
    chunks.append(chunk)
  return b''.join(chunks)


def _default_sigint():
  # An ignored SIGINT is inherited across exec, and Python then installs no
  # KeyboardInterrupt handler: under a test run started in the background
  # by a non-interactive shell (which ignores SIGINT) the CLI ran on to
  # completion.
  signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_exits_130_with_one_line():
  # stderr on a terminal, so the CLI shows its progress line; SIGINT goes
  # once the calibration has started (what it prints, not a sleep: under
  # load the interpreter may still be starting after seconds).
  controller, terminal = pty.openpty()
  process = subprocess.Popen(
      [sys.executable, '-m', 'shuffle_accountants', 'calibrate',
       '--num-users', '1000000', '--local-epsilon', '1', '--solve', 'rounds',
       '--target-epsilon', '1e6'], stdout=subprocess.PIPE, stderr=terminal,
      cwd='/', preexec_fn=_default_sigint)
  os.close(terminal)
  shown = b''
  try:
    while b'calibrating' not in shown:
      ready, _, _ = select.select([controller], [], [], 300)
      assert ready, f'no progress line within 300 s: {shown!r}'
      shown += os.read(controller, 4096)
    process.send_signal(signal.SIGINT)
    process.wait(timeout=120)
    shown += _drain(controller)
  finally:
    if process.poll() is None:
      process.kill()
    os.close(controller)
  stderr = shown.decode().replace('\r\n', '\n')
  assert process.returncode == 130, stderr
  assert 'Traceback' not in stderr
  assert stderr.rstrip().splitlines()[-1] == (
      'shuffle-accountant: error: interrupted')


def test_version():
  import shuffle_accountants
  assert _run('--version').stdout.strip() == (
      f'shuffle-accountant {shuffle_accountants.__version__}')


def test_delta_defaults_from_n_and_the_rule_is_printed():
  report = _json('epsilon', '--num-users', '1e7', '--local-epsilon', '1',
                 '--accountant', 'rdp')
  assert report['protocol']['delta'] == 1e-8
  assert report['delta_rule'] == 'min(1e-6, 1/(10 n))'
  text = _run('epsilon', '--num-users', '1e7', '--local-epsilon', '1',
              '--accountant', 'rdp').stdout
  assert ('delta = 1e-08 is the default min(1e-6, 1/(10 n)); choose another '
          'with --delta.') in text
  given = _json('epsilon', '--num-users', '1e7', '--local-epsilon', '1',
                '--accountant', 'rdp', '--delta', '1e-6')
  assert given['protocol']['delta'] == 1e-6 and 'delta_rule' not in given


def test_compare_for_checkin_says_why_no_lower_bound_is_shown():
  report = _json('compare', '--num-users', '1000', '--local-epsilon', '1',
                 '--checkin-rate', '0.1', '--num-categories', '10')
  rows = {row['method']: row for row in report['methods']}
  for name in ('binary-rr-pair', 'randomizer-pairs'):
    assert rows[name]['epsilon'] is None
    assert rows[name]['detail'] == protocols.NO_SAMPLED_LOWER_BOUND
  # --num-categories is honoured: the k-RR round against the generic one
  # (equal here up to the last bits of two round-off certificates,
  # ROUNDOFF-CERTIFIED).
  assert rows['pld']['epsilon'] <= rows['pld-generic']['epsilon'] * (
      1 + 1e-12)
  assert rows['pld']['epsilon'] == protocols.evaluate(protocols.Protocol(
      1000, 1e-6, local_epsilon=1.0, checkin_rate=0.1, num_categories=10),
                                                      'pld').epsilon


def test_whole_numbers_are_accepted_and_refused_alike_in_python_and_the_cli():
  report = _json('epsilon', '--num-users', '1e4', '--local-epsilon', '1',
                 '--num-categories', '4.0', '--accountant', 'rdp')
  assert report['protocol']['num_users'] == 10000
  assert ShuffleEvent(1e4, 1.0, num_categories=4.0) == protocols.Protocol(
      10000, local_epsilon=1.0, num_categories=4).round_event()
  cli = _run('epsilon', '--num-users', '2.5', '--local-epsilon', '1',
             check=False).stderr
  with pytest.raises(ValueError) as python:
    ShuffleEvent(2.5, 1.0)
  for message in (cli, str(python.value)):
    assert 'num-users must be a whole number' in message.replace('_', '-')
    assert '(whole floats such as 1e6 are accepted); got 2.5.' in message


def _on_a_terminal(*arguments):
  """Runs the CLI with stderr on a pseudo-terminal; returns (stdout, stderr)."""
  leader, follower = pty.openpty()
  process = subprocess.Popen(
      [sys.executable, '-m', 'shuffle_accountants', *arguments],
      stdout=subprocess.PIPE, stderr=follower, text=True, cwd='/')
  os.close(follower)
  stdout, _ = process.communicate(timeout=120)
  shown = _drain(leader)
  os.close(leader)
  assert process.returncode == 0
  return stdout, shown.decode()


def test_progress_only_on_a_terminal_and_never_with_json():
  arguments = ('epsilon', '--num-users', '1000', '--local-epsilon', '1')
  _, stderr = _on_a_terminal(*arguments)
  assert 'certified epsilon [' in stderr
  stdout, stderr = _on_a_terminal(*arguments, '--json')
  assert stderr == '' and json.loads(stdout)['certified']['epsilon'] > 0
  assert _run(*arguments).stderr == ''


def _run_guarded(*arguments):
  return subprocess.run(
      [sys.executable, '-m', 'shuffle_accountants', *arguments],
      capture_output=True, text=True, cwd='/', check=False, timeout=300)


@pytest.mark.parametrize('rounds', ['1e8', '1e9'])
def test_compare_rows_work_or_say_why_at_the_documented_rounds(rounds):
  # fmt21-closed composed its (eps, delta) pairs on a grid of 2 T eps_1 / 1e-3
  # points: 25.8 GiB at T = 1e8, "out of memory".
  result = _run_guarded('compare', '--num-users', '1000000',
                        '--local-epsilon', '1', '--rounds', rounds,
                        '--methods', 'fmt21-closed,rdp', '--json')
  assert result.returncode == 0, result.stderr
  rows = {row['method']: row for row in json.loads(result.stdout)['methods']}
  assert rows['fmt21-closed']['epsilon'] is None
  assert 'skipped' in rows['fmt21-closed']['detail']
  assert 'grid points' in rows['fmt21-closed']['detail']
  assert rows['rdp']['epsilon'] > 0


def test_reference_into_a_closed_pipe_prints_no_traceback():
  # `shuffle-accountant reference | head -1`: the reader has gone before the
  # first write (closing our end first makes that deterministic).
  process = subprocess.Popen(
      [sys.executable, '-m', 'shuffle_accountants', 'reference'],
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd='/')
  process.stdout.close()
  _, stderr = process.communicate(timeout=120)
  assert process.returncode == 0
  assert b'Traceback' not in stderr and b'BrokenPipe' not in stderr


@pytest.mark.parametrize('arguments, named', [
    (('--solve', 'noise-multiplier', '--local-epsilon', '1'),
     '--local-epsilon'),
    (('--solve', 'noise-multiplier', '--num-categories', '4'),
     '--num-categories'),
    (('--solve', 'local-epsilon', '--noise-multiplier', '2'),
     '--noise-multiplier'),
])
def test_calibrate_names_the_conflicting_flag_not_the_solvers_trial(
    arguments, named):
  result = _run_guarded('calibrate', '--num-users', '1000',
                        '--target-epsilon', '1', *arguments)
  assert result.returncode == 2
  assert named in result.stderr and '--solve' in result.stderr
  assert '100000' not in result.stderr  # the solver's trial value
  assert len(result.stderr.strip().splitlines()) == 1


def test_no_arguments_print_the_usage_and_help_has_examples():
  # Issue 48: `shuffle-accountant` alone printed no usage.
  result = subprocess.run([sys.executable, '-c', 'from shuffle_accountants.'
                           'cli.main import entry_point; entry_point()'],
                          capture_output=True, text=True, cwd='/', check=False)
  assert result.returncode == 2 and result.stdout == ''
  assert result.stderr.startswith('usage: shuffle-accountant ')
  assert '--help' in result.stderr and 'Traceback' not in result.stderr
  help_text = _run('--help').stdout
  examples = help_text.split('examples:', 1)[1]
  assert examples.count('\n  shuffle-accountant ') == 3
  assert 'everything the server' in help_text


@pytest.mark.parametrize('identifier', ['', '   '])
def test_reference_of_an_empty_id_is_an_error_not_the_first_entry(identifier):
  result = _run('reference', identifier, check=False)
  assert result.returncode == 2 and result.stdout == ''
  assert 'identifier (the ID) must name an entry' in result.stderr


def test_compare_columns_line_up_on_every_row():
  # Issue 48: `sum-configurations` is longer than the method column was.
  text = _run('compare', '--num-users', '100', '--local-epsilon', '1',
              '--randomizer', 'oue', '--domain-size', '4', '--release', 'sum',
              '--methods', 'pld,sum-configurations').stdout.splitlines()
  header, *rows = [line for line in text if line.startswith('  ')][:3]
  for row in rows:
    assert row.index(' bound') - len('upper') == header.index('kind'), row
    epsilon = row.split()[3]
    assert row.index(f' {epsilon} ') + 1 + len(epsilon) == (
        header.index('epsilon') + len('epsilon')), row


@pytest.mark.parametrize('num_users,local_epsilon,rounds', [
    (10**5, 4.0, 1), (10**4, 1.0, 1), (10**6, 1.0, 100)])
def test_the_generic_lower_bound_is_binary_rr_s_largest_pair(
    num_users, local_epsilon, rounds):
  # Binary RR is one eps0-LDP randomizer: each of its pairs bounds a generic
  # round from below, and the generic line reports the larger of the two.
  generic = protocols.Protocol(num_users=num_users,
                               local_epsilon=local_epsilon, rounds=rounds,
                               delta=1e-6)
  generic_lower = protocols.evaluate(generic, 'binary-rr-pair').epsilon
  pairs = protocols.evaluate(generic.replace(num_categories=2),
                             'randomizer-pairs').epsilon
  all_equal = lower_bounds.binary_rr_all_equal_pair_epsilon_lower_bound(
      num_users, local_epsilon, rounds, 1e-6)
  assert generic_lower == max(pairs, all_equal)
  assert generic_lower <= protocols.evaluate(generic, 'pld').epsilon
  assert protocols.best_lower_bound(generic).epsilon == generic_lower
