"""Renyi moments of a symmetric privacy profile.

IDs: SYMMETRIZED-MOMENT [UB]

A Renyi moment is an integral of the hockey-stick profiles of both orders
(Liese-Vajda; docs/mathematics.md SYMMETRIZED-MOMENT), with H_a = H_a(p||q)
and H'_a = H_a(q||p):

  E_q[(p/q)^lam] = 1 + lam (lam - 1) int_0^inf [e^{(lam - 1) eps} H_{e^eps}
                                                + e^{-lam eps} H'_{e^eps}] deps,

increasing in both profiles. So one function b(eps) >= both orders' profiles
on eps >= 0 bounds the moment by the same integral with b in both places.
This module integrates two shapes of b in closed form:

* atoms: b = sum_i mu_i (1 - e^{eps - m_i})_+ (losses m_i > 0, masses mu_i),
  giving sum_i mu_i expm1((lam - 1) m_i) (1 - e^{-lam m_i}), the moment of
  the symmetric pair with that profile;
* a constant h on [0, t], giving h (lam expm1((lam - 1) t)
  + (lam - 1) (1 - e^{-lam t})).
"""

from typing import Optional

import numpy as np

from shuffle_accountants import _numerics

__all__ = ['symmetric_profile_log_moments', 'flat_profile_log_excess']

# Absolute error allowance of a log-sum-exp of moments (~1e-16 per term
# after pairwise summation, far below this), so rounding cannot lower them.
LOG_SUM_ERROR = 1e-14
# Moments are evaluated for this many (order, atom) values at a time.
_MAX_MOMENT_VALUES = 4_000_000


def symmetric_profile_log_moments(
    losses: np.ndarray, masses: np.ndarray, orders: np.ndarray,
    extra_log_excess: Optional[np.ndarray] = None) -> np.ndarray:
  """log E[(p/q)^order] bound when both orders' profiles are at most the
  atoms' (losses > 0, masses > 0) plus a part whose integral's log is
  `extra_log_excess` (one per order; -inf for none), rounded up. [UB]"""
  extra = (np.full(orders.size, -np.inf) if extra_log_excess is None
           else np.asarray(extra_log_excess, dtype=np.float64))
  if losses.size == 0:
    return np.logaddexp(0.0, extra) + LOG_SUM_ERROR
  largest = float(losses.max())

  def moments(start: int, chunk: np.ndarray) -> np.ndarray:
    result = np.empty(chunk.size)
    added = extra[start:start + chunk.size]
    # Orders whose terms cannot overflow are summed in linear space (fast).
    linear = ((chunk - 1) * largest < 600) & (added < 600)
    small, large = chunk[linear, None], chunk[~linear, None]
    result[linear] = np.log1p(np.sum(
        masses * np.expm1((small - 1) * losses) * -np.expm1(-small * losses),
        axis=1) + np.exp(added[linear]))
    if large.size:
      log_terms = (np.log(masses) + _numerics.log_expm1((large - 1) * losses)
                   + np.log(-np.expm1(-large * losses)))
      log_terms = np.concatenate([log_terms, added[~linear, None]], axis=1)
      result[~linear] = np.logaddexp(
          0.0, _numerics.log_sum_exp(log_terms, axis=1))
    return result
  step = max(1, _MAX_MOMENT_VALUES // losses.size)
  return np.concatenate([moments(i, orders[i:i + step])
                         for i in range(0, orders.size, step)]) + LOG_SUM_ERROR


def flat_profile_log_excess(height: float, end: float,
                            orders: np.ndarray) -> np.ndarray:
  """log of the integral of the profile `height` on [0, end]: log(h (lam
  expm1((lam - 1) t) + (lam - 1) (1 - e^{-lam t}))), -inf when h or t is
  0. [UB] (the caller adds LOG_SUM_ERROR once)"""
  if height <= 0 or end <= 0:
    return np.full(orders.size, -np.inf)
  rising = np.log(orders) + _numerics.log_expm1((orders - 1) * end)
  falling = np.log(orders - 1) + np.log(-np.expm1(-orders * end))
  return np.log(height) + np.logaddexp(rising, falling)
