"""`python -m tools.docs_numbers`: rewrite or check the pages."""

import argparse
import sys

from .core import PAGES
from .core import PYTHON_BLOCK
from .core import ROOT
from .marks import markers
from .marks import print_comments
from .marks import printed_values
from .marks import regenerate
from .marks import run_block
from .marks import stale
from .marks import unmarked_numbers


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(
      prog='python -m tools.docs_numbers',
      description=sys.modules[__package__].__doc__.splitlines()[0])
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
