"""PLD of the Skellam secure sum: the symmetric pair of its RDP profile.

IDs: SKELLAM-SUM, CONV-RDP2DP, ZDW22-ONE-ORDER, TAILS-TO-INFINITY

The worst d-dimensional integer shift has no closed-form pair, so the round's
privacy profile is bounded through its RDP (SKELLAM-SUM (i)-(iii)): for
eps >= 0, delta(eps) <= the CONV-RDP2DP conversion of the RDP bound, in both
orders (the bound is symmetric); for eps < 0, H_a(P||Q) = 1 - a + a
H_{1/a}(Q||P) (ZDW22-ONE-ORDER) bounds it from the other order at -eps. The
true profile (the supremum over neighbours of convex functions of e^eps) is
convex in e^eps, so the lower convex envelope of these upper bounds still
bounds it, and connect-the-dots turns it into one symmetric PMF
(`discrete.profile_to_pmf`) that dominates the round in both orders, also
under composition [UB]. Above the grid the profile is kept as +infinity mass
(TAILS-TO-INFINITY).
"""

import math
from typing import Tuple

import numpy as np

from shuffle_accountants import _validation
from shuffle_accountants import events
from shuffle_accountants.pld import discrete
from shuffle_accountants.rdp import accountant as rdp_accountant
from shuffle_accountants.rdp import skellam as rdp_skellam

__all__ = ['SKELLAM_PAIR', 'skellam_sum_pmf', 'skellam_sum_scales',
           'round_pmf', 'round_scales']

SKELLAM_PAIR = ('SKELLAM-SUM: symmetric pair of the CONV-RDP2DP profile of '
                'the Skellam RDP bound')

# RDP orders the conversion minimizes over (real orders by RDP-INTERP).
PROFILE_ORDERS = np.unique(np.concatenate([
    np.linspace(1.02, 2.0, 50), np.geomspace(2.0, 1e4, 300)]))
# The profile is evaluated at this many epsilons in [0, reach] and bounded
# in between by its value at the point below (it falls with epsilon).
PROFILE_POINTS = 4000
# Beyond the epsilon where the bound falls below this, everything is
# +infinity mass; reach is kept below LARGEST_REACH so that e^{-2 reach}
# stays a normal float in the convex envelope.
TAIL_DELTA = 1e-40
LARGEST_REACH = 300.0


def _rdp(event: events.SkellamSecureSumEvent) -> np.ndarray:
  return rdp_skellam.skellam_sum_rdp_upper_bound(event, PROFILE_ORDERS).rdp


def _delta(rdp: np.ndarray, epsilon: float) -> float:
  """CONV-RDP2DP: an upper bound on delta(epsilon), epsilon >= 0."""
  log_delta, _ = rdp_accountant.log_delta_upper_bound(PROFILE_ORDERS, rdp,
                                                      epsilon)
  return rdp_accountant.exp_rounded_up(log_delta)


def _reach(rdp: np.ndarray) -> float:
  """An epsilon past which the bound is below TAIL_DELTA (or LARGEST_REACH)."""
  reach = 1.0
  while reach < LARGEST_REACH and _delta(rdp, reach) > TAIL_DELTA:
    reach *= 2
  return min(reach, LARGEST_REACH)


def skellam_sum_pmf(event: events.SkellamSecureSumEvent,
                    discretization: float) -> discrete.GridPmf:
  """A symmetric PMF whose profile bounds the round's, both orders [UB].

  Args:
    event: the round.
    discretization: the grid spacing d > 0 of the losses.
  """
  discretization = _validation.check_real('discretization', discretization,
                                          0.0, min_inclusive=False)
  rdp = _rdp(event)
  reach = _reach(rdp)
  step = reach / PROFILE_POINTS
  coarse = np.array([_delta(rdp, j * step)
                     for j in range(PROFILE_POINTS + 1)])
  top = min(int(math.ceil(reach / discretization)) + 2,
            discrete.MAX_PMF_BUCKETS // 2)
  positive = np.arange(top + 1) * discretization
  # The value at the evaluated point at or below each epsilon (the bound
  # falls with epsilon); beyond reach, the value at reach.
  index = np.minimum(np.floor(positive / step + 1e-9).astype(np.int64),
                     PROFILE_POINTS)
  above = coarse[index]
  # eps < 0 from the other order at -eps (ZDW22-ONE-ORDER).
  ratio = np.exp(-positive[:0:-1])
  below = -np.expm1(-positive[:0:-1]) + ratio * above[:0:-1]
  profile = np.minimum(np.concatenate([below, above]), 1.0)
  x = np.exp((np.arange(-top, top + 1) - top) * discretization)
  profile = np.maximum(discrete.lower_convex_envelope(x, profile), 0.0)
  # Rounding must not make the profile increase anywhere.
  profile = np.maximum.accumulate(profile[::-1])[::-1]
  return discrete.profile_to_pmf(discretization, -top, profile)


def skellam_sum_scales(event: events.SkellamSecureSumEvent
                       ) -> Tuple[float, float, float]:
  """(loss spread, largest finite loss, a bound on the spread): grid only.

  The spread is that of the Gaussian loss of the same shift and variance,
  D2 / sqrt(mu); E[L^2] = s^2 + s^4 / 4 for it.
  """
  spread = event.l2_sensitivity / math.sqrt(event.noise_variance)
  return (spread, _reach(_rdp(event)),
          math.sqrt(spread**2 + spread**4 / 4))


def round_pmf(event: events.SkellamSecureSumEvent, unused_sampling_ratio,
              discretization: float, unused_discretize,
              unused_krr_adversary, unused_relative_width
              ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """`routes.ROUND_PMFS`' entry: the PMF and its pair's name."""
  return skellam_sum_pmf(event, discretization), (SKELLAM_PAIR,)


def round_scales(event: events.SkellamSecureSumEvent, unused_ratio,
                 unused_krr_adversary, unused_relative_width
                 ) -> Tuple[float, float, float]:
  """`routes.ROUND_PMFS`' entry: `skellam_sum_scales`."""
  return skellam_sum_scales(event)
