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

import numpy as np
from dp_accounting import dp_event

from shuffle_accountants import events
from shuffle_accountants.pld import candidates
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import discrete

FINEST_MIXED_GRID = 1e-6
COARSEST_GRID = 1e-2
MAX_ROUND_BUCKETS = 200_000
# Used when the ledger holds no shuffle round (the parent's default).
DEFAULT_GRID = 1e-4


def _round_interval(event, ratio, relative_accuracy: float,
                    krr_adversary: str, relative_width: float) -> float:
  """The spacing one shuffle round asks for."""
  if isinstance(event, events.ShuffleEvent):
    pairs = [atoms if ratio is None
             else discrete.subsampled_orders(atoms, ratio)[0]
             for _, atoms in candidates.event_pairs(event, krr_adversary,
                                                    relative_width)]
    # A pair whose finite losses are all equal needs no resolution.
    spreads = [discrete.loss_spread(atoms) for atoms in pairs]
    spread = min([s for s in spreads if s > 0], default=np.inf)
    reach = max(np.max(np.abs(atoms.losses), initial=0.0) for atoms in pairs)
  else:
    local_epsilon = getattr(event, 'local_epsilon', None)
    spread = checkin.loss_spread(event.num_users, ratio, local_epsilon,
                                 event.noise_multiplier, relative_width)
    reach = checkin.largest_loss(ratio, local_epsilon, event.noise_multiplier)
  return max(np.sqrt(10 * relative_accuracy) * spread,
             2 * reach / MAX_ROUND_BUCKETS)


def automatic_interval(ledger: dp_event.DpEvent, relative_accuracy: float,
                       krr_adversary: str, relative_width: float) -> float:
  """The grid spacing for a ledger (see the module docstring)."""
  intervals = [_round_interval(event, ratio, relative_accuracy,
                               krr_adversary, relative_width)
               for event, ratio in candidates.shuffle_leaves(ledger)]
  intervals = [i for i in intervals if np.isfinite(i) and i > 0]
  if not intervals:
    return DEFAULT_GRID
  interval = min(min(intervals), COARSEST_GRID)
  if not candidates.only_shuffle_events(ledger):
    interval = max(interval, FINEST_MIXED_GRID)
  # A round number of significant digits keeps the grid readable.
  return float(f'{max(interval, 1e-12):.2g}')
