"""Groups similar rounds of a ledger at fewer users and a higher rate [UB].

IDs: CLONE-MONOTONE, GROUPING

A ledger of daily rounds whose population changes every day would cost a
full dominating-pair construction per round. Rounds are therefore grouped:
users counts n fall into geometric bins [(1 + s)^j, (1 + s)^(j + 1)) and
check-in rates gamma into bins of ratio 1 + s / 2, and every round of a bin
(with otherwise equal parameters) is accounted as the bin's *representative*:
the smallest n and the largest gamma among the ledger's rounds in it.

Sound (docs/mathematics.md GROUPING): a shuffle of n >= n' reports is a
post-processing of the shuffle of n' of them (add the other users' reports,
whose data both neighbouring datasets share, and reshuffle), and a check-in
at rate gamma <= gamma' is a post-processing of one at rate gamma' (keep
each report independently with probability gamma / gamma'). So every bound
valid for the representative is valid for each member, whatever the bound.
Tightness: one round's epsilon scales about as n^(-1/2) and gamma, so a
member's epsilon rises by at most about s / 2 (0.5 % at the default s).
Which fields are binned, and which rounds are not binned at all, is each
event's spec (`_event_specs`: `grouped_by`, `groupable`): distributed
check-in rounds are binned by n only (SECAGG-HIDDEN: not monotone in gamma),
and not at all with dropouts (`min_reporting`): more users make a released
round likelier, so that bound grows with n (SECAGG-REVEALED (iii)).
A ledger whose rounds share n and gamma is accounted exactly.
"""

import math
from typing import Dict, List, Optional, Tuple

import attr
from dp_accounting import dp_event

from shuffle_accountants.core import _event_specs
from shuffle_accountants.core import _ledger

DEFAULT_RELATIVE_STEP = 0.01


def _grouped_by(event) -> Tuple[str, ...]:
  """The fields of `event` binned (its spec's `grouped_by`), or ()."""
  spec = _event_specs.spec_of(event)
  return () if spec is None else spec.grouped_by


def _joins_a_bin(event) -> bool:
  """Whether `event` is binned: it has `grouped_by` fields and its spec's
  `groupable` admits it (not dropouts, SECAGG-REVEALED (iii))."""
  spec = _event_specs.spec_of(event)
  return spec is not None and bool(spec.grouped_by) and spec.groupable(event)


def _rate_field(event) -> Optional[str]:
  """The rate field binned besides the user count, or None."""
  grouped_by = _grouped_by(event)
  return grouped_by[1] if len(grouped_by) > 1 else None


class Grouping:
  """Maps rounds to their bin's representative (see the module docstring).

  Rounds must be `observe`d before `representative` is asked; a bin's
  representative is the most pessimistic round observed in it so far, so a
  round is never accounted as one with more users or a lower rate.
  """

  def __init__(self, relative_step: float = DEFAULT_RELATIVE_STEP):
    """`relative_step` s >= 0 is the bin ratio minus one; 0 groups nothing."""
    self.relative_step = relative_step
    self._smallest_users: Dict[tuple, int] = {}
    self._largest_rate: Dict[tuple, float] = {}

  def _key(self, event) -> Optional[tuple]:
    if self.relative_step == 0 or not _joins_a_bin(event):
      return None
    users_bin = math.floor(math.log(event.num_users)
                           / math.log1p(self.relative_step))
    fields = attr.asdict(event, recurse=False)
    del fields['num_users']
    rate_bin, rate = None, _rate_field(event)
    if rate is not None:
      rate_bin = math.floor(math.log(fields.pop(rate))
                            / math.log1p(self.relative_step / 2))
    return (type(event), users_bin, rate_bin, tuple(sorted(fields.items())))

  def observe(self, event: dp_event.DpEvent) -> None:
    """Records a round of the ledger (other events are ignored)."""
    event = _event_specs.accounted_round(event)  # rate 1 (RATE-ONE-DOMINATES)
    key = self._key(event)
    if key is None:
      return
    self._smallest_users[key] = min(
        self._smallest_users.get(key, event.num_users), event.num_users)
    rate = _rate_field(event)
    if rate is not None:
      self._largest_rate[key] = max(
          self._largest_rate.get(key, getattr(event, rate)),
          getattr(event, rate))

  def representative(self, event: dp_event.DpEvent) -> dp_event.DpEvent:
    """The observed round that `event` is accounted as (itself if alone)."""
    event = _event_specs.accounted_round(event)  # rate 1 (RATE-ONE-DOMINATES)
    key = self._key(event)
    if key is None or key not in self._smallest_users:
      return event
    changes: Dict[str, float] = dict(num_users=self._smallest_users[key])
    rate = _rate_field(event)
    if rate is not None:
      changes[rate] = self._largest_rate[key]
    return attr.evolve(event, **changes)


def grouped_ledger(ledger: dp_event.DpEvent, relative_step: float
                   ) -> dp_event.DpEvent:
  """The ledger with its rounds replaced by representatives and merged.

  The result composes each distinct representative once, with the summed
  count of the rounds it stands for, and every other event as it was.
  """
  flat = _ledger.leaves(ledger)
  grouping = Grouping(relative_step)
  for event, count in flat:
    if count > 0:
      grouping.observe(event)
  counts: Dict[dp_event.DpEvent, int] = {}
  others: List[dp_event.DpEvent] = []
  for event, count in flat:
    if _grouped_by(event):
      representative = grouping.representative(event)
      counts[representative] = counts.get(representative, 0) + count
    elif not isinstance(event, dp_event.NoOpDpEvent):
      others.append(event if count == 1
                    else dp_event.SelfComposedDpEvent(event, count))
  merged = [event if count == 1 else dp_event.SelfComposedDpEvent(event, count)
            for event, count in counts.items() if count > 0]
  return dp_event.ComposedDpEvent(merged + others)
