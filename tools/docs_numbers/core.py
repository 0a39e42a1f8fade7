"""The registry of computed numbers and how a page shows them.

Each docs page's module registers its numbers here with `value`,
`table` or `output`; `sig` and `power_of_ten` format them.
"""

import functools
import math
import pathlib
import re
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

ROOT = pathlib.Path(__file__).resolve().parents[2]
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
    TABLES[key] = Entry(lambda: markdown_table(*function()), slow,
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


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]
                    ) -> str:
  lines = ['| ' + ' | '.join(header) + ' |',
           '|' + '---|' * len(header)]
  lines += ['| ' + ' | '.join(row) + ' |' for row in rows]
  return '\n'.join(lines) + '\n'


def table_cells(text: str) -> List[List[str]]:
  return [[cell.strip() for cell in line.strip().strip('|').split('|')]
          for line in text.strip().splitlines()]


def tables_agree(page_text: str, code_text: str,
                 machine_noise: float = 0.0) -> bool:
  """Equal cell by cell (spacing at the ends aside); numbers within
  `machine_noise` relative of each other count as equal."""
  page, code = table_cells(page_text), table_cells(code_text)
  if [len(row) for row in page] != [len(row) for row in code]:
    return False
  return all(cells_agree(a, b, machine_noise)
             for page_row, code_row in zip(page, code)
             for a, b in zip(page_row, code_row))


def cells_agree(page: str, code: str, machine_noise: float) -> bool:
  if page == code:
    return True
  try:
    page_number, code_number = float(page), float(code)
  except ValueError:
    return False
  return abs(page_number - code_number) <= machine_noise * abs(code_number)


# ------------------------------------------------ shared by the page modules
# Heavy imports stay inside the functions: listing the registry is instant.


@functools.lru_cache(maxsize=None)
def benchmark(name: str):
  """benchmarks/NAME.py as a module: the registry calls its functions."""
  import importlib.util
  spec = importlib.util.spec_from_file_location(
      f'benchmark_{name}', ROOT / 'benchmarks' / f'{name}.py')
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def protocol_epsilon(method: str, **fields) -> Optional[float]:
  from shuffle_accountants.cli import protocols
  return protocols.evaluate(protocols.Protocol(**fields), method).epsilon
