"""The Renyi divergence of the Feldman-McMillan-Talwar clone pair.

IDs: KHH-RDP-CLONE, CLONE-MONOTONE, CLONE-RDP-SOUND

FMT21-CLONES [DOM] (docs/mathematics.md): for n users applying (possibly
adaptive) pure eps0-LDP randomizers and a uniform shuffle, under replace-one,
the pair

  C ~ Bin(n - 1, p), p = e^{-eps0};  A | C ~ Bin(C, 1/2);
  Delta ~ Bern(q), q = e^{eps0} / (e^{eps0} + 1);
  P = (A + Delta, C - A + 1 - Delta),  Q = (A + 1 - Delta, C - A + Delta)

dominates the shuffler: the shuffled output on either dataset is a
post-processing of P or Q. Given C = c, write a = first coordinate,
b = c + 1 - a:

  P_c(a) = B_{c+1}(a) 2 (q a + (1 - q) b) / (c + 1),
  L(a)   = log(P_c(a) / Q_c(a)) = log((e^{eps0} a + b) / (a + e^{eps0} b)).

KHH-RDP-CLONE [UB] (docs/mathematics.md): by data processing the exact Renyi
divergence of this pair is an RDP upper bound for the shuffler, at every real
order > 1 (docs/mathematics.md CLONE-RDP-SOUND), and it is usually 2-20x below
GIRGIS-UB1.
"""

from typing import List, Optional, Union

import numpy as np

from shuffle_accountants import _cache
from shuffle_accountants import _numerics
from shuffle_accountants import _validation
from shuffle_accountants.pairs import clone_pairs
from shuffle_accountants.rdp import generic

__all__ = [
    'conditional_log_excess', 'clone_pair_rdp', 'clone_pair_rdp_unchecked',
]

# Labels c with at most this many outputs are summed over every output.
_FULL_RANGE_OUTPUTS = 4096
# Largest order used to shift the output window towards the tilted mass;
# larger orders rely on the (sound, looser) tail bound and on the cap.
_WINDOW_SHIFT_MAX_ORDER = 4096.0
# Outputs per vectorised chunk (orders x outputs matrices stay small).
_CHUNK_OUTPUTS = 1 << 17


def _privacy_loss(outputs: np.ndarray, num_outputs: int,
                  local_epsilon: float) -> np.ndarray:
  """L(a) = log((e^eps0 a + b) / (a + e^eps0 b)), b = num_outputs - a,
  via log1p."""
  other = num_outputs - outputs
  expm1_eps = np.expm1(local_epsilon)
  return np.log1p(expm1_eps * (outputs - other)
                  / (outputs + np.exp(local_epsilon) * other))


def conditional_log_excess(clones: int, local_epsilon: float,
                            orders: np.ndarray) -> np.ndarray:
  """Upper bound on log(M_c - 1), M_c = sum_a P_c(a)^order Q_c(a)^(1-order).

  M_c - 1 = sum_a P_c(a) (exp((order - 1) L(a)) - 1). Outputs a below the
  window have L(a) <= 0 and contribute <= 0, so they are dropped; outputs
  above it are bounded chunk by chunk with a Chernoff bound on their P-mass
  and the largest loss of the chunk (L increases in a).
  """
  num_outputs = clones + 1  # a ranges over {0, ..., clones + 1}
  tanh_half = np.tanh(local_epsilon / 2)  # 2q - 1
  if num_outputs + 1 <= _FULL_RANGE_OUTPUTS:
    lo, hi = 0, num_outputs
  else:
    half_width = np.sqrt(num_outputs * _numerics.WINDOW_TAU / 2.0) + 2.0
    shift = min(orders.max(), _WINDOW_SHIFT_MAX_ORDER) * tanh_half
    lo = int(max(0, np.floor(num_outputs / 2 - half_width)))
    hi = int(min(num_outputs, np.ceil(num_outputs / 2 + half_width + shift)))
  outputs = np.arange(lo, hi + 1, dtype=np.float64)
  # P_c(a) = B_{c+1}(a) (e^eps0 a + b) / ((e^eps0 + 1) (c + 1) / 2); the window
  # pmf is normalised, so each entry is >= the true one.
  log_binomial = _numerics.binomial_window_log_pmf(num_outputs, 0.5, 0.5,
                                                   lo, hi)
  log_mass = (log_binomial
              + np.log(np.exp(local_epsilon) * outputs + num_outputs - outputs)
              - np.logaddexp(local_epsilon, 0.0) - np.log(num_outputs / 2.0))
  losses = _privacy_loss(outputs, num_outputs, local_epsilon)
  exponent_scale = orders - 1

  # Orders whose terms cannot overflow are summed in linear space (fast);
  # the others in log space.
  linear = exponent_scale * local_epsilon < 600.0
  positive = np.zeros(orders.size)
  log_positive_big = np.full(orders.size, -np.inf)
  negative = np.zeros(orders.size)
  mass = np.exp(log_mass)
  for begin in range(0, outputs.size, _CHUNK_OUTPUTS):
    chunk = slice(begin, begin + _CHUNK_OUTPUTS)
    x = exponent_scale[:, None] * losses[None, chunk]
    terms = mass[None, chunk] * np.expm1(np.minimum(x, 600.0))
    positive += np.where(linear, np.sum(np.maximum(terms, 0.0), axis=1), 0.0)
    negative += np.sum(np.minimum(terms, 0.0), axis=1)
    if not np.all(linear):
      big = x[~linear]
      with np.errstate(divide='ignore'):
        log_terms = np.where(big > 0, log_mass[None, chunk]
                             + _numerics.log_expm1(np.maximum(big, 1e-300)),
                             -np.inf)
      log_positive_big[~linear] = np.logaddexp(
          log_positive_big[~linear], _numerics.log_sum_exp(log_terms, axis=1))
  with np.errstate(divide='ignore'):
    log_positive = np.where(linear, np.log(positive), log_positive_big)

  # Outputs above the window, in chunks of doubling width.
  if hi < num_outputs:
    granule = max(1, int(np.sqrt(num_outputs)) // 8)
    chunk_starts: Union[List[int], np.ndarray]
    chunk_starts = [hi + 1]
    while chunk_starts[-1] <= num_outputs:
      chunk_starts.append(chunk_starts[-1]
                          + granule * 2 ** (len(chunk_starts) - 1))
    chunk_starts = np.array(chunk_starts, dtype=np.float64)
    chunk_ends = np.minimum(chunk_starts[1:] - 1, num_outputs)
    chunk_starts = chunk_starts[:-1]
    # P_c(a >= t) <= P[Bin(c, 1/2) >= t - 1] since a = Bin(c, 1/2) + Delta.
    log_tail = _numerics.log_upper_tail_bound(clones, 0.5, 0.5,
                                              chunk_starts - 1)
    worst_loss = _privacy_loss(chunk_ends, num_outputs, local_epsilon)
    tail_terms = log_tail[None, :] + _numerics.log_expm1(
        exponent_scale[:, None] * worst_loss[None, :])
    log_positive = np.logaddexp(log_positive,
                                _numerics.log_sum_exp(tail_terms, axis=1))

  # The window pmf was normalised up by 1/(window mass) <= 1/(1 - outside);
  # the negative part therefore shrinks by at most that factor.
  log_outside = np.logaddexp(
      _numerics.log_lower_tail_bound(num_outputs, 0.5, 0.5, lo - 1),
      _numerics.log_upper_tail_bound(num_outputs, 0.5, 0.5, hi + 1))
  negative *= 1.0 - min(1.0, float(np.exp(log_outside)))
  # Rounding: every summand is accurate to far better than 1e-12 relative, so
  # E <= S_pos (1 + 1e-12) + negative + 1e-12 |negative|, kept in log space
  # (S_pos itself may be e^1000).
  rounding = 1e-12
  with np.errstate(over='ignore', divide='ignore'):
    ratio = (negative + rounding * np.abs(negative)) * np.exp(-log_positive)
    log_excess = (log_positive + np.log1p(rounding)
                  + np.log1p(np.maximum(ratio / (1 + rounding), -1.0)))
    fallback = np.log(rounding) + np.logaddexp(log_positive,
                                               np.log(np.abs(negative)))
  return np.where(ratio / (1 + rounding) > -1.0, log_excess, fallback)


# Rounds with similar populations share most anchor labels of the mixture
# (`_numerics.log_binomial_mixture_excess`); each entry is one float per order.
@_cache.cached(16 * 2**20, _cache.atoms_bytes)
def _shared_conditional_log_excess(clones: int, local_epsilon: float,
                                   orders_bytes: bytes) -> np.ndarray:
  excess = conditional_log_excess(clones, local_epsilon,
                                   np.frombuffer(orders_bytes))
  excess.setflags(write=False)
  return excess


def clone_pair_rdp(num_users: int, local_epsilon: float, orders,
                   relative_block_width: float = 1e-3,
                   tolerance: float = 1e-7,
                   clone_probability: Optional[float] = None) -> np.ndarray:
  """KHH-RDP-CLONE: Renyi divergence of the FMT21 clone pair. [UB]

  An upper bound on the RDP of shuffling `num_users` pure `local_epsilon`-LDP
  reports (replace-one, adaptive randomizers allowed), valid at every real
  order > 1. Exact up to two sound approximations that can only increase it:

  * clone counts are grouped in blocks of relative width
    `relative_block_width`, each represented by its smallest count (the
    conditional divergence is non-increasing in the count, docs/mathematics.md
    CLONE-MONOTONE), and blocks far in the tails are bounded by binary
    randomized response;
  * probability mass outside computed windows is bounded (Chernoff) and
    charged at the largest privacy loss it can have (docs/mathematics.md
    TAILS-TO-INFINITY).

  For num_users <= 2000 no grouping occurs, and with a small `tolerance` the
  value equals the definition up to rounding.

  Args:
    num_users: n >= 1.
    local_epsilon: eps0 >= 0 (pure LDP).
    orders: RDP orders > 1.
    relative_block_width: in (0, 0.1]; smaller is tighter and slower.
    tolerance: in (0, 1e-2]; exact evaluations are added until the grouping
      slack is below about this fraction of the result (tightness only).
    clone_probability: None for FMT21's e^-eps0, or 2 s(R) for a randomizer
      with clone rate s(R) (NAMED-CLONE-RATE; the conditional pairs do not
      change).

  Returns:
    Upper bounds on the RDP, one per order.
  """
  return clone_pair_rdp_unchecked(
      _validation.check_integer('num_users', num_users, 1),
      _validation.check_local_epsilon(local_epsilon),
      _validation.check_orders(orders),
      _validation.check_real('relative_block_width', relative_block_width,
                             0.0, 0.1, min_inclusive=False),
      _validation.check_real('tolerance', tolerance, 0.0, 1e-2,
                             min_inclusive=False),
      clone_probability)


def clone_pair_rdp_unchecked(num_users: int, local_epsilon: float,
                             orders: np.ndarray,
                             relative_block_width: float = 1e-3,
                             tolerance: float = 1e-7,
                             clone_probability: Optional[float] = None
                             ) -> np.ndarray:
  """`clone_pair_rdp` on checked arguments (`clone_probability` is checked
  here: `clone_pairs.clone_probabilities`)."""
  if local_epsilon == 0:
    return np.zeros(orders.size)
  cap = generic.pure_dp_rdp_cap_unchecked(local_epsilon, orders)
  # With zero clones the pair is binary randomized response: M_0 = e^{(o-1)cap}.
  log_worst = _numerics.log_expm1((orders - 1) * cap)
  p, one_minus_p = clone_pairs.clone_probabilities(local_epsilon,
                                                 clone_probability)
  log_excess = _numerics.log_binomial_mixture_excess(
      num_users - 1, p, one_minus_p, orders,
      lambda clones, o: _shared_conditional_log_excess(
          clones, local_epsilon, np.ascontiguousarray(o, np.float64).tobytes()),
      log_worst, relative_block_width, gap_tolerance=tolerance)
  rdp = np.logaddexp(0.0, log_excess) / (orders - 1)
  return rdp * (1 + _numerics.RELATIVE_SAFETY_MARGIN)
