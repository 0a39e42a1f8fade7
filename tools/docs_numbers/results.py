"""The computed numbers of docs/results.md."""

import functools

from .core import power_of_ten
from .core import protocol_epsilon
from .core import sig
from .core import table
from .core import value


@functools.lru_cache(maxsize=None)
def _girgis_fig4(local_epsilon: float):
  """{method: {T: epsilon}} of examples/girgis_figures.py's Fig. 4."""
  from shuffle_accountants.cli import protocols
  saved = protocols.MAX_LOWER_BOUND_ROUNDS
  protocols.MAX_LOWER_BOUND_ROUNDS = 10**5
  try:
    return {method: {rounds: protocol_epsilon(
        method, num_users=10**6, local_epsilon=local_epsilon, delta=1e-6,
        rounds=rounds) for rounds in (1, 100, 10**4, 10**5)}
            for method in ('pld', 'rdp', 'girgis-ub1', 'fmt21-closed',
                           'binary-rr-pair')}
  finally:
    protocols.MAX_LOWER_BOUND_ROUNDS = saved


@table('results.girgis_fig4', slow=True)
def _results_girgis_fig4():
  header = ['T', 'PLD (ours)', 'RDP (ours)', 'GIRGIS-UB1 route',
            'FMT21 closed, composed', 'binary-RR pair (lower)']
  series = _girgis_fig4(0.5)
  return header, [[power_of_ten(rounds)] + [sig(series[method][rounds], 4)
                                            for method in series]
                  for rounds in (1, 100, 10**4, 10**5)]


def _girgis_value(local_epsilon, method, rounds, digits):
  return lambda: sig(_girgis_fig4(local_epsilon)[method][rounds], digits)


def _girgis_ratio(local_epsilon, top, bottom, rounds=10**5, digits=2):
  def ratio():
    series = _girgis_fig4(local_epsilon)
    return sig(series[top][rounds] / series[bottom][rounds], digits)
  return ratio


for _key, _function in {
    'results.girgis_ub1_over_pld': _girgis_ratio(0.5, 'girgis-ub1', 'pld'),
    'results.girgis_pld_over_lower': _girgis_ratio(0.5, 'pld',
                                                   'binary-rr-pair'),
    'results.girgis_fmt21_over_pld': _girgis_ratio(0.5, 'fmt21-closed',
                                                   'pld'),
    'results.girgis_eps2_pld_1e4': _girgis_value(2.0, 'pld', 10**4, 4),
    'results.girgis_eps2_pld_1e5': _girgis_value(2.0, 'pld', 10**5, 4),
    'results.girgis_eps2_ub1_over_pld': _girgis_ratio(2.0, 'girgis-ub1',
                                                      'pld'),
    'results.girgis_eps2_pld_over_lower': _girgis_ratio(2.0, 'pld',
                                                        'binary-rr-pair'),
}.items():
  value(_key, slow=True)(_function)


@value('results.girgis_ub1_2000')
def _girgis_ub1_2000():
  """GIRGIS-UB1 at T = 10^5 with integer orders 2..2000 (as mathematics.md)."""
  from dp_accounting.rdp import rdp_privacy_accountant
  import numpy as np

  from shuffle_accountants.rdp import girgis
  orders = np.arange(2, 2001)
  epsilon, _ = rdp_privacy_accountant.compute_epsilon(
      orders, 10**5 * girgis.girgis_ub1(10**6, 0.5, orders), 1e-6)
  return sig(epsilon, 6)


@value('results.girgis_ub1_eps2_1e4')
def _girgis_ub1_eps2():
  return sig(protocol_epsilon('girgis-ub1', num_users=10**6,
                               local_epsilon=2.0, rounds=10**4, delta=1e-6), 5)


@functools.lru_cache(maxsize=None)
def _koskela_krr(adversary: str) -> float:
  import math

  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  accountant = ShufflePldAccountant(krr_adversary=adversary)
  accountant.compose(ShuffleEvent(num_users=1000, local_epsilon=math.log(13),
                                  num_categories=4))
  return accountant.get_epsilon(1e-4)


value('results.koskela_strong')(lambda: sig(_koskela_krr('strong'), 3))
value('results.koskela_weak')(lambda: sig(_koskela_krr('weak'), 3))


LIEW_PRINTED = {  # Liew et al.'s Table 2 as printed: baseline, Appr. 1, 2.
    (2.0, 1e-2): ('0.096', '0.17', '0.049'),
    (2.0, 1e-3): ('0.013', '0.012', '0.024'),
    (8.0, 1e-2): ('9.52', '8.57', '8.18'),
    (8.0, 1e-3): ('3.86', '1.78', '1.58')}


@table('results.liew_table2', slow=True)
def _results_liew_table2():
  header = ['ε0', 'γ', 'PLD (ours)', 'RDP (ours)', 'printed: baseline',
            'Approach 1', 'Approach 2']
  rows = []
  for (local_epsilon, rate), printed in LIEW_PRINTED.items():
    fields = dict(num_users=10**4, local_epsilon=local_epsilon,
                  checkin_rate=rate, rounds=100, delta=1e-4)
    rows.append([f'{local_epsilon:g}', power_of_ten(rate),
                 sig(protocol_epsilon('pld', **fields), 4),
                 sig(protocol_epsilon('rdp', **fields), 4), *printed])
  return header, rows


@value('results.liew_mnist_100_epochs', slow=True)
def _liew_mnist():
  epsilon = protocol_epsilon('pld', num_users=60_000, noise_multiplier=0.86,
                             checkin_rate=1e-3, rounds=100_000,
                             delta=1 / 60_000)
  return f'{epsilon:.0f}'


@functools.lru_cache(maxsize=None)
def _mixed():
  import dp_accounting

  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  training = dp_accounting.SelfComposedDpEvent(
      dp_accounting.PoissonSampledDpEvent(
          0.01, dp_accounting.GaussianDpEvent(noise_multiplier=2.0)), 1000)
  day = ShuffleEvent(num_users=10**5, local_epsilon=2.0, num_categories=4)
  alone = ShufflePldAccountant().compose(training).get_epsilon(1e-6)
  both = ShufflePldAccountant().compose(training).compose(
      day, 365).get_epsilon(1e-6)
  return alone, both


value('results.mixed_training_alone')(lambda: sig(_mixed()[0], 4))
value('results.mixed_year_adds')(lambda: sig(_mixed()[1] - _mixed()[0], 1))


@functools.lru_cache(maxsize=None)
def _randomizer_choice():
  """Certified / generic per randomizer over n = 10^3..10^8 (the example)."""
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import randomizers
  from shuffle_accountants.pld import lower_bounds

  def certified(num_users, randomizer=None):
    accountant = ShufflePldAccountant()
    accountant.compose(ShuffleEvent(num_users, 1.0, randomizer=randomizer))
    return accountant.get_epsilon(1e-6)

  populations = [10**3, 10**4, 10**5, 10**6, 10**7, 10**8]
  generic = [certified(n) for n in populations]
  choices = {
      'krr': randomizers.KRandomizedResponse(100, 1.0),
      'oue': randomizers.OptimizedUnaryEncoding(100, 1.0),
      'olh': randomizers.OptimizedLocalHashing(100, 1.0),
      'hadamard': randomizers.HadamardResponse(100, 1.0),
      'subset': randomizers.SubsetSelection(100, 1.0)}
  gains = {name: [g / certified(n, r) for n, g in zip(populations, generic)]
           for name, r in choices.items()}
  oue = [certified(n, choices['oue']) for n in populations]
  lower = [lower_bounds.randomizer_epsilon_lower_bound(choices['oue'], n, 1,
                                                       1e-6)
           for n in populations]
  return gains, [upper / low for upper, low in zip(oue, lower)]


def _gain_range(names):
  def text():
    gains = _randomizer_choice()[0]
    values = [g for name in names for g in gains[name]]
    low, high = min(values), max(values)
    return f'{low:.1f}' if round(low, 1) == round(high, 1) else (
        f'{low:.1f}–{high:.1f}')
  return text


value('results.choice_krr_gain', slow=True)(
    lambda: f'{min(_randomizer_choice()[0]["krr"]):.0f}–'
    f'{max(_randomizer_choice()[0]["krr"]):.0f}')
value('results.choice_other_gain', slow=True)(
    _gain_range(['oue', 'olh', 'hadamard', 'subset']))
value('results.choice_oue_over_lower', slow=True)(
    lambda: f'{min(_randomizer_choice()[1]):.2f}–'
    f'{max(_randomizer_choice()[1]):.2f}')


# Issue 53's points: (n, eps0, delta).
BINARY_RR_POINTS = ((10**4, 1.0, 1e-6), (10**5, 4.0, 1e-6), (10**6, 4.0, 1e-6),
                    (10**6, 8.0, 1e-8), (10**5, 5.0, 1e-9))


@functools.lru_cache(maxsize=None)
def _binary_rr_row(num_users, local_epsilon, delta, rounds):
  """(KHH-KRR-WEAK, certified, exact all-equal pair) for shuffled 2-RR."""
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import randomizers
  from shuffle_accountants.pld import lower_bounds

  def certified(adversary):
    accountant = ShufflePldAccountant(krr_adversary=adversary)
    accountant.compose(ShuffleEvent(num_users, local_epsilon, 2), rounds)
    return accountant.get_epsilon(delta)
  # Both are lower bounds on the all-equal pair; with 50 grid points per
  # standard deviation the optimistic rounding's bias stays within 0.2 % of
  # epsilon at 1000 rounds, and one round is exact up to rounding.
  lower = max(lower_bounds.binary_rr_all_equal_pair_epsilon_lower_bound(
      num_users, local_epsilon, rounds, delta, grid_points_per_std=50.0),
              lower_bounds.randomizer_epsilon_lower_bound(
                  randomizers.KRandomizedResponse(2, local_epsilon),
                  num_users, rounds, delta))
  return certified('weak'), certified('shuffled_output'), lower


@table('results.binary_rr_worst', slow=True)
def _results_binary_rr_worst():
  header = ['n', 'ε0', 'δ', 'T', 'KHH-KRR-WEAK (k-RR pairs alone)',
            'certified (BINARY-RR-CONFIGURATIONS)',
            'all-equal pair (lower)', 'certified / lower']
  rows = []
  for rounds in (1, 1000):
    for num_users, local_epsilon, delta in BINARY_RR_POINTS:
      weak, certified, lower = _binary_rr_row(num_users, local_epsilon,
                                              delta, rounds)
      rows.append([power_of_ten(num_users), f'{local_epsilon:g}',
                   power_of_ten(delta), power_of_ten(rounds), sig(weak, 4),
                   sig(certified, 4), sig(lower, 4),
                   f'{certified / lower:.3f}'])
  return header, rows
