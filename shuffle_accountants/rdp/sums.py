"""RDP of a sum-of-reports round of independent-bit reports.

IDs: SUM-OF-BITS, SUM-OF-BITS-DELETION, SUM-OF-BITS-WITH-NOISE,
PURE-DP-RDP-CAP

By SUM-OF-BITS (iv) the round's pair is, for every configuration, a product
of a member of coordinate x's family and a member of the reversed family,
and every member is a post-processing of its label group's pair. Renyi
divergences add over a product and cannot grow under post-processing, so
the largest group divergence of each family, summed, bounds the round at
every order [UB]; with two values (d = 2, SUM-OF-BITS (vii)) the largest
sum over each group and its partner group. The +infinity mass of a group
pair (its truncated outputs) is charged the coordinate's largest loss, which
bounds every output's. Under deletion (SUM-OF-BITS-DELETION) one coordinate
changes, in either order: the larger of the two families' divergences bounds it.
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


def _group_divergences(family, largest_loss: float,
                       orders: np.ndarray) -> np.ndarray:
  """D_order(P || Q) of each group pair (rows), from atoms. [UB]"""
  rows = []
  for atoms in family:
    exponents = (orders[:, None] - 1) * atoms.losses[None, :]
    log_moment = _numerics.log_sum_exp(
        np.concatenate([exponents + np.log(atoms.masses)[None, :],
                        ((orders - 1) * largest_loss
                         + np.log(max(atoms.infinity_mass, 1e-300)))[:, None]],
                       axis=1), axis=1)
    rows.append(np.maximum(log_moment, 0.0) / (orders - 1))
  return np.array(rows)


def _families_divergence(num_users: int, p: float, q: float,
                         orders: np.ndarray, symmetric: bool, deletion: bool,
                         aggregator_noise, two_values: bool) -> np.ndarray:
  """SUM-OF-BITS (iv), (vii) / SUM-OF-BITS-DELETION 3 from the families.
  [UB]"""
  width = sums.DEFAULT_RELATIVE_WIDTH
  # SUM-OF-BITS 6
  num_users = sums.computed_users(num_users, p, q, aggregator_noise)
  largest = sums.largest_loss(p, q)
  forward = _group_divergences(
      sums.coordinate_family_atoms(num_users, p, q, width, False,
                                   aggregator_noise), largest, orders)
  if two_values and not deletion:
    # SUM-OF-BITS (vii): each group meets its partner group only; for
    # symmetric unary encoding the partner is the group reflected.
    partners = forward if symmetric else _group_divergences(
        sums.partner_family_atoms(num_users, p, q, width, aggregator_noise),
        largest, orders)
    total = np.max(forward + partners, axis=0)
  elif symmetric:
    # The reversed family is the family reflected (SUM-OF-BITS (iv)), with
    # the same divergences.
    total = np.max(forward, axis=0) * (1 if deletion else 2)
  else:
    backward = np.max(_group_divergences(
        sums.coordinate_family_atoms(num_users, p, q, width, True,
                                     aggregator_noise), largest, orders),
        axis=0)
    largest_forward = np.max(forward, axis=0)
    total = (np.maximum(largest_forward, backward) if deletion
             else largest_forward + backward)
  return np.asarray(total) * (1 + _numerics.RELATIVE_SAFETY_MARGIN)


def sum_rdp_upper_bound(num_users: int, p: float, q: float,
                        local_epsilon: float, orders: np.ndarray,
                        symmetric: bool, deletion: bool = False,
                        aggregator_noise=None, two_values: bool = False
                        ) -> shuffle_round.RdpBound:
  """Per-order RDP bound of one round (SUM-OF-BITS, PURE-DP-RDP-CAP). [UB]

  `deletion`: under REPLACE_SPECIAL with the all-zero reference
  (SUM-OF-BITS-DELETION), the larger family's divergence, not the sum.
  `aggregator_noise`: the noise added to every coordinate
  (SUM-OF-BITS-WITH-NOISE), or None. `two_values`: the domain is {x, x'}
  (SUM-OF-BITS (vii)).
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
                             aggregator_noise, two_values))
  if aggregator_noise is not None:
    noise = noise_sums.noise_sum_rdp_upper_bound(aggregator_noise, orders)
    candidates[sums.NOISE_ALONE_DELETION if deletion else sums.NOISE_ALONE
               ] = noise.rdp * (1 if deletion else 2)
  return shuffle_round.smallest_bound(orders, candidates)
