"""The docs build strictly, and every paper-figure example runs (quick mode)."""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir,
                                    os.pardir))
EXAMPLES = (pytest.param('girgis_figures', marks=pytest.mark.slow),
            'checkin_blanket', 'koskela_figures', 'liew_checkin',
            'mixed_composition', 'randomizer_choice', 'randomizer_tightness',
            'numeric_telemetry', 'sum_release',
            pytest.param('numeric_vectors', marks=pytest.mark.slow))


def test_docs_build_strictly(tmp_path):
  pytest.importorskip('mkdocs')
  pytest.importorskip('mkdocstrings')
  result = subprocess.run(
      [sys.executable, '-m', 'mkdocs', 'build', '--strict', '--site-dir',
       str(tmp_path / 'site')], cwd=ROOT, capture_output=True, text=True,
      check=False)
  assert result.returncode == 0, result.stderr
  # use_directory_urls: false, so the site works opened from files: every
  # page is NAME.html and every link between pages names such a file.
  site = tmp_path / 'site'
  assert (site / 'results.html').exists()
  for page in site.glob('*.html'):
    if page.name == '404.html':  # served only; its links are absolute
      continue
    html = page.read_text(encoding='utf-8')
    for target in re.findall(r'href="([^"#:]+)(?:#[^"]*)?"', html):
      if not target.startswith(('assets/', 'search/', 'css/', 'js/')):
        assert (page.parent / target).is_file(), (page.name, target)


def test_results_page_shows_every_figure_the_examples_write():
  with open(os.path.join(ROOT, 'docs', 'results.md'), encoding='utf-8') as f:
    page = f.read()
  figures = sorted(os.listdir(os.path.join(ROOT, 'docs', 'figures')))
  assert figures and all(f'figures/{name}' in page for name in figures)


@pytest.mark.parametrize('example', EXAMPLES)
def test_example_writes_its_figures(example, tmp_path):
  pytest.importorskip('matplotlib')
  result = subprocess.run(
      [sys.executable, os.path.join(ROOT, 'examples', f'{example}.py'),
       '--quick', '--output', str(tmp_path)], cwd=tmp_path,
      capture_output=True, text=True, check=False)
  assert result.returncode == 0, result.stderr
  written = [name for name in os.listdir(tmp_path) if name.endswith('.png')]
  assert written
  for name in written:
    with open(tmp_path / name, 'rb') as png:
      assert png.read(8) == b'\x89PNG\r\n\x1a\n'
