"""The PLD route's table: one round's grid PMF and scales, per event type.

IDs: LABEL-MIXTURE, KHH-SUBSAMPLED, CHECKIN-BLANKET, CHECKIN-COARSE-GRIDS,
DOMINATING-ROUNDS, RATE-ONE-DOMINATES, SECAGG-REVEALED, SECAGG-HIDDEN,
SUM-OF-BITS, SUM-OF-BITS-WITH-NOISE

`ROUND_PMFS` maps each shuffle event type (`_event_specs`) to its `RoundPmf`:
the round's PMF on a grid (with the names of its pairs) and the scales from
which `grid` chooses the grid, of one round as grouped and accounted
(RATE-ONE-DOMINATES). Each entry is the per-event glue between the event's
fields and its dominating pairs (`candidates` for shuffle rounds, one module
per source otherwise), and needs no accountant. When several pairs are
valid, `discrete.smallest_profile` (or `checkin.capped_by`, on two grids)
keeps the smallest profile, still an upper bound.
"""

import functools
from typing import Callable, Optional, Tuple

import attr
import numpy as np

from shuffle_accountants import _cache
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.core import _dominating
from shuffle_accountants.core import _event_specs
from shuffle_accountants.pairs import binary_checkin as pair_binary_checkin
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pairs import sums as pair_sums
from shuffle_accountants.pld import binary_shuffle
from shuffle_accountants.pld import candidates
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import continuous_blanket
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import distributed
from shuffle_accountants.pld import noise_sums
from shuffle_accountants.pld import skellam
from shuffle_accountants.pld import sums

__all__ = [
    'PMF_CACHE_BYTES', 'PLAIN_LATTICE_STEP', 'shuffle_of_sample',
    'SCALAR_SHUFFLE_SAMPLE', 'event_pmf', 'Scales', 'round_scales',
    'RoundPmf', 'ROUND_PMFS',
]

_CHECKIN_PAIRS = {
    True: ('KHH-SUBSAMPLED mixture over k (LABEL-MIXTURE) of FMT21-CLONES',),
    False: ('KHH-SUBSAMPLED mixture over k (LABEL-MIXTURE) of the Gaussian '
            'pair (GAUSS-NO-GAIN)',),
}
_SAMPLED_GAUSSIAN_PAIR = 'KHH-SUBSAMPLED of the Gaussian pair (GAUSS-NO-GAIN)'
_DISTRIBUTED_PAIRS = {
    'hidden': ('SECAGG-HIDDEN mixture over k (LABEL-MIXTURE) of the '
               'subsampled Gaussian-sum pair',),
    'revealed': ('SECAGG-REVEALED mixture over participation and k '
                 '(LABEL-MIXTURE) of the '
                 'Gaussian-sum pair (exact)',),
    'dropouts': ('SECAGG-REVEALED (iii): the Gaussian sum of min_reporting '
                 'shares with '
                 'probability gamma P[k >= m] (exact against adversarial '
                 'dropouts)',),
    'hidden_count': ('SECAGG-REVEALED (v): the SECAGG-HIDDEN pair at ratio '
                     'gamma on the noise of '
                     'every (or min_reporting) share',),
}

# Byte budget of the cache below (see docs/performance.md).
PMF_CACHE_BYTES = 256 * 2**20

# The rate-1 round of a check-in round at a rate below 1/16 is taken at a
# user count on this coarser lattice (`_mixture_pmf`).
PLAIN_LATTICE_STEP = 0.05


def shuffle_of_sample(event: events.SubsampledShuffleGaussianEvent,
                      relative_width: float
                      ) -> Optional[Tuple[events.ShuffleEvent, float]]:
  """A `SubsampledShuffleGaussianEvent` of known dimension d as what it is,
  the shuffle of its m `GaussianRandomizer` reports of dimension d behind a
  hidden sample, with the sampling ratio m / n.

  None for an unknown dimension (its value stays the Gaussian pair's: the
  Flower adapter composes a central Gaussian sum as this event, which no
  shuffle of reports dominates), and where the shuffle's pairs would be the
  Gaussian pair alone (d > 1 and GAUSS-PROFILE-LDP applies nowhere).
  """
  if event.dimension is None:
    return None
  shuffle = events.ShuffleEvent(
      num_users=event.sample_size,
      randomizer=randomizers.GaussianRandomizer(event.noise_multiplier,
                                                dimension=event.dimension))
  if event.dimension != 1 and not any(
      atoms is not None and name.startswith(candidates.PROFILE_LDP_PAIR)
      for name, atoms in candidates.event_pairs(shuffle, 'shuffled_output',
                                                relative_width)):
    return None
  return shuffle, event.sample_size / event.num_users


SCALAR_SHUFFLE_SAMPLE = 'KHH-SUBSAMPLED of the shuffle of m reports'
_UNKNOWN_DIMENSION = ('not used (dimension unknown: dimension=1 declares '
                      'scalar reports)')


def _sampled_gaussian_pairs(event: events.SubsampledShuffleGaussianEvent
                            ) -> Tuple[str, ...]:
  """The GAUSS-NO-GAIN pair's name, and why no blanket is used.

  The reason is given unless the reports are scalars.
  """
  if event.dimension == 1:
    return (_SAMPLED_GAUSSIAN_PAIR,)
  why = (_UNKNOWN_DIMENSION if event.dimension is None
         else candidates.NOT_FOR_VECTORS)
  return (_SAMPLED_GAUSSIAN_PAIR, f'{continuous_blanket.NAME}: {why}')


def _checkin_arguments(event: events.CheckInEvent) -> dict:
  """Keyword arguments of `checkin` functions for a check-in round."""
  return dict(num_users=event.num_users, checkin_rate=event.checkin_rate,
              local_epsilon=event.local_epsilon,
              noise_multiplier=event.noise_multiplier)


def _sampled_gaussian_arguments(event: events.SubsampledShuffleGaussianEvent
                                ) -> dict:
  """Keyword arguments of `checkin` functions for a hidden Gaussian sample."""
  return dict(num_users=event.num_users, checkin_rate=1.0,
              noise_multiplier=event.noise_multiplier,
              sample_size=event.sample_size)


def _distributed_pmf(event: events.DistributedCheckInEvent,
                     unused_sampling_ratio, discretization: float,
                     discretize: checkin.Discretize, unused_krr_adversary,
                     relative_width: float
                     ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """SECAGG-REVEALED or the SECAGG-HIDDEN pair mixed over the count.

  SECAGG-REVEALED when the participants are revealed.
  """
  return distributed.distributed_checkin_pmf(
      event.num_users, event.checkin_rate, event.noise_multiplier,
      discretization, relative_width, event.participation,
      event.min_reporting), _DISTRIBUTED_PAIRS[
          'dropouts' if event.min_reporting is not None
          and event.participation != 'hidden_count'
          else event.participation]


def _sampled_gaussian_pmf(event: events.SubsampledShuffleGaussianEvent,
                          unused_sampling_ratio, discretization: float,
                          discretize: checkin.Discretize,
                          unused_krr_adversary, relative_width: float
                          ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """KHH-SUBSAMPLED on the GAUSS-NO-GAIN pair (and on the scalar shuffle).

  On the scalar shuffle, see CHECKIN-COARSE-GRIDS.
  """
  mixture, names = _mixture_pmf(event, _sampled_gaussian_pairs(event),
                                _sampled_gaussian_arguments(event),
                                discretization, discretize, relative_width)
  sample = shuffle_of_sample(event, relative_width)
  if sample is None:
    return mixture, names
  # The same mechanism as a hidden sample of a shuffle: its candidates
  # (GAUSS-NO-GAIN, GAUSS-PROFILE-LDP and for scalars NUM-BLANKET (v)),
  # lowered to the GAUSS-NO-GAIN mixture where that is smaller
  # (CHECKIN-COARSE-GRIDS).
  shuffled, shuffled_names = candidates.shuffle_round_pmf(
      *sample, discretization, discretize, 'shuffled_output',
      relative_width)
  return (checkin.capped_by(shuffled, mixture),
          names + tuple(f'{SCALAR_SHUFFLE_SAMPLE}: {name}'
                        for name in shuffled_names))


def _checkin_pmf(event: events.CheckInEvent, unused_sampling_ratio,
                 discretization: float, discretize: checkin.Discretize,
                 unused_krr_adversary, relative_width: float
                 ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """The LABEL-MIXTURE mixture, capped by its rate-1 round and blanket pairs.

  The blanket pairs are CHECKIN-BLANKET's.
  """
  mixture_of = functools.partial(
      _mixture_pmf, event, _CHECKIN_PAIRS[event.noise_multiplier is None],
      _checkin_arguments(event), discretize=discretize,
      relative_width=relative_width,
      everyone=_dominating.everyone_below_rate_one(event))
  if not event.local_epsilon:
    return mixture_of(discretization)
  # CHECKIN-BLANKET: a pure-LDP check-in round as a shuffle of R' by all n
  # users. Its pairs set the round's grid (`grid`); the check-in mixture, whose
  # losses spread wider, is built on a grid coarser by a power of two that
  # resolves it as finely as its own grid would (a chord profile bounds on any
  # grid, CHECKIN-COARSE-GRIDS (ii)).
  blanket_pairs = candidates.checkin_blanket_pairs(
      event.num_users, event.checkin_rate, event.local_epsilon,
      candidates.checkin_randomizer(event), relative_width, discretization)
  if not blanket_pairs:
    return mixture_of(discretization)
  own = [discretize(atoms, discretization) for _, atoms in blanket_pairs]
  own_names = tuple(name for name, _ in blanket_pairs)
  if binary_shuffle.checkin_applies(event):
    # BINARY-RR-CHECKIN: binary RR at every configuration, on the same grid.
    if binary_shuffle.checkin_computable(event):
      own.append(binary_shuffle.binary_rr_checkin_pmf(event, discretization,
                                                      discretize))
      own_names += (pair_binary_checkin.BINARY_RR_CHECKIN,)
    else:
      own_names += (f'{pair_binary_checkin.BINARY_RR_CHECKIN}: not used '
                    '(too large: MAX_FAMILY_PRODUCTS)',)
  blanket_pmf = discrete.smallest_profile(own)
  narrowest = min(privacy_loss.loss_spread(atoms) for _, atoms in blanket_pairs)
  widths = checkin.loss_spread(event.num_users, event.checkin_rate,
                               event.local_epsilon) / max(narrowest, 1e-300)
  steps = max(0, int(np.floor(np.log2(widths)))) if widths < 2**30 else 0
  mixture, names = mixture_of(discretization * 2.0**steps)
  return checkin.capped_by(blanket_pmf, mixture), names + own_names


def _mixture_pmf(event, names: Tuple[str, ...], arguments: dict,
                 discretization: float, discretize: checkin.Discretize,
                 relative_width: float,
                 everyone: Optional[events.ShuffleEvent] = None
                 ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """The LABEL-MIXTURE check-in mixture (or hidden sample) of `arguments` (pairs
  `names`), capped by its rate-1 round `everyone` if any."""
  pmf = checkin.checkin_pmf(discretization=discretization,
                            discretize=discretize,
                            relative_width=relative_width, **arguments)
  if everyone is None:
    return pmf, names
  # DOMINATING-ROUNDS: the round at rate 1 dominates the round at any rate. Its
  # losses spread about 1 / sqrt(gamma) times wider: on a grid that much coarser
  # it costs no more than the check-in's span, and it can win only where
  # gamma is large (then on the same grid). `checkin.capped_by`
  # (CHECKIN-COARSE-GRIDS). Where that grid is coarser, it wins at most in the
  # far tail: there the round of the lattice point at or below n (fewer users,
  # DOMINATING-ROUNDS (ii)) serves the nearby rounds of a ledger too.
  steps = max(0.0, np.floor(np.log2(0.5 / np.sqrt(event.checkin_rate))))
  plain_grid = discretization * 2.0**steps
  if steps > 0:
    everyone = attr.evolve(everyone, num_users=checkin.lattice_users(
        everyone.num_users, PLAIN_LATTICE_STEP))
  if (steps > 0 and everyone.num_categories is None
      and everyone.randomizer is None):
    # Its only pair is FMT21-CLONES: the check-in groups' kept clone pairs.
    plain = checkin.clone_pair_pmf(everyone.num_users, everyone.local_epsilon,
                                   relative_width, plain_grid, discretize)
    plain_names = ('FMT21-CLONES',)
  else:
    plain, plain_names = candidates.shuffle_round_pmf(
        everyone, None, plain_grid, discretize, 'shuffled_output',
        relative_width)
  return (checkin.capped_by(pmf, plain),
          names + tuple(f'{name}, everyone checks in (DOMINATING-ROUNDS)'
                        for name in plain_names))


# A ledger re-resolved after each new event (an Opacus loop asks for epsilon
# every epoch, a year of daily rounds gets its 366th) finds its rounds' PMFs
# here. Each is at most discrete.MAX_PMF_BUCKETS floats (8 MB); a daily
# round's is a few hundred kB.
@_cache.cached(PMF_CACHE_BYTES, _cache.atoms_bytes)
def event_pmf(event, sampling_ratio_: Optional[float], discretization: float,
              discretize: checkin.Discretize, krr_adversary: str,
              relative_width: float
              ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """The PMF (and pair names) of any shuffle event, cached across ledgers."""
  event = _event_specs.accounted_round(event)  # rate 1 (RATE-ONE-DOMINATES)
  return _event_specs.route_entry(ROUND_PMFS, event).pmf(
      event, sampling_ratio_, discretization, discretize, krr_adversary,
      relative_width)


Scales = Tuple[float, float, float]


def round_scales(event, ratio: Optional[float], krr_adversary: str,
                 relative_width: float) -> Scales:
  """(loss standard deviation, largest finite loss, a bound on the former)
  of a round as accounted, for `grid`.

  The first sets the accuracy; the third (at least the first) bounds the
  width of many composed rounds.
  """
  return _event_specs.route_entry(ROUND_PMFS, event).scales(
      event, ratio, krr_adversary, relative_width)


def _shuffle_scales(event: events.ShuffleEvent, ratio: Optional[float],
                    krr_adversary: str, relative_width: float) -> Scales:
  # The grid needs a pair's scale, not its fine structure (coarse clone
  # groups, outputs merged on a fine grid): a fraction of a percent off.
  resolution = checkin.scale_resolution(event.local_epsilon,
                                        event.num_users)
  pairs = [atoms if ratio is None
           else privacy_loss.subsampled_orders(atoms, ratio)[0]
           for _, atoms in candidates.event_pairs(
               event, krr_adversary,
               max(relative_width, checkin.SCALE_RELATIVE_WIDTH),
               resolution)
           if atoms is not None]
  # A pair whose finite losses are all equal needs no resolution.
  spreads = [privacy_loss.loss_spread(atoms) for atoms in pairs]
  spread = min([s for s in spreads if s > 0], default=np.inf)
  reach = max(np.max(np.abs(atoms.losses), initial=0.0) for atoms in pairs)
  return spread, reach, max(spreads, default=0.0)


def _distributed_scales(event: events.DistributedCheckInEvent,
                        unused_ratio, unused_krr_adversary,
                        relative_width: float) -> Scales:
  arguments = (event.num_users, event.checkin_rate, event.noise_multiplier)
  model = dict(participation=event.participation,
               min_reporting=event.min_reporting)
  return (distributed.loss_spread(*arguments, **model),
          distributed.pmf_reach(*arguments, relative_width, **model),
          np.sqrt(distributed.loss_variance_bound(*arguments,
                                                  relative_width, **model)))


def _mixture_scales(event, ratio: Optional[float], relative_width: float,
                    arguments: dict, local_epsilon: Optional[float] = None
                    ) -> Scales:
  """The scales of a check-in mixture (or hidden sample) of `arguments`."""
  spread = checkin.loss_spread(event.num_users, ratio, local_epsilon,
                               event.noise_multiplier, relative_width)
  # What the round's PMF will span (a check-in round reaches the losses of
  # its largest group of participants, not of the typical one).
  reach = checkin.pmf_reach(relative_width=relative_width, **arguments)
  return spread, reach, np.sqrt(checkin.loss_variance_bound(
      relative_width=relative_width, **arguments))


def _checkin_scales(event: events.CheckInEvent, ratio: Optional[float],
                    unused_krr_adversary, relative_width: float) -> Scales:
  spread, reach, spread_bound = _mixture_scales(
      event, ratio, relative_width, _checkin_arguments(event),
      event.local_epsilon)
  if event.local_epsilon:
    # The CHECKIN-BLANKET pairs can be far narrower than the check-in mixture:
    # the grid resolves the narrowest (the round's PMF keeps the mixture's
    # range).
    resolution = checkin.scale_resolution(
        event.local_epsilon, event.num_users * event.checkin_rate)
    spread = min([spread] + [
        privacy_loss.loss_spread(atoms) for _, atoms in
        candidates.checkin_blanket_pairs(
            event.num_users, event.checkin_rate, event.local_epsilon,
            candidates.checkin_randomizer(event),
            max(relative_width, checkin.SCALE_RELATIVE_WIDTH), resolution)])
  if (binary_shuffle.checkin_applies(event)
      and binary_shuffle.checkin_computable(event)):
    # The BINARY-RR-CHECKIN family (kept for the round's PMF): its extreme
    # configuration, the first group, is the narrowest that wins.
    spread = min(spread, privacy_loss.loss_spread(
        binary_shuffle.checkin_family(event)[0]))
  return spread, reach, spread_bound


def _sampled_gaussian_scales(event: events.SubsampledShuffleGaussianEvent,
                             ratio: Optional[float], krr_adversary: str,
                             relative_width: float) -> Scales:
  spread, reach, spread_bound = _mixture_scales(
      event, ratio, relative_width, _sampled_gaussian_arguments(event))
  sample = shuffle_of_sample(event, relative_width)
  if sample is not None:
    # Its shuffle candidates are far narrower than the GAUSS-NO-GAIN
    # mixture.
    spread = min(spread, _shuffle_scales(*sample, krr_adversary,
                                         relative_width)[0])
  return spread, reach, spread_bound


def _sum_pmf(event: events.SumOfReportsEvent, *rest
             ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """SUM-OF-BITS; k-RR's sum is its shuffle (SUM-OF-BITS (v))."""
  shuffle = event.as_shuffle_event()
  if shuffle is not None:
    return candidates.shuffle_round_pmf(shuffle, *rest)
  if event.aggregator_noise is not None:
    return _noisy_sum_pmf(event, *rest)
  deletion = isinstance(event, pair_sums.SumUnderDeletion)
  pmf, names = (sums.deletion_round_pmf if deletion
                else sums.sum_round_pmf)(event, *rest)
  if event.num_users <= pair_sums.computed_users(
      event.num_users, *event.bit_probabilities()):
    return pmf, names
  # Computed at fewer users: each changing coordinate as a shuffle at the
  # true n may be tighter (one coordinate under deletion, two composed
  # under replace-one).
  coordinate, _ = candidates.shuffle_round_pmf(
      pair_sums.coordinate_shuffle_event(event), *rest)
  if deletion:
    return (discrete.smallest_profile([pmf, coordinate]),
            names + (pair_sums.PER_COORDINATE_DELETION,))
  return (discrete.smallest_profile([pmf, sums.composed(coordinate,
                                                        coordinate)]),
          names + (pair_sums.PER_COORDINATE,))


def _noisy_sum_pmf(event: events.SumOfReportsEvent, *rest
                   ) -> Tuple[discrete.GridPmf, Tuple[str, ...]]:
  """SUM-OF-BITS-WITH-NOISE: the smallest of its three dominating pairs.

  (i) the families with the noise (when its window is small enough), the
  reports alone (the noise is post-processing; at the true n through the
  per-coordinate shuffle), and (iii) the noise alone, on one coordinate
  under deletion, on two (composed) under replace-one, when its losses
  reach no farther than twice a coordinate's (a wider pair only widens
  the grid: at that noise the reports decide).
  """
  deletion = isinstance(event, pair_sums.SumUnderDeletion)
  reports, names = _sum_pmf(attr.evolve(event, aggregator_noise=None),
                            *rest)
  pmfs = [reports]
  if pair_sums.noisy_family_computable(event.aggregator_noise):
    pmf, noisy_names = (sums.deletion_round_pmf if deletion
                        else sums.sum_round_pmf)(event, *rest)
    pmfs.append(pmf)
    names += tuple(f'{pair_sums.WITH_NOISE}: {name}' for name in noisy_names)
  if _noise_alone_may_help(event):
    noise, _ = noise_sums.round_pmf(event.aggregator_noise, *rest)
    pmfs.append(noise if deletion else sums.composed(noise, noise))
    names += (pair_sums.NOISE_ALONE_DELETION if deletion
              else pair_sums.NOISE_ALONE,)
  return discrete.smallest_profile(pmfs), names


def _noise_alone_may_help(event: events.SumOfReportsEvent) -> bool:
  """Whether the noise alone's losses reach at most twice a coordinate's."""
  atoms, _ = noise_sums.worst_pair(event.aggregator_noise)
  return bool(atoms.losses.size) and float(np.max(np.abs(atoms.losses))) <= (
      2 * pair_sums.largest_loss(*event.bit_probabilities()))


def _sum_scales(event: events.SumOfReportsEvent, *rest) -> Scales:
  shuffle = event.as_shuffle_event()
  if shuffle is not None:
    return _shuffle_scales(shuffle, *rest)
  if event.aggregator_noise is None:
    return sums.sum_round_scales(event, *rest)
  # The candidates of `_noisy_sum_pmf`: the reports' and the families'
  # narrowest spread sets the grid (the noise alone's, often far narrower,
  # would make it too fine for the reports' reach), the widest reach and
  # spread bound its range.
  scales = [_sum_scales(attr.evolve(event, aggregator_noise=None), *rest)]
  if pair_sums.noisy_family_computable(event.aggregator_noise):
    scales.append(sums.sum_round_scales(event, *rest))
  reach = max(s[1] for s in scales)
  if _noise_alone_may_help(event):
    coordinates = 1 if isinstance(event, pair_sums.SumUnderDeletion) else 2
    reach = max(reach, coordinates * noise_sums.round_scales(
        event.aggregator_noise, *rest)[1])
  return (min(s[0] for s in scales), reach, max(s[2] for s in scales))


@attr.s(frozen=True, slots=True, auto_attribs=True)
class RoundPmf:
  """The PLD route's entry for one shuffle event type (`_event_specs`).

  Attributes:
    pmf: (event, sampling ratio, discretization, discretize, krr_adversary,
      relative_width) -> (its PMF on the grid, the names of its pairs).
    scales: (event, sampling ratio, krr_adversary, relative_width) -> its
      `Scales`, from which `grid` chooses the grid.
  """
  pmf: Callable[..., Tuple[discrete.GridPmf, Tuple[str, ...]]]
  scales: Callable[..., Scales]


# The PLD route's one table: per shuffle event type, its round as accounted
# (RATE-ONE-DOMINATES) on a grid.
ROUND_PMFS = {
    events.ShuffleEvent: RoundPmf(candidates.shuffle_round_pmf,
                                  _shuffle_scales),
    events.CheckInEvent: RoundPmf(_checkin_pmf, _checkin_scales),
    events.SubsampledShuffleGaussianEvent: RoundPmf(
        _sampled_gaussian_pmf, _sampled_gaussian_scales),
    events.DistributedCheckInEvent: RoundPmf(_distributed_pmf,
                                             _distributed_scales),
    events.SkellamSecureSumEvent: RoundPmf(skellam.round_pmf,
                                           skellam.round_scales),
    events.SumOfReportsEvent: RoundPmf(_sum_pmf, _sum_scales),
    events.BinomialSecureSumEvent: RoundPmf(noise_sums.round_pmf,
                                            noise_sums.round_scales),
    events.DiscreteGaussianSumEvent: RoundPmf(noise_sums.round_pmf,
                                              noise_sums.round_scales),
    events.DiscreteLaplaceSumEvent: RoundPmf(noise_sums.round_pmf,
                                             noise_sums.round_scales),
}
