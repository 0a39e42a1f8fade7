"""The computed numbers of docs/mathematics.md."""

from .core import sig
from .core import value


def _gaussian_replace_one(kind: str) -> float:
  """GaussianDpEvent(1) under REPLACE_ONE at 1e-5, by accountant kind."""
  import dp_accounting

  from shuffle_accountants import ShuffleRdpAccountant
  replace_one = dp_accounting.NeighboringRelation.REPLACE_ONE
  accountant = {
      'dp_accounting_pld': lambda: dp_accounting.pld.PLDAccountant(
          replace_one),
      'dp_accounting_rdp': lambda: dp_accounting.rdp.RdpAccountant(
          neighboring_relation=replace_one),
      'ours_rdp': lambda: ShuffleRdpAccountant(
          neighboring_relation=replace_one)}[kind]()
  return accountant.compose(dp_accounting.GaussianDpEvent(1.0)).get_epsilon(
      1e-5)


value('w17.pld')(lambda: sig(_gaussian_replace_one('dp_accounting_pld'), 4))
value('w17.dp_accounting_rdp')(
    lambda: sig(_gaussian_replace_one('dp_accounting_rdp'), 3))
value('w17.ours_rdp')(lambda: sig(_gaussian_replace_one('ours_rdp'), 4))


def _w18_rate_example(checkin_rate: float) -> str:
  """NOT-MONOTONE's example of an epsilon that falls as the rate rises.

  On the RDP route.
  """
  from shuffle_accountants import CheckInEvent
  from shuffle_accountants import ShuffleRdpAccountant
  event = CheckInEvent(2876, checkin_rate, local_epsilon=4.705,
                       num_categories=3)
  return sig(ShuffleRdpAccountant().compose(event, 100).get_epsilon(1.95e-6),
             4)


value('w18.rate_0178')(lambda: _w18_rate_example(0.178))
value('w18.rate_042')(lambda: _w18_rate_example(0.42))


def _w18_blanket_example(checkin_rate: float) -> str:
  """NOT-MONOTONE's former fall of the BLANKET-RDP blanket bound.

  On the RDP route, 59 rounds.
  """
  from shuffle_accountants import CheckInEvent
  from shuffle_accountants import ShuffleRdpAccountant
  event = CheckInEvent(78, checkin_rate, local_epsilon=2.9869839072022386,
                       num_categories=16)
  return sig(ShuffleRdpAccountant().compose(event, 59).get_epsilon(1e-6), 4)


value('w18.blanket_low')(lambda: _w18_blanket_example(0.008588777132463657))
value('w18.blanket_high')(lambda: _w18_blanket_example(0.009561712344763384))
