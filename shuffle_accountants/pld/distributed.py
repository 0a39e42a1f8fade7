"""PLDs of distributed check-in with secure aggregation.

IDs: SECAGG-REVEALED, SECAGG-HIDDEN, LABEL-MIXTURE, TAILS-TO-INFINITY

`DistributedCheckInEvent`: users check in with probability gamma, each
participant adds N(0, s^2 I) to its vector clipped to norm C (s = sigma C),
and secure aggregation reveals the sum and the count k.

Participants revealed (`participation='revealed'`, SECAGG-REVEALED, [EXACT] up
to the grid and the tails): the target joins with probability gamma whatever the
data, and then k - 1 ~ Bin(n - 1, gamma); both are seen (LABEL-MIXTURE). A round
it joins is N(mu_k, 1) vs N(0, 1), mu_k = 2 / (sigma sqrt(k)), a symmetric
pair; a round it skips releases nothing about it. So one round's profile is
(1 - gamma) (1 - e^eps)_+ + gamma sum_k Bin(n - 1, gamma)(k - 1)
delta_{mu_k}(eps), a symmetric PMF. Counts are grouped [a, b] with the
shift of a (the largest); counts outside the Chernoff window go to
+infinity (TAILS-TO-INFINITY). With `min_reporting` = m (dropouts chosen by an
adversary, SECAGG-REVEALED (iii)) the round is N(mu_m, 1) vs N(0, 1) with
probability gamma P[k >= m] and releases nothing otherwise, in both models.

Count hidden too (`participation='hidden_count'`, SECAGG-REVEALED (v), [DOM]):
every client uploads, so one pair: the SECAGG-HIDDEN pair with ratio gamma (the
target's own coin) and the shift of n shares (of m with dropouts).

Participants hidden (`participation='hidden'`, SECAGG-HIDDEN, [DOM]):

* The count k ~ Bin(n, gamma) is revealed and data-independent, so the
  round's profile is the Bin(n, gamma)-mixture of the per-k profiles
  (LABEL-MIXTURE); k = 0 releases nothing.
* Given k, both orders of the mechanism have, for eps >= 0, a profile at
  most that of A_k = (1 - r) N(0, 1) + r N(mu_k, 1) vs B_k = N(0, 1), with
  r = k / n and mu_k = 2 / (sigma sqrt(k)) (docs/mathematics.md SECAGG-HIDDEN: a
  coupling of the participants, joint convexity and advanced joint
  convexity). This is the "remove" order of an add/remove subsampled
  Gaussian at sensitivity 2C and noise s sqrt(k). Its both-order profile
  (`checkin.subsampled_profile` on the Gaussian pair) equals the first
  order's for eps >= 0 and is, for eps < 0, the first order's reflected
  through H_a(P||Q) = 1 - a + a H_{1/a}(Q||P); a symmetric connect-the-dots
  PMF with it dominates both orders of the replace-one relation, also under
  composition (as for `checkin`, ZDW22-ONE-ORDER).
* Groups of counts [a, b] are represented by the noise of the *smallest*
  count a (a larger sum's extra noise is a post-processing) and the
  *largest* ratio b / n (a smaller ratio is a post-processing, GROUPING):
  the pair's profile grows with mu and with r. Counts outside a Chernoff
  window go to +infinity with a proven bound on their mass (TAILS-TO-INFINITY).
"""

from typing import Any, Dict, Optional, Tuple

import numpy as np

from shuffle_accountants import events
from shuffle_accountants.pairs import binomial
from shuffle_accountants.pairs import clone_pairs
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import discrete

__all__ = [
    'sum_shift', 'pmf_reach', 'loss_spread', 'loss_variance_bound',
    'distributed_checkin_profile', 'distributed_checkin_pmf',
]


def sum_shift(noise_multiplier: float, counts) -> np.ndarray:
  """mu_k = 2 / (sigma sqrt(k)): sensitivity 2C over the sum's noise
  s sqrt(k)."""
  return 2.0 / (noise_multiplier * np.sqrt(np.asarray(counts, np.float64)))


def _revealed_labels(num_users: int, checkin_rate: float,
                     relative_width: float) -> binomial.LabelGroups:
  """Groups of the count k of a round the target joins, weights times gamma."""
  n, gamma = num_users, checkin_rate
  if n == 1 or gamma == 1:  # k = n whenever the target joins
    return binomial.LabelGroups(np.array([n]), np.array([n]),
                                np.array([gamma]), 0.0, 0.0, 1 - gamma)
  groups = binomial.label_groups(n - 1, gamma, 1 - gamma, relative_width,
                                 checkin.MAX_GAUSSIAN_GROUPS, first=0)
  # Only the tails' sum is read (`tails`): kept whole, as one weight.
  return binomial.LabelGroups(groups.starts + 1, groups.ends + 1,
                              gamma * groups.weights, gamma * groups.tails,
                              0.0, 1 - gamma)


def _labels(num_users: int, checkin_rate: float, noise_multiplier: float,
            relative_width: float, participation: str,
            min_reporting: Optional[int]
            ) -> Tuple[binomial.LabelGroups, np.ndarray]:
  """The round's groups of counts and each group's subsampling ratio.

  Ratio 1 means the target's participation is seen (a Gaussian pair).
  """
  if participation == 'hidden_count':
    # SECAGG-REVEALED (v): the target's own coin (ratio gamma) on noise of all n
    # shares, or of at least m survivors.
    count = num_users if min_reporting is None else min_reporting
    return (binomial.LabelGroups(np.array([count]), np.array([count]),
                                 np.ones(1), 0.0, 0.0),
            np.array([checkin_rate]))
  if min_reporting is not None:
    weight = binomial.reporting_probability(num_users, checkin_rate,
                                            min_reporting)
    labels = binomial.LabelGroups(np.array([min_reporting]),
                                  np.array([min_reporting]),
                                  np.array([weight]), 0.0, 0.0, 1 - weight)
  elif participation == 'revealed':
    labels = _revealed_labels(num_users, checkin_rate, relative_width)
  else:
    labels = checkin.labels(num_users, checkin_rate, noise_multiplier,
                            relative_width, None)
    return labels, labels.ends / num_users
  return labels, np.ones(labels.starts.size)


def _group_reaches(labels, ratios, noise_multiplier: float) -> np.ndarray:
  """Largest finite loss of each group's pair (Gaussian up to its reach)."""
  shifts = sum_shift(noise_multiplier, labels.starts)
  bases = shifts**2 / 2 + checkin.GAUSSIAN_REACH * shifts
  return np.array([checkin.largest_loss(base, ratio)
                   for base, ratio in zip(bases, ratios)])


def pmf_reach(num_users: int, checkin_rate: float, noise_multiplier: float,
              relative_width: float = clone_pairs.DEFAULT_RELATIVE_WIDTH,
              participation: str = events.DEFAULT_PARTICIPATION,
              min_reporting: Optional[int] = None) -> float:
  """The largest finite loss `distributed_checkin_pmf` places on its grid."""
  labels, ratios = _labels(num_users, checkin_rate, noise_multiplier,
                           relative_width, participation, min_reporting)
  return float(np.max(_group_reaches(labels, ratios, noise_multiplier)))


def loss_spread(num_users: int, checkin_rate: float, noise_multiplier: float,
                participation: str = events.DEFAULT_PARTICIPATION,
                min_reporting: Optional[int] = None) -> float:
  """Standard deviation of a typical round's loss (grid choice only).

  Hidden: the first order at the expected count max(1, n gamma). Revealed
  (or dropouts): mu at the expected count 1 + (n - 1) gamma (or mu_m), the
  standard deviation of the Gaussian loss of a round the target joins:
  the only rounds with a loss, however rare (the mixture's own spread
  would shrink with gamma and make the grid needlessly fine).
  """
  if participation == 'hidden_count':
    count: float = num_users if min_reporting is None else min_reporting
    return checkin.loss_spread(
        num_users, checkin_rate,
        noise_multiplier=noise_multiplier * np.sqrt(count))
  if min_reporting is None and participation == 'hidden':
    count = max(1.0, num_users * checkin_rate)
    return checkin.loss_spread(
        num_users, min(1.0, count / num_users),
        noise_multiplier=noise_multiplier * np.sqrt(count))
  count = (1 + (num_users - 1) * checkin_rate if min_reporting is None
           else min_reporting)
  return float(sum_shift(noise_multiplier, count))


def loss_variance_bound(num_users: int, checkin_rate: float,
                        noise_multiplier: float,
                        relative_width: float = (
                            clone_pairs.DEFAULT_RELATIVE_WIDTH),
                        participation: str = events.DEFAULT_PARTICIPATION,
                        min_reporting: Optional[int] = None) -> float:
  """About E[L^2] of a round's finite losses, from above (grid choice only).

  As `checkin.loss_variance_bound`, group by group with each group's shift:
  |log(1 + r (e^l - 1))| <= r |e^l - 1| / (1 - r), whose square has mean at
  most (r / (1 - r))^2 (r E_P[(e^l - 1)^2] + E_Q[(e^l - 1)^2]), with
  E_Q = e^{mu^2} - 1 and E_P = e^{3 mu^2} - 2 e^{mu^2} + 1, and at most the
  group's largest squared loss (alone where the participation is seen,
  r = 1: a wider bound keeps the grid of very long ledgers coarse enough).
  """
  labels, ratios = _labels(num_users, checkin_rate, noise_multiplier,
                           relative_width, participation, min_reporting)
  largest = _group_reaches(labels, ratios, noise_multiplier)
  mu2 = sum_shift(noise_multiplier, labels.starts)**2
  with np.errstate(over='ignore', divide='ignore', invalid='ignore'):
    under_q = np.expm1(mu2)
    under_p = np.exp(3 * mu2) - 2 * np.exp(mu2) + 1
    scaled = np.where(ratios < 1, (ratios / (1 - ratios))**2
                      * (ratios * under_p + under_q), np.inf)
    scaled = np.where(np.isnan(scaled), np.inf, scaled)
  return float(np.sum(labels.weights * np.minimum(largest**2, scaled)))


def distributed_checkin_profile(num_users: int, checkin_rate: float,
                                noise_multiplier: float, epsilons,
                                relative_width: float = (
                                    clone_pairs.DEFAULT_RELATIVE_WIDTH),
                                participation: str = (
                                    events.DEFAULT_PARTICIPATION),
                                min_reporting: Optional[int] = None
                                ) -> np.ndarray:
  """An upper bound on one round's delta(eps), both orders, at real eps. [UB]

  For eps < 0 it is the symmetric pair's profile, which dominates the
  reverse order (see the module docstring). Revealed participants
  (SECAGG-REVEALED): exact up to the grouping of counts and the tails at
  +infinity.
  """
  epsilons = np.asarray(epsilons, dtype=np.float64)
  labels, ratios = _labels(num_users, checkin_rate, noise_multiplier,
                           relative_width, participation, min_reporting)
  shifts = sum_shift(noise_multiplier, labels.starts)
  # Losses beyond e^709 (tiny noise) overflow to inf, and r = 1 meets
  # inf * 0 there; such points get profile 1 below (pessimistic).
  with np.errstate(over='ignore', divide='ignore', invalid='ignore'):
    profile = (labels.identical * np.maximum(-np.expm1(epsilons), 0.0)
               + labels.tails)
    for shift, ratio, weight in zip(shifts, ratios, labels.weights):
      if ratio == 1:  # the Gaussian pair itself, symmetric
        profile += weight * checkin.gaussian_profile(shift, epsilons)
        continue
      base = lambda eps, shift=shift: checkin.gaussian_profile(shift, eps)
      profile += weight * checkin.subsampled_profile(base, ratio, epsilons)
  return np.minimum(np.where(np.isnan(profile), 1.0, profile), 1.0)


def distributed_checkin_pmf(num_users: int, checkin_rate: float,
                            noise_multiplier: float, discretization: float,
                            relative_width: float = (
                                clone_pairs.DEFAULT_RELATIVE_WIDTH),
                            participation: str = events.DEFAULT_PARTICIPATION,
                            min_reporting: Optional[int] = None
                            ) -> discrete.GridPmf:
  """Symmetric PMF dominating one round of distributed check-in. [DOM]

  Args:
    num_users: population size n.
    checkin_rate: gamma in (0, 1].
    noise_multiplier: per-participant sigma > 0.
    discretization: grid spacing d.
    relative_width: relative width of groups of counts.
    participation: 'revealed' (SECAGG-REVEALED) or 'hidden' (SECAGG-HIDDEN).
    min_reporting: None, or the fewest surviving shares m (SECAGG-REVEALED
      (iii)).

  Returns:
    A PMF whose profile is at least the round's, in both orders.
  """
  model: Dict[str, Any] = dict(participation=participation,
                               min_reporting=min_reporting)
  reach = pmf_reach(num_users, checkin_rate, noise_multiplier, relative_width,
                    **model)
  # At most MAX_PMF_BUCKETS grid points: the profile above `top` becomes the
  # +infinity mass and losses below the grid are raised onto it
  # (TAILS-TO-INFINITY).
  top = min(int(np.ceil(reach / discretization)) + 2,
            discrete.MAX_PMF_BUCKETS // 2)
  epsilons = np.arange(-top, top + 1) * discretization
  profile = distributed_checkin_profile(num_users, checkin_rate,
                                        noise_multiplier, epsilons,
                                        relative_width, **model)
  # Rounding must not make the profile increase anywhere.
  profile = np.maximum.accumulate(profile[::-1])[::-1]
  return discrete.profile_to_pmf(discretization, -top, profile)
