"""A shuffle event defined here alone: class, spec, one entry per route."""

import ast
import math
import pathlib
import re

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant
import numpy as np
import pytest

import shuffle_accountants
from shuffle_accountants import CheckInEvent
from shuffle_accountants import NeighboringRelation
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import events
from shuffle_accountants.core import _event_specs
from shuffle_accountants.core import _grouping
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pld import candidates
from shuffle_accountants.pld import routes as pld_routes
from shuffle_accountants.rdp import routes as rdp_routes
from shuffle_accountants.rdp import shuffle_round


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ToyRound(dp_event.DpEvent):
  """A shuffle of `num_users` eps0-LDP reports under another name."""
  num_users: int
  local_epsilon: float


def _as_shuffle(event: ToyRound) -> ShuffleEvent:
  return ShuffleEvent(num_users=event.num_users,
                      local_epsilon=event.local_epsilon)


@pytest.fixture(name='toy_round_registered')
def _toy_round_registered(monkeypatch):
  _event_specs.register(ToyRound, _event_specs.EventSpec(
      _event_specs.Kind.OWN_PARTICIPATION,
      local_guarantee=lambda event: (event.local_epsilon, 0.0),
      grouped_by=('num_users',)))  # more users only add post-processing
  monkeypatch.setitem(rdp_routes.ROUND_BOUNDS, ToyRound, lambda event, orders:
                      rdp_routes.shuffle_bound(_as_shuffle(event), orders))
  monkeypatch.setitem(pld_routes.ROUND_PMFS, ToyRound, pld_routes.RoundPmf(
      lambda event, *rest: candidates.shuffle_round_pmf(_as_shuffle(event),
                                                         *rest),
      lambda event, *rest: pld_routes.round_scales(_as_shuffle(event), *rest)))
  yield
  _event_specs.unregister(ToyRound)


@pytest.mark.usefixtures('toy_round_registered')
@pytest.mark.parametrize('accountant', [ShufflePldAccountant,
                                        ShuffleRdpAccountant])
def test_a_new_event_composes_on_both_routes(accountant):
  toy, same = accountant(), accountant()
  toy.compose(dp_event.GaussianDpEvent(3.0)).compose(ToyRound(5000, 1.5), 40)
  same.compose(dp_event.GaussianDpEvent(3.0)).compose(
      ShuffleEvent(num_users=5000, local_epsilon=1.5), 40)
  for delta in (1e-6, 1e-12):
    assert toy.get_epsilon(delta) == same.get_epsilon(delta)
  assert toy.get_delta(1.0) == same.get_delta(1.0)
  assert [type(c.event) for c in toy.contributions] == [ToyRound]


@pytest.mark.usefixtures('toy_round_registered')
def test_basic_composition_reads_the_spec():
  # Local guarantee 40 x 0.01: basic composition caps epsilon at 0.4.
  accountant = ShuffleRdpAccountant().compose(ToyRound(2, 0.01), 40)
  assert accountant.get_epsilon(0.0) <= 0.4 * (1 + 1e-9)


def test_an_unregistered_event_is_not_a_shuffle_round():
  assert _event_specs.spec_of(ToyRound(10, 1.0)) is None
  with pytest.raises(privacy_accountant.UnsupportedEventError):
    ShuffleRdpAccountant().compose(ToyRound(10, 1.0))


def test_a_spec_without_a_route_entry_names_the_gap(monkeypatch):
  spec = _event_specs.EventSpec(_event_specs.Kind.OWN_PARTICIPATION)
  monkeypatch.setitem(_event_specs._SPECS, ToyRound, spec)
  with pytest.raises(TypeError, match="ToyRound has an EventSpec but no "
                     "entry in this route's table"):
    ShuffleRdpAccountant().compose(ToyRound(10, 1.0))


def test_a_spec_accounts_its_event_as_the_round_it_is(monkeypatch):
  # `accounted_as`: the toy round is a shuffle round, so it needs no entry
  # in the routes' tables (as a rate-1 check-in round is one).
  spec = _event_specs.EventSpec(_event_specs.Kind.OWN_PARTICIPATION,
                                accounted_as=_as_shuffle)
  monkeypatch.setitem(_event_specs._SPECS, ToyRound, spec)
  toy = ShuffleRdpAccountant().compose(ToyRound(5000, 1.5), 40)
  same = ShuffleRdpAccountant().compose(
      ShuffleEvent(num_users=5000, local_epsilon=1.5), 40)
  assert toy.get_epsilon(1e-6) == same.get_epsilon(1e-6)
  assert [c.accounted_as for c in toy.contributions] == [
      ShuffleEvent(num_users=5000, local_epsilon=1.5)]


def test_a_spec_keeps_the_rounds_it_does_not_admit_out_of_bins(monkeypatch):
  # `groupable`: rounds it refuses stay as they are (as dropouts do).
  spec = _event_specs.EventSpec(
      _event_specs.Kind.OWN_PARTICIPATION, grouped_by=('num_users',),
      groupable=lambda event: event.local_epsilon < 1)
  monkeypatch.setitem(_event_specs._SPECS, ToyRound, spec)
  ledger = dp_event.ComposedDpEvent([
      ToyRound(1000, 0.5), ToyRound(1005, 0.5), ToyRound(1000, 2.0),
      ToyRound(1005, 2.0)])
  assert _grouping.grouped_ledger(ledger, 0.01) == dp_event.ComposedDpEvent([
      dp_event.SelfComposedDpEvent(ToyRound(1000, 0.5), 2),
      ToyRound(1000, 2.0), ToyRound(1005, 2.0)])


_PACKAGE = pathlib.Path(shuffle_accountants.__file__).parent


def _docstring(module: str) -> str:
  return ast.get_docstring(ast.parse((_PACKAGE / module).read_text(
      encoding='utf-8')))


_DOCS = pathlib.Path(__file__).resolve().parents[1] / 'docs'


def _page(name: str) -> str:
  # From the checkout, not the package: CI installs the package
  # non-editable, so the package's parent is site-packages.
  return (_DOCS / name).read_text(encoding='utf-8')


# Where the events are listed by hand, each read as the names it lists.
_EVENT_LISTS = {
    'shuffle_accountants.__all__': lambda: shuffle_accountants.__all__,
    'events.__all__': lambda: events.__all__,
    'rdp.accountant': lambda: re.findall(r'`(\w+)', _docstring(
        'rdp/accountant.py')),
    'pld.accountant': lambda: re.findall(r'`(\w+)', _docstring(
        'pld/accountant.py')),
    'docs/architecture.md': lambda: re.findall(r'\w+', _page(
        'architecture.md').split('events.py', 1)[1].split('.py', 1)[0]),
    'docs/concepts.md': lambda: re.findall(r'`(\w+)\(', _page('concepts.md')),
}


def test_the_route_tables_hold_exactly_the_registered_events():
  assert set(rdp_routes.ROUND_BOUNDS) == set(_event_specs._SPECS)
  assert set(pld_routes.ROUND_PMFS) == set(_event_specs._SPECS)


@pytest.mark.parametrize('where', sorted(_EVENT_LISTS))
def test_every_list_of_the_events_names_every_registered_one(where):
  # These lists had drifted: the accountants' docstrings, the map of the
  # house and the concepts page named five or six of the nine events.
  listed = set(_EVENT_LISTS[where]())
  missing = [event_type.__name__ for event_type in _event_specs._SPECS
             if event_type.__name__ not in listed]
  assert not missing, (where, missing)


def test_the_events_defined_under_deletion_are_the_specs(monkeypatch):
  # Derived from the specs' relations: a new event is accepted and named.
  deletion = NeighboringRelation.REPLACE_SPECIAL
  monkeypatch.setitem(_event_specs._SPECS, ToyRound, _event_specs.EventSpec(
      _event_specs.Kind.OWN_PARTICIPATION,
      relations=('REPLACE_ONE', deletion.name)))
  assert ToyRound in _event_specs.defined_under(deletion.name)
  with pytest.raises(privacy_accountant.UnsupportedEventError,
                     match=r'only ShuffleEvent, .*ToyRound are accounted'):
    ShuffleRdpAccountant(neighboring_relation=deletion).compose(
        CheckInEvent(100, 0.5, 1.0))


# ---- a newcomer with its own math, in three registrations (the steps of
# docs/contributing.md, "Adding a shuffle event")


@attr.s(frozen=True, slots=True, auto_attribs=True)
class NamedBitsEvent(dp_event.DpEvent):
  """Each of `num_users` users releases its bit, under its name, through
  binary randomized response at `local_epsilon` (no shuffler).

  Neighbouring relation: replace-one. Only the replaced user's report
  changes law, so the round is exactly the pair P = (p, 1 - p), Q = (1 - p,
  p), p = e^eps0 / (1 + e^eps0), whatever n: privacy losses +-eps0 with
  P-masses p and 1 - p, Renyi divergence of order a log(p^a (1 - p)^(1 - a)
  + (1 - p)^a p^(1 - a)) / (a - 1), and eps0-DP.
  """
  num_users: int
  local_epsilon: float


def _keep_probability(local_epsilon: float) -> float:
  return 1 / (1 + math.exp(-local_epsilon))


def named_bits_rdp(event: NamedBitsEvent, orders: np.ndarray
                   ) -> shuffle_round.RdpBound:
  """The RDP route's entry: the pair's Renyi divergence at every order."""
  log_p = math.log(_keep_probability(event.local_epsilon))
  log_q = math.log(_keep_probability(-event.local_epsilon))
  rdp = np.logaddexp(orders * log_p + (1 - orders) * log_q,
                     orders * log_q + (1 - orders) * log_p) / (orders - 1)
  return shuffle_round.smallest_bound(orders, {'named bits pair': rdp})


def _named_bits_atoms(event: NamedBitsEvent) -> privacy_loss.PldAtoms:
  p = _keep_probability(event.local_epsilon)
  return privacy_loss.PldAtoms(
      np.array([event.local_epsilon, -event.local_epsilon]),
      np.array([p, 1 - p]), 0.0)


def named_bits_pmf(event, unused_sampling_ratio, discretization, discretize,
                   unused_krr_adversary, unused_relative_width):
  """The PLD route's PMF: the pair's two losses on the grid."""
  return (discretize(_named_bits_atoms(event), discretization),
          ('named bits pair',))


def named_bits_scales(event, unused_ratio, unused_krr_adversary,
                      unused_relative_width):
  """The PLD route's scales: the loss's spread (twice) and its reach."""
  spread = privacy_loss.loss_spread(_named_bits_atoms(event))
  return spread, event.local_epsilon, spread


@pytest.fixture(name='named_bits_registered')
def _named_bits_registered(monkeypatch):
  # 1. The spec: a round of its own (no hidden sample of it), eps0-DP,
  # never grouped (n does not matter), replace-one only (the default).
  monkeypatch.setitem(_event_specs._SPECS, NamedBitsEvent,
                      _event_specs.EventSpec(
                          _event_specs.Kind.OWN_PARTICIPATION,
                          local_guarantee=lambda event: (
                              event.local_epsilon, 0.0)))
  # 2. The RDP route's entry; 3. the PLD route's.
  monkeypatch.setitem(rdp_routes.ROUND_BOUNDS, NamedBitsEvent, named_bits_rdp)
  monkeypatch.setitem(pld_routes.ROUND_PMFS, NamedBitsEvent,
                      pld_routes.RoundPmf(named_bits_pmf, named_bits_scales))


def _exact_delta(local_epsilon: float, rounds: int, epsilon: float) -> float:
  """delta(epsilon) of `rounds` named-bits rounds: the loss is eps0 (2K -
  rounds), K ~ Bin(rounds, p) under P (summed here, independently of the
  package)."""
  p = _keep_probability(local_epsilon)
  return math.fsum(
      math.comb(rounds, k) * p**k * (1 - p)**(rounds - k)
      * max(0.0, -math.expm1(epsilon - local_epsilon * (2 * k - rounds)))
      for k in range(rounds + 1))


@pytest.mark.usefixtures('named_bits_registered')
def test_a_newcomer_answers_what_its_math_says_on_both_routes():
  event, rounds = NamedBitsEvent(num_users=1000, local_epsilon=0.5), 40
  pld = ShufflePldAccountant().compose(event, rounds)
  rdp = ShuffleRdpAccountant().compose(
      dp_event.ComposedDpEvent([event] * rounds))
  for epsilon in (1.0, 3.0, 6.0):
    exact = _exact_delta(0.5, rounds, epsilon)
    # The PLD route is the exact delta up to its grid's pessimism.
    assert exact <= pld.get_delta(epsilon) <= exact * (1 + 1e-6)
    assert exact <= rdp.get_delta(epsilon)
  # The RDP route composes the pair's divergence by addition.
  expected = named_bits_rdp(event, rdp.orders).rdp * rounds
  np.testing.assert_allclose(rdp.rdp, expected, rtol=1e-12)
  # Basic composition caps both at rounds x eps0 (the spec's guarantee).
  assert pld.get_epsilon(0.0) <= 20.0 * (1 + 1e-9)
  assert [c.event for c in pld.contributions] == [event]
  assert rdp.contributions[0].bound.winners[0] == 'named bits pair'
