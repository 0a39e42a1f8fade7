"""Rounds that dominate a round by post-processing, for both routes (GROUPING, D19).

Both accountants take, for each round, the smallest of its own bound and
the bounds of the rounds listed here (docs/mathematics.md D19):

* A check-in round at rate gamma is a post-processing of the same round at
  any higher rate (drop each anonymous report independently with
  probability 1 - gamma / gamma'; the count stays revealed), in particular
  of the round in which every user checks in: a plain shuffle of all n
  reports. So epsilon never exceeds its value at rate 1.
* A shuffle of n reports is a post-processing of the shuffle of fewer (add
  the other users' reports, whose data the neighbouring datasets share, and
  reshuffle), in particular of one user's report alone: the randomizer
  itself. So epsilon never exceeds its value at n = 1.

The PLD accountant takes, per check-in round, the smaller profile of the
round and of its rate-1 round (`everyone_checks_in`, combined on the
round's grid range by `pld.checkin.capped_by`, D28); and it reports the
smallest epsilon (delta) over the ledger and its `dominating_ledgers` with
every named round reduced to one user, each accounted on its own grid. The
RDP accountant does the same with the one-user ledgers; for check-in it
takes, per round and per order, the smaller of the round's bound and its
rate-1 round's bound (`everyone_checks_in`), which also bounds the ledger
by its rate-1 ledger (RDP composes by addition). A new event type with a
rate or a population adds its dominating rounds to `_DOMINATING_ROUNDS`
(its rate-1 or one-user round).
"""

from typing import Callable, List, Optional, Tuple

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant

from shuffle_accountants import events
from shuffle_accountants import randomizers


def everyone_checks_in(event: events.CheckInEvent
                       ) -> Optional[events.ShuffleEvent]:
  """The check-in round at rate 1 (a shuffle of all n reports), or None.

  None for local Gaussian noise, whose rate-1 round has no shuffling gain
  (D7) and is already a candidate of the check-in bounds, except scalar
  `GaussianRandomizer` reports, whose rate-1 round has the continuous
  blanket (NUM-BLANKET). A named randomizer's round is described by its
  eps0 (and k for k-RR), as the check-in round itself is accounted.
  """
  if event.local_epsilon is None:
    if (isinstance(event.randomizer, randomizers.GaussianRandomizer)
        and event.randomizer.dimension == 1):
      return events.ShuffleEvent(num_users=event.num_users,
                                 randomizer=event.randomizer)
    return None
  return events.ShuffleEvent(num_users=event.num_users,
                             local_epsilon=event.local_epsilon,
                             num_categories=event.num_categories)


def one_user(event: events.ShuffleEvent) -> Optional[events.ShuffleEvent]:
  """The round with one user (the randomizer alone), or None.

  None if n = 1, for approximate LDP (its FMT-EQ10-11 candidates need n),
  and for a generic eps0 randomizer, whose clone pair is already
  non-increasing in n (D4).
  """
  if (event.num_users == 1 or event.local_delta > 0
      or (event.randomizer is None and event.num_categories is None)):
    return None
  return attr.evolve(event, num_users=1)


# Per event type, the maps from a round to a dominating round (or None).
_DOMINATING_ROUNDS: Tuple[Tuple[type, Callable], ...] = (
    (events.ShuffleEvent, one_user),
)


def _replaced(event: dp_event.DpEvent, event_type: type,
              dominating: Callable) -> Tuple[dp_event.DpEvent, bool]:
  """The event tree with every round of `event_type` replaced."""
  if isinstance(event, dp_event.ComposedDpEvent):
    parts = [_replaced(e, event_type, dominating) for e in event.events]
    return (dp_event.ComposedDpEvent([e for e, _ in parts]),
            any(changed for _, changed in parts))
  if isinstance(event, dp_event.SelfComposedDpEvent):
    inner, changed = _replaced(event.event, event_type, dominating)
    return dp_event.SelfComposedDpEvent(inner, event.count), changed
  if isinstance(event, event_type):
    replacement = dominating(event)
    if replacement is not None and replacement != event:
      return replacement, True
  return event, False


def dominating_ledgers(ledger: dp_event.DpEvent,
                       event_types: Tuple[type, ...] = (events.ShuffleEvent,)
                       ) -> List[dp_event.DpEvent]:
  """Ledgers of which `ledger` is a post-processing, round by round (D19).

  One per entry of `_DOMINATING_ROUNDS` (of `event_types`) that changes
  some round. Rounds are post-processed independently, so the composition
  (adaptive too) of the original rounds is a post-processing of the
  composition of these.
  """
  result = []
  for event_type, dominating in _DOMINATING_ROUNDS:
    if event_type not in event_types:
      continue
    replaced, changed = _replaced(ledger, event_type, dominating)
    if changed:
      result.append(replaced)
  return result


def dominating_routes(ledger: dp_event.DpEvent, new_accountant: Callable,
                      event_types: Tuple[type, ...] = (events.ShuffleEvent,)
                      ) -> List:
  """Accountants (from `new_accountant()`) holding each dominating ledger.

  A ledger some accountant cannot compose (e.g. a fixed grid too fine for
  it) is left out: it was only a candidate.
  """
  routes = []
  for dominating in dominating_ledgers(ledger, event_types):
    accountant = new_accountant()
    try:
      accountant.compose(dominating)
    except (privacy_accountant.UnsupportedEventError, ValueError):
      continue
    routes.append(accountant)
  return routes
