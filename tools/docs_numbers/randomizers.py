"""The computed numbers of docs/randomizers.md."""

import functools

from .core import benchmark
from .core import sig
from .core import table
from .core import value


@functools.lru_cache(maxsize=None)
def _randomizer_rows():
  """benchmarks/randomizers.py's rows at (10^4, 1), (10^6, 365), (10^8, 1)."""
  return tuple(benchmark('randomizers').rows(
      False, [(10**4, 1), (10**6, 365), (10**8, 1)]))


@value('randomizers.krr_clone_rate_1e4', slow=True)
def _krr_clone_rate():
  return next(f'{row["clone_rate"]:.5f}' for row in _randomizer_rows()
              if row['randomizer'] == 'k-RR' and row['eps0'] == 1.0
              and row['n'] == 10**4)


def _over_lower_range(names, keep):
  """'lo–hi' of certified / lower bound over the catalogue rows kept."""
  ratios = [row['certified'] / row['lower'] for row in _randomizer_rows()
            if row['randomizer'] in names and keep(row)]
  return f'{min(ratios):.2f}–{max(ratios):.2f}'


_UNARY_LIKE = ('OUE', 'OLH', 'subset')
value('randomizers.unary_like_over_lower_small', slow=True)(
    lambda: _over_lower_range(_UNARY_LIKE, lambda row: row['eps0'] <= 1))
value('randomizers.unary_like_over_lower_large', slow=True)(
    lambda: _over_lower_range(_UNARY_LIKE, lambda row: row['eps0'] >= 2))
value('randomizers.hadamard_over_lower', slow=True)(
    lambda: _over_lower_range(('Hadamard',), lambda row: not (
        row['eps0'] == 8 and row['n'] == 10**4)))
value('randomizers.hadamard_8_over_lower', slow=True)(
    lambda: _over_lower_range(('Hadamard',), lambda row: (
        row['eps0'] == 8 and row['n'] == 10**4)).split('–')[0])


@table('randomizers.catalogue', slow=True)
def _randomizers_catalogue():
  header = ['randomizer', 'ε0', 'n', 'T', 'generic FMT21', 's(R) clone',
            'blanket (BLANKET-TWO-LEVEL; k-RR: KHH-KRR-WEAK)', 'certified',
            'exact LB',
            'certified / LB', 'certified / generic']

  def cell(number, digits=5):
    return '-' if number is None else f'{number:.{digits}f}'

  rows = []
  for row in _randomizer_rows():
    rows.append([row['randomizer'], f'{row["eps0"]:g}', f'{row["n"]:.0e}',
                 str(row['rounds']), cell(row['generic']),
                 cell(row['clone_rate']), cell(row['blanket']),
                 cell(row['certified']), cell(row['lower']),
                 cell(row['certified'] / row['lower'], 3) if row['lower']
                 else '-', cell(row['certified'] / row['generic'], 3)])
  return header, rows


@functools.lru_cache(maxsize=None)
def _hadamard_year():
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import randomizers
  hadamard = randomizers.HadamardResponse(domain_size=1000, local_epsilon=2.0)
  named, generic = ShufflePldAccountant(), ShufflePldAccountant()
  named.compose(ShuffleEvent(num_users=10**6, randomizer=hadamard), 365)
  generic.compose(ShuffleEvent(num_users=10**6, local_epsilon=2.0), 365)
  return named.get_epsilon(1e-6), generic.get_epsilon(1e-6)


value('randomizers.hadamard_generic')(lambda: sig(_hadamard_year()[1], 3))
