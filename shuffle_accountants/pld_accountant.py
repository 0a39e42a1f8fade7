"""`ShufflePldAccountant`: dp_accounting's PLD accountant plus shuffle events.

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
  orders dominated by one symmetric pair, MATH.md W11);
* `CheckInEvent`: the k-labelled mixture (MATH.md D8) over k ~ Bin(n, gamma)
  of KHH-SUBSAMPLED pairs with ratio k / n, on the clone pair of k users
  (pure LDP) or on the unshuffled Gaussian pair (local noise, MATH.md D7);
* `SubsampledShuffleGaussianEvent`: KHH-SUBSAMPLED on the Gaussian pair
  (`checkin_pld`);
and delegates every other event to `dp_accounting.pld.PLDAccountant`.

Grid: by default (`value_discretization_interval=None`) the grid is chosen
when epsilon is requested, from the events in the ledger: d = sqrt(10 r) times
the smallest standard deviation of a shuffle round's privacy loss, for a target
relative accuracy r (`relative_accuracy`). Measured over n in [1e4, 1e9],
eps0 in [0.1, 4] and T in [1, 1e4], the pessimistic epsilon is then within
about r of its converged value. A fixed grid can be passed instead.

Each event becomes one privacy loss distribution that dominates the
mechanism in both orders of the replace-one relation, discretized
pessimistically by connect-the-dots (`pld_tools`); when several pairs are
valid, the pointwise smallest profile (convexified) is used. Composition is
dp_accounting's (FFT; `self_compose` for repeated events), so the reported
epsilon is an upper bound for the composed mechanism.

Shuffle events require `NeighboringRelation.REPLACE_ONE`, the default here.
Under that relation the parent treats `GaussianDpEvent(sigma)` as having L2
sensitivity 2 (dp-accounting >= 0.5), i.e. `noise_multiplier` is the noise
standard deviation divided by the clipping norm of one record.
"""

import functools
from typing import Dict, Iterator, List, Optional, Tuple

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution
import numpy as np

from shuffle_accountants import _event_checks
from shuffle_accountants import _validation
from shuffle_accountants import checkin_pld
from shuffle_accountants import clone_pld
from shuffle_accountants import events
from shuffle_accountants import fmt21
from shuffle_accountants import pld_tools

NeighboringRelation = privacy_accountant.NeighboringRelation
CompositionErrorDetails = privacy_accountant.PrivacyAccountant.CompositionErrorDetails

# Who observes a k-RR shuffle (Koskela et al. section 4):
# 'shuffled_output': only the shuffled reports (the usual shuffle model);
# 'weak': also the other users' data and which of them answered randomly;
# 'strong': also whether the differing user answered randomly.
KRR_ADVERSARIES = ('shuffled_output', 'weak', 'strong')


# Finest automatic grid when the ledger also holds other events (a Gaussian
# PLD on a finer grid would need ~1e7 buckets).
_FINEST_MIXED_GRID = 1e-6
# Coarsest automatic grid, and the most buckets one shuffle round may span.
_COARSEST_GRID = 1e-2
_MAX_ROUND_BUCKETS = 200_000


@attr.s(frozen=True, slots=True, auto_attribs=True, eq=False)
class ShufflePldContribution:
  """One shuffle event composed into the accountant.

  Attributes:
    event: the event as the user passed it.
    count: how many times it was composed.
    pairs: names of the dominating pairs whose smallest profile was used.
  """
  event: dp_event.DpEvent
  count: int
  pairs: Tuple[str, ...]


@functools.lru_cache(maxsize=64)
def _candidates(num_users: int, local_epsilon: float,
                num_categories: Optional[int], local_delta: float,
                krr_adversary: str, relative_width: float
                ) -> Tuple[Tuple[str, pld_tools.PldAtoms], ...]:
  """The dominating pairs valid for one shuffle round, each with its name."""
  n, eps0, width = num_users, local_epsilon, relative_width
  if local_delta > 0:
    return tuple(fmt21.approximate_ldp_candidates(n, eps0, local_delta))
  if num_categories is None:
    return (('FMT21-CLONES', clone_pld.clone_pair_pld_atoms(n, eps0, width)),)
  k = num_categories
  candidates = [('KHH-KRR-STRONG',
                 clone_pld.krr_strong_pld_atoms(n, eps0, k, width))]
  if krr_adversary != 'strong':
    candidates.append(('KHH-KRR-WEAK',
                       clone_pld.krr_weak_pld_atoms(n, eps0, k, width)))
  if krr_adversary == 'shuffled_output':
    candidates.append(('FMT21-CLONES',
                       clone_pld.clone_pair_pld_atoms(n, eps0, width)))
  return tuple(candidates)


_CHECKIN_PAIRS = {
    True: ('KHH-SUBSAMPLED mixture over k (D8) of FMT21-CLONES',),
    False: ('KHH-SUBSAMPLED mixture over k (D8) of the Gaussian pair (D7)',),
}
_SAMPLED_GAUSSIAN_PAIRS = ('KHH-SUBSAMPLED of the Gaussian pair (D7)',)


def _liew_event_arguments(event) -> dict:
  """Keyword arguments of `checkin_pld` functions for a Liew et al. event."""
  if isinstance(event, events.CheckInEvent):
    return dict(num_users=event.num_users, checkin_rate=event.checkin_rate,
                local_epsilon=event.local_epsilon,
                noise_multiplier=event.noise_multiplier)
  return dict(num_users=event.num_users, checkin_rate=1.0,
              noise_multiplier=event.noise_multiplier,
              sample_size=event.sample_size)


def _sampling_ratio(event) -> float:
  if isinstance(event, events.CheckInEvent):
    return event.checkin_rate
  return event.sample_size / event.num_users


def _shuffle_leaves(event: dp_event.DpEvent
                    ) -> Iterator[Tuple[dp_event.DpEvent, Optional[float]]]:
  """Every shuffle round in an event tree, with its sampling ratio."""
  if isinstance(event, events.ShuffleEvent):
    yield event, None
  elif isinstance(event, events.LIEW_EVENT_TYPES):
    yield event, _sampling_ratio(event)
  elif (isinstance(event, dp_event.SampledWithoutReplacementDpEvent)
        and isinstance(event.event, events.ShuffleEvent)):
    yield event.event, event.sample_size / event.source_dataset_size
  elif isinstance(event, dp_event.SelfComposedDpEvent):
    yield from _shuffle_leaves(event.event)
  elif isinstance(event, dp_event.ComposedDpEvent):
    for inner in event.events:
      yield from _shuffle_leaves(inner)


def _only_shuffle_events(event: dp_event.DpEvent) -> bool:
  if isinstance(event, dp_event.ComposedDpEvent):
    return all(_only_shuffle_events(e) for e in event.events)
  if isinstance(event, dp_event.SelfComposedDpEvent):
    return _only_shuffle_events(event.event)
  return (isinstance(event, (events.ShuffleEvent, dp_event.NoOpDpEvent))
          or next(_shuffle_leaves(event), None) is not None)


class ShufflePldAccountant(pld_privacy_accountant.PLDAccountant):
  """PLD accountant for shuffle-model events, composable with all others.

  Example:
    >>> accountant = ShufflePldAccountant()
    >>> accountant.compose(ShuffleEvent(num_users=10**6, local_epsilon=1.0),
    ...                    count=1000)
    >>> accountant.get_epsilon(1e-6)
  """

  def __init__(self,
               neighboring_relation: NeighboringRelation = (
                   NeighboringRelation.REPLACE_ONE),
               value_discretization_interval: Optional[float] = None,
               relative_accuracy: float = 1e-3,
               krr_adversary: str = 'shuffled_output',
               relative_width: float = clone_pld.DEFAULT_RELATIVE_WIDTH):
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
        automatic grid, in [1e-6, 0.1].
      krr_adversary: one of `KRR_ADVERSARIES`, the observer of k-RR shuffles.
      relative_width: grouping of clone counts (see `clone_pld`); the
        epsilon of a shuffle round is inflated by about half of it.
    """
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
    self._automatic_grid = value_discretization_interval is None
    super().__init__(neighboring_relation,
                     value_discretization_interval or 1e-4)
    self._krr_adversary = krr_adversary
    self._contributions: List[ShufflePldContribution] = []
    self._pmf_cache: Dict[Tuple, Tuple[pld_tools.GridPmf, pld_tools.GridPmf,
                                       Tuple[str, ...]]] = {}
    # Same events, shuffle rounds discretized by `split_preserving_mean`.
    self._estimate_pld = self._pld
    self._resolved: Optional['ShufflePldAccountant'] = None

  @property
  def krr_adversary(self) -> str:
    return self._krr_adversary

  @property
  def value_discretization_interval(self) -> float:
    """The grid spacing in use (chosen from the ledger in automatic mode)."""
    return self._resolve()._value_discretization_interval  # pylint: disable=protected-access

  @property
  def contributions(self) -> Tuple[ShufflePldContribution, ...]:
    """The shuffle events composed so far and the pairs used for each."""
    return tuple(self._resolve()._contributions)  # pylint: disable=protected-access

  def get_epsilon(self, target_delta: float) -> float:
    resolved = self._resolve()
    if resolved is not self:
      return resolved.get_epsilon(target_delta)
    return super().get_epsilon(target_delta)

  def get_delta(self, target_epsilon: float) -> float:
    resolved = self._resolve()
    if resolved is not self:
      return resolved.get_delta(target_epsilon)
    return super().get_delta(target_epsilon)

  def get_optimistic_epsilon(self, target_delta: float) -> float:
    """An estimate below `get_epsilon`, to show the discretization gap.

    Not a bound. Shuffle rounds are discretized by splitting each atom of
    their dominating pair between its two grid points so as to keep its mean
    loss; at every grid point that profile is below the pair's. Other events
    keep the parent's (pessimistic) PLD.
    """
    resolved = self._resolve()
    if resolved._contains_non_dp_event:  # pylint: disable=protected-access
      return np.inf
    return resolved._estimate_pld.get_epsilon_for_delta(target_delta)  # pylint: disable=protected-access

  def _automatic_interval(self) -> float:
    ledger = self.ledger
    intervals = []
    for event, ratio in _shuffle_leaves(ledger):
      if not isinstance(event, events.ShuffleEvent):
        local_epsilon = getattr(event, 'local_epsilon', None)
        spread = checkin_pld.loss_spread(event.num_users, ratio, local_epsilon,
                                         event.noise_multiplier,
                                         self._relative_width)
        reach = checkin_pld.largest_loss(ratio, local_epsilon,
                                         event.noise_multiplier)
        intervals.append(max(np.sqrt(10 * self._relative_accuracy) * spread,
                             2 * reach / _MAX_ROUND_BUCKETS))
        continue
      pairs = [atoms if ratio is None
               else pld_tools.subsampled_orders(atoms, ratio)[0]
               for _, atoms in self._event_candidates(event)]
      # A pair whose finite losses are all equal needs no resolution.
      spreads = [pld_tools.loss_spread(atoms) for atoms in pairs]
      spread = min([s for s in spreads if s > 0], default=np.inf)
      reach = max(np.max(np.abs(atoms.losses), initial=0.0)
                  for atoms in pairs)
      intervals.append(max(np.sqrt(10 * self._relative_accuracy) * spread,
                           2 * reach / _MAX_ROUND_BUCKETS))
    intervals = [i for i in intervals if np.isfinite(i) and i > 0]
    if not intervals:
      return 1e-4
    interval = min(min(intervals), _COARSEST_GRID)
    if not _only_shuffle_events(ledger):
      interval = max(interval, _FINEST_MIXED_GRID)
    # A round number of significant digits keeps the grid readable.
    return float(f'{max(interval, 1e-12):.2g}')

  def _resolve(self) -> 'ShufflePldAccountant':
    """The accountant holding the composed PLD (self unless automatic)."""
    if not self._automatic_grid:
      return self
    if self._resolved is None:
      resolved = ShufflePldAccountant(
          self.neighboring_relation, self._automatic_interval(),
          self._relative_accuracy, self._krr_adversary, self._relative_width)
      resolved.compose(self.ledger)
      self._resolved = resolved
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

  def _event_candidates(self, event: events.ShuffleEvent):
    return _candidates(event.num_users, event.local_epsilon,
                       event.num_categories, event.local_delta,
                       self._krr_adversary, self._relative_width)

  def _event_pmfs(self, event: events.ShuffleEvent,
                  sampling_ratio: Optional[float]):
    """(pessimistic PMF, estimate PMF, pair names) of one round, cached."""
    key = (event.num_users, event.local_epsilon, event.num_categories,
           event.local_delta, sampling_ratio)
    if key not in self._pmf_cache:
      d = self._value_discretization_interval
      candidates = self._event_candidates(event)
      pmfs = []
      for discretize in (pld_tools.connect_the_dots,
                         pld_tools.split_preserving_mean):
        per_pair = []
        for _, atoms in candidates:
          if sampling_ratio is None:
            per_pair.append(discretize(atoms, d))
          else:
            per_pair.append(pld_tools.largest_profile([
                discretize(order, d) for order in
                pld_tools.subsampled_orders(atoms, sampling_ratio)]))
        pmfs.append(pld_tools.smallest_profile(per_pair))
      self._pmf_cache[key] = (pmfs[0], pmfs[1],
                              tuple(name for name, _ in candidates))
    return self._pmf_cache[key]

  def _liew_event_pmfs(self, event):
    """(pessimistic PMF, estimate PMF, pair names) of a Liew et al. event."""
    if event not in self._pmf_cache:
      arguments = _liew_event_arguments(event)
      pmfs = [checkin_pld.checkin_pmf(
          discretization=self._value_discretization_interval,
          discretize=discretize, relative_width=self._relative_width,
          **arguments) for discretize in (pld_tools.connect_the_dots,
                                          pld_tools.split_preserving_mean)]
      names = (_CHECKIN_PAIRS[event.noise_multiplier is None]
               if isinstance(event, events.CheckInEvent)
               else _SAMPLED_GAUSSIAN_PAIRS)
      self._pmf_cache[event] = (pmfs[0], pmfs[1], names)
    return self._pmf_cache[event]

  def _compose_shuffle(self, reported, count, inner, sampling_ratio):
    if isinstance(inner, events.ShuffleEvent):
      pmfs = self._event_pmfs(inner, sampling_ratio)
    else:
      pmfs = self._liew_event_pmfs(inner)
    pessimistic, estimate, names = pmfs
    if count > 0:
      for attribute, pmf in (('_pld', pessimistic),
                             ('_estimate_pld', estimate)):
        pld = pld_tools.to_privacy_loss_distribution(pmf)
        if count > 1:
          pld = pld.self_compose(count)
        setattr(self, attribute, getattr(self, attribute).compose(pld))
    self._contributions.append(ShufflePldContribution(reported, count, names))

  def _compose_parent_event(self, event, count):
    """Lets the parent compose `event`, and adds its PLD to the estimate too.

    `compose` has already validated the event, so the parent composes it.
    """
    composed_so_far = self._pld
    self._pld = privacy_loss_distribution.identity(
        self._value_discretization_interval)
    error = super()._maybe_compose(event, count, True)
    self._estimate_pld = self._estimate_pld.compose(self._pld)
    self._pld = composed_so_far.compose(self._pld)
    return error

  def _maybe_compose(self, event: dp_event.DpEvent, count: int,
                     do_compose: bool) -> Optional[CompositionErrorDetails]:
    if self._automatic_grid and do_compose:
      # The ledger already holds the event; the grid is chosen on request.
      self._resolved = None
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
    if (do_compose and not isinstance(event, (dp_event.ComposedDpEvent,
                                              dp_event.SelfComposedDpEvent))):
      return self._compose_parent_event(event, count)
    return super()._maybe_compose(event, count, do_compose)
