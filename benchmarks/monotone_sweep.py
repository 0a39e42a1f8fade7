"""Seeded sweep: does epsilon fall where the mathematics says it cannot?
(prints falls; not a test)

For each kind of pair, random check-in rounds (fixed seed, the documented
ranges: n <= 1e7 here for time, gamma >= 1e-3, eps0 <= 8, k in {none, 3,
16}, counts <= 1000) are accounted on both routes at delta = 1e-6 at the
two ends of a pair that the mathematics orders (docs/mathematics.md
DOMINATING-ROUNDS, RATE-ONE-DOMINATES):

* rate: gamma < gamma' must give epsilon(gamma) <= epsilon(gamma');
* users: n < n' must give epsilon(n) >= epsilon(n');
* eps0: eps0 < eps0' must give epsilon(eps0) <= epsilon(eps0');
* rounds: T < T' must give epsilon(T) <= epsilon(T').

A fall is a pair whose epsilons are in the wrong order by more than 1e-9
relatively. The issue's named cases (issue 32 item 4) are checked first.
`tests/cross_route/test_monotone.py` reruns the same cases (slow).

Run: python benchmarks/monotone_sweep.py [--pairs 60] [--kinds rate,users]
     [--routes rdp,pld] [--seed 32]
"""

import argparse
import time
from typing import List, Tuple

import numpy as np

from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant

DELTA = 1e-6
ROUNDING = 1e-9
ROUTES = {'rdp': ShuffleRdpAccountant, 'pld': ShufflePldAccountant}
KINDS = ('rate', 'users', 'eps0', 'rounds')

# (route, kind, smaller event, larger event, count, larger count) from issue 32.
NAMED = (
    ('rdp', 'rate', CheckInEvent(259485, 0.0253, local_epsilon=3.99,
                                 num_categories=16),
     CheckInEvent(259485, 0.246, local_epsilon=3.99, num_categories=16), 1, 1),
    ('pld', 'users', CheckInEvent(71, 0.2533, local_epsilon=7.718,
                                  num_categories=16),
     CheckInEvent(121, 0.2533, local_epsilon=7.718, num_categories=16),
     66, 66),
)

Pair = Tuple[CheckInEvent, CheckInEvent, int, int]


def random_pairs(kind: str, num_pairs: int, seed: int = 32) -> List[Pair]:
  """`num_pairs` pairs (low, high, count, high count), low ordered first."""
  rng = np.random.default_rng([seed, KINDS.index(kind)])
  pairs = []
  for _ in range(num_pairs):
    n = int(10**rng.uniform(1, 7))
    rate = float(10**rng.uniform(-3, 0))
    eps0 = float(rng.uniform(0.1, 8.0))
    categories = [None, 3, 16][int(rng.integers(3))]
    count = int(10**rng.uniform(0, 3))
    spread = float(10**rng.uniform(0, 1))  # up to 10x between the ends
    low = dict(num_users=n, checkin_rate=rate, local_epsilon=eps0)
    high = dict(low)
    high_count = count
    if kind == 'rate':
      low['checkin_rate'] = rate / spread
      high['checkin_rate'] = min(1.0, rate)
    elif kind == 'users':
      low['num_users'] = max(2, int(n / spread))
    elif kind == 'eps0':
      low['local_epsilon'] = eps0 / spread
    else:
      high_count = count + max(1, int(count * (spread - 1)))
    pairs.append((CheckInEvent(**low, num_categories=categories),
                  CheckInEvent(**high, num_categories=categories),
                  count, high_count))
  return pairs


def epsilon(route: str, event: CheckInEvent, count: int) -> float:
  return ROUTES[route]().compose(event, count).get_epsilon(DELTA)


def fall(route: str, kind: str, pair: Pair) -> float:
  """How many times the wrong end exceeds the other (1.0: no fall)."""
  low, high, count, high_count = pair
  small, large = epsilon(route, low, count), epsilon(route, high, high_count)
  if kind == 'users':  # more users: epsilon must not rise
    small, large = large, small
  return small / large if small > large * (1 + ROUNDING) else 1.0


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--pairs', type=int, default=60)
  parser.add_argument('--seed', type=int, default=32)
  parser.add_argument('--kinds', default='rate,users')
  parser.add_argument('--routes', default='rdp,pld')
  args = parser.parse_args()
  routes = args.routes.split(',')
  print('named cases (issue 32):')
  for route, kind, low, high, count, high_count in NAMED:
    if route in routes:
      ratio = fall(route, kind, (low, high, count, high_count))
      print(f'  {route} {kind}: fall {ratio:.4f}'
            f'  ({epsilon(route, low, count):.5g} -> '
            f'{epsilon(route, high, high_count):.5g})')
  header = (f'{"route":<5} {"kind":<7} {"pairs":>5} {"falls":>5} '
            f'{"worst":>7} {"seconds":>8}  worst pair')
  print(header)
  print('-' * len(header))
  for route in routes:
    for kind in args.kinds.split(','):
      start = time.perf_counter()
      results = [(fall(route, kind, pair), pair)
                 for pair in random_pairs(kind, args.pairs, args.seed)]
      falls = [r for r in results if r[0] > 1.0]
      worst = max(results, key=lambda r: r[0])
      print(f'{route:<5} {kind:<7} {len(results):>5} {len(falls):>5} '
            f'{worst[0]:>7.4f} {time.perf_counter() - start:>8.1f}  '
            + (repr(worst[1]) if falls else '-'), flush=True)


if __name__ == '__main__':
  main()
