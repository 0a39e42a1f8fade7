"""Rounds that dominate a round by post-processing, for both routes.

IDs: GROUPING, DOMINATING-ROUNDS, RATE-ONE-DOMINATES

Both accountants take, for each round, the smallest of its own bound and
the bounds of the rounds listed here (docs/mathematics.md DOMINATING-ROUNDS):

* A check-in round at rate gamma is a post-processing of the same round at
  any higher rate (drop each anonymous report independently with
  probability 1 - gamma / gamma'; the count stays revealed), in particular
  of the round in which every user checks in: a plain shuffle of all n
  reports. So epsilon never exceeds its value at rate 1.
* A sum of reports with aggregator noise is dominated by that noise alone
  on the coordinates the target's report moves (`noise_alone`).
* A shuffle of n reports is a post-processing of the shuffle of fewer (add
  the other users' reports, whose data the neighbouring datasets share, and
  reshuffle), in particular of one user's report alone: the randomizer
  itself. So epsilon never exceeds its value at n = 1.

The rate-1 rule (RATE-ONE-DOMINATES) lives here and nowhere else:
`checkin_at_rate_one` turns a pure-LDP check-in round at rate 1 into the
shuffle round it is (its spec's `accounted_as`, which both accountants
apply to every leaf they account through `_event_specs.accounted_round`, so
a rate-1 `CheckInEvent` gets exactly the answer of its `ShuffleEvent` on
each route), and `everyone_checks_in` gives a round below rate 1 that
shuffle round as a dominating round: the RDP accountant takes its bound per
round and per order (RDP composes by addition, so the ledger never exceeds
its rate-1 ledger); the PLD accountant takes it per round on the round's
grid (`pld.checkin.capped_by`, CHECKIN-COARSE-GRIDS) and reports the
smallest epsilon (delta) over the ledger and its
`_ledger.dominating_ledgers`, among them the rate-1 ledger where the rates
are at least `RATE_ONE_LEDGER_FROM`, each accounted on its own grid (so
whatever the grids, epsilon never exceeds the rate-1 ledger's there). Both
also report the smallest over the ledger with every named round reduced to
one user. A new event type with a rate or a population names its
dominating rounds in its spec (`_event_specs`: the round it is, its rate-1
or one-user round); `_ledger` walks the ledger with them.
"""

from typing import Optional

import attr
from dp_accounting import dp_event

from shuffle_accountants import events
from shuffle_accountants import randomizers


def everyone_checks_in(event: events.CheckInEvent
                       ) -> Optional[events.ShuffleEvent]:
  """The check-in round at rate 1 (a shuffle of all n reports), or None.

  None for local Gaussian noise, whose rate-1 round has no shuffling gain
  (GAUSS-NO-GAIN) and is already a candidate of the check-in bounds, except
  `GaussianRandomizer` reports, whose rate-1 round has FMT-EQ10-11 along
  their privacy profile (GAUSS-PROFILE-LDP) and for scalars the continuous
  blanket (NUM-BLANKET). A named randomizer stays named: the shuffle of its
  n reports is the same mechanism, with every pair of that randomizer
  (RATE-ONE-DOMINATES (i)).
  """
  if event.local_epsilon is None:
    if isinstance(event.randomizer, randomizers.GaussianRandomizer):
      return events.ShuffleEvent(num_users=event.num_users,
                                 randomizer=event.randomizer)
    return None
  return events.ShuffleEvent(num_users=event.num_users,
                             local_epsilon=event.local_epsilon,
                             num_categories=event.num_categories,
                             randomizer=event.randomizer)


def checkin_at_rate_one(event: events.CheckInEvent
                        ) -> Optional[events.ShuffleEvent]:
  """The shuffle round a check-in round at rate 1 is, or None.

  The spec's `accounted_as` (RATE-ONE-DOMINATES (i)): a pure-LDP check-in
  round at rate 1 is the shuffle of all n reports (the count n is public),
  so it is accounted as that `ShuffleEvent`, with every candidate and grid
  of a shuffle round. None below rate 1.
  """
  if event.checkin_rate != 1:
    return None
  return everyone_checks_in(event)


def everyone_below_rate_one(event: events.CheckInEvent
                            ) -> Optional[events.ShuffleEvent]:
  """The rate-1 round of a check-in round below rate 1, or None.

  See DOMINATING-ROUNDS (i).
  """
  if event.checkin_rate == 1:
    return None
  return everyone_checks_in(event)


def one_user(event: events.ShuffleEvent) -> Optional[events.ShuffleEvent]:
  """The round with one user (the randomizer alone), or None.

  None if n = 1, for approximate LDP (its FMT-EQ10-11 candidates need n),
  and for a generic eps0 randomizer, whose clone pair is already
  non-increasing in n (CLONE-MONOTONE).
  """
  if (event.num_users == 1 or event.local_delta > 0
      or (event.randomizer is None and event.num_categories is None)):
    return None
  return attr.evolve(event, num_users=1)


def noise_alone(event: events.SumOfReportsEvent, deletion: bool
                ) -> Optional[dp_event.DpEvent]:
  """The aggregator noise alone on the coordinates the target's report
  moves, or None without noise (SUM-OF-BITS-WITH-NOISE (iii)).

  Each moved coordinate's pair is (Bern(p) + Z, Bern(q) + Z): with the same
  weights (q, p - q, 1 - p) both are mixtures of (Z + 1, Z + 1), (Z + 1, Z)
  and (Z, Z), so by joint convexity its hockey-stick divergence is at most
  the noise pair's (Z + 1, Z), in both orders; the other users' reports
  and the unmoved coordinates are post-processing. Two coordinates move
  under replace-one, one under deletion to the empty input.
  """
  noise = event.aggregator_noise
  if noise is None:
    return None
  moved = 1 if deletion and event.reference_input is None else 2
  return dp_event.SelfComposedDpEvent(noise, moved)


# From this rate on, the PLD route also reports the rate-1 ledger
# (RATE-ONE-DOMINATES (ii)). Below it each round keeps its per-round rate-1 pair
# on its own grid (CHECKIN-COARSE-GRIDS (ii)) only: there the rate-1 ledger
# almost never wins, and for huge rounds it costs far more time and memory for
# the same answer (docs/performance.md, "Measured costs cited by the code").
RATE_ONE_LEDGER_FROM = 0.5


def everyone_near_rate_one(event: events.CheckInEvent
                           ) -> Optional[events.ShuffleEvent]:
  """The rate-1 round of a check-in round at a rate in [1/2, 1), or None."""
  if event.checkin_rate < RATE_ONE_LEDGER_FROM:
    return None
  return everyone_below_rate_one(event)


