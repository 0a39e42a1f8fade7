"""RDP of a sum-of-reports round of independent-bit reports.

IDs: SUM-OF-BITS, SUM-OF-BITS-DELETION, SUM-OF-BITS-WITH-NOISE,
PURE-DP-RDP-CAP

By SUM-OF-BITS (iv) the round's pair is, for every configuration, a product
of a member of coordinate x's family and a member of the reversed family,
and every member is a post-processing of its label group's pair. Renyi
divergences add over a product and cannot grow under post-processing, so
the largest group divergence of each family, summed, bounds the round at
every order [UB]. The +infinity mass of a group pair (its truncated
outputs) is charged the coordinate's largest loss, which bounds every
output's. Under deletion (SUM-OF-BITS-DELETION) one coordinate changes, in
either order: the larger of the two families' divergences bounds it.
With aggregator noise (SUM-OF-BITS-WITH-NOISE) the families carry the
noise, and the noise alone (two coordinates, or one under deletion, each
moved by at most 1) is a second candidate.
"""

import numpy as np

from shuffle_accountants import _numerics
from shuffle_accountants.pairs import sums
from shuffle_accountants.rdp import generic
from shuffle_accountants.rdp import noise_sums
from shuffle_accountants.rdp import shuffle_round

__all__ = ['SUM_OF_BITS_RDP', 'SUM_OF_BITS_DELETION_RDP',
           'sum_rdp_upper_bound']

SUM_OF_BITS_RDP = 'SUM-OF-BITS largest group divergence, both coordinates'
SUM_OF_BITS_DELETION_RDP = ('SUM-OF-BITS-DELETION largest group divergence, '
                            'coordinate x, both orders')


def _largest_divergence(family, largest_loss: float,
                        orders: np.ndarray) -> np.ndarray:
  """max over the family of D_order(P || Q), from atoms. [UB]"""
  best = np.zeros(orders.size)
  for atoms in family:
    exponents = (orders[:, None] - 1) * atoms.losses[None, :]
    log_moment = _numerics.log_sum_exp(
        np.concatenate([exponents + np.log(atoms.masses)[None, :],
                        ((orders - 1) * largest_loss
                         + np.log(max(atoms.infinity_mass, 1e-300)))[:, None]],
                       axis=1), axis=1)
    best = np.maximum(best, np.maximum(log_moment, 0.0) / (orders - 1))
  return best


def _families_divergence(num_users: int, p: float, q: float,
                         orders: np.ndarray, symmetric: bool, deletion: bool,
                         aggregator_noise) -> np.ndarray:
  """SUM-OF-BITS (iv) / SUM-OF-BITS-DELETION 3 from the families. [UB]"""
  width = sums.DEFAULT_RELATIVE_WIDTH
  # SUM-OF-BITS 6
  num_users = sums.computed_users(num_users, p, q, aggregator_noise)
  largest = sums.largest_loss(p, q)
  # Symmetric unary encoding (p + q = 1): the reversed family is the
  # family reflected (SUM-OF-BITS (iv)), with the same divergences.
  directions = (False,) if symmetric else (False, True)
  divergences = [_largest_divergence(
      sums.coordinate_family_atoms(num_users, p, q, width, reverse,
                                   aggregator_noise),
      largest, orders) for reverse in directions]
  if deletion:
    total = np.max(divergences, axis=0)
  else:
    total = sum(divergences) * (3 - len(directions))
  return np.asarray(total) * (1 + _numerics.RELATIVE_SAFETY_MARGIN)


def sum_rdp_upper_bound(num_users: int, p: float, q: float,
                        local_epsilon: float, orders: np.ndarray,
                        symmetric: bool, deletion: bool = False,
                        aggregator_noise=None) -> shuffle_round.RdpBound:
  """Per-order RDP bound of one round (SUM-OF-BITS, PURE-DP-RDP-CAP). [UB]

  `deletion`: under REPLACE_SPECIAL with the all-zero reference
  (SUM-OF-BITS-DELETION), the larger family's divergence, not the sum.
  `aggregator_noise`: the noise added to every coordinate
  (SUM-OF-BITS-WITH-NOISE), or None.
  """
  candidates = {shuffle_round.PURE_DP_CAP: generic.pure_dp_rdp_cap_unchecked(
      local_epsilon, orders)}
  if aggregator_noise is None or sums.noisy_family_computable(
      aggregator_noise):
    name = SUM_OF_BITS_DELETION_RDP if deletion else SUM_OF_BITS_RDP
    if aggregator_noise is not None:
      name = f'{sums.WITH_NOISE}: {name}'
    candidates[name] = (
        _families_divergence(num_users, p, q, orders, symmetric, deletion,
                             aggregator_noise))
  if aggregator_noise is not None:
    noise = noise_sums.noise_sum_rdp_upper_bound(aggregator_noise, orders)
    candidates[sums.NOISE_ALONE_DELETION if deletion else sums.NOISE_ALONE
               ] = noise.rdp * (1 if deletion else 2)
  return shuffle_round.smallest_bound(orders, candidates)
