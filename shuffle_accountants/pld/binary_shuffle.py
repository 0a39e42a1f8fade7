"""The shuffle of binary randomized response at its worst configuration.

IDs: BINARY-RR-CONFIGURATIONS, SUM-OF-BITS, DOMINATING-ROUNDS,
  BINARY-RR-CHECKIN

Binary randomized response (2-RR, p = e^eps0 / (e^eps0 + 1) = 1 - q) sends
one bit; the shuffle of n bits is exactly their count. With A of the
n - 1 others at input 1 the count of their bits is Bin(A, p) +
Bin(n - 1 - A, q), and the target at 1 or 0 adds Bern(p) or Bern(q): the
pair is one coordinate of SUM-OF-BITS, (P_A, Q_A). Every configuration
A = 0, ..., n - 1 is covered by the largest profile over SUM-OF-BITS'
label groups (`pairs.sums.coordinate_family_atoms`), and reflecting the
count (s -> n - s) maps the order 0 -> 1 of configuration A onto the order
1 -> 0 of configuration n - 1 - A, so the one envelope holds for both
orders. Only the shuffled output is observed (`krr_adversary`
'shuffled_output'), and no hidden sample follows.

A check-in round of binary RR (the count of participants revealed) is
bounded the same way, every configuration grouped, through the family of
`pairs.binary_checkin` (BINARY-RR-CHECKIN).
"""

import math
from typing import Optional, Tuple

from shuffle_accountants import events
from shuffle_accountants.pairs import binary_checkin
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pairs import sums
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import discrete

__all__ = ['BINARY_RR_CONFIGURATIONS', 'LARGEST_LOCAL_EPSILON', 'applies',
           'binary_rr_round_pmf', 'checkin_applies', 'checkin_computable',
           'checkin_family', 'binary_rr_checkin_pmf']

# Label groups this relative width wide where the others' noise variance
# is at most `_NARROW_VARIANCE` (about 800 groups of windows under 1,000
# points).
_NARROW_WIDTH = 0.005
_NARROW_VARIANCE = 2500.0

# Above this eps0, p = 1 - q nears 1 in floating point (it is 1 beyond
# about 36.7) and the binomials of p degenerate; there shuffling gains
# nothing measurable and the k-RR candidates answer alone.
LARGEST_LOCAL_EPSILON = 30.0

BINARY_RR_CONFIGURATIONS = ('BINARY-RR-CONFIGURATIONS binary RR as one '
                            'coordinate of SUM-OF-BITS, every configuration '
                            '(grouped)')


def applies(event: events.ShuffleEvent, sampling_ratio: Optional[float],
            krr_adversary: str) -> bool:
  """Whether BINARY-RR-CONFIGURATIONS bounds this round: shuffled binary RR,
  with only the shuffled output observed and no hidden sample."""
  # local_epsilon is set (k-RR needs it; a randomizer fills it in).
  return (event.num_categories == 2 and event.local_delta == 0
          and event.local_epsilon is not None
          and 0 < event.local_epsilon <= LARGEST_LOCAL_EPSILON
          and sampling_ratio is None
          and krr_adversary == 'shuffled_output')


def binary_rr_round_pmf(num_users: int, local_epsilon: float,
                        discretization: float, discretize: checkin.Discretize,
                        relative_width: float) -> discrete.GridPmf:
  """One grid PMF dominating a shuffle of binary RR (both orders). [DOM]

  BINARY-RR-CONFIGURATIONS. Rounds of more users than `sums.computed_users`
  are computed at fewer users (a post-processing, DOMINATING-ROUNDS (ii)).
  """
  p = 1 / (1 + math.exp(-local_epsilon))
  q = 1 / (1 + math.exp(local_epsilon))
  # (computed_users divides by the variance, which underflows at large eps0.)
  users = (num_users if num_users * p * q <= sums.MAX_DIRECT_VARIANCE
           else sums.computed_users(num_users, p, q))
  # A group's pair lacks up to its width in users, which lifts the mean
  # loss of the wide middle groups above the extremes' (2.5 % at n = 10^6,
  # eps0 = 8, width 0.05): under many rounds that adds up. Narrow groups
  # where the noise windows, hence the convolutions, are short.
  narrow = users * p * q <= _NARROW_VARIANCE
  width = max(relative_width,
              _NARROW_WIDTH if narrow else sums.DEFAULT_RELATIVE_WIDTH)
  return discrete.largest_profile([
      discretize(atoms, discretization)
      for atoms in sums.coordinate_family_atoms(users, p, q, width, False)])


def _bit_probabilities(event: events.CheckInEvent) -> Tuple[float, float]:
  """(p, q) of its binary RR: P[report 1] at input 1 and at input 0."""
  local_epsilon = event.local_epsilon
  assert local_epsilon is not None  # `checkin_applies`
  return (1 / (1 + math.exp(-local_epsilon)),
          1 / (1 + math.exp(local_epsilon)))


def checkin_applies(event: events.CheckInEvent) -> bool:
  """Whether the check-in round is binary RR (BINARY-RR-CHECKIN)."""
  return (event.num_categories == 2 and event.local_epsilon is not None
          and 0 < event.local_epsilon <= LARGEST_LOCAL_EPSILON)


def checkin_computable(event: events.CheckInEvent) -> bool:
  """Whether its BINARY-RR-CHECKIN family fits the budget
  (`binary_checkin.MAX_FAMILY_PRODUCTS`)."""
  p, q = _bit_probabilities(event)
  return binary_checkin.family_work(
      event.num_users, p, q,
      event.checkin_rate) <= binary_checkin.MAX_FAMILY_PRODUCTS


def checkin_family(event: events.CheckInEvent
                   ) -> Tuple[privacy_loss.PldAtoms, ...]:
  """The BINARY-RR-CHECKIN family of a binary RR check-in round."""
  p, q = _bit_probabilities(event)
  return binary_checkin.family_atoms(event.num_users, p, q,
                                     event.checkin_rate)


def binary_rr_checkin_pmf(event: events.CheckInEvent, discretization: float,
                          discretize: checkin.Discretize) -> discrete.GridPmf:
  """One grid PMF dominating a revealed-count check-in round of binary RR,
  both orders (BINARY-RR-CHECKIN). [DOM]"""
  return discrete.largest_profile([discretize(atoms, discretization)
                                   for atoms in checkin_family(event)])
