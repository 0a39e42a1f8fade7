"""Every computed number of the README and docs is what the code gives now.

The numbers are marked on the pages and produced by one registry,
tools/docs_numbers/; after a change to the numerics, rerun
`python -m tools.docs_numbers` to rewrite them. Tolerance: the page must
equal the code's value rounded to the digits the page shows (half a unit of
its last digit).
"""

import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'tools'))
import docs_numbers  # noqa: E402


def _marked():
  params = []
  for page in docs_numbers.PAGES:
    for kind, key in docs_numbers.markers(page.read_text(encoding='utf-8')):
      registry = docs_numbers.VALUES if kind == 'value' else docs_numbers.TABLES
      slow = key in registry and registry[key].slow
      params.append(pytest.param(page, kind, key, id=f'{page.name}-{key}',
                                 marks=[pytest.mark.slow] if slow else []))
  return params


MARKED = _marked()


def test_every_marker_is_registered_and_every_entry_used():
  used = {(param.values[1], param.values[2]) for param in MARKED}
  registered = ({('value', key) for key in docs_numbers.VALUES}
                | {('table', key) for key in docs_numbers.TABLES})
  assert used - registered == set()
  assert registered - used == set()
  assert len(used) > 20


@pytest.mark.parametrize('page, kind, key', MARKED)
def test_marked_number_is_current(page, kind, key):
  if key.startswith('opacus.'):
    pytest.importorskip('opacus')
  if key.startswith('federated.'):
    pytest.importorskip('flwr')
  text = page.read_text(encoding='utf-8')
  problems = docs_numbers.stale(
      '\n'.join(
          m.group(0) for m in (docs_numbers.VALUE_MARK if kind == 'value'
                               else docs_numbers.TABLE_MARK).finditer(text)
          if m.group('key') == key), lambda entry: True)
  assert not problems, (
      f'{problems}\nRun `python -m tools.docs_numbers` to rewrite the pages.')


@pytest.mark.parametrize('page', docs_numbers.PAGES, ids=lambda p: p.name)
def test_no_page_has_an_unmarked_result(page):
  # Result-like: three or more significant digits, or a mantissa times a
  # power of ten; exemptions (with reasons) are docs_numbers.EXEMPT.
  assert docs_numbers.unmarked_numbers(page) == []


def test_the_check_catches_a_stale_value_and_a_stale_table():
  assert docs_numbers.stale(
      '<!-- value: results.mixed_training_alone -->1.374<!-- /value -->',
      lambda entry: True)
  assert docs_numbers.tables_agree('| a | b |\n|---|---|\n| 1 | 0.1 |',
                                   '|a|b|\n|---|---|\n|1| 0.1|')
  assert not docs_numbers.tables_agree('| a | b |\n|---|---|\n| 1 | 0.1 |',
                                       '| a | b |\n|---|---|\n| 1 | 0.2 |')
  # Machine round-off: within the stated relative noise, not beyond.
  assert docs_numbers.tables_agree('|a|\n|---|\n|38.039936|',
                                   '|a|\n|---|\n|38.040152|', 1e-5)
  assert not docs_numbers.tables_agree('|a|\n|---|\n|38.039936|',
                                       '|a|\n|---|\n|38.040152|', 1e-6)
  assert not docs_numbers.tables_agree('|a|\n|---|\n|x|', '|a|\n|---|\n|y|',
                                       1.0)


def test_print_comments_are_compared_at_their_digits():
  block = 'x = 0.030039596\nprint(x)  # 0.0301, upper\nprint(2)\n'
  assert docs_numbers.printed_values(block, '0.030039596\n2\n') == [
      (1, '0.0301', '0.0300')]
  with pytest.raises(AssertionError):
    docs_numbers.printed_values(block, '0.03\n')
  assert docs_numbers.sig(0.6237, 4) == '0.6237'
  assert docs_numbers.sig(1.0e8, 2) == '1.0e8'


def test_cpsgd_bound_reproduces_the_binomial_drafts_cited_trials():
  # The binomial table's cpSGD column is computed; at delta = 1e-5 it must be
  # the N the draft cites (draft-case-ppm-binomial-dp), else the formula is
  # not the draft's.
  from docs_numbers import secure_sums
  for (epsilon, delta), cited in secure_sums.CPSGD_TRIALS.items():
    assert secure_sums.cpsgd_trials(epsilon, delta) == cited
  # The condition N/4 >= 23 log(10/delta) binds at epsilon = 3 and 1.
  assert secure_sums.cpsgd_trials(3.0, 1e-6) == 1483
