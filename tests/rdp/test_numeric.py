"""NUM-BLANKET-RDP against exact Renyi divergences of a few shuffled reports.

The reference enumerates nothing from the library: the multiset of n reports
is read through its symmetrized ordered density, integrated on a grid
(Riemann sums of Gaussians on uniform grids are accurate far below the
tolerance), for every configuration of the other users (vertices: the
moment is jointly convex, so mixtures of the rounding never exceed them).
"""

import itertools
import math

import numpy as np
import pytest
from scipy import special

from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import SubsampledShuffleGaussianEvent
from shuffle_accountants import randomizers
from shuffle_accountants.rdp import numeric
from shuffle_accountants.rdp import routes

ORDERS = np.array([1.5, 2.0, 3.0, 5.0, 8.0])


def _log_density(points, means, sigma):
  """log of (1/n!) sum over orderings of prod_i N(means[pi(i)], sigma^2)."""
  terms = []
  for order in itertools.permutations(range(len(means))):
    terms.append(sum(-((coordinate - means[j]) / sigma)**2 / 2
                     for coordinate, j in zip(points, order)))
  return special.logsumexp(np.stack(terms), axis=0) - math.log(len(terms))


def exact_rdp(sigma, target, target_prime, others, orders, step):
  """Renyi divergence of the shuffled reports, target vs target_prime."""
  reach = 1 + 12 * sigma
  axis = np.arange(-reach, reach + step, step)
  points = np.meshgrid(*([axis] * (len(others) + 1)), indexing='ij',
                       sparse=True)
  log_p = _log_density(points, (target,) + tuple(others), sigma)
  log_q = _log_density(points, (target_prime,) + tuple(others), sigma)
  normal = -(len(others) + 1) * math.log(sigma * math.sqrt(2 * math.pi))
  log_cell = (len(others) + 1) * math.log(step)
  result = []
  for order in orders:
    moment = special.logsumexp(order * log_p + (1 - order) * log_q)
    result.append((moment + normal + log_cell) / (order - 1))
  return np.array(result)


@pytest.mark.parametrize('sigma', [1.0, 2.0])
def test_two_reports_randomized_rounding(sigma):
  bound = numeric.gaussian_shuffle_rdp_upper_bound(2, sigma, True, ORDERS)
  for other in (-1.0, 1.0):
    for target, prime in ((1.0, -1.0), (-1.0, 1.0)):
      truth = exact_rdp(sigma, target, prime, (other,), ORDERS, sigma / 20)
      assert np.all(bound >= truth * (1 - 1e-9)), (other, bound, truth)


def test_two_reports_plain_clipping():
  sigma = 1.5
  bound = numeric.gaussian_shuffle_rdp_upper_bound(2, sigma, False, ORDERS)
  for target, prime, other in ((1.0, -1.0, 0.0), (0.6, -0.2, 1.0),
                               (1.0, 0.3, -1.0), (-0.5, 1.0, 0.4)):
    truth = exact_rdp(sigma, target, prime, (other,), ORDERS, sigma / 20)
    assert np.all(bound >= truth * (1 - 1e-9)), (target, prime, other)


def test_three_reports_randomized_rounding():
  sigma = 2.0
  bound = numeric.gaussian_shuffle_rdp_upper_bound(3, sigma, True, ORDERS)
  gaussian = ORDERS * 2 / sigma**2
  for others in ((-1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)):
    truth = exact_rdp(sigma, 1.0, -1.0, others, ORDERS, sigma / 4)
    assert np.all(bound >= truth * (1 - 1e-9)), (others, bound, truth)
    assert np.all(truth < gaussian)  # the reference sees the shuffle's gain


def exact_hidden_sample_rdp(sigma, target, target_prime, others, orders,
                            step):
  """Renyi divergence of a hidden sample of two of three users, shuffled.

  The law of the two reports is the average over the three pairs of users
  of their shuffled law; user 0 holds `target` or `target_prime`.
  """
  reach = 1 + 12 * sigma
  axis = np.arange(-reach, reach + step, step)
  points = np.meshgrid(axis, axis, indexing='ij', sparse=True)

  def log_law(first):
    values = (first,) + tuple(others)
    return special.logsumexp(np.stack([
        _log_density(points, (values[i], values[j]), sigma)
        for i, j in ((0, 1), (0, 2), (1, 2))]), axis=0) - math.log(3)

  log_p, log_q = log_law(target), log_law(target_prime)
  normal = -2 * math.log(sigma * math.sqrt(2 * math.pi)) + 2 * math.log(step)
  return np.array([
      (special.logsumexp(order * log_p + (1 - order) * log_q) + normal)
      / (order - 1) for order in orders])


def test_hidden_sample_of_plainly_clipped_scalars():
  # SubsampledShuffleGaussianEvent(3, 2, sigma, dimension=1): WBK19-THM9 on
  # NUM-BLANKET-RDP's envelope, against every configuration tried.
  sigma = 1.0
  orders = np.array([2.0, 3.0, 5.0, 8.0])
  bound = routes.sampled_gaussian_bound(
      SubsampledShuffleGaussianEvent(3, 2, sigma, dimension=1), orders)
  assert routes.SAMPLED_SHUFFLE in bound.winners
  for target, prime, others in ((1.0, -1.0, (-1.0, -1.0)),
                                (1.0, -1.0, (1.0, -1.0)),
                                (-1.0, 1.0, (1.0, 1.0)),
                                (0.5, -1.0, (0.0, 1.0))):
    truth = exact_hidden_sample_rdp(sigma, target, prime, others, orders,
                                    sigma / 25)
    assert np.all(bound.rdp >= truth * (1 - 1e-9)), (others, bound, truth)
  # The reference sees both gains: below the shuffle of the pair alone.
  assert np.all(truth < numeric.gaussian_shuffle_rdp_upper_bound(
      2, sigma, False, orders))


def test_single_report_is_the_gaussian():
  # n = 1: the report itself, whose RDP is exactly 2 order / sigma^2.
  for sigma in (0.5, 2.0):
    bound = numeric.gaussian_shuffle_rdp_upper_bound(1, sigma, True, ORDERS)
    assert np.all(bound >= ORDERS * 2 / sigma**2 * (1 - 1e-12))


def _rdp_epsilon(num_users, sigma, rounds, randomized_rounding=True,
                 dimension=1):
  accountant = ShuffleRdpAccountant()
  accountant.compose(ShuffleEvent(
      num_users=num_users, randomizer=randomizers.GaussianRandomizer(
          sigma, dimension=dimension,
          randomized_rounding=randomized_rounding)), rounds)
  return accountant.get_epsilon(1e-6)


def test_rdp_route_gains_and_stays_above_the_pld_route():
  gaussian_only = _rdp_epsilon(10_000, 2.0, 10, False, dimension=2)
  shuffled = _rdp_epsilon(10_000, 2.0, 10)
  pld = ShufflePldAccountant()
  pld.compose(ShuffleEvent(num_users=10_000, randomizer=randomizers.
                           GaussianRandomizer(2.0, randomized_rounding=True)),
              10)
  # The values docs/mathematics.md (NUM-BLANKET-RDP) and docs/numeric.md cite.
  assert (round(shuffled, 1), round(gaussian_only, 1)) == (2.9, 20.6)
  assert round(pld.get_epsilon(1e-6), 2) == 0.27


def test_monotone_in_users_and_noise():
  by_users = [_rdp_epsilon(n, 2.0, 10) for n in (10**3, 10**6)]
  assert all(a >= b for a, b in zip(by_users, by_users[1:])), by_users
  by_noise = [_rdp_epsilon(10**4, s, 10, False) for s in (2.0, 5.0)]
  assert all(a >= b for a, b in zip(by_noise, by_noise[1:])), by_noise


def _partitions(total, largest=None):
  """Integer partitions of `total` (parts non-increasing)."""
  largest = total if largest is None else largest
  if total == 0:
    yield ()
    return
  for part in range(min(total, largest), 0, -1):
    for rest in _partitions(total - part, part):
      yield (part,) + rest


def all_minus_one_rdp(num_users, sigma, order):
  """Exact RDP at an integer order of the pair "target 1 vs -1, every other
  user at -1" (a lower bound on the worst case).

  The multiset's likelihood ratio is S / n, S = sum_i L(Y_i), L = e^{2Y /
  sigma^2}, Y_i iid N(-1, sigma^2) under the second dataset, so the moment
  is E[S^order] / n^order, with E[L^j] = e^{2 j (j - 1) / sigma^2} and
  E[S^order] a sum over the partitions of the order.
  """
  log_terms = []
  for parts in _partitions(order):
    k = len(parts)
    if k > num_users:
      continue
    log_falling = special.gammaln(num_users + 1) - special.gammaln(
        num_users - k + 1)
    multiplicities = np.unique(parts, return_counts=True)[1]
    log_count = (special.gammaln(order + 1)
                 - sum(special.gammaln(p + 1) for p in parts)
                 - sum(special.gammaln(m + 1) for m in multiplicities))
    log_moments = sum(2 * p * (p - 1) / sigma**2 for p in parts)
    log_terms.append(log_falling + log_count + log_moments)
  log_moment = special.logsumexp(log_terms) - order * math.log(num_users)
  return log_moment / (order - 1)


def test_all_minus_one_reference_is_the_known_second_order():
  # Order 2: log(1 + (e^{4 / sigma^2} - 1) / n), the classic closed form.
  for n, sigma in ((1, 2.0), (10, 1.0), (10**4, 2.0)):
    assert all_minus_one_rdp(n, sigma, 2) == pytest.approx(
        math.log1p(math.expm1(4 / sigma**2) / n), rel=1e-12)


@pytest.mark.parametrize('randomized_rounding', [True, False])
@pytest.mark.parametrize('sigma', [1.0, 2.0, 5.0])
def test_never_below_the_all_minus_one_pair(sigma, randomized_rounding):
  orders = np.arange(2, 9, dtype=float)
  for n in (100, 10**5):
    bound = numeric.gaussian_shuffle_rdp_upper_bound(
        n, sigma, randomized_rounding, orders)
    truth = np.array([all_minus_one_rdp(n, sigma, int(o)) for o in orders])
    assert np.all(bound >= truth), (n, bound, truth)
