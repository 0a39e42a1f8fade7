"""The RDP route of a ledger, which the PLD accountant also asks (from `_rdp_cut` on).

A module above both routes: `pld/accountant` takes its RDP companion from
here, so no module of `pld/` imports one of `rdp/`.
"""

from typing import Optional

from dp_accounting import dp_event
from dp_accounting import privacy_accountant

from shuffle_accountants.rdp import accountant as rdp_accountant


def rdp_route(ledger: dp_event.DpEvent,
              neighboring_relation: privacy_accountant.NeighboringRelation
              ) -> Optional[rdp_accountant.ShuffleRdpAccountant]:
  """An RDP accountant holding `ledger`, or None if it cannot compose it."""
  route = rdp_accountant.ShuffleRdpAccountant(
      neighboring_relation=neighboring_relation)
  try:
    route.compose(ledger)
  except (privacy_accountant.UnsupportedEventError, ValueError,
          ArithmeticError):  # e.g. dp_accounting's RDP of zero noise
    return None
  return route
