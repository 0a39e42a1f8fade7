"""`ShufflePldAccountant`: dp_accounting's PLD accountant with shuffle events.

IDs: KHH-DOM, LABEL-MIXTURE, TAILS-TO-INFINITY

It handles
* `ShuffleEvent` with pure LDP: the FMT21 clone pair (KHH-PLD-GENERIC);
* `ShuffleEvent(num_categories=k)`: k-randomized response, with the pairs of
  Koskela et al. for the adversary the accountant was built for
  (`krr_adversary`) and, for a server that sees only the shuffled reports,
  also the generic clone pair;
* `ShuffleEvent(local_delta > 0)`: approximate LDP through FMT-EQ10-11 as
  (eps, delta) statements, falling back to the unamplified (eps0, delta0);
* `SampledWithoutReplacementDpEvent(N, m, ShuffleEvent(num_users=m, ...))`:
  a hidden uniform sample of m of N users reports (KHH-SUBSAMPLED, both
  orders dominated by one symmetric pair, docs/mathematics.md ZDW22-ONE-ORDER);
* `CheckInEvent`: the k-labelled mixture (docs/mathematics.md LABEL-MIXTURE)
  over k ~ Bin(n, gamma) of KHH-SUBSAMPLED pairs with ratio k / n, on the clone
  pair of k users (pure LDP) or on the unshuffled Gaussian pair (local noise,
  docs/mathematics.md GAUSS-NO-GAIN);
* `SubsampledShuffleGaussianEvent`: KHH-SUBSAMPLED on the Gaussian pair
  (`pld.checkin`); with `dimension=1`, also the hidden sample of the
  shuffle of its m scalar reports (NUM-BLANKET (v), as above), the smaller
  profile kept;
* `DistributedCheckInEvent`: the exact mixture over the target's revealed
  participation and count (SECAGG-REVEALED), or the SECAGG-HIDDEN pair mixed
  over the count when participants are hidden (`pld.distributed`);
* `SkellamSecureSumEvent`: the symmetric pair of its RDP profile
  (SKELLAM-SUM, `pld.skellam`);
* `SumOfReportsEvent`: SUM-OF-BITS (`pld.sums`), k-RR's sum as its shuffle;
* `BinomialSecureSumEvent`, `DiscreteGaussianSumEvent`,
  `DiscreteLaplaceSumEvent`: the shifted pair of the noise
  (LATTICE-NOISE-PAIR, `pld.noise_sums`);
and delegates every other event to `dp_accounting.pld.PLDAccountant`.

Grid: by default (`value_discretization_interval=None`) the grid is chosen
when epsilon is requested, from the events in the ledger (`grid`). A fixed
grid can be passed instead.

Each event becomes one privacy loss distribution that dominates the
mechanism in both orders of the replace-one relation, discretized
pessimistically by connect-the-dots (`pld.discrete`); when several pairs are
valid, the pointwise smallest profile (convexified) is used (`candidates`).
Composition is
dp_accounting's (FFT; `self_compose` for repeated events), so the reported
epsilon is an upper bound for the composed mechanism. The accountant holds
the ledger and answers; the composition on a grid is `_grid_composition`'s.

Shuffle events require `NeighboringRelation.REPLACE_ONE`, the default here,
or another relation their spec names (`ShuffleEvent` and `SumOfReportsEvent`
also deletion, REPLACE_SPECIAL; the noisy integer sums every relation).
Under REPLACE_ONE the parent treats `GaussianDpEvent(sigma)` as having L2
sensitivity 2 (dp-accounting >= 0.5), i.e. `noise_multiplier` is the noise
standard deviation divided by the clipping norm of one record.
"""

from typing import Callable, List, Optional, Tuple, TypeAlias, Union

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting.pld import pld_privacy_accountant
import numpy as np

from shuffle_accountants import _checkpointable
from shuffle_accountants import _progress
from shuffle_accountants import _upstream
from shuffle_accountants import _validation
from shuffle_accountants import events
from shuffle_accountants.core import _event_checks
from shuffle_accountants.core import _grouping
from shuffle_accountants.core import _ledger
from shuffle_accountants.pairs import clone_pairs
from shuffle_accountants.pld import _grid_composition
from shuffle_accountants.pld import candidates
from shuffle_accountants.pld import composition
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import gaussian_ledger
from shuffle_accountants.pld import grid
from shuffle_accountants.rdp import accountant as rdp_accountant
from shuffle_accountants.samplers import accounting as sampler_accounting

__all__ = [
    'NeighboringRelation', 'CompositionErrorDetails', 'KRR_ADVERSARIES',
    'ShufflePldContribution', 'RDP_ALSO_BELOW_DELTA', 'ShufflePldAccountant',
]

NeighboringRelation: TypeAlias = privacy_accountant.NeighboringRelation
CompositionErrorDetails: TypeAlias = (
    privacy_accountant.PrivacyAccountant.CompositionErrorDetails)
KRR_ADVERSARIES = candidates.KRR_ADVERSARIES
ShufflePldContribution = _grid_composition.ShufflePldContribution

# The RDP route is also asked from where the composed PLD places epsilon at
# this delta on (`_rdp_cut`). There the certified PLD (ROUNDOFF-CERTIFIED) can
# be far looser than RDP (ShuffleEvent(1375, 5.7e-4, num_categories=2) x 381184:
# delta 5.1e-10 against 7.5e-28 at epsilon = 0.1); above it RDP rarely wins and
# its ledger would slow ordinary calls many times (docs/performance.md).
RDP_ALSO_BELOW_DELTA = 1e-9
# The cut sits this far (relative) above the located epsilon: a query at
# exactly RDP_ALSO_BELOW_DELTA, customary in deployments, gets a certified
# PLD epsilon a hair (2e-7 relative at n = 1e9) above the FFT's location
# and asked the RDP ledger for nothing (8 s of a 14 s sum round at n =
# 1e9). Where the certificate is that close to the location the PLD is
# tight, so RDP, also an upper bound, can win there by little; below
# RDP_ALSO_BELOW_DELTA an RDP answer is raised to the cut, so the margin
# costs at most its own size there (Skellam x 100 at delta = 1e-10).
RDP_CUT_MARGIN = 1e-5


@attr.s(auto_attribs=True)
class _Derived:
  """What the accountant derives from its ledger, each on first request;
  a new one (all None) whenever the ledger grows."""
  grid: Optional[Tuple[float, bool]] = None  # automatic grid only
  grouped: Optional[dp_event.DpEvent] = None  # the grid's and the PLD's
  # The same; or the GridTooFineError it raised (raised again at once: a
  # dominating ledger's failed composition is not redone by every query).
  composition: Optional[Union[_grid_composition.GridComposition,
                              Exception]] = None
  estimate: Optional[_grid_composition.GridComposition] = None
  cut: Optional[float] = None
  routes: Optional[_ledger.CertifiedRoutes] = None
  # A long Gaussian-only ledger's closed form (False: none applies).
  gaussian: Optional[object] = None


class ShufflePldAccountant(_checkpointable.Checkpointable,
                           _ledger.ShuffleAccountant,
                           pld_privacy_accountant.PLDAccountant):
  """PLD accountant for shuffle-model events, composable with all others.

  Example:
    >>> accountant = ShufflePldAccountant()
    >>> accountant.compose(ShuffleEvent(num_users=10**6, local_epsilon=1.0),
    ...                    count=1000)
    >>> accountant.get_epsilon(1e-6)

  `state_dict()` / `load_state_dict()` save and restore it exactly
  (`shuffle_accountants.checkpoints`).

  It holds the ledger (the parent's) and answers from a composition of it
  on one grid (`_grid_composition`); the parent's `_maybe_compose` only
  checks events here.
  """

  def __init__(self,
               neighboring_relation: NeighboringRelation = (
                   NeighboringRelation.REPLACE_ONE),
               value_discretization_interval: Optional[float] = None,
               relative_accuracy: float = 1e-3,
               krr_adversary: str = 'shuffled_output',
               relative_width: float = clone_pairs.DEFAULT_RELATIVE_WIDTH,
               relative_grouping: float = _grouping.DEFAULT_RELATIVE_STEP,
               progress: _progress.ProgressOption = False):
    """Initialises the accountant.

    Args:
      neighboring_relation: must be REPLACE_ONE for shuffle events; other
        relations still serve every event the parent supports.
      value_discretization_interval: None to choose the PLD grid from the
        composed events when epsilon is requested, or a fixed spacing d > 0
        (then events are composed immediately, as in the parent). Every event
        is discretized pessimistically, so a coarser grid is faster and
        looser, never unsound.
      relative_accuracy: target relative discretization error r of the
        automatic grid, in [1e-6, 0.1] (random allocation: PLD_accounting's
        loss discretization 15 r, within [0.0075, 0.05]).
      krr_adversary: one of `KRR_ADVERSARIES`, the observer of k-RR shuffles.
      relative_width: grouping of clone counts (see `clone_pairs`); the
        epsilon of a shuffle round is inflated by about half of it.
      relative_grouping: s in [0, 0.1]. Rounds whose user counts lie in the
        same bin of ratio 1 + s (check-in rates: 1 + s / 2) and that agree
        otherwise are accounted as the one with the fewest users and the
        highest rate (with a fixed grid: among the rounds composed so far)
        (`_grouping`, sound); each round's epsilon rises by at most about
        s / 2. 0 accounts every round as it is.
      progress: False (default) for silence; True to show the progress of
        long work (choosing the grid, building the rounds' PMFs) on stderr
        once it has taken two seconds; or a callable receiving
        (phase, done, total) after every step.
    """
    _validation.check_neighboring_relation(neighboring_relation)
    _progress.Progress(progress, '', 0)  # validates the option
    if value_discretization_interval is not None:
      value_discretization_interval = _validation.check_real(
          'value_discretization_interval', value_discretization_interval, 0.0,
          1.0, min_inclusive=False)
    self._relative_accuracy = _validation.check_real(
        'relative_accuracy', relative_accuracy, 1e-6, 0.1)
    if krr_adversary not in KRR_ADVERSARIES:
      raise ValueError(f'krr_adversary must be one of {KRR_ADVERSARIES}; got '
                       f'{krr_adversary!r}.')
    self._relative_width = _validation.check_real(
        'relative_width', relative_width, 0.0, 0.1, min_inclusive=False)
    self._relative_grouping = _validation.check_real(
        'relative_grouping', relative_grouping, 0.0, 0.1)
    self._automatic_grid = value_discretization_interval is None
    super().__init__(neighboring_relation,
                     value_discretization_interval or grid.DEFAULT_GRID)
    # The parent's PLD is never composed here (`_composition` holds it):
    # removed, so that reading it fails instead of finding the identity.
    _upstream.forget_parent_pld(self)
    self._krr_adversary = krr_adversary
    self._progress_option = progress
    # With a fixed grid, the ledger composed as it grows.
    self._fixed: Optional[_grid_composition.GridComposition] = (
        None if self._automatic_grid else self._new_composition(
            _upstream.value_discretization_interval(self),
            discrete.connect_the_dots))
    self._derived = _Derived()

  def configuration(self) -> dict:
    """The constructor's settings (progress aside), as saved in the state."""
    return dict(
        neighboring_relation=self.neighboring_relation.name,
        value_discretization_interval=(
            None if self._automatic_grid
            else _upstream.value_discretization_interval(self)),
        relative_accuracy=self._relative_accuracy,
        krr_adversary=self._krr_adversary,
        relative_width=self._relative_width,
        relative_grouping=self._relative_grouping)

  def _empty(self) -> None:
    progress = self._progress_option  # not configuration: kept
    super()._empty()
    self._progress_option = progress

  @property
  def krr_adversary(self) -> str:
    return self._krr_adversary

  @property
  def value_discretization_interval(self) -> float:
    """The grid spacing in use (chosen from the ledger in automatic mode)."""
    if not self._automatic_grid:
      return _upstream.value_discretization_interval(self)
    return self._grid_choice()[0]

  def _grid_choice(self) -> Tuple[float, bool]:
    """(spacing, budget-limited) of the automatic grid, cached per ledger."""
    if self._derived.grid is None:
      ledger = self._grouped_ledger()
      self._derived.grid = grid.automatic_grid(
          ledger, self._relative_accuracy, self._krr_adversary,
          self._relative_width,
          self._progress_over(ledger, 'choosing the grid'))
    return self._derived.grid

  def _progress_over(self, ledger: dp_event.DpEvent, phase: str
                     ) -> _progress.Progress:
    """Progress over the shuffle rounds of `ledger`."""
    return _progress.Progress(self._progress_option, phase,
                              len(_ledger.shuffle_rounds(ledger)))

  def _grouped_ledger(self) -> dp_event.DpEvent:
    if self._derived.grouped is None:
      self._derived.grouped = _grouping.grouped_ledger(
          self.ledger, self._relative_grouping)
    return self._derived.grouped

  def _also_rdp(self) -> bool:
    """Whether the resource budget coarsened the automatic grid."""
    return self._automatic_grid and self._grid_choice()[1]

  @property
  def contributions(self) -> Tuple[ShufflePldContribution, ...]:
    """The shuffle events composed so far and the pairs used for each."""
    if self._closed_form():
      return ()  # a Gaussian-only ledger holds no shuffle event
    try:
      return tuple(self._composition().contributions)
    except composition.GridTooFineError:
      # no PLD within budget: nothing composed
      return ()

  def compose(self, event: dp_event.DpEvent, count: int = 1
              ) -> 'ShufflePldAccountant':
    """Composes `event` `count` times (an integer >= 0); see the parent.

    With a fixed grid the composition happens now, as in the parent (so a
    grid too fine for the count raises here); the rounds of one call are
    composed in one batch.
    """
    return super().compose(event, _validation.check_count(count))

  def get_epsilon(self, target_delta: float) -> float:
    """Certified epsilon at `target_delta` in [0, 1] (upper bound).

    The inverse of `get_delta`: the smallest epsilon whose certified delta
    is at most `target_delta`. From the PLD, and, from `_rdp_cut` on, also
    from the RDP route over the same ledger (when it supports every event);
    never more than basic composition of LDP rounds (`_ledger`), so a ledger
    of LDP rounds gets a finite answer at every delta >= its summed local
    deltas. `inf` means no route certifies a finite epsilon at this delta
    (for the PLD: the delta lies below its mass at +infinity,
    TAILS-TO-INFINITY).
    """
    target_delta = _validation.check_delta('target_delta', target_delta)
    return self._certified_routes().epsilon(target_delta)

  def get_delta(self, target_epsilon: float) -> float:
    """Certified delta at `target_epsilon` >= 0 (upper bound, in [0, 1]).

    The PLD's delta, and from `_rdp_cut` on the smaller of it and the RDP
    route's (rounded up, never to 0 where positive): non-increasing in
    epsilon, and `get_epsilon` is its inverse.
    """
    target_epsilon = _validation.check_epsilon('target_epsilon',
                                               target_epsilon)
    return self._certified_routes().delta(target_epsilon)

  def _certified_routes(self) -> _ledger.CertifiedRoutes:
    if self._derived.routes is None:
      self._derived.routes = _ledger.CertifiedRoutes(self._routes())
    return self._derived.routes

  def _routes(self) -> List[_ledger.Route]:
    """The PLD; the RDP route from `_rdp_cut` on; the ledgers that
    dominate it (DOMINATING-ROUNDS, SUM-OF-BITS-WITH-NOISE (iii)), each with
    its own automatic grid, so the smallest answer over them keeps epsilon
    never above the rate-1 (RATE-ONE-DOMINATES, rates from 1/2), one-user
    and noise-alone ledgers, whatever the grids; basic composition."""
    own = _ledger.OwnRoute(
        'the exact Gaussian profile (GAUSS-LEDGER-EXACT)'
        if self._closed_form() else
        'PLD (connect-the-dots on its grid, TAILS-TO-INFINITY)',
        lambda target_delta: self._route_value(
            lambda composed: composed.epsilon(target_delta), np.inf),
        lambda target_epsilon: self._route_value(
            lambda composed: composed.delta(target_epsilon), 1.0))
    return [own, _ledger.AccountantRoute('companion', self._rdp_route,
                                         asked_from=self._rdp_cut),
            *_ledger.dominating_routes(self.ledger, self.holding,
                                       self.neighboring_relation,
                                       rate_one=True),
            _ledger.BasicCompositionRoute(self.ledger,
                                          self.neighboring_relation)]

  def _rdp_route(self) -> Optional[rdp_accountant.ShuffleRdpAccountant]:
    """An RDP accountant holding the ledger, or None if it cannot compose
    it (the one edge from the PLD route to the RDP route)."""
    try:
      return _ledger.held(
          rdp_accountant.ShuffleRdpAccountant,
          dict(neighboring_relation=self.neighboring_relation.name),
          self.ledger)
    except (privacy_accountant.UnsupportedEventError, ValueError,
            ArithmeticError):  # e.g. dp_accounting's RDP of zero noise
      return None

  def _rdp_cut(self) -> float:
    """The epsilon from which the RDP route is also asked (per ledger).

    Both answers are certified, so their pointwise smaller profile is too;
    taking it only from one epsilon on, the same for `get_delta` and
    `get_epsilon`, keeps the reported profile non-increasing and each
    query the inverse of the other. The cut is `RDP_CUT_MARGIN` above
    where the composed PLD places epsilon at `RDP_ALSO_BELOW_DELTA` (its
    FFT result: any cut keeps the answers certified and consistent, and
    this one costs no round-off
    certificate, seconds on long ledgers: docs/performance.md), or 0 (RDP
    everywhere) when the PLD cannot be built, reaches no finite epsilon
    there, or sits on a grid the resource budget coarsened (10^9 rounds at
    eps0 = 13: 3.6e7 against 5.2e6 on the RDP route).
    """
    if self._derived.cut is None:
      cut = self._route_value(
          lambda composed: composed.located_epsilon(RDP_ALSO_BELOW_DELTA),
          np.inf)
      self._derived.cut = (0.0 if cut == np.inf or self._also_rdp()
                           else cut * (1 + RDP_CUT_MARGIN))
    return self._derived.cut

  def _route_value(self, query: Callable[
      [_grid_composition.GridComposition], float], unavailable: float
                   ) -> float:
    """`query` of the composed PLD (closed forms), or `unavailable`."""
    closed_form = self._closed_form()
    if closed_form:
      return query(closed_form)
    try:
      composed = self._composition()
    except composition.GridTooFineError:
      if not self._automatic_grid:
        raise
      return unavailable
    return query(composed)

  def _closed_form(self):
    """The exact profile of a long Gaussian-only ledger in automatic mode
    (GAUSS-LEDGER-EXACT: its grid would take minutes), or False."""
    if self._derived.gaussian is None:
      mu = (gaussian_ledger.composed_mu(self.ledger, self.neighboring_relation)
            if self._automatic_grid else None)
      self._derived.gaussian = (
          mu is not None and mu >= gaussian_ledger.CLOSED_FORM_FROM_MU
          and gaussian_ledger.ClosedFormGaussian(mu))
    return self._derived.gaussian

  def get_optimistic_epsilon(self, target_delta: float) -> float:
    """An estimate below `get_epsilon`, to show the discretization gap.

    Not a bound. Shuffle rounds are discretized by splitting each atom of
    their dominating pair between its two grid points so as to keep its mean
    loss; at every grid point that profile is below the pair's. Other events
    keep the parent's (pessimistic) PLD. Computed only when asked for.
    """
    target_delta = _validation.check_delta('target_delta', target_delta)
    if self._closed_form():  # exact: nothing to estimate
      return self.get_epsilon(target_delta)
    try:
      composed = self._composition()
    except composition.GridTooFineError:
      return np.inf
    if composed.contains_non_dp_event:
      return np.inf
    if self._derived.estimate is None:
      self._derived.estimate = self._composed_grouped_ledger(
          composed.interval, discrete.split_preserving_mean)
    # dp_accounting's answer on the estimate's PLD: the soundness floors and
    # the RDP route of `get_epsilon` have no business in an estimate; basic
    # composition keeps it below `get_epsilon` where that caps the answer.
    with np.errstate(over='ignore', divide='ignore', invalid='ignore'):
      estimate = self._derived.estimate.pld.get_epsilon_for_delta(
          target_delta)
    return _ledger.capped_epsilon(self.ledger, self.neighboring_relation,
                                  target_delta, estimate)

  def _new_composition(self, interval: float, discretize,
                       progress: Optional[_progress.Progress] = None
                       ) -> _grid_composition.GridComposition:
    return _grid_composition.GridComposition(
        self.neighboring_relation, interval, discretize, self._krr_adversary,
        self._relative_width, self._relative_grouping,
        self._relative_accuracy, progress)

  def _composed_grouped_ledger(self, interval: float, discretize
                               ) -> _grid_composition.GridComposition:
    """The grouped ledger composed on a grid of spacing `interval`."""
    ledger = self._grouped_ledger()
    return self._new_composition(
        interval, discretize, self._progress_over(ledger, 'rounds')).compose(
            ledger)

  def _composition(self) -> _grid_composition.GridComposition:
    """The ledger composed with connect-the-dots (on the automatic grid:
    the grouped ledger, built on first request)."""
    if self._fixed is not None:
      return self._fixed
    if self._derived.composition is None:
      try:
        self._derived.composition = self._composed_grouped_ledger(
            self.value_discretization_interval, discrete.connect_the_dots)
      except composition.GridTooFineError as too_fine:
        self._derived.composition = too_fine
    composed = self._derived.composition
    if isinstance(composed, Exception):  # only a GridTooFineError is kept
      raise composition.GridTooFineError(*composed.args)
    assert composed is not None  # set above
    return composed

  # ---- the compose step (`_ledger.ShuffleAccountant`)

  def _forget_answers(self) -> None:
    self._derived = _Derived()

  def _compose_event(self, event: dp_event.DpEvent, count: int) -> None:
    # With the automatic grid the ledger already holds the event; the grid
    # is chosen and the ledger composed on request.
    if self._fixed is not None:
      self._fixed.compose(event, count)

  def _check_shuffle_event(self, event: events.ShuffleEvent,
                           reported: dp_event.DpEvent
                           ) -> Optional[CompositionErrorDetails]:
    relation_error = _event_checks.check_relation(self.neighboring_relation,
                                                  reported)
    if relation_error is not None:
      return relation_error
    if event.num_categories is not None and event.local_delta > 0:
      return _event_checks.error(reported, (
          f'num_categories={event.num_categories} describes k-randomized '
          f'response, which is pure LDP, but local_delta={event.local_delta};'
          ' use num_categories=None for a generic approximate-LDP randomizer.'))
    return None

  def _check_own_participation(self, event
                              ) -> Optional[CompositionErrorDetails]:
    return _event_checks.check_relation(self.neighboring_relation, event)

  def _check_other(self, event: dp_event.DpEvent, count: int
                   ) -> Optional[CompositionErrorDetails]:
    """DP-SGD samplers (as Gaussians, `samplers`), or the parent's events."""
    if isinstance(event, sampler_accounting.SAMPLER_EVENT_TYPES):
      error, gaussians = sampler_accounting.as_gaussians(
          event, self.neighboring_relation)
      if error is not None or gaussians is None:
        return error
      return self._maybe_compose(gaussians, count, False)
    return _upstream.compose_parent_pld_event(self, event, count, False)
