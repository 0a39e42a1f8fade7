"""The PLD of a sum-of-reports round, and its exact-configuration lower bound.

IDs: SUM-OF-BITS, SUM-OF-BITS-DELETION, SUM-OF-BITS-WITH-NOISE,
LB-SUM-CONFIGURATIONS, LB-SUM-DELETION, ROUNDOFF-CERTIFIED

A round of `SumOfReportsEvent` with independent-bit reports (unary
encodings) is dominated by env ⊗ rev(env') (SUM-OF-BITS (iv)): env the
largest profile over the label groups of coordinate x's family, env' that
of the reversed family (coordinate x'). The two are convolved into one
grid PMF, whose profile holds for both orders of the neighbouring pair.
With two values (d = 2) each group meets one partner group of x'
(SUM-OF-BITS (vii)): the largest profile of the groups' products.
k-RR reports are the shuffle's release (SUM-OF-BITS (v)): their round is
`ShuffleEvent`'s. Under deletion (`pairs.sums.SumUnderDeletion`) the round
is dominated by one PMF whose profile is the largest of env and env'
(SUM-OF-BITS-DELETION): one coordinate, both orders. With aggregator
noise the families carry it (SUM-OF-BITS-WITH-NOISE); `candidates` also
takes the noise alone.
"""

import math
from typing import List, Optional, Tuple

import numpy as np

from shuffle_accountants import _numerics
from shuffle_accountants import _validation
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pairs import sums
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import lower_bounds
from shuffle_accountants.pld import radix2
from shuffle_accountants.pld import roundoff

__all__ = ['composed', 'sum_round_pmf', 'deletion_round_pmf',
           'sum_round_scales', 'sum_release_lower_bound']

# Convolutions of at most this many products are summed directly.
_DIRECT_PRODUCTS = 10**8
# Grid masses below this are moved to +infinity before a convolution.
_NEGLIGIBLE_MASS = 1e-150
# A group pair's atoms of smaller P-mass are moved to +infinity (a few
# hundred per group at most: below 1e-17 in delta, far under every delta
# asked).
_LIGHT_ATOM = 1e-20


def _without_light_atoms(atoms: privacy_loss.PldAtoms
                         ) -> privacy_loss.PldAtoms:
  """`atoms` with those of P-mass below `_LIGHT_ATOM` at +infinity.

  TAILS-TO-INFINITY [DOM]. Where one binomial's window ends inside the
  other's (sparse bits: p and q small), the last outcomes carry a large
  loss and almost no mass, and would widen every group's grid a
  hundredfold.
  """
  light = atoms.masses < _LIGHT_ATOM
  if not np.any(light):
    return atoms
  return privacy_loss.PldAtoms(
      atoms.losses[~light], atoms.masses[~light],
      (atoms.infinity_mass + math.fsum(atoms.masses[light]))
      * (1 + _numerics.RELATIVE_SAFETY_MARGIN))


def _group_pmfs(family, discretization: float,
                discretize: checkin.Discretize) -> List[discrete.GridPmf]:
  """Each group pair's grid PMF (light atoms at +infinity first)."""
  return [discretize(_without_light_atoms(atoms), discretization)
          for atoms in family]


def _envelope(family, discretization: float,
              discretize: checkin.Discretize) -> discrete.GridPmf:
  """One PMF whose profile is at least every group pair's."""
  return discrete.largest_profile(
      _group_pmfs(family, discretization, discretize))


def _convolve(first: np.ndarray, second: np.ndarray) -> np.ndarray:
  """Upper bounds on the convolution of two non-negative vectors.

  Direct sums when short; else the proven radix-2 FFT with its round-off
  bound added to every entry (ROUNDOFF-CERTIFIED (iii)).
  """
  if first.size * second.size <= _DIRECT_PRODUCTS:
    return np.convolve(first, second)
  size = first.size + second.size - 1
  length = 1 << (size - 1).bit_length()
  spectra: List[np.ndarray] = []
  for values in (first, second):
    padded = np.zeros(length)
    padded[:values.size] = values
    spectra.extend(radix2.transform(padded, np.zeros(length)))
  product = radix2.multiply(*spectra)
  computed = radix2.transform(*product, inverse=True)[0][:size]
  error = roundoff.fft_convolution_error(first, second, length)
  return np.maximum(computed, 0.0) + error


def composed(first: discrete.GridPmf, second: discrete.GridPmf
              ) -> discrete.GridPmf:
  """The PMF of the composition of two pairs (sums of positive terms).

  Masses below `_NEGLIGIBLE_MASS` go to +infinity first (TAILS-TO-INFINITY):
  their products would be subnormal, slow and imprecise.
  """
  firsts, seconds = (np.where(pmf.probs < _NEGLIGIBLE_MASS, 0.0, pmf.probs)
                     for pmf in (first, second))
  moved = math.fsum(first.probs[firsts == 0]) + math.fsum(
      second.probs[seconds == 0])
  probs = _convolve(firsts, seconds)
  margin = 1 + _numerics.RELATIVE_SAFETY_MARGIN
  return discrete.GridPmf(first.discretization,
                          first.lower_index + second.lower_index,
                          probs * margin,
                          (first.infinity_mass + second.infinity_mass + moved)
                          * margin)


def sum_round_pmf(event: events.SumOfReportsEvent, sampling_ratio,
                  discretization: float, discretize: checkin.Discretize,
                  krr_adversary: str, relative_width: float
                  ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """One grid PMF dominating a sum-of-reports round (both orders). [DOM]

  Unary encodings only (`candidates` gives k-RR its shuffle's round).
  """
  del sampling_ratio, krr_adversary  # a sum is never behind a hidden sample
  p, q = event.bit_probabilities()
  width = _group_width(relative_width)
  users = sums.computed_users(event.num_users, p, q, event.aggregator_noise)
  if sums.two_values(event):
    return (_two_value_envelope(event, users, width, discretization,
                                discretize),
            (sums.SUM_OF_BITS_TWO_VALUES,))
  forward = _envelope(
      sums.coordinate_family_atoms(users, p, q, width, False,
                                   event.aggregator_noise),
      discretization, discretize)
  # Symmetric unary encoding: reflecting the count (s -> n - s) maps the
  # reversed family onto the family itself (SUM-OF-BITS (iv)).
  backward = forward if isinstance(
      event.randomizer, randomizers.SymmetricUnaryEncoding) else _envelope(
          sums.coordinate_family_atoms(users, p, q, width, True,
                                       event.aggregator_noise),
          discretization, discretize)
  return composed(forward, backward), (sums.SUM_OF_BITS,)


def _two_value_envelope(event: events.SumOfReportsEvent, users: int,
                        width: float, discretization: float,
                        discretize: checkin.Discretize) -> discrete.GridPmf:
  """d = 2: one PMF whose profile is at least every group's product. [DOM]

  SUM-OF-BITS (vii): the others not at x are at x', so each group of
  coordinate x meets one partner group of coordinate x' (b = m - a), not
  every one; for symmetric unary encoding the partner, reflected, is the
  group's own pair (SUM-OF-BITS (iv)).
  """
  p, q = event.bit_probabilities()
  noise = event.aggregator_noise
  forward = _group_pmfs(
      sums.coordinate_family_atoms(users, p, q, width, False, noise),
      discretization, discretize)
  partners = forward if isinstance(
      event.randomizer, randomizers.SymmetricUnaryEncoding) else _group_pmfs(
          sums.partner_family_atoms(users, p, q, width, noise),
          discretization, discretize)
  return discrete.largest_profile([
      composed(group, partner) for group, partner in zip(forward, partners)])


def deletion_round_pmf(event: events.SumOfReportsEvent, sampling_ratio,
                       discretization: float, discretize: checkin.Discretize,
                       krr_adversary: str, relative_width: float
                       ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """One grid PMF dominating a round under deletion, both orders. [DOM]

  SUM-OF-BITS-DELETION: coordinate x's family (target to the empty input)
  and the reversed family (the other order), one envelope.
  """
  del sampling_ratio, krr_adversary
  p, q = event.bit_probabilities()
  width = _group_width(relative_width)
  users = sums.computed_users(event.num_users, p, q, event.aggregator_noise)
  # Symmetric unary encoding: the reversed family is the family reflected.
  directions = (False,) if isinstance(
      event.randomizer, randomizers.SymmetricUnaryEncoding) else (False, True)
  return _envelope(
      [atoms for reverse in directions for atoms in
       sums.coordinate_family_atoms(users, p, q, width, reverse,
                                    event.aggregator_noise)],
      discretization, discretize), (sums.SUM_OF_BITS_DELETION,)


def _group_width(relative_width: float) -> float:
  # The accountant's relative width is tuned for clone counts (1e-3); the
  # label groups of SUM-OF-BITS lose users only where epsilon is far below
  # its largest value, so coarser groups cost little.
  return max(relative_width, sums.DEFAULT_RELATIVE_WIDTH)


def sum_round_scales(event: events.SumOfReportsEvent, ratio,
                     krr_adversary: str, relative_width: float):
  """(loss standard deviation, largest loss, spread bound) for `grid`.

  Unary encodings only.
  """
  del ratio, krr_adversary, relative_width
  p, q = event.bit_probabilities()
  # The extreme pair (everyone at p) has the widest losses of the family
  # (one binomial: cheap at any n; with noise, at the users computed).
  # With aggregator noise (its families computable), at the users computed.
  noise = event.aggregator_noise
  users = (event.num_users if noise is None else
           sums.computed_users(event.num_users, p, q, noise))
  extreme = sums.coordinate_pair_atoms(users - 1, 0, p, q,
                                       aggregator_noise=noise)
  spread = math.sqrt(2) * privacy_loss.loss_spread(extreme)
  reach = 2 * float(np.max(np.abs(extreme.losses)))
  return spread, reach, 2 * spread


def _coordinate_part(num_users: int, p: float, q: float, at_p: int,
                     reverse: bool) -> Tuple[np.ndarray, np.ndarray]:
  """(losses, masses below the truth) of one coordinate's exact pair,
  `at_p` others at x."""
  atoms = sums.coordinate_pair_atoms(at_p, num_users - 1 - at_p, p, q,
                                     reverse, raise_losses=False,
                                     log_tail=_LOWER_BOUND_LOG_TAIL)
  losses = atoms.losses - sums.loss_error(atoms.losses)
  # The windowed (normalised) masses times the windows' least mass are
  # below the truth.
  masses = (atoms.masses / (1 + _numerics.RELATIVE_SAFETY_MARGIN)
            * (1 - atoms.infinity_mass))
  return losses, masses


# Wide windows for the lower bound: their complement, which can lower the
# true delta(eps) by e^eps times its mass, stays negligible at large eps.
_LOWER_BOUND_LOG_TAIL = -200.0


def sum_release_lower_bound(event: events.SumOfReportsEvent, delta: float,
                            rounds: int = 1,
                            discretization: Optional[float] = None,
                            deletion: bool = False) -> Optional[float]:
  """epsilon(delta) of `rounds` rounds on the worst exact configurations.
  [LB, PAIR: LB-SUM-CONFIGURATIONS; deletion: LB-SUM-DELETION]

  The configurations: every other user at x, at x', or at a third value
  (when the domain has one); both orders of each pair. With `deletion`
  (REPLACE_SPECIAL, the target's report replaced by the all-zero vector's):
  coordinate x alone, every other user at x or none, both orders. Composed
  by `lower_bounds.composed_epsilon_lower_bound` (ROUNDOFF-LOWER), so
  numerical error only lowers it, at every delta: a
  lower bound on every certified answer, never a guarantee (None when
  epsilon is so large, about 190, that the windows' complement could matter
  in every configuration).
  Losses are
  rounded down by up to `discretization` per round; by default it is the
  loss standard deviation over 50 sqrt(rounds) (at most 1e-4), so that the
  bias stays a small fraction of epsilon.
  """
  delta = _validation.check_real('delta', delta, 0.0, 1.0, False, False)
  rounds = _validation.check_integer('rounds', rounds, 1)
  if isinstance(event.randomizer, randomizers.KRandomizedResponse):
    raise ValueError('sum_release_lower_bound is for independent-bit '
                     f'reports; {event.randomizer!r} is k-RR, whose sum is '
                     'its shuffle (see pld.lower_bounds).')
  if event.aggregator_noise is not None:
    raise ValueError('sum_release_lower_bound is for the sum released as it '
                     f'is; aggregator_noise={event.aggregator_noise!r} is '
                     'set, and the noise-free lower bound would exceed the '
                     'noisy release\'s truth. Pass the event with '
                     'aggregator_noise=None.')
  p, q = event.bit_probabilities()
  others = event.num_users - 1
  if discretization is None:
    spread = privacy_loss.loss_spread(
        sums.coordinate_pair_atoms(others, 0, p, q))
    discretization = min(1e-4, spread / (50 * math.sqrt(rounds)))
  if deletion:
    # Coordinate x alone: every other user at x or none, both orders.
    releases = [[_coordinate_part(event.num_users, p, q, at_x, reverse)]
                for at_x in (others, 0) for reverse in (False, True)]
  else:
    configurations = [(others, 0), (0, others)]
    if event.randomizer.domain_size >= 3:
      configurations.append((0, 0))
    releases = [[_coordinate_part(event.num_users, p, q, at_x, False),
                 _coordinate_part(event.num_users, p, q, at_other, True)]
                for at_x, at_other in configurations]
  best: Optional[float] = None
  for release in releases:
    parts = [(losses, masses, rounds) for losses, masses in release]
    # Outside the windows (mass tau per round and coordinate) the true
    # delta(eps) can fall below the windowed pair's by e^eps tau at most.
    epsilon = lower_bounds.composed_epsilon_lower_bound(parts, delta,
                                                        discretization)
    shift = 4 * rounds * sums.window_tail(_LOWER_BOUND_LOG_TAIL) * math.exp(
        min(epsilon, 700.0))
    if delta + shift == delta:
      found = epsilon
    elif delta + shift < 1:
      found = lower_bounds.composed_epsilon_lower_bound(
          parts, delta + shift, discretization)
    else:
      continue  # no bound from this configuration
    best = found if best is None else max(best, found)
  return best

