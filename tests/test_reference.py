"""The packaged mathematics reference and `shuffle-accountant reference`
(issue 24)."""

import ast
import json
import pathlib
import subprocess
import sys

import pytest

import shuffle_accountants
from shuffle_accountants import reference

PACKAGE = pathlib.Path(shuffle_accountants.__file__).parent
ROOT = pathlib.Path(__file__).resolve().parents[1]
COMMAND_PREFIX = 'shuffle-accountant reference '


def _run(*arguments):
  return subprocess.run(
      [sys.executable, '-m', 'shuffle_accountants', 'reference', *arguments],
      capture_output=True, text=True, cwd='/', check=False)


def test_the_packaged_page_is_the_documentation_page():
  # One source: the package's copy is docs/mathematics.md itself.
  assert (PACKAGE / reference.PAGE).read_bytes() == (
      ROOT / 'docs' / 'mathematics.md').read_bytes()


def test_every_anchor_of_the_page_is_an_entry_with_a_status():
  page = (ROOT / 'docs' / 'mathematics.md').read_text(encoding='utf-8')
  ids = reference.identifiers()
  assert len(ids) == page.count('\n### ') > 40
  for identifier in ids:
    entry = reference.entry(identifier)
    assert entry.status and entry.statement and entry.section
  assert reference.entry('girgis-ub1').status == 'upper bound [UB]'
  assert reference.entry('GIRGIS-LB').status.startswith('lower bound')
  assert reference.entry('KHH-KRR-STRONG').status.startswith('exact')
  assert reference.entry('GIRGIS-POISSON').status.startswith('refuted')
  assert 'Girgis, Data, Diggavi' in reference.entry('GIRGIS-UB1').sources[0]
  assert 'shuffle_accountants.rdp.girgis.girgis_ub1' in reference.used_in(
      'GIRGIS-UB1')


def _message_strings():
  """Every string of the package that is not a docstring (messages, labels)."""
  for path in PACKAGE.rglob('*.py'):
    tree = ast.parse(path.read_text(encoding='utf-8'))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef,
                                       ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    for node in ast.walk(tree):
      if (isinstance(node, ast.Constant) and isinstance(node.value, str)
          and id(node) not in docstrings):
        yield path.name, node.value


def test_messages_cite_the_command_and_every_cited_id_resolves():
  pointers, cited = [], set()
  for name, text in _message_strings():
    if name == 'reference.py':
      continue  # its patterns and examples
    # Only the reference command itself points at the page (its anchor).
    assert 'mathematics.md' not in text or name == 'main.py', (name, text)
    cited.update(reference.ID_PATTERN.findall(text))
    if 'reference ' in text:
      pointers.append(text)
  cited -= reference.NOT_IDS
  assert {'APPROX-LDP-NO-RDP', 'POISSON-UNSOUND', 'GIRGIS-UB1',
          'NAMED-CLONE-RATE'} <= cited
  for identifier in cited:
    reference.entry(identifier)  # raises if it does not resolve
  # The errors naming the command (APPROX-LDP-NO-RDP: approximate LDP in RDP,
  # POISSON-UNSOUND: Poisson).
  assert sum('`shuffle-accountant' in text for text in pointers) >= 2


def test_the_poisson_error_names_the_command():
  import dp_accounting

  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShuffleRdpAccountant
  with pytest.raises(Exception,
                     match='shuffle-accountant reference POISSON-UNSOUND'):
    ShuffleRdpAccountant().compose(dp_accounting.PoissonSampledDpEvent(
        0.1, ShuffleEvent(100, 1.0)))


def test_the_command_prints_an_entry():
  result = _run('w2')
  assert result.returncode == 0, result.stderr
  lines = result.stdout.splitlines()
  assert lines[0] == ('POISSON-UNSOUND: erratum (corrects or refutes a '
                      'published claim)')
  assert 'GIRGIS-POISSON is unsound' in result.stdout
  assert 'shuffle_accountants.core._event_checks.poisson_shuffle_error' in (
      result.stdout)
  report = json.loads(_run('GIRGIS-UB1', '--json').stdout)
  assert report['status'] == 'upper bound [UB]'
  assert report['anchor'] == 'girgis-ub1'
  assert any('girgis' in place for place in report['used_in'])


def test_the_command_lists_every_id():
  result = _run()
  assert result.returncode == 0
  listed = [line.split()[0] for line in result.stdout.splitlines()[:-1]]
  assert listed == list(reference.identifiers())


@pytest.mark.parametrize('identifier, nearest', [
    ('GIRGIS-UB3', 'GIRGIS-UB1'), ('girgis', 'GIRGIS-UB1'),
    ('W99', 'FMT21-LOG-FOUR')])
def test_an_unknown_id_lists_near_matches_without_a_traceback(identifier,
                                                              nearest):
  result = _run(identifier)
  assert result.returncode == 2
  assert result.stderr.count('\n') == 1 and 'Traceback' not in result.stderr
  assert f'unknown ID {identifier!r}' in result.stderr
  assert nearest in result.stderr
  with pytest.raises(ValueError, match='nearest'):
    reference.entry(identifier)


def test_a_former_number_finds_its_named_entry():
  # Entries renamed from numbers keep them: old notes and links resolve.
  named = reference.entry('RATE-ONE-DOMINATES')
  assert named.former == 'D33'  # formerly D33
  assert reference.entry('d33') == named == reference.entry('D33')  # formerly
  assert named.title.startswith('the rate-1 round dominates')
  assert 'RATE-ONE-DOMINATES' in reference.near_matches('D3')  # formerly D33
  result = _run('D33')  # formerly D33
  assert result.returncode == 0, result.stderr
  assert result.stdout.splitlines()[:2] == [
      'RATE-ONE-DOMINATES: upper bound [UB]',
      'Title: the rate-1 round dominates every check-in round (formerly D33)']
