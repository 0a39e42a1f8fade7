"""RDP of distributed check-in with secure aggregation.

IDs: SECAGG-REVEALED, LIEW-THM4, WBK19-THM9, LIEW-ZERO-COUNT, LABEL-MIXTURE

`DistributedCheckInEvent`: each of n users checks in with probability
gamma, each participant adds N(0, sigma^2 C^2 I) to its vector clipped to
norm C, and secure aggregation reveals the sum and the count k.

Participants revealed (`participation='revealed'`, SECAGG-REVEALED, [EXACT] up
to the grouping of counts): the target's participation (probability gamma) and k
(k - 1 ~ Bin(n - 1, gamma) given it) are seen and do not depend on the
data, so E_Q[(p/q)^lambda] = (1 - gamma) + gamma sum_k P(k)
e^{(lambda - 1) lambda mu_k^2 / 2}, mu_k = 2 / (sigma sqrt(k)) (LABEL-MIXTURE,
the Gaussian's exact Renyi divergence lambda mu^2 / 2, GAUSS-NO-GAIN); the pair
is symmetric, so this is both orders. Counts are grouped by their smallest
member (the largest moment). With `min_reporting` = m (dropouts, SECAGG-REVEALED
(iii)): (1 - w) + w e^{(lambda - 1) lambda mu_m^2 / 2}, w = gamma P[k >= m],
in both models.

Participants hidden (`participation='hidden'`, LIEW-THM4, [UB]):

* The count's law Bin(n, gamma) does not depend on the data, so for every
  ordered pair of neighbours E[(p/q)^lambda] = sum_k Bin(n, gamma)(k) E_k
  (docs/mathematics.md LABEL-MIXTURE, LIEW-THM2's identity); k = 0 contributes
  exactly its weight (LIEW-ZERO-COUNT).
* Given k >= 1 the participants are a uniform k-subset of the n users
  (sampling without replacement) and the released sum is the Gaussian-sum
  mechanism on that subset: replace-one sensitivity 2C, noise sigma C
  sqrt(k), RDP lambda 2^2 / (2 sigma^2 k) = 2 lambda / (sigma^2 k)
  (GAUSS-NO-GAIN at noise sigma sqrt(k)). WBK19-THM9 with ratio k / n bounds E_k
  for every ordered pair (LIEW-THM4), and so does the base RDP itself
  (subsampling never hurts: the moment is jointly convex in the pair).
* Counts are grouped [a, b] and bounded with the base RDP of a (the largest
  in the group) and the ratio b / n: WBK19-THM9's bound grows with both.
  Counts below the Chernoff window are grouped [a, 2a - 1] with the
  Chernoff bound on P[K <= 2a - 1] as weight; counts above it use the base
  of the window's last count without subsampling.
* Hiding the participants is a post-processing of revealing them, so the
  SECAGG-REVEALED moment is a candidate too (per order the smaller is used).

Exact Renyi moments of the SECAGG-HIDDEN pair are *not* used: SECAGG-HIDDEN
bounds the hockey-stick divergences at alpha >= 1 only, and a Renyi divergence
also depends on the profile at alpha < 1 (docs/mathematics.md
ORDERED-RDP-UNSOUND); see SECAGG-HIDDEN for the symmetrized moment that would be
sound.
"""

from typing import Optional

import numpy as np

from shuffle_accountants import _numerics
from shuffle_accountants import _validation
from shuffle_accountants import events
from shuffle_accountants.pairs import binomial
from shuffle_accountants.rdp import checkin
from shuffle_accountants.rdp import shuffle_round

__all__ = [
    'LIEW_THM4', 'REVEALED', 'DROPOUTS', 'HIDDEN_COUNT',
    'HIDDEN_COUNT_DROPOUTS', 'ONE_PARTICIPANT', 'gaussian_sum_rdp',
    'distributed_checkin_rdp_upper_bound',
]

LIEW_THM4 = 'LIEW-THM4 with k = 0 (WBK19-THM9 on the Gaussian-sum RDP)'
REVEALED = ('SECAGG-REVEALED: participants revealed, exact mixture of '
            'Gaussian sums')
DROPOUTS = ('SECAGG-REVEALED (iii): Gaussian sum of min_reporting shares '
            '(dropouts)')
HIDDEN_COUNT = 'SECAGG-REVEALED (v): LIEW-THM4 on the noise of all n shares'
HIDDEN_COUNT_DROPOUTS = ('SECAGG-REVEALED (v): Gaussian sum of '
                         'min_reporting shares')
ONE_PARTICIPANT = 'Gaussian sum of one participant (GAUSS-NO-GAIN)'


def gaussian_sum_rdp(noise_multiplier: float, count, orders) -> np.ndarray:
  """GAUSS-NO-GAIN [UB]: RDP of the sum of `count` participants.

  The RDP is 2 order / (sigma^2 k).
  """
  return checkin.gaussian_rdp(noise_multiplier * np.sqrt(count), orders)


def _gaussian_sum_rdp(noise_multiplier: float, count,
                      orders: np.ndarray) -> np.ndarray:
  """`gaussian_sum_rdp` on checked arguments (sigma > 0, count >= 1)."""
  return checkin.gaussian_rdp_unchecked(
      float(noise_multiplier * np.sqrt(count)), orders)


def _small_counts(num_trials: int, checkin_rate: float, window_start: int,
                  offset: int):
  """Counts 1 <= k < window_start in groups [a, 2a - 1], with log weights.

  Small counts are rare but carry little noise, and one lump with the base
  of k = 1 would dominate every order: each group takes the base of its
  smallest count a and the Chernoff bound on P[label <= end - offset], the
  label being k - offset ~ Bin(num_trials, gamma).
  """
  start = 1
  while start < window_start:
    end = min(2 * start - 1, window_start - 1)
    yield (float(_numerics.log_lower_tail_bound(
        num_trials, checkin_rate, 1 - checkin_rate, end - offset)), start, end)
    start = end + 1


def _revealed_rdp(num_users: int, checkin_rate: float, sigma: float,
                  orders: np.ndarray, relative_width: float,
                  min_reporting: Optional[int]) -> np.ndarray:
  """SECAGG-REVEALED [EXACT] up to grouping: the revealed mixture's moment."""
  n, gamma = num_users, checkin_rate
  moment = lambda count: (orders - 1) * _gaussian_sum_rdp(sigma, count, orders)
  if min_reporting is not None:
    weight = binomial.reporting_probability(n, gamma, min_reporting)
    return checkin.mixture_rdp([np.log(weight)], [moment(min_reporting)],
                               orders)
  if n == 1 or gamma == 1:  # k = n whenever the target joins
    return checkin.mixture_rdp([np.log(gamma)], [moment(n)], orders)
  groups = binomial.label_groups(n - 1, gamma, 1 - gamma, relative_width,
                                 checkin.MAX_CHECKIN_GROUPS, first=0)
  log_gamma = np.log(gamma)
  log_weights, rows = [], []
  for log_weight, start, _ in _small_counts(n - 1, gamma,
                                            int(groups.starts[0]) + 1, 1):
    log_weights.append(log_gamma + log_weight)
    rows.append(moment(start))
  with np.errstate(divide='ignore'):
    for start, weight in zip(groups.starts, groups.weights):
      log_weights.append(log_gamma + np.log(weight))
      rows.append(moment(int(start) + 1))
    # k > ends[-1] + 1: the moment of ends[-1] + 1, the largest of them.
    log_weights.append(log_gamma + np.log(groups.upper_tail))
    rows.append(moment(int(groups.ends[-1]) + 1))
  return checkin.mixture_rdp(log_weights, rows, orders)


def _liew_thm4_rdp(num_users: int, checkin_rate: float, sigma: float,
                   orders: np.ndarray, relative_width: float,
                   noise_count: Optional[int] = None) -> np.ndarray:
  """LIEW-THM4 with k = 0 [UB]: per count k, WBK19-THM9 at ratio k / n.

  The sum's noise is that of k shares, or of `noise_count` shares whatever
  k (SECAGG-REVEALED (v)). Counts are grouped [a, b] with the base of a and the
  ratio b / n (WBK19-THM9's bound grows with both).
  """
  n = num_users
  groups = binomial.label_groups(n, checkin_rate, 1 - checkin_rate,
                                 relative_width, checkin.MAX_CHECKIN_GROUPS,
                                 first=1)
  log_weights, rows = [], []

  def add(log_weight, count, ratio):
    if log_weight > -np.inf:
      base = lambda o: _gaussian_sum_rdp(sigma, noise_count or count, o)
      log_weights.append(log_weight)
      rows.append(checkin.log_wbk19_moment_unchecked(ratio, base, np.inf,
                                                     orders))

  # 1 <= k < starts[0] (k = 0 has moment 1 and adds nothing).
  for log_weight, start, end in _small_counts(n, checkin_rate,
                                              int(groups.starts[0]), 0):
    add(log_weight, start, end / n)
  with np.errstate(divide='ignore'):
    for start, end, weight in zip(groups.starts, groups.ends, groups.weights):
      add(np.log(weight), int(start), end / n)
    # k > ends[-1]: no subsampling gain claimed, the base of ends[-1].
    add(np.log(groups.upper_tail), int(groups.ends[-1]), 1.0)
  return (checkin.mixture_rdp(log_weights, rows, orders) if rows
          else np.zeros(orders.size))


def _hidden_count_rdp(num_users: int, checkin_rate: float, sigma: float,
                      orders: np.ndarray, relative_width: float,
                      min_reporting: Optional[int]) -> shuffle_round.RdpBound:
  """SECAGG-REVEALED (v) [UB]: every client uploads.

  The sum carries n (or >= m) shares.

  Without dropouts: revealing k is more information, and given k the
  participants are a uniform k-subset, so LIEW-THM4 applies with the noise
  of n shares; the round is also a post-processing of the other two models
  (add the non-participants' shares, drop who took part). With dropouts:
  no subsampling gain is claimed, the Gaussian sum of m shares (Renyi
  divergences are jointly quasi-convex).
  """
  if min_reporting is not None:
    return shuffle_round.smallest_bound(orders, {
        HIDDEN_COUNT_DROPOUTS: _gaussian_sum_rdp(sigma, min_reporting, orders)})
  hidden = distributed_checkin_rdp_upper_bound(
      num_users, checkin_rate, sigma, orders, relative_width, 'hidden')
  own = (_gaussian_sum_rdp(sigma, num_users, orders) if checkin_rate == 1
         else _liew_thm4_rdp(num_users, checkin_rate, sigma, orders,
                             relative_width, noise_count=num_users))
  return shuffle_round.smallest_bound(orders, {HIDDEN_COUNT: own,
                                               **hidden.candidates})


def distributed_checkin_rdp_upper_bound(
    num_users: int, checkin_rate: float, noise_multiplier: float, orders,
    relative_width: float = checkin.CHECKIN_RELATIVE_WIDTH,
    participation: str = events.DEFAULT_PARTICIPATION,
    min_reporting: Optional[int] = None) -> shuffle_round.RdpBound:
  """RDP of a round of distributed check-in: SECAGG-REVEALED or LIEW-THM4. [UB]

  Args:
    num_users: population size n >= 1.
    checkin_rate: participation probability gamma in (0, 1].
    noise_multiplier: per-participant sigma > 0 (clip norm C, noise sigma C).
    orders: RDP orders > 1.
    relative_width: relative width of groups of check-in counts.
    participation: 'revealed' (SECAGG-REVEALED, exact up to grouping), 'hidden'
      (LIEW-THM4 with k = 0) or 'hidden_count' (SECAGG-REVEALED (v)).
    min_reporting: None (no dropouts), or the fewest surviving shares m in
      [1, n] (SECAGG-REVEALED (iii), (v)).

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
  events.check_participation(participation)
  if min_reporting is not None:
    min_reporting = _validation.check_integer('min_reporting', min_reporting,
                                              1, n)
  if participation == 'hidden_count':
    return _hidden_count_rdp(n, checkin_rate, sigma, orders, relative_width,
                             min_reporting)
  # Hiding the participants is a post-processing of revealing them, so
  # SECAGG-REVEALED bounds both models; it is the only bound with dropouts
  # (SECAGG-REVEALED (iii)).
  candidates = {
      REVEALED if min_reporting is None else DROPOUTS: _revealed_rdp(
          n, checkin_rate, sigma, orders, relative_width, min_reporting),
      ONE_PARTICIPANT: _gaussian_sum_rdp(sigma, 1, orders)}
  if participation == 'revealed' or min_reporting is not None:
    return shuffle_round.smallest_bound(orders, candidates)
  if checkin_rate == 1:  # everyone reports: the Gaussian sum of n vectors
    return shuffle_round.smallest_bound(
        orders, {LIEW_THM4: _gaussian_sum_rdp(sigma, n, orders), **candidates})
  mixture = _liew_thm4_rdp(n, checkin_rate, sigma, orders, relative_width)
  return shuffle_round.smallest_bound(orders, {LIEW_THM4: mixture,
                                               **candidates})
