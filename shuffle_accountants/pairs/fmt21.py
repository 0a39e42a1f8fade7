"""Closed forms of Feldman, McMillan and Talwar (2021).

IDs: FMT21-CLOSED, FMT-EQ10-11, LOCAL-GUARANTEE

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
"""

from typing import List, Optional, Tuple

from dp_accounting.pld import common
from dp_accounting.pld import privacy_loss_distribution
import numpy as np

from shuffle_accountants import _validation
from shuffle_accountants.pairs import privacy_loss

__all__ = [
    'condition_holds_unchecked', 'closed_form_epsilon',
    'MAX_COMPOSED_GRID_POINTS', 'composed_closed_form_epsilon',
    'approximate_ldp_guarantee', 'epsilon_delta_pld_atoms',
    'approximate_ldp_candidates',
]

# delta1 values tried for FMT-EQ10-11; each valid one is a candidate bound.
_DELTA1_GRID = tuple(10.0 ** -np.arange(1.0, 16.5, 0.5))


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


def approximate_ldp_guarantee(num_users: int, local_epsilon: float,
                              local_delta: float, delta1: float
                              ) -> Optional[Tuple[float, float]]:
  """FMT-EQ10-11 [UB]: (eps, delta) of the shuffle, or None if it does not apply."""
  num_users = _validation.check_integer('num_users', num_users, 1)
  local_epsilon = _validation.check_local_epsilon(local_epsilon)
  local_delta = _validation.check_real('local_delta', local_delta, 0.0, 1.0)
  delta1 = _validation.check_real('delta1', delta1, 0.0, 1.0, False, False)
  if not condition_holds_unchecked(num_users, local_epsilon, delta1):
    return None
  a, c = _amplification_terms(num_users, local_epsilon, delta1)
  epsilon = np.log1p(np.tanh(local_epsilon / 2) * (a + c))
  delta = delta1 + ((np.exp(local_epsilon) + 1)
                    * (1 + np.exp(-local_epsilon) / 2) * num_users
                    * local_delta)
  if delta >= 1:
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
