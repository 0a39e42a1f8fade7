"""A ledger composed on one PLD grid: its PLD, pairs and profile.

IDs: TAILS-TO-INFINITY, ROUNDOFF-CERTIFIED

`ShufflePldAccountant` holds the ledger and asks one of these for answers:
with a fixed grid one composition lives as long as the accountant and takes
each compose call as it comes; with the automatic grid one is built for the
grouped ledger on the grid chosen for it, and dropped when the ledger grows.

Each shuffle round becomes one privacy loss distribution that dominates the
mechanism in both orders of the replace-one relation, discretized by
`discretize` (connect-the-dots: pessimistic; `split_preserving_mean`: the
estimate) on the grid (`candidates`). The rounds of one compose call wait
in `_pending` and are composed in one batch (`composition.compose_all`), with
dp_accounting's events as exact inputs (one round each, built without FFT),
so the round-off certificate covers them (ROUNDOFF-CERTIFIED).
"""

from typing import List, Optional, Tuple, TypeAlias

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution
import numpy as np

from shuffle_accountants import _cache
from shuffle_accountants import _progress
from shuffle_accountants import _upstream
from shuffle_accountants.core import _grouping
from shuffle_accountants.core import _ledger
from shuffle_accountants.pairs import sums as pair_sums
from shuffle_accountants.pld import composition
from shuffle_accountants.pld import random_allocation
from shuffle_accountants.pld import routes
from shuffle_accountants.samplers import accounting as sampler_accounting

PLD: TypeAlias = privacy_loss_distribution.PrivacyLossDistribution


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


def _round_bytes(pld: Optional[PLD]) -> int:
  return 0 if pld is None else 8 * sum(
      pmf.size for pmf in _upstream.pld_pmfs(pld))


def parent_round(event: dp_event.DpEvent, interval: float,
                 relation: privacy_accountant.NeighboringRelation
                 ) -> Optional[PLD]:
  """One round of one of dp_accounting's events, or None.

  A ledger rebuilt every round (Flower's accountant) needs the same round
  on the same grid again: kept (`_kept_round`) unless the event is not
  hashable (list fields, e.g. a mixture of Gaussians).
  """
  try:
    hash(event)
  except TypeError:
    return _built_round(event, interval, relation)
  return _kept_round(event, interval, relation)


@_cache.cached(256 * 2**20, _round_bytes)
def _kept_round(event: dp_event.DpEvent, interval: float,
                relation: privacy_accountant.NeighboringRelation
                ) -> Optional[PLD]:
  """`_built_round`, its dense PMFs made read-only (the cache shares them)."""
  pld = _built_round(event, interval, relation)
  for pmf in [] if pld is None else _upstream.pld_pmfs(pld):
    if isinstance(pmf, pld_pmf.DensePLDPmf):
      _upstream.dense_pmf_fields(pmf)[2].setflags(write=False)
  return pld


def _built_round(event: dp_event.DpEvent, interval: float,
                 relation: privacy_accountant.NeighboringRelation
                 ) -> Optional[PLD]:
  """One round of one of dp_accounting's events, or None.

  Built as dp_accounting's accountant builds it (pessimistic, from the
  noise's CDF) but without the FFT self-composition it then applies even
  for one round, so an exact input of the certificate (ROUNDOFF-CERTIFIED). None
  for Gaussians and randomized response (the parent builds them without FFT),
  for no-op and non-DP events (the parent records them) and for events
  dp_accounting 0.6 does not build.
  """
  if isinstance(event, dp_event.LaplaceDpEvent) and event.noise_multiplier:
    return privacy_loss_distribution.from_laplace_mechanism(
        parameter=event.noise_multiplier,
        value_discretization_interval=interval)
  if (isinstance(event, dp_event.DiscreteLaplaceDpEvent)
      and event.noise_parameter):
    return privacy_loss_distribution.from_discrete_laplace_mechanism(
        parameter=event.noise_parameter, sensitivity=event.sensitivity,
        value_discretization_interval=interval)
  if (isinstance(event, dp_event.MixtureOfGaussiansDpEvent)
      and event.standard_deviation and list(event.sensitivities) != [0.0]):
    return privacy_loss_distribution.from_mixture_gaussian_mechanism(
        standard_deviation=event.standard_deviation,
        sensitivities=event.sensitivities,
        sampling_probs=event.sampling_probs,
        value_discretization_interval=interval)
  if (isinstance(event, dp_event.PoissonSampledDpEvent)
      and event.sampling_probability):
    inner = event.event
    if isinstance(inner, dp_event.GaussianDpEvent) and inner.noise_multiplier:
      return privacy_loss_distribution.from_gaussian_mechanism(
          standard_deviation=inner.noise_multiplier,
          value_discretization_interval=interval,
          sampling_prob=event.sampling_probability,
          neighboring_relation=relation)
    if isinstance(inner, dp_event.LaplaceDpEvent) and inner.noise_multiplier:
      return privacy_loss_distribution.from_laplace_mechanism(
          parameter=inner.noise_multiplier,
          value_discretization_interval=interval,
          sampling_prob=event.sampling_probability)
  if (isinstance(event, dp_event.TruncatedSubsampledGaussianDpEvent)
      and event.sampling_probability and event.truncated_batch_size
      and event.dataset_size and event.noise_multiplier):
    return (privacy_loss_distribution
            .from_truncated_subsampled_gaussian_mechanism(
                dataset_size=event.dataset_size,
                sampling_probability=event.sampling_probability,
                truncated_batch_size=event.truncated_batch_size,
                noise_multiplier=event.noise_multiplier,
                value_discretization_interval=interval,
                neighboring_relation=relation))
  return None


class GridComposition:
  """A ledger composed on a grid of spacing `interval`.

  Rounds are grouped as they come (`_grouping`: a round is accounted as the
  most pessimistic one of its bin composed so far). Events must have been
  checked by the accountant.
  """

  def __init__(self,
               neighboring_relation: privacy_accountant.NeighboringRelation,
               interval: float, discretize, krr_adversary: str,
               relative_width: float, relative_grouping: float,
               relative_accuracy: float,
               progress: Optional[_progress.Progress] = None):
    self.interval = interval
    self._relation = neighboring_relation
    self._discretize = discretize
    self._krr_adversary = krr_adversary
    self._relative_width = relative_width
    self._relative_accuracy = relative_accuracy
    self._grouping = _grouping.Grouping(relative_grouping)
    self._progress = progress or _progress.Progress(False, '', 0)
    self._parent_events = _upstream.ParentPldBuilder(neighboring_relation,
                                                   interval)
    self._composed: PLD = privacy_loss_distribution.identity(
        value_discretization_interval=interval)
    # Shuffle rounds' PLDs wait here to be composed in one batch (`pld`).
    self._pending: List[tuple] = []
    self._profile: Optional[composition.DirectProfile] = None
    self.contributions: List[ShufflePldContribution] = []
    self.contains_non_dp_event = False

  @property
  def pld(self) -> PLD:
    """The composed PLD; rounds composed since are folded in now, at once."""
    return self._flush()

  def _flush(self) -> PLD:
    if self._pending:
      pending, self._pending = self._pending, []
      self._composed = composition.compose_all([(self._composed, 1)] + pending)
    return self._composed

  def profile(self) -> composition.DirectProfile:
    """The closed-form profile of `pld` (cached until the next compose)."""
    if self._profile is None:
      self._profile = composition.DirectProfile(self.pld)
    return self._profile

  def compose(self, event: dp_event.DpEvent, count: int = 1
              ) -> 'GridComposition':
    """Composes a checked event `count` times; its rounds in one batch."""
    self._profile = None
    for leaf_event, leaf_count in _ledger.leaves(event, count):
      self._compose_leaf(_ledger.classify(leaf_event), leaf_count)
    self._flush()
    return self

  def _compose_leaf(self, leaf: _ledger.Leaf, count: int) -> None:
    if leaf.kind in _ledger.ROUND_KINDS:
      self._compose_round(leaf, count)
    elif isinstance(leaf.event, sampler_accounting.SAMPLER_EVENT_TYPES):
      self._compose_sampler(leaf.event, count)
    else:
      try:
        self._compose_parent_event(leaf.event, count)
      except IndexError:
        # The parent's composition fails once no finite mass is left (see
        # `composition.compose`); delta is then 1 below +infinity: say so.
        self._composed = composition.all_at_infinity(self.interval)

  def _compose_round(self, leaf: _ledger.Leaf, count: int) -> None:
    reported, inner = leaf.event, leaf.round
    if reported is inner and count > 0:
      self._grouping.observe(inner)
      reported = inner = self._grouping.representative(inner)
    ratio = (leaf.sampling_ratio if leaf.kind is _ledger.Kind.HIDDEN_SAMPLE
             else None)
    accounted = pair_sums.accounted_under(inner, self._relation)
    pmf, names = routes.event_pmf(
        accounted, ratio, self.interval, self._discretize,
        self._krr_adversary, self._relative_width)
    if (self._relation is privacy_accountant.NeighboringRelation
        .REPLACE_SPECIAL and accounted is inner):
      names += (pair_sums.DELETION_AS_REPLACE_ONE,)
    self._progress.step()
    if count > 0:
      self._pending.append(
          (composition.to_privacy_loss_distribution(pmf), count))
    self.contributions.append(ShufflePldContribution(reported, count, names))

  def _compose_sampler(self, event, count: int) -> None:
    """DP-SGD samplers (`samplers`): Gaussians, or random allocation's PLD."""
    _, gaussians = sampler_accounting.as_gaussians(event, self._relation)
    if gaussians is not None:
      for leaf_event, leaf_count in _ledger.leaves(gaussians, count):
        self._compose_leaf(_ledger.classify(leaf_event), leaf_count)
    elif count > 0:
      # Composed with the shuffle rounds, so the certificate covers it
      # (ROUNDOFF-CERTIFIED).
      self._pending.append((composition.to_privacy_loss_distribution(
          random_allocation.random_allocation_pmf(
              event, self.interval, self._relative_accuracy)), count))

  def _compose_parent_event(self, event: dp_event.DpEvent, count: int
                            ) -> None:
    """One of dp_accounting's events, built without an FFT.

    Its PMFs enter `compose_all` as exact inputs, so the certificate covers
    them (ROUNDOFF-CERTIFIED): Gaussians and randomized response as the parent
    builds them (it folds a Gaussian's count into its noise, sigma /
    sqrt(count), exactly; randomized response is composed `count` times, which
    dp_accounting 0.6's accountant does once whatever the count), its other
    events by `parent_round`. An asymmetric PLD (Poisson-subsampled events,
    mixtures of Gaussians) enters as its two halves
    (`composition.TwoSidedPld`). An event the parent builds otherwise
    (none in dp_accounting 0.6) is composed as it does (NOT-MONOTONE (2)'s
    estimate).
    """
    one_round = (parent_round(event, self.interval, self._relation)
                 if count > 0 else None)
    if one_round is not None:
      self._pending.append((composition.exact_input(one_round), count))
      return
    exact = count > 0 and isinstance(
        event, (dp_event.GaussianDpEvent, dp_event.RandomizedResponseDpEvent))
    built_count = (count if not exact
                   or isinstance(event, dp_event.GaussianDpEvent) else 1)
    built, non_dp = self._parent_events.build(event, built_count)
    self.contains_non_dp_event |= non_dp
    if built is None:  # nothing to compose
      return
    if exact:
      self._pending.append((composition.exact_input(built),
                            count // built_count))
    else:
      self._composed = self.pld.compose(built)

  # The project's closed forms (sums of non-negative terms) on the composed
  # PLD, not dp_accounting's cumulative differences (which round delta down
  # by ~1e-11) and pure-Python epsilon search.

  def delta(self, epsilon: float) -> float:
    """Delta of the composed PLD at `epsilon`."""
    if epsilon == np.inf:
      return 1.0 if self.contains_non_dp_event else 0.0
    if self.contains_non_dp_event:
      return 1.0
    return self.profile().delta(epsilon)

  def epsilon(self, delta: float) -> float:
    """Epsilon of the composed PLD at `delta`."""
    if self.contains_non_dp_event:
      return np.inf
    return self.profile().epsilon(delta)

  def located_epsilon(self, delta: float) -> float:
    """Where the composed PLD places epsilon at `delta` (its FFT result)."""
    if self.contains_non_dp_event:
      return np.inf
    return self.profile().located_epsilon(delta)
