"""`ShufflePldAccountant`: dp_accounting's PLD accountant plus shuffle events (KHH-DOM, D8, D9).

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
  orders dominated by one symmetric pair, docs/mathematics.md W11);
* `CheckInEvent`: the k-labelled mixture (docs/mathematics.md D8) over k ~ Bin(n, gamma)
  of KHH-SUBSAMPLED pairs with ratio k / n, on the clone pair of k users
  (pure LDP) or on the unshuffled Gaussian pair (local noise, docs/mathematics.md D7);
* `SubsampledShuffleGaussianEvent`: KHH-SUBSAMPLED on the Gaussian pair
  (`pld.checkin`);
* `DistributedCheckInEvent`: the exact mixture over the target's revealed
  participation and count (D30), or the D17 pair mixed over the count when
  participants are hidden (`pld.distributed`);
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
epsilon is an upper bound for the composed mechanism.

Shuffle events require `NeighboringRelation.REPLACE_ONE`, the default here.
Under that relation the parent treats `GaussianDpEvent(sigma)` as having L2
sensitivity 2 (dp-accounting >= 0.5), i.e. `noise_multiplier` is the noise
standard deviation divided by the clipping norm of one record.
"""

from typing import List, Optional, Tuple, TypeAlias, Union

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution
import numpy as np

from shuffle_accountants import _dominating
from shuffle_accountants import _event_checks
from shuffle_accountants import _grouping
from shuffle_accountants import _progress
from shuffle_accountants import _ledger
from shuffle_accountants import _validation
from shuffle_accountants import checkpoints
from shuffle_accountants import events
from shuffle_accountants.pld import candidates
from shuffle_accountants.pld import clone_pairs
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import grid
from shuffle_accountants.rdp import accountant as rdp_accountant
from shuffle_accountants.samplers import accounting as sampler_accounting

NeighboringRelation: TypeAlias = privacy_accountant.NeighboringRelation
CompositionErrorDetails: TypeAlias = (
    privacy_accountant.PrivacyAccountant.CompositionErrorDetails)
KRR_ADVERSARIES = candidates.KRR_ADVERSARIES


@attr.s(frozen=True, slots=True, auto_attribs=True, eq=False)
class ShufflePldContribution:
  """One shuffle event composed into the accountant.

  Attributes:
    event: the event as accounted: the user's, or the representative of
      the rounds grouped with it (`relative_grouping`), whose count then
      covers every round it stands for.
    count: how many times it was composed.
    pairs: names of the dominating pairs whose smallest profile was used.
  """
  event: dp_event.DpEvent
  count: int
  pairs: Tuple[str, ...]


# The RDP route is also asked from where the composed PLD places epsilon at
# this delta on (`_rdp_cut`). There the certified PLD (D24) can be far looser
# than RDP (ShuffleEvent(1375, 5.7e-4, num_categories=2) x 381184: delta
# 5.1e-10 against 7.5e-28 at epsilon = 0.1); above it RDP rarely wins and its
# ledger would slow ordinary calls (a check-in year: 52 s against 1.1 s).
RDP_ALSO_BELOW_DELTA = 1e-9


class _EventPld:
  """Stands for the composed PLD while the parent builds one event's: its
  `self._pld.compose(event_pld)` then returns the event's PLD itself."""

  def compose(self, other, *unused_args, **unused_kwargs):
    return other


class ShufflePldAccountant(checkpoints.Checkpointable,
                           pld_privacy_accountant.PLDAccountant):
  """PLD accountant for shuffle-model events, composable with all others.

  Example:
    >>> accountant = ShufflePldAccountant()
    >>> accountant.compose(ShuffleEvent(num_users=10**6, local_epsilon=1.0),
    ...                    count=1000)
    >>> accountant.get_epsilon(1e-6)

  `state_dict()` / `load_state_dict()` save and restore it exactly
  (`shuffle_accountants.checkpoints`).
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
    self._grouping = _grouping.Grouping(self._relative_grouping)
    self._automatic_grid = value_discretization_interval is None
    # Shuffle rounds' PLDs wait here to be composed in one batch (`_pld`).
    self._pending: List[tuple] = []
    super().__init__(neighboring_relation,
                     value_discretization_interval or grid.DEFAULT_GRID)
    self._krr_adversary = krr_adversary
    self._progress_option = progress
    self._round_progress = _progress.Progress(False, '', 0)
    self._contributions: List[ShufflePldContribution] = []
    # Shuffle rounds are discretized by connect-the-dots (a bound); the
    # estimate behind `get_optimistic_epsilon` uses split_preserving_mean.
    self._discretize = discrete.connect_the_dots
    self._resolved: Optional['ShufflePldAccountant'] = None
    self._estimate: Optional['ShufflePldAccountant'] = None
    self._grid: Optional[Tuple[float, bool]] = None
    self._profile: Optional[discrete.DirectProfile] = None
    # The RDP accountant over the same ledger (False: it cannot compose it),
    # built only when asked from `_rdp_cut` on.
    self._rdp_route: Union[None, bool,
                           rdp_accountant.ShuffleRdpAccountant] = None
    self._cut: Optional[float] = None
    # Accountants of the dominating ledgers (D19), built on request.
    self._dominating: Optional[List['ShufflePldAccountant']] = None

  # The parent reads and writes `_pld`; rounds composed since are folded in
  # on the first read, all at once (`discrete.compose_all`).
  @property
  def _pld(self) -> privacy_loss_distribution.PrivacyLossDistribution:
    self._flush()
    return self._composed_pld

  @_pld.setter
  def _pld(self, value) -> None:
    self._composed_pld = value

  def _flush(self) -> None:
    if self._pending:
      pending, self._pending = self._pending, []
      self._composed_pld = discrete.compose_all([(self._composed_pld, 1)]
                                                + pending)

  def configuration(self) -> dict:
    """The constructor's settings (progress aside), as saved in the state."""
    return dict(
        neighboring_relation=self.neighboring_relation.name,
        value_discretization_interval=(
            None if self._automatic_grid
            else self._value_discretization_interval),
        relative_accuracy=self._relative_accuracy,
        krr_adversary=self._krr_adversary,
        relative_width=self._relative_width,
        relative_grouping=self._relative_grouping)

  @property
  def krr_adversary(self) -> str:
    return self._krr_adversary

  @property
  def value_discretization_interval(self) -> float:
    """The grid spacing in use (chosen from the ledger in automatic mode)."""
    if not self._automatic_grid:
      return self._value_discretization_interval
    return self._grid_choice()[0]

  def _grid_choice(self) -> Tuple[float, bool]:
    """(spacing, budget-limited) of the automatic grid, cached per ledger."""
    if self._grid is None:
      ledger = self._grouped_ledger()
      self._grid = grid.automatic_grid(
          ledger, self._relative_accuracy, self._krr_adversary,
          self._relative_width, self._progress_over(ledger, 'choosing the grid'))
    return self._grid

  def _progress_over(self, ledger: dp_event.DpEvent, phase: str
                ) -> _progress.Progress:
    """Progress over the shuffle rounds of `ledger`."""
    return _progress.Progress(self._progress_option, phase, sum(
        1 for _ in candidates.shuffle_leaves(ledger)))

  def _grouped_ledger(self) -> dp_event.DpEvent:
    return _grouping.grouped_ledger(self.ledger, self._relative_grouping)

  def _also_rdp(self) -> bool:
    """Whether the resource budget coarsened the automatic grid."""
    return self._automatic_grid and self._grid_choice()[1]

  @property
  def contributions(self) -> Tuple[ShufflePldContribution, ...]:
    """The shuffle events composed so far and the pairs used for each."""
    try:
      return tuple(self._resolve()._contributions)  # pylint: disable=protected-access
    except discrete.GridTooFineError:  # no PLD within budget: nothing composed
      return ()

  def compose(self, event: dp_event.DpEvent, count: int = 1
              ) -> 'ShufflePldAccountant':
    """Composes `event` `count` times (an integer >= 0); see the parent.

    With a fixed grid the composition happens now, as in the parent (so a
    grid too fine for the count raises here); the rounds of one call are
    composed in one batch.
    """
    super().compose(event, _validation.check_count(count))
    if not self._automatic_grid:
      self._flush()
    return self

  def get_epsilon(self, target_delta: float) -> float:
    """Certified epsilon at `target_delta` in [0, 1] (upper bound).

    The inverse of `get_delta`: the smallest epsilon whose certified delta
    is at most `target_delta`. From the PLD, and, from `_rdp_cut` on, also
    from the RDP route over the same ledger (when it supports every event);
    never more than basic composition of LDP rounds (`_ledger`), so a ledger
    of LDP rounds gets a finite answer at every delta >= its summed local
    deltas. `inf` means no route certifies a finite epsilon at this delta
    (for the PLD: the delta lies below its mass at +infinity, D9).
    """
    target_delta = _validation.check_delta('target_delta', target_delta)
    epsilon = self._route_value('get_epsilon', target_delta, np.inf)
    cut = self._rdp_cut()
    if epsilon > cut and target_delta > 0:
      # The combined profile is the PLD's below the cut: RDP's epsilon is
      # only an answer where it reaches past it.
      epsilon = min(epsilon, max(cut, self._rdp_route_value(
          'get_epsilon', target_delta, np.inf)))
    epsilon = min([epsilon] + [accountant.get_epsilon(target_delta)
                               for accountant in self._dominating_routes()])
    return _ledger.capped_epsilon(self.ledger, target_delta, epsilon)

  def get_delta(self, target_epsilon: float) -> float:
    """Certified delta at `target_epsilon` >= 0 (upper bound, in [0, 1]).

    The PLD's delta, and from `_rdp_cut` on the smaller of it and the RDP
    route's (rounded up, never to 0 where positive): non-increasing in
    epsilon, and `get_epsilon` is its inverse.
    """
    target_epsilon = _validation.check_epsilon('target_epsilon',
                                               target_epsilon)
    delta = self._route_value('get_delta', target_epsilon, 1.0)
    if target_epsilon >= self._rdp_cut():
      delta = min(delta, self._rdp_route_value('get_delta', target_epsilon,
                                               1.0))
    delta = min([delta] + [accountant.get_delta(target_epsilon)
                           for accountant in self._dominating_routes()])
    return _ledger.capped_delta(self.ledger, target_epsilon, delta)

  def _rdp_cut(self) -> float:
    """The epsilon from which the RDP route is also asked (per ledger).

    Both answers are certified, so their pointwise smaller profile is too;
    taking it only from one epsilon on, the same for `get_delta` and
    `get_epsilon`, keeps the reported profile non-increasing and each
    query the inverse of the other. The cut is where the composed PLD
    places epsilon at `RDP_ALSO_BELOW_DELTA` (its FFT result: any cut keeps
    the answers certified and consistent, and this one costs no round-off
    certificate, 3.4 s at that delta on the issue 32 ledger), or 0 (RDP
    everywhere) when the PLD cannot be built, reaches no finite epsilon
    there, or sits on a grid the resource budget coarsened (10^9 rounds at
    eps0 = 13: 3.6e7 against 5.2e6 on the RDP route).
    """
    if self._cut is None:
      cut = self._route_value('located_epsilon', RDP_ALSO_BELOW_DELTA,
                              np.inf)
      self._cut = 0.0 if cut == np.inf or self._also_rdp() else cut
    return self._cut

  def _dominating_routes(self) -> List['ShufflePldAccountant']:
    """Accountants of the ledgers this one post-processes (D19).

    Each ledger gets its own automatic grid, so the smallest answer over
    them keeps epsilon never above the rate-1 (D33) and one-user rounds,
    whatever the grids.
    """
    if self._dominating is None:
      self._dominating = _dominating.dominating_routes(
          self.ledger, lambda: ShufflePldAccountant(
              self.neighboring_relation,
              None if self._automatic_grid
              else self._value_discretization_interval,
              self._relative_accuracy, self._krr_adversary,
              self._relative_width, self._relative_grouping))
    return self._dominating

  def _route_value(self, method: str, argument: float, unavailable):
    """`method` of the composed PLD (closed form), or `unavailable`."""
    try:
      resolved = self._resolve()
    except discrete.GridTooFineError:
      if not self._automatic_grid:
        raise
      return unavailable
    if method == 'get_delta' and argument == np.inf:
      return 0.0 if not resolved._contains_non_dp_event else 1.0  # pylint: disable=protected-access
    if resolved._contains_non_dp_event:  # pylint: disable=protected-access
      return getattr(pld_privacy_accountant.PLDAccountant,
                     'get_delta' if method == 'get_delta' else 'get_epsilon')(
                         resolved, argument)
    # The project's closed forms (sums of non-negative terms), not
    # dp_accounting's cumulative differences (which round delta down by
    # ~1e-11) and pure-Python epsilon search.
    profile = resolved._direct_profile()  # pylint: disable=protected-access
    return {'get_delta': profile.delta, 'get_epsilon': profile.epsilon,
            'located_epsilon': profile.located_epsilon}[method](argument)

  def _direct_profile(self) -> discrete.DirectProfile:
    if self._profile is None:
      self._profile = discrete.DirectProfile(self._pld)
    return self._profile

  def _rdp_route_value(self, method: str, argument: float, unavailable):
    """The RDP route's answer for this ledger, or `unavailable`."""
    if self._rdp_route is None:
      route = rdp_accountant.ShuffleRdpAccountant(
          neighboring_relation=self.neighboring_relation)
      try:
        route.compose(self.ledger)
        self._rdp_route = route
      except (privacy_accountant.UnsupportedEventError, ValueError,
              ArithmeticError):  # e.g. dp_accounting's RDP of zero noise
        self._rdp_route = False
    if self._rdp_route is False:
      return unavailable
    return getattr(self._rdp_route, method)(argument)

  def get_optimistic_epsilon(self, target_delta: float) -> float:
    """An estimate below `get_epsilon`, to show the discretization gap.

    Not a bound. Shuffle rounds are discretized by splitting each atom of
    their dominating pair between its two grid points so as to keep its mean
    loss; at every grid point that profile is below the pair's. Other events
    keep the parent's (pessimistic) PLD. Computed only when asked for.
    """
    target_delta = _validation.check_delta('target_delta', target_delta)
    try:
      resolved = self._resolve()
    except discrete.GridTooFineError:
      return np.inf
    if resolved._contains_non_dp_event:  # pylint: disable=protected-access
      return np.inf
    # The parent's answer on the estimate's PLD: the soundness floors and the
    # RDP route of `get_epsilon` have no business in an estimate; basic
    # composition keeps it below `get_epsilon` where that caps the answer.
    with np.errstate(over='ignore', divide='ignore', invalid='ignore'):
      estimate = pld_privacy_accountant.PLDAccountant.get_epsilon(
          resolved._estimate_accountant(), target_delta)  # pylint: disable=protected-access
    return _ledger.capped_epsilon(self.ledger, target_delta, estimate)

  def _with_grid(self, interval: float, discretize) -> 'ShufflePldAccountant':
    """A fixed-grid accountant holding this ledger, composed with `discretize`."""
    accountant = ShufflePldAccountant(
        self.neighboring_relation, interval, self._relative_accuracy,
        self._krr_adversary, self._relative_width, self._relative_grouping,
        self._progress_option)
    accountant._discretize = discretize  # pylint: disable=protected-access
    ledger = self._grouped_ledger()
    accountant._round_progress = self._progress_over(ledger, 'rounds')  # pylint: disable=protected-access
    accountant.compose(ledger)
    return accountant

  def _estimate_accountant(self) -> 'ShufflePldAccountant':
    if self._estimate is None:
      self._estimate = self._with_grid(self._value_discretization_interval,
                                       discrete.split_preserving_mean)
    return self._estimate

  def _resolve(self) -> 'ShufflePldAccountant':
    """The accountant holding the composed PLD (self unless automatic)."""
    if not self._automatic_grid:
      return self
    if self._resolved is None:
      self._resolved = self._with_grid(self.value_discretization_interval,
                                       discrete.connect_the_dots)
    return self._resolved

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

  def _event_pmf(self, event, sampling_ratio: Optional[float]):
    """(PMF, pair names) of one shuffle round or Liew et al. event."""
    return candidates.event_pmf(event, sampling_ratio,
                                self._value_discretization_interval,
                                self._discretize, self._krr_adversary,
                                self._relative_width)

  def _compose_shuffle(self, reported, count, inner, sampling_ratio):
    if reported is inner and count > 0:
      self._grouping.observe(inner)
      reported = inner = self._grouping.representative(inner)
    pmf, names = self._event_pmf(inner, sampling_ratio)
    self._round_progress.step()
    if count > 0:
      self._pending.append((discrete.to_privacy_loss_distribution(pmf), count))
    self._contributions.append(ShufflePldContribution(reported, count, names))

  def _compose_sampler(self, event, count: int, do_compose: bool
                       ) -> Optional[CompositionErrorDetails]:
    """DP-SGD samplers (`samplers`): Gaussians, or random allocation's PLD."""
    error, gaussians = sampler_accounting.as_gaussians(
        event, self.neighboring_relation)
    if error is not None or gaussians is not None:
      return error or self._maybe_compose(gaussians, count, do_compose)
    if do_compose and count > 0:
      # Composed with the shuffle rounds, so the certificate covers it (D24).
      self._pending.append((discrete.to_privacy_loss_distribution(
          sampler_accounting.random_allocation_pmf(
              event, self._value_discretization_interval,
              self._relative_accuracy)), count))
    return None

  def _compose_parent_event(self, event: dp_event.DpEvent, count: int,
                            do_compose: bool
                            ) -> Optional[CompositionErrorDetails]:
    """One of dp_accounting's events, built by the parent.

    Gaussians and randomized response are built without an FFT (the parent
    folds a Gaussian's count into its noise, sigma / sqrt(count), exactly),
    so their PMFs enter `compose_all` as exact inputs and the certificate
    covers them (D24); this also composes randomized response `count`
    times, which dp_accounting 0.6's accountant does once whatever the
    count. The parent passes its other events through an FFT
    self-composition even for one round, and Poisson-subsampled ones are
    asymmetric: those it composes itself, as before (W18 (2)'s estimate), as
    are asymmetric PLDs of the two above (composed by dp_accounting).
    """
    if (not do_compose or count == 0 or not isinstance(
        event, (dp_event.GaussianDpEvent, dp_event.RandomizedResponseDpEvent))):
      return super()._maybe_compose(event, count, do_compose)
    self._flush()
    held, self._composed_pld = self._composed_pld, _EventPld()
    built_count = count if isinstance(event, dp_event.GaussianDpEvent) else 1
    try:
      error = super()._maybe_compose(event, built_count, do_compose)
      built = self._composed_pld
    finally:
      self._composed_pld = held
    if isinstance(built, _EventPld):  # nothing to compose (or an error)
      return error
    if built._symmetric:  # pylint: disable=protected-access
      self._pending.append((discrete.exact_input(built), count // built_count))
    else:
      times = count // built_count
      self._pld = discrete.compose(
          self._pld, built.self_compose(times) if times > 1 else built)
    return error

  def _maybe_compose(self, event: dp_event.DpEvent, count: int,
                     do_compose: bool) -> Optional[CompositionErrorDetails]:
    if do_compose:
      self._estimate = self._rdp_route = self._profile = self._cut = None
      self._dominating = None
      if self._automatic_grid:
        # The ledger already holds the event; the grid is chosen on request.
        self._resolved = self._grid = None
        return None
    if isinstance(event, events.ShuffleEvent):
      error = self._check_shuffle_event(event, event)
      if error is None and do_compose:
        self._compose_shuffle(event, count, event, None)
      return error
    if isinstance(event, events.LIEW_EVENT_TYPES):
      error = _event_checks.check_relation(self.neighboring_relation, event)
      if error is None and do_compose:
        self._compose_shuffle(event, count, event, None)
      return error
    if (isinstance(event, dp_event.SampledWithoutReplacementDpEvent)
        and _event_checks.contains_shuffle_event(event.event)):
      error = (_event_checks.check_sampled_shuffle(event)
               or self._check_shuffle_event(event.event, event))
      if error is None and do_compose:
        ratio = event.sample_size / event.source_dataset_size
        self._compose_shuffle(event, count, event.event, ratio)
      return error
    if (isinstance(event, dp_event.PoissonSampledDpEvent)
        and _event_checks.contains_shuffle_event(event.event)):
      return _event_checks.poisson_shuffle_error(event)
    if isinstance(event, sampler_accounting.SAMPLER_EVENT_TYPES):
      return self._compose_sampler(event, count, do_compose)
    try:
      return self._compose_parent_event(event, count, do_compose)
    except IndexError:
      # The parent's composition fails once no finite mass is left (see
      # `discrete.compose`); delta is then 1 below +infinity: say so.
      if not do_compose:
        raise
      self._pld = discrete.all_at_infinity(self._value_discretization_interval)
      return None
