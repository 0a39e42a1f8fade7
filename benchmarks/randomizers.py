"""Benchmark of mechanism-specific amplification per randomizer (prints a table;
not a test).

For each catalogue randomizer (domain d = 100), eps0 in {0.5, 1, 2, 4, 8},
n in {1e3, 1e4, 1e6, 1e8}, delta = 1e-6 and T in {1, 365} rounds, epsilon of
each certified pair on its own (generic FMT21-CLONES, the NAMED-CLONE-RATE clone
rate s(R) where it beats FMT21, the BLANKET-TWO-LEVEL privacy blanket), the
certified epsilon of `ShufflePldAccountant` (the smallest profile of all of
them), the largest lower bound of `randomizer_epsilon_lower_bound` (dataset
pairs, BLANKET-TWO-LEVEL and LB-THIRD-SPLIT), the ratio certified / lower
and the wall time of one cold accountant call (construct, compose, query),
also as a ratio to the generic round's time measured in the same run.

Run: python benchmarks/randomizers.py [--quick]
(The figure of epsilon against n is examples/randomizer_choice.py.)
"""

import argparse
import time

from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import randomizers
from shuffle_accountants.pld import candidates
from shuffle_accountants.pld import composition
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import lower_bounds
from shuffle_accountants.pld import routes

DELTA = 1e-6
DOMAIN = 100
FAMILIES = {
    'k-RR': lambda eps: randomizers.KRandomizedResponse(DOMAIN, eps),
    'OUE': lambda eps: randomizers.OptimizedUnaryEncoding(DOMAIN, eps),
    'OLH': lambda eps: randomizers.OptimizedLocalHashing(DOMAIN, eps),
    'Hadamard': lambda eps: randomizers.HadamardResponse(DOMAIN, eps),
    'subset': lambda eps: randomizers.SubsetSelection(DOMAIN, eps),
}


def _cold():
  candidates.shuffle_round_pairs.cache_clear()
  routes.event_pmf.cache_clear()


def _certified(event, rounds):
  _cold()
  start = time.perf_counter()
  accountant = ShufflePldAccountant()
  accountant.compose(event, rounds)
  epsilon = accountant.get_epsilon(DELTA)
  return epsilon, time.perf_counter() - start, accountant


def _pair_epsilon(atoms, interval, rounds):
  pld = composition.to_privacy_loss_distribution(
      discrete.connect_the_dots(atoms, interval))
  if rounds > 1:
    pld = composition.self_compose(pld, rounds)
  return float(pld.get_epsilon_for_delta(DELTA))


def rows(quick: bool, settings=None):
  """One dict per row; `settings` ((n, rounds), ...) replaces the grid."""
  epsilons = [1.0] if quick else [0.5, 1.0, 2.0, 4.0, 8.0]
  populations = [10**4, 10**8] if quick else [10**3, 10**4, 10**6, 10**8]
  settings = settings or [(n, rounds) for n in populations
                          for rounds in (1, 365)]
  for name, family in FAMILIES.items():
    for eps0 in epsilons:
      randomizer = family(eps0)
      for n, rounds in settings:
        event = ShuffleEvent(n, randomizer=randomizer)
        certified, seconds, accountant = _certified(event, rounds)
        _, generic_seconds, _ = _certified(ShuffleEvent(n, eps0), rounds)
        interval = accountant.value_discretization_interval
        pairs = dict(candidates.shuffle_round_pairs(
            n, eps0, event.num_categories, 0.0, 'shuffled_output', 1e-3,
            randomizer))
        per_pair = {key: (None if pairs.get(key) is None else
                          _pair_epsilon(pairs[key], interval, rounds))
                    for key in ('FMT21-CLONES', candidates.CLONE_RATE_PAIR,
                                candidates.BLANKET_PAIR,
                                'KHH-KRR-WEAK')}
        lower = lower_bounds.randomizer_epsilon_lower_bound(
            randomizer, n, rounds, DELTA)
        yield dict(randomizer=name, eps0=eps0, n=n, rounds=rounds,
                   generic=per_pair['FMT21-CLONES'],
                   clone_rate=per_pair[candidates.CLONE_RATE_PAIR],
                   blanket=(per_pair[candidates.BLANKET_PAIR]
                            or per_pair['KHH-KRR-WEAK']),
                   certified=certified, lower=lower,
                   seconds=seconds, time_ratio=seconds / generic_seconds)


def _cell(value, digits=5):
  return f'{"-":>9}' if value is None else f'{value:9.{digits}f}'


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--quick', action='store_true',
                      help='eps0 = 1 and n in {1e4, 1e8} only')
  args = parser.parse_args()
  print('| randomizer | eps0 | n | T | FMT21 | s(R) clone | blanket | '
        'certified | exact LB | cert/LB | cert/FMT21 | time s | '
        'time / generic |')
  print('|' + '---|' * 13)
  for row in rows(args.quick):
    ratio = (None if not row['lower'] else row['certified'] / row['lower'])
    print(f'| {row["randomizer"]} | {row["eps0"]:g} | {row["n"]:.0e} | '
          f'{row["rounds"]} | {_cell(row["generic"])} | '
          f'{_cell(row["clone_rate"])} | {_cell(row["blanket"])} | '
          f'{_cell(row["certified"])} | {_cell(row["lower"])} | '
          f'{_cell(ratio, 3)} | '
          f'{_cell(row["certified"] / row["generic"], 3)} | '
          f'{row["seconds"]:.2f} | {row["time_ratio"]:.1f} |', flush=True)


if __name__ == '__main__':
  main()
