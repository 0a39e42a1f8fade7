"""`ShuffleRdpAccountant`: dp_accounting's RDP accountant with shuffle events.

IDs: CONV-RDP2DP

It handles
* `ShuffleEvent` with pure LDP (`local_delta == 0`): the smallest sound RDP
  bound of `shuffle_round.shuffle_rdp_upper_bound` at each order, and for a
  named randomizer with a BLANKET-TWO-LEVEL table that of its blanket pair
  (BLANKET-RDP);
* `SampledWithoutReplacementDpEvent(N, m, ShuffleEvent(num_users=m, ...))`:
  a hidden uniform sample of m of N users reports (WBK19-THM9; for
  `GaussianRandomizer` reports on the bound of their shuffle, below);
* `CheckInEvent` (pure LDP or local Gaussian noise): LIEW-THM2 with the
  k = 0 term, per k the smaller of WBK19-THM9 and the Renyi moment of the
  symmetric pair with the KHH-SUBSAMPLED profile
  (`checkin.checkin_rdp_upper_bound`; docs/mathematics.md
  ORDERED-RDP-UNSOUND explains why the ordered pairs' moments are not used) and,
  for pure LDP, per order the smaller of that, the bound of the same round at
  rate 1 (DOMINATING-ROUNDS), so epsilon never exceeds its value at rate 1, and
  the Renyi divergence of the round's CHECKIN-BLANKET blanket pairs
  (BLANKET-RDP, `blanket`);
* `ShuffleEvent` with `GaussianRandomizer` reports: GAUSS-NO-GAIN, and for
  scalars NUM-BLANKET-RDP;
* `SubsampledShuffleGaussianEvent`: WBK19-THM9 on the Gaussian RDP without
  shuffling gain (docs/mathematics.md GAUSS-NO-GAIN), and for `dimension=1`
  on the shuffle's NUM-BLANKET-RDP (plain clipping) too;
* `DistributedCheckInEvent`: SECAGG-REVEALED (participants revealed, exact) or
  LIEW-THM4 with the k = 0 term (hidden) (`distributed`);
* `SkellamSecureSumEvent`: SKELLAM-SUM (`skellam`);
* `SumOfReportsEvent`: SUM-OF-BITS (`sums`), k-RR's sum as its shuffle;
* `BinomialSecureSumEvent`, `DiscreteGaussianSumEvent`,
  `DiscreteLaplaceSumEvent`: BINOMIAL-SUM (no finite RDP),
  DISCRETE-GAUSSIAN-SUM (`noise_sums`);
and delegates every other event to `dp_accounting.rdp.RdpAccountant`, so that
Gaussian, Laplace, composed and self-composed events keep their behaviour
(read with the library's sensitivity under REPLACE_ONE, below).

Shuffle events require `NeighboringRelation.REPLACE_ONE`, the accountant's
default, or another relation their spec names (`ShuffleEvent` and
`SumOfReportsEvent` also deletion, REPLACE_SPECIAL; the noisy integer sums
every relation). Under REPLACE_ONE `GaussianDpEvent(sigma)` means what it
means in dp_accounting's PLD accountant and in `ShufflePldAccountant`: noise
standard deviation sigma C on a sum of records clipped to norm C, so replacing
one record moves the sum by up to 2C (sensitivity 2 in units of sigma): RDP 2
order / sigma^2, also inside composed, self-composed and
`SampledWithoutReplacementDpEvent` events (dp_accounting's RDP accountant
alone would compose order / (2 sigma^2), sensitivity 1: half the mechanism the
PLD route accounts). `LaplaceDpEvent(b)` likewise moves by 2C on noise of
scale b C: largest privacy loss 2 / b (the parent alone reads 1 / b).
`PoissonSampledDpEvent` is refused under REPLACE_ONE, as by the parent, with a
message naming what to use instead. docs/mathematics.md UPSTREAM-SENSITIVITY
lists what each route does with every event of dp_accounting under each
relation.
"""

import math
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple, TypeAlias

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant
import numpy as np

from shuffle_accountants import _checkpointable
from shuffle_accountants import _deprecated
from shuffle_accountants import _upstream
from shuffle_accountants import _validation
from shuffle_accountants import events
from shuffle_accountants.core import _event_checks
from shuffle_accountants.core import _event_specs
from shuffle_accountants.core import _grouping
from shuffle_accountants.core import _ledger
from shuffle_accountants.pairs import sums as pair_sums
from shuffle_accountants.rdp import checkin
from shuffle_accountants.rdp import routes
from shuffle_accountants.rdp import shuffle_round
from shuffle_accountants.samplers import accounting as sampler_accounting

__all__ = [
    'NeighboringRelation', 'CompositionErrorDetails', 'REPLACE_ONE_SENSITIVITY',
    'DEFAULT_ORDERS', 'ORDER_EXTENSIONS', 'RATE_ONE_ROUND', 'BLANKET_PAIR',
    'ShuffleRdpContribution', 'GAUSSIAN_NO_AMPLIFICATION', 'parent_event',
    'log_delta_upper_bound', 'epsilon_upper_bound', 'exp_rounded_up',
    'ShuffleRdpAccountant',
]

NeighboringRelation: TypeAlias = privacy_accountant.NeighboringRelation
CompositionErrorDetails: TypeAlias = (
    privacy_accountant.PrivacyAccountant.CompositionErrorDetails)

# UPSTREAM-SENSITIVITY: replacing one record of norm <= C moves a sum of records
# by up to 2C.
REPLACE_ONE_SENSITIVITY = checkin.GAUSSIAN_SENSITIVITY

# Integer-heavy grid reaching 1024: at n = 10^6 the best order of GIRGIS-UB1
# can be ~900. Pass `orders` for more (every bound supports any order > 1).
DEFAULT_ORDERS = tuple(
    [1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 11, 12, 14,
     16, 18, 20, 22, 24, 28, 32, 36, 40, 48, 56, 64, 80, 96, 112, 128, 160,
     192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024])

# Orders beyond the default ones, in stages. When the best order of a ledger
# is the largest one, its epsilon is limited by about log(1 / delta) / order,
# not by the mechanism (a round at n = 10^7, eps0 = 0.1 is 100x looser than
# its PLD at 1024), so the ledger is also accounted at the next stage, and
# so on while the best order stays at the top.
ORDER_EXTENSIONS = (
    (1280, 1536, 2048, 2560, 3072, 4096),
    (5120, 6144, 8192, 10240, 12288, 16384),
    (20480, 24576, 32768, 40960, 49152, 65536),
    # A round at n = 1e9 or 1e10 and small eps0 needs orders near 1 / delta:
    # above about 1 / (e delta) the conversion's own term turns negative.
    (81920, 98304, 131072, 163840, 196608, 262144),
    (327680, 393216, 524288, 655360, 786432, 1048576),
    (1310720, 1572864, 2097152, 2621440, 3145728, 4194304),
)

# The names of the rate-1 candidate of a check-in round and of the blanket
# pairs (`routes`), kept here for those who read them from here.
RATE_ONE_ROUND = routes.RATE_ONE_ROUND
BLANKET_PAIR = routes.BLANKET_PAIR
GAUSSIAN_NO_AMPLIFICATION = routes.GAUSSIAN_NO_AMPLIFICATION
# The names before the proofs were named (until 0.2): deprecated (hidden
# from type checkers, which would read every attribute through it).
if not TYPE_CHECKING:
  __getattr__ = _deprecated.renamed(__name__, {
      'RATE_ONE_D19': 'RATE_ONE_ROUND', 'D32_BLANKET': 'BLANKET_PAIR'})

@attr.s(frozen=True, slots=True, auto_attribs=True, eq=False)
class ShuffleRdpContribution:
  """One shuffle event composed into the accountant.

  Attributes:
    event: the event as the user passed it.
    count: how many times it was composed.
    bound: the per-order RDP of one occurrence and which bound won.
    accounted_as: the round whose bound was used: `event` itself, or the
      more pessimistic round it was grouped with (`relative_grouping`).
  """
  event: dp_event.DpEvent
  count: int
  bound: shuffle_round.RdpBound
  accounted_as: dp_event.DpEvent


def parent_event(event: dp_event.DpEvent, relation: NeighboringRelation
                 ) -> Optional[dp_event.DpEvent]:
  """The event the parent composes for `event`, or None for `event` itself.

  See UPSTREAM-SENSITIVITY.

  dp_accounting's RDP accountant reads `GaussianDpEvent(sigma)` and
  `LaplaceDpEvent(b)` with sensitivity 1 under every relation; its PLD
  accountant reads the Gaussian under REPLACE_ONE with sensitivity 2 (the
  replace-one sensitivity 2C of a sum of records clipped to C, noise scaled
  by C). Under REPLACE_ONE, halving sigma (b) makes the parent's RDP that of
  sensitivity 2 (UPSTREAM-SENSITIVITY). A sampled event's Gaussians are halved
  through their effective sigma (which scales with each of them). A Laplace of
  scale 0 releases the sum itself: non-private, as in the parent's PLD
  accountant.
  """
  if isinstance(event, dp_event.LaplaceDpEvent) and not event.noise_multiplier:
    return dp_event.NonPrivateDpEvent()
  if relation is not NeighboringRelation.REPLACE_ONE:
    return None
  if isinstance(event, dp_event.GaussianDpEvent):
    return dp_event.GaussianDpEvent(event.noise_multiplier
                                    / REPLACE_ONE_SENSITIVITY)
  if isinstance(event, dp_event.LaplaceDpEvent):
    return dp_event.LaplaceDpEvent(event.noise_multiplier
                                   / REPLACE_ONE_SENSITIVITY)
  if (isinstance(event, dp_event.SampledWithoutReplacementDpEvent)
      and not _ledger.contains_shuffle(event.event)):
    sigma = _upstream.effective_gaussian_noise_multiplier(event.event)
    if isinstance(sigma, dp_event.DpEvent):
      return None  # not a Gaussian: the parent names it
    return dp_event.SampledWithoutReplacementDpEvent(
        event.source_dataset_size, event.sample_size,
        dp_event.GaussianDpEvent(sigma / REPLACE_ONE_SENSITIVITY))
  return None


# Relative error allowed for the float evaluation of a log-delta of
# CONV-RDP2DP: a few roundings of at most 2^-53 each, with room to spare.
_LOG_DELTA_MARGIN = 64 * np.finfo(float).eps


def log_delta_upper_bound(orders: np.ndarray, rdp: np.ndarray,
                          epsilon: float) -> Tuple[float, float]:
  """An upper bound on log delta at `epsilon` >= 0 and its order [UB].

  CONV-RDP2DP, as in dp_accounting's `compute_delta`: per order lambda the
  smaller of the conversion (lambda - 1)(r - eps + log(1 - 1/lambda))
  - log(lambda) (orders > 1.01) and the KL bound (1/2) log(1 - e^-r), kept
  in log space: dp_accounting exponentiates first, so a delta below 1e-308
  (the ledger's loss can reach 218 when its Renyi divergence is tiny)
  becomes 0.0, below the truth. Each log-delta is raised by a margin that
  covers the float error of its few operations (64 * 2^-52 of the sum of
  the terms' magnitudes), so the value returned is an upper bound.
  """
  orders = np.asarray(orders, dtype=float)
  rdp = np.asarray(rdp, dtype=float)
  rdp = np.where(np.isnan(rdp), np.inf, np.maximum(rdp, 0.0))  # NaN: no claim
  with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
    # -expm1(-r) stays positive for every r > 0 (1 - e^-r would round to 0).
    kl = np.where(rdp > 0, 0.5 * np.log(-np.expm1(-rdp)), -np.inf)
    log_tilt = np.log1p(-1 / orders)
    conversion = (orders - 1) * (rdp - epsilon + log_tilt) - np.log(orders)
    magnitude = ((orders - 1) * (rdp + epsilon + np.abs(log_tilt))
                 + np.log(orders))
  conversion = np.where((orders > 1.01) & (rdp > 0),
                        conversion + _LOG_DELTA_MARGIN * (magnitude + 1),
                        np.inf)
  conversion = np.where(np.isnan(conversion), np.inf, conversion)
  with np.errstate(invalid='ignore'):  # -inf (zero divergence) stays -inf
    kl = np.where(np.isfinite(kl), kl + _LOG_DELTA_MARGIN * (np.abs(kl) + 1),
                  kl)
  log_deltas = np.minimum(kl, conversion)
  best = int(np.argmin(log_deltas))
  return float(min(log_deltas[best], 0.0)), float(orders[best])


def epsilon_upper_bound(orders: np.ndarray, rdp: np.ndarray,
                        delta: float) -> Tuple[float, float]:
  """CONV-RDP2DP's epsilon at `delta` and its order, rounded up [UB].

  dp_accounting's `compute_epsilon` per order lambda,
  r + log(1 - 1/lambda) - (log delta + log lambda) / (lambda - 1) (orders
  > 1.01; 0 where the KL bound already gives delta), but with log delta
  and log lambda taken apart (delta * lambda loses digits below 1e-308)
  and raised by a margin that covers both its own float error and
  `log_delta_upper_bound`'s, so that the delta certified back at the
  answer is at most `delta`.
  """
  orders = np.asarray(orders, dtype=float)
  rdp = np.asarray(rdp, dtype=float)
  rdp = np.where(np.isnan(rdp), np.inf, np.maximum(rdp, 0.0))
  if delta == 0:
    return (0.0 if np.all(rdp == 0) else np.inf), 0.0
  log_delta = math.log(delta)
  with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
    kl = np.where(rdp > 0, 0.5 * np.log(-np.expm1(-rdp)), -np.inf)
    kl_met = (rdp == 0) | (kl + _LOG_DELTA_MARGIN * (np.abs(kl) + 1)
                          <= log_delta)
    log_tilt = np.log1p(-1 / orders)
    log_orders = np.log(orders)
    epsilons = rdp + log_tilt - (log_delta + log_orders) / (orders - 1)
    margin = _LOG_DELTA_MARGIN * (
        2 * (rdp + np.abs(epsilons) + np.abs(log_tilt))
        + (2 * log_orders + abs(log_delta) + 2) / (orders - 1))
  epsilons = np.where(orders > 1.01, epsilons + margin, np.inf)
  epsilons = np.where(kl_met, 0.0, epsilons)
  epsilons = np.where(np.isnan(epsilons), np.inf, epsilons)
  best = int(np.argmin(epsilons))
  return max(0.0, float(epsilons[best])), float(orders[best])


def exp_rounded_up(log_value: float) -> float:
  """A float >= e^log_value, and > 0 whenever log_value > -inf.

  libm's exp is within one unit in the last place, so two steps up cover
  it; where exp underflows to 0 the result is two subnormal steps (1e-323).
  """
  if log_value == -np.inf:
    return 0.0
  value = np.nextafter(np.nextafter(np.exp(log_value), np.inf), np.inf)
  return float(min(value, 1.0))


class ShuffleRdpAccountant(_checkpointable.Checkpointable,
                           _ledger.ShuffleAccountant,
                           rdp_privacy_accountant.RdpAccountant):
  """RDP accountant for shuffle-model events, composable with all others.

  Example:
    >>> accountant = ShuffleRdpAccountant()
    >>> accountant.compose(ShuffleEvent(num_users=10**6, local_epsilon=1.0),
    ...                    count=1000)
    >>> accountant.get_epsilon(1e-6)

  Every RDP value composed for a shuffle event is a proven upper bound
  (see `shuffle_round` and `checkin`); `contributions` and `explain` show which
  bound won. `state_dict()` / `load_state_dict()` save and restore it exactly
  (`shuffle_accountants.checkpoints`).
  """

  def __init__(self, orders: Optional[Sequence[float]] = None,
               neighboring_relation: NeighboringRelation = (
                   NeighboringRelation.REPLACE_ONE),
               relative_grouping: float = _grouping.DEFAULT_RELATIVE_STEP):
    """Initialises the accountant.

    Args:
      orders: RDP orders; by default `DEFAULT_ORDERS` (1.25 to 1024),
        extended by `ORDER_EXTENSIONS` for the ledgers that need them.
      neighboring_relation: must be REPLACE_ONE for shuffle events; other
        relations still serve every event the parent supports.
      relative_grouping: s in [0, 0.1]. A round is accounted as the round
        composed before it with the fewest users (highest check-in rate) in
        its bin of ratio 1 + s (rates: 1 + s / 2) if it has no fewer users
        (no lower rate) itself (`_grouping`, sound), which saves computing
        its bound; its epsilon rises by at most about s / 2. 0 accounts every
        round as it is.
    """
    _validation.check_neighboring_relation(neighboring_relation)
    self._grouping = _grouping.Grouping(_validation.check_real(
        'relative_grouping', relative_grouping, 0.0, 0.1))
    if orders is not None:
      if isinstance(orders, (str, bytes)) or np.ndim(orders) != 1:
        raise TypeError('orders must be a 1-d sequence or array of numbers >= '
                        f'1; got {orders!r}.')
      # The parent accepts order 1 (KL) and +inf; shuffle events need finite
      # orders > 1 and say so when composed.
      try:
        orders = [float(o) for o in orders]
      except (TypeError, ValueError):
        raise TypeError(f'orders must be numbers; got {orders!r}.') from None
      bad = [o for o in orders if not o >= 1]
      if bad or not orders:
        raise ValueError('orders must be a non-empty sequence of numbers >= '
                         f'1; got {bad[0] if bad else orders!r}.')
    super().__init__(DEFAULT_ORDERS if orders is None else orders,
                     neighboring_relation)
    self._extend_orders = orders is None
    self._extensions: List[Optional[ShuffleRdpAccountant]] = []
    # The order stages the last query asked (`explain_routes`).
    self._last_stages: Optional[List[dict]] = []
    self._contributions: List[ShuffleRdpContribution] = []
    # Its routes (`_routes`), built by the first query on this ledger.
    self._certified: Optional[_ledger.CertifiedRoutes] = None

  def configuration(self) -> dict:
    """The constructor's settings, as saved in the state."""
    return dict(
        orders=None if self._extend_orders else [float(order) for order
                                                 in self.orders],
        neighboring_relation=self.neighboring_relation.name,
        relative_grouping=self._grouping.relative_step)

  def compose(self, event: dp_event.DpEvent, count: int = 1
              ) -> 'ShuffleRdpAccountant':
    """Composes `event` `count` times (an integer >= 0); see the parent."""
    return super().compose(event, _validation.check_count(count))

  def get_epsilon_and_optimal_order(self, target_delta: float
                                    ) -> Tuple[float, float]:
    """CONV-RDP2DP epsilon at `target_delta` in [0, 1] and its order."""
    target_delta = _validation.check_delta('target_delta', target_delta)
    return self._over_extensions(
        lambda accountant: epsilon_upper_bound(
            accountant.orders, accountant.rdp, target_delta))

  def get_epsilon(self, target_delta: float) -> float:
    """Certified epsilon: the smallest over the routes (`_routes`)."""
    target_delta = _validation.check_delta('target_delta', target_delta)
    return self._certified_routes().epsilon(target_delta)

  def _certified_routes(self) -> _ledger.CertifiedRoutes:
    if self._certified is None:
      self._certified = _ledger.CertifiedRoutes(self._routes())
    return self._certified

  def _routes(self) -> List[_ledger.Route]:
    """CONV-RDP2DP over the order stages; the one-user ledgers
    (DOMINATING-ROUNDS; rate 1 is a candidate per round and order, not a
    ledger); basic composition."""
    own = _ledger.OwnRoute(
        'CONV-RDP2DP (over the order stages asked)',
        lambda target_delta: self.get_epsilon_and_optimal_order(
            target_delta)[0],
        self._own_delta, lambda: self._last_stages)
    return [own, *_ledger.dominating_routes(self.ledger, self.holding,
                                            self.neighboring_relation),
            _ledger.BasicCompositionRoute(self.ledger,
                                          self.neighboring_relation)]

  def get_delta(self, target_epsilon: float) -> float:
    """Certified delta at `target_epsilon` >= 0, in [0, 1]."""
    target_epsilon = _validation.check_epsilon('target_epsilon',
                                               target_epsilon)
    return self._certified_routes().delta(target_epsilon)

  def _own_delta(self, target_epsilon: float) -> float:
    """CONV-RDP2DP's delta over the order stages (their deltas in
    `_last_stages`, None where no order is asked)."""
    self._last_stages = None
    if target_epsilon == np.inf:  # finite RDP at some order: delta 0 there
      return 0.0 if np.any(np.isfinite(self.rdp)) else 1.0
    if not np.any(self.rdp > 0):  # nothing composed, or perfect privacy
      return 0.0
    log_delta, _ = self._over_extensions(
        lambda accountant: log_delta_upper_bound(
            accountant.orders, accountant.rdp, target_epsilon),
        by_order=False)
    stages: List[dict] = self._last_stages or []
    self._last_stages = [dict(entry, value=exp_rounded_up(entry['value']))
                         for entry in stages]
    return exp_rounded_up(log_delta)

  def _over_extensions(self, query, by_order: bool = True
                       ) -> Tuple[float, float]:
    """The smallest (value, order) of `query` over the order stages.

    Every stage is the same ledger accounted soundly at other orders, so
    the smallest value is certified. The next stage is asked while the best
    order so far is the largest one asked (`by_order`), or else while the
    last stage improved the value (dp_accounting's delta conversion does not
    report a meaningful order).
    """
    best = query(self)
    order, top, improved = best[1], self.orders.max(), True
    self._last_stages = [self._stage_entry(self, best[0], 'itself')]
    for stage in range(len(ORDER_EXTENSIONS) if self._extend_orders else 0):
      if (order < top) if by_order else not improved:
        break
      extended = self._extension(stage)
      if extended is None:
        break
      candidate = query(extended)
      self._last_stages.append(self._stage_entry(
          extended, candidate[0], type(extended).__name__))
      order, top = candidate[1], max(ORDER_EXTENSIONS[stage])
      improved = candidate[0] < best[0]
      if improved:
        best = candidate
    return best

  @staticmethod
  def _stage_entry(accountant: 'ShuffleRdpAccountant', value: float,
                   holder: str) -> dict:
    return dict(orders=(float(accountant.orders.min()),
                        float(accountant.orders.max())),
                value=float(value), accountant=holder)

  def _extension(self, stage: int) -> Optional['ShuffleRdpAccountant']:
    """The ledger accounted at the orders of `ORDER_EXTENSIONS[stage]`."""
    while len(self._extensions) <= stage:
      try:
        self._extensions.append(self.holding(
            self.ledger, orders=ORDER_EXTENSIONS[len(self._extensions)]))
      except (privacy_accountant.UnsupportedEventError, ValueError,
              ArithmeticError):
        self._extensions.append(None)
    return self._extensions[stage]

  @property
  def contributions(self) -> Tuple[ShuffleRdpContribution, ...]:
    """The shuffle events composed so far, with their per-order bounds."""
    return tuple(self._contributions)

  def explain(self, target_delta: float) -> List[dict]:
    """Which bound won for each shuffle event at the optimal order.

    Args:
      target_delta: the delta at which epsilon is reported.

    Returns:
      One dict per composed shuffle event with keys 'event', 'count',
      'order' (the optimal order of the whole composition), 'bound' (the
      winning bound's name) and 'rdp' (count times its RDP at that order).
      Which routes of the ledger answered: `explain_routes`.
    """
    _, order = self.get_epsilon_and_optimal_order(target_delta)
    # The accountant (this one or an order extension) that holds the order.
    holder = next((a for a in [self] + self._extensions
                   if a is not None and np.any(a.orders == order)), self)
    index = int(np.argmin(np.abs(holder.orders - order)))
    return [dict(event=c.event, count=c.count, order=float(order),
                 bound=c.bound.winners[index],
                 rdp=float(c.count * c.bound.rdp[index]))
            for c in holder.contributions]

  def _check_relation_and_orders(self, reported: dp_event.DpEvent
                                  ) -> Optional[CompositionErrorDetails]:
    relation_error = _event_checks.check_relation(self.neighboring_relation,
                                                  reported)
    if relation_error is not None:
      return relation_error
    if np.any(self.orders <= 1) or not np.all(np.isfinite(self.orders)):
      return _event_checks.error(reported, (
          'shuffle RDP bounds need every order finite and > 1; this '
          f'accountant has orders from {self.orders.min()} to '
          f'{self.orders.max()}.'))
    return None

  def _check_shuffle_event(self, event: events.ShuffleEvent,
                           reported: dp_event.DpEvent
                           ) -> Optional[CompositionErrorDetails]:
    if event.local_delta > 0:
      return _event_checks.error(reported, (
          f'local_delta={event.local_delta} > 0: approximate-LDP randomizers '
          'have no finite RDP bound (APPROX-LDP-NO-RDP: '
          '`shuffle-accountant reference APPROX-LDP-NO-RDP`), '
          'so the RDP accountant cannot '
          'account them; use ShufflePldAccountant.'))
    return self._check_relation_and_orders(reported)

  def _add(self, event, count, bound, accounted_as=None):
    _upstream.add_rdp(self, count * bound.rdp)
    self._contributions.append(ShuffleRdpContribution(
        event, count, bound, accounted_as or event))

  def _representative(self, event, count):
    if count > 0:
      self._grouping.observe(event)
    return self._grouping.representative(event)

  # ---- the compose step (`_ledger.ShuffleAccountant`)

  def _forget_answers(self) -> None:
    self._extensions = []
    self._certified = None

  def _check_own_participation(self, event
                              ) -> Optional[CompositionErrorDetails]:
    return self._check_relation_and_orders(event)

  def _check_other(self, event: dp_event.DpEvent, count: int
                   ) -> Optional[CompositionErrorDetails]:
    if (isinstance(event, dp_event.PoissonSampledDpEvent)
        and self.neighboring_relation is NeighboringRelation.REPLACE_ONE):
      return _event_checks.poisson_replace_one_rdp_error(event)
    if isinstance(event, sampler_accounting.SAMPLER_EVENT_TYPES):
      return sampler_accounting.rdp_error(event, self.neighboring_relation)
    return self._parent_event(event, count, False)

  def _parent_event(self, event: dp_event.DpEvent, count: int,
                    do_compose: bool) -> Optional[CompositionErrorDetails]:
    """dp_accounting's event, read with the library's convention.

    See UPSTREAM-SENSITIVITY.
    """
    event = parent_event(event, self.neighboring_relation) or event
    return _upstream.compose_parent_rdp_event(self, event, count, do_compose)

  def _compose_event(self, event: dp_event.DpEvent, count: int) -> None:
    for leaf_event, leaf_count in _ledger.leaves(event, count):
      leaf = _ledger.classify(leaf_event)
      if leaf.kind in (_ledger.Kind.SHUFFLE, _ledger.Kind.OWN_PARTICIPATION):
        self._compose_round(leaf_event, leaf_count)
      elif leaf.kind is _ledger.Kind.HIDDEN_SAMPLE:
        self._compose_hidden_sample(leaf_event, leaf_count)
      elif isinstance(leaf_event, sampler_accounting.SAMPLER_EVENT_TYPES):
        _upstream.add_rdp(self, leaf_count * sampler_accounting
                          .shuffled_batches_rdp(leaf_event, self.orders,
                                                self.neighboring_relation))
      else:
        self._parent_event(leaf_event, leaf_count, True)

  def _compose_round(self, event, count: int) -> None:
    """A round (as grouped and accounted) by `routes.ROUND_BOUNDS`.

    As accounted: RATE-ONE-DOMINATES.
    """
    rounded = pair_sums.accounted_under(
        _event_specs.accounted_round(self._representative(event, count)),
        self.neighboring_relation)
    bound = _event_specs.route_entry(routes.ROUND_BOUNDS, rounded)(
        rounded, self.orders)
    if (self.neighboring_relation is NeighboringRelation.REPLACE_SPECIAL
        and not isinstance(rounded, pair_sums.SumUnderDeletion)):
      # Every name says the bound is replace-one's, read under deletion.
      bound = shuffle_round.smallest_bound(self.orders, {
          f'{name}; {pair_sums.DELETION_AS_REPLACE_ONE}': rdp
          for name, rdp in bound.candidates.items()})
    self._add(event, count, bound, rounded)

  def _compose_hidden_sample(self, event, count: int) -> None:
    self._add(event, count, routes.hidden_sample_bound(event, self.orders))
