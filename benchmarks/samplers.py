"""The samplers table of docs/samplers.md: epsilon of DP-SGD per batch sampler.

See FS26-RANDOM-ALLOCATION, RANDOM-ALLOCATION-GRID, SHUFFLED-BATCHES-UB and
SHUFFLED-BATCHES-LB.

For sigma in {0.8, 1, 2}, t = 1000 steps per epoch, 1 and 5 epochs,
delta = 1e-6, add/remove: Poisson subsampling at rate 1/t (dp_accounting's
PLD), random allocation of 1 of t steps (certified upper bound of
`ShufflePldAccountant`, RANDOM-ALLOCATION-GRID; the package's lower bound [LB])
and shuffled fixed-size batches (Chua et al.'s lower bound [LB],
SHUFFLED-BATCHES-LB; the certified upper bound, SHUFFLED-BATCHES-UB).

Run: python benchmarks/samplers.py [--columns poisson,shuffled]
(docs/samplers.md shows this table: `python -m tools.docs_numbers` writes it,
key samplers.table; tests rerun it.)
"""

import argparse

from dp_accounting import dp_event
from dp_accounting import privacy_accountant

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants.samplers import RandomAllocationDpEvent
from shuffle_accountants.samplers import random_allocation
from shuffle_accountants.samplers import shuffled_batches_epsilon

DELTA = 1e-6
STEPS = 1000
SIGMAS = (0.8, 1.0, 2.0)
EPOCHS = (1, 5)
COLUMNS = ('poisson', 'allocation', 'shuffled')
ADD_OR_REMOVE = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE


def _certified(event, count) -> float:
  return ShufflePldAccountant(ADD_OR_REMOVE).compose(event, count).get_epsilon(
      DELTA)


def row(sigma: float, epochs: int, columns=COLUMNS) -> dict:
  """The table's values for one (sigma, epochs); missing columns are None."""
  values = dict.fromkeys(['poisson', 'allocation_upper', 'allocation_lower',
                          'shuffled_lower', 'shuffled_upper'])
  if 'poisson' in columns:
    values['poisson'] = _certified(dp_event.PoissonSampledDpEvent(
        1 / STEPS, dp_event.GaussianDpEvent(sigma)), STEPS * epochs)
  if 'allocation' in columns:
    values['allocation_upper'] = _certified(RandomAllocationDpEvent(
        dp_event.GaussianDpEvent(sigma), 1, STEPS), epochs)
    values['allocation_lower'] = random_allocation.epsilon_lower_bound(
        sigma, 1, STEPS, epochs, DELTA)
  if 'shuffled' in columns:
    shuffled = shuffled_batches_epsilon(sigma, STEPS, epochs, DELTA)
    values['shuffled_lower'] = shuffled.lower
    values['shuffled_upper'] = shuffled.upper
  return values


def _cell(value) -> str:
  return '' if value is None else f'{value:.3f}'


def table(columns=COLUMNS) -> str:
  lines = ['| σ | epochs | Poisson [UB] | random allocation [UB] | '
           'random allocation [LB] | shuffled [LB] | shuffled [UB] |',
           '|---|---|---|---|---|---|---|']
  for sigma in SIGMAS:
    for epochs in EPOCHS:
      values = row(sigma, epochs, columns)
      lines.append(f'| {sigma:g} | {epochs} | ' + ' | '.join(
          _cell(values[k]) for k in (
              'poisson', 'allocation_upper', 'allocation_lower',
              'shuffled_lower', 'shuffled_upper')) + ' |')
  return '\n'.join(lines)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--columns', default=','.join(COLUMNS),
                      help=f'comma-separated subset of {COLUMNS}')
  arguments = parser.parse_args()
  print(table(tuple(arguments.columns.split(','))))


if __name__ == '__main__':
  main()
