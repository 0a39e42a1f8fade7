"""Saving and restoring accountants and events
(`shuffle_accountants.checkpoints`)."""

import copy
import fcntl
import json
import math
import os
import pathlib
import struct
import subprocess
import sys
import threading
import warnings

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import _checkpointable
from shuffle_accountants import checkpoints
from shuffle_accountants import events
from shuffle_accountants import load_accountant
from shuffle_accountants import randomizers
from shuffle_accountants import save_accountant
from shuffle_accountants.samplers import events as sampler_events

# Any float but NaN: infinities, -0.0 and subnormals must round-trip too
# (dp_accounting's events do not validate their fields).
ANY_FLOAT = st.floats(allow_nan=False)
EPSILON = st.floats(0.0, 700.0)
SMALL_INT = st.integers(-3, 10**12)
USERS = st.integers(1, 10**9)
POSITIVE = st.floats(1e-300, 1e300)
DOMAIN = st.integers(2, 64)
RATE = st.floats(1e-12, 1.0)


def _matrix(draw_rows):
  rows = [[float(v) for v in row] for row in draw_rows]
  return [[v / sum(row) for v in row] for row in rows]


FINITE_MATRIX = st.integers(2, 4).flatmap(lambda outputs: st.lists(
    st.lists(st.integers(1, 9), min_size=outputs, max_size=outputs),
    min_size=2, max_size=4)).map(_matrix)

RANDOMIZERS = {
    randomizers.KRandomizedResponse: st.builds(
        randomizers.KRandomizedResponse, DOMAIN, EPSILON),
    randomizers.SymmetricUnaryEncoding: st.builds(
        randomizers.SymmetricUnaryEncoding, DOMAIN, EPSILON),
    randomizers.OptimizedUnaryEncoding: st.builds(
        randomizers.OptimizedUnaryEncoding, DOMAIN, EPSILON),
    randomizers.UnaryEncoding: st.tuples(
        st.floats(0.01, 0.99), st.floats(0.01, 0.99)).filter(
            lambda rates: rates[0] > rates[1]).flatmap(
                lambda rates: st.builds(randomizers.UnaryEncoding, DOMAIN,
                                        *map(st.just, rates))),
    randomizers.OptimizedLocalHashing: st.builds(
        randomizers.OptimizedLocalHashing, DOMAIN, EPSILON,
        st.none() | DOMAIN),
    randomizers.BinaryLocalHashing: st.builds(
        randomizers.BinaryLocalHashing, DOMAIN, EPSILON),
    randomizers.HadamardResponse: st.builds(
        randomizers.HadamardResponse, DOMAIN, EPSILON),
    randomizers.SubsetSelection: DOMAIN.flatmap(lambda d: st.builds(
        randomizers.SubsetSelection, st.just(d), EPSILON,
        st.none() | st.integers(1, d - 1))),
    randomizers.FiniteRandomizer: st.builds(randomizers.FiniteRandomizer,
                                            FINITE_MATRIX),
    randomizers.BlanketTable: st.builds(randomizers.BlanketTable, ANY_FLOAT,
                                        ANY_FLOAT, ANY_FLOAT, ANY_FLOAT),
    randomizers.PairCells: st.builds(randomizers.PairCells, ANY_FLOAT,
                                     ANY_FLOAT, st.none() | ANY_FLOAT),
    randomizers.GaussianRandomizer: st.one_of(
        st.builds(randomizers.GaussianRandomizer, POSITIVE,
                  st.integers(1, 10**4)),
        st.builds(randomizers.GaussianRandomizer, POSITIVE,
                  randomized_rounding=st.just(True))),
    randomizers.LaplaceRandomizer: st.builds(
        randomizers.LaplaceRandomizer, st.floats(1e-3, 700.0),
        randomized_rounding=st.booleans()),
}
RANDOMIZER = st.one_of(*[RANDOMIZERS[cls] for cls in randomizers.CATALOGUE])
NUMERIC_RANDOMIZER = (RANDOMIZERS[randomizers.GaussianRandomizer]
                      | RANDOMIZERS[randomizers.LaplaceRandomizer])

SHUFFLE_EVENT = st.one_of(
    st.builds(events.ShuffleEvent, USERS, EPSILON,
              st.none() | st.integers(2, 1000), st.floats(0.0, 0.999)),
    st.builds(events.ShuffleEvent, USERS,
              randomizer=RANDOMIZER | NUMERIC_RANDOMIZER))
CHECKIN_EVENT = st.one_of(
    st.builds(events.CheckInEvent, USERS, RATE, EPSILON,
              num_categories=st.none() | st.integers(2, 1000)),
    st.builds(events.CheckInEvent, USERS, RATE, noise_multiplier=POSITIVE),
    st.builds(events.CheckInEvent, USERS, RATE, randomizer=RANDOMIZER))

LEAVES = {
    dp_event.DpEvent: st.builds(dp_event.DpEvent),
    dp_event.NoOpDpEvent: st.builds(dp_event.NoOpDpEvent),
    dp_event.NonPrivateDpEvent: st.builds(dp_event.NonPrivateDpEvent),
    dp_event.UnsupportedDpEvent: st.builds(dp_event.UnsupportedDpEvent),
    dp_event.GaussianDpEvent: st.builds(dp_event.GaussianDpEvent, ANY_FLOAT),
    dp_event.LaplaceDpEvent: st.builds(dp_event.LaplaceDpEvent, ANY_FLOAT),
    dp_event.DiscreteLaplaceDpEvent: st.builds(dp_event.DiscreteLaplaceDpEvent,
                                               ANY_FLOAT, SMALL_INT),
    dp_event.RandomizedResponseDpEvent: st.builds(
        dp_event.RandomizedResponseDpEvent, ANY_FLOAT, SMALL_INT),
    dp_event.ZCDpEvent: st.builds(dp_event.ZCDpEvent, ANY_FLOAT, ANY_FLOAT),
    dp_event.MixtureOfGaussiansDpEvent: st.builds(
        dp_event.MixtureOfGaussiansDpEvent, ANY_FLOAT,
        st.lists(ANY_FLOAT, max_size=3) | st.tuples(ANY_FLOAT, ANY_FLOAT),
        st.lists(ANY_FLOAT, max_size=3)),
    dp_event.SingleEpochTreeAggregationDpEvent: st.builds(
        dp_event.SingleEpochTreeAggregationDpEvent, ANY_FLOAT,
        SMALL_INT | st.lists(SMALL_INT, max_size=3)),
    dp_event.TruncatedSubsampledGaussianDpEvent: st.builds(
        dp_event.TruncatedSubsampledGaussianDpEvent, SMALL_INT, ANY_FLOAT,
        SMALL_INT, ANY_FLOAT),
    events.ShuffleEvent: SHUFFLE_EVENT,
    events.CheckInEvent: CHECKIN_EVENT,
    events.SubsampledShuffleGaussianEvent: USERS.flatmap(lambda n: st.builds(
        events.SubsampledShuffleGaussianEvent, st.just(n), st.integers(1, n),
        POSITIVE, st.none() | st.integers(1, 10**4))),
    events.DistributedCheckInEvent: USERS.flatmap(lambda n: st.builds(
        events.DistributedCheckInEvent, st.just(n), RATE, POSITIVE,
        st.sampled_from(events.PARTICIPATION_MODELS),
        st.none() | st.integers(1, n))),
    events.SkellamSecureSumEvent: st.builds(
        events.SkellamSecureSumEvent, st.integers(1, 10**6), POSITIVE,
        POSITIVE, POSITIVE),
    events.BinomialSecureSumEvent: st.builds(
        events.BinomialSecureSumEvent, st.integers(1, 10**6),
        st.integers(1, 100)),
    events.DiscreteGaussianSumEvent: st.builds(
        events.DiscreteGaussianSumEvent, st.floats(0.1, 1e5),
        st.integers(1, 100), st.integers(1, 10),
        st.sampled_from(events.AGGREGATOR_TRUST)),
    events.DiscreteLaplaceSumEvent: st.builds(
        events.DiscreteLaplaceSumEvent, st.floats(0.1, 1e4),
        st.integers(1, 100), st.integers(1, 10),
        st.sampled_from(events.AGGREGATOR_TRUST)),
    events.SumOfReportsEvent: st.builds(
        events.SumOfReportsEvent, USERS, st.one_of(*[
            RANDOMIZERS[cls] for cls in events.SUM_RANDOMIZERS])),
    sampler_events.ShuffledBatchesDpEvent: st.builds(
        sampler_events.ShuffledBatchesDpEvent, POSITIVE,
        st.integers(1, 10**6), st.integers(1, 10**4)),
}


def _nested(children):
  return {
      dp_event.SelfComposedDpEvent: st.builds(dp_event.SelfComposedDpEvent,
                                              children, SMALL_INT),
      dp_event.ComposedDpEvent: st.builds(dp_event.ComposedDpEvent,
                                          st.lists(children, max_size=3)),
      dp_event.PoissonSampledDpEvent: st.builds(dp_event.PoissonSampledDpEvent,
                                                ANY_FLOAT, children),
      dp_event.SampledWithReplacementDpEvent: st.builds(
          dp_event.SampledWithReplacementDpEvent, SMALL_INT, SMALL_INT,
          children),
      dp_event.SampledWithoutReplacementDpEvent: st.builds(
          dp_event.SampledWithoutReplacementDpEvent, SMALL_INT, SMALL_INT,
          children),
      dp_event.RepeatAndSelectDpEvent: st.builds(
          dp_event.RepeatAndSelectDpEvent, children, ANY_FLOAT, ANY_FLOAT),
      sampler_events.RandomAllocationDpEvent: st.integers(1, 50).flatmap(
          lambda steps: st.builds(sampler_events.RandomAllocationDpEvent,
                                  children, st.integers(1, steps),
                                  st.just(steps))),
  }


ANY_EVENT = st.recursive(
    st.one_of(*LEAVES.values()),
    lambda children: st.one_of(*_nested(children).values()), max_leaves=8)


def _bits(value):
  return struct.pack('>d', value) if isinstance(value, float) else value


def _bit_identical(a, b) -> bool:
  """Equal values with every float bit-identical (-0.0 is not 0.0)."""
  if type(a) is not type(b):
    return False
  if attr.has(type(a)):
    return all(_bit_identical(getattr(a, f.name), getattr(b, f.name))
               for f in attr.fields(type(a)))
  if isinstance(a, (list, tuple)):
    return len(a) == len(b) and all(map(_bit_identical, a, b))
  return _bits(a) == _bits(b)


def _through_json(state):
  return json.loads(json.dumps(state, allow_nan=False))


def test_every_known_class_has_a_strategy():
  # A new event class must be added to the round-trip tests below.
  known = set(_checkpointable._known_classes().values())
  covered = set(LEAVES) | set(_nested(st.nothing())) | set(RANDOMIZERS)
  assert known == covered


@settings(max_examples=300, deadline=None)
@given(ANY_EVENT)
def test_events_round_trip_bit_exact(event):
  state = _through_json(checkpoints.event_to_dict(event))
  restored = checkpoints.event_from_dict(state)
  assert restored == event
  assert _bit_identical(restored, event)
  # Every attrs field is written, whatever the class (no hand-kept list).
  assert set(state['event']['fields']) == {
      field.name for field in attr.fields(type(event))}


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(LEAVES, key=lambda cls: cls.__name__)).flatmap(
    lambda cls: LEAVES[cls]))
def test_a_field_added_later_round_trips_and_old_states_get_its_default(
    event):
  # A subclass with two more fields, made at run time from the attrs
  # fields: stands for fields a later version adds to an event.
  cls = type(event)
  extended = attr.make_class(
      f'Extended{cls.__name__}',
      {'added_ratio': attr.ib(default=1.0),
       'added_pair': attr.ib(default=(0, -0.0))},
      bases=(cls,), frozen=True, slots=True)
  checkpoints.register_event_class(extended)
  try:
    values = attr.asdict(event, recurse=False)
    new = extended(**values, added_ratio=0.25, added_pair=(3, math.inf))
    restored = checkpoints.event_from_dict(
        _through_json(checkpoints.event_to_dict(new)))
    assert _bit_identical(restored, new)
    old = checkpoints.event_to_dict(extended(**values))
    for name in ('added_ratio', 'added_pair'):
      del old['event']['fields'][name]
    # A field missing from a state of the current version was deleted.
    with pytest.raises(checkpoints.LedgerFileError,
                       match=r"lacks \['added_pair', 'added_ratio'\]"):
      checkpoints.event_from_dict(_through_json(old))
    # The version that adds the field bumps STATE_VERSION: older states
    # load with its default.
    old['version'] = 1
    assert _bit_identical(checkpoints.event_from_dict(_through_json(old)),
                          extended(**values))
  finally:
    del _checkpointable._registered[extended.__name__]


# Events the accountants compose within a second or so.
GAUSSIANS = st.one_of(
    st.builds(dp_event.GaussianDpEvent, st.floats(0.5, 20.0)),
    st.builds(dp_event.SelfComposedDpEvent,
              st.builds(dp_event.GaussianDpEvent, st.floats(0.5, 20.0)),
              st.integers(1, 5)))
ACCOUNTABLE = st.one_of(
    GAUSSIANS,
    st.builds(events.ShuffleEvent, st.integers(100, 10**4),
              st.floats(0.1, 2.0), st.none() | st.integers(2, 5)),
    st.builds(events.CheckInEvent, st.integers(20, 200),
              st.floats(0.2, 1.0), noise_multiplier=st.floats(1.0, 5.0)),
    st.builds(events.DistributedCheckInEvent, st.integers(20, 200),
              st.floats(0.2, 1.0), st.floats(0.3, 2.0)),
)


def _calls(event_strategy, max_count=1000):
  return st.lists(st.tuples(event_strategy, st.integers(1, max_count),
                            st.integers(1, 3)), min_size=1, max_size=3)


def _compose(accountant, calls):
  for event, count, repeat in calls:
    for _ in range(repeat):
      accountant.compose(event, count)
  return accountant


def _check_resumes_bit_for_bit(make, calls, more):
  original = _compose(make(), calls)
  state = _through_json(original.state_dict())
  restored = make()
  restored.load_state_dict(state)
  assert restored.ledger == original.ledger
  assert restored.state_dict() == original.state_dict()
  assert _bits(restored.get_epsilon(1e-6)) == _bits(original.get_epsilon(1e-6))
  # Training goes on: the resumed ledger stays the uninterrupted one.
  _compose(original, more)
  _compose(restored, more)
  assert _bits(restored.get_epsilon(1e-6)) == _bits(original.get_epsilon(1e-6))
  assert _bits(restored.get_delta(1.0)) == _bits(original.get_delta(1.0))


@pytest.mark.parametrize('make', [
    ShuffleRdpAccountant,
    lambda: ShuffleRdpAccountant(orders=[2.0, 8.5, 64.0],
                                 relative_grouping=0.0),
], ids=['default', 'orders'])
@settings(max_examples=10, deadline=None)
@given(calls=_calls(ACCOUNTABLE), more=_calls(ACCOUNTABLE))
def test_restored_rdp_accountant_answers_bit_for_bit(make, calls, more):
  _check_resumes_bit_for_bit(make, calls, more)


@pytest.mark.parametrize('make', [
    lambda: ShufflePldAccountant(relative_accuracy=0.05),
    lambda: ShufflePldAccountant(value_discretization_interval=0.02),
], ids=['automatic-grid', 'fixed-grid'])
@settings(max_examples=5, deadline=None)
@given(calls=_calls(ACCOUNTABLE, 50), more=_calls(GAUSSIANS, 50))
def test_restored_pld_accountant_answers_bit_for_bit(make, calls, more):
  _check_resumes_bit_for_bit(make, calls, more)


def test_save_and_load_accountant_keep_the_configuration(tmp_path):
  original = ShufflePldAccountant(
      privacy_accountant.NeighboringRelation.REPLACE_ONE, None, 0.01,
      'weak', 0.02, 0.05)
  original.compose(events.ShuffleEvent(1000, 1.0, num_categories=3), 10)
  original.compose(dp_event.GaussianDpEvent(3.0), 5)
  path = tmp_path / 'ledger.json'
  save_accountant(original, path)
  restored = load_accountant(path)
  assert type(restored) is ShufflePldAccountant
  assert restored.configuration() == original.configuration()
  assert restored.krr_adversary == 'weak'
  assert restored.get_epsilon(1e-6) == original.get_epsilon(1e-6)
  rdp = ShuffleRdpAccountant(orders=[2, 4.5],
                             neighboring_relation=privacy_accountant.
                             NeighboringRelation.ADD_OR_REMOVE_ONE)
  rdp.compose(dp_event.GaussianDpEvent(2.0), 3)
  save_accountant(rdp, path, overwrite=True)  # another run's: on purpose
  restored = load_accountant(path)
  assert restored.configuration() == rdp.configuration()
  assert restored.get_epsilon(1e-6) == rdp.get_epsilon(1e-6)


def test_loading_replaces_what_the_accountant_held():
  saved = ShuffleRdpAccountant().compose(dp_event.GaussianDpEvent(2.0), 3)
  target = ShuffleRdpAccountant().compose(events.ShuffleEvent(100, 2.0), 7)
  target.get_epsilon(1e-6)  # fills its caches
  target.load_state_dict(saved.state_dict())
  assert target.ledger == saved.ledger and target.contributions == ()
  assert target.get_epsilon(1e-6) == saved.get_epsilon(1e-6)
  empty = ShuffleRdpAccountant()
  target.load_state_dict(empty.state_dict())
  assert target.get_epsilon(1e-6) == 0.0
  assert target.state_dict() == empty.state_dict()


def test_loading_rebuilds_the_accountant_in_place():
  # It took over a fresh accountant's instance dictionary instead
  # (`vars(self).update(vars(fresh))`), dropping what else this one held.
  saved = ShufflePldAccountant().compose(events.ShuffleEvent(1000, 1.0), 3)
  target = ShufflePldAccountant(progress=True).compose(
      dp_event.GaussianDpEvent(2.0))
  target.run_name = 'resumed'
  calls = target._compose_calls()
  target.load_state_dict(saved.state_dict())
  assert target.run_name == 'resumed'
  assert target._compose_calls() is calls
  assert target._progress_option is True  # not configuration: kept
  assert target.state_dict() == saved.state_dict()
  assert _bits(target.get_epsilon(1e-6)) == _bits(saved.get_epsilon(1e-6))


def test_a_load_that_fails_leaves_the_accountant_as_it_was(tmp_path):
  accountant = ShuffleRdpAccountant().compose(events.ShuffleEvent(1000, 1.0),
                                              5)
  path = tmp_path / 'ledger.json'
  save_accountant(accountant, path)
  before, epsilon = accountant.state_dict(), accountant.get_epsilon(1e-6)
  state = ShuffleRdpAccountant().compose(dp_event.GaussianDpEvent(2.0),
                                         3).state_dict()
  approximate = events.ShuffleEvent(1000, 1.0, local_delta=0.1)
  state['compositions'].append({
      'event': checkpoints.event_to_dict(approximate)['event'],
      'count': 1, 'repeat': 1})
  with pytest.raises(ValueError, match=r'compositions\[1\] cannot be '
                     'composed by a ShuffleRdpAccountant'):
    accountant.load_state_dict(checkpoints.seal_state(state))
  # Not the first call of the other ledger: a lower epsilon.
  assert accountant.state_dict() == before
  assert _bits(accountant.get_epsilon(1e-6)) == _bits(epsilon)
  save_accountant(accountant, path)  # it still knows the file it saved
  accountant.load_state_dict(ShuffleRdpAccountant().state_dict())
  with pytest.raises(checkpoints.LedgerConflictError):
    save_accountant(accountant, path)  # another ledger than the file's


def test_a_process_importing_only_checkpoints_loads_both_accountants(
    tmp_path):
  ledgers = [ShufflePldAccountant().compose(events.ShuffleEvent(1000, 1.0)),
             ShuffleRdpAccountant().compose(dp_event.GaussianDpEvent(2.0))]
  for index, accountant in enumerate(ledgers):
    save_accountant(accountant, tmp_path / f'{index}.json')
  code = ('import sys\n'
          'from shuffle_accountants.checkpoints import load_accountant\n'
          'for path in sys.argv[1:]:\n'
          '  accountant = load_accountant(path)\n'
          '  print(type(accountant).__name__, '
          'accountant.get_epsilon(1e-6).hex())\n')
  output = subprocess.run(
      [sys.executable, '-c', code] + [str(tmp_path / f'{index}.json')
                                      for index in range(len(ledgers))],
      capture_output=True, text=True, check=True, cwd='/').stdout
  assert output.split('\n')[:-1] == [
      f'{type(a).__name__} {a.get_epsilon(1e-6).hex()}' for a in ledgers]


def test_equal_events_of_other_bits_are_replayed_as_composed():
  accountant = ShuffleRdpAccountant()
  for sigma in (2, 2.0, 2.0, -0.0, 0.0):
    accountant.compose(dp_event.GaussianDpEvent(sigma), 3)
  compositions = accountant.state_dict()['compositions']
  assert [(c['event']['fields']['noise_multiplier'], c['repeat'])
          for c in compositions] == [(2, 1), (2.0, 2), (-0.0, 1), (0.0, 1)]
  assert _bit_identical(
      [call[0] for call in accountant._compose_calls()],
      [call[0] for call in ShuffleRdpAccountant.from_state_dict(
          _through_json(accountant.state_dict()))._compose_calls()])


def test_an_unknown_event_class_composes_but_cannot_be_saved():
  @attr.s(frozen=True, slots=True)
  class MyGaussian(dp_event.GaussianDpEvent):
    pass

  accountant = ShuffleRdpAccountant()
  accountant.compose(MyGaussian(3.0), 2)
  accountant.compose(MyGaussian(3.0), 2)
  assert accountant.get_epsilon(1e-6) == ShuffleRdpAccountant().compose(
      dp_event.GaussianDpEvent(3.0), 4).get_epsilon(1e-6)
  with pytest.raises(TypeError, match=r'compositions\[0\]\.event is a .*'
                     'MyGaussian.*register_event_class'):
    accountant.state_dict()


def test_a_different_configuration_is_refused_naming_the_difference():
  state = ShufflePldAccountant(relative_accuracy=0.01).state_dict()
  with pytest.raises(ValueError, match=r'relative_accuracy: saved 0\.01, this '
                     r'accountant 0\.001'):
    ShufflePldAccountant().load_state_dict(state)
  with pytest.raises(ValueError, match='neighboring_relation'):
    ShuffleRdpAccountant(neighboring_relation=privacy_accountant.
                         NeighboringRelation.ADD_OR_REMOVE_ONE
                         ).load_state_dict(ShuffleRdpAccountant().state_dict())
  with pytest.raises(ValueError, match='orders: saved None'):
    ShuffleRdpAccountant(orders=[2, 3]).load_state_dict(
        ShuffleRdpAccountant().state_dict())
  with pytest.raises(ValueError, match='cannot be loaded into a '
                     'ShuffleRdpAccountant'):
    ShuffleRdpAccountant().load_state_dict(state)


def _state():
  accountant = ShuffleRdpAccountant()
  accountant.compose(events.ShuffleEvent(1000, 1.0), 2)
  return _through_json(accountant.state_dict())


@pytest.mark.parametrize('change, message', [
    (lambda s: s.update(version=4), r"state\['version'\] = 4 is not "
     'supported.*upgrade'),
    (lambda s: s.update(format='x'), r"state\['format'\]"),
    (lambda s: s['compositions'][0]['event'].update(type='FutureEvent'),
     r"compositions\[0\]\.event\.type = 'FutureEvent' is not a known event "
     'type.*upgrade'),
    (lambda s: s['compositions'][0]['event']['fields'].update(cohort=3),
     r"compositions\[0\]\.event\.fields has \['cohort'\].*upgrade"),
    (lambda s: s['compositions'][0]['event']['fields'].update(num_users=0),
     r'compositions\[0\]\.event: cannot rebuild ShuffleEvent: num_users'),
    (lambda s: s['compositions'][0]['event']['fields'].update(
        local_epsilon=math.nan), r'local_epsilon = nan'),
    (lambda s: s['compositions'][0]['event']['fields'].update(
        local_epsilon={'float': 'nan'}), r'local_epsilon = .*not a saved'),
    (lambda s: s['compositions'][0].update(count=-1),
     r'compositions\[0\]\.count = -1'),
    (lambda s: s['compositions'][0].update(repeat=0),
     r'compositions\[0\]\.repeat = 0'),
    (lambda s: s['configuration'].update(neighboring_relation='ANY'),
     'neighboring_relation'),
    (lambda s: s['compositions'][0]['event']['fields'].update(local_delta=0.1),
     r'compositions\[0\] cannot be composed by a ShuffleRdpAccountant.*'
     'local_delta'),
])
def test_bad_states_name_the_field_and_the_fix(change, message):
  state = _state()
  change(state)
  # The digest refuses every edit first ...
  with pytest.raises(ValueError):
    ShuffleRdpAccountant.from_state_dict(state)
  # ... and the fields are checked even in a state without one.
  del state['integrity']
  with pytest.raises(ValueError, match=message), warnings.catch_warnings():
    warnings.simplefilter('ignore', checkpoints.UnverifiedLedgerWarning)
    ShuffleRdpAccountant.from_state_dict(state, allow_unverified=True)


def test_nan_is_refused_and_infinities_are_tagged():
  with pytest.raises(ValueError, match=r'event\.noise_multiplier is NaN'):
    checkpoints.event_to_dict(dp_event.GaussianDpEvent(math.nan))
  state = checkpoints.event_to_dict(dp_event.GaussianDpEvent(-math.inf))
  assert state['event']['fields'] == {'noise_multiplier': {'float': '-inf'}}
  json.dumps(state, allow_nan=False)  # standard JSON
  with pytest.raises(TypeError, match='cannot be saved'):
    checkpoints.event_to_dict(dp_event.ComposedDpEvent({'a': 1}))


def test_load_accountant_refuses_json_nan(tmp_path):
  path = tmp_path / 'state.json'
  text = json.dumps(_state()).replace('"local_epsilon": 1.0',
                                      '"local_epsilon": NaN')
  path.write_text(text)
  with pytest.raises(ValueError, match='NaN is not valid'):
    load_accountant(path)


@pytest.mark.parametrize('failing', ['replace', 'fsync'])
def test_a_crash_while_saving_leaves_the_old_file_intact(
    tmp_path, monkeypatch, failing):
  path = tmp_path / 'ledger.json'
  old = ShuffleRdpAccountant().compose(dp_event.GaussianDpEvent(2.0))
  save_accountant(old, path)
  before = path.read_bytes()
  new = ShuffleRdpAccountant().compose(dp_event.GaussianDpEvent(1.0), 10)

  def crash(*args, **kwargs):
    raise OSError('power cut')

  monkeypatch.setattr(os, failing, crash)
  with pytest.raises(OSError, match='power cut'):
    save_accountant(new, path, overwrite=True)
  monkeypatch.undo()
  assert path.read_bytes() == before
  # No temporary file left (the writers' lock file stays).
  assert sorted(os.listdir(tmp_path)) == ['ledger.json', 'ledger.json.lock']
  assert load_accountant(path).get_epsilon(1e-6) == old.get_epsilon(1e-6)
  save_accountant(new, path, overwrite=True)
  assert load_accountant(path).get_epsilon(1e-6) == new.get_epsilon(1e-6)


def test_the_file_is_written_whole_before_it_replaces_the_old_one(
    tmp_path, monkeypatch):
  path = tmp_path / 'ledger.json'
  accountant = ShuffleRdpAccountant().compose(dp_event.GaussianDpEvent(2.0))
  seen = []
  replace = os.replace

  def check_then_replace(source, target):
    with open(source, encoding='utf-8') as file:  # complete and valid JSON
      seen.append(json.load(file))
    assert os.path.dirname(source) == os.path.dirname(os.fspath(target))
    replace(source, target)

  monkeypatch.setattr(os, 'replace', check_then_replace)
  save_accountant(accountant, path)
  assert seen == [_through_json(accountant.state_dict())]


def test_public_names():
  import shuffle_accountants
  for name in ('save_accountant', 'load_accountant', 'event_to_dict',
               'event_from_dict'):
    assert getattr(shuffle_accountants, name) is getattr(checkpoints, name)
  with pytest.raises(TypeError, match='accountant must be'):
    save_accountant(object(), 'unused.json')
  with pytest.raises(ValueError, match='already known'):
    checkpoints.register_event_class(attr.make_class('ShuffleEvent', ['x']))


# Ledger files you can trust (issue 39, row 8).


def _flower_like_ledger(tmp_path, **save_options):
  """The ledger a DistributedNoiseFixedClipping strategy keeps, one compose
  call a round: 100 rounds with dropouts (min_reporting), saved."""
  accountant = ShufflePldAccountant()
  event = events.DistributedCheckInEvent(1000, 0.1, 0.5, min_reporting=50)
  for _ in range(100):
    accountant.compose(event)
  path = tmp_path / 'ledger.json'
  save_accountant(accountant, path, **save_options)
  return accountant, path


def _edit(path, change, rehash=False):
  state = json.loads(path.read_text())
  change(state)
  if rehash:  # an editor who recomputes the plain digest
    state['integrity'] = _checkpointable._integrity(state, None)
  path.write_text(json.dumps(state))


def _delete_20_rounds(state):
  state['compositions'][0]['repeat'] -= 20


def _delete_min_reporting(state):
  del state['compositions'][0]['event']['fields']['min_reporting']


def test_deleted_rounds_or_fields_are_refused_not_loaded_lower(tmp_path):
  # On ab63fb2 both edits loaded silently: 10.58 -> 9.47 and -> 6.84.
  accountant, path = _flower_like_ledger(tmp_path)
  epsilon = accountant.get_epsilon(1e-5)
  # Formatting is not content: the digest is over canonical JSON.
  path.write_text(json.dumps(json.loads(path.read_text()), indent=4))
  assert load_accountant(path).get_epsilon(1e-5) == epsilon
  original = path.read_text()
  for change in (_delete_20_rounds, _delete_min_reporting):
    path.write_text(original)
    _edit(path, change)
    with pytest.raises(checkpoints.LedgerFileError,
                       match='damaged or edited.*SHA-256.*backup'):
      load_accountant(path)
  # The digest alone is not tamper-proof, but a version-2 file missing a
  # field is refused even with a recomputed digest.
  path.write_text(original)
  _edit(path, _delete_min_reporting, rehash=True)
  with pytest.raises(checkpoints.LedgerFileError,
                     match=r"compositions\[0\]\.event\.fields lacks "
                     r"\['min_reporting'\]"):
    load_accountant(path)
  for change in (lambda s: s.pop('integrity'),
                 lambda s: s['integrity'].update(digest='0' * 64)):
    path.write_text(original)
    _edit(path, change)
    with pytest.raises(checkpoints.LedgerFileError, match='integrity'):
      load_accountant(path)


def test_a_file_without_a_digest_loads_only_when_allowed(tmp_path):
  accountant = ShuffleRdpAccountant().compose(
      events.DistributedCheckInEvent(100, 0.5, 1.0, min_reporting=20), 3)
  state = _through_json(accountant.state_dict())
  state['version'] = 1  # as ab63fb2 wrote it: no digest
  del state['integrity']
  path = tmp_path / 'old.json'
  path.write_text(json.dumps(state, indent=1))
  # On 88ed8df it loaded with a warning only, so an edited count loaded
  # lower (11.47 -> 2.99 in issue 49).
  with pytest.raises(checkpoints.LedgerFileError,
                     match='no .integrity. digest.*allow_unverified=True'):
    load_accountant(path)
  with pytest.warns(checkpoints.UnverifiedLedgerWarning, match='unverified'):
    restored = load_accountant(path, allow_unverified=True)
  assert restored.get_epsilon(1e-6) == accountant.get_epsilon(1e-6)
  # Version 1 gave missing fields their defaults; it still does.
  del state['compositions'][0]['event']['fields']['min_reporting']
  path.write_text(json.dumps(state))
  with pytest.warns(checkpoints.UnverifiedLedgerWarning):
    assert load_accountant(
        path, allow_unverified=True).ledger.event.min_reporting is None
  with pytest.raises(checkpoints.LedgerKeyError, match='version-1'):
    load_accountant(path, key=b'secret', allow_unverified=True)


def test_a_state_dict_carries_the_file_digest_and_refuses_edits():
  """Issue 49: every edit of a state_dict is refused, or loads only with
  the opt-out; none loads below the true epsilon unasked."""
  accountant = ShuffleRdpAccountant().compose(dp_event.GaussianDpEvent(4.0),
                                              100)
  epsilon = accountant.get_epsilon(1e-5)
  state = _through_json(accountant.state_dict())
  assert state['integrity'] == _checkpointable._integrity(state, None)
  key = b'k' * 32
  keyed = accountant.state_dict(key=key)
  assert ShuffleRdpAccountant.from_state_dict(
      keyed, key=key).get_epsilon(1e-5) == epsilon
  with pytest.raises(checkpoints.LedgerKeyError, match='saved with a key'):
    ShuffleRdpAccountant().load_state_dict(keyed)
  edits = [lambda s: s['compositions'][0].update(count=1),
           lambda s: s['compositions'][0]['event']['fields'].update(
               noise_multiplier=40.0),
           lambda s: s.update(version=1),
           lambda s: s['integrity'].update(digest='0' * 64),
           lambda s: s.pop('integrity')]
  for edit in edits:
    for sealed, options in ((state, {}), (keyed, {'key': key})):
      edited = copy.deepcopy(sealed)
      edit(edited)
      with pytest.raises(checkpoints.LedgerFileError):
        ShuffleRdpAccountant().load_state_dict(edited, **options)
  # A rehashed edit passes the plain digest (docs/checkpoints.md), not the key.
  edited = copy.deepcopy(keyed)
  edited['compositions'][0]['count'] = 1
  with pytest.raises(checkpoints.LedgerKeyError):
    ShuffleRdpAccountant().load_state_dict(checkpoints.seal_state(edited),
                                           key=key)


def _hostile(tmp_path, change):
  """A file with a valid digest that asks `change` of the loader."""
  state = _through_json(ShuffleRdpAccountant().compose(
      dp_event.GaussianDpEvent(1.0)).state_dict())
  change(state)
  state['integrity'] = _checkpointable._integrity(state, None)
  path = tmp_path / 'hostile.json'
  path.write_text(json.dumps(state))
  return path


def _nested_list(depth):
  value = []
  for _ in range(depth):
    value = [value]
  return value


def _nested_selfcomposed(depth):
  event = {'type': 'GaussianDpEvent', 'fields': {'noise_multiplier': 1.0}}
  for _ in range(depth):
    event = {'type': 'SelfComposedDpEvent',
             'fields': {'event': event, 'count': 1}}
  return event


@pytest.mark.parametrize('change, limit', [
    # ab63fb2 replayed 10**9 compose calls (hours, then out of memory).
    (lambda s: s['compositions'][0].update(repeat=10**9),
     'MAX_COMPOSE_CALLS = 1000000'),
    (lambda s: s['compositions'].extend(
        [dict(s['compositions'][0], repeat=600_000)] * 2),
     'replays 1200001 compose calls'),
    (lambda s: s['compositions'][0].update(event=_nested_selfcomposed(100)),
     'MAX_NESTING = 64'),
    (lambda s: s['compositions'][0]['event']['fields'].update(
        noise_multiplier=_nested_list(70)), 'MAX_NESTING'),
    (lambda s: s['compositions'][0].update(event={
        'type': 'ShuffleEvent', 'fields': {
            'num_users': 10**20, 'local_epsilon': 1.0, 'local_delta': 0.0,
            'num_categories': None, 'randomizer': None}}),
     'MAX_INTEGER'),
])
def test_hostile_files_are_refused_naming_the_limit(tmp_path, change, limit):
  path = _hostile(tmp_path, change)
  with pytest.raises(checkpoints.LedgerLimitError, match=limit):
    load_accountant(path)


def test_json_nested_past_the_parser_and_huge_files_are_refused(
    tmp_path, monkeypatch):
  path = tmp_path / 'deep.json'
  path.write_text('[' * 10**5 + ']' * 10**5)
  with pytest.raises(checkpoints.LedgerLimitError, match='MAX_NESTING'):
    load_accountant(path)
  _, path = _flower_like_ledger(tmp_path)
  size = path.stat().st_size
  monkeypatch.setattr(checkpoints, 'MAX_FILE_BYTES', size - 1)
  with pytest.raises(checkpoints.LedgerLimitError,
                     match=f'holds {size} bytes.*MAX_FILE_BYTES'):
    load_accountant(path)


def test_what_would_not_load_is_not_saved(tmp_path, monkeypatch):
  monkeypatch.setattr(_checkpointable, 'MAX_COMPOSE_CALLS', 3)
  accountant = ShuffleRdpAccountant()
  for sigma in (1.0, 2.0, 1.0, 2.0):
    accountant.compose(dp_event.GaussianDpEvent(sigma))
  with pytest.raises(checkpoints.LedgerLimitError, match='replays 4 compose '
                     'calls.*MAX_COMPOSE_CALLS = 3.*count=k'):
    save_accountant(accountant, tmp_path / 'ledger.json')
  assert not (tmp_path / 'ledger.json').exists()


def _append_rounds(path, rounds, conflicts):
  for _ in range(rounds):
    while True:
      accountant = load_accountant(path)
      accountant.compose(dp_event.GaussianDpEvent(4.0))
      try:
        save_accountant(accountant, path)
        break
      except checkpoints.LedgerConflictError:
        conflicts.append(1)


def test_concurrent_writers_lose_no_rounds(tmp_path):
  # ab63fb2: the last writer won and the other's rounds were lost.
  path = tmp_path / 'ledger.json'
  save_accountant(ShuffleRdpAccountant(), path)
  first, second = load_accountant(path), load_accountant(path)
  first.compose(dp_event.GaussianDpEvent(4.0))
  second.compose(dp_event.GaussianDpEvent(4.0))
  save_accountant(first, path)
  with pytest.raises(checkpoints.LedgerConflictError,
                     match='did not load or save.*drop its rounds'):
    save_accountant(second, path)
  conflicts = []
  writers = [threading.Thread(target=_append_rounds,
                              args=(path, 15, conflicts)) for _ in range(2)]
  for writer in writers:
    writer.start()
  for writer in writers:
    writer.join()
  assert load_accountant(path).ledger == ShuffleRdpAccountant().compose(
      dp_event.GaussianDpEvent(4.0), 31).ledger
  # A writer that saved keeps saving its own file without reloading it.
  first = load_accountant(path)
  for _ in range(2):
    first.compose(dp_event.GaussianDpEvent(4.0))
    save_accountant(first, path)
  assert load_accountant(path).ledger == first.ledger


def test_a_writer_waits_for_the_lock_then_gives_up_naming_it(
    tmp_path, monkeypatch):
  path = tmp_path / 'ledger.json'
  monkeypatch.setattr(checkpoints, 'LOCK_TIMEOUT_SECONDS', 0.05)
  with open(f'{path}.lock', 'w') as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    with pytest.raises(checkpoints.LedgerConflictError,
                       match=r'ledger\.json\.lock is held by another writer'):
      save_accountant(ShuffleRdpAccountant(), path)
  assert not path.exists()
  save_accountant(ShuffleRdpAccountant(), path)  # released
  assert load_accountant(path).ledger == dp_event.NoOpDpEvent()


def test_saving_through_a_symlink_updates_its_target(tmp_path):
  # ab63fb2 replaced the link by a file and left the target stale.
  target = tmp_path / 'store' / 'ledger.json'
  target.parent.mkdir()
  link = tmp_path / 'ledger.json'
  link.symlink_to(target)  # dangling until the first save
  accountant = ShuffleRdpAccountant().compose(dp_event.GaussianDpEvent(2.0))
  save_accountant(accountant, link)
  accountant.compose(dp_event.GaussianDpEvent(3.0))
  save_accountant(accountant, link)
  assert link.is_symlink() and os.readlink(link) == str(target)
  assert load_accountant(target).ledger == accountant.ledger
  assert sorted(os.listdir(tmp_path)) == ['ledger.json', 'store']
  assert sorted(os.listdir(target.parent)) == ['ledger.json',
                                               'ledger.json.lock']


def test_a_keyed_file_needs_its_key(tmp_path):
  key = b'0123456789abcdef0123456789abcdef'
  accountant, path = _flower_like_ledger(tmp_path, key=key)
  assert json.loads(path.read_text())['integrity']['algorithm'] == (
      'hmac-sha256')
  assert load_accountant(path, key=key).ledger == accountant.ledger
  with pytest.raises(checkpoints.LedgerKeyError, match='saved with a key'):
    load_accountant(path)
  with pytest.raises(checkpoints.LedgerKeyError, match='key is wrong'):
    load_accountant(path, key=b'another key')
  original = path.read_text()
  # An editor without the key cannot make an edit pass.
  for rehash in (False, True):
    path.write_text(original)
    _edit(path, _delete_20_rounds, rehash=rehash)
    with pytest.raises(checkpoints.LedgerKeyError):
      load_accountant(path, key=key)
  path.write_text(original)
  save_accountant(load_accountant(path, key=key), path)  # now unkeyed
  with pytest.raises(checkpoints.LedgerKeyError, match='without a key'):
    load_accountant(path, key=key)
  with pytest.raises(TypeError, match='key must be bytes'):
    save_accountant(accountant, path, key='secret')
  with pytest.raises(ValueError, match='key must not be empty'):
    load_accountant(path, key=b'')


def test_the_documented_limits_are_the_code_s():
  page = (pathlib.Path(__file__).parents[1] / 'docs' /
          'checkpoints.md').read_text(encoding='utf-8')
  for name in ('MAX_FILE_BYTES', 'MAX_NESTING', 'MAX_COMPOSE_CALLS',
               'MAX_INTEGER'):
    assert f'| `{name}` | {getattr(checkpoints, name)} ' in page, name


@pytest.mark.parametrize('make', [ShuffleRdpAccountant, ShufflePldAccountant])
def test_a_large_count_is_one_call_and_loads_at_once(tmp_path, make):
  # A count is composed by count, never replayed one round at a time.
  accountant = make().compose(
      dp_event.PoissonSampledDpEvent(1e-3, dp_event.GaussianDpEvent(1.0))
      if make is ShufflePldAccountant else dp_event.GaussianDpEvent(1.0),
      10**9)
  save_accountant(accountant, tmp_path / 'ledger.json')
  restored = load_accountant(tmp_path / 'ledger.json')
  assert restored.ledger == accountant.ledger
  assert restored.state_dict() == accountant.state_dict()


def test_a_version_2_state_may_lack_only_the_fields_version_3_added():
  """SumOfReportsEvent gained `reference_input` and `aggregator_noise`
  after version 2: a state saved then (without them) loads with their
  defaults, and any other missing field is still refused."""
  event = events.SumOfReportsEvent(
      1000, randomizers.OptimizedUnaryEncoding(8, 1.0))
  saved = checkpoints.event_to_dict(event)
  assert saved['version'] == checkpoints.STATE_VERSION == 3
  saved['version'] = 2
  for added in ('reference_input', 'aggregator_noise'):
    del saved['event']['fields'][added]
  assert checkpoints.event_from_dict(_through_json(saved)) == event
  del saved['event']['fields']['num_users']
  with pytest.raises(checkpoints.LedgerFileError,
                     match=r"lacks \['num_users'\], which a state of "
                     'version 2 always holds'):
    checkpoints.event_from_dict(_through_json(saved))
  current = checkpoints.event_to_dict(event)
  del current['event']['fields']['reference_input']
  with pytest.raises(checkpoints.LedgerFileError,
                     match=r"lacks \['reference_input'\]"):
    checkpoints.event_from_dict(_through_json(current))
