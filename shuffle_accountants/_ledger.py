"""Basic composition of a ledger of LDP shuffle rounds: a ceiling for both routes [UB].

A shuffle of (eps0, delta0)-LDP reports is (eps0, delta0)-DP under
replace-one (LOCAL-GUARANTEE; D6 for pure LDP): one report changes and the
rest is post-processing. Check-in and hidden samples add only post-processing
of a subset of the reports. Basic composition then makes a ledger of such
rounds (sum eps0, sum delta0)-DP, so for target_delta >= sum delta0 the
certified epsilon never needs to exceed sum eps0. The accountants report the
smaller of their route's answer and this bound, which keeps pure-LDP ledgers
finite at every delta however far the route's numerics are pushed.
"""

import math
from typing import Optional, Tuple

from dp_accounting import dp_event

from shuffle_accountants import events

# Relative margin on the float sum (the sum itself is exact mathematics).
_SUM_MARGIN = 1e-12


def _leaf_guarantee(event: dp_event.DpEvent
                    ) -> Optional[Tuple[float, float]]:
  if isinstance(event, dp_event.NoOpDpEvent):
    return 0.0, 0.0
  if isinstance(event, dp_event.SampledWithoutReplacementDpEvent):
    event = event.event
  if isinstance(event, events.ShuffleEvent):
    return event.local_epsilon, event.local_delta
  if isinstance(event, events.CheckInEvent) and event.local_epsilon is not None:
    return event.local_epsilon, 0.0
  return None


def basic_composition(event: dp_event.DpEvent
                      ) -> Optional[Tuple[float, float]]:
  """(sum eps0, sum delta0) of a ledger of LDP shuffle rounds, else None."""
  if isinstance(event, dp_event.ComposedDpEvent):
    parts = [basic_composition(inner) for inner in event.events]
    if any(part is None for part in parts):
      return None
    return (math.fsum(p[0] for p in parts), math.fsum(p[1] for p in parts))
  if isinstance(event, dp_event.SelfComposedDpEvent):
    inner = basic_composition(event.event)
    if inner is None:
      return None
    return event.count * inner[0], event.count * inner[1]
  return _leaf_guarantee(event)


def capped_epsilon(ledger: dp_event.DpEvent, target_delta: float,
                   epsilon: float) -> float:
  """min(route epsilon, basic composition) where basic composition applies."""
  if math.isnan(epsilon):  # never report NaN: no finite claim from the route
    epsilon = math.inf
  guarantee = basic_composition(ledger)
  if guarantee is None or target_delta < guarantee[1] * (1 + _SUM_MARGIN):
    return float(epsilon)
  return float(min(epsilon, guarantee[0] * (1 + _SUM_MARGIN)))


def capped_delta(ledger: dp_event.DpEvent, target_epsilon: float,
                 delta: float) -> float:
  """min(route delta, basic composition), clipped to [0, 1] (NaN -> 1)."""
  delta = 1.0 if math.isnan(delta) else min(max(delta, 0.0), 1.0)
  guarantee = basic_composition(ledger)
  if guarantee is None or target_epsilon < guarantee[0] * (1 + _SUM_MARGIN):
    return float(delta)
  return float(min(delta, guarantee[1] * (1 + _SUM_MARGIN)))
