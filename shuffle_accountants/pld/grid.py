"""The automatic PLD grid policy: how fine a spacing the ledger's rounds need (not a bound; D9 keeps it sound).

Not a bound: any spacing gives a sound answer (every round is discretized
pessimistically, docs/mathematics.md D9); this policy only trades time for tightness.
d = sqrt(10 r) times the smallest standard deviation of a shuffle round's
privacy loss, for a target relative accuracy r; measured over n in
[1e4, 1e9], eps0 in [0.1, 4] and T in [1, 1e4], the pessimistic epsilon is
then within about r of its converged value. One round never spans more than
`MAX_ROUND_BUCKETS` buckets, and ledgers with other events stay at or above
`FINEST_MIXED_GRID` (a Gaussian PLD on a finer grid would need ~1e7 buckets).
"""

from typing import Optional, Tuple

from dp_accounting import dp_event
import numpy as np

from shuffle_accountants import _cache
from shuffle_accountants import _ledger
from shuffle_accountants import _progress
from shuffle_accountants import events
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pld import candidates
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import composition
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import distributed

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
                  ) -> Tuple[float, float, float]:
  """(loss standard deviation, largest finite loss, a bound on the former).

  The first sets the accuracy; the third (at least the first) bounds the
  width of many composed rounds.
  """
  if isinstance(event, events.ShuffleEvent):
    # The grid needs a pair's scale, not its fine structure (coarse clone
    # groups, outputs merged on a fine grid): a fraction of a percent off.
    resolution = checkin.scale_resolution(event.local_epsilon,
                                          event.num_users)
    pairs = [atoms if ratio is None
             else privacy_loss.subsampled_orders(atoms, ratio)[0]
             for _, atoms in candidates.event_pairs(
                 event, krr_adversary,
                 max(relative_width, checkin.SCALE_RELATIVE_WIDTH),
                 resolution)
             if atoms is not None]
    # A pair whose finite losses are all equal needs no resolution.
    spreads = [privacy_loss.loss_spread(atoms) for atoms in pairs]
    spread = min([s for s in spreads if s > 0], default=np.inf)
    reach = max(np.max(np.abs(atoms.losses), initial=0.0) for atoms in pairs)
    return spread, reach, max(spreads, default=0.0)
  if isinstance(event, events.DistributedCheckInEvent):
    arguments = (event.num_users, event.checkin_rate, event.noise_multiplier)
    model = dict(participation=event.participation,
                 min_reporting=event.min_reporting)
    return (distributed.loss_spread(*arguments, **model),
            distributed.pmf_reach(*arguments, relative_width, **model),
            np.sqrt(distributed.loss_variance_bound(*arguments,
                                                    relative_width, **model)))
  local_epsilon = getattr(event, 'local_epsilon', None)
  spread = checkin.loss_spread(event.num_users, ratio, local_epsilon,
                               event.noise_multiplier, relative_width)
  arguments = candidates.liew_event_arguments(event)
  # What the round's PMF will span (a check-in round reaches the losses of
  # its largest group of participants, not of the typical one).
  reach = checkin.pmf_reach(relative_width=relative_width, **arguments)
  if isinstance(event, events.CheckInEvent) and local_epsilon:
    # The D31 pairs can be far narrower than the check-in mixture: the grid
    # resolves the narrowest (the round's PMF keeps the mixture's range).
    resolution = checkin.scale_resolution(
        local_epsilon, event.num_users * event.checkin_rate)
    spread = min([spread] + [
        privacy_loss.loss_spread(atoms) for _, atoms in
        candidates.checkin_blanket_pairs(
            event.num_users, event.checkin_rate, local_epsilon,
            candidates.checkin_randomizer(event),
            max(relative_width, checkin.SCALE_RELATIVE_WIDTH), resolution)])
  scalar = candidates.scalar_shuffle_sample(event)
  if scalar is not None:
    # Its scalar shuffle candidate is far narrower than the D7 mixture.
    spread = min(spread, _round_scales(*scalar, krr_adversary,
                                       relative_width)[0])
  return spread, reach, np.sqrt(checkin.loss_variance_bound(
      relative_width=relative_width, **arguments))


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
