"""One spec per shuffle event type, which the generic code reads.

IDs: DOMINATING-ROUNDS, RATE-ONE-DOMINATES, GROUPING

Adding a shuffle event = its class (`events`), its `EventSpec` here
(`register`), and one entry in each route's table of bounds
(`rdp.routes.ROUND_BOUNDS`, `pld.routes.ROUND_PMFS`). The generic
code (`_ledger`, `_grouping`, `_dominating`) asks `spec_of(event)` and
never names an event type.
"""

import enum
import math
from typing import Callable, Dict, Optional, Tuple, TypeVar

import attr
from dp_accounting import dp_event

from shuffle_accountants import events
from shuffle_accountants.core import _dominating

Guarantee = Optional[Tuple[float, float]]
DominatingRound = Callable[[dp_event.DpEvent], Optional[dp_event.DpEvent]]


class Kind(enum.Enum):
  """What a leaf of a ledger is, which says how the accountants treat it."""
  NO_OP = 'no-op'
  SHUFFLE = 'ShuffleEvent: a shuffle round'
  OWN_PARTICIPATION = ('a round with its own participation (check-in, '
                       'hidden sample or distributed check-in)')
  HIDDEN_SAMPLE = ('SampledWithoutReplacementDpEvent around a shuffle event: '
                   'a hidden sample of the users reports')
  POISSON_SHUFFLE = ('PoissonSampledDpEvent around a shuffle event: refused '
                     '(POISSON-UNSOUND)')
  WRAPPED_SHUFFLE = ('another wrapper around a shuffle event: the parent '
                     'accountant unwraps it')
  OTHER = "any other event: the route's own (samplers) or the parent's"


def _no_guarantee(unused_event) -> Guarantee:
  return None


def _always(unused_event) -> bool:
  return True


@attr.s(frozen=True, slots=True, auto_attribs=True)
class EventSpec:
  """What the generic code needs of one shuffle event type.

  Each field says what the accountants take from it and, after "Owes:",
  what must be proven of the event for their answers to stay upper bounds
  (the docs/mathematics.md entry that proves it for the events here).

  Attributes:
    kind: SHUFFLE (a shuffle round, also behind a hidden sample) or
      OWN_PARTICIPATION (a round that samples its participants itself).
      Owes: SHUFFLE only for a shuffle of eps0-LDP reports
      (`local_epsilon`), whose hidden sample the routes bound by
      WBK19-THM9 and KHH-SUBSAMPLED.
    sampling_ratio: its participation probability, or None (SHUFFLE), which
      the PLD grid reads. Owes: nothing (it chooses a grid, never a bound).
    local_guarantee: the (eps0, delta0) of one report, for basic
      composition, or None when there is none. Owes: the round is
      (eps0, delta0)-DP under each of `relations` (LOCAL-GUARANTEE).
    deletion_guarantee: the (eps0, delta0) of one report under
      REPLACE_SPECIAL, where it is smaller than `local_guarantee`'s, or None
      (then `local_guarantee` holds under every relation). Owes: the round
      is (eps0, delta0)-DP under REPLACE_SPECIAL.
    accounted_as: the round it is, accounted in its place wherever a
      ledger's rounds are read (grouping, each route's table, the PLD grid,
      the dominating ledgers), or None to account it as it is. Owes: the
      round returned is the same mechanism under each of `relations`, or
      one of which the event is a post-processing, so each of its bounds
      bounds the event (RATE-ONE-DOMINATES (i): a pure-LDP check-in round
      at rate 1 is the shuffle of its n reports); it is a registered event
      that is accounted as it is (the rule is applied once).
    rate_one: the round at rate 1 that dominates it, for the rate-1 ledger,
      or None. Owes: the event is a post-processing of the round returned
      (RATE-ONE-DOMINATES (ii), DOMINATING-ROUNDS (i)).
    one_user: the round with one user that dominates it, or None. Owes: the
      event is a post-processing of the round returned (DOMINATING-ROUNDS
      (ii)).
    noise_alone: (event, deletion) -> the ledger of the noise the event
      adds, alone (`deletion`: under REPLACE_SPECIAL), or None. Owes: under
      that relation each pair of the event is dominated by the ledger's,
      both orders (SUM-OF-BITS-WITH-NOISE (iii)).
    grouped_by: the fields `_grouping` bins ('num_users' first, then a
      rate); empty: never grouped. Owes: the event is a post-processing of
      the same event with fewer users (and a higher rate), its other fields
      equal, so each bound of a bin's representative (the fewest users, the
      highest rate) bounds every member (GROUPING).
    groupable: whether a round with `grouped_by` fields joins a bin; False
      accounts it as it is. Owes: True only where `grouped_by`'s
      post-processing holds for that round (not for dropouts, whose bound
      grows with n: SECAGG-REVEALED (iii)).
    relations: the names of the `NeighboringRelation`s its docstring
      defines it under (the accountants refuse the others). Owes: every
      entry of the routes' tables bounds the round under each of them.
  """
  kind: Kind
  sampling_ratio: Optional[Callable[[dp_event.DpEvent], float]] = None
  local_guarantee: Callable[[dp_event.DpEvent], Guarantee] = _no_guarantee
  deletion_guarantee: Optional[Callable[[dp_event.DpEvent], Guarantee]] = None
  accounted_as: Optional[DominatingRound] = None
  rate_one: Optional[DominatingRound] = None
  one_user: Optional[DominatingRound] = None
  noise_alone: Optional[Callable[[dp_event.DpEvent, bool],
                                 Optional[dp_event.DpEvent]]] = None
  grouped_by: Tuple[str, ...] = ()
  groupable: Callable[[dp_event.DpEvent], bool] = _always
  relations: Tuple[str, ...] = ('REPLACE_ONE',)


_SPECS: Dict[type, EventSpec] = {}


def register(event_type: type, spec: EventSpec) -> None:
  """Makes `event_type` (and its subclasses) a shuffle event of `spec`."""
  if spec.kind not in (Kind.SHUFFLE, Kind.OWN_PARTICIPATION):
    raise ValueError(f'spec.kind must be SHUFFLE or OWN_PARTICIPATION; got '
                     f'{spec.kind}.')
  _SPECS[event_type] = spec


def unregister(event_type: type) -> None:
  """Forgets `event_type` (for tests of a toy event)."""
  del _SPECS[event_type]


Entry = TypeVar('Entry')


def _lookup(table: Dict[type, Entry], event) -> Optional[Entry]:
  """The entry of `table` for the type of `event` or its nearest base."""
  return next((table[cls] for cls in type(event).__mro__ if cls in table),
              None)


def route_entry(table: Dict[type, Entry], event) -> Entry:
  """A route's entry for a shuffle event (`table`: the route's table)."""
  entry = _lookup(table, event)
  if entry is None:
    raise TypeError(f'{type(event).__name__} has an EventSpec but no entry '
                    "in this route's table of rounds; add one.")
  return entry


def spec_of(event) -> Optional[EventSpec]:
  """The spec of a shuffle event, or None for any other event."""
  return _lookup(_SPECS, event)


def accounted_round(event: dp_event.DpEvent) -> dp_event.DpEvent:
  """The round as both accountants account it: its spec's `accounted_as`.

  See RATE-ONE-DOMINATES (i). Any other event is returned as it is.
  """
  spec = spec_of(event)
  accounted = (None if spec is None or spec.accounted_as is None
               else spec.accounted_as(event))
  return event if accounted is None else accounted


def specs() -> Tuple[EventSpec, ...]:
  """Every registered spec, in the order registered."""
  return tuple(_SPECS.values())


def defined_under(relation: str) -> Tuple[type, ...]:
  """The registered event types whose spec names `relation` (a
  `NeighboringRelation`'s name), in the order registered."""
  return tuple(event_type for event_type, spec in _SPECS.items()
               if relation in spec.relations)


def _checkin_guarantee(event: events.CheckInEvent) -> Guarantee:
  return None if event.local_epsilon is None else (event.local_epsilon, 0.0)


# Deletion neighbours (one report replaced by the randomizer's output on a
# reference input) of a shuffle round are replace-one neighbours
# (DELETION-AS-REPLACE-ONE); a sum of reports has its own deletion bound
# (SUM-OF-BITS-DELETION).
_DELETION_TOO = ('REPLACE_ONE', 'REPLACE_SPECIAL')
register(events.ShuffleEvent, EventSpec(
    Kind.SHUFFLE,
    local_guarantee=lambda event: (event.local_epsilon, event.local_delta),
    one_user=_dominating.one_user, grouped_by=('num_users',),
    relations=_DELETION_TOO))
register(events.CheckInEvent, EventSpec(
    Kind.OWN_PARTICIPATION, lambda event: event.checkin_rate,
    _checkin_guarantee, accounted_as=_dominating.checkin_at_rate_one,
    rate_one=_dominating.everyone_near_rate_one,
    grouped_by=('num_users', 'checkin_rate')))
register(events.SubsampledShuffleGaussianEvent, EventSpec(
    Kind.OWN_PARTICIPATION,
    lambda event: event.sample_size / event.num_users))
# Distributed check-in is grouped by n only: its epsilon is not monotone in
# the rate (more participants, more noise in the sum; SECAGG-HIDDEN), but n
# users are a post-processing of fewer at the same rate (the others' noisy
# vectors and check-ins are added to the sum and the count). Not with
# dropouts: more users make a released round likelier, so that bound grows
# with n (SECAGG-REVEALED (iii)).
register(events.DistributedCheckInEvent, EventSpec(
    Kind.OWN_PARTICIPATION, lambda event: event.checkin_rate,
    grouped_by=('num_users',),
    groupable=lambda event: event.min_reporting is None))
# A Skellam secure sum has no sampling of its own (its participants are
# public): one round, never grouped (SKELLAM-SUM).
register(events.SkellamSecureSumEvent,
         EventSpec(Kind.OWN_PARTICIPATION))
# Relative allowance for the rounding of a log or a quotient (a few ulps).
_ROUNDING = 1e-15


def _laplace_guarantee(noise: events.DiscreteLaplaceSumEvent
                       ) -> Tuple[float, float]:
  """(Delta / b, 0): a sum moved by at most Delta under discrete Laplace
  noise P(z) ~ exp(-|z| / b) has privacy loss at most Delta / b; the other
  aggregators' draws, independent, post-process the one relied on."""
  return noise.sensitivity / noise.scale * (1 + _ROUNDING), 0.0


def _sum_guarantee(event: events.SumOfReportsEvent, changed: int,
                   reports: float) -> Tuple[float, float]:
  """The smaller of the reports' guarantee and, with discrete Laplace
  aggregator noise (sensitivity 1 on each coordinate), the noise's over
  the `changed` coordinates (SUM-OF-BITS-WITH-NOISE (iii)): each bounds the
  release alone, the other part being post-processing."""
  noise = event.aggregator_noise
  if isinstance(noise, events.DiscreteLaplaceSumEvent):
    reports = min(reports, changed * _laplace_guarantee(noise)[0])
  return reports, 0.0


def _sum_guarantee_under_deletion(event: events.SumOfReportsEvent
                                  ) -> Tuple[float, float]:
  """Deletion to the empty input changes one bit of a unary encoding's
  report, Bern(p) to Bern(q) (SUM-OF-BITS-DELETION): the report is
  (max(log(p/q), log((1-q)/(1-p))), 0)-DP, both orders (eps0 / 2 for
  SUE); the sum and the aggregators' noise post-process it, and one
  coordinate moves. A reference of the domain, or k-RR, is replace-one
  (DELETION-AS-REPLACE-ONE)."""
  if event.reference_input is not None or event.as_shuffle_event() is not None:
    return _sum_guarantee(event, 2, event.local_epsilon)
  p, q = event.bit_probabilities()
  one_bit = max(math.log(p / q), math.log((1 - q) / (1 - p)))
  return _sum_guarantee(event, 1, min(event.local_epsilon,
                                      one_bit * (1 + _ROUNDING)))


# A sum of reports: n users are a post-processing of fewer (the others'
# reports are added to the sum), so it is grouped by n (SUM-OF-BITS).
register(events.SumOfReportsEvent, EventSpec(
    Kind.OWN_PARTICIPATION,
    local_guarantee=lambda event: _sum_guarantee(event, 2,
                                                 event.local_epsilon),
    deletion_guarantee=_sum_guarantee_under_deletion,
    noise_alone=_dominating.noise_alone,
    grouped_by=('num_users',), relations=_DELETION_TOO))
# A noisy integer sum is defined by the change of the sum, the same under
# replace-one, add/remove and deletion to a reference contribution
# (BINOMIAL-SUM, DISCRETE-GAUSSIAN-SUM): one release, never grouped.
# Discrete Laplace noise is pure DP (`_laplace_guarantee`).
for _noisy_sum in (events.BinomialSecureSumEvent,
                   events.DiscreteGaussianSumEvent,
                   events.DiscreteLaplaceSumEvent):
  register(_noisy_sum, EventSpec(
      Kind.OWN_PARTICIPATION,
      local_guarantee=(_laplace_guarantee
                       if _noisy_sum is events.DiscreteLaplaceSumEvent
                       else _no_guarantee),
      relations=('REPLACE_ONE', 'ADD_OR_REMOVE_ONE', 'REPLACE_SPECIAL')))
