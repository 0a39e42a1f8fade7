"""A pair's privacy loss distribution as atoms, read by both routes.

IDs: TAILS-TO-INFINITY, KHH-SUBSAMPLED

A dominating pair (P, Q) is represented by its privacy loss distribution:
finite atoms (loss L = log P/Q, P-mass) plus a mass at +infinity
(TAILS-TO-INFINITY). The RDP route takes its moments, the PLD route discretizes
it on a grid (`pld.discrete.connect_the_dots`).
"""

from typing import Optional, Tuple

import attr
import numpy as np

__all__ = ['PldAtoms', 'grid_cell', 'subsampled_orders', 'loss_spread']


@attr.s(frozen=True, auto_attribs=True, eq=False)
class PldAtoms:
  """Privacy loss distribution of a pair: finite atoms and +infinity mass.

  Attributes:
    losses: finite privacy losses log(P/Q), 1-d float array.
    masses: their P-masses (upper bounds), same shape, >= 0.
    infinity_mass: P-mass of outcomes with Q-mass 0 or that were truncated
      (docs/mathematics.md TAILS-TO-INFINITY), >= 0.
  """
  losses: np.ndarray
  masses: np.ndarray
  infinity_mass: float


def grid_cell(losses: np.ndarray, discretization: float,
              overwrite: bool = False,
              out: Optional[np.ndarray] = None) -> np.ndarray:
  """Index of the grid point strictly below each loss, up to rounding.

  The tiny shift keeps connect-the-dots' beta >= 0 when a loss sits exactly
  on a grid point. `overwrite` reuses `losses` (a float64 array) as the
  scratch space; `out`, an int64 array of their shape (any strides), takes
  the indices.
  """
  scaled = losses if overwrite else np.array(losses, dtype=np.float64)
  scaled /= discretization
  scaled -= 1e-9
  if out is not None:
    return np.floor(scaled, out=out, casting='unsafe')
  return np.floor(scaled, out=scaled).astype(np.int64)


def subsampled_orders(atoms: PldAtoms, sampling_ratio: float
                      ) -> Tuple[PldAtoms, PldAtoms]:
  """KHH-SUBSAMPLED: both orders of (g P + (1-g) Q, Q) for a symmetric pair.

  [DOM, one order each] With g = m / N, a hidden uniform sample of m of N
  users (ZDW22 Prop. 30 as quoted in docs/mathematics.md): the first order has
  loss log(g e^l + 1 - g) with mass g P + (1 - g) Q = P (g + (1 - g) e^-l),
  the second loss -log(g e^l + 1 - g) with mass Q = P e^-l. The +infinity
  mass of `atoms` bounds that of both (truncated outputs have equal P and Q
  mass; outputs with Q = 0 keep at most their P-mass).
  """
  g = sampling_ratio
  mixed_loss = np.log1p(g * np.expm1(atoms.losses))
  first = PldAtoms(mixed_loss, atoms.masses * (g + (1 - g)
                                               * np.exp(-atoms.losses)),
                   atoms.infinity_mass)
  second = PldAtoms(-mixed_loss, atoms.masses * np.exp(-atoms.losses),
                    atoms.infinity_mass)
  return first, second


def loss_spread(atoms: PldAtoms) -> float:
  """Standard deviation of the finite privacy loss under P."""
  weights = atoms.masses / np.sum(atoms.masses)
  mean = np.sum(weights * atoms.losses)
  return float(np.sqrt(np.sum(weights * (atoms.losses - mean) ** 2)))
