"""The package's mathematics reference: each cited ID's statement and users.

The entries are those of the documentation page docs/mathematics.md, which
ships in the package as `mathematics.md` (the same file: a link in the
source tree, a copy in a built wheel), so that an installed library can
explain every ID its docstrings and error messages cite:

>>> from shuffle_accountants import reference
>>> print(reference.entry('POISSON-UNSOUND').status)

or, on the command line, `shuffle-accountant reference POISSON-UNSOUND`. Reading
the page imports nothing numerical.
"""

import ast
import difflib
import pathlib
import re
import sys
from typing import Dict, List, Tuple

import attr

from shuffle_accountants import _cache

__all__ = [
    'PAGE', 'COMMAND', 'ID_PATTERN', 'NOT_IDS', 'UnknownIdError', 'Entry',
    'identifiers', 'entry', 'near_matches', 'used_in',
]

PAGE = 'mathematics.md'
COMMAND = 'shuffle-accountant reference'
# APPROX-LDP-NO-RDP, BLANKET-TWO-LEVEL, and hyphenated upper-case names such as
# GIRGIS-UB1 or FMT-EQ10-11.
ID_PATTERN = re.compile(r'(?<![\w-])(W\d{1,2}|D\d{1,2}|[A-Z][A-Z0-9]*\d*'
                        r'(?:-[A-Z0-9]+)+)(?![\w-])')
# Names of that shape that are not IDs.
NOT_IDS = frozenset({'DP-SGD', 'SHA-256', 'HMAC-SHA256'})
# `### ID — title {#anchor}`, then, for an entry that was renumbered,
# `<a id="d33"></a>(formerly D33)`: its old ID still resolves.
_HEADING = re.compile(r'^### (\S+)(?: — (.+?))? \{#([a-z0-9-]+)\}[ \t]*$',
                      re.MULTILINE)
_FORMER = re.compile(r'\s*<a id="[a-z0-9]+"></a>\(formerly (\S+)\)[ \t]*\n')
_SOURCE_KEY = re.compile(r'\[([A-Z][A-Za-z0-9]*\d\d|KHH|LHT)\]')
# Leading status tag of an entry -> the kind of result it is.
_TAGS = {
    'UB': 'upper bound', 'DOM': 'upper bound (dominating pair)',
    'LB': 'lower bound', 'TIGHT': 'exact', 'EXACT': 'exact',
    'CONV': 'conversion (upper bounds in, upper bound out)',
    'UNSOUND': 'refuted (not an upper bound)',
    'HEUR': 'heuristic (neither an upper nor a lower bound)',
}
# Untagged entries: their first word, else their section.
_FIRST_WORDS = {
    'Proven': 'proven fact', 'Conjecture': 'conjecture (not relied on)',
    'Retracted': 'retracted (not relied on)',
    'Unverified': 'unverified (comparison only, never composed)',
}
_ERRATA_SECTION = 'Errata and warnings'
# Modules that cite IDs only as examples of the command.
_EXAMPLES_ONLY = ('shuffle_accountants.reference',
                  'shuffle_accountants.cli.main')


class UnknownIdError(ValueError):
  """No entry has this ID; the message lists the nearest ones."""


@attr.s(frozen=True, auto_attribs=True)
class Entry:
  """One ID of the reference.

  Attributes:
    id: the ID as cited (e.g. 'GIRGIS-UB1', 'POISSON-UNSOUND').
    title: what the entry states, in a few words ('' for a paper's result).
    former: the entry's old number (e.g. 'RATE-ONE-DOMINATES'), which still
    resolves, or ''. anchor: its anchor on the documentation page
    (docs/mathematics.md#...). section: the page's section holding it.
    status: upper bound, lower bound, exact, refuted, ... in words.
    sources: the full references of the sources the entry cites.
    statement: the entry's text (statement, status tag, source, argument).
  """
  id: str
  anchor: str
  section: str
  status: str
  sources: Tuple[str, ...]
  statement: str
  title: str = ''
  former: str = ''


def _page_path() -> pathlib.Path:
  path = pathlib.Path(__file__).with_name(PAGE)
  text = path.read_text(encoding='utf-8')
  # A checkout without symbolic links holds the link's target as text.
  if '\n' not in text.strip() and text.strip().endswith('.md'):
    path = path.parent / text.strip()
  return path


@_cache.cached(2**24, sys.getsizeof)
def _page() -> str:
  return _page_path().read_text(encoding='utf-8')


def _sources(page: str) -> Dict[str, str]:
  """Source key -> full reference, from the page's **Sources.** paragraph."""
  paragraph = page.split('**Sources.**', 1)[1].split('\n\n', 1)[0]
  paragraph = ' '.join(paragraph.split())
  parts = re.split(r'\[([A-Z][A-Za-z0-9]*)\] ', paragraph)
  return {key: f'[{key}] {text.strip()}'
          for key, text in zip(parts[1::2], parts[2::2])}


def _status(body: str, section: str) -> str:
  tag = re.match(r'\[([A-Z]+)', body)
  if tag and tag.group(1) in _TAGS:
    raw = body[:body.index(']') + 1]
    return f'{_TAGS[tag.group(1)]} {raw}'
  first_word = body.split(maxsplit=1)[0].rstrip('.,:') if body else ''
  if first_word in _FIRST_WORDS:
    return _FIRST_WORDS[first_word]
  if section == _ERRATA_SECTION:
    return 'erratum (corrects or refutes a published claim)'
  return 'informational (not a bound)'


@_cache.cached(2**24, sys.getsizeof)
def _entries() -> Dict[str, Entry]:
  page = _page()
  sources = _sources(page)
  found = {}
  headings = list(_HEADING.finditer(page))
  for index, heading in enumerate(headings):
    end = (headings[index + 1].start() if index + 1 < len(headings)
           else len(page))
    body = page[heading.end():end]
    former = _FORMER.match(body)
    if former:
      body = body[former.end():]
    body = re.split(r'^## ', body, maxsplit=1, flags=re.MULTILINE)[0].strip()
    sections = re.findall(r'^## (.+)$', page[:heading.start()], re.MULTILINE)
    section = sections[-1].strip() if sections else ''
    cited = tuple(dict.fromkeys(
        sources[key] for key in _SOURCE_KEY.findall(body) if key in sources))
    identifier = heading.group(1)
    found[identifier] = Entry(identifier, heading.group(3), section,
                              _status(body, section), cited,
                              body.replace('**', ''), heading.group(2) or '',
                              former.group(1) if former else '')
  return found


def identifiers() -> Tuple[str, ...]:
  """Every ID of the reference, in the page's order."""
  return tuple(_entries())


def entry(identifier: str) -> Entry:
  """The entry of `identifier` (case-insensitive; 'w2' finds POISSON-UNSOUND).

  An entry's former number finds it too (`entry('RATE-ONE-DOMINATES').former ==
  'RATE-ONE-DOMINATES'`).

  Raises:
    TypeError: if `identifier` is not a string.
    UnknownIdError: (a ValueError) if no entry has it; the message lists
      the nearest IDs.
  """
  if not isinstance(identifier, str):
    raise TypeError(f'identifier must be a string such as '
                    f'"POISSON-UNSOUND"; got '
                    f'{identifier!r} of type {type(identifier).__name__}.')
  wanted = identifier.strip().upper()
  if not wanted:
    # An empty name would match the first entry without a former number.
    raise UnknownIdError(f'identifier (the ID) must name an entry such as '
                         f'"POISSON-UNSOUND"; got {identifier!r} (`{COMMAND}` '
                         'lists them all).')
  for known, found in _entries().items():
    if wanted == known.upper() or (found.former and
                                   wanted == found.former.upper()) or (
        found.anchor == wanted.lower()):
      return found
  raise UnknownIdError(
      f'unknown ID {identifier!r}; nearest: '
      f'{", ".join(near_matches(identifier)) or "none"} (`{COMMAND}` '
      'lists them all).')


def near_matches(identifier: str, count: int = 5) -> List[str]:
  """The IDs closest to `identifier`: those it starts, then similar ones.

  Former numbers count as names of their entries ('W99' finds FMT21-LOG-FOUR's
  entry).
  """
  wanted = identifier.strip().upper()
  names = {i: i for i in identifiers()}
  names.update({e.former: e.id for e in _entries().values() if e.former})
  starting = [i for i in names if wanted and i.startswith(wanted)]
  similar = difflib.get_close_matches(wanted, names, n=count, cutoff=0.5)
  return list(dict.fromkeys(names[i] for i in starting + similar))[:count]


def _package_sources() -> List[Tuple[str, pathlib.Path]]:
  """(module name, path) of every module of the installed package."""
  modules = []
  root = pathlib.Path(__file__).parent
  for path in sorted(root.rglob('*.py')):
    parts = list(path.relative_to(root).with_suffix('').parts)
    if parts[-1] == '__init__':
      parts.pop()
    modules.append(('.'.join(['shuffle_accountants'] + parts), path))
  return modules


@_cache.cached(2**24, sys.getsizeof)
def _citations() -> Dict[str, Tuple[str, ...]]:
  """ID -> the modules, classes and functions whose source cites it."""
  cited: Dict[str, List[str]] = {}
  for module, path in _package_sources():
    if module in _EXAMPLES_ONLY:
      continue
    text = path.read_text(encoding='utf-8')
    scopes = [(node.lineno, node.end_lineno or node.lineno, node.name)
              for node in ast.walk(ast.parse(text))
              if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                   ast.ClassDef))]
    for number, line in enumerate(text.splitlines(), start=1):
      for match in ID_PATTERN.finditer(line):
        if match.group(1) in NOT_IDS:
          continue
        enclosing = sorted(s for s in scopes if s[0] <= number <= s[1])
        name = '.'.join([module] + [scope[2] for scope in enclosing])
        places = cited.setdefault(match.group(1), [])
        if name not in places:
          places.append(name)
  return {key: tuple(value) for key, value in cited.items()}


def used_in(identifier: str) -> Tuple[str, ...]:
  """Where the package's source cites `identifier` (module or function)."""
  return _citations().get(entry(identifier).id, ())
