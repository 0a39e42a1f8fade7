"""The computed numbers of docs/secure_sums.md."""

import functools
import math

from .core import power_of_ten
from .core import sig
from .core import table

# draft-case-ppm-binomial-dp's points (sensitivity 1) and the coin flips it
# cites from cpSGD's bound at delta = 1e-5 (the draft gives none at 1e-6;
# `cpsgd_trials` reproduces these three and computes the 1e-6 row).
BINOMIAL_EPSILONS = (3.0, 1.0, 0.1)
BINOMIAL_DELTAS = (1e-5, 1e-6)
CPSGD_TRIALS = {(3.0, 1e-5): 1272, (1.0, 1e-5): 1272, (0.1, 1e-5): 19608}
# The aggregator table: sensitivity 1, delta 1e-9, one or c aggregators.
AGGREGATOR_EPSILONS = (2.0, 1.0, 0.5, 0.1)
AGGREGATOR_DELTA = 1e-9
AGGREGATOR_COUNTS = (2, 3)


def _direct_delta(trials, epsilon):
  """delta(epsilon) of the exact pair, summed directly (no grid)."""
  from shuffle_accountants import events
  from shuffle_accountants.pld import noise_sums
  atoms, _ = noise_sums.worst_pair(events.BinomialSecureSumEvent(trials))
  return noise_sums.hockey_stick(atoms, epsilon)


@functools.lru_cache(maxsize=None)
def certified_trials(epsilon, delta):
  from shuffle_accountants import calibration
  return calibration.calibrate_num_trials(epsilon, delta)


@functools.lru_cache(maxsize=None)
def exact_trials(epsilon, delta):
  """The smallest N whose exact pair meets (epsilon, delta).

  Monotone in N (BINOMIAL-SUM (iv)): walk down from the certified N.
  """
  trials = certified_trials(epsilon, delta)
  while trials > 1 and _direct_delta(trials - 1, epsilon) <= delta:
    trials -= 1
  return trials


def cpsgd_epsilon(trials, delta, dimension=1):
  """cpSGD's published epsilon for Bin(N, 1/2) noise, sensitivity 1 [UB].

  Agarwal et al., cpSGD (NeurIPS 2018), Theorem 1 with p = 1/2, scale
  s = 1 and Delta_1 = Delta_2 = Delta_inf = 1, as draft-case-ppm-binomial-dp
  applies it; +inf where its condition N p (1 - p) >= max(23 log(10 d /
  delta), 2 Delta_inf / s) fails. A published bound, shown for comparison
  only: the library certifies the binomial mechanism by BINOMIAL-SUM.
  """
  p = 0.5
  variance = trials * p * (1 - p)
  if variance < max(23 * math.log(10 * dimension / delta), 2.0):
    return math.inf
  c_p = math.sqrt(2) * (3 * p**3 + 3 * (1 - p)**3 + 2 * p**2 + 2 * (1 - p)**2)
  b_p = 2 / 3 * (p**2 + (1 - p)**2) + (1 - 2 * p)
  d_p = 4 / 3 * (p**2 + (1 - p)**2)
  return (math.sqrt(2 * math.log(1.25 / delta) / variance)
          + (c_p * math.sqrt(math.log(10 / delta)) + b_p)
          / (variance * (1 - delta / 10))
          + (2 / 3 * math.log(1.25 / delta)
             + d_p * math.log(20 * dimension / delta) * math.log(10 / delta))
          / variance)


@functools.lru_cache(maxsize=None)
def cpsgd_trials(epsilon, delta):
  """The smallest N that cpSGD's Theorem 1 admits at (epsilon, delta).

  Its epsilon falls with N past the condition's threshold, so the smallest
  admissible N is found by doubling and bisection on the integers.
  """
  high = 1
  while cpsgd_epsilon(high, delta) > epsilon:
    high *= 2
  low = high // 2
  while high - low > 1:
    middle = (low + high) // 2
    if cpsgd_epsilon(middle, delta) > epsilon:
      low = middle
    else:
      high = middle
  return high


@table('secure_sums.binomial', slow=True)
def _binomial():
  header = ['ε', 'δ', 'exact N', 'certified N', 'certified / exact',
            "cpSGD's N (the draft's bound)", 'cpSGD / exact']
  rows = []
  for delta in BINOMIAL_DELTAS:
    for epsilon in BINOMIAL_EPSILONS:
      exact = exact_trials(epsilon, delta)
      certified = certified_trials(epsilon, delta)
      cpsgd = cpsgd_trials(epsilon, delta)
      rows.append([f'{epsilon:g}', f'{delta:g}', str(exact), str(certified),
                   sig(certified / exact, 4), str(cpsgd),
                   sig(cpsgd / exact, 3)])
  return header, rows


def analytic_gaussian_sigma(epsilon, delta, sensitivity=1.0):
  """Balle and Wang's analytic Gaussian: the continuous sigma (exact)."""
  from scipy import optimize
  from scipy import stats

  def gap(log_sigma):
    sigma = math.exp(log_sigma)
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return (stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b)
            - delta)
  return math.exp(optimize.brentq(gap, math.log(1e-3), math.log(1e5),
                                  xtol=1e-12))


def _discrete_sigma(epsilon, aggregators=1):
  from shuffle_accountants import calibration
  return calibration.calibrate_discrete_sigma(
      epsilon, AGGREGATOR_DELTA, num_aggregators=aggregators,
      trust='one-honest' if aggregators == 1 else 'all-honest',
      relative_tolerance=1e-3)


@table('secure_sums.aggregators', slow=True)
def _aggregators():
  header = ['ε', 'continuous analytic Gaussian σ (the draft\'s method)',
            'discrete Gaussian σ, one honest aggregator'] + [
                f'each of {count}, all honest' for count in AGGREGATOR_COUNTS]
  rows = []
  for epsilon in AGGREGATOR_EPSILONS:
    rows.append([f'{epsilon:g}',
                 sig(analytic_gaussian_sigma(epsilon, AGGREGATOR_DELTA)),
                 sig(_discrete_sigma(epsilon))]
                + [sig(_discrete_sigma(epsilon, count))
                   for count in AGGREGATOR_COUNTS])
  return header, rows


# The combined release's points: the DAP draft's client randomizer (basic
# RAPPOR, per-bit eps0 5: symmetric unary encoding with 2 x 5, d = 16) at
# two batch sizes, with one honest aggregator's sigma for eps = 1 and 0.5
# alone (the table above), delta 1e-9.
COMBINED_USERS = (10**3, 10**5)
COMBINED_BIT_EPSILON = 5.0
COMBINED_NOISE_EPSILONS = (1.0, 0.5)


def _combined_epsilons(num_users, sigma, deletion):
  """(reports alone, noise alone, together) at AGGREGATOR_DELTA."""
  from dp_accounting import NeighboringRelation

  from shuffle_accountants import events
  from shuffle_accountants import randomizers
  from shuffle_accountants.pld.accountant import ShufflePldAccountant
  relation = (NeighboringRelation.REPLACE_SPECIAL if deletion
              else NeighboringRelation.REPLACE_ONE)
  randomizer = randomizers.SymmetricUnaryEncoding(
      16, 2 * COMBINED_BIT_EPSILON)
  noise = events.DiscreteGaussianSumEvent(sigma)
  releases = [(events.SumOfReportsEvent(num_users, randomizer), 1),
              (noise, 1 if deletion else 2),
              (events.SumOfReportsEvent(num_users, randomizer,
                                        aggregator_noise=noise), 1)]
  return [ShufflePldAccountant(relation).compose(event, count)
          .get_epsilon(AGGREGATOR_DELTA) for event, count in releases]


@table('secure_sums.combined', slow=True)
def _combined():
  header = ['n', 'σ (one honest aggregator)', 'relation',
            'reports alone', 'noise alone', 'together (SUM-OF-BITS-WITH-NOISE)']
  rows = []
  for num_users in COMBINED_USERS:
    for noise_epsilon in COMBINED_NOISE_EPSILONS:
      sigma = float(sig(_discrete_sigma(noise_epsilon)))
      for deletion in (False, True):
        alone, noise, together = _combined_epsilons(num_users, sigma,
                                                    deletion)
        rows.append([power_of_ten(num_users), sig(sigma),
                     'deletion' if deletion else 'replace-one',
                     sig(alone), sig(noise), sig(together)])
  return header, rows
