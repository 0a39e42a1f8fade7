"""Finding, rewriting and checking the marked numbers of a page."""

import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Callable, List

from .core import NUMBER
from .core import PRINT_COMMENT
from .core import PYTHON_BLOCK
from .core import TABLE_MARK
from .core import TABLES
from .core import VALUE_MARK
from .core import VALUES
from .core import Entry
from .core import sig
from .core import tables_agree

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
# Counterexamples and history cited on both errata.md and mathematics.md.
_WANG24 = ('WANG24-REFUTED counterexample, tests/cross_route/test_randomizer_'
           'accounting.py (exact pair / as Wang et al.)')
_COUNTEREXAMPLES = {
    '0.04321': 'FMT23 clones as the public code computes them (cited)',
    **dict.fromkeys(('2.357', '3.686', '0.08013', '0.08009'), _WANG24),
    **dict.fromkeys(('0.001484', '0.002215', '0.004696'),
                    'exact by enumeration, tests/cross_route/test_subsampled_'
                    'brute_force.py (rtol 2e-3)'),
    **dict.fromkeys(('0.001114', '0.001827', '0.004412'),
                    'what an earlier version reported (history)'),
}

EXEMPT = {
    'federated.md': {'1.42': 'the first Flower version with the protocol'},
    'results.md': {'0.547': "Koskela et al.'s code, as printed",
                   '5.38519': 'mathematics.md, GIRGIS-UB1 from the paper'},
    'checkin.md': {
        '10.43': 'SECAGG-HIDDEN pair at the fixed count k = 256, run once; not '
                 'generated yet',
        **dict.fromkeys(('0.001484', '0.002215', '0.004696'),
                        'exact by enumeration, '
                        'tests/cross_route/test_subsampled_brute_'
                        'force.py (rtol 2e-3)'),
        **dict.fromkeys(('0.001114', '0.001827', '0.004412'),
                        'what an earlier version reported (history)'),
        '29.451120': 'LIEW-EQ8, tests/cross_route/test_checkin.py (rtol 1e-6)',
        **dict.fromkeys(('0.0392', '0.1054', '0.287649', '0.7311', '0.8392',
                         '0.7353', '0.8959'),
                        'APPROX-LDP-NO-RDP counterexample, '
                        'tests/cross_route/test_checkin.py')},
    'errata.md': {
        **dict.fromkeys(('0.0392207', '0.1053605', '0.287649', '0.731110',
                         '0.839185', '0.735326', '0.895883'),
                        'APPROX-LDP-NO-RDP counterexample, '
                        'tests/cross_route/test_checkin.py (rel 1e-4)'),
        **_COUNTEREXAMPLES,
        **dict.fromkeys(('0.023252', '0.023253', '0.02325'),
                        _WANG24)},
    'mathematics.md': {
        '2504.07414': 'an arXiv identifier',
        '2602.17284': 'an arXiv identifier',
        '2603.21197': 'an arXiv identifier',
        '2603.18080': 'an arXiv identifier',
        '24.2': "a theorem number (Higham's Thm 24.2)",
        **dict.fromkeys(('0.1687', '0.1757', '0.1856'),
                        "Feldman and Shenfeld's paper, as printed"),
        '1.7·10⁻⁴': 'the rate-1 RDP ledger the code leaves out (13 s), '
                    'run once; not generated',
        **dict.fromkeys(('0.178', '4.705', '1.95·10⁻⁶'),
                        'parameters of the NOT-MONOTONE example'),
        **dict.fromkeys(('37.72', '27.62'),
                        'before DOMINATING-ROUNDS (history)'),
        **dict.fromkeys(('2.148', '2.115'),
                        'NOT-MONOTONE: the blanket fall before the '
                        'BLANKET-RDP groups were '
                        'widened (history)'),
        '1.36842': 'GIRGIS-UB1, tests/rdp/test_regression_values.py',
        **dict.fromkeys(('0.537804', '0.169770', '0.0052792'),
                        'checks of the reference, '
                        'tests/pld/test_accountant.py'),
        '29.451120': 'LIEW-EQ8, tests/cross_route/test_checkin.py (rtol 1e-6)',
        **dict.fromkeys(('0.03922', '0.10536'),
                        'APPROX-LDP-NO-RDP counterexample, '
                        'tests/cross_route/test_checkin.py (rel 1e-4)'),
        **_COUNTEREXAMPLES,
        '3.29': 'ROUNDOFF-CERTIFIED (v): the certificate before the '
                'saddle-point fix '
                '(history; tests/pld/test_candidates.py pins the fix)',
        **dict.fromkeys(('7.49', '3.67'),
                        'RATE-ONE-DOMINATES: the rate-1 example before the '
                        'fix (history)'),
        '0.999999': 'a check-in rate (parameter)',
        **dict.fromkeys(('22.8', '22.5'), 'CPU times (s), measured once'),
        '0.491': 'NUM-BLANKET (v): the closed-form floor at sigma = 2, '
                 'computed once; not generated yet',
        **dict.fromkeys(('0.00859', '0.00956', '2.987', '0.0253', '0.246',
                         '3.99'),
                        'parameters of the RATE-ONE-DOMINATES / issue 32 '
                        'examples')},
    'training.md': {'119.75': 'q·n = 1437/12 (parameter)'},
    'samplers.md': {
        **dict.fromkeys(('0.1757', '0.1687'),
                        "Feldman and Shenfeld's paper, as printed"),
        '0.0608': 'one run at a finer grid (relative_accuracy); not '
                  'generated yet'},
    'limits.md': {'3.6·10⁷': 'before the fix (history, tests/cross_route/test_'
                              'robustness.py)',
                  '0.0625': 'σ = 1/16 (parameter)',
                  '5.2·10⁶': 'before the fix (history, tests/cross_route/test_'
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
                       '1.8·10⁶': "one blanket pair's atom count "
                                  '(CTD-MERGE-ATOMS), '
                                  'counted once; not generated yet',
                       **dict.fromkeys(('1.25', '25.8'),
                                       'measured costs cited by the code, '
                                       'measured once (GB, GiB)')},
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
