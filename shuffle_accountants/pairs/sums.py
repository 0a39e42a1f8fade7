"""Sum-only release of independent-bit reports: one coordinate's pairs.

IDs: SUM-OF-BITS, SUM-OF-BITS-DELETION, DELETION-AS-REPLACE-ONE,
TAILS-TO-INFINITY

A user holding x reports independent bits, Bern(p) at coordinate x and
Bern(q) elsewhere; the server sees only the coordinate-wise sums of the n
reports. Replacing the target's x by x' changes the laws of coordinates x
and x' only, and SUM-OF-BITS (docs/mathematics.md) reduces the release to
two independent one-coordinate pairs, each dominated by the family

  P_A = PB(A) * Bern(p),  Q_A = PB(A) * Bern(q),   A = 0, ..., n - 1,
  PB(A) = Bin(A, p) + Bin(n - 1 - A, q)

(coordinate x; coordinate x' is the same family in the reverse order).
Labels A are grouped: a group [A0, A1] is represented by the pair with A0
users at p and n - 1 - A1 at q, of which every member of the group is a
post-processing (the missing users' independent bits are added), so the
group's pair dominates each member [DOM, SUM-OF-BITS (iii)]; with groups of
one label the family is exact. Under deletion (the target's report replaced
by the empty input's, every bit Bern(q)) only coordinate x changes, and
its family alone, in both orders, dominates the release
(SUM-OF-BITS-DELETION): `SumUnderDeletion` is such a round as accounted.

The noise is convolved directly (sums of positive terms, full relative
precision), which costs about the square of its window, 19 standard
deviations: rounds whose noise variance n max(p(1 - p), q(1 - q)) exceeds
`MAX_DIRECT_VARIANCE` are computed at fewer users (`computed_users`; fewer
users dominate more, SUM-OF-BITS 6) and the accountants also take the
per-coordinate shuffle bound at the true n.
"""

import math
from typing import List, Tuple

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant
import numpy as np

from shuffle_accountants import _cache
from shuffle_accountants import _numerics
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.pairs import binomial
from shuffle_accountants.pairs import privacy_loss

__all__ = ['SUM_OF_BITS', 'DEFAULT_RELATIVE_WIDTH', 'MAX_DIRECT_VARIANCE',
           'FAMILY_CACHE_BYTES',
           'computed_users', 'label_groups',
           'coordinate_pair_atoms', 'coordinate_family_atoms',
           'largest_loss', 'PER_COORDINATE', 'coordinate_shuffle_event',
           'window_tail', 'loss_error', 'SUM_OF_BITS_DELETION',
           'PER_COORDINATE_DELETION', 'DELETION_AS_REPLACE_ONE',
           'SumUnderDeletion', 'accounted_under', 'relation_label']

SUM_OF_BITS = 'SUM-OF-BITS two coordinates, every configuration (grouped)'
PER_COORDINATE = ('SUM-OF-BITS (vi) each coordinate as a shuffle of binary '
                  'reports, composed')
SUM_OF_BITS_DELETION = ('SUM-OF-BITS-DELETION coordinate x only, both '
                        'orders, every configuration (grouped)')
PER_COORDINATE_DELETION = ('SUM-OF-BITS-DELETION coordinate x as a shuffle '
                           'of binary reports')
DELETION_AS_REPLACE_ONE = ('DELETION-AS-REPLACE-ONE: deletion neighbours are '
                           'replace-one neighbours; the replace-one bound')
# Relative width of the label groups (in users lost at the group's nearer
# end of [0, n - 1]); the extremes, where epsilon is largest, stay exact.
DEFAULT_RELATIVE_WIDTH = 0.05
# Groups are at least this fraction of the n - 1 others wide (their count
# stays near 2 ln(relative width / (2 x this)) / relative width + 2 / this).
_LEAST_GROUP_FRACTION = 1e-3
# Rounds whose noise has a larger variance are computed at fewer users
# (a few seconds at most).
MAX_DIRECT_VARIANCE = 2.5e5
FAMILY_CACHE_BYTES = 64 * 2**20
# Outcomes of smaller P-mass go to +infinity (TAILS-TO-INFINITY).
_NEGLIGIBLE_ATOM = 1e-30
_NEGLIGIBLE_EDGE = 1e-18
# Float error of a loss computed from a convolution of positive terms
# (relative error below 1e-11 for windows under 10^5 points), rounded up.
_LOSS_MARGIN = 1e-9


def label_groups(others: int, relative_width: float
                 ) -> List[Tuple[int, int]]:
  """(users at p, users at q) of the pair representing each label group.

  Groups cover A = 0, ..., `others`; a group starting at A0 is about
  `relative_width` * min(A0, others - A0) wide, and at least one label and
  a thousandth of `others`.
  """
  groups = []
  start = 0
  least = max(1, int(_LEAST_GROUP_FRACTION * others))
  while start <= others:
    width = max(least, int(relative_width * min(start, others - start)))
    end = min(others, start + width - 1)
    groups.append((start, others - end))
    start = end + 1
  return groups


def window_tail(log_tail: float = binomial.LOG_TAIL) -> float:
  """Bound on the mass of Bin(N, p) outside its window (both tails)."""
  return 2 * math.exp(log_tail)


def loss_error(losses: np.ndarray) -> np.ndarray:
  """Bound on the floating point error of computed losses."""
  return _LOSS_MARGIN * (1 + np.abs(losses))


def _window_pmf(num_trials: int, p: float, log_tail: float
                ) -> Tuple[np.ndarray, float]:
  """(pmf normalised on a Chernoff window, bound on the mass outside)."""
  if num_trials == 0:
    return np.ones(1), 0.0
  lo, hi = binomial.chernoff_window(num_trials, p, 1 - p, log_tail)
  pmf = np.exp(_numerics.binomial_window_log_pmf(num_trials, p, 1 - p, lo,
                                                   hi))
  return pmf, window_tail(log_tail)


def coordinate_pair_atoms(at_p: int, at_q: int, p: float, q: float,
                          reverse: bool = False, raise_losses: bool = True,
                          log_tail: float = binomial.LOG_TAIL
                          ) -> privacy_loss.PldAtoms:
  """PLD atoms of (PB * Bern(p), PB * Bern(q)), PB = Bin(at_p, p) +
  Bin(at_q, q); `reverse` swaps the two laws. [DOM, TAILS-TO-INFINITY]

  The others' counts are conditioned on their Chernoff windows (the
  adversary is told whether they fell inside; outside, everything goes to
  +infinity): the atoms are the conditional pair's, the +infinity mass
  bounds the windows' complement. Losses are raised (unless
  `raise_losses` is False: the lower bound lowers them) and masses inflated
  to cover floating point error.
  """
  first, first_tail = _window_pmf(at_p, p, log_tail)
  second, second_tail = _window_pmf(at_q, q, log_tail)
  noise = np.convolve(first, second)
  before = np.concatenate([[0.0], noise])  # f(s - 1)
  here = np.concatenate([noise, [0.0]])    # f(s)
  with_p = p * before + (1 - p) * here
  with_q = q * before + (1 - q) * here
  if reverse:
    with_p, with_q = with_q, with_p
  # Outcomes of negligible mass go to +infinity, and so do the two at the
  # window's ends when light (one of f(s - 1), f(s) is 0 there, so their
  # loss is the bit's own +-log-ratio: they would widen the grid).
  negligible = with_p < _NEGLIGIBLE_ATOM
  negligible[[0, -1]] |= with_p[[0, -1]] < _NEGLIGIBLE_EDGE
  moved = math.fsum(with_p[negligible])
  with_p, with_q = with_p[~negligible], with_q[~negligible]
  losses = np.log(with_p) - np.log(with_q)
  return privacy_loss.PldAtoms(
      losses + loss_error(losses) if raise_losses else losses,
      with_p * (1 + _numerics.RELATIVE_SAFETY_MARGIN),
      (first_tail + second_tail + moved)
      * (1 + _numerics.RELATIVE_SAFETY_MARGIN))


# Both routes read the same families (the PLD route asks the RDP route too).
@_cache.cached(FAMILY_CACHE_BYTES, _cache.atoms_bytes)
def coordinate_family_atoms(num_users: int, p: float, q: float,
                            relative_width: float, reverse: bool = False
                            ) -> Tuple[privacy_loss.PldAtoms, ...]:
  """The atoms of every label group's pair (`label_groups`). [DOM]

  `num_users` is at most `computed_users`.
  """
  return tuple(coordinate_pair_atoms(at_p, at_q, p, q, reverse)
               for at_p, at_q in label_groups(num_users - 1, relative_width))


def computed_users(num_users: int, p: float, q: float) -> int:
  """The users a round is computed at (`MAX_DIRECT_VARIANCE`)."""
  variance = max(p * (1 - p), q * (1 - q))
  return min(num_users, max(2, int(MAX_DIRECT_VARIANCE / variance)))


def largest_loss(p: float, q: float) -> float:
  """The largest |loss| of one coordinate: the bit's own log-ratio."""
  return max(math.log(p / q), math.log((1 - q) / (1 - p)))


def coordinate_shuffle_event(event: events.SumOfReportsEvent
                             ) -> events.ShuffleEvent:
  """One coordinate's count as a shuffle of binary reports (SUM-OF-BITS (vi)).

  Input 1 (the user's value is this coordinate) reports 1 with probability
  p, input 0 with probability q.
  """
  p, q = event.bit_probabilities()
  binary: randomizers.Randomizer
  if isinstance(event.randomizer, randomizers.SymmetricUnaryEncoding):
    binary = randomizers.KRandomizedResponse(
        2, event.randomizer.local_epsilon / 2)
  else:
    binary = randomizers.FiniteRandomizer(((1 - q, q), (1 - p, p)))
  return events.ShuffleEvent(num_users=event.num_users, randomizer=binary)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SumUnderDeletion(events.SumOfReportsEvent):
  """A unary-encoding `SumOfReportsEvent` as accounted under deletion.

  REPLACE_SPECIAL with the empty reference input: the target's report is
  replaced by d independent Bern(q) bits (SUM-OF-BITS-DELETION). Made by
  `accounted_under`, never by users; a distinct type so that caches and
  the routes' tables tell it from the replace-one round.
  """


def accounted_under(event: dp_event.DpEvent,
                    relation: privacy_accountant.NeighboringRelation
                    ) -> dp_event.DpEvent:
  """The round the accountants compute for `event` under `relation`.

  Under REPLACE_SPECIAL a unary-encoding sum with the empty reference is
  `SumUnderDeletion`; every other event (a reference in the domain, k-RR,
  shuffle rounds) keeps its replace-one bound (DELETION-AS-REPLACE-ONE).
  """
  if (relation is privacy_accountant.NeighboringRelation.REPLACE_SPECIAL
      and type(event) is events.SumOfReportsEvent
      and event.reference_input is None
      and event.as_shuffle_event() is None):
    return SumUnderDeletion(event.num_users, event.randomizer)
  return event


def relation_label(event: dp_event.DpEvent,
                   relation: privacy_accountant.NeighboringRelation) -> str:
  """How `event` is accounted under `relation`, in words (for outputs)."""
  if relation is not privacy_accountant.NeighboringRelation.REPLACE_SPECIAL:
    return relation.name
  if isinstance(accounted_under(event, relation), SumUnderDeletion):
    return ('REPLACE_SPECIAL (deletion: the report replaced by the all-zero '
            'vector\'s, SUM-OF-BITS-DELETION)')
  return ('REPLACE_SPECIAL (deletion to a fixed input of the domain, '
          'DELETION-AS-REPLACE-ONE)')
