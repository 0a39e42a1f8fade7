"""Sum-only release of independent-bit reports: one coordinate's pairs.

IDs: SUM-OF-BITS, SUM-OF-BITS-DELETION, DELETION-AS-REPLACE-ONE,
SUM-OF-BITS-WITH-NOISE, TAILS-TO-INFINITY

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

With aggregator noise Z added to every coordinate (SUM-OF-BITS-WITH-NOISE)
the families are the same with PB(A) replaced by PB(A) * Z (Z on its
window, the rest to +infinity); the users computed are also bounded so that
the convolution with Z stays within `MAX_NOISE_PRODUCTS`, and noise
windows wider than `MAX_NOISE_WINDOW` points have no such family
(`noisy_family_computable`): the reports alone and the noise alone, both
sound, bound the release there.
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
from shuffle_accountants.pairs import lattice_noise
from shuffle_accountants.pairs import privacy_loss

__all__ = ['SUM_OF_BITS', 'DEFAULT_RELATIVE_WIDTH', 'MAX_DIRECT_VARIANCE',
           'FAMILY_CACHE_BYTES',
           'computed_users', 'label_groups',
           'coordinate_pair_atoms', 'coordinate_family_atoms',
           'largest_loss', 'PER_COORDINATE', 'coordinate_shuffle_event',
           'window_tail', 'loss_error', 'SUM_OF_BITS_DELETION',
           'PER_COORDINATE_DELETION', 'DELETION_AS_REPLACE_ONE',
           'SumUnderDeletion', 'accounted_under', 'relation_label',
           'MAX_NOISE_PRODUCTS', 'MAX_NOISE_WINDOW', 'NOISE_ALONE',
           'NOISE_ALONE_DELETION', 'noisy_family_computable', 'WITH_NOISE',
           'NOISE_WINDOW_CACHE_BYTES', 'partner_family_atoms',
           'SUM_OF_BITS_TWO_VALUES', 'two_values']

SUM_OF_BITS = 'SUM-OF-BITS two coordinates, every configuration (grouped)'
SUM_OF_BITS_TWO_VALUES = ('SUM-OF-BITS (vii) two values: the others not at '
                          "x are at x', every configuration (grouped)")
PER_COORDINATE = ('SUM-OF-BITS (vi) each coordinate as a shuffle of binary '
                  'reports, composed')
SUM_OF_BITS_DELETION = ('SUM-OF-BITS-DELETION coordinate x only, both '
                        'orders, every configuration (grouped)')
PER_COORDINATE_DELETION = ('SUM-OF-BITS-DELETION coordinate x as a shuffle '
                           'of binary reports')
WITH_NOISE = 'SUM-OF-BITS-WITH-NOISE (i) the families with the noise'
NOISE_ALONE = ('SUM-OF-BITS-WITH-NOISE (iii): the aggregator noise alone, '
               'two coordinates moved by at most 1')
NOISE_ALONE_DELETION = ('SUM-OF-BITS-WITH-NOISE (iii): the aggregator noise '
                        'alone, coordinate x moved by at most 1')
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
# With aggregator noise, the others' count window times the noise window
# stays below this many products per label group (fewer users otherwise).
MAX_NOISE_PRODUCTS = 4 * 10**6
# Noise windows of more points (discrete Gaussian sigma above about 7,000,
# discrete Laplace scale above 1,250) make families of too many atoms.
MAX_NOISE_WINDOW = 2 * 10**5
FAMILY_CACHE_BYTES = 64 * 2**20
NOISE_WINDOW_CACHE_BYTES = 32 * 2**20
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


# Every label group of a family reads the same noise window (an all-honest
# sum of c draws is a convolution: computed once).
@_cache.cached(NOISE_WINDOW_CACHE_BYTES, lambda value: value[0].nbytes)
def _aggregator_window(aggregator_noise) -> Tuple[np.ndarray, float, float]:
  """(masses normalised on the noise's window, log of a bound on their
  relative error, the mass outside the window).

  The log-masses' error e and the exponentials' rounding give each
  normalised mass within a factor e^(2e + 4u(1 + max|log f|)) (1 + 4u W)
  of the truth (LATTICE-NOISE-PAIR (iii)).
  """
  (log_pmf, log_error, tail), _ = lattice_noise.noise_window(
      aggregator_noise)
  masses = np.exp(log_pmf - log_pmf.max())
  masses = masses / math.fsum(masses)
  unit = lattice_noise.UNIT_ROUNDOFF
  relative = (2 * log_error + 4 * unit * (1 + float(np.max(np.abs(log_pmf))))
              + 4 * unit * masses.size)
  return masses, relative, tail


def coordinate_pair_atoms(at_p: int, at_q: int, p: float, q: float,
                          reverse: bool = False, raise_losses: bool = True,
                          log_tail: float = binomial.LOG_TAIL,
                          aggregator_noise=None) -> privacy_loss.PldAtoms:
  """PLD atoms of (PB * Bern(p), PB * Bern(q)), PB = Bin(at_p, p) +
  Bin(at_q, q) (* Z, the aggregators' noise, when `aggregator_noise` is
  given); `reverse` swaps the two laws. [DOM, TAILS-TO-INFINITY,
  SUM-OF-BITS-WITH-NOISE]

  The others' counts (and the noise) are conditioned on their windows (the
  adversary is told whether they fell inside; outside, everything goes to
  +infinity): the atoms are the conditional pair's, the +infinity mass
  bounds the windows' complement. Losses are raised (unless
  `raise_losses` is False: the lower bound lowers them; it takes no noise)
  and masses inflated to cover floating point error.
  """
  first, first_tail = _window_pmf(at_p, p, log_tail)
  second, second_tail = _window_pmf(at_q, q, log_tail)
  noise = np.convolve(first, second)
  # The noise masses' relative error moves each law by at most e^relative,
  # hence each loss by at most twice that.
  relative, noise_tail = 0.0, 0.0
  if aggregator_noise is not None:
    masses, relative, noise_tail = _aggregator_window(aggregator_noise)
    # Each entry sums at most min(sizes) positive products.
    relative += lattice_noise.UNIT_ROUNDOFF * (min(noise.size, masses.size)
                                               + 2)
    noise = np.convolve(noise, masses)
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
      losses + loss_error(losses) + 2 * relative if raise_losses else losses,
      with_p * (1 + _numerics.RELATIVE_SAFETY_MARGIN) * math.exp(relative),
      (first_tail + second_tail + noise_tail + moved)
      * (1 + _numerics.RELATIVE_SAFETY_MARGIN))


# Both routes read the same families (the PLD route asks the RDP route too).
@_cache.cached(FAMILY_CACHE_BYTES, _cache.atoms_bytes)
def coordinate_family_atoms(num_users: int, p: float, q: float,
                            relative_width: float, reverse: bool = False,
                            aggregator_noise=None
                            ) -> Tuple[privacy_loss.PldAtoms, ...]:
  """The atoms of every label group's pair (`label_groups`). [DOM]

  `num_users` is at most `computed_users`; `aggregator_noise` (or None) is
  added to the coordinate (SUM-OF-BITS-WITH-NOISE).
  """
  return tuple(coordinate_pair_atoms(at_p, at_q, p, q, reverse,
                                     aggregator_noise=aggregator_noise)
               for at_p, at_q in label_groups(num_users - 1, relative_width))


@_cache.cached(FAMILY_CACHE_BYTES, _cache.atoms_bytes)
def partner_family_atoms(num_users: int, p: float, q: float,
                         relative_width: float, aggregator_noise=None
                         ) -> Tuple[privacy_loss.PldAtoms, ...]:
  """Coordinate x''s pair for each label group of x, when d = 2. [DOM]

  With two values every other user not at x is at x' (SUM-OF-BITS (vii)):
  group [A0, A1] of coordinate x (A0 users at p, m - A1 at q) is coordinate
  x' with m - A1 users at p and A0 at q, in the reverse order; entry i is
  the partner of `coordinate_family_atoms`' entry i.
  """
  return tuple(coordinate_pair_atoms(at_q, at_p, p, q, True,
                                     aggregator_noise=aggregator_noise)
               for at_p, at_q in label_groups(num_users - 1, relative_width))


def noisy_family_computable(aggregator_noise) -> bool:
  """Whether the noise's window is small enough for its families."""
  return _aggregator_window(aggregator_noise)[0].size <= MAX_NOISE_WINDOW


def computed_users(num_users: int, p: float, q: float,
                   aggregator_noise=None) -> int:
  """The users a round is computed at (`MAX_DIRECT_VARIANCE`, and with
  aggregator noise `MAX_NOISE_PRODUCTS`; at least 1)."""
  variance = max(p * (1 - p), q * (1 - q))
  users = min(num_users, max(2, int(MAX_DIRECT_VARIANCE / variance)))
  if aggregator_noise is None:
    return users
  width = _aggregator_window(aggregator_noise)[0].size
  # The others' window is about 2 x 9.5 standard deviations wide
  # (binomial.LOG_TAIL); keep its product with the noise's in budget.
  others_width = MAX_NOISE_PRODUCTS / width
  others = int((max(others_width - 1, 0.0) / 19.0)**2 / variance)
  return max(1, min(users, others + 1))


def two_values(event: events.SumOfReportsEvent) -> bool:
  """Whether the reports are a unary encoding of two values (SUM-OF-BITS
  (vii): the others not at x are at x')."""
  randomizer = event.randomizer
  return (not isinstance(randomizer, randomizers.KRandomizedResponse)
          and randomizer.domain_size == 2)


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
    return SumUnderDeletion(event.num_users, event.randomizer,
                            aggregator_noise=event.aggregator_noise)
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
