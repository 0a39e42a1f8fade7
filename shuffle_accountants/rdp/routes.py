"""The RDP route's table: one round's per-order bound, per event type.

IDs: DOMINATING-ROUNDS, RATE-ONE-DOMINATES, BLANKET-RDP, GAUSS-NO-GAIN,
NUM-BLANKET-RDP, SUM-OF-BITS, WBK19-THM9, KHH-SUBSAMPLED

`ROUND_BOUNDS` maps each shuffle event type (`_event_specs`) to a function
(event, orders) -> `shuffle_round.RdpBound`, the RDP of one round as
grouped and accounted (RATE-ONE-DOMINATES); each entry is the per-event glue
between the event's fields and its bounds in this package (one module per
source), and needs no accountant. Bounds are cached across accountants.
"""

from typing import Optional

import attr
from dp_accounting import dp_event
import numpy as np

from shuffle_accountants import _cache
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.core import _dominating
from shuffle_accountants.pairs import sums as pair_sums
from shuffle_accountants.rdp import blanket
from shuffle_accountants.rdp import checkin
from shuffle_accountants.rdp import distributed
from shuffle_accountants.rdp import noise_sums
from shuffle_accountants.rdp import numeric
from shuffle_accountants.rdp import shuffle_round
from shuffle_accountants.rdp import skellam
from shuffle_accountants.rdp import subsampling
from shuffle_accountants.rdp import sums

__all__ = [
    'RATE_ONE_ROUND', 'BLANKET_PAIR', 'GAUSSIAN_NO_AMPLIFICATION',
    'SAMPLED_SHUFFLE',
    'shuffle_bound', 'checkin_bound', 'sampled_gaussian_bound',
    'distributed_bound', 'sum_bound', 'hidden_sample_bound', 'ROUND_BOUNDS',
]

# Name of the rate-1 candidate of a check-in round (DOMINATING-ROUNDS (i)).
RATE_ONE_ROUND = 'the same round at rate 1 (DOMINATING-ROUNDS)'
BLANKET_PAIR = 'BLANKET-RDP blanket pair (BLANKET-TWO-LEVEL, CHECKIN-BLANKET)'

GAUSSIAN_NO_AMPLIFICATION = 'GAUSS-NO-GAIN Gaussian pair (no amplification)'
SAMPLED_SHUFFLE = ('WBK19-THM9 on the sample\'s shuffle (GAUSS-NO-GAIN; '
                   'NUM-BLANKET-RDP for scalars)')

# Bounds of rounds, shared by every accountant (the Opacus adapter builds a
# new one for every get_epsilon); each is a few arrays of one value per order.
_BOUNDS = _cache.Lru(4096, lambda bound: 1, 'rdp.routes.bounds (entries)')


def _cached(key, orders: np.ndarray, compute) -> shuffle_round.RdpBound:
  return _BOUNDS.get((key, orders.tobytes()), compute)


def _randomizer(event) -> Optional[randomizers.Randomizer]:
  """The round's named randomizer (k-RR when only k is given), or None."""
  if event.randomizer is None and event.num_categories is None:
    return None
  return event.randomizer or randomizers.KRandomizedResponse(
      event.num_categories, float(event.local_epsilon or 0.0))


def _blanket_candidates(num_users: int, local_epsilon: float,
                        randomizer: Optional[randomizers.Randomizer],
                        checkin_rate: float, orders: np.ndarray) -> dict:
  """BLANKET-RDP: the Renyi divergences of the round's blanket pairs. [UB]

  The blanket pairs are CHECKIN-BLANKET's.

  At rate 1 the clone view is the clone pair at the randomizer's rate,
  already a candidate of `shuffle_round`, so only the randomizer's own
  table is added there.
  """
  # One pair: its (order - 1) D_order is convex, so dense grids evaluate
  # every other order and take chords between them (RDP-INTERP).
  return {f'{BLANKET_PAIR}: {name}': shuffle_round.at_every_other_order(
      lambda o, table=table: blanket.blanket_rdp(
          num_users, table.with_absence(checkin_rate), o), orders)
          for name, table in randomizers.checkin_blanket_tables(
              local_epsilon, randomizer).items()
          if checkin_rate < 1 or name != 'NAMED-CLONE-RATE clone view'}


def _pure_shuffle_bound(num_users: int, local_epsilon: float,
                        randomizer: Optional[randomizers.Randomizer],
                        orders: np.ndarray) -> shuffle_round.RdpBound:
  """A pure-LDP shuffle round: `shuffle_round`'s bounds and BLANKET-RDP's."""
  bound = shuffle_round.shuffle_rdp_upper_bound(
      num_users, local_epsilon, orders,
      randomizer.clone_rate() if randomizer is not None else None)
  extra = _blanket_candidates(num_users, local_epsilon, randomizer, 1.0,
                              orders)
  return (shuffle_round.smallest_bound(orders, {**bound.candidates, **extra})
          if extra else bound)


def _checkin_mixture_bound(event: events.CheckInEvent, orders
                           ) -> shuffle_round.RdpBound:
  """LIEW-THM2 with BLANKET-RDP's blanket candidates for pure LDP."""
  if event.local_epsilon is None:
    return checkin.checkin_rdp_upper_bound(
        event.num_users, event.checkin_rate, orders,
        noise_multiplier=event.noise_multiplier)
  mixture = checkin.checkin_rdp_upper_bound(
      event.num_users, event.checkin_rate, orders,
      local_epsilon=event.local_epsilon)
  # CHECKIN-BLANKET (i): the round is a shuffle of R' by all n users;
  # BLANKET-RDP bounds the Renyi divergence of its blanket pairs.
  return shuffle_round.smallest_bound(orders, {
      **mixture.candidates, **_blanket_candidates(
          event.num_users, event.local_epsilon, _randomizer(event),
          event.checkin_rate, orders)})


def _gaussian_shuffle_bound(num_users: int,
                            randomizer: randomizers.GaussianRandomizer,
                            orders: np.ndarray) -> shuffle_round.RdpBound:
  """GAUSS-NO-GAIN, and for scalars NUM-BLANKET-RDP beside it."""
  candidates = {GAUSSIAN_NO_AMPLIFICATION: checkin.gaussian_rdp_unchecked(
      randomizer.noise_multiplier, orders)}
  if randomizer.dimension == 1:
    candidates[numeric.NAME] = numeric.gaussian_shuffle_rdp_upper_bound(
        num_users, randomizer.noise_multiplier,
        randomizer.randomized_rounding, orders)
  return shuffle_round.smallest_bound(orders, candidates)


def shuffle_bound(event, orders: np.ndarray) -> shuffle_round.RdpBound:
  """The (cached) bound of a pure-LDP `ShuffleEvent`."""
  gaussian = event.randomizer
  if isinstance(gaussian, randomizers.GaussianRandomizer):
    return _cached(('gaussian shuffle', event.num_users, gaussian), orders,
                   lambda: _gaussian_shuffle_bound(event.num_users, gaussian,
                                                   orders))
  randomizer = _randomizer(event)
  return _cached(
      ('shuffle', event.num_users, event.local_epsilon, randomizer), orders,
      lambda: _pure_shuffle_bound(event.num_users, event.local_epsilon,
                                  randomizer, orders))


def checkin_bound(event: events.CheckInEvent, orders: np.ndarray
                  ) -> shuffle_round.RdpBound:
  """A check-in round's (cached) bound, capped at rate 1.

  See DOMINATING-ROUNDS (i).
  """
  bound = _cached(event, orders,
                  lambda: _checkin_mixture_bound(event, orders))
  everyone = _dominating.everyone_below_rate_one(event)
  if everyone is not None:
    # DOMINATING-ROUNDS (i): the round is a post-processing of its rate-1
    # round, so that round's bound (cached as a shuffle round's) is a
    # candidate at every order: epsilon never exceeds its value at rate 1.
    bound = shuffle_round.smallest_bound(orders, {
        **bound.candidates,
        RATE_ONE_ROUND: shuffle_bound(everyone, orders).rdp})
  return bound


def _hidden_gaussian_sample_bound(num_users: int, sample_size: int,
                                  randomizer: randomizers.GaussianRandomizer,
                                  orders: np.ndarray
                                  ) -> shuffle_round.RdpBound:
  """A hidden sample of m of n users, then the shuffle of their reports.

  WBK19-THM9 with ratio m / n on the shuffle of m reports
  (`_gaussian_shuffle_bound`: GAUSS-NO-GAIN, and NUM-BLANKET-RDP for
  scalars), beside that shuffle's own bounds (a hidden sample never hurts:
  the target is in it or the two samples are the same).
  """
  shuffled = _gaussian_shuffle_bound(sample_size, randomizer, orders)
  amplified = subsampling.wbk19_without_replacement_rdp_unchecked(
      sample_size / num_users,
      lambda grid: _gaussian_shuffle_bound(sample_size, randomizer, grid).rdp,
      np.inf, orders)
  return shuffle_round.smallest_bound(orders, {
      **shuffled.candidates, SAMPLED_SHUFFLE: amplified})


def sampled_gaussian_bound(event: events.SubsampledShuffleGaussianEvent,
                           orders: np.ndarray) -> shuffle_round.RdpBound:
  """WBK19-THM9 on the Gaussian RDP (GAUSS-NO-GAIN), cached; for scalars
  (`dimension=1`) on NUM-BLANKET-RDP's plain-clipping envelope too."""
  if event.dimension == 1:
    return _cached(event, orders, lambda: _hidden_gaussian_sample_bound(
        event.num_users, event.sample_size,
        randomizers.GaussianRandomizer(event.noise_multiplier), orders))
  return _cached(
      event, orders,
      lambda: checkin.subsampled_shuffle_gaussian_rdp_upper_bound(
          event.num_users, event.sample_size, event.noise_multiplier,
          orders))


def distributed_bound(event: events.DistributedCheckInEvent,
                      orders: np.ndarray) -> shuffle_round.RdpBound:
  """The distributed check-in bound (`distributed`), cached."""
  return _cached(
      event, orders, lambda: distributed.distributed_checkin_rdp_upper_bound(
          event.num_users, event.checkin_rate, event.noise_multiplier,
          orders, participation=event.participation,
          min_reporting=event.min_reporting))


def sum_bound(event: events.SumOfReportsEvent, orders: np.ndarray
              ) -> shuffle_round.RdpBound:
  """SUM-OF-BITS; k-RR's sum is its shuffle (SUM-OF-BITS (v))."""
  shuffle = event.as_shuffle_event()
  if shuffle is not None:
    return shuffle_bound(shuffle, orders)
  # Under deletion one coordinate changes (SUM-OF-BITS-DELETION).
  deletion = isinstance(event, pair_sums.SumUnderDeletion)
  bound = _cached(event, orders, lambda: sums.sum_rdp_upper_bound(
      event.num_users, *event.bit_probabilities(), event.local_epsilon,
      orders, isinstance(event.randomizer,
                         randomizers.SymmetricUnaryEncoding),
      deletion=deletion, aggregator_noise=event.aggregator_noise,
      two_values=pair_sums.two_values(event)))
  if event.aggregator_noise is not None:
    # SUM-OF-BITS-WITH-NOISE 4: the reports alone are a candidate too.
    reports = sum_bound(attr.evolve(event, aggregator_noise=None), orders)
    return shuffle_round.smallest_bound(orders, {
        **bound.candidates, **reports.candidates})
  # Each coordinate as a shuffle (SUM-OF-BITS (vi)): at the true n when
  # the families are computed at fewer users, and at high orders, where
  # the families' cut-off windows (charged the largest loss) decide.
  coordinate = shuffle_bound(pair_sums.coordinate_shuffle_event(event),
                             orders)
  if deletion:
    return shuffle_round.smallest_bound(orders, {
        **bound.candidates,
        pair_sums.PER_COORDINATE_DELETION: coordinate.rdp})
  return shuffle_round.smallest_bound(orders, {
      **bound.candidates, pair_sums.PER_COORDINATE: 2 * coordinate.rdp})


def hidden_sample_bound(event: dp_event.SampledWithoutReplacementDpEvent,
                        orders: np.ndarray) -> shuffle_round.RdpBound:
  """A hidden sample of a shuffle round (WBK19-THM9), cached: pure-LDP
  reports (KHH-SUBSAMPLED's ledger) or Gaussian ones."""
  inner = event.event
  if isinstance(inner.randomizer, randomizers.GaussianRandomizer):
    return _cached(
        ('sampled gaussian', event.source_dataset_size, event.sample_size,
         inner.randomizer), orders,
        lambda: _hidden_gaussian_sample_bound(
            event.source_dataset_size, event.sample_size, inner.randomizer,
            orders))
  key = ('sampled', event.source_dataset_size, event.sample_size,
         inner.local_epsilon)
  return _cached(
      key, orders, lambda: shuffle_round.subsampled_shuffle_rdp_upper_bound(
          event.source_dataset_size, event.sample_size,
          inner.local_epsilon, orders))


# The RDP route's one table: per shuffle event type (`_event_specs`), the
# per-order bound of one round, as grouped and accounted (RATE-ONE-DOMINATES).
ROUND_BOUNDS = {
    events.ShuffleEvent: shuffle_bound,
    events.CheckInEvent: checkin_bound,
    events.SubsampledShuffleGaussianEvent: sampled_gaussian_bound,
    events.DistributedCheckInEvent: distributed_bound,
    events.SkellamSecureSumEvent: skellam.skellam_sum_rdp_upper_bound,
    events.SumOfReportsEvent: sum_bound,
    events.BinomialSecureSumEvent: noise_sums.noise_sum_rdp_upper_bound,
    events.DiscreteGaussianSumEvent: noise_sums.noise_sum_rdp_upper_bound,
    events.DiscreteLaplaceSumEvent: noise_sums.noise_sum_rdp_upper_bound,
}
