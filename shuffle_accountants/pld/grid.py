"""The automatic PLD grid: how fine a spacing the rounds need (not a bound).

IDs: TAILS-TO-INFINITY

Not a bound: any spacing gives a sound answer (every round is discretized
pessimistically, docs/mathematics.md TAILS-TO-INFINITY); this policy only trades
time for tightness. d = sqrt(10 r) times the smallest standard deviation of a
shuffle round's privacy loss, for a target relative accuracy r; measured over n
in [1e4, 1e9], eps0 in [0.1, 4] and T in [1, 1e4], the pessimistic epsilon is
then within about r of its converged value. One round never spans more than
`MAX_ROUND_BUCKETS` buckets, and ledgers with other events stay at or above
`FINEST_MIXED_GRID` (a Gaussian PLD on a finer grid would need ~1e7 buckets).
"""

from typing import Optional, Tuple

from dp_accounting import dp_event
import numpy as np

from shuffle_accountants import _cache
from shuffle_accountants import _progress
from shuffle_accountants.core import _ledger
from shuffle_accountants.pld import composition
from shuffle_accountants.pld import routes

__all__ = [
    'FINEST_MIXED_GRID', 'COARSEST_GRID', 'MAX_ROUND_BUCKETS', 'DEFAULT_GRID',
    'COARSEST_FALLBACK_GRID', 'automatic_interval', 'automatic_grid',
]

FINEST_MIXED_GRID = 1e-6
COARSEST_GRID = 1e-2
MAX_ROUND_BUCKETS = 200_000
# Used when the ledger holds no shuffle round (the parent's default).
DEFAULT_GRID = 1e-4
# The coarsest grid the composed-width rule may ask for (the constructor's
# limit for value_discretization_interval).
COARSEST_FALLBACK_GRID = 1.0


# A ledger's grid is chosen again after every new round (a 366th day):
# each round's scales are kept (three floats; the budget counts entries).
@_cache.cached(2**16, lambda scales: 1)
def _round_scales(event, ratio, krr_adversary: str, relative_width: float
                  ) -> routes.Scales:
  """`routes.round_scales`, cached."""
  return routes.round_scales(event, ratio, krr_adversary, relative_width)


def automatic_interval(ledger: dp_event.DpEvent, relative_accuracy: float,
                       krr_adversary: str, relative_width: float) -> float:
  """The grid spacing for a ledger (see `automatic_grid`)."""
  return automatic_grid(ledger, relative_accuracy, krr_adversary,
                        relative_width)[0]


def automatic_grid(ledger: dp_event.DpEvent, relative_accuracy: float,
                   krr_adversary: str, relative_width: float,
                   progress: Optional[_progress.Progress] = None
                   ) -> Tuple[float, bool]:
  """(grid spacing, whether the resource budget made it coarser).

  The spacing is never so fine that the composed PLD, about 2 (8 S + L)
  wide for the composed loss's standard deviation S and the largest loss L
  of a round, would exceed `composition.MAX_COMPOSED_BUCKETS` grid points. When
  that rule (or the cap of 1) decides, the requested accuracy is not met and
  the accountant also asks the RDP route.
  """
  intervals, composed_variance, largest = [], 0.0, 0.0
  for event, ratio, count in _ledger.shuffle_rounds(ledger):
    spread, reach, spread_bound = _round_scales(event, ratio, krr_adversary,
                                                relative_width)
    intervals.append(max(np.sqrt(10 * relative_accuracy) * spread,
                         2 * reach / MAX_ROUND_BUCKETS))
    composed_variance += count * spread_bound**2
    largest = max(largest, reach)
    if progress is not None:
      progress.step()
  intervals = [i for i in intervals if np.isfinite(i) and i > 0]
  if not intervals:
    return DEFAULT_GRID, False
  accurate = min(min(intervals), COARSEST_GRID)
  composed_width = 2 * (8 * np.sqrt(composed_variance) + largest)
  interval = max(accurate, composed_width / composition.MAX_COMPOSED_BUCKETS)
  limited = interval > accurate
  # At most 1: beyond, the accountant falls back to the RDP route.
  interval = min(interval, COARSEST_FALLBACK_GRID)
  if not _ledger.only_shuffle_rounds(ledger):
    interval = max(interval, FINEST_MIXED_GRID)
  # A round number of significant digits keeps the grid readable.
  return float(f'{max(interval, 1e-12):.2g}'), bool(limited)
