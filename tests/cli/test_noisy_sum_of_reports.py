"""`--release sum --noise discrete-gaussian|discrete-laplace` with a client
randomizer, and `--randomizer ue --rate-if-one P --rate-if-zero Q` (issue
50, item 6)."""

import json

from dp_accounting import NeighboringRelation
from dp_accounting import SampledWithoutReplacementDpEvent
import pytest

from shuffle_accountants import DiscreteGaussianSumEvent
from shuffle_accountants import DiscreteLaplaceSumEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import SumOfReportsEvent
from shuffle_accountants import randomizers
from shuffle_accountants.cli import main

ACCOUNTANTS = {'pld': ShufflePldAccountant, 'rdp': ShuffleRdpAccountant}
RELATIONS = {'replace-one': NeighboringRelation.REPLACE_ONE,
             'deletion': NeighboringRelation.REPLACE_SPECIAL}
USERS, DOMAIN, DELTA = 2000, 8, 1e-8
# (flags, the randomizer they describe)
SUE = (('--randomizer', 'sue', '--local-epsilon', '6'),
       randomizers.SymmetricUnaryEncoding(DOMAIN, 6.0))
RATES = (('--randomizer', 'ue', '--rate-if-one', '0.75', '--rate-if-zero',
          '0.25'), randomizers.UnaryEncoding(DOMAIN, 0.75, 0.25))
# (--noise, its size flag, the event, what the output calls it)
GAUSSIAN = ('discrete-gaussian', '--sigma', DiscreteGaussianSumEvent,
            'discrete Gaussian noise of sigma = 3')
LAPLACE = ('discrete-laplace', '--scale', DiscreteLaplaceSumEvent,
           'discrete Laplace noise of scale b = 3')


def _run(capsys, *arguments):
  status = main.main(['epsilon', '--num-users', str(USERS), '--domain-size',
                      str(DOMAIN), '--delta', str(DELTA), *arguments])
  output = capsys.readouterr()
  assert status == 0, output.err
  return output.out


def _api_epsilon(event, accountant, relation, rounds=1):
  return ACCOUNTANTS[accountant](
      neighboring_relation=RELATIONS[relation]).compose(
          event, rounds).get_epsilon(DELTA)


@pytest.mark.parametrize(
    'client,relation,accountant,aggregators,trust,noise_kind', [
        (SUE, 'replace-one', 'pld', 1, 'one-honest', GAUSSIAN),
        (SUE, 'deletion', 'rdp', 1, 'one-honest', GAUSSIAN),
        (RATES, 'deletion', 'pld', 2, 'all-honest', GAUSSIAN),
        (RATES, 'replace-one', 'rdp', 3, 'one-honest', GAUSSIAN),
        (SUE, 'deletion', 'pld', 2, 'all-honest', LAPLACE),
        (RATES, 'replace-one', 'pld', 1, 'one-honest', LAPLACE),
    ])
def test_a_noisy_sum_of_reports_equals_the_python_api(
    capsys, client, relation, accountant, aggregators, trust, noise_kind):
  flags, randomizer = client
  name, size_flag, kind, noise_words = noise_kind
  arguments = (*flags, '--release', 'sum', '--relation', relation,
               '--noise', name, size_flag, '3',
               '--aggregators', str(aggregators), '--trust', trust,
               '--rounds', '2', '--accountant', accountant)
  report = json.loads(_run(capsys, *arguments, '--json'))
  noise = kind(3.0, num_aggregators=aggregators, trust=trust)
  event = SumOfReportsEvent(USERS, randomizer, aggregator_noise=noise)
  expected = _api_epsilon(event, accountant, relation, rounds=2)
  assert report['certified']['epsilon'] == expected
  # The noise is part of the release: the noise-free sum is larger (on the
  # RDP route each coordinate's shuffle, which takes no noise, decides
  # here, and the two are equal).
  noise_free = _api_epsilon(SumOfReportsEvent(USERS, randomizer),
                            accountant, relation, rounds=2)
  assert expected < noise_free if accountant == 'pld' else (
      expected <= noise_free)
  assert report['protocol']['aggregator_noise'] == {
      size_flag[2:]: 3.0, 'sensitivity': 1, 'num_aggregators': aggregators,
      'trust': trust}
  assert report['protocol']['release'] == 'sum'
  assert 'SUM-OF-BITS-WITH-NOISE' in report['certified']['detail']
  assert report['lower_bound']['epsilon'] is None
  text = _run(capsys, *arguments)
  relied_on = 'all of them' if trust == 'all-honest' else (
      'one honest aggregator')
  for words in ('coordinate-wise sum of the reports plus', 'unary encoding',
                f'{noise_words} from each of {aggregators} aggregator(s), '
                f'relying on {relied_on}', 'SUM-OF-BITS-WITH-NOISE',
                'replace-one' if relation == 'replace-one'
                else 'SUM-OF-BITS-DELETION'):
    assert words in text


@pytest.mark.parametrize('release,relation', [('shuffle', 'replace-one'),
                                              ('sum', 'deletion')])
def test_the_rates_of_a_unary_encoding_equal_the_python_api(capsys, release,
                                                            relation):
  flags, randomizer = RATES
  report = json.loads(_run(capsys, *flags, '--release', release,
                           '--relation', relation, '--accountant', 'pld',
                           '--json'))
  event = (ShuffleEvent(USERS, randomizer=randomizer) if release == 'shuffle'
           else SumOfReportsEvent(USERS, randomizer))
  assert report['certified']['epsilon'] == _api_epsilon(event, 'pld',
                                                        relation)
  assert (report['protocol']['rate_if_one'],
          report['protocol']['rate_if_zero']) == (0.75, 0.25)


def test_calibrate_finds_the_rounds_of_a_noisy_sum(capsys):
  status = main.main(['calibrate', '--solve', 'rounds', '--target-epsilon',
                      '1', '--num-users', str(USERS), *RATES[0],
                      '--domain-size', str(DOMAIN), '--release', 'sum',
                      '--relation', 'deletion', '--noise', 'discrete-laplace',
                      '--scale', '3', '--delta', str(DELTA), '--accountant',
                      'pld', '--json'])
  assert status == 0, capsys.readouterr().err
  report = json.loads(capsys.readouterr().out)
  event = SumOfReportsEvent(USERS, RATES[1],
                            aggregator_noise=DiscreteLaplaceSumEvent(3.0))
  rounds = report['value']
  assert rounds > 1 and report['certified']['epsilon'] <= 1
  assert (_api_epsilon(event, 'pld', 'deletion', rounds) <= 1
          < _api_epsilon(event, 'pld', 'deletion', rounds + 1))


_SUM = ('--num-users', '100', '--domain-size', '8', '--delta', '1e-8',
        '--release', 'sum')
_NOISE = ('--noise', 'discrete-gaussian', '--sigma', '3')
_OUE = ('--randomizer', 'oue', '--local-epsilon', '2')


@pytest.mark.parametrize('arguments,message', [
    ((*_SUM, *_OUE, '--noise', 'binomial', '--num-trials', '100'),
     'takes --noise discrete-gaussian or discrete-laplace only'),
    ((*_SUM, *_OUE, '--noise', 'discrete-laplace'), 'needs --scale'),
    ((*_SUM, *_OUE, '--noise', 'discrete-laplace', '--scale', '2',
      '--sigma', '3'), '--sigma does not describe --noise discrete-laplace'),
    ((*_SUM, *_OUE, '--noise', 'discrete-laplace', '--scale', '1e5'),
     '--scale must be a number in [0.1, 10000]; got 1e5'),
    ((*_SUM[:-2], *_OUE, *_NOISE), 'give --release sum'),
    ((*_SUM, '--randomizer', 'krr', '--local-epsilon', '2', *_NOISE),
     'needs a unary encoding'),
    ((*_SUM[2:], *_OUE, *_NOISE), 'needs --num-users'),
    ((*_SUM, *_OUE, '--noise', 'discrete-gaussian'), 'needs --sigma'),
    ((*_SUM, *_OUE, *_NOISE, '--sensitivity', '2'),
     '--sensitivity must be 1 on a sum of reports'),
    ((*_SUM, *_OUE, *_NOISE, '--dimension', '2'), '--domain-size coordinates'),
    ((*_SUM, *_OUE, '--sigma', '3'), '--sigma describes the noise of --noise'),
    ((*_SUM, *_OUE, '--noise', 'discrete-gaussian', '--sigma', '0.01'),
     '--sigma must be a number in [0.1, 100000]; got 0.01'),
    ((*_SUM, '--randomizer', 'ue', '--rate-if-one', '1', '--rate-if-zero',
      '0.2'), '--rate-if-one must be a number in (0, 1); got 1'),
    ((*_SUM, '--randomizer', 'ue', '--rate-if-one', '0.5', '--rate-if-zero',
      '0'), '--rate-if-zero must be a number in (0, 1); got 0'),
    ((*_SUM, '--randomizer', 'ue', '--rate-if-one', 'x', '--rate-if-zero',
      '0.2'), "--rate-if-one must be a number in (0, 1); got 'x'"),
    ((*_SUM, '--randomizer', 'ue', '--rate-if-one', '0.3', '--rate-if-zero',
      '0.4'), '--rate-if-zero=0.4 must be below --rate-if-one=0.3 (0 < '
     '--rate-if-zero < --rate-if-one < 1)'),
    ((*_SUM, '--randomizer', 'ue', '--rate-if-one', '0.9999999999',
      '--rate-if-zero', '1e-300'), 'above 700'),
    ((*_SUM, '--randomizer', 'ue', '--rate-if-one', '0.7'),
     'rate-if-zero=None'),
    ((*_SUM, '--randomizer', 'ue', '--rate-if-one', '0.7', '--rate-if-zero',
      '0.2', '--local-epsilon', '1'), 'not --local-epsilon'),
    ((*_SUM, *_OUE, '--rate-if-one', '0.7'),
     "--rate-if-one=0.7 describe(s) randomizer 'ue'"),
])
def test_bad_flags_answer_in_one_line(capsys, arguments, message):
  assert main.main(['epsilon', *arguments]) == 2
  error = capsys.readouterr().err
  assert message in error, error
  assert error.count('\n') == 1 and 'Traceback' not in error


@pytest.mark.parametrize('arguments,message', [
    (('--num-users', '100', '--domain-size', '8', *RATES[0], '--solve',
      'local-epsilon'), 'which the rates of --randomizer ue fix'),
    (('--num-users', '100', '--domain-size', '8', *_OUE, '--release', 'sum',
      *_NOISE, '--solve', 'sigma'), 'with a client randomizer, solve'),
    # --noise alone has no eps0: its sigma was reported as local-epsilon.
    ((*_NOISE, '--solve', 'local-epsilon'), 'needs a client randomizer'),
    (('--noise', 'discrete-laplace', '--scale', '2', '--solve', 'sigma'),
     '--solve sigma does not describe --noise discrete-laplace'),
])
def test_calibrate_refuses_what_it_cannot_solve(capsys, arguments, message):
  assert main.main(['calibrate', '--target-epsilon', '1', '--delta', '1e-6',
                    *arguments]) == 2
  error = capsys.readouterr().err
  assert message in error and error.count('\n') == 1


def test_plot_refuses_to_sweep_the_epsilon_of_fixed_rates(capsys, tmp_path):
  assert main.main(['plot', '--num-users', '100', '--domain-size', '8',
                    *RATES[0], '--x', 'local-epsilon', '--output',
                    str(tmp_path / 'p.png')]) == 2
  error = capsys.readouterr().err
  assert 'which the rates of --randomizer ue fix' in error
  assert error.count('\n') == 1


def test_the_generic_bound_of_fixed_rates_in_a_hidden_sample(capsys):
  """pld-generic takes eps0 from the rates (a hidden sample's round has no
  local_epsilon of its own)."""
  assert main.main(['compare', '--num-users', '2000', '--domain-size', '8',
                    *RATES[0], '--sample-size', '500', '--delta', '1e-8',
                    '--methods', 'pld-generic', '--json']) == 0
  row, = json.loads(capsys.readouterr().out)['methods']
  generic = SampledWithoutReplacementDpEvent(
      2000, 500, ShuffleEvent(500, RATES[1].local_epsilon))
  assert row['epsilon'] == _api_epsilon(generic, 'pld', 'replace-one')
