"""Every link to an anchor of a docs page (`page.md#anchor`) finds it.

`mkdocs build --strict` checks that linked pages exist, not their anchors
(issue 48: docs/results.md linked to a checkin.md heading renamed since).
A page's anchors are the ids of its HTML as Python-Markdown renders it
with mkdocs.yml's extensions: headings' ids as the toc extension makes them,
`{#id}` attributes and `<a id="...">`.
"""

import functools
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / 'docs'
PAGES = [ROOT / 'README.md'] + sorted(DOCS.glob('*.md'))
_FENCE = re.compile(r'^```.*?^```', re.MULTILINE | re.DOTALL)
_LINK = re.compile(r'\]\(([^)\s#]*)#([^)\s]+)\)')
# mkdocs.yml's markdown_extensions.
_EXTENSIONS = ['attr_list', 'tables', 'fenced_code', 'toc']


def _prose(page: pathlib.Path) -> str:
  return _FENCE.sub('', page.read_text(encoding='utf-8'))


@functools.lru_cache(maxsize=None)
def anchors(page: pathlib.Path) -> frozenset:
  """The ids a link can name on `page`: those of the page as mkdocs renders
  it."""
  markdown = pytest.importorskip('markdown')
  html = markdown.markdown(page.read_text(encoding='utf-8'),
                           extensions=_EXTENSIONS)
  return frozenset(re.findall(r'\bid="([^"]+)"', html))


def _links():
  for page in PAGES:
    for target, anchor in _LINK.findall(_prose(page)):
      if '://' in target or (target and not target.endswith('.md')):
        continue
      linked = (page if not target else
                (page.parent / target).resolve())
      yield pytest.param(linked, anchor, id=f'{page.name}->{target}#{anchor}')


def test_the_pages_link_to_anchors():
  assert len(list(_links())) > 50


@pytest.mark.parametrize('linked, anchor', list(_links()))
def test_every_anchor_link_resolves(linked, anchor):
  assert linked.exists(), linked
  assert anchor in anchors(linked), (linked.name, anchor)
