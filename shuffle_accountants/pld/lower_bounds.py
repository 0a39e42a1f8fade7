"""[LB, PAIR] ε of one specific pair: shuffled binary RR on all-equal data (D10's pair, composed).

D = (0, ..., 0) and D' = (0, ..., 0, 1), each user reporting through binary
randomized response with parameter eps0; the shuffler reveals only the number
k of ones. Under D, k ~ Bin(n, p) with p = 1/(e^eps0 + 1), and
M(D')(k) / M(D)(k) = (k e^eps0 + (n-k) e^-eps0) / n (the GIRGIS-LB pair,
docs/mathematics.md D10). Binary RR is an eps0-LDP randomizer and this is one neighbouring
pair, so the ε(δ) of its T-fold composition is a lower bound on what any
certified accountant can report for shuffled eps0-LDP rounds. [LB, PAIR]
"""

import math

import numpy as np
from dp_accounting.pld import privacy_loss_distribution

from shuffle_accountants import _numerics
from shuffle_accountants import _validation

# Outcomes whose probability under D' is below e^-60 are dropped: that can only
# lower δ(ε), which keeps the result a lower bound.
_LOG_MASS_FLOOR = -60.0
_WINDOW_TAU = 40.0
_MAX_INTERVAL = 1e-3


def binary_rr_all_equal_pair_epsilon_lower_bound(
    num_users: int, local_epsilon: float, rounds: int, delta: float,
    grid_points_per_std: float = 5.0) -> float:
  """ε(δ) of T rounds of shuffled binary RR on the all-equal pair. [LB, PAIR]

  Computed with dp_accounting's optimistic PLD (losses rounded down, tiny
  masses dropped, optimistic FFT truncation), so every numerical error lowers
  the value: a lower bound, never a guarantee. Both directions of the pair
  are composed and the larger ε is returned.

  Rounding losses down biases T rounds by up to T grid steps, so the grid
  step is the per-round loss standard deviation over
  `grid_points_per_std` * sqrt(T) (and at most 1e-3): the bias
  stays a small fraction of the composed loss's spread.

  Args:
    num_users: n >= 1.
    local_epsilon: eps0 >= 0.
    rounds: T >= 1 identical rounds.
    delta: target δ in (0, 1).
    grid_points_per_std: grid resolution, see above.
  """
  num_users = _validation.check_integer('num_users', num_users, 1)
  local_epsilon = _validation.check_real('local_epsilon', local_epsilon, 0.0)
  rounds = _validation.check_integer('rounds', rounds, 1)
  delta = _validation.check_real('delta', delta, 0.0, 1.0, False, False)
  if local_epsilon == 0:
    return 0.0
  p = 1.0 / (math.exp(local_epsilon) + 1)
  one_minus_p = 1.0 / (math.exp(-local_epsilon) + 1)
  lo, hi = _numerics.hoeffding_window(num_users, p, tau=_WINDOW_TAU)
  ones = np.arange(lo, hi + 1, dtype=np.float64)
  # The window pmf is normalised to one, so each entry is above the truth;
  # scaling by the window's least mass, 1 - 2e^-tau, puts it below again.
  log_pmf = (_numerics.binomial_window_log_pmf(num_users, p, one_minus_p, lo,
                                               hi)
             + math.log1p(-2 * math.exp(-_WINDOW_TAU)))
  log_ratio = np.log1p((ones - num_users * p) * 2 * math.sinh(local_epsilon)
                       / num_users)
  loss_std = math.sqrt(float(np.sum(np.exp(log_pmf) * log_ratio**2)))
  # Few, far-apart atoms (small n) need an absolute resolution too.
  interval = min(loss_std / (grid_points_per_std * math.sqrt(rounds)),
                 _MAX_INTERVAL)
  keep = np.minimum(log_pmf, log_pmf + log_ratio) > _LOG_MASS_FLOOR
  without_one = dict(zip(ones[keep].tolist(), log_pmf[keep].tolist()))
  with_one = dict(zip(ones[keep].tolist(),
                      (log_pmf + log_ratio)[keep].tolist()))
  epsilon = 0.0
  for lower, upper in ((without_one, with_one), (with_one, without_one)):
    pld = privacy_loss_distribution.from_two_probability_mass_functions(
        lower, upper, pessimistic_estimate=False,
        value_discretization_interval=interval,
        log_mass_truncation_bound=_LOG_MASS_FLOOR)
    if rounds > 1:
      pld = pld.self_compose(rounds)
    epsilon = max(epsilon, float(pld.get_epsilon_for_delta(delta)))
  return epsilon
