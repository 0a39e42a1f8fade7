"""The dominating pairs valid for a shuffle round, as grid PMFs.

IDs: FMT21-CLONES, KHH-KRR-STRONG, KHH-KRR-WEAK, KHH-SUBSAMPLED,
BINARY-RR-CONFIGURATIONS, BINARY-RR-CHECKIN

Every candidate is a dominating pair [DOM] for the event's mechanism under
replace-one (both orders): FMT21-CLONES for any pure eps0-LDP randomizer,
KHH-KRR-STRONG / KHH-KRR-WEAK for k-RR (by adversary),
BINARY-RR-CONFIGURATIONS for binary RR seen through its shuffled output
(`binary_shuffle`), FMT-EQ10-11 for
approximate LDP, NAMED-CLONE-RATE (clone rate s(R)) and BLANKET-TWO-LEVEL
(privacy blanket) for a `randomizers` description, KHH-SUBSAMPLED (both orders,
docs/mathematics.md ZDW22-ONE-ORDER) for a hidden sample, and for pure-LDP
check-in the CHECKIN-BLANKET blanket pairs of the round as a shuffle. When
several are valid, `discrete.smallest_profile` keeps the pointwise smallest
profile, convexified (still an upper bound on the true, convex profile). The
other events' PMFs (the LABEL-MIXTURE mixture of `checkin` for Liew et al.'s
events, BINARY-RR-CHECKIN, the sums) and each event's use of these pairs are
the route's table, `routes`.
"""

import math
from typing import Optional, Tuple

import numpy as np

from shuffle_accountants import _cache
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.pairs import blanket
from shuffle_accountants.pairs import clone_pairs
from shuffle_accountants.pairs import fmt21
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pld import binary_shuffle
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import continuous_blanket
from shuffle_accountants.pld import discrete

__all__ = [
    'KRR_ADVERSARIES', 'PAIRS_CACHE_BYTES', 'CLONE_RATE_PAIR', 'BLANKET_PAIR',
    'NOT_FOR_VECTORS', 'PROFILE_LDP_PAIR', 'shuffle_round_pairs',
    'CHECKIN_BLANKET_PAIR', 'checkin_blanket_pairs', 'checkin_randomizer',
    'event_pairs', 'shuffle_round_pmf',
]

# Who observes a k-RR shuffle (Koskela et al. section 4):
# 'shuffled_output': only the shuffled reports (the usual shuffle model);
# 'weak': also the other users' data and which of them answered randomly;
# 'strong': also whether the differing user answered randomly.
KRR_ADVERSARIES = ('shuffled_output', 'weak', 'strong')

# Byte budget of the caches below (see docs/performance.md).
PAIRS_CACHE_BYTES = 128 * 2**20

CLONE_RATE_PAIR = 'NAMED-CLONE-RATE clone rate s(R)'
BLANKET_PAIR = 'BLANKET-TWO-LEVEL privacy blanket'


def _mechanism_specific_pairs(num_users: int, local_epsilon: float,
                              randomizer: randomizers.Randomizer,
                              relative_width: float,
                              discretization: Optional[float]):
  """NAMED-CLONE-RATE and BLANKET-TWO-LEVEL pairs, with names.

  NAMED-CLONE-RATE when s(R) beats FMT21's e^-eps0 / 2.
  """
  pairs = []
  rate = randomizer.clone_rate()
  if 2 * rate > math.exp(-local_epsilon):
    pairs.append((CLONE_RATE_PAIR, clone_pairs.clone_pair_pld_atoms(
        num_users, local_epsilon, relative_width,
        clone_probability=min(1.0, 2 * rate), discretization=discretization)))
  if isinstance(randomizer, randomizers.KRandomizedResponse):
    return pairs  # its blanket is KHH-KRR-WEAK
  if isinstance(randomizer, randomizers.LaplaceRandomizer):
    if not randomizer.randomized_rounding:
      return pairs + [(f'{continuous_blanket.NAME}: {_CLIPPING}', None)]
    return pairs + [(continuous_blanket.NAME,
                     continuous_blanket.laplace_shuffle_atoms(
                         num_users, local_epsilon, discretization or 1e-3))]
  table = randomizer.blanket()
  if table is None:
    pairs.append((f'{BLANKET_PAIR}: not used ({randomizer.blanket_note})',
                  None))
  else:
    pairs.append((BLANKET_PAIR, blanket.blanket_pld_atoms(
        num_users, table, relative_width, discretization)))
  return pairs


_BEATEN = 'not used (cannot win: GRID-PAIRS-FAST)'


def _cannot_win(num_users: int, local_epsilon: float,
                clone_probability: float, others, discretization
                ) -> bool:
  """Whether a clone pair cannot beat one of `others` on the grid.

  See GRID-PAIRS-FAST.

  True when some other pair's profile is, at every grid point, at most a
  lower bound on the clone pair's (`clone_pairs.clone_pair_lower_atoms`)
  plus that pair's own +infinity mass: the smallest profile would then take
  the clone pair nowhere (beyond that mass). Skipping a candidate is always
  sound; this only keeps it tight, for a fraction of the pair's cost.
  """
  others = [atoms for _, atoms in others if atoms is not None]
  if discretization is None or not others:
    return False
  lower = discrete.connect_the_dots(clone_pairs.clone_pair_lower_atoms(
      num_users, local_epsilon, clone_probability, discretization),
                                    discretization)
  for atoms in others:
    pmf = discrete.connect_the_dots(atoms, discretization)
    first = min(pmf.lower_index, lower.lower_index, 0)
    last = max(pmf.upper_index, lower.upper_index, 0)
    # Connect-the-dots is exact at grid points up to its safety margin. At
    # eps < 0 a symmetric pair's profile is 1 - e^-eps + e^-eps delta(-eps):
    # the points eps >= 0 decide.
    if np.all((discrete.grid_profile(pmf, first, last)
               <= discrete.grid_profile(lower, first, last) * (1 - 1e-9)
               + pmf.infinity_mass)[-first:]):
      return True
  return False


# Why plain clipping of Laplace reports and vectors get no continuous blanket.
_CLIPPING = ('not used (plain clipping: its worst pair is unproven, '
             'NUM-BLANKET (iv); randomized_rounding=True makes it proven)')
NOT_FOR_VECTORS = ('not used (plain clipping of vectors, d > 1: its worst '
                   'pair is unproven, NUM-BLANKET (iv))')


PROFILE_LDP_PAIR = ('FMT-EQ10-11 on the Gaussian privacy profile '
                    '(GAUSS-PROFILE-LDP)')


def _gaussian_pairs(num_users: int, randomizer, discretization):
  """GAUSS-NO-GAIN, with NUM-BLANKET (combined in one pair) for scalars (plain
  clipping: its envelope of every pair, NUM-BLANKET (v)), and FMT-EQ10-11
  along the report's privacy profile (GAUSS-PROFILE-LDP, any d)."""
  atoms = continuous_blanket.gaussian_shuffle_atoms(
      num_users, randomizer.noise_multiplier, discretization or 1e-3,
      randomizer.randomized_rounding, randomizer.dimension)
  profile = tuple(fmt21.local_profile_candidates(
      num_users, randomizer.local_deltas, PROFILE_LDP_PAIR)) or (
          (f'{PROFILE_LDP_PAIR}: not used (FMT-EQ10-11 applies at no eps0 '
           'of the grid)', None),)
  if randomizer.dimension > 1:
    return ((continuous_blanket.NO_AMPLIFICATION, atoms),
            (f'{continuous_blanket.NAME}: {NOT_FOR_VECTORS}', None)
            ) + profile
  name = (continuous_blanket.NAME if randomizer.randomized_rounding
          else continuous_blanket.ENVELOPE_NAME)
  return ((f'{continuous_blanket.NO_AMPLIFICATION} and {name}', atoms),
          ) + profile


# Pairs of recent rounds (the grid policy and the PMF both read them).
@_cache.cached(PAIRS_CACHE_BYTES, _cache.atoms_bytes)
def shuffle_round_pairs(num_users: int, local_epsilon: float,
                        num_categories: Optional[int], local_delta: float,
                        krr_adversary: str, relative_width: float,
                        randomizer: Optional[randomizers.Randomizer] = None,
                        discretization: Optional[float] = None
                        ) -> Tuple[Tuple[str, privacy_loss.PldAtoms], ...]:
  """The dominating pairs valid for one shuffle round, each with its name.

  A pair of None is a route that was considered and not used (the name
  says why); it is listed for the contribution record only. With a
  `discretization`, the clone and blanket pairs' outputs are merged per
  cell of that connect-the-dots grid (CTD-MERGE-ATOMS): the same PMF on that
  grid, far fewer atoms.
  """
  n, eps0, width = num_users, local_epsilon, relative_width
  if isinstance(randomizer, randomizers.GaussianRandomizer):
    return _gaussian_pairs(n, randomizer, discretization)
  if local_delta > 0:
    return tuple(fmt21.approximate_ldp_candidates(n, eps0, local_delta))
  if randomizer is None and num_categories is not None:
    randomizer = randomizers.KRandomizedResponse(num_categories, eps0)
  specific = ([] if randomizer is None or eps0 == 0 else
              _mechanism_specific_pairs(n, eps0, randomizer, width,
                                        discretization))
  if num_categories is None:
    if _cannot_win(n, eps0, math.exp(-eps0), specific, discretization):
      return ((f'FMT21-CLONES: {_BEATEN}', None),) + tuple(specific)
    return (('FMT21-CLONES', clone_pairs.clone_pair_pld_atoms(
        n, eps0, width, discretization=discretization)),) + tuple(specific)
  k = num_categories
  candidates = [('KHH-KRR-STRONG',
                 clone_pairs.krr_strong_pld_atoms(n, eps0, k, width))]
  if krr_adversary != 'strong':
    candidates.append(('KHH-KRR-WEAK', clone_pairs.krr_weak_pld_atoms(
        n, eps0, k, width, discretization)))
  if krr_adversary == 'shuffled_output':
    candidates.append(('FMT21-CLONES', clone_pairs.clone_pair_pld_atoms(
        n, eps0, width, discretization=discretization)))
    candidates.extend(specific)
  return tuple(candidates)


CHECKIN_BLANKET_PAIR = ('CHECKIN-BLANKET check-in as a shuffle of R\' '
                        '(absent users in '
                        'the blanket)')


@_cache.cached(PAIRS_CACHE_BYTES, _cache.atoms_bytes)
def checkin_blanket_pairs(num_users: int, checkin_rate: float,
                          local_epsilon: float,
                          randomizer: Optional[randomizers.Randomizer],
                          relative_width: float,
                          discretization: Optional[float] = None
                          ) -> Tuple[Tuple[str, privacy_loss.PldAtoms], ...]:
  """CHECKIN-BLANKET pairs of a pure-LDP check-in round, with their names. [DOM]

  The round is the shuffle by all n users of R' (bottom with probability
  1 - gamma, else R(x)); its BLANKET-TWO-LEVEL blanket pairs: the clone view of
  NAMED-CLONE-RATE at the randomizer's clone rate s(R) (e^-eps0 / 2 without one:
  every eps0-LDP randomizer) and, for a named randomizer, its own table, each
  with the absent users in the blanket. No subsampling follows, so the
  atoms may be merged on the grid (CTD-MERGE-ATOMS).
  """
  return tuple((f'{CHECKIN_BLANKET_PAIR}: {name}', blanket.blanket_pld_atoms(
      num_users, table.with_absence(checkin_rate), relative_width,
      discretization)) for name, table in randomizers.checkin_blanket_tables(
          local_epsilon, randomizer).items())


def checkin_randomizer(event: events.CheckInEvent
                       ) -> Optional[randomizers.Randomizer]:
  """The randomizer of a check-in round (k-RR when only k is given)."""
  if event.randomizer is None and event.num_categories is not None:
    return randomizers.KRandomizedResponse(event.num_categories,
                                           event.local_epsilon)
  return event.randomizer


def event_pairs(event: events.ShuffleEvent, krr_adversary: str,
                relative_width: float, discretization: Optional[float] = None):
  """`shuffle_round_pairs` for the fields of a `ShuffleEvent`."""
  return shuffle_round_pairs(event.num_users, event.local_epsilon,
                             event.num_categories, event.local_delta,
                             krr_adversary, relative_width, event.randomizer,
                             discretization)


def shuffle_round_pmf(event: events.ShuffleEvent,
                      sampling_ratio_: Optional[float], discretization: float,
                      discretize: checkin.Discretize, krr_adversary: str,
                      relative_width: float
                      ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """One PMF for a shuffle round (optionally a hidden sample), pair names."""
  # Merging outputs per grid cell is exact only for the grid itself, not
  # after subsampling moves the losses.
  pairs = event_pairs(event, krr_adversary, relative_width,
                      discretization if sampling_ratio_ is None else None)
  per_pair = []
  for _, atoms in pairs:
    if atoms is None:
      continue
    if sampling_ratio_ is None:
      per_pair.append(discretize(atoms, discretization))
    else:
      per_pair.append(discrete.largest_profile([
          discretize(order, discretization)
          for order in privacy_loss.subsampled_orders(atoms, sampling_ratio_)]))
  names = tuple(name for name, _ in pairs)
  if binary_shuffle.applies(event, sampling_ratio_, krr_adversary):
    per_pair.append(binary_shuffle.binary_rr_round_pmf(
        event.num_users, event.local_epsilon, discretization, discretize,
        relative_width))
    names += (binary_shuffle.BINARY_RR_CONFIGURATIONS,)
  return discrete.smallest_profile(per_pair), names


