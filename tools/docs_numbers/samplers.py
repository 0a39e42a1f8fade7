"""The computed numbers of docs/samplers.md (and the README)."""

import functools

from .core import benchmark
from .core import sig
from .core import table
from .core import table_cells
from .core import value


@table('samplers.table', slow=True)
def _samplers_table():
  """benchmarks/samplers.py's table.

  Printed by python benchmarks/samplers.py.
  """
  text = benchmark('samplers').table()
  cells = table_cells(text)
  return cells[0], cells[2:]


@functools.lru_cache(maxsize=None)
def _samplers_row(sigma: float, epochs: int, columns: tuple):
  return benchmark('samplers').row(sigma, epochs, columns)


value('samplers.shuffled_lower')(lambda: sig(_samplers_row(
    1.0, 1, ('shuffled',))['shuffled_lower'], 3))
value('samplers.shuffled_upper')(lambda: sig(_samplers_row(
    1.0, 1, ('shuffled',))['shuffled_upper'], 3))
value('samplers.poisson')(lambda: sig(_samplers_row(
    1.0, 1, ('poisson',))['poisson'], 3))
value('samplers.poisson_2')(lambda: sig(_samplers_row(
    1.0, 1, ('poisson',))['poisson'], 2))


@functools.lru_cache(maxsize=None)
def _shuffled_epochs(epochs: int):
  from shuffle_accountants.samplers import shuffled_batches_epsilon
  return shuffled_batches_epsilon(1.0, 1000, epochs, 1e-6)


value('samplers.plateau_epochs')(lambda: str(
    _shuffled_batches().LOWER_BOUND_MAX_EPOCHS))
value('samplers.plateau_lower')(lambda: sig(_shuffled_epochs(32).lower, 3))
value('samplers.plateau_lower_100')(lambda: sig(_shuffled_epochs(100).lower,
                                                3))
value('samplers.plateau_upper_32')(lambda: sig(_shuffled_epochs(32).upper, 3))
value('samplers.plateau_upper_100')(lambda: sig(_shuffled_epochs(100).upper,
                                                3))


def _shuffled_batches():
  from shuffle_accountants.samplers import shuffled_batches
  return shuffled_batches


value('samplers.allocation', slow=True)(lambda: sig(_samplers_row(
    1.0, 1, ('allocation',))['allocation_upper'], 3))
