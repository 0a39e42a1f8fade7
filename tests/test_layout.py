"""Packaging guards: the public API, the tree's shape, adapters inside the
package."""

import ast
import importlib
import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

import shuffle_accountants
from shuffle_accountants import reference


def test_adapters_are_a_subpackage_in_the_package_folder():
  import shuffle_accountants.adapters
  assert shuffle_accountants.adapters.__name__ == 'shuffle_accountants.adapters'
  package = pathlib.Path(shuffle_accountants.__file__).parent
  adapters = pathlib.Path(shuffle_accountants.adapters.__file__).parent
  assert adapters == package / 'adapters'


def test_no_top_level_adapters_package_is_installed_by_us():
  spec = importlib.util.find_spec('adapters')
  assert spec is None or 'shuffle_accountants' not in str(spec.origin)


def test_main_job_prints_a_certified_epsilon():
  output = subprocess.run([sys.executable, '-m', 'shuffle_accountants'],
                          capture_output=True, text=True, check=True,
                          cwd='/').stdout
  assert 'certified epsilon (upper bound)' in output
  assert shuffle_accountants.__version__


# Every name `shuffle_accountants` exported before the subpackages existed.
PUBLIC_NAMES = (
    'CheckInEvent', 'DEFAULT_ORDERS', 'KRR_ADVERSARIES', 'ShuffleEvent',
    'ShufflePldAccountant', 'ShuffleRdpAccountant',
    'SubsampledShuffleGaussianEvent', 'checkin_rdp_upper_bound',
    'shuffle_rdp_upper_bound', 'shuffled_gaussian_rdp_lower_bound',
    'subsampled_shuffle_gaussian_rdp_upper_bound',
    'subsampled_shuffle_rdp_upper_bound')


def test_top_level_exports_are_kept():
  assert set(PUBLIC_NAMES) <= set(shuffle_accountants.__all__)
  for name in shuffle_accountants.__all__:
    assert getattr(shuffle_accountants, name) is not None


def test_the_type_checkers_see_exactly_the_exports():
  # Two lists had drifted: four exported events and the caches were
  # invisible to type checkers.
  source = pathlib.Path(shuffle_accountants.__file__).read_text(
      encoding='utf-8')
  block = next(node for node in ast.parse(source).body
               if isinstance(node, ast.If)
               and getattr(node.test, 'id', None) == 'TYPE_CHECKING')
  seen = {alias.name: node.module for node in ast.walk(block)
          if isinstance(node, ast.ImportFrom) for alias in node.names}
  expected = {**shuffle_accountants._EXPORTS,
              **dict.fromkeys(shuffle_accountants._SUBMODULES,
                              'shuffle_accountants')}
  assert seen == expected


def test_the_names_users_import_most_are_at_the_top_level():
  from dp_accounting.privacy_accountant import NeighboringRelation

  from shuffle_accountants import calibration
  from shuffle_accountants import randomizers
  assert shuffle_accountants.NeighboringRelation is NeighboringRelation
  assert shuffle_accountants.randomizers is randomizers
  assert (shuffle_accountants.calibrate_num_users
          is calibration.calibrate_num_users)
  assert (shuffle_accountants.OptimizedUnaryEncoding
          is randomizers.OptimizedUnaryEncoding)
  for name in ('randomizers', 'calibration', 'samplers',
               'NeighboringRelation', 'RandomAllocationDpEvent'):
    assert name in shuffle_accountants.__all__


@pytest.mark.parametrize('module,old,new', [
    ('shuffle_accountants.rdp.accountant', 'RATE_ONE_D19', 'RATE_ONE_ROUND'),
    ('shuffle_accountants.rdp.accountant', 'D32_BLANKET', 'BLANKET_PAIR'),
    ('shuffle_accountants.rdp.checkin', 'GAUSSIAN_D7', 'GAUSSIAN_NO_GAIN'),
])
def test_retired_proof_numbers_are_deprecated_aliases(module, old, new):
  loaded = importlib.import_module(module)
  with pytest.warns(DeprecationWarning, match=new):
    assert getattr(loaded, old) is getattr(loaded, new)
  assert new in loaded.__all__ and old not in loaded.__all__
  with pytest.raises(AttributeError, match='no attribute'):
    loaded.__getattr__('NOT_A_NAME')


def test_the_routes_are_visible_in_the_tree():
  package = pathlib.Path(shuffle_accountants.__file__).parent
  modules = {str(p.relative_to(package)) for p in package.rglob('*.py')}
  for expected in ('events.py', 'rdp/accountant.py', 'rdp/checkin.py',
                   'pld/accountant.py', 'pld/checkin.py', 'pld/grid.py',
                   'pld/candidates.py', 'rdp/routes.py', 'pld/routes.py',
                   'cli/main.py', 'cli/protocols.py'):
    assert expected in modules


def test_every_module_opens_with_a_short_summary_then_its_ids():
  # A summary of at most 79 characters says what the module does; the IDs
  # of docs/mathematics.md it implements follow on their own line(s),
  # `IDs: A, B [UB]; C [LB]` (required for the modules of the routes).
  package = pathlib.Path(shuffle_accountants.__file__).parent
  tag = re.compile(r'\s*\[[A-Z, ]+\]$')
  for path in package.rglob('*.py'):
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding='utf-8')))
    assert docstring, path
    summary, *rest = docstring.split('\n')
    assert len(summary) <= 79 and summary.endswith('.'), (path, summary)
    assert not rest or not rest[0].strip(), (path, 'summary runs on')
    ids = []
    if len(rest) > 1 and rest[1].startswith('IDs: '):
      paragraph = ' '.join(
          line.strip() for line in rest[1:rest.index('', 1)]
          if line.strip()) if '' in rest[1:] else ' '.join(rest[1:])
      ids = re.split(r'[,;] ', paragraph[len('IDs: '):])
      for identifier in ids:
        reference.entry(tag.sub('', identifier))  # raises if unknown
    math_module = path.parent.name in ('rdp', 'pld', 'pairs') and (
        path.name != '__init__.py')
    if math_module:
      assert ids, (path, 'names no IDs')


# The two routes (rdp/, pld/) sit above the route-neutral pairs/ and
# samplers/ (issue 29): none of these edges may exist. Edges between the
# routes are admitted for named modules only: the PLD accountant also asks
# the RDP route from its cut on (`pld.accountant`), and the Skellam pair is
# built from the Skellam RDP bound's profile (`pld.skellam`, SKELLAM-SUM);
# the other way, NUM-BLANKET-RDP integrates the PLD route's NUM-BLANKET
# pair (`rdp.numeric`). The generic core (core/: ledgers, specs, grouping,
# dominating rounds, basic composition, the accountant base) sits below all
# of them (issue 52). No module cycle may form (checked below).
_LAYERED = ('rdp', 'pld', 'pairs', 'samplers', 'core')
_FORBIDDEN_EDGES = {('pairs', 'rdp'), ('pairs', 'pld'), ('samplers', 'rdp'),
                    ('samplers', 'pld')} | {
                        ('core', above) for above in _LAYERED[:-1]}
_ADMITTED_EDGES = {('pld', 'rdp'): {'shuffle_accountants.pld.accountant',
                                    'shuffle_accountants.pld.skellam'},
                   ('rdp', 'pld'): {'shuffle_accountants.rdp.numeric'}}


def _is_type_checking(node: ast.AST) -> bool:
  return isinstance(node, ast.If) and 'TYPE_CHECKING' in ast.unparse(node.test)


def _import_nodes(tree: ast.AST):
  """Every import of a module, at module level or inside functions, but
  not those only type checkers run (`if TYPE_CHECKING:`)."""
  for node in ast.iter_child_nodes(tree):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
      yield node
    elif not _is_type_checking(node):
      yield from _import_nodes(node)


def _imported_modules(path: pathlib.Path, module: str, modules):
  """The `modules` that `path` imports (see `_import_nodes`)."""
  package = module if path.name == '__init__.py' else module.rsplit('.', 1)[0]
  for node in _import_nodes(ast.parse(path.read_text(encoding='utf-8'))):
    if isinstance(node, ast.Import):
      yield from (alias.name for alias in node.names
                  if alias.name in modules)
      continue
    base = node.module or ''
    if node.level:
      parent = package.split('.')
      parent = parent[:len(parent) - node.level + 1]
      base = '.'.join(parent + ([base] if base else []))
    # `from a import b`: the module a.b if there is one, else a itself.
    for alias in node.names:
      name = f'{base}.{alias.name}'
      if name in modules or base in modules:
        yield name if name in modules else base


def _module_graph(root: pathlib.Path):
  """{module: the package's modules it imports} for every module of the
  package whose folder is `root` (a package: its `__init__`)."""
  paths = {}
  for path in root.rglob('*.py'):
    parts = path.relative_to(root.parent).with_suffix('').parts
    paths['.'.join(parts[:-1] if parts[-1] == '__init__' else parts)] = path
  return {module: set(_imported_modules(path, module, paths)) - {module}
          for module, path in paths.items()}


def _package_edges(graph):
  """{(importing package, imported package): importing modules} among
  `_LAYERED`."""
  edges = {}
  for module, imported in graph.items():
    source = module.split('.')[1] if module.count('.') >= 2 else None
    if source not in _LAYERED:
      continue
    for name in imported:
      target = name.split('.')
      if len(target) > 1 and target[1] in _LAYERED and target[1] != source:
        edges.setdefault((source, target[1]), set()).add(module)
  return edges


def _cycles(graph):
  """The sets of two or more nodes that reach each other."""
  reach = {node: set(targets) for node, targets in graph.items()}
  changed = True
  while changed:  # transitive closure
    changed = False
    for reached in reach.values():
      further = set().union(*(reach.get(other, ()) for other in reached))
      if not further <= reached:
        reached |= further
        changed = True
  return {frozenset({a} | {b for b in reach[a] if a in reach.get(b, ())})
          for a in reach if a in reach[a]}


def test_routes_sit_above_pairs_and_samplers_without_cycles():
  graph = _module_graph(pathlib.Path(shuffle_accountants.__file__).parent)
  edges = _package_edges(graph)
  forbidden = {edge: sorted(modules) for edge, modules in edges.items()
               if edge in _FORBIDDEN_EDGES or (
                   edge in _ADMITTED_EDGES
                   and not modules <= _ADMITTED_EDGES[edge])}
  assert not forbidden, f'forbidden imports (edge: modules): {forbidden}'
  # The parser finds what the tree is known to hold.
  assert ('pld', 'pairs') in edges and ('rdp', 'pairs') in edges
  assert ('pld', 'rdp') in edges
  assert ('rdp', 'core') in edges and ('pld', 'core') in edges


def test_the_generic_core_is_one_wing():
  # Issue 52 item 2: what both routes share lives in core/, and nothing of
  # it is left beside the routes at the top level.
  package = pathlib.Path(shuffle_accountants.__file__).parent
  core = {path.stem for path in (package / 'core').glob('_*.py')} - {
      '__init__'}
  assert core == {'_ledger', '_event_specs', '_dominating', '_grouping',
                  '_event_checks'}
  assert not {path.stem for path in package.glob('*.py')} & core
  graph = _module_graph(package)
  for module in core:
    imported = graph[f'shuffle_accountants.core.{module}']
    assert all(name.split('.')[1] not in ('rdp', 'pld', 'adapters', 'cli',
                                          'checkpoints', 'calibration')
               for name in imported if name.count('.')), (module, imported)


def test_the_route_tables_import_no_accountant():
  # Each entry of a route's table is a function of the event (and the
  # orders), not an accountant's method (issue 52).
  graph = _module_graph(pathlib.Path(shuffle_accountants.__file__).parent)
  assert 'shuffle_accountants.pld.candidates' in graph[
      'shuffle_accountants.pld.routes']  # the parser sees the imports
  for table in ('shuffle_accountants.rdp.routes',
                'shuffle_accountants.pld.routes'):
    accountants = sorted(m for m in graph[table] if m.endswith('.accountant'))
    assert not accountants, (table, accountants)


def test_no_module_imports_itself_back():
  # Every module, top-level ones included, deferred imports too.
  graph = _module_graph(pathlib.Path(shuffle_accountants.__file__).parent)
  assert 'shuffle_accountants.checkpoints' in graph
  cycles = _cycles(graph)
  assert not cycles, [sorted(cycle) for cycle in cycles]


def test_saving_sits_above_both_routes_and_below_the_top_level():
  # Issue 52: checkpoints found the accountants by `import
  # shuffle_accountants` and getattr, the one arrow back up. The routes
  # subclass `_checkpointable` and build their siblings with `_ledger`'s
  # identity; checkpoints imports both routes, so loading knows them all.
  graph = _module_graph(pathlib.Path(shuffle_accountants.__file__).parent)
  saving = 'shuffle_accountants.checkpoints'
  assert 'shuffle_accountants' not in graph[saving]
  assert {'shuffle_accountants.pld.accountant',
          'shuffle_accountants.rdp.accountant'} <= graph[saving]
  below = [module for module, imported in graph.items()
           if saving in imported and module.count('.') and (
               module.split('.')[1] in _LAYERED
               or module.split('.')[1].startswith('_'))]
  assert not below, below


def test_the_import_graph_parser_sees_every_kind_of_import(tmp_path):
  root = tmp_path / 'shuffle_accountants'
  for package in ('pairs', 'rdp', 'pld'):
    (root / package).mkdir(parents=True)
    (root / package / '__init__.py').write_text('"""x."""\n')
  (root / '__init__.py').write_text(
      'from typing import TYPE_CHECKING\n'
      'if TYPE_CHECKING:\n  from shuffle_accountants import top\n')
  (root / 'top.py').write_text(
      'def f():\n  from shuffle_accountants.pld import discrete\n')
  (root / 'pairs' / 'top.py').write_text(
      'from shuffle_accountants.rdp import clone\n')
  (root / 'pairs' / 'inner.py').write_text(
      'def f():\n  from ..pld import discrete\n  return discrete\n')
  (root / 'pld' / 'discrete.py').write_text(
      'import shuffle_accountants\nfrom shuffle_accountants import top\n')
  (root / 'rdp' / 'clone.py').write_text(
      'import shuffle_accountants.pairs.top\n')
  graph = _module_graph(root)
  edges = _package_edges(graph)
  assert edges[('pairs', 'rdp')] == {'shuffle_accountants.pairs.top'}
  assert edges[('pairs', 'pld')] == {'shuffle_accountants.pairs.inner'}
  assert graph['shuffle_accountants'] == set()  # type checkers only
  assert _cycles(graph) == {
      frozenset({'shuffle_accountants.pairs.top',
                 'shuffle_accountants.rdp.clone'}),
      frozenset({'shuffle_accountants.top',
                 'shuffle_accountants.pld.discrete'})}


def test_every_module_the_api_page_documents_exists():
  # The moves of issue 29 left no shim at the old paths: the page must
  # follow them.
  page = (pathlib.Path(__file__).parent.parent / 'docs' / 'api.md').read_text(
      encoding='utf-8')
  documented = re.findall(r'^::: (shuffle_accountants\.[\w.]+)$', page,
                          flags=re.MULTILINE)
  assert 'shuffle_accountants.pairs.clone_pairs' in documented
  for name in documented:
    try:
      importlib.import_module(name)
    except ModuleNotFoundError:  # a class or function of a module
      module, _, attribute = name.rpartition('.')
      assert hasattr(importlib.import_module(module), attribute), name


def test_every_public_module_lists_its_public_names():
  # The adapters become packages in issue 40 item 7, which lists theirs.
  package = pathlib.Path(shuffle_accountants.__file__).parent
  for path in package.rglob('*.py'):
    parts = path.relative_to(package).with_suffix('').parts
    if (parts[0] == 'adapters' or parts[-1] == '__main__'
        or any(part.startswith('_') and part != '__init__' for part in parts)):
      continue
    tree = ast.parse(path.read_text(encoding='utf-8'))
    defined = {node.name for node in tree.body if isinstance(
        node, (ast.FunctionDef, ast.ClassDef))}
    if not defined:
      continue  # a subpackage's docstring only
    name = '.'.join(('shuffle_accountants',) + parts).removesuffix(
        '.__init__')
    module = importlib.import_module(name)
    assert hasattr(module, '__all__'), name
    for public in module.__all__:
      assert hasattr(module, public), (name, public)
