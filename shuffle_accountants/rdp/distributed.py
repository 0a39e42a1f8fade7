"""RDP of distributed check-in with secure aggregation: LIEW-THM4 with the k = 0 term (WBK19-THM9, W4, D8).

`DistributedCheckInEvent`: each of n users checks in with probability
gamma, each participant adds N(0, sigma^2 C^2 I) to its vector clipped to
norm C, and secure aggregation reveals the sum and the count k.

* The count's law Bin(n, gamma) does not depend on the data, so for every
  ordered pair of neighbours E[(p/q)^lambda] = sum_k Bin(n, gamma)(k) E_k
  (docs/mathematics.md D8, LIEW-THM2's identity); k = 0 contributes exactly
  its weight (W4).
* Given k >= 1 the participants are a uniform k-subset of the n users
  (sampling without replacement) and the released sum is the Gaussian-sum
  mechanism on that subset: replace-one sensitivity 2C, noise sigma C
  sqrt(k), RDP lambda 2^2 / (2 sigma^2 k) = 2 lambda / (sigma^2 k) (D7 at
  noise sigma sqrt(k)). WBK19-THM9 with ratio k / n bounds E_k for every
  ordered pair (LIEW-THM4), and so does the base RDP itself (subsampling
  never hurts: the moment is jointly convex in the pair).
* Counts are grouped [a, b] and bounded with the base RDP of a (the largest
  in the group) and the ratio b / n: WBK19-THM9's bound grows with both.
  Counts below the Chernoff window are grouped [a, 2a - 1] with the
  Chernoff bound on P[K <= 2a - 1] as weight; counts above it use the base
  of the window's last count without subsampling.

Exact Renyi moments of the D17 pair are *not* used: D17 bounds the
hockey-stick divergences at alpha >= 1 only, and a Renyi divergence also
depends on the profile at alpha < 1 (docs/mathematics.md W16); see D17 for
the symmetrized moment that would be sound.
"""

import numpy as np

from shuffle_accountants import _numerics
from shuffle_accountants import _validation
from shuffle_accountants.pld import clone_pairs
from shuffle_accountants.rdp import checkin
from shuffle_accountants.rdp import shuffle_round

LIEW_THM4 = 'LIEW-THM4 with k = 0 (WBK19-THM9 on the Gaussian-sum RDP)'
ONE_PARTICIPANT = 'Gaussian sum of one participant (D7)'


def gaussian_sum_rdp(noise_multiplier: float, count, orders) -> np.ndarray:
  """D7 [UB]: RDP of the sum of `count` participants, 2 order / (sigma^2 k)."""
  return checkin.gaussian_rdp(noise_multiplier * np.sqrt(count), orders)


def distributed_checkin_rdp_upper_bound(
    num_users: int, checkin_rate: float, noise_multiplier: float, orders,
    relative_width: float = checkin.CHECKIN_RELATIVE_WIDTH
) -> shuffle_round.RdpBound:
  """RDP of one round of distributed check-in: LIEW-THM4 with k = 0. [UB]

  Args:
    num_users: population size n >= 1.
    checkin_rate: participation probability gamma in (0, 1].
    noise_multiplier: per-participant sigma > 0 (clip norm C, noise sigma C).
    orders: RDP orders > 1.
    relative_width: relative width of groups of check-in counts.

  Returns:
    An `RdpBound` whose `rdp` is a proven upper bound at every order.
  """
  n = _validation.check_integer('num_users', num_users, 1)
  checkin_rate = _validation.check_real('checkin_rate', checkin_rate, 0.0, 1.0,
                                        min_inclusive=False)
  sigma = _validation.check_real('noise_multiplier', noise_multiplier, 0.0,
                                 min_inclusive=False)
  orders = _validation.check_orders(orders)
  relative_width = _validation.check_real('relative_width', relative_width,
                                          0.0, 0.1, min_inclusive=False)
  alone = gaussian_sum_rdp(sigma, 1, orders)
  if checkin_rate == 1:  # everyone reports: the Gaussian sum of n vectors
    return shuffle_round.smallest_bound(
        orders, {LIEW_THM4: gaussian_sum_rdp(sigma, n, orders),
                 ONE_PARTICIPANT: alone})
  groups = clone_pairs.label_groups(n, checkin_rate, 1 - checkin_rate,
                                    relative_width, checkin.MAX_CHECKIN_GROUPS,
                                    first=1)
  log_weights, rows = [], []

  def add(log_weight, count, ratio):
    if log_weight > -np.inf:
      base = lambda o: gaussian_sum_rdp(sigma, count, o)
      log_weights.append(log_weight)
      rows.append(checkin._log_wbk19_moment(ratio, base, np.inf, orders))  # pylint: disable=protected-access

  # 1 <= k < starts[0] (k = 0 has moment 1 and adds nothing), in groups
  # [a, 2a - 1] with the base of a, the ratio of the end and the Chernoff
  # bound on P[K <= end]: small counts are rare but carry little noise, and
  # one lump with the base of k = 1 would dominate every order.
  start = 1
  while start < groups.starts[0]:
    end = min(2 * start - 1, int(groups.starts[0]) - 1)
    add(float(_numerics.log_lower_tail_bound(n, checkin_rate,
                                             1 - checkin_rate, end)),
        start, end / n)
    start = end + 1
  with np.errstate(divide='ignore'):
    for start, end, weight in zip(groups.starts, groups.ends, groups.weights):
      add(np.log(weight), int(start), end / n)
    # k > ends[-1]: no subsampling gain claimed, the base of ends[-1].
    add(np.log(groups.upper_tail), int(groups.ends[-1]), 1.0)
  mixture = (checkin.mixture_rdp(log_weights, rows, orders) if rows
             else np.zeros(orders.size))
  return shuffle_round.smallest_bound(orders, {LIEW_THM4: mixture,
                                               ONE_PARTICIPANT: alone})
