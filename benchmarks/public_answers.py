"""Records the library's public answers, and diffs two records (issue 52).

A redesign must leave every answer bit for bit the same, or lower with its
proof. This script asks a fixed battery of public queries (every registered
event, one dp_accounting event and the samplers' events, composed 1 and 100
times on both accountants, `get_epsilon` at three deltas and `get_delta` at
one epsilon) and writes the answers as JSON; `--diff OLD` compares them with
an earlier record and prints every answer that moved, with its ratio.

Run:  python benchmarks/public_answers.py [--out FILE] [--diff OLD.json]
An earlier commit's record: check it out beside this one
(`git worktree add /tmp/old REV`), then run this script with
`PYTHONPATH=/tmp/old` and `--out old.json`.
"""

import argparse
import json
import math
import time
from typing import Callable, Dict, List, Tuple, Union

from dp_accounting import dp_event

import shuffle_accountants as sa

DELTAS = (1e-3, 1e-6, 1e-10)
EPSILON = 1.0
COUNTS = (1, 100)
ACCOUNTANTS = {'rdp': sa.ShuffleRdpAccountant, 'pld': sa.ShufflePldAccountant}

# (name, event): one instance of each kind of event, at ordinary sizes.
BATTERY: Tuple[Tuple[str, Callable[[], dp_event.DpEvent]], ...] = (
    ('shuffle', lambda: sa.ShuffleEvent(1000, 1.0)),
    ('shuffle_krr3', lambda: sa.ShuffleEvent(10000, 2.0, num_categories=3)),
    ('checkin', lambda: sa.CheckInEvent(1000, 0.1, local_epsilon=1.0)),
    ('subsampled_gaussian',
     lambda: sa.SubsampledShuffleGaussianEvent(1000, 100, 2.0)),
    ('distributed_checkin',
     lambda: sa.DistributedCheckInEvent(1000, 0.1, 1.0)),
    ('skellam', lambda: sa.SkellamSecureSumEvent(10, 1.0, 64.0, 1e5)),
    ('sum_of_reports',
     lambda: sa.SumOfReportsEvent(1000, sa.KRandomizedResponse(2, 1.0))),
    ('binomial_sum', lambda: sa.BinomialSecureSumEvent(1000)),
    ('discrete_gaussian_sum', lambda: sa.DiscreteGaussianSumEvent(2.0)),
    ('discrete_laplace_sum', lambda: sa.DiscreteLaplaceSumEvent(2.0)),
    ('poisson_gaussian', lambda: dp_event.PoissonSampledDpEvent(
        0.01, dp_event.GaussianDpEvent(1.0))),
    ('shuffled_batches', lambda: sa.ShuffledBatchesDpEvent(1.0, 100)),
    ('random_allocation', lambda: sa.RandomAllocationDpEvent(
        dp_event.GaussianDpEvent(1.0), 1, 100)),
)

Answer = Union[float, str]


def _answers(accountant_type, event: dp_event.DpEvent, count: int
             ) -> Dict[str, Answer]:
  """The queries on one fresh accountant per query (answers must not
  depend on what was asked before; a refusal is recorded by its type)."""
  def asked(query: Callable[[object], float]) -> Answer:
    try:
      return query(accountant_type().compose(event, count))
    except Exception as error:  # pylint: disable=broad-except
      return f'refused: {type(error).__name__}'
  answers = {f'epsilon({delta:g})': asked(
      lambda accountant, delta=delta: accountant.get_epsilon(delta))
             for delta in DELTAS}
  answers[f'delta({EPSILON:g})'] = asked(
      lambda accountant: accountant.get_delta(EPSILON))
  return answers


def record(names: Tuple[str, ...] = ()) -> Dict[str, Answer]:
  """{'<event> x <count> <route> <query>': answer} over the battery (only
  the named events, if any are named)."""
  answers: Dict[str, Answer] = {}
  for name, build in BATTERY:
    if names and name not in names:
      continue
    for count in COUNTS:
      for route, accountant_type in ACCOUNTANTS.items():
        for query, answer in _answers(accountant_type, build(), count).items():
          # Strict JSON: an infinite answer is recorded as the string 'inf'.
          answers[f'{name} x {count} {route} {query}'] = (
              'inf' if answer == math.inf else answer)
  return answers


def diff(old: Dict[str, Answer], new: Dict[str, Answer]
         ) -> Tuple[Dict[str, int], List[Tuple[str, Answer, Answer, str]]]:
  """(counts of same / lower / higher / other, the rows that moved)."""
  counts = {'same': 0, 'lower': 0, 'higher': 0, 'other': 0}
  moved = []
  for key in sorted(set(old) | set(new)):
    before, after = old.get(key, 'absent'), new.get(key, 'absent')
    if before == after:
      counts['same'] += 1
      continue
    if isinstance(before, float) and isinstance(after, float):
      kind = 'lower' if after < before else 'higher'
      ratio = (f'{after / before:.9f}' if before and math.isfinite(before)
               else '')
    else:
      kind, ratio = 'other', ''
    counts[kind] += 1
    moved.append((key, before, after, f'{kind} {ratio}'.strip()))
  return counts, moved


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--out', help='write the record as JSON here')
  parser.add_argument('--diff', help='an earlier record to compare with')
  parser.add_argument('--events', default='',
                      help='comma-separated battery names (default: all)')
  args = parser.parse_args()
  start = time.perf_counter()
  answers = record(tuple(filter(None, args.events.split(','))))
  print(f'{len(answers)} answers in {time.perf_counter() - start:.1f} s')
  if args.out:
    with open(args.out, 'w', encoding='utf-8') as file:
      json.dump(answers, file, indent=1, sort_keys=True, allow_nan=False)
  if args.diff:
    with open(args.diff, encoding='utf-8') as file:
      counts, moved = diff(json.load(file), answers)
    print(', '.join(f'{kind}: {count}' for kind, count in counts.items()))
    print(f'{"query":<58} {"before":>22} {"after":>22}  change')
    for key, before, after, change in moved:
      print(f'{key:<58} {before!s:>22} {after!s:>22}  {change}')


if __name__ == '__main__':
  main()
