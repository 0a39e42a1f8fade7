"""The ledger as both accountants read it: one walk, one classification.

* `fold` is the one recursion over dp_accounting's composite events
  (`ComposedDpEvent`, `SelfComposedDpEvent`); `leaves`, `replaced`,
  `basic_composition` and the classification of wrappers are folds.
* `classify` says what kind of round a leaf is (`Kind`), which shuffle
  round it accounts and at which sampling ratio; both accountants check and
  compose a leaf by its kind (`ShuffleAccountant`), and the PLD grid
  policy reads the same records (`shuffle_rounds`).
* `ShuffleAccountant` is also the accountants' identity: `configuration()`,
  `fresh()` (an empty sibling of that configuration, what the routes below
  build) and the registry of accountant classes by name
  (`accountant_class`), so building a sibling needs no persistence code.
* `CertifiedRoutes` answers epsilon (delta) as the smallest over the
  certified routes of one ledger, each a `Route` object that the
  accountant lists: its own (`OwnRoute`), a companion asked from some
  epsilon on and the ledgers it post-processes (`AccountantRoute`,
  DOMINATING-ROUNDS, `_dominating`), and basic composition of LDP rounds
  (`BasicCompositionRoute`, below).

Basic composition [UB]: a shuffle of (eps0, delta0)-LDP reports is
(eps0, delta0)-DP under replace-one (LOCAL-GUARANTEE; SHUFFLE-LDP-CAP for pure
LDP): one report changes and the rest is post-processing. Check-in and hidden
samples add only post-processing of a subset of the reports. Basic composition
then makes a ledger of such rounds (sum eps0, sum delta0)-DP, so for
target_delta >= sum delta0 the certified epsilon never needs to exceed
sum eps0. That cap keeps pure-LDP ledgers finite at every delta however far
a route's numerics are pushed. dp_accounting's pure-DP events (Laplace,
discrete Laplace, randomized response) enter the sum with their largest
privacy loss under the accountant's neighbouring relation (UPSTREAM-SENSITIVITY:
a sum of records of norm <= C moves by C under add/remove, 2C under
replace-one), which bounds their epsilon at delta = 0.
"""

import inspect
import math
from typing import (
  Any,
  Callable,
  Dict,
  List,
  Mapping,
  Optional,
  Protocol,
  Tuple,
  Type,
  TypeAlias,
  TypeVar,
)
import weakref

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant

from shuffle_accountants.core import _event_checks
from shuffle_accountants.core import _event_specs

CompositionErrorDetails: TypeAlias = (
    privacy_accountant.PrivacyAccountant.CompositionErrorDetails)
NeighboringRelation: TypeAlias = privacy_accountant.NeighboringRelation
Folded = TypeVar('Folded')

# Relative margin on the float sum (the sum itself is exact mathematics).
_SUM_MARGIN = 1e-12


def fold(event: dp_event.DpEvent, leaf: Callable[[dp_event.DpEvent], Folded],
         composed: Callable[[dp_event.ComposedDpEvent, List[Folded]], Folded],
         self_composed: Callable[[dp_event.SelfComposedDpEvent, Folded],
                                 Folded]) -> Folded:
  """The event tree folded: `leaf` of every non-composite event, combined
  by `composed` (the folded parts) and `self_composed` (the folded inner)."""
  if isinstance(event, dp_event.ComposedDpEvent):
    return composed(event, [fold(inner, leaf, composed, self_composed)
                            for inner in event.events])
  if isinstance(event, dp_event.SelfComposedDpEvent):
    return self_composed(event, fold(event.event, leaf, composed,
                                     self_composed))
  return leaf(event)


def leaves(event: dp_event.DpEvent, count: int = 1
           ) -> List[Tuple[dp_event.DpEvent, int]]:
  """Every non-composite event of a tree, in order, with its total count."""
  return fold(event, lambda leaf: [(leaf, count)],
              lambda _, parts: [pair for part in parts for pair in part],
              lambda outer, inner: [(leaf, times * outer.count)
                                    for leaf, times in inner])


def replaced(event: dp_event.DpEvent,
             replacement: Callable[[dp_event.DpEvent],
                                   Optional[dp_event.DpEvent]]
             ) -> Tuple[dp_event.DpEvent, bool]:
  """(the tree with each leaf's non-None `replacement`, whether any changed)."""

  def leaf(event):
    other = replacement(event)
    if other is not None and other != event:
      return other, True
    return event, False

  return fold(event, leaf,
              lambda _, parts: (dp_event.ComposedDpEvent([e for e, _ in parts]),
                                any(changed for _, changed in parts)),
              lambda outer, inner: (
                  dp_event.SelfComposedDpEvent(inner[0], outer.count),
                  inner[1]))


Kind = _event_specs.Kind

# The kinds the accountants compose as shuffle rounds.
ROUND_KINDS = (Kind.SHUFFLE, Kind.OWN_PARTICIPATION, Kind.HIDDEN_SAMPLE)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class Leaf:
  """A leaf of a ledger, classified.

  Attributes:
    kind: see `Kind`.
    event: the leaf as in the ledger.
    round: the shuffle event accounted: `event`, or the event a hidden
      sample wraps; None for the other kinds.
    sampling_ratio: the hidden sample's m / N, or the participation
      probability of a round with its own participation; None otherwise.
  """
  kind: Kind
  event: dp_event.DpEvent
  round: Optional[dp_event.DpEvent] = None
  sampling_ratio: Optional[float] = None


def classify(event: dp_event.DpEvent) -> Leaf:
  """The `Leaf` record of a non-composite event."""
  if isinstance(event, dp_event.NoOpDpEvent):
    return Leaf(Kind.NO_OP, event)
  spec = _event_specs.spec_of(event)
  if spec is not None:
    return Leaf(spec.kind, event, event, spec.sampling_ratio and
                spec.sampling_ratio(event))
  inner = getattr(event, 'event', None)
  if not (isinstance(inner, dp_event.DpEvent) and contains_shuffle(inner)):
    return Leaf(Kind.OTHER, event)
  if isinstance(event, dp_event.SampledWithoutReplacementDpEvent):
    return Leaf(Kind.HIDDEN_SAMPLE, event, inner,
                event.sample_size / event.source_dataset_size)
  if isinstance(event, dp_event.PoissonSampledDpEvent):
    return Leaf(Kind.POISSON_SHUFFLE, event)
  return Leaf(Kind.WRAPPED_SHUFFLE, event)


def contains_shuffle(event: dp_event.DpEvent) -> bool:
  """Whether the tree holds a shuffle-model event, also inside wrappers."""
  return any(classify(leaf).kind not in (Kind.NO_OP, Kind.OTHER)
             for leaf, _ in leaves(event))


def _is_round(leaf: Leaf) -> bool:
  return leaf.kind in (Kind.SHUFFLE, Kind.OWN_PARTICIPATION) or (
      leaf.kind is Kind.HIDDEN_SAMPLE
      and classify(leaf.round).kind is Kind.SHUFFLE)


def shuffle_rounds(ledger: dp_event.DpEvent
                   ) -> List[Tuple[dp_event.DpEvent, Optional[float], int]]:
  """Every shuffle round of a ledger: (round, sampling ratio, count)."""
  rounds = []
  for event, count in leaves(ledger):
    leaf = classify(event)
    if _is_round(leaf):
      # Rate 1 (RATE-ONE-DOMINATES).
      accounted = _event_specs.accounted_round(leaf.round)
      rounds.append((accounted, None if accounted is not leaf.round
                     else leaf.sampling_ratio, count))
  return rounds


def only_shuffle_rounds(ledger: dp_event.DpEvent) -> bool:
  """True if the ledger holds nothing but shuffle rounds (and no-ops)."""
  return all(leaf.kind is Kind.NO_OP or _is_round(leaf)
             for leaf in (classify(e) for e, _ in leaves(ledger)))


# Every accountant class by name (`ShuffleAccountant.__init_subclass__`).
_ACCOUNTANT_CLASSES: Dict[str, Type['ShuffleAccountant']] = {}


def accountant_class(name: Any) -> Optional[Type['ShuffleAccountant']]:
  """The accountant class called `name` (one imported so far), or None."""
  return _ACCOUNTANT_CLASSES.get(name) if isinstance(name, str) else None


def accountant_names() -> List[str]:
  """The names of the accountant classes imported so far, sorted."""
  return sorted(_ACCOUNTANT_CLASSES)


class ShuffleAccountant:
  """The compose step of both accountants (mixed in before their
  dp_accounting parent): every leaf of an event is classified once, then
  checked (`_check_*`) or composed (`_compose_event`) by its kind.

  Also their identity: a subclass lists its constructor's settings in
  `configuration()`, those settings and the ledger determine its answers,
  and `fresh()` builds an empty sibling of them. Every subclass that is a
  dp_accounting accountant is known by its class name (`accountant_class`),
  as a saved state names it.
  """

  def __init_subclass__(cls, **kwargs):
    super().__init_subclass__(**kwargs)
    # Mixins (`checkpoints.Checkpointable`) are not accountants to build.
    if issubclass(cls, privacy_accountant.PrivacyAccountant):
      _ACCOUNTANT_CLASSES[cls.__name__] = cls

  def configuration(self) -> Dict[str, Any]:
    """The constructor's settings that determine the answers (JSON-ready)."""
    raise NotImplementedError

  def fresh(self, **changes):
    """A new, empty accountant of this configuration, with `changes`
    (constructor settings) applied: what a query builds beside this one."""
    return type(self).from_configuration({**self.configuration(), **changes})

  def holding(self, ledger: dp_event.DpEvent, **changes):
    """A sibling of this configuration with `changes` (`fresh`) that has
    composed `ledger`, shared while held (`held`)."""
    return held(type(self), {**self.configuration(), **changes}, ledger)

  @classmethod
  def from_configuration(cls, configuration: Mapping[str, Any]):
    """A fresh accountant with the settings of `configuration()`."""
    try:
      return cls(**_constructor_arguments(configuration))
    except TypeError as error:
      raise ValueError(f'configuration {dict(configuration)!r} does not fit '
                       f'{cls.__name__}: {error}') from error

  def _empty(self) -> None:
    """Makes this accountant as new, in place: its constructor runs again
    with its configuration, so the ledger and everything derived from it
    start over (the constructor sets every such attribute)."""
    type(self).__init__(self, **_constructor_arguments(self.configuration()))

  def _forget_answers(self) -> None:
    """Drops what was derived from the ledger before it grew."""
    raise NotImplementedError

  def _routes(self) -> List['Route']:
    """Every route of the ledger, in the order a query asks them (the one
    place an accountant lists them)."""
    raise NotImplementedError

  def _certified_routes(self) -> 'CertifiedRoutes':
    """`CertifiedRoutes` of `_routes()`, built once per ledger."""
    raise NotImplementedError

  def explain_routes(self, target_delta: float) -> List[dict]:
    """The routes `get_epsilon(target_delta)` asks, in order.

    One dict per route with keys 'route' (its name), 'value' (its epsilon,
    None if not asked or no claim: the companion below its cut, basic
    composition where it does not apply) and 'answer' (whether it gave
    the answer); a
    route held by another accountant (the companion, a dominating ledger)
    also has 'accountant' (its class) and 'routes' (its own routes, the
    same way), and the RDP accountant's own route has 'stages': the order
    stages it asked, each with its 'orders' (smallest, largest), 'value'
    and 'accountant' (the accountant holding the stage: the first is
    itself, every later one another `ShuffleRdpAccountant`). So the tree
    names every accountant the query asked. They stay built for the next
    query on this ledger.
    """
    self.get_epsilon(target_delta)  # type: ignore[attr-defined]
    return self.last_routes()

  def last_routes(self) -> List[dict]:
    """The routes the last query on this ledger asked (see `explain_routes`);
    empty before any."""
    return self._certified_routes().last_query

  def _check_shuffle_event(self, event: dp_event.DpEvent,
                           reported: dp_event.DpEvent
                           ) -> Optional[CompositionErrorDetails]:
    """The route's checks of a `ShuffleEvent` reported as `reported`
    (itself or its hidden sample)."""
    raise NotImplementedError

  def _check_own_participation(self, event: dp_event.DpEvent
                              ) -> Optional[CompositionErrorDetails]:
    """The route's checks of a round with its own participation."""
    raise NotImplementedError

  def _check_other(self, event: dp_event.DpEvent, count: int
                   ) -> Optional[CompositionErrorDetails]:
    """A leaf of kind OTHER or WRAPPED_SHUFFLE (e.g. through the parent)."""
    raise NotImplementedError

  def _compose_event(self, event: dp_event.DpEvent, count: int) -> None:
    """Composes a checked event `count` times."""
    raise NotImplementedError

  def _maybe_compose(self, event: dp_event.DpEvent, count: int,
                     do_compose: bool) -> Optional[CompositionErrorDetails]:
    if do_compose:
      self._forget_answers()
      self._compose_event(event, count)
      return None
    for leaf_event, leaf_count in leaves(event, count):
      error = self._check_leaf(classify(leaf_event), leaf_count)
      if error is not None:
        return error
    return None

  def _check_leaf(self, leaf: Leaf, count: int
                  ) -> Optional[CompositionErrorDetails]:
    if leaf.kind is Kind.POISSON_SHUFFLE:
      return _event_checks.poisson_shuffle_error(leaf.event)
    if leaf.kind is Kind.HIDDEN_SAMPLE:
      return (_event_checks.check_sampled_shuffle(leaf.event)
              or self._check_shuffle_event(leaf.round, leaf.event))
    if leaf.kind is Kind.SHUFFLE:
      return self._check_shuffle_event(leaf.event, leaf.event)
    if leaf.kind is Kind.OWN_PARTICIPATION:
      return self._check_own_participation(leaf.event)
    return self._check_other(leaf.event, count)


# Accountants built to hold a ledger beside another (the companion, the
# dominating ledgers, the RDP order stages), by class and constructor
# arguments: a query that needs one ledger on one route twice (the RDP
# companion's one-user ledger is also the one-user ledger's RDP companion)
# builds it once. Sharing changes no answer: an accountant's answers depend
# only on its configuration and ledger, and these are never composed again.
# Weak: an entry lives while some route holds its accountant.
_HELD: Dict[Tuple[str, str], List[Tuple[dp_event.DpEvent, Any]]] = {}


def held(cls: Type['ShuffleAccountant'], configuration: Mapping[str, Any],
         ledger: dp_event.DpEvent) -> Any:
  """An accountant `cls.from_configuration(configuration)` that has composed
  `ledger` and nothing else: one already held for an equal ledger and the
  same constructor arguments (defaults filled in), or a new one. Raises what
  `compose` raises (and then keeps nothing)."""
  arguments = inspect.signature(cls).bind(
      **_constructor_arguments(configuration))
  arguments.apply_defaults()
  key = (cls.__name__, repr(sorted(arguments.arguments.items())))
  for other, ref in _HELD.get(key, ()):
    accountant = ref()
    if accountant is not None and other == ledger:
      return accountant
  accountant = cls.from_configuration(configuration)
  accountant.compose(ledger)
  ref = weakref.ref(accountant)
  # One assignment (a collection between a lookup and an append could run
  # `_forget` on this key and orphan the list), without dead entries.
  _HELD[key] = [entry for entry in _HELD.get(key, ())
                if entry[1]() is not None] + [(ledger, ref)]
  # The entry (and its ledger) goes with the accountant.
  weakref.finalize(accountant, _forget, key, ref).atexit = False
  return accountant


def _forget(key: Tuple[str, str], ref: 'weakref.ref') -> None:
  entries = [entry for entry in _HELD.get(key, ()) if entry[1] is not ref]
  if entries:
    _HELD[key] = entries
  else:
    _HELD.pop(key, None)


def _constructor_arguments(configuration: Mapping[str, Any]
                           ) -> Dict[str, Any]:
  """The keyword arguments of the constructor for `configuration()`."""
  settings = dict(configuration)
  name = settings.get('neighboring_relation')
  try:
    settings['neighboring_relation'] = (
        privacy_accountant.NeighboringRelation[name])
  except (KeyError, TypeError):
    raise ValueError(
        f"configuration['neighboring_relation'] = {name!r} is not one of "
        f'{[r.name for r in privacy_accountant.NeighboringRelation]}.'
    ) from None
  return settings


# ---- basic composition of LDP rounds (see the module docstring)


def _leaf_guarantee(event: dp_event.DpEvent, relation: NeighboringRelation
                    ) -> Optional[Tuple[float, float]]:
  if isinstance(event, dp_event.NoOpDpEvent):
    return 0.0, 0.0
  if isinstance(event, dp_event.SampledWithoutReplacementDpEvent):
    event = event.event
  spec = _event_specs.spec_of(event)
  if spec is None:
    return _pure_guarantee(event, relation)
  if (relation is NeighboringRelation.REPLACE_SPECIAL
      and spec.deletion_guarantee is not None):
    return spec.deletion_guarantee(event)
  return spec.local_guarantee(event)


def _pure_guarantee(event: dp_event.DpEvent, relation: NeighboringRelation
                    ) -> Optional[Tuple[float, float]]:
  """(eps, 0) of one of dp_accounting's pure-DP events, else None.

  Its largest privacy loss under `relation` (UPSTREAM-SENSITIVITY), an upper
  bound: Laplace, sensitivity over the scale; discrete Laplace, parameter times
  sensitivity (the sensitivity doubled under REPLACE_ONE); randomized response
  with noise p over k buckets, log(1 + k (1 - p) / p) (one input replaced; not
  defined under add/remove). Poisson-sampled at rate q under add/remove,
  log(1 + q (e^eps - 1)) (amplification by subsampling: each output law is
  a q-mixture, within that factor of the other in both directions); None
  under REPLACE_ONE, where that cap is too small (UPSTREAM-SENSITIVITY).
  """
  doubled = 2.0 if relation is NeighboringRelation.REPLACE_ONE else 1.0
  if isinstance(event, dp_event.PoissonSampledDpEvent):
    if relation is NeighboringRelation.REPLACE_ONE:
      return None
    inner = _pure_guarantee(event.event, relation)
    if inner is None:
      return None
    rate, epsilon = event.sampling_probability, inner[0]
    if epsilon < 1:
      return math.log1p(rate * math.expm1(epsilon)), 0.0
    # The same, without overflow: eps + log(q + (1 - q) e^-eps).
    return max(0.0, epsilon + math.log(rate + (1 - rate)
                                       * math.exp(-epsilon))), 0.0
  if isinstance(event, dp_event.LaplaceDpEvent) and event.noise_multiplier:
    return doubled / event.noise_multiplier, 0.0
  if (isinstance(event, dp_event.DiscreteLaplaceDpEvent)
      and event.noise_parameter):
    return doubled * event.noise_parameter * event.sensitivity, 0.0
  if (isinstance(event, dp_event.RandomizedResponseDpEvent)
      and relation is not NeighboringRelation.ADD_OR_REMOVE_ONE):
    if event.num_buckets == 1:
      return 0.0, 0.0
    if event.noise_parameter:
      return math.log1p(event.num_buckets * (1 - event.noise_parameter)
                        / event.noise_parameter), 0.0
  return None


def _sum(_, parts):
  if any(part is None for part in parts):
    return None
  return (math.fsum(p[0] for p in parts), math.fsum(p[1] for p in parts))


def _repeat(outer, inner):
  if inner is None:
    return None
  return outer.count * inner[0], outer.count * inner[1]


def basic_composition(event: dp_event.DpEvent, relation: NeighboringRelation
                      ) -> Optional[Tuple[float, float]]:
  """(sum eps0, sum delta0) of a ledger of LDP shuffle rounds, else None."""
  return fold(event, lambda leaf: _leaf_guarantee(leaf, relation), _sum,
              _repeat)


def capped_epsilon(ledger: dp_event.DpEvent, relation: NeighboringRelation,
                   target_delta: float, epsilon: float) -> float:
  """min(route epsilon, basic composition) where basic composition applies."""
  if math.isnan(epsilon):  # never report NaN: no finite claim from the route
    epsilon = math.inf
  cap = BasicCompositionRoute(ledger, relation).epsilon(target_delta)
  return float(epsilon if cap is None else min(epsilon, cap))


# ---- the smallest certified answer over the routes of one ledger


def _dominating_round(event: dp_event.DpEvent, spec: _event_specs.EventSpec,
                      dominating: Callable) -> Optional[dp_event.DpEvent]:
  """The round that dominates `event`, or None.

  As accounted (RATE-ONE-DOMINATES).
  """
  event = _event_specs.accounted_round(event)
  return dominating(event) if _event_specs.spec_of(event) is spec else None


def dominating_ledgers(ledger: dp_event.DpEvent, rate_one: bool = False,
                       relation: NeighboringRelation = (
                           NeighboringRelation.REPLACE_ONE)
                       ) -> List[dp_event.DpEvent]:
  """Ledgers that dominate `ledger` under `relation`, round by round.

  See DOMINATING-ROUNDS.

  One per dominating map of the event specs that changes some round: the
  rate-1 rounds (RATE-ONE-DOMINATES, if `rate_one`), the one-user rounds
  (post-processing), then the noise alone of the noisy sums (domination,
  SUM-OF-BITS-WITH-NOISE (iii)). Each round's pairs are dominated
  independently, so the composition (adaptive too) of the original rounds
  is dominated by the composition of these (ZDW22).
  """
  specs = _event_specs.specs()
  deletion = relation is NeighboringRelation.REPLACE_SPECIAL
  maps = ([(spec, spec.rate_one) for spec in specs
           if rate_one and spec.rate_one is not None]
          + [(spec, spec.one_user) for spec in specs
             if spec.one_user is not None]
          + [(spec, lambda event, alone=spec.noise_alone: alone(
              event, deletion)) for spec in specs
             if spec.noise_alone is not None])
  result = []
  for spec, dominating in maps:
    # Mypy cannot match a lambda with defaults to a one-argument Callable.
    ledger_of, changed = replaced(ledger, lambda e, s=spec, d=dominating:  # type: ignore[misc]
                                  _dominating_round(e, s, d))
    if changed:
      result.append(ledger_of)
  return result


class Route(Protocol):
  """One certified route of a ledger: every value it gives is an upper
  bound for the whole ledger (its epsilon at a delta, its delta at an
  epsilon), so the smallest over routes is too (`CertifiedRoutes`).

  `name` says which proof answers; `epsilon` / `delta` give its value, or
  None where it makes no claim (it is then listed as not asked); `details`
  says what the last query asked of it (the accountant holding it, that
  accountant's own routes, the order stages), an empty dict if nothing.
  `asked_from` is None for a route asked at every query, or the epsilon
  from which it is asked (`CertifiedRoutes`).
  """
  name: str
  asked_from: Optional[Callable[[], float]]

  def epsilon(self, target_delta: float) -> Optional[float]:
    ...

  def delta(self, target_epsilon: float) -> Optional[float]:
    ...

  def details(self) -> Dict[str, Any]:
    ...


class OwnRoute:
  """The accountant's own answer (its PLD, its RDP conversion), with the
  stages it asked (`stages()`: None, or the RDP order stages)."""

  def __init__(self, name: str, epsilon: Callable[[float], float],
               delta: Callable[[float], float],
               stages: Callable[[], Optional[List[dict]]] = lambda: None):
    self.name = name
    self.asked_from: Optional[Callable[[], float]] = None
    self._epsilon, self._delta, self._stages = epsilon, delta, stages

  def epsilon(self, target_delta: float) -> float:
    return self._epsilon(target_delta)

  def delta(self, target_epsilon: float) -> float:
    return self._delta(target_epsilon)

  def details(self) -> Dict[str, Any]:
    stages = self._stages()
    return {} if stages is None else {'stages': stages}


class AccountantRoute:
  """The answer of another accountant holding a ledger: the companion (the
  same ledger on the other route, `build()` on first request, None if it
  cannot hold it: then epsilon inf, delta 1) or a dominating ledger's."""

  def __init__(self, name: str, build: Callable[[], Any],
               asked_from: Optional[Callable[[], float]] = None):
    self.name, self.asked_from = name, asked_from
    self._build = build
    self._accountant: Any = None  # built on request; False: unavailable

  def accountant(self) -> Any:
    """The accountant (built once), or None if it cannot hold the ledger."""
    if self._accountant is None:
      built = self._build()
      self._accountant = False if built is None else built
    return None if self._accountant is False else self._accountant

  def epsilon(self, target_delta: float) -> float:
    accountant = self.accountant()
    return math.inf if accountant is None else accountant.get_epsilon(
        target_delta)

  def delta(self, target_epsilon: float) -> float:
    accountant = self.accountant()
    return 1.0 if accountant is None else accountant.get_delta(
        target_epsilon)

  def details(self) -> Dict[str, Any]:
    accountant = self.accountant()
    if accountant is None:
      return {}
    return dict(accountant=type(accountant).__name__,
                routes=accountant.last_routes())


class BasicCompositionRoute:
  """Basic composition of LDP rounds (see the module docstring): sum eps0
  at every delta >= sum delta0, and no claim elsewhere or for a ledger with
  another kind of event."""

  def __init__(self, ledger: dp_event.DpEvent, relation: NeighboringRelation):
    self.name = 'basic composition'
    self.asked_from: Optional[Callable[[], float]] = None
    self._guarantee = basic_composition(ledger, relation)

  def epsilon(self, target_delta: float) -> Optional[float]:
    guarantee = self._guarantee
    if guarantee is None or target_delta < guarantee[1] * (1 + _SUM_MARGIN):
      return None
    return guarantee[0] * (1 + _SUM_MARGIN)

  def delta(self, target_epsilon: float) -> Optional[float]:
    guarantee = self._guarantee
    if guarantee is None or target_epsilon < guarantee[0] * (1 + _SUM_MARGIN):
      return None
    return guarantee[1] * (1 + _SUM_MARGIN)

  def details(self) -> Dict[str, Any]:
    return {}


def dominating_routes(ledger: dp_event.DpEvent, holding: Callable,
                      relation: NeighboringRelation,
                      rate_one: bool = False) -> List[AccountantRoute]:
  """A route per ledger that dominates `ledger` (`dominating_ledgers`),
  each held by `holding(that ledger)` (an accountant that composed it). A
  ledger it cannot compose (e.g. a fixed grid too fine for it) is left out:
  it was only a candidate."""
  routes: List[AccountantRoute] = []
  for dominating in dominating_ledgers(ledger, rate_one, relation):
    try:
      accountant = holding(dominating)
    except (privacy_accountant.UnsupportedEventError, ValueError):
      continue
    routes.append(AccountantRoute(
        f'dominating ledger {len(routes) + 1} (DOMINATING-ROUNDS, '
        'RATE-ONE-DOMINATES)', _built(accountant)))
  return routes


def _built(accountant: Any) -> Callable[[], Any]:
  return lambda: accountant


class CertifiedRoutes:
  """The smallest certified epsilon (delta) over the routes of one ledger.

  Every route is an upper bound for the ledger (`Route`), so their smallest
  is too. The routes are asked in order; one with `asked_from` (the
  companion) is asked for epsilon only where the smallest so far exceeds
  its cut, and then reports at least the cut, and for delta only from the
  cut on: the same cut for both queries, so that the combined profile stays
  non-increasing and each query the inverse of the other. A NaN from a
  route is no claim (epsilon inf, delta 1); deltas are clipped to [0, 1].
  `last_query` reports what the last query asked, as a tree: one dict per
  route with 'route', 'value' (None: not asked, or no claim) and 'answer'
  (whether it gave the answer), and the route's `details()` where it was
  asked. Its lifetime is the ledger's: build a new one when the ledger
  grows.
  """

  def __init__(self, routes: List[Route]):
    self.routes = list(routes)
    self.last_query: List[dict] = []

  def epsilon(self, target_delta: float) -> float:
    """The smallest certified epsilon at `target_delta`."""
    smallest, values = math.inf, []
    for route in self.routes:
      value = None
      if route.asked_from is None:
        value = route.epsilon(target_delta)
      else:
        cut = route.asked_from()
        if smallest > cut and target_delta > 0:
          asked = route.epsilon(target_delta)
          value = None if asked is None else max(cut, asked)
      if value is not None:
        value = math.inf if math.isnan(value) else float(value)
        smallest = min(smallest, value)
      values.append(value)
    return self._answer(values, smallest)

  def delta(self, target_epsilon: float) -> float:
    """The smallest certified delta at `target_epsilon`."""
    smallest, values = 1.0, []
    for route in self.routes:
      value = None
      if route.asked_from is None or target_epsilon >= route.asked_from():
        value = route.delta(target_epsilon)
      if value is not None:
        value = 1.0 if math.isnan(value) else min(max(float(value), 0.0),
                                                  1.0)
        smallest = min(smallest, value)
      values.append(value)
    return self._answer(values, smallest)

  def _answer(self, values: List[Optional[float]], answer: float) -> float:
    """`answer`, after listing every route in `last_query`."""
    winner = next((index for index, value in enumerate(values)
                   if value == answer), None)
    self.last_query = []
    for index, (route, value) in enumerate(zip(self.routes, values)):
      entry = dict(route=route.name, answer=index == winner, value=value)
      if value is not None:
        entry.update(route.details())
      self.last_query.append(entry)
    return answer
