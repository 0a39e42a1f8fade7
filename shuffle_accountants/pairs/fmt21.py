"""Closed forms of Feldman, McMillan and Talwar (2021).

IDs: FMT21-CLOSED, FMT-EQ10-11, LOCAL-GUARANTEE, GAUSS-PROFILE-LDP

FMT21-CLOSED [UB] (docs/mathematics.md): for pure eps0-LDP randomizers, if
eps0 < log(n / (16 log(4 / delta))) (the stricter condition of the official
code), the shuffle is (eps, delta)-DP with the official code's form
  eps = log(1 + (1 - e^-eps0) / (1 + e^{-eps0 - eps1}) (a + c)),
  a = 8 sqrt(e^eps0 log(4/delta) / n), c = 8 e^eps0 / n, eps1 = log(1 + a + c),
which is at least the paper's form. Otherwise only eps0 is certified.

FMT-EQ10-11 [UB] (docs/mathematics.md): for (eps0, delta0)-LDP randomizers
and the same condition with delta1 in place of delta, the shuffle is
(eps, delta1 + (e^eps0 + 1)(1 + e^-eps0 / 2) n delta0)-DP with eps the
paper's form log(1 + (e^eps0 - 1)/(e^eps0 + 1) (a + c)) at delta1. The
(e^eps0 + 1) factor is the conservative reading (docs/mathematics.md
LIEW-THM1-CONDITIONS).

GAUSS-PROFILE-LDP [UB] (docs/mathematics.md): a randomizer that is
(eps0, delta0(eps0))-LDP for every eps0 (the Gaussian's privacy profile) is
a valid input of FMT-EQ10-11 at every eps0; `local_profile_candidates`
keeps the best of a grid.
"""

from typing import Callable, List, Optional, Tuple

from dp_accounting.pld import common
from dp_accounting.pld import privacy_loss_distribution
import numpy as np

from shuffle_accountants import _validation
from shuffle_accountants.pairs import privacy_loss

__all__ = [
    'condition_holds_unchecked', 'closed_form_epsilon',
    'MAX_COMPOSED_GRID_POINTS', 'composed_closed_form_epsilon',
    'approximate_ldp_guarantee', 'epsilon_delta_pld_atoms',
    'approximate_ldp_candidates', 'LOCAL_EPSILON_GRID',
    'local_profile_candidates',
]

# delta1 values tried for FMT-EQ10-11; each valid one is a candidate bound.
_DELTA1_GRID = tuple(10.0 ** -np.arange(1.0, 16.5, 0.5))
# eps0 values tried along a randomizer's privacy profile (GAUSS-PROFILE-LDP):
# every point is valid, the grid only decides how close to the best one gets
# (below 1e-3 the amplified eps is below 1e-5; above 25 FMT-EQ10-11's
# condition needs n > 10^12).
LOCAL_EPSILON_GRID = np.geomspace(1e-3, 25.0, 400)
# One candidate is kept per level: the smallest eps whose delta is at most it.
_DELTA_LEVELS = 10.0 ** -np.arange(0.5, 16.5, 0.5)


def condition_holds_unchecked(num_users: int, local_epsilon: float,
                              delta: float) -> bool:
  return local_epsilon < np.log(num_users / (16 * np.log(4 / delta)))


def _amplification_terms(num_users, local_epsilon, delta):
  a = 8 * np.sqrt(np.exp(local_epsilon) * np.log(4 / delta) / num_users)
  c = 8 * np.exp(local_epsilon) / num_users
  return a, c


def closed_form_epsilon(num_users: int, local_epsilon: float,
                        delta: float) -> float:
  """FMT21-CLOSED (official code's form) [UB]; eps0 where it does not apply."""
  num_users = _validation.check_integer('num_users', num_users, 1)
  local_epsilon = _validation.check_local_epsilon(local_epsilon)
  delta = _validation.check_real('delta', delta, 0.0, 1.0, False, False)
  if not condition_holds_unchecked(num_users, local_epsilon, delta):
    return local_epsilon
  a, c = _amplification_terms(num_users, local_epsilon, delta)
  eps1 = np.log1p(a + c)
  return float(min(local_epsilon, np.log1p(
      -np.expm1(-local_epsilon) / (1 + np.exp(-local_epsilon - eps1))
      * (a + c))))


# Grid of the composed (eps, delta) pairs, and the most points it may span:
# its time and memory grow with the span, which grows with T eps_1 (costs:
# docs/performance.md).
_COMPOSITION_INTERVAL = 1e-3
MAX_COMPOSED_GRID_POINTS = 10**7


def composed_closed_form_epsilon(num_users: int, local_epsilon: float,
                                 rounds: int, delta: float) -> float:
  """T rounds of FMT21-CLOSED at delta/(2T) each, composed optimally. [UB]

  What users can assemble today from public pieces: each round is
  (eps_1, delta/(2T))-DP by FMT21-CLOSED, and dp_accounting's PLD composes
  the T (eps, delta) pairs (pessimistic discretization) at the remaining
  delta/2.

  Raises:
    ValueError: the composed PLD would span more than
      `MAX_COMPOSED_GRID_POINTS` grid points (2 T eps_1 / 1e-3).
  """
  rounds = _validation.check_integer('rounds', rounds, 1)
  delta = _validation.check_real('delta', delta, 0.0, 1.0, False, False)
  per_round_delta = delta / (2 * rounds)
  epsilon = closed_form_epsilon(num_users, local_epsilon, per_round_delta)
  points = 2 * rounds * epsilon / _COMPOSITION_INTERVAL
  if points > MAX_COMPOSED_GRID_POINTS:
    raise ValueError(
        f'rounds={rounds}: composing {rounds} rounds of eps_1 = {epsilon:.3g}'
        f' would span {points:.3g} PLD grid points, more than '
        f'{MAX_COMPOSED_GRID_POINTS:.0e} (memory); use ShufflePldAccountant.')
  pld = privacy_loss_distribution.from_privacy_parameters(
      common.DifferentialPrivacyParameters(epsilon, per_round_delta),
      value_discretization_interval=_COMPOSITION_INTERVAL)
  return float(pld.self_compose(rounds).get_epsilon_for_delta(delta))


def _approximate_ldp_terms(num_users, local_epsilon, local_delta, delta1):
  """FMT-EQ10-11 [UB], vectorized: (eps, delta) arrays, eps NaN where the
  condition fails (kernel of the two public forms below; trusts its input).

  The factor (e^x + 1), x = max(eps0, eps), covers both readings of
  FMT21's Theorem 3.8 (e^eps there, e^eps0 in [LHT]'s quote): eps <= eps0
  wherever the candidate can win, so the max changes no answer.
  """
  local_epsilon = np.asarray(local_epsilon, dtype=np.float64)
  delta1 = np.asarray(delta1, dtype=np.float64)
  holds = condition_holds_unchecked(num_users, local_epsilon, delta1)
  a, c = _amplification_terms(num_users, local_epsilon, delta1)
  epsilon = np.log1p(np.tanh(local_epsilon / 2) * (a + c))
  # Rounded up: a few ulps of the closed form.
  epsilon = epsilon * (1 + 1e-12)
  delta = delta1 + ((np.exp(np.maximum(local_epsilon, epsilon)) + 1)
                    * (1 + np.exp(-local_epsilon) / 2) * num_users
                    * np.asarray(local_delta, dtype=np.float64))
  return np.where(holds, epsilon, np.nan), delta * (1 + 1e-12)


def approximate_ldp_guarantee(num_users: int, local_epsilon: float,
                              local_delta: float, delta1: float
                              ) -> Optional[Tuple[float, float]]:
  """FMT-EQ10-11 [UB]: (eps, delta) of the shuffle, or None if it does not
  apply."""
  num_users = _validation.check_integer('num_users', num_users, 1)
  local_epsilon = _validation.check_local_epsilon(local_epsilon)
  local_delta = _validation.check_real('local_delta', local_delta, 0.0, 1.0)
  delta1 = _validation.check_real('delta1', delta1, 0.0, 1.0, False, False)
  epsilon, delta = _approximate_ldp_terms(num_users, local_epsilon,
                                          local_delta, delta1)
  if np.isnan(epsilon) or delta >= 1:
    return None
  return float(epsilon), float(delta)


def epsilon_delta_pld_atoms(epsilon: float, delta: float
                            ) -> privacy_loss.PldAtoms:
  """PLD of the canonical pair dominating every (eps, delta)-DP mechanism.

  [DOM] P = (delta, (1-delta) e^eps/(1+e^eps), (1-delta)/(1+e^eps), 0) and
  its mirror image Q: loss +inf with mass delta, +eps and -eps otherwise.
  """
  weight = 1 - delta
  upper = weight / (1 + np.exp(-epsilon))
  return privacy_loss.PldAtoms(np.array([epsilon, -epsilon]),
                            np.array([upper, weight - upper]), delta)


def approximate_ldp_candidates(num_users: int, local_epsilon: float,
                               local_delta: float
                               ) -> List[Tuple[str, privacy_loss.PldAtoms]]:
  """Named dominating pairs for shuffled (eps0, delta0)-LDP reports. [DOM each]

  The unamplified (eps0, delta0) (the shuffle is a post-processing of the
  reports) and one canonical (eps, delta) pair per delta1 at which
  FMT-EQ10-11 applies.
  """
  candidates = [('LOCAL-GUARANTEE',
                 epsilon_delta_pld_atoms(local_epsilon, local_delta))]
  for delta1 in _DELTA1_GRID:
    guarantee = approximate_ldp_guarantee(num_users, local_epsilon,
                                          local_delta, delta1)
    if guarantee is not None:
      candidates.append((f'FMT-EQ10-11(delta1={delta1:.1e})',
                         epsilon_delta_pld_atoms(*guarantee)))
  return candidates


def local_profile_candidates(num_users: int,
                             local_deltas: Callable[[np.ndarray], np.ndarray],
                             name: str
                             ) -> List[Tuple[str, privacy_loss.PldAtoms]]:
  """FMT-EQ10-11 along a randomizer's privacy profile (GAUSS-PROFILE-LDP).
  [DOM each]

  A randomizer that is (eps0, delta0(eps0))-LDP for every eps0 is, at each
  eps0 of `LOCAL_EPSILON_GRID` and delta1 of the FMT-EQ10-11 grid, a valid
  input of FMT-EQ10-11: every resulting (eps, delta) is a guarantee of the
  shuffle, so choosing among them is sound. Kept: for each half-decade
  level of delta, the smallest eps with delta at most that level, as its
  canonical (eps, delta) pair (`epsilon_delta_pld_atoms`). `local_deltas`
  maps eps0 values to delta0 values, rounded up.
  """
  local_epsilon, delta1 = np.meshgrid(LOCAL_EPSILON_GRID,
                                      np.asarray(_DELTA1_GRID))
  local_delta = np.broadcast_to(local_deltas(LOCAL_EPSILON_GRID),
                                local_epsilon.shape)
  epsilon, delta = _approximate_ldp_terms(num_users, local_epsilon,
                                          local_delta, delta1)
  usable = ~np.isnan(epsilon) & (delta < 1)
  epsilon, delta = epsilon[usable], delta[usable]
  local_epsilon, delta1 = local_epsilon[usable], delta1[usable]
  chosen = set()
  for level in _DELTA_LEVELS:
    within = np.flatnonzero(delta <= level)
    if within.size:
      chosen.add(int(within[np.argmin(epsilon[within])]))
  return [(f'{name} (eps0={local_epsilon[i]:.3g}, delta1={delta1[i]:.1e})',
           epsilon_delta_pld_atoms(float(epsilon[i]), float(delta[i])))
          for i in sorted(chosen, key=lambda i: epsilon[i])]
