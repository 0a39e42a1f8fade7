"""Random allocation of Gaussian steps: Feldman and Shenfeld's certified PLD, on the accountant's grid (FS26-RANDOM-ALLOCATION, D21).

The PLD of one epoch under add/remove comes from the `PLD_accounting`
package (the authors' maintained implementation, MIT; extra `samplers`) in
its dominating mode (`BoundType.DOMINATES`: losses rounded up, truncated
tails moved to +infinity). Its two directions are moved to the
accountant's grid by rounding every loss up, and merged into one PMF whose
delta profile is the larger of the two at every grid point (D21), so the
result dominates both orders of the pair and composes like any other
symmetric round.
"""

import functools
from typing import Tuple

import numpy as np

from shuffle_accountants.pld import discrete

# PLD_accounting's loss discretization per unit of the accountant's
# relative_accuracy (default 1e-3 -> 0.015). The reported epsilon falls with
# it (sigma = 1, 1 of 1000 steps, delta = 1e-6: 0.187 at 0.05, 0.1764 at
# 0.015; sigma = 2: 0.0640 at 0.015, 0.0608 at 0.005) and the time rises as
# about its inverse square (0.015: ~10 s at t = 1000).
LOSS_DISCRETIZATION_PER_ACCURACY = 15.0
LOSS_DISCRETIZATION = LOSS_DISCRETIZATION_PER_ACCURACY * 1e-3

INSTALL_HINT = ('random allocation needs the PLD_accounting package: pip '
                 'install "shuffle-accountants[samplers]" (or '
                 '"PLD_accounting[performance]>=2,<3").')


def _package():
  try:
    import PLD_accounting  # pylint: disable=g-import-not-at-top,import-outside-toplevel
  except ImportError as error:
    raise ImportError(INSTALL_HINT) from error
  return PLD_accounting


def is_available() -> bool:
  try:
    _package()
  except ImportError:
    return False
  return True


def to_grid(pmf, discretization: float) -> discrete.GridPmf:
  """A dp_accounting PMF moved to the grid {i d} by rounding losses up. [DOM]

  Raising every loss raises delta(eps) = E[(1 - e^{eps - L})_+] at every
  eps, so the result dominates the input.
  """
  dense = pmf.to_dense_pmf()
  # pylint: disable=protected-access
  probs = np.maximum(np.asarray(dense._probs, dtype=np.float64), 0.0)
  losses = (dense._lower_loss + np.arange(probs.size)) * dense._discretization
  infinity_mass = float(dense._infinity_mass)
  # pylint: enable=protected-access
  # +1e-9: the float quotient is within ~1e-10 of the true one here, so the
  # ceiling is never below the loss.
  index = np.ceil(losses / discretization + 1e-9).astype(np.int64)
  lower = int(index.min())
  return discrete.GridPmf(discretization, lower,
                          np.bincount(index - lower, weights=probs),
                          infinity_mass)


def gaussian_allocation_grid_pmf(noise_multiplier: float, num_selected: int,
                                 num_steps: int, discretization: float,
                                 loss_discretization: float = (
                                     LOSS_DISCRETIZATION)
                                 ) -> discrete.GridPmf:
  """One epoch's dominating PMF on the grid, both orders (add/remove). [DOM]"""
  return _cached_pmf(float(noise_multiplier), int(num_selected),
                     int(num_steps), float(discretization),
                     float(loss_discretization))


@functools.lru_cache(maxsize=32)
def _cached_pmf(noise_multiplier: float, num_selected: int, num_steps: int,
                discretization: float, loss_discretization: float
                ) -> discrete.GridPmf:
  remove, add = _package_pmfs(noise_multiplier, num_selected, num_steps,
                              loss_discretization)
  return discrete.largest_profile([to_grid(remove, discretization),
                                   to_grid(add, discretization)])


@functools.lru_cache(maxsize=32)
def _package_pmfs(noise_multiplier: float, num_selected: int, num_steps: int,
                  loss_discretization: float) -> Tuple[object, object]:
  """PLD_accounting's dominating PMFs (remove, add) of one epoch."""
  pld = _epoch_pld(noise_multiplier, num_selected, num_steps,
                   loss_discretization, 'DOMINATES')
  return pld._pmf_remove, pld._pmf_add  # pylint: disable=protected-access


def _epoch_pld(noise_multiplier: float, num_selected: int, num_steps: int,
               loss_discretization: float, bound_type: str):
  """PLD_accounting's PLD of one epoch (geometric convolution)."""
  package = _package()
  config = package.AllocationSchemeConfig(
      loss_discretization=loss_discretization,
      convolution_method=package.ConvolutionMethod.GEOM)
  params = package.PrivacyParams(sigma=noise_multiplier, num_steps=num_steps,
                                 num_selected=num_selected, num_epochs=1)
  return package.gaussian_allocation_pld(
      params=params, config=config,
      bound_type=getattr(package.BoundType, bound_type))


def epsilon_lower_bound(noise_multiplier: float, num_selected: int,
                        num_steps: int, num_epochs: int, delta: float) -> float:
  """A lower bound on epsilon: PLD_accounting's dominated PLD. [LB]

  `BoundType.IS_DOMINATED` with the geometric convolution rounds every
  step down (FS26-RANDOM-ALLOCATION), so its epsilon is at most the true
  one. Epochs are composed by dp_accounting, which keeps an optimistic
  PMF optimistic (truncated mass dropped). For tables and tests; never
  composed into an accountant.
  """
  pld = _dominated_epoch(float(noise_multiplier), int(num_selected),
                         int(num_steps))
  if num_epochs > 1:
    pld = pld.self_compose(num_epochs)
  return float(pld.get_epsilon_for_delta(delta))


@functools.lru_cache(maxsize=8)
def _dominated_epoch(noise_multiplier: float, num_selected: int,
                     num_steps: int):
  pld = _epoch_pld(noise_multiplier, num_selected, num_steps,
                   LOSS_DISCRETIZATION, 'IS_DOMINATED')
  # pylint: disable=protected-access
  if pld._pmf_remove._pessimistic_estimate or pld._pmf_add._pessimistic_estimate:
    raise ValueError('internal error: PLD_accounting returned a pessimistic '
                     'PMF for IS_DOMINATED; it cannot serve as a lower bound.')
  return pld
