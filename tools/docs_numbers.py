"""Every computed number of the README and docs, produced by one registry.

The Markdown marks each computed number, so that none can go stale:

* `<!-- value: KEY -->0.6237<!-- /value -->`: one number (or short text),
  `VALUES[KEY]` of this module, formatted as registered;
* `<!-- table: KEY -->` ... `<!-- /table -->`: a whole table, `TABLES[KEY]`
  (`<!-- output: KEY -->` ... `<!-- /output -->`: a program's printed output);
* in a ```python block, `print(...)  # 0.6237 ...`: the comment's leading
  number is what that print shows, at the comment's significant digits.

The tolerance is the rounding shown: the page must equal the code's value
formatted to the page's digits (half a unit of the last digit shown). Wall
times are not generated (the benchmarks print them). Numbers that are not
computed results (parameters, years, the papers' own printed values,
timings) are exempt; `--inventory` lists every
result-like number of a page that no marker covers, and `EXEMPT` names the
ones that are recognisably not ours or pinned by a test (tests/docs/
test_numbers.py checks that every page's list is empty).

  python tools/docs_numbers.py              rewrite every marked number
  python tools/docs_numbers.py --fast       only those that take seconds
  python tools/docs_numbers.py --check      compare only; exit 1 if stale
  python tools/docs_numbers.py --inventory  result-like numbers not covered
"""

import argparse
import functools
import math
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / 'README.md'] + sorted((ROOT / 'docs').glob('*.md'))

VALUE_MARK = re.compile(
    r'<!-- value: (?P<key>[\w.-]+) -->(?P<text>.*?)<!-- /value -->', re.S)
TABLE_MARK = re.compile(
    r'(?P<open><!-- (?P<kind>table|output): (?P<key>[\w.-]+) -->\n)'
    r'(?P<text>.*?)(?P<close><!-- /(?P=kind) -->)', re.S)
PYTHON_BLOCK = re.compile(r'```python\n(.*?)```', re.S)
NUMBER = re.compile(r'-?\d+(?:\.\d+)?(?:e[-+]?\d+)?')
PRINT_COMMENT = re.compile(r'^print\(.*\)\s*#\s*(?P<number>\d[\d.e+-]*)')


class Entry(NamedTuple):
  compute: Callable[[], object]
  slow: bool
  # Relative round-off of numbers that follow the machine's floating point
  # (uncertified FFT estimates): the page is compared at this precision.
  machine_noise: float = 0.0


VALUES: Dict[str, Entry] = {}
TABLES: Dict[str, Entry] = {}


def value(key: str, slow: bool = False):
  """Registers a function returning the text of one marked value."""
  def register(function):
    VALUES[key] = Entry(function, slow)
    return function
  return register


def table(key: str, slow: bool = False, machine_noise: float = 0.0):
  """Registers a function returning a table as (header, rows) of strings.

  `machine_noise`: numeric cells also agree within this relative difference
  (for numbers whose last digits follow the CPU's floating-point round-off).
  """
  def register(function):
    TABLES[key] = Entry(lambda: _markdown_table(*function()), slow,
                        machine_noise)
    return function
  return register


def output(key: str, slow: bool = False):
  """Registers a function returning printed text, shown as a code block."""
  def register(function):
    TABLES[key] = Entry(lambda: f'```\n{function().rstrip()}\n```\n', slow)
    return function
  return register


def sig(number: float, digits: int = 4) -> str:
  """`number` to `digits` significant digits, trailing zeros kept."""
  text = f'{number:#.{digits}g}'
  if 'e' in text:
    mantissa, exponent = text.split('e')
    return f'{mantissa.rstrip(".")}e{int(exponent)}'
  return text.rstrip('.')


def power_of_ten(number: float) -> str:
  """10⁴-style text for a parameter (1 and 10 as they are)."""
  exponent = round(math.log10(number))
  if exponent in (0, 1):
    return str(10**exponent)
  superscript = str.maketrans('-0123456789', '⁻⁰¹²³⁴⁵⁶⁷⁸⁹')
  return '10' + str(exponent).translate(superscript)


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]
                    ) -> str:
  lines = ['| ' + ' | '.join(header) + ' |',
           '|' + '---|' * len(header)]
  lines += ['| ' + ' | '.join(row) + ' |' for row in rows]
  return '\n'.join(lines) + '\n'


def _cells(text: str) -> List[List[str]]:
  return [[cell.strip() for cell in line.strip().strip('|').split('|')]
          for line in text.strip().splitlines()]


def tables_agree(page_text: str, code_text: str,
                 machine_noise: float = 0.0) -> bool:
  """Equal cell by cell (spacing at the ends aside); numbers within
  `machine_noise` relative of each other count as equal."""
  page, code = _cells(page_text), _cells(code_text)
  if [len(row) for row in page] != [len(row) for row in code]:
    return False
  return all(_cells_agree(a, b, machine_noise)
             for page_row, code_row in zip(page, code)
             for a, b in zip(page_row, code_row))


def _cells_agree(page: str, code: str, machine_noise: float) -> bool:
  if page == code:
    return True
  try:
    page_number, code_number = float(page), float(code)
  except ValueError:
    return False
  return abs(page_number - code_number) <= machine_noise * abs(code_number)


# ---------------------------------------------------------------- the code
# Heavy imports stay inside the functions: listing the registry is instant.


@functools.lru_cache(maxsize=None)
def _benchmark(name: str):
  """benchmarks/NAME.py as a module: the registry calls its functions."""
  import importlib.util
  spec = importlib.util.spec_from_file_location(
      f'benchmark_{name}', ROOT / 'benchmarks' / f'{name}.py')
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def _protocol_epsilon(method: str, **fields) -> Optional[float]:
  from shuffle_accountants.cli import protocols
  return protocols.evaluate(protocols.Protocol(**fields), method).epsilon


# ---- docs/pld_accountant.md


@table('pld.comparison', slow=True)
def _pld_comparison():
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
  from shuffle_accountants import ShuffleRdpAccountant
  from shuffle_accountants.pairs import fmt21
  from shuffle_accountants.pld import lower_bounds
  header = ['ε0', 'n', 'T', 'PLD (ours)', 'RDP (ours)', 'FMT21 closed',
            'lower bound']
  settings = [(1.0, 10**4, 1), (1.0, 10**4, 10**4), (1.0, 10**6, 1),
              (1.0, 10**6, 10**4), (1.0, 10**9, 1), (1.0, 10**9, 10**4),
              (4.0, 10**4, 1), (4.0, 10**6, 1), (4.0, 10**6, 10**4),
              (4.0, 10**9, 10**4)]
  rows = []
  for local_epsilon, num_users, rounds in settings:
    cells = [f'{local_epsilon:g}', power_of_ten(num_users),
             power_of_ten(rounds)]
    for accountant in (ShufflePldAccountant(), ShuffleRdpAccountant()):
      accountant.compose(ShuffleEvent(num_users, local_epsilon), rounds)
      cells.append(sig(accountant.get_epsilon(1e-6), 4))
    if fmt21.condition_holds_unchecked(num_users, local_epsilon,
                                       1e-6 / (2 * rounds)):
      cells.append(sig(fmt21.composed_closed_form_epsilon(
          num_users, local_epsilon, rounds, 1e-6), 4))
    else:
      cells.append(f'{local_epsilon:g} (condition fails)')
    cells.append(sig(lower_bounds.binary_rr_all_equal_pair_epsilon_lower_bound(
        num_users, local_epsilon, 1, 1e-6), 4) if rounds == 1
                 and num_users <= 10**6 else '')
    rows.append(cells)
  return header, rows


# ---- docs/rdp_accountant.md


@functools.lru_cache(maxsize=None)
def _rdp_row(local_epsilon: float, num_users: int, rounds: int):
  """(UB1, EFM19, accountant, order, winner) as benchmarks/rdp_accountant.py."""
  import numpy as np
  from dp_accounting.rdp import rdp_privacy_accountant
  from shuffle_accountants import ShuffleEvent, ShuffleRdpAccountant
  from shuffle_accountants.rdp import girgis
  orders = np.arange(2, 2049)
  ub1, _ = rdp_privacy_accountant.compute_epsilon(
      orders, rounds * girgis.girgis_ub1(num_users, local_epsilon, orders),
      1e-6)
  efm, _ = rdp_privacy_accountant.compute_epsilon(
      orders, rounds * girgis.efm19_rdp_baseline(num_users, local_epsilon,
                                                 orders), 1e-6)
  accountant = ShuffleRdpAccountant()
  accountant.compose(ShuffleEvent(num_users, local_epsilon), rounds)
  ours, order = accountant.get_epsilon_and_optimal_order(1e-6)
  winner = accountant.explain(1e-6)[0]['bound']
  return ub1, efm, ours, order, winner


RDP_SETTINGS = [(0.5, 10**6, 10**3), (0.5, 10**6, 10**5), (1.0, 10**4, 10**3),
                (1.0, 10**6, 10**3), (2.0, 10**6, 10**3), (4.0, 10**6, 10**3),
                (4.0, 10**9, 10**5), (0.5, 10**9, 1)]


@table('rdp.benchmark', slow=True)
def _rdp_benchmark():
  header = ['ε0', 'n', 'T', 'GIRGIS-UB1', 'EFM19 (baseline)', 'accountant',
            'UB1/ours', 'order', 'winner']
  rows = []
  for local_epsilon, num_users, rounds in RDP_SETTINGS:
    ub1, efm, ours, order, winner = _rdp_row(local_epsilon, num_users, rounds)
    rows.append([f'{local_epsilon:g}', f'{num_users:.0e}'.replace('+0', ''),
                 f'{rounds:.0e}'.replace('+0', '') if rounds > 1 else '1',
                 sig(ub1, 4), sig(efm, 2) if efm >= 1e4 else sig(efm, 4),
                 sig(ours, 4), f'{ub1 / ours:.2f}', f'{order:g}', winner])
  return header, rows


@value('rdp.ub1_ratio_range', slow=True)
def _rdp_ratio_range():
  ratios = [_rdp_row(*setting)[0] / _rdp_row(*setting)[2]
            for setting in RDP_SETTINGS]
  return f'{sig(min(ratios), 2)}–{sig(max(ratios), 2)}'


@value('rdp.girgis_8x_ub1', slow=True)
def _rdp_8x_ub1():
  return sig(_rdp_row(0.5, 10**6, 10**5)[0], 4)


@value('rdp.girgis_8x_ours', slow=True)
def _rdp_8x_ours():
  return sig(_rdp_row(0.5, 10**6, 10**5)[2], 3)


@functools.lru_cache(maxsize=None)
def _large_n_one_round():
  """n = 10^7, eps0 = 0.3, one round: order-1024 cap, staged, PLD."""
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
  from shuffle_accountants import ShuffleRdpAccountant
  from shuffle_accountants.rdp.accountant import DEFAULT_ORDERS
  event = ShuffleEvent(num_users=10**7, local_epsilon=0.3)
  capped = ShuffleRdpAccountant(orders=DEFAULT_ORDERS)  # no extensions
  staged = ShuffleRdpAccountant()
  pld = ShufflePldAccountant()
  return tuple(accountant.compose(event).get_epsilon(1e-6)
               for accountant in (capped, staged, pld))


def _times_ten(number: float) -> str:
  mantissa, exponent = f'{number:.1e}'.split('e')
  superscript = str.maketrans('-0123456789', '⁻⁰¹²³⁴⁵⁶⁷⁸⁹')
  return f'{mantissa}·10{str(int(exponent)).translate(superscript)}'


for _index, _name in enumerate(('capped', 'staged', 'pld')):
  value(f'rdp.large_n_{_name}')(
      lambda index=_index: _times_ten(_large_n_one_round()[index]))


# ---- docs/results.md


@functools.lru_cache(maxsize=None)
def _girgis_fig4(local_epsilon: float):
  """{method: {T: epsilon}} of examples/girgis_figures.py's Fig. 4."""
  from shuffle_accountants.cli import protocols
  saved = protocols.MAX_LOWER_BOUND_ROUNDS
  protocols.MAX_LOWER_BOUND_ROUNDS = 10**5
  try:
    return {method: {rounds: _protocol_epsilon(
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
  import numpy as np
  from dp_accounting.rdp import rdp_privacy_accountant
  from shuffle_accountants.rdp import girgis
  orders = np.arange(2, 2001)
  epsilon, _ = rdp_privacy_accountant.compute_epsilon(
      orders, 10**5 * girgis.girgis_ub1(10**6, 0.5, orders), 1e-6)
  return sig(epsilon, 6)


@value('results.girgis_ub1_eps2_1e4')
def _girgis_ub1_eps2():
  return sig(_protocol_epsilon('girgis-ub1', num_users=10**6,
                               local_epsilon=2.0, rounds=10**4, delta=1e-6), 5)


@functools.lru_cache(maxsize=None)
def _koskela_krr(adversary: str) -> float:
  import math
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
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
                 sig(_protocol_epsilon('pld', **fields), 4),
                 sig(_protocol_epsilon('rdp', **fields), 4), *printed])
  return header, rows


@value('results.liew_mnist_100_epochs', slow=True)
def _liew_mnist():
  return f"{_protocol_epsilon('pld', num_users=60_000, noise_multiplier=0.86, checkin_rate=1e-3, rounds=100_000, delta=1 / 60_000):.0f}"


@functools.lru_cache(maxsize=None)
def _mixed():
  import dp_accounting
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
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
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
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
  return gains, [u / l for u, l in zip(oue, lower)]


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


# ---- docs/numeric.md

NUMERIC_POPULATIONS = (10**3, 10**4, 10**5, 10**6)
NUMERIC_DIMENSIONS = (1, 2, 8, 32)


@functools.lru_cache(maxsize=None)
def _gaussian_shuffle(num_users, sigma, rounding=True, delta=1e-6,
                      dimension=1):
  """Certified epsilon of one shuffled round of GaussianRandomizer reports
  (randomized rounding, or plain clipping)."""
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
  from shuffle_accountants import randomizers
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users, randomizer=(
      randomizers.GaussianRandomizer(sigma, dimension,
                                     randomized_rounding=rounding))))
  return accountant.get_epsilon(delta)


@functools.lru_cache(maxsize=None)
def _extreme_pair(num_users, sigma, dimension, delta=1e-6):
  """The extreme pair's blanket value (an estimate for plain clipping)."""
  from shuffle_accountants.pld import continuous_blanket
  return continuous_blanket.extreme_pair_epsilon(
      num_users, delta, noise_multiplier=sigma, dimension=dimension)


@functools.lru_cache(maxsize=None)
def _gaussian_lower(num_users, sigma, delta=1e-6):
  from shuffle_accountants.pld import continuous_blanket
  return continuous_blanket.threshold_count_epsilon_lower_bound(
      num_users, sigma, delta)


@table('numeric.epsilons', slow=True)
def _numeric_epsilons():
  header = (['n', 'lower bound (NUM-LB)',
             'certified: randomized rounding (d = 1)',
             'certified: plain clipping, d = 1 (envelope)',
             'certified: plain clipping, d > 1 (D7)']
            + [f'estimate, clipping, d = {d} (unproven)'
               for d in NUMERIC_DIMENSIONS])
  rows = [[f'10^{round(math.log10(n))}', sig(_gaussian_lower(n, 2.0), 3),
           sig(_gaussian_shuffle(n, 2.0), 3),
           sig(_gaussian_shuffle(n, 2.0, rounding=False), 3),
           sig(_gaussian_shuffle(n, 2.0, rounding=False, dimension=2), 3)]
          + [sig(_extreme_pair(n, 2.0, d), 3) for d in NUMERIC_DIMENSIONS]
          for n in NUMERIC_POPULATIONS]
  return header, rows


# Issue 31's targets: 0.1x and 0.25x the no-amplification epsilon (D7).
@value('numeric.target_sigma2')
def _numeric_target_sigma2():
  return sig(0.1 * _gaussian_shuffle(1, 2.0, rounding=False), 3)


@value('numeric.target_sigma1')
def _numeric_target_sigma1():
  return sig(0.25 * _gaussian_shuffle(1, 1.0, rounding=False), 3)


def _subsampled_shuffle_gaussian(dimension):
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import SubsampledShuffleGaussianEvent
  return ShufflePldAccountant().compose(SubsampledShuffleGaussianEvent(
      10**5, 10**4, 2.0, dimension=dimension)).get_epsilon(1e-6)


@value('numeric.subsampled_scalar')
def _numeric_subsampled_scalar():
  return sig(_subsampled_shuffle_gaussian(1), 3)


@value('numeric.subsampled_unknown')
def _numeric_subsampled_unknown():
  return sig(_subsampled_shuffle_gaussian(None), 3)


@table('numeric.targets', slow=True)
def _numeric_targets():
  header = ['sigma', 'n', 'certified: randomized rounding',
            'lower bound (NUM-LB)', 'rounding / lower',
            'certified: plain clipping (envelope)', 'clipping / lower',
            'no amplification (D7)']
  rows = []
  for sigma, n in ((2.0, 10**4), (1.0, 10**5), (2.0, 10**6), (5.0, 10**4),
                   (0.5, 10**5)):
    upper, lower = _gaussian_shuffle(n, sigma), _gaussian_lower(n, sigma)
    plain = _gaussian_shuffle(n, sigma, rounding=False)
    rows.append([f'{sigma:g}', f'10^{round(math.log10(n))}', sig(upper, 3),
                 sig(lower, 3), f'{upper / lower:.1f}', sig(plain, 3),
                 f'{plain / lower:.1f}',
                 sig(_gaussian_shuffle(1, sigma, rounding=False), 3)])
  return header, rows


# ---- docs/performance.md and docs/limits.md

RATIO_POPULATIONS = (10**3, 10**5, 10**7, 10**9)
RATIO_EPSILONS = (0.1, 1.0, 8.0)
RATIO_ROUNDS = (1, 10, 1000, 100_000)


@functools.lru_cache(maxsize=None)
def _rdp_over_pld(num_users: int, local_epsilon: float, rounds: int) -> float:
  """benchmarks/loops.py's table 4: RDP epsilon / PLD epsilon at 1e-6."""
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
  from shuffle_accountants import ShuffleRdpAccountant
  event = ShuffleEvent(num_users, local_epsilon)
  pld = ShufflePldAccountant().compose(event, rounds).get_epsilon(1e-6)
  return ShuffleRdpAccountant().compose(event, rounds).get_epsilon(1e-6) / pld


def _all_ratios():
  return {(n, e, t): _rdp_over_pld(n, e, t) for n in RATIO_POPULATIONS
          for e in RATIO_EPSILONS for t in RATIO_ROUNDS}


@table('performance.rdp_over_pld', slow=True)
def _performance_ratio_table():
  header = ['n', 'ε0'] + [f'T = {power_of_ten(t)}' for t in RATIO_ROUNDS]
  return header, [[power_of_ten(n), f'{e:g}'] + [
      f'{_rdp_over_pld(n, e, t):.2f}' for t in RATIO_ROUNDS]
                  for n in RATIO_POPULATIONS for e in RATIO_EPSILONS]


value('performance.ratio_cells_within_2', slow=True)(
    lambda: str(sum(r <= 2 for r in _all_ratios().values())))
value('performance.ratio_cells', slow=True)(lambda: str(len(_all_ratios())))
value('performance.ratio_worst', slow=True)(
    lambda: f'{max(_all_ratios().values()):.1f}')
value('performance.ratio_near_pure', slow=True)(
    lambda: f'{_rdp_over_pld(10**5, 8.0, 1):.1f}')


# ---- docs/limits.md: the certified FFT round-off (D24)


# The estimate's last digits follow the CPU's FFT round-off (6e-6 relative
# apart on two x86-64 machines at delta = 1e-8 after 1e5 rounds).
@table('limits.roundoff', machine_noise=2e-5)
def _roundoff_table():
  """epsilon of the composed PLD: W18's estimate against D24's certificate."""
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
  from shuffle_accountants.pld import composition
  rows = []
  for num_users, rounds in ((10**5, 365), (10**6, 10**3), (10**6, 10**4),
                            (10**4, 10**5)):
    accountant = ShufflePldAccountant().compose(
        ShuffleEvent(num_users, local_epsilon=1.0), rounds)
    pld = accountant._composition().pld  # pylint: disable=protected-access
    certified = composition.DirectProfile(pld)
    estimated = composition.DirectProfile(pld, certify=False)
    for delta in (1e-6, 1e-8):
      old, new = estimated.epsilon(delta), certified.epsilon(delta)
      rows.append([f'10^{round(math.log10(num_users))}', f'{rounds:,}',
                   f'{delta:.0e}', f'{old:.6f}', f'{new:.6f}'])
  return (['n', 'rounds', 'δ', 'ε, estimate (W18)', 'ε, certified (D24)'],
          rows)


# ---- docs/randomizers.md


@functools.lru_cache(maxsize=None)
def _randomizer_rows():
  """benchmarks/randomizers.py's rows at (10^4, 1), (10^6, 365), (10^8, 1)."""
  return tuple(_benchmark('randomizers').rows(False, [(10**4, 1), (10**6, 365), (10**8, 1)]))


@value('randomizers.krr_clone_rate_1e4', slow=True)
def _krr_clone_rate():
  return next(f'{row["clone_rate"]:.5f}' for row in _randomizer_rows()
              if row['randomizer'] == 'k-RR' and row['eps0'] == 1.0
              and row['n'] == 10**4)


def _over_lower_range(names, keep):
  """'lo–hi' of certified / lower bound over the catalogue rows kept."""
  ratios = [row['certified'] / row['lower'] for row in _randomizer_rows()
            if row['randomizer'] in names and keep(row)]
  return f'{min(ratios):.2f}–{max(ratios):.2f}'


_UNARY_LIKE = ('OUE', 'OLH', 'subset')
value('randomizers.unary_like_over_lower_small', slow=True)(
    lambda: _over_lower_range(_UNARY_LIKE, lambda row: row['eps0'] <= 1))
value('randomizers.unary_like_over_lower_large', slow=True)(
    lambda: _over_lower_range(_UNARY_LIKE, lambda row: row['eps0'] >= 2))
value('randomizers.hadamard_over_lower', slow=True)(
    lambda: _over_lower_range(('Hadamard',), lambda row: not (
        row['eps0'] == 8 and row['n'] == 10**4)))
value('randomizers.hadamard_8_over_lower', slow=True)(
    lambda: _over_lower_range(('Hadamard',), lambda row: (
        row['eps0'] == 8 and row['n'] == 10**4)).split('–')[0])


@table('randomizers.catalogue', slow=True)
def _randomizers_catalogue():
  header = ['randomizer', 'ε0', 'n', 'T', 'generic FMT21', 's(R) clone',
            'blanket (D16; k-RR: KHH-KRR-WEAK)', 'certified', 'exact LB',
            'certified / LB', 'certified / generic']

  def cell(number, digits=5):
    return '-' if number is None else f'{number:.{digits}f}'

  rows = []
  for row in _randomizer_rows():
    rows.append([row['randomizer'], f'{row["eps0"]:g}', f'{row["n"]:.0e}',
                 str(row['rounds']), cell(row['generic']),
                 cell(row['clone_rate']), cell(row['blanket']),
                 cell(row['certified']), cell(row['lower']),
                 cell(row['certified'] / row['lower'], 3) if row['lower']
                 else '-', cell(row['certified'] / row['generic'], 3)])
  return header, rows


@functools.lru_cache(maxsize=None)
def _hadamard_year():
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
  from shuffle_accountants import randomizers
  hadamard = randomizers.HadamardResponse(domain_size=1000, local_epsilon=2.0)
  named, generic = ShufflePldAccountant(), ShufflePldAccountant()
  named.compose(ShuffleEvent(num_users=10**6, randomizer=hadamard), 365)
  generic.compose(ShuffleEvent(num_users=10**6, local_epsilon=2.0), 365)
  return named.get_epsilon(1e-6), generic.get_epsilon(1e-6)


value('randomizers.hadamard_generic')(lambda: sig(_hadamard_year()[1], 3))


# ---- docs/checkin.md


@functools.lru_cache(maxsize=None)
def _checkin_row(rate: float, kind: str, local: float):
  """(PLD, RDP, central DP-SGD) as benchmarks/checkin.py --quick --rdp."""
  from dp_accounting import dp_event
  from dp_accounting.pld import pld_privacy_accountant
  from shuffle_accountants import CheckInEvent, ShufflePldAccountant
  from shuffle_accountants import ShuffleRdpAccountant
  keyword = 'local_epsilon' if kind == 'eps0' else 'noise_multiplier'
  event = CheckInEvent(60_000, rate, **{keyword: local})
  pld, rdp = (accountant.compose(event, 100).get_epsilon(1 / 60_000)
              for accountant in (ShufflePldAccountant(),
                                 ShuffleRdpAccountant()))
  central = None
  if kind == 'sigma':
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.PoissonSampledDpEvent(
        rate, dp_event.GaussianDpEvent(local)), 100)
    central = accountant.get_epsilon(1 / 60_000)
  return pld, rdp, central


CHECKIN_ROWS = [(1e-3, 'eps0', 1.0), (1e-3, 'eps0', 2.0), (1e-3, 'eps0', 8.0),
                (1e-3, 'sigma', 0.86), (1e-3, 'sigma', 2.0),
                (1e-3, 'sigma', 5.0), (1e-2, 'eps0', 1.0), (1e-2, 'eps0', 2.0),
                (1e-2, 'sigma', 2.0), (0.1, 'eps0', 1.0), (0.1, 'eps0', 2.0),
                (0.1, 'sigma', 2.0)]


@table('checkin.numbers', slow=True)
def _checkin_numbers():
  header = ['γ', 'local randomizer', 'PLD ε', 'RDP ε', 'central DP-SGD ε']
  rows = []
  for rate, kind, local in CHECKIN_ROWS:
    pld, rdp, central = _checkin_row(rate, kind, local)
    rows.append([power_of_ten(rate) if rate < 0.1 else f'{rate:g}',
                 f'{"ε0" if kind == "eps0" else "σ"} = {local:g}',
                 sig(pld, 3), sig(rdp, 3),
                 '' if central is None else sig(central, 3)])
  return header, rows


@value('checkin.local_over_central', slow=True)
def _checkin_local_over_central():
  ratios = [pld / central for pld, _, central in
            (_checkin_row(*row) for row in CHECKIN_ROWS) if central]
  return f'{min(ratios):.0f}–{max(ratios):.0f}'


@functools.lru_cache(maxsize=None)
def _checkin_blanket_rows():
  return _benchmark('checkin').blanket_table()


@table('checkin.blanket', slow=True)
def _checkin_blanket_table():
  """benchmarks/checkin.py --blanket without its times (issue 34, D31)."""
  header = ['n', 'γ', 'ε0', 'rounds', 'exact pair (lower bound)',
            'k = 2 before', 'k = 2 now', 'now / pair', 'generic before',
            'generic now', 'now / pair']
  rows = []
  for n, gamma, eps0, rounds, exact, *results in _checkin_blanket_rows():
    row = [f'{n:,}', f'{gamma:g}', f'{eps0:g}', str(rounds),
           '—' if exact is None else sig(exact, 3)]
    for before, after, _ in (results[:3], results[3:]):
      row += [sig(before, 3), sig(after, 3),
              '—' if exact is None else f'{after / exact:.2f}×']
    rows.append(row)
  return header, rows


@value('checkin.blanket_moved', slow=True)
def _checkin_blanket_moved():
  """How far D31 moved epsilon at the table's points (after / before)."""
  ratios = [after / before for row in _checkin_blanket_rows()
            for before, after, _ in (row[5:8], row[8:11])]
  return f'{min(ratios):.2f}–{max(ratios):.2f}'


@value('checkin.rdp_over_pld_100', slow=True)
def _checkin_rdp_over_pld_100():
  """RDP over PLD epsilon after D32 at the blanket table's 100-round points."""
  from shuffle_accountants import CheckInEvent, ShufflePldAccountant
  from shuffle_accountants import ShuffleRdpAccountant
  checkin = _benchmark('checkin')
  ratios = []
  for n, gamma, eps0, rounds in checkin.BLANKET_POINTS:
    if rounds != 100:
      continue
    for categories in (2, None):
      event = CheckInEvent(n, gamma, local_epsilon=eps0,
                           num_categories=categories)
      rdp, pld = (accountant.compose(event, rounds).get_epsilon(
          checkin.BLANKET_DELTA) for accountant in (ShuffleRdpAccountant(),
                                                    ShufflePldAccountant()))
      ratios.append(rdp / pld)
  return f'{min(ratios):.2f}–{max(ratios):.2f}'


@functools.lru_cache(maxsize=None)
def _issue_16_rdp():
  from shuffle_accountants import CheckInEvent, ShuffleRdpAccountant
  accountant = ShuffleRdpAccountant(orders=[1.5, 2.0, 3.0])
  accountant.compose(CheckInEvent(num_users=10, checkin_rate=0.001,
                                  local_epsilon=3.0, num_categories=3))
  return ' / '.join(sig(rdp, 3) for rdp in accountant.contributions[0].bound.rdp)


value('checkin.issue_16_now')(_issue_16_rdp)


# ---- docs/checkin.md (distributed check-in) and the README


DISTRIBUTED_SETTINGS = [(60_000, 256)] + [(10**6, cohort) for cohort in
                                          (10, 100, 1_000, 10_000, 100_000)]


@functools.lru_cache(maxsize=None)
def _distributed_row(num_users: int, cohort: int):
  """benchmarks/distributed_checkin.py's row: sigma_agg 1, 2,340 steps."""
  return _benchmark('distributed_checkin').row(num_users, cohort, 1.0, 2340,
                                               with_rdp=False)


def _distributed_target():
  return _distributed_row(*DISTRIBUTED_SETTINGS[0])


@table('checkin.distributed', slow=True)
def _checkin_distributed():
  header = ['n', 'qn', 'σ per participant', 'PLD ε', 'D17 pair',
            'PLD / pair', 'central a/r', 'central r-1']
  rows = []
  for num_users, cohort in DISTRIBUTED_SETTINGS:
    r = _distributed_row(num_users, cohort)
    rows.append([f'{num_users:,}' if num_users < 10**6
                 else power_of_ten(num_users),
                 f'{cohort:g}' if cohort < 10**4 else power_of_ten(cohort),
                 f'{r["sigma"]:.3g}', sig(r['pld'], 4), sig(r['pair'], 4),
                 sig(r['ratio'], 4), sig(r['central_add_remove'], 4),
                 sig(r['central_replace_one'], 4)])
  return header, rows


for _key, _field, _digits in (('pld', 'pld', 4), ('pair', 'pair', 3),
                              ('ratio', 'ratio', 4),
                              ('central_add_remove', 'central_add_remove', 3),
                              ('central_replace_one', 'central_replace_one',
                               3)):
  value(f'checkin.distributed_{_key}', slow=True)(
      functools.partial(lambda f, d: sig(_distributed_target()[f], d),
                        _field, _digits))


@value('checkin.distributed_large_cohort_ratio', slow=True)
def _distributed_large_cohort_ratio():
  return sig(_distributed_row(*DISTRIBUTED_SETTINGS[-1])['ratio'], 3)


@functools.lru_cache(maxsize=None)
def _distributed_target_event():
  import math
  from shuffle_accountants import DistributedCheckInEvent
  return DistributedCheckInEvent(60_000, 256 / 60_000, 1.0 / math.sqrt(256),
                                 participation='hidden')


@value('checkin.distributed_rdp', slow=True)
def _distributed_rdp():
  from shuffle_accountants import ShuffleRdpAccountant
  return sig(ShuffleRdpAccountant().compose(_distributed_target_event(), 2340)
             .get_epsilon(1e-5), 3)


@value('checkin.distributed_local_noise', slow=True)
def _distributed_local_noise():
  """CheckInEvent with each participant's noise at sigma_agg = 1."""
  from shuffle_accountants import CheckInEvent, ShufflePldAccountant
  event = CheckInEvent(60_000, 256 / 60_000, noise_multiplier=1.0)
  return sig(ShufflePldAccountant().compose(event, 2340).get_epsilon(1e-5), 4)


# ---- docs/samplers.md and the README


@table('samplers.table', slow=True)
def _samplers_table():
  """benchmarks/samplers.py's table (python benchmarks/samplers.py prints it)."""
  text = _benchmark('samplers').table()
  cells = _cells(text)
  return cells[0], cells[2:]


@functools.lru_cache(maxsize=None)
def _samplers_row(sigma: float, epochs: int, columns: tuple):
  return _benchmark('samplers').row(sigma, epochs, columns)


value('samplers.shuffled_lower')(lambda: sig(_samplers_row(
    1.0, 1, ('shuffled',))['shuffled_lower'], 3))
value('samplers.shuffled_upper')(lambda: sig(_samplers_row(
    1.0, 1, ('shuffled',))['shuffled_upper'], 3))
value('samplers.poisson')(lambda: sig(_samplers_row(
    1.0, 1, ('poisson',))['poisson'], 3))
value('samplers.poisson_2')(lambda: sig(_samplers_row(
    1.0, 1, ('poisson',))['poisson'], 2))


@functools.lru_cache(maxsize=None)
def _shuffled_epochs(epochs: int):
  from shuffle_accountants.samplers import shuffled_batches_epsilon  # pylint: disable=g-import-not-at-top
  return shuffled_batches_epsilon(1.0, 1000, epochs, 1e-6)


value('samplers.plateau_epochs')(lambda: str(
    _shuffled_batches().LOWER_BOUND_MAX_EPOCHS))
value('samplers.plateau_lower')(lambda: sig(_shuffled_epochs(32).lower, 3))
value('samplers.plateau_lower_100')(lambda: sig(_shuffled_epochs(100).lower,
                                                3))
value('samplers.plateau_upper_32')(lambda: sig(_shuffled_epochs(32).upper, 3))
value('samplers.plateau_upper_100')(lambda: sig(_shuffled_epochs(100).upper,
                                                3))


def _shuffled_batches():
  from shuffle_accountants.samplers import shuffled_batches  # pylint: disable=g-import-not-at-top
  return shuffled_batches


value('samplers.allocation', slow=True)(lambda: sig(_samplers_row(
    1.0, 1, ('allocation',))['allocation_upper'], 3))


# ---- docs/training.md


@table('training.modes', slow=True)
def _training_modes():
  """The table examples/training_modes.py prints."""
  result = subprocess.run(
      [sys.executable, str(ROOT / 'examples' / 'training_modes.py')],
      capture_output=True, text=True, check=True, cwd=ROOT / 'examples')
  cells = _cells('\n'.join(line for line in result.stdout.splitlines()
                           if line.startswith('|')))
  return cells[0], cells[2:]


@functools.lru_cache(maxsize=None)
def _threat_models():
  """epsilon(1e-5) on training.md's setting per threat model (PLD)."""
  import dp_accounting
  from shuffle_accountants import DistributedCheckInEvent
  from shuffle_accountants import ShufflePldAccountant
  num_users, rate, sigma, steps = 1437, 1 / 12, 1.5, 180
  per_participant = sigma / math.sqrt(rate * num_users)
  central = dp_accounting.pld.PLDAccountant(
      dp_accounting.NeighboringRelation.REPLACE_ONE)
  central.compose(dp_accounting.PoissonSampledDpEvent(
      rate, dp_accounting.GaussianDpEvent(sigma)), steps)

  def distributed(participation):
    return ShufflePldAccountant().compose(DistributedCheckInEvent(
        num_users, rate, per_participant, participation=participation),
        steps).get_epsilon(1e-5)

  return dict(
      central=central.get_epsilon(1e-5), hidden=distributed('hidden'),
      revealed=distributed('revealed'),
      unamplified=ShufflePldAccountant().compose(
          dp_accounting.GaussianDpEvent(sigma), steps).get_epsilon(1e-5))


@table('training.threat_models', slow=True)
def _training_threat_models():
  epsilons = _threat_models()
  rows = [
      ('central DP-SGD, Poisson sampling', 'every clipped gradient (trusted)',
       'dp_accounting `PoissonSampledDpEvent(q, GaussianDpEvent(σ))`',
       epsilons['central']),
      ('secure aggregation, count only (`participation="hidden"`)',
       'the sum and the count k', '`DistributedCheckInEvent(n, q, σ/√(qn), '
       'participation="hidden")` (D17)', epsilons['hidden']),
      ('secure aggregation, participants revealed (default)',
       'the sum and who took part',
       '`DistributedCheckInEvent(n, q, σ/√(qn))` (D30, exact)',
       epsilons['revealed']),
      ('no amplification', 'the sum, every round counted as one the user '
       'joins', '`GaussianDpEvent(σ)` per step', epsilons['unamplified']),
  ]
  return (['threat model', 'the server sees', 'accounted as',
           'certified ε, replace-one'],
          [[model, sees, event, sig(epsilon, 3)]
           for model, sees, event, epsilon in rows])


value('training.revealed_over_hidden', slow=True)(lambda: sig(
    _threat_models()['revealed'] / _threat_models()['hidden'], 2))


# ---- docs/federated.md (Flower): one setting, every threat model

# n clients, expected cohort q n, update noise σ_agg C at that cohort,
# T rounds, δ.
FEDERATED = dict(num_users=1000, checkin_rate=0.1, noise_multiplier=5.0,
                 rounds=100, delta=1e-5)


def _federated_central(sampling: str, relation: str, sample_size: int
                       ) -> float:
  """ε of Flower's central release through our PldAccountant."""
  from flwr.supercore import privacy_accounting as flower
  from shuffle_accountants.adapters.flower import PldAccountant
  setting = FEDERATED
  accountant = PldAccountant(flower.PrivacyConfig(
      target_delta=setting['delta'], population_size=setting['num_users'],
      neighboring_relation=flower.NeighboringRelation(relation),
      sampling_method=flower.SamplingMethod(sampling)))
  accountant.compose(flower.GaussianPrivacyEvent(
      setting['noise_multiplier'], sample_size, setting['num_users']),
                     setting['rounds'])
  return accountant.get_epsilon(setting['delta'])


def _federated_secure_aggregation(participation: str) -> float:
  """ε of `DistributedNoiseFixedClipping` with `participation`."""
  from shuffle_accountants import DistributedCheckInEvent
  from shuffle_accountants import ShufflePldAccountant
  setting = FEDERATED
  cohort = setting['num_users'] * setting['checkin_rate']
  event = DistributedCheckInEvent(
      setting['num_users'], setting['checkin_rate'],
      setting['noise_multiplier'] / math.sqrt(cohort),
      participation=participation)
  return ShufflePldAccountant().compose(event, setting['rounds']).get_epsilon(
      setting['delta'])


@table('federated.threat_models')
def _federated_threat_models():
  cohort = int(FEDERATED['num_users'] * FEDERATED['checkin_rate'])
  population = FEDERATED['num_users']
  rows = [
      ('central DP, trusted server', 'no-amplification, add-or-remove-one',
       '`DifferentialPrivacyServerSideFixedClipping(..., accountant='
       'PldAccountant(config))`',
       _federated_central('no-amplification', 'add-or-remove-one', cohort)),
      ('central DP, trusted server', 'the same release, replace-one',
       '`PldAccountant` with `without-replacement`, sample_size = n',
       _federated_central('without-replacement', 'replace-one', population)),
      ('central DP, secret Poisson sample (not against the server)',
       'poisson, add-or-remove-one',
       '`SampledServerSideFixedClipping(..., accountant=PldAccountant(config))`',
       _federated_central('poisson', 'add-or-remove-one', cohort)),
      ('secure aggregation, participants revealed', 'check-in, replace-one',
       '`DistributedNoiseFixedClipping(..., participation="revealed")`',
       _federated_secure_aggregation('revealed')),
      ('anonymous check-in, participants hidden', 'check-in, replace-one',
       '`DistributedNoiseFixedClipping(..., participation="hidden")`',
       _federated_secure_aggregation('hidden')),
  ]
  return (('threat model', 'accounting model', 'from Flower', 'ε'),
          [(model, accounting, api, sig(epsilon, 4))
           for model, accounting, api, epsilon in rows])


# ---- docs/mathematics.md and docs/rdp_accountant.md: W17, W18


def _gaussian_replace_one(kind: str) -> float:
  """GaussianDpEvent(1) under REPLACE_ONE at 1e-5, by accountant kind."""
  import dp_accounting
  from shuffle_accountants import ShuffleRdpAccountant
  replace_one = dp_accounting.NeighboringRelation.REPLACE_ONE
  accountant = {
      'dp_accounting_pld': lambda: dp_accounting.pld.PLDAccountant(
          replace_one),
      'dp_accounting_rdp': lambda: dp_accounting.rdp.RdpAccountant(
          neighboring_relation=replace_one),
      'ours_rdp': lambda: ShuffleRdpAccountant(
          neighboring_relation=replace_one)}[kind]()
  return accountant.compose(dp_accounting.GaussianDpEvent(1.0)).get_epsilon(
      1e-5)


value('w17.pld')(lambda: sig(_gaussian_replace_one('dp_accounting_pld'), 4))
value('w17.dp_accounting_rdp')(
    lambda: sig(_gaussian_replace_one('dp_accounting_rdp'), 3))
value('w17.ours_rdp')(lambda: sig(_gaussian_replace_one('ours_rdp'), 4))


def _w18_rate_example(checkin_rate: float) -> str:
  """W18's example of an epsilon that falls as the rate rises (RDP route)."""
  from shuffle_accountants import CheckInEvent, ShuffleRdpAccountant
  event = CheckInEvent(2876, checkin_rate, local_epsilon=4.705,
                       num_categories=3)
  return sig(ShuffleRdpAccountant().compose(event, 100).get_epsilon(1.95e-6),
             4)


value('w18.rate_0178')(lambda: _w18_rate_example(0.178))
value('w18.rate_042')(lambda: _w18_rate_example(0.42))


def _w18_blanket_example(checkin_rate: float) -> str:
  """W18's former fall of the D32 blanket bound (RDP route, 59 rounds)."""
  from shuffle_accountants import CheckInEvent, ShuffleRdpAccountant
  event = CheckInEvent(78, checkin_rate, local_epsilon=2.9869839072022386,
                       num_categories=16)
  return sig(ShuffleRdpAccountant().compose(event, 59).get_epsilon(1e-6), 4)


value('w18.blanket_low')(lambda: _w18_blanket_example(0.008588777132463657))
value('w18.blanket_high')(lambda: _w18_blanket_example(0.009561712344763384))


# ---- docs/cli.md


@output('cli.epsilon_example')
def _cli_epsilon_example():
  """The first command of docs/cli.md; its wall times are elided."""
  result = subprocess.run(
      [sys.executable, '-m', 'shuffle_accountants', 'epsilon', '--num-users',
       '1000000', '--local-epsilon', '1', '--rounds', '1000', '--delta',
       '1e-6'],
      capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
  return re.sub(r'\(\d+(?:\.\d+)? s\)', '(… s)', result.stdout)


# ---- docs/opacus.md


@functools.lru_cache(maxsize=None)
def _opacus_sigma(mechanism: str) -> str:
  """sigma for eps = 3 at delta = 1e-5, q = 0.1, 2 epochs, n = 600."""
  from opacus.accountants.utils import get_noise_multiplier
  import shuffle_accountants.adapters.opacus  # registers the accountants  # pylint: disable=unused-import
  return sig(get_noise_multiplier(
      target_epsilon=3.0, target_delta=1e-5, sample_rate=0.1, epochs=2,
      accountant=mechanism, epsilon_tolerance=0.01, num_users=600), 3)


value('opacus.sigma_pld', slow=True)(lambda: _opacus_sigma('shuffle_checkin'))
value('opacus.sigma_rdp', slow=True)(
    lambda: _opacus_sigma('shuffle_checkin_rdp'))


@functools.lru_cache(maxsize=None)
def _opacus_example():
  """(shuffle accuracy, shuffle eps, central accuracy, central eps)."""
  result = subprocess.run(
      [sys.executable, str(ROOT / 'examples' / 'opacus_shuffle_checkin.py')],
      capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
  found = re.findall(r'accuracy ([\d.]+), (?:certified )?epsilon ([\d.]+)',
                     result.stdout)
  (shuffle_accuracy, shuffle_epsilon), (central_accuracy, central_epsilon) = (
      found)
  return (float(shuffle_accuracy), float(shuffle_epsilon),
          float(central_accuracy), float(central_epsilon))


for _index, _name in enumerate(('shuffle_accuracy', 'shuffle_epsilon',
                                'central_accuracy', 'central_epsilon')):
  value(f'opacus.example_{_name}', slow=True)(
      lambda index=_index: (f'{100 * _opacus_example()[index]:.0f}'
                            if index % 2 == 0
                            else sig(_opacus_example()[index], 2)))


# ---- docs/tf_privacy.md


@output('tf_privacy.statement')
def _tf_privacy_statement():
  from shuffle_accountants.adapters.tf_privacy import (
      compute_shuffle_privacy_statement)
  return compute_shuffle_privacy_statement(
      number_of_examples=60_000, batch_size=256, num_epochs=15,
      noise_multiplier=1.1, delta=1e-5)


# ---- docs/errata.md


@value('errata.fmt21_generic_1e4')
def _errata_generic():
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users=10**4, local_epsilon=1.0))
  return sig(accountant.get_epsilon(1e-6), 4)


@value('errata.wang_10rr_1000')
def _errata_wang():
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users=1000, local_epsilon=1.0,
                                  num_categories=10))
  return sig(accountant.get_epsilon(1e-6), 3)


# ---- README.md


@value('readme.oue_generic')
def _readme_oue_generic():
  from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users=10**4, local_epsilon=1.0))
  return sig(accountant.get_epsilon(1e-6), 3)


# ------------------------------------------------------- code-block prints


def print_comments(block: str) -> List[tuple]:
  """(index among top-level prints, line number, number text) per comment."""
  found, prints = [], 0
  for line_number, line in enumerate(block.splitlines()):
    if line.startswith('print('):
      match = PRINT_COMMENT.match(line)
      if match:
        found.append((prints, line_number, match.group('number')))
      prints += 1
  return found


def _significant_digits(text: str) -> int:
  mantissa = text.split('e')[0].replace('-', '').replace('.', '').lstrip('0')
  return max(len(mantissa), 1)


def printed_values(block: str, stdout: str) -> List[tuple]:
  """(line number, page text, code text) for each commented print."""
  comments = print_comments(block)
  if not comments:
    return []
  lines = stdout.splitlines()
  prints = sum(line.startswith('print(') for line in block.splitlines())
  if len(lines) != prints:
    raise AssertionError(f'{prints} top-level prints wrote {len(lines)} '
                         'lines; a commented print must write one line')
  result = []
  for index, line_number, text in comments:
    number = float(NUMBER.search(lines[index]).group())
    result.append((line_number, text,
                   sig(number, _significant_digits(text))))
  return result


def run_block(block: str) -> str:
  """Runs a page's Python block outside the checkout; returns its stdout."""
  with tempfile.TemporaryDirectory() as folder:
    result = subprocess.run([sys.executable, '-c', block], capture_output=True,
                            text=True, cwd=folder, check=False)
  if result.returncode:
    raise RuntimeError(result.stderr)
  return result.stdout


# ----------------------------------------------------------------- pages


def markers(text: str) -> List[tuple]:
  """(kind, key) of every marker on a page."""
  return ([('value', m.group('key')) for m in VALUE_MARK.finditer(text)]
          + [('table', m.group('key')) for m in TABLE_MARK.finditer(text)])


def regenerate(text: str, include: Callable[[Entry], bool],
               blocks: bool = True) -> str:
  """The page with every selected marked number recomputed."""
  def new_value(match):
    entry = VALUES[match.group('key')]
    if not include(entry):
      return match.group(0)
    return (f'<!-- value: {match.group("key")} -->{entry.compute()}'
            '<!-- /value -->')

  def new_table(match):
    entry = TABLES[match.group('key')]
    if not include(entry):
      return match.group(0)
    return match.group('open') + entry.compute() + match.group('close')

  text = TABLE_MARK.sub(new_table, VALUE_MARK.sub(new_value, text))
  if blocks:
    def new_block(match):
      block = match.group(1)
      if not print_comments(block):
        return match.group(0)
      lines = block.splitlines(keepends=True)
      for line_number, old, new in printed_values(block, run_block(block)):
        head, comment = lines[line_number].split('#', 1)
        lines[line_number] = head + '#' + comment.replace(old, new, 1)
      return '```python\n' + ''.join(lines) + '```'
    text = PYTHON_BLOCK.sub(new_block, text)
  return text


def stale(text: str, include: Callable[[Entry], bool]) -> List[str]:
  """Descriptions of every selected marked number that differs from the code."""
  problems = []
  for match in VALUE_MARK.finditer(text):
    entry = VALUES[match.group('key')]
    if include(entry):
      code = entry.compute()
      if code != match.group('text'):
        problems.append(f'{match.group("key")}: page {match.group("text")!r}, '
                        f'code {code!r}')
  for match in TABLE_MARK.finditer(text):
    entry = TABLES[match.group('key')]
    if include(entry):
      code = entry.compute()
      if not tables_agree(match.group('text'), code, entry.machine_noise):
        problems.append(f'{match.group("key")}: page\n{match.group("text")}'
                        f'code\n{code}')
  return problems


# Result-like: a decimal with three or more significant digits, or a
# mantissa times a power of ten. Parameters (0.5, 10⁴, 1e-6) are not.
RESULT_LIKE = re.compile(r'(?<![\w.#/-])(\d+\.\d*[1-9]\d*)(?:·10[⁻⁰-⁹]+)?'
                         r'(?![\w-])')
# Numbers on these pages that are not this library's results, with why.
EXEMPT = {
    'federated.md': {'1.42': 'the first Flower version with the protocol'},
    'results.md': {'0.547': "Koskela et al.'s code, as printed",
                   '5.38519': 'mathematics.md, GIRGIS-UB1 from the paper'},
    'checkin.md': {
        '10.43': 'D17 pair at the fixed count k = 256, run once; not '
                 'generated yet',
        **dict.fromkeys(('0.001484', '0.002215', '0.004696'),
                        'exact by enumeration, tests/test_subsampled_brute_'
                        'force.py (rtol 2e-3)'),
        **dict.fromkeys(('0.001114', '0.001827', '0.004412'),
                        'what an earlier version reported (history)'),
        '29.451120': 'LIEW-EQ8, tests/test_checkin.py (rtol 1e-6)',
        **dict.fromkeys(('0.0392', '0.1054', '0.287649', '0.7311', '0.8392',
                         '0.7353', '0.8959'),
                        'W1 counterexample, tests/test_checkin.py')},
    'errata.md': {
        **dict.fromkeys(('0.0392207', '0.1053605', '0.287649', '0.731110',
                         '0.839185', '0.735326', '0.895883'),
                        'W1 counterexample, tests/test_checkin.py (rel 1e-4)'),
        '0.04321': 'FMT23 clones as the public code computes them (cited)',
        **dict.fromkeys(('2.357', '3.686', '0.08013', '0.08009', '0.023252',
                         '0.023253', '0.02325'),
                        'W15 counterexample, tests/test_randomizer_'
                        'accounting.py (exact pair / as Wang et al.)'),
        **dict.fromkeys(('0.001484', '0.002215', '0.004696'),
                        'exact by enumeration, tests/test_subsampled_brute_'
                        'force.py (rtol 2e-3)'),
        **dict.fromkeys(('0.001114', '0.001827', '0.004412'),
                        'what an earlier version reported (history)')},
    'mathematics.md': {
        '2504.07414': 'an arXiv identifier',
        '2602.17284': 'an arXiv identifier',
        '24.2': "a theorem number (Higham's Thm 24.2)",
        **dict.fromkeys(('0.1687', '0.1757', '0.1856'),
                        "Feldman and Shenfeld's paper, as printed"),
        '1.7·10⁻⁴': 'the rate-1 RDP ledger the code leaves out (13 s), '
                    'run once; not generated',
        **dict.fromkeys(('0.178', '4.705', '1.95·10⁻⁶'),
                        'parameters of the W18 example'),
        **dict.fromkeys(('37.72', '27.62'), 'before D19 (history)'),
        **dict.fromkeys(('2.148', '2.115'),
                        'W18: the blanket fall before the D32 groups were '
                        'widened (history)'),
        '1.36842': 'GIRGIS-UB1, tests/rdp/test_regression_values.py',
        **dict.fromkeys(('0.537804', '0.169770', '0.0052792'),
                        'checks of the reference, tests/pld/test_accountant.py'),
        '29.451120': 'LIEW-EQ8, tests/test_checkin.py (rtol 1e-6)',
        **dict.fromkeys(('0.03922', '0.10536'),
                        'W1 counterexample, tests/test_checkin.py (rel 1e-4)'),
        '0.04321': 'FMT23 clones as the public code computes them (cited)',
        **dict.fromkeys(('2.357', '3.686', '0.08013', '0.08009'),
                        'W15 counterexample, tests/test_randomizer_'
                        'accounting.py (exact pair / as Wang et al.)'),
        **dict.fromkeys(('0.001484', '0.002215', '0.004696'),
                        'exact by enumeration, tests/test_subsampled_brute_'
                        'force.py (rtol 2e-3)'),
        **dict.fromkeys(('0.001114', '0.001827', '0.004412'),
                        'what an earlier version reported (history)'),
        '3.29': 'D24 (v): the certificate before the saddle-point fix '
                '(history; tests/pld/test_candidates.py pins the fix)',
        **dict.fromkeys(('7.49', '3.67'),
                        'D33: the rate-1 example before the fix (history)'),
        '0.999999': 'a check-in rate (parameter)',
        **dict.fromkeys(('22.8', '22.5'), 'CPU times (s), measured once'),
        '0.491': 'NUM-BLANKET (v): the closed-form floor at sigma = 2, '
                 'computed once; not generated yet',
        **dict.fromkeys(('0.00859', '0.00956', '2.987', '0.0253', '0.246',
                         '3.99'),
                        'parameters of the D33 / issue 32 examples')},
    'training.md': {'119.75': 'q·n = 1437/12 (parameter)'},
    'samplers.md': {
        **dict.fromkeys(('0.1757', '0.1687'),
                        "Feldman and Shenfeld's paper, as printed"),
        '0.0608': 'one run at a finer grid (relative_accuracy); not '
                  'generated yet'},
    'limits.md': {'3.6·10⁷': 'before the fix (history, tests/test_'
                              'robustness.py)',
                  '0.0625': 'σ = 1/16 (parameter)',
                  '5.2·10⁶': 'before the fix (history, tests/test_'
                              'robustness.py)'},
    'performance.md': {'1.57': 'a wall time (s)', '1.65': 'a wall time (s)',
                       **dict.fromkeys(('37.6', '11.5'), 'CPU times (s)'),
                       **dict.fromkeys(('0.979', '0.9946'),
                                       'benchmarks/loops.py table 7, one '
                                       'measured run (the calibration steps)'),
                       **dict.fromkeys(('17.1', '44.6', '12.7', '32.3',
                                        '0.0184'),
                                       'benchmarks/loops.py table 5, rerun '
                                       'once after issue 32 (measured)'),
                       '1.8·10⁶': "one blanket pair's atom count (D18), "
                                  'counted once; not generated yet'},
    'tf_privacy.md': {'3.12': 'Python version', '2.15': 'TensorFlow version'},
    'rdp_accountant.md': {'1.25': 'the smallest default order (parameter)',
                          '1.01': 'grouping ratio (parameter)',
                          '1.005': 'grouping ratio (parameter)'},
}

def _significant(text: str) -> int:
  return len(text.replace('.', '').lstrip('0').rstrip('0'))


def unmarked_numbers(path: pathlib.Path) -> List[str]:
  """Result-like numbers of a page outside markers, code and exemptions."""
  text = path.read_text(encoding='utf-8')
  for pattern in (VALUE_MARK, TABLE_MARK, re.compile(r'```.*?```', re.S),
                  re.compile(r'`[^`\n]*`'), re.compile(r'\]\([^)]*\)')):
    text = pattern.sub(' ', text)
  exempt = EXEMPT.get(path.name, {})
  return [match.group(0) for match in RESULT_LIKE.finditer(text)
          if (_significant(match.group(1)) >= 3 or '·10' in match.group(0))
          and match.group(0) not in exempt]


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--check', action='store_true',
                      help='compare only; exit status 1 if a number is stale')
  parser.add_argument('--fast', action='store_true',
                      help='only the numbers registered as fast')
  parser.add_argument('--inventory', action='store_true',
                      help='list result-like numbers that no marker covers')
  parser.add_argument('pages', nargs='*', help='only these pages')
  args = parser.parse_args(argv)
  pages = [ROOT / page for page in args.pages] if args.pages else PAGES
  if args.inventory:
    for page in pages:
      numbers = unmarked_numbers(page)
      if numbers:
        print(f'{page.relative_to(ROOT)}: {" ".join(numbers)}')
    return 0

  def include(entry):
    return not (args.fast and entry.slow)

  status = 0
  for page in pages:
    text = page.read_text(encoding='utf-8')
    if not markers(text) and not any(
        print_comments(b) for b in PYTHON_BLOCK.findall(text)):
      continue
    if args.check:
      problems = stale(text, include)
      for block in PYTHON_BLOCK.findall(text):
        if print_comments(block):
          problems += [f'print on line {n} of a block: page {old}, code {new}'
                       for n, old, new in printed_values(block,
                                                         run_block(block))
                       if old != new]
      for problem in problems:
        print(f'{page.relative_to(ROOT)}: {problem}')
      status |= bool(problems)
    else:
      new = regenerate(text, include)
      if new != text:
        page.write_text(new, encoding='utf-8')
        print(f'rewrote {page.relative_to(ROOT)}')
    sys.stdout.flush()
  return status


if __name__ == '__main__':
  sys.exit(main())
