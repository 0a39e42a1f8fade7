"""The ledger's one walk and one classification (`_ledger`), which both
accountants read."""

import gc
import math
import weakref

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
import numpy as np
import pytest

from shuffle_accountants import CheckInEvent
from shuffle_accountants import DistributedCheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import SubsampledShuffleGaussianEvent
from shuffle_accountants.core import _ledger

Kind = _ledger.Kind
REPLACE_ONE = privacy_accountant.NeighboringRelation.REPLACE_ONE
ADD_OR_REMOVE_ONE = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE
SHUFFLE = ShuffleEvent(100, 1.0)
GAUSSIAN = dp_event.GaussianDpEvent(2.0)


def test_leaves_multiply_counts_through_nested_self_composition():
  checkin = CheckInEvent(50, 0.5, local_epsilon=1.0)
  tree = dp_event.ComposedDpEvent([
      dp_event.SelfComposedDpEvent(dp_event.ComposedDpEvent([
          SHUFFLE, dp_event.SelfComposedDpEvent(checkin, 3)]), 5),
      GAUSSIAN])
  assert _ledger.leaves(tree, 2) == [(SHUFFLE, 10), (checkin, 30),
                                     (GAUSSIAN, 2)]


@pytest.mark.parametrize('event,kind,ratio', [
    (dp_event.NoOpDpEvent(), Kind.NO_OP, None),
    (SHUFFLE, Kind.SHUFFLE, None),
    (CheckInEvent(100, 0.25, local_epsilon=1.0), Kind.OWN_PARTICIPATION,
     0.25),
    (DistributedCheckInEvent(100, 0.5, 1.0), Kind.OWN_PARTICIPATION, 0.5),
    (SubsampledShuffleGaussianEvent(100, 10, 1.0), Kind.OWN_PARTICIPATION,
     0.1),
    (dp_event.SampledWithoutReplacementDpEvent(1000, 100, SHUFFLE),
     Kind.HIDDEN_SAMPLE, 0.1),
    (dp_event.PoissonSampledDpEvent(0.1, dp_event.ComposedDpEvent([SHUFFLE])),
     Kind.POISSON_SHUFFLE, None),
    (dp_event.RepeatAndSelectDpEvent(SHUFFLE, 1.0, 1.0),
     Kind.WRAPPED_SHUFFLE, None),
    (dp_event.PoissonSampledDpEvent(0.1, GAUSSIAN), Kind.OTHER, None),
    (dp_event.SampledWithoutReplacementDpEvent(1000, 100, GAUSSIAN),
     Kind.OTHER, None),
    (GAUSSIAN, Kind.OTHER, None),
])
def test_classify(event, kind, ratio):
  leaf = _ledger.classify(event)
  assert leaf.kind is kind
  assert leaf.sampling_ratio == ratio


def test_shuffle_found_inside_nested_wrappers():
  nested = dp_event.PoissonSampledDpEvent(0.5, dp_event.RepeatAndSelectDpEvent(
      dp_event.SelfComposedDpEvent(SHUFFLE, 2), 1.0, 1.0))
  assert _ledger.contains_shuffle(nested)
  assert not _ledger.contains_shuffle(dp_event.RepeatAndSelectDpEvent(
      GAUSSIAN, 1.0, 1.0))


def test_basic_composition_sums_nested_counts():
  tree = dp_event.ComposedDpEvent([
      dp_event.SelfComposedDpEvent(dp_event.ComposedDpEvent([
          ShuffleEvent(10, 0.5), ShuffleEvent(10, 0.25, local_delta=1e-9)]), 4),
      dp_event.SampledWithoutReplacementDpEvent(100, 10, ShuffleEvent(10, 2.0)),
      dp_event.NoOpDpEvent()])
  epsilon, delta = _ledger.basic_composition(tree, REPLACE_ONE)
  assert epsilon == 5.0 and math.isclose(delta, 4e-9, rel_tol=1e-15)
  assert _ledger.basic_composition(dp_event.ComposedDpEvent(
      [SHUFFLE, GAUSSIAN]), REPLACE_ONE) is None


def test_dominating_ledgers_replace_named_rounds_in_place():
  from shuffle_accountants import randomizers
  named = ShuffleEvent(100, randomizer=randomizers.KRandomizedResponse(3, 1.0))
  tree = dp_event.ComposedDpEvent([dp_event.SelfComposedDpEvent(named, 4),
                                   SHUFFLE])
  (dominating,) = _ledger.dominating_ledgers(tree)
  assert dominating == dp_event.ComposedDpEvent([
      dp_event.SelfComposedDpEvent(ShuffleEvent(1, randomizer=named.randomizer),
                                   4), SHUFFLE])
  assert _ledger.dominating_ledgers(dp_event.ComposedDpEvent([SHUFFLE])) == []


@pytest.mark.parametrize('accountant', [
    ShuffleRdpAccountant, ShufflePldAccountant,
    lambda: ShufflePldAccountant(value_discretization_interval=1e-2)])
def test_both_accountants_refuse_poisson_sampled_shuffle_rounds(accountant):
  event = dp_event.PoissonSampledDpEvent(0.1, dp_event.ComposedDpEvent([
      dp_event.NoOpDpEvent(), CheckInEvent(10, 0.5, local_epsilon=1.0)]))
  for wrapped in (event, dp_event.SelfComposedDpEvent(event, 2)):
    with pytest.raises(privacy_accountant.UnsupportedEventError,
                       match='Poisson subsampling of a shuffle round'):
      accountant().compose(wrapped)


def _largest_loss_by_enumeration(event, relation):
  """The largest privacy loss under `relation`, from the output laws of the
  event's docstring mechanism (tested here, not taken from the library): a
  sum of records of L1 norm <= C moves by C under add/remove and by 2C
  under replace-one (one record at C replaced by one at -C)."""
  shift = 2 if relation is REPLACE_ONE else 1
  if isinstance(event, dp_event.RandomizedResponseDpEvent):
    k, p = event.num_buckets, event.noise_parameter
    same, other = 1 - p + p / k, p / k
    return max(math.log(same / other), math.log(other / same))
  if isinstance(event, dp_event.DiscreteLaplaceDpEvent):
    a, moved = event.noise_parameter, shift * event.sensitivity
    return max(a * abs(abs(x - moved) - abs(x)) for x in range(-50, 50))
  # Laplace, possibly Poisson-sampled at rate q (add/remove): densities on a
  # fine grid, the sampled record present with probability q.
  q, b = ((event.sampling_probability, event.event.noise_multiplier)
          if isinstance(event, dp_event.PoissonSampledDpEvent)
          else (1.0, event.noise_multiplier))
  y = np.linspace(-40 * b - 2, 40 * b + 2, 200001)
  base = np.exp(-np.abs(y) / b)
  sampled = (1 - q) * base + q * np.exp(-np.abs(y - shift) / b)
  return float(np.max(np.abs(np.log(sampled / base))))


@pytest.mark.parametrize('relation', [REPLACE_ONE, ADD_OR_REMOVE_ONE])
@pytest.mark.parametrize('event', [
    dp_event.LaplaceDpEvent(0.3), dp_event.DiscreteLaplaceDpEvent(0.7, 3),
    dp_event.RandomizedResponseDpEvent(0.2, 5),
    dp_event.RandomizedResponseDpEvent(0.9, 2),
    dp_event.PoissonSampledDpEvent(0.3, dp_event.LaplaceDpEvent(0.5)),
    dp_event.PoissonSampledDpEvent(0.9, dp_event.LaplaceDpEvent(0.1))])
def test_pure_events_enter_basic_composition_at_their_largest_loss(event,
                                                                   relation):
  guarantee = _ledger.basic_composition(dp_event.SelfComposedDpEvent(event, 7),
                                        relation)
  undefined = (isinstance(event, dp_event.RandomizedResponseDpEvent)
               and relation is ADD_OR_REMOVE_ONE)
  if undefined or (isinstance(event, dp_event.PoissonSampledDpEvent)
                   and relation is REPLACE_ONE):
    # UPSTREAM-SENSITIVITY: randomized response has no add/remove reading; under
    # replace-one the subsampling cap log(1 + q (e^eps - 1)) is too small
    # (below).
    assert guarantee is None
    return
  epsilon, delta = guarantee
  truth = _largest_loss_by_enumeration(event, relation)
  assert delta == 0.0
  assert 7 * truth * (1 - 1e-9) <= epsilon <= 7 * truth * (1 + 1e-6)


def test_poisson_subsampling_cap_stays_off_replace_one():
  """q = 1/2, Laplace of scale 1: replacing the record at C by one at -C
  gives the mixtures (1 - q) L(0) + q L(+-1) (as the grid computes), whose
  largest loss is 1, above the add/remove cap log(1 + q (e - 1)) = 0.620."""
  q, y = 0.5, np.linspace(-60, 60, 240001)
  plus = (1 - q) * np.exp(-np.abs(y)) + q * np.exp(-np.abs(y - 1))
  minus = (1 - q) * np.exp(-np.abs(y)) + q * np.exp(-np.abs(y + 1))
  truth = float(np.max(np.log(plus / minus)))
  assert truth == pytest.approx(1.0, abs=1e-6)
  assert math.log1p(q * math.expm1(1.0)) < truth
  event = dp_event.PoissonSampledDpEvent(q, dp_event.LaplaceDpEvent(1.0))
  assert _ledger.basic_composition(event, REPLACE_ONE) is None
  assert _ledger.capped_epsilon(event, REPLACE_ONE, 0.0, math.inf) == math.inf


def test_pure_ledger_too_long_for_the_pld_stays_finite():
  """Poisson-sampled Laplace x 1e4: the PLD's mass runs off to +infinity
  (delta = 1 below it); basic composition still certifies a finite eps."""
  relation = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE
  event = dp_event.PoissonSampledDpEvent(0.9, dp_event.LaplaceDpEvent(0.1))
  accountant = ShufflePldAccountant(relation).compose(event, 10**4)
  per_round = math.log1p(0.9 * math.expm1(10.0))
  assert accountant.get_epsilon(1e-6) <= 10**4 * per_round * (1 + 1e-9)


@pytest.mark.parametrize('accountant', [ShufflePldAccountant,
                                        ShuffleRdpAccountant])
def test_explain_routes_lists_every_route_and_the_one_that_answered(
    accountant):
  accountant = accountant()
  accountant.compose(ShuffleEvent(num_users=1000, local_epsilon=1.0,
                                  num_categories=2), 10)
  routes = accountant.explain_routes(1e-12)
  epsilon = accountant.get_epsilon(1e-12)
  (answer,) = [route for route in routes if route['answer']]
  assert answer['value'] == epsilon
  assert routes[-1]['route'] == 'basic composition'
  assert any(route['route'].startswith('dominating ledger')
             for route in routes)  # its one-user ledger (DOMINATING-ROUNDS)
  assert ('companion' in [route['route'] for route in routes]) == isinstance(
      accountant, ShufflePldAccountant)


def _accountants_in(routes):
  """How many accountants a route tree names besides the one queried."""
  count = 0
  for route in routes:
    count += 'accountant' in route
    count += len(route.get('stages', [])[1:])  # the first is the holder
    count += _accountants_in(route.get('routes', []))
  return count


@pytest.mark.parametrize('accountant', [ShufflePldAccountant,
                                        ShuffleRdpAccountant])
def test_explain_routes_names_every_accountant_the_query_builds(
    accountant, monkeypatch):
  # Issue 52: one query built 17 accountants while explain_routes listed 4
  # routes. Count the constructions and compare with the tree: it names
  # every accountant built. (On the PLD route it built 10 and named 16
  # while the one-user ledger asked its RDP companion, the one the RDP
  # companion's one-user ledger also is; that ledger is pure, its epsilon
  # at 1e-12 within RDP_CUT_MARGIN of its cut, so it no longer asks.)
  gc.collect()  # no accountant held from an earlier test to share
  queried = accountant()
  queried.compose(ShuffleEvent(num_users=1000, local_epsilon=1.0,
                               num_categories=2), 10)
  built = []
  for cls in (ShufflePldAccountant, ShuffleRdpAccountant):
    def counting(self, *args, __init__=cls.__init__, **kwargs):
      built.append(type(self).__name__)
      __init__(self, *args, **kwargs)
    monkeypatch.setattr(cls, '__init__', counting)
  routes = queried.explain_routes(1e-12)
  assert len(built) > 3
  if accountant is ShufflePldAccountant:
    assert len(built) == _accountants_in(routes) == 9
  else:
    assert len(built) == _accountants_in(routes) == 7
  held = [route for route in routes if 'accountant' in route]
  assert held and all(route['routes'] for route in held)
  assert {route['accountant'] for route in held} <= set(built)
  own = routes[0]
  assert ('stages' in own) == (accountant is ShuffleRdpAccountant)
  if 'stages' in own:
    assert own['stages'][0]['accountant'] == 'itself'
    assert min(stage['value'] for stage in own['stages']) == own['value']
    # A delta query reports its stages as deltas; what it builds beyond the
    # epsilon query (it asks past the first stage) is in its tree too.
    built.clear()
    queried.get_delta(own['value'])
    routes = queried.last_routes()
    stages = routes[0]['stages']
    assert len(stages) > 1 and 0 < len(built) <= _accountants_in(routes)
    assert min(stage['value'] for stage in stages) == routes[0]['value']
    assert all(0 <= stage['value'] <= 1 for stage in stages)


def test_identity_is_the_accountants_base_not_persistence():
  # Issue 52: `fresh()` and the class registry were the persistence
  # mixin's, so no accountant built a sibling without it.
  for cls in (ShufflePldAccountant, ShuffleRdpAccountant):
    for name in ('configuration', 'fresh', 'from_configuration'):
      assert name in vars(_ledger.ShuffleAccountant), name
    assert cls.fresh is _ledger.ShuffleAccountant.fresh
    assert _ledger.accountant_class(cls.__name__) is cls
  assert _ledger.accountant_class('Checkpointable') is None  # a mixin
  assert _ledger.accountant_class(['ShufflePldAccountant']) is None
  assert {'ShufflePldAccountant', 'ShuffleRdpAccountant'} <= set(
      _ledger.accountant_names())
  with pytest.raises(ValueError, match="neighboring_relation'] = 'ANY'"):
    ShuffleRdpAccountant.from_configuration(dict(
        ShuffleRdpAccountant().configuration(), neighboring_relation='ANY'))
  with pytest.raises(ValueError, match='does not fit ShuffleRdpAccountant'):
    ShuffleRdpAccountant().fresh(grid=1)


def test_companions_are_built_from_the_configuration():
  accountant = ShuffleRdpAccountant(relative_grouping=0.05)
  fresh = accountant.fresh(orders=[2, 3])
  assert fresh.configuration() == dict(
      accountant.configuration(), orders=[2.0, 3.0])
  assert type(fresh) is ShuffleRdpAccountant


class _FixedRoute:
  """A route answering fixed values (None: no claim), counting its asks."""

  def __init__(self, name, epsilon, delta, asked_from=None):
    self.name, self.asked_from = name, asked_from
    self._epsilon, self._delta, self.asks = epsilon, delta, 0

  def epsilon(self, target_delta):
    self.asks += 1
    return self._epsilon

  def delta(self, target_epsilon):
    self.asks += 1
    return self._delta

  def details(self):
    return {'asked': self.asks}


def test_certified_routes_take_the_smallest_claim_of_route_objects():
  # Issue 52 item 4: the routes are objects. NaN is no claim (never the
  # answer), None is not asked, deltas are clipped to [0, 1].
  own = _FixedRoute('own', math.nan, math.nan)
  other = _FixedRoute('other', 2.0, 1.5)
  silent = _FixedRoute('silent', None, None)
  routes = _ledger.CertifiedRoutes([own, other, silent])
  assert routes.epsilon(1e-6) == 2.0
  assert [(entry['route'], entry['value'], entry['answer'])
          for entry in routes.last_query] == [
              ('own', math.inf, False), ('other', 2.0, True),
              ('silent', None, False)]
  assert routes.last_query[1]['asked'] == 1
  assert 'asked' not in routes.last_query[2]  # details only where asked
  assert routes.delta(1.0) == 1.0
  assert [entry['value'] for entry in routes.last_query] == [1.0, 1.0, None]


def test_a_route_with_a_cut_is_asked_only_past_it():
  # The companion: for epsilon only where the smallest so far exceeds the
  # cut (then at least the cut), for delta only from the cut on.
  own = _FixedRoute('own', 0.5, 1e-3)
  companion = _FixedRoute('companion', 0.1, 1e-9, asked_from=lambda: 0.3)
  routes = _ledger.CertifiedRoutes([own, companion])
  assert routes.epsilon(1e-6) == 0.3  # max(cut, 0.1)
  assert routes.delta(0.2) == 1e-3 and companion.asks == 1  # below the cut
  assert routes.last_query[1]['value'] is None
  assert routes.delta(0.3) == 1e-9 and companion.asks == 2
  below = _ledger.CertifiedRoutes([_FixedRoute('own', 0.2, 1e-3), companion])
  assert below.epsilon(1e-6) == 0.2 and companion.asks == 2


def test_basic_composition_is_a_route_listed_with_its_value():
  ledger = dp_event.SelfComposedDpEvent(ShuffleEvent(1000, 1.0), 10)
  route = _ledger.BasicCompositionRoute(ledger, REPLACE_ONE)
  assert route.epsilon(1e-9) == pytest.approx(10.0, rel=1e-11)
  assert route.epsilon(1e-9) >= 10.0
  assert route.delta(9.0) is None and route.delta(10.1) == 0.0
  gaussian = _ledger.BasicCompositionRoute(GAUSSIAN, REPLACE_ONE)
  assert gaussian.epsilon(0.5) is None and gaussian.delta(100.0) is None
  routes = ShuffleRdpAccountant().compose(ledger).explain_routes(1e-9)
  assert routes[-1]['route'] == 'basic composition'
  assert routes[-1]['value'] == route.epsilon(1e-9)


def test_one_query_groups_the_ledger_once(monkeypatch):
  # Issue 52: the PLD route built the grouped ledger twice per query (the
  # grid's choice and the composition).
  from shuffle_accountants.core import _grouping
  calls = []
  original = _grouping.grouped_ledger
  monkeypatch.setattr(_grouping, 'grouped_ledger', lambda *args: (
      calls.append(args), original(*args))[1])
  accountant = ShufflePldAccountant().compose(ShuffleEvent(1000, 1.0), 3)
  accountant.get_epsilon(1e-6)
  assert len(calls) == 1
  accountant.get_delta(0.5)
  assert len(calls) == 1  # the same ledger: nothing grouped again


def test_an_accountant_holding_a_ledger_is_shared_while_held():
  ledger = dp_event.SelfComposedDpEvent(ShuffleEvent(100, 1.0), 3)
  configuration = ShuffleRdpAccountant().configuration()
  first = _ledger.held(ShuffleRdpAccountant, configuration, ledger)
  # An equal ledger and the same constructor arguments (defaults filled
  # in) share it; another configuration or ledger does not.
  same = dp_event.SelfComposedDpEvent(ShuffleEvent(100, 1.0), 3)
  assert _ledger.held(ShuffleRdpAccountant, dict(
      neighboring_relation='REPLACE_ONE'), same) is first
  assert _ledger.held(ShuffleRdpAccountant, dict(
      configuration, orders=[2.0, 4.0]), ledger) is not first
  other = _ledger.held(ShuffleRdpAccountant, configuration,
                       dp_event.SelfComposedDpEvent(ShuffleEvent(100, 1.0),
                                                    4))
  assert other is not first
  assert other.get_epsilon(1e-6) > first.get_epsilon(1e-6)
  assert first.get_epsilon(1e-6) == ShuffleRdpAccountant().compose(
      ledger).get_epsilon(1e-6)
  # What compose refuses is raised and not kept.
  with pytest.raises(privacy_accountant.UnsupportedEventError):
    _ledger.held(ShuffleRdpAccountant, dict(
        configuration, neighboring_relation='ADD_OR_REMOVE_ONE'), ledger)
  # Weak: the pool does not keep an accountant alive, nor, once it is gone,
  # its ledger (the entry was kept until its key was looked up again).
  alive = weakref.ref(first)
  entries = lambda: [entry for entries in _ledger._HELD.values()
                     for entry in entries if entry[0] is ledger]
  assert len(entries()) == 1
  del first, same
  gc.collect()
  assert alive() is None
  assert not entries()
  assert _ledger.held(ShuffleRdpAccountant, configuration,
                      ledger).get_epsilon(1e-6) > 0
