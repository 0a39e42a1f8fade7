"""PLD of distributed check-in with secure aggregation: the D17 dominating pair mixed over the revealed count (D17, D8, D9).

`DistributedCheckInEvent`: users check in with probability gamma, each
participant adds N(0, s^2 I) to its vector clipped to norm C (s = sigma C),
and secure aggregation reveals the sum and the count k.

* The count k ~ Bin(n, gamma) is revealed and data-independent, so the
  round's profile is the Bin(n, gamma)-mixture of the per-k profiles (D8);
  k = 0 releases nothing.
* Given k, both orders of the mechanism have, for eps >= 0, a profile at
  most that of A_k = (1 - r) N(0, 1) + r N(mu_k, 1) vs B_k = N(0, 1), with
  r = k / n and mu_k = 2 / (sigma sqrt(k)) (docs/mathematics.md D17: a
  coupling of the participants, joint convexity and advanced joint
  convexity). This is the "remove" order of an add/remove subsampled
  Gaussian at sensitivity 2C and noise s sqrt(k). Its both-order profile
  (`checkin.subsampled_profile` on the Gaussian pair) equals the first
  order's for eps >= 0 and is, for eps < 0, the first order's reflected
  through H_a(P||Q) = 1 - a + a H_{1/a}(Q||P); a symmetric connect-the-dots
  PMF with it dominates both orders of the replace-one relation, also under
  composition (as for `checkin`, W11).
* Groups of counts [a, b] are represented by the noise of the *smallest*
  count a (a larger sum's extra noise is a post-processing) and the
  *largest* ratio b / n (a smaller ratio is a post-processing, GROUPING):
  the pair's profile grows with mu and with r. Counts outside a Chernoff
  window go to +infinity with a proven bound on their mass (D9).
"""

import numpy as np

from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import clone_pairs
from shuffle_accountants.pld import discrete


def sum_shift(noise_multiplier: float, counts) -> np.ndarray:
  """mu_k = 2 / (sigma sqrt(k)): sensitivity 2C over the sum's noise s sqrt(k)."""
  return 2.0 / (noise_multiplier * np.sqrt(np.asarray(counts, np.float64)))


def _labels(num_users: int, checkin_rate: float, noise_multiplier: float,
            relative_width: float) -> checkin.Labels:
  return checkin.labels(num_users, checkin_rate, noise_multiplier,
                        relative_width, None)


def _group_reaches(labels, num_users: int, noise_multiplier: float
                   ) -> np.ndarray:
  """Largest finite loss of each group's pair (Gaussian up to its reach)."""
  shifts = sum_shift(noise_multiplier, labels.starts)
  bases = shifts**2 / 2 + checkin.GAUSSIAN_REACH * shifts
  return np.array([checkin.largest_loss(base, end / num_users)
                   for base, end in zip(bases, labels.ends)])


def pmf_reach(num_users: int, checkin_rate: float, noise_multiplier: float,
              relative_width: float = clone_pairs.DEFAULT_RELATIVE_WIDTH
              ) -> float:
  """The largest finite loss `distributed_checkin_pmf` places on its grid."""
  labels = _labels(num_users, checkin_rate, noise_multiplier, relative_width)
  return float(np.max(_group_reaches(labels, num_users, noise_multiplier)))


def loss_spread(num_users: int, checkin_rate: float, noise_multiplier: float
                ) -> float:
  """Standard deviation of a typical round's loss (grid choice only).

  The first order at the expected count max(1, n gamma).
  """
  count = max(1.0, num_users * checkin_rate)
  return checkin.loss_spread(num_users, min(1.0, count / num_users),
                             noise_multiplier=noise_multiplier * np.sqrt(count))


def loss_variance_bound(num_users: int, checkin_rate: float,
                        noise_multiplier: float,
                        relative_width: float = clone_pairs.DEFAULT_RELATIVE_WIDTH
                        ) -> float:
  """About E[L^2] of a round's finite losses, from above (grid choice only).

  As `checkin.loss_variance_bound`, group by group with each group's shift:
  |log(1 + r (e^l - 1))| <= r |e^l - 1| / (1 - r), whose square has mean at
  most (r / (1 - r))^2 (r E_P[(e^l - 1)^2] + E_Q[(e^l - 1)^2]), with
  E_Q = e^{mu^2} - 1 and E_P = e^{3 mu^2} - 2 e^{mu^2} + 1, and at most the
  group's largest squared loss.
  """
  labels = _labels(num_users, checkin_rate, noise_multiplier, relative_width)
  largest = _group_reaches(labels, num_users, noise_multiplier)
  mu2 = sum_shift(noise_multiplier, labels.starts)**2
  ratios = labels.ends / num_users
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
                                    clone_pairs.DEFAULT_RELATIVE_WIDTH)
                                ) -> np.ndarray:
  """An upper bound on one round's delta(eps), both orders, at real eps. [UB]

  For eps < 0 it is the symmetric pair's profile, which dominates the
  reverse order (see the module docstring).
  """
  n = num_users
  epsilons = np.asarray(epsilons, dtype=np.float64)
  labels = _labels(n, checkin_rate, noise_multiplier, relative_width)
  shifts = sum_shift(noise_multiplier, labels.starts)
  # Losses beyond e^709 (tiny noise) overflow to inf, and r = 1 meets
  # inf * 0 there; such points get profile 1 below (pessimistic).
  with np.errstate(over='ignore', divide='ignore', invalid='ignore'):
    profile = (labels.identical * np.maximum(-np.expm1(epsilons), 0.0)
               + labels.tails)
    for shift, end, weight in zip(shifts, labels.ends, labels.weights):
      base = lambda eps, shift=shift: checkin.gaussian_profile(shift, eps)
      profile += weight * checkin.subsampled_profile(base, end / n, epsilons)
  return np.minimum(np.where(np.isnan(profile), 1.0, profile), 1.0)


def distributed_checkin_pmf(num_users: int, checkin_rate: float,
                            noise_multiplier: float, discretization: float,
                            relative_width: float = (
                                clone_pairs.DEFAULT_RELATIVE_WIDTH)
                            ) -> discrete.GridPmf:
  """Symmetric PMF dominating one round of distributed check-in. [DOM]

  Args:
    num_users: population size n.
    checkin_rate: gamma in (0, 1].
    noise_multiplier: per-participant sigma > 0.
    discretization: grid spacing d.
    relative_width: relative width of groups of counts.

  Returns:
    A PMF whose profile is at least the round's, in both orders.
  """
  reach = pmf_reach(num_users, checkin_rate, noise_multiplier, relative_width)
  # At most MAX_PMF_BUCKETS grid points: the profile above `top` becomes the
  # +infinity mass and losses below the grid are raised onto it (D9).
  top = min(int(np.ceil(reach / discretization)) + 2,
            discrete.MAX_PMF_BUCKETS // 2)
  epsilons = np.arange(-top, top + 1) * discretization
  profile = distributed_checkin_profile(num_users, checkin_rate,
                                        noise_multiplier, epsilons,
                                        relative_width)
  # Rounding must not make the profile increase anywhere.
  profile = np.maximum.accumulate(profile[::-1])[::-1]
  return discrete.profile_to_pmf(discretization, -top, profile)
