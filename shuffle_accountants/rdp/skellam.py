"""RDP of the Skellam secure sum (`SkellamSecureSumEvent`).

IDs: SKELLAM-SUM, RDP-INTERP

Agarwal, Kairouz and Liu (2021), the multi-dimensional Skellam mechanism:
for an integer order a > 1 and integer shift vectors h with ||h||_2 <= D2
and ||h||_1 <= D1, the Renyi divergence of order a between Sk(mu)^d + h
and Sk(mu)^d is at most

  a D2^2 / (2 mu) + min(((2 a - 1) D2^2 + 6 D1) / (4 mu^2), 3 D1 / (2 mu)).

The Skellam law is symmetric, so this bounds both orders of the pair. Real
orders are reached by RDP-INTERP from the neighbouring integers [UB].
"""

import numpy as np

from shuffle_accountants import _validation
from shuffle_accountants import events
from shuffle_accountants.rdp import generic
from shuffle_accountants.rdp import shuffle_round

__all__ = ['SKELLAM_SUM', 'skellam_rdp_upper_bound',
           'skellam_sum_rdp_upper_bound']

SKELLAM_SUM = ('SKELLAM-SUM: Agarwal-Kairouz-Liu Skellam RDP at the next '
               'integer order')


def _skellam_rdp(l1_sensitivity: float, l2_sensitivity: float,
                 noise_variance: float, orders: np.ndarray) -> np.ndarray:
  """SKELLAM-SUM [UB] on checked arguments (orders > 1)."""
  squared, mu = l2_sensitivity**2, noise_variance

  def at_integers(whole: np.ndarray) -> np.ndarray:
    correction = np.minimum(
        ((2 * whole - 1) * squared + 6 * l1_sensitivity) / (4 * mu**2),
        3 * l1_sensitivity / (2 * mu))
    # A few roundings of positive terms, each within 2^-53 relative: a
    # relative margin of 1e-12 covers them.
    return (whole * squared / (2 * mu) + correction) * (1 + 1e-12)

  return generic.at_real_orders(at_integers, orders)


def skellam_rdp_upper_bound(l1_sensitivity: float, l2_sensitivity: float,
                            noise_variance: float, orders) -> np.ndarray:
  """SKELLAM-SUM [UB]: RDP of Sk(mu)^d against its integer shifts.

  Args:
    l1_sensitivity: D1 >= 0, a bound on the L1 norm of the integer shift.
    l2_sensitivity: D2 >= 0, a bound on its L2 norm.
    noise_variance: mu > 0, the variance of each coordinate's noise.
    orders: RDP orders > 1 (real orders by RDP-INTERP).

  Returns:
    A proven upper bound on the Renyi divergence (both orders) per order.
  """
  l1 = _validation.check_real('l1_sensitivity', l1_sensitivity, 0.0)
  l2 = _validation.check_real('l2_sensitivity', l2_sensitivity, 0.0)
  mu = _validation.check_real('noise_variance', noise_variance, 0.0,
                              min_inclusive=False)
  return _skellam_rdp(l1, l2, mu, _validation.check_orders(orders))


def _check_event(event) -> None:
  if not isinstance(event, events.SkellamSecureSumEvent):
    raise TypeError('event must be a SkellamSecureSumEvent; got '
                    f'{event!r} of type {type(event).__name__}.')


def skellam_sum_rdp_upper_bound(event: events.SkellamSecureSumEvent,
                                orders) -> shuffle_round.RdpBound:
  """RDP of one `SkellamSecureSumEvent` round (SKELLAM-SUM) [UB].

  The rounding coins are a mixture the bound is taken over for every
  outcome (joint convexity), so the round's shift is one of the rounded
  vectors' differences, within the event's deterministic sensitivities.
  """
  _check_event(event)
  orders = _validation.check_orders(orders)
  return shuffle_round.smallest_bound(orders, {SKELLAM_SUM: _skellam_rdp(
      event.l1_sensitivity, event.l2_sensitivity, event.noise_variance,
      orders)})
