"""Shared plumbing for the paper-figure examples: flags, progress, saving.

The look (a colour and marker per method, solid upper bounds, dashed lower
bounds, legends outside the data) is `shuffle_accountants.figure_style`,
shared with `shuffle-accountant plot`.
"""

import argparse
import os
import sys

import matplotlib

matplotlib.use('Agg')
from matplotlib import pyplot

from shuffle_accountants import figure_style


def parse_args(description: str) -> argparse.Namespace:
  parser = argparse.ArgumentParser(description=description)
  parser.add_argument('--output', default='figures',
                      help='folder for the PNG files (created if missing)')
  parser.add_argument('--quick', action='store_true',
                      help='fewer points (for smoke tests)')
  args = parser.parse_args()
  os.makedirs(args.output, exist_ok=True)
  return args


def progress(label: str, done: int, total: int) -> None:
  sys.stderr.write(f'\r{label}: {done}/{total}' + ('\n' if done == total
                                                    else ''))
  sys.stderr.flush()


def save(figure, output: str, name: str) -> str:
  path = os.path.join(output, name)
  figure.tight_layout()
  figure_style.save(figure, path, dpi=110)
  pyplot.close(figure)
  print(f'wrote {path}')
  return path
