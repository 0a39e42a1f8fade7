"""RDP of integer sums with binomial, discrete Gaussian or Laplace noise.

IDs: BINOMIAL-SUM, DISCRETE-GAUSSIAN-SUM, PURE-DP-RDP-CAP

* Binomial noise: P = Bin(N, 1/2) + h puts mass 2^-N on N + h, where Q =
  Bin(N, 1/2) puts none, so D_a(P || Q) = +infinity at every order a > 1
  (BINOMIAL-SUM (iii), exact): the RDP route has no finite answer and the
  PLD route's (epsilon, delta) is the event's guarantee.
* Discrete Gaussian noise: D_a(N_Z(h, sigma^2) || N_Z(0, sigma^2)) <= a h^2
  / (2 sigma^2) for integer h (Canonne, Kamath and Steinke 2020: the
  discrete Gaussian is (h^2 / sigma^2)/2-concentrated) [UB]; the all-honest
  sum of c aggregators' noise is bounded by one aggregator's (the others'
  noise is post-processing).
* Discrete Laplace noise of scale b: the loss is at most Delta / b, pure
  DP, whose RDP is PURE-DP-RDP-CAP's [UB].
"""

import numpy as np

from shuffle_accountants import _numerics
from shuffle_accountants import events
from shuffle_accountants.rdp import generic
from shuffle_accountants.rdp import shuffle_round

__all__ = ['BINOMIAL_RDP', 'DISCRETE_GAUSSIAN_RDP', 'DISCRETE_LAPLACE_RDP',
           'noise_sum_rdp_upper_bound']

BINOMIAL_RDP = ('BINOMIAL-SUM (iii): infinite at every order (support '
                'mismatch); use the PLD route')
DISCRETE_LAPLACE_RDP = ('DISCRETE-GAUSSIAN-SUM (iv): pure (Delta / b)-DP, '
                        'PURE-DP-RDP-CAP')
DISCRETE_GAUSSIAN_RDP = ('DISCRETE-GAUSSIAN-SUM (iii): Canonne-Kamath-Steinke '
                         'a d Delta^2 / (2 sigma^2)')


def noise_sum_rdp_upper_bound(event, orders: np.ndarray
                              ) -> shuffle_round.RdpBound:
  """Per-order RDP of one noisy-sum release [UB; exact for binomial]."""
  if isinstance(event, events.BinomialSecureSumEvent):
    return shuffle_round.smallest_bound(orders, {
        BINOMIAL_RDP: np.full(orders.shape, np.inf)})
  if isinstance(event, events.DiscreteLaplaceSumEvent):
    return shuffle_round.smallest_bound(orders, {
        DISCRETE_LAPLACE_RDP: generic.pure_dp_rdp_cap_unchecked(
            event.sensitivity / event.scale, orders)})
  rdp = (orders * event.sensitivity**2
         / (2 * event.sigma**2)) * (1 + _numerics.RELATIVE_SAFETY_MARGIN)
  return shuffle_round.smallest_bound(orders, {DISCRETE_GAUSSIAN_RDP: rdp})
