"""Every ID the package, README and docs cite resolves on
docs/mathematics.md."""

import pathlib
import re

from shuffle_accountants.reference import ID_PATTERN
from shuffle_accountants.reference import NOT_IDS

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _anchors():
  page = (ROOT / 'docs' / 'mathematics.md').read_text(encoding='utf-8')
  # Heading anchors, and the former numbers' anchors (<a id="d33"></a>).
  return {name for match in re.findall(
      r'\{#([a-z0-9-]+)\}|<a id="([a-z0-9]+)">', page) for name in match
          if name}


def _cited(paths):
  cited = {}
  for path in paths:
    for match in ID_PATTERN.finditer(path.read_text(encoding='utf-8')):
      if match.group(1) not in NOT_IDS:
        cited.setdefault(match.group(1), str(path.relative_to(ROOT)))
  return cited


def test_every_cited_id_has_an_anchor():
  sources = ([path for path in (ROOT / 'shuffle_accountants').rglob('*.py')
              if path.name != 'reference.py']  # it defines the pattern
             + list((ROOT / 'docs').glob('*.md')) + [ROOT / 'README.md'])
  cited = _cited(sources)
  missing = {i: where for i, where in cited.items()
             if i.lower() not in _anchors()}
  assert len(cited) > 40
  assert not missing, missing


def test_links_to_the_page_point_at_existing_anchors():
  anchors = _anchors()
  for path in list((ROOT / 'docs').glob('*.md')) + [ROOT / 'README.md']:
    text = path.read_text(encoding='utf-8')
    for anchor in re.findall(r'mathematics\.md#([a-z0-9-]+)', text):
      assert anchor in anchors, (path.name, anchor)
