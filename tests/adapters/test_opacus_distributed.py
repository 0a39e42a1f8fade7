"""Opacus adapter: distributed check-in trains and accounts per-participant
noise summed by secure aggregation; local noise says what it trains."""

import math
import os
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip('torch')
pytest.importorskip('opacus')

# ruff: noqa: E402
from opacus import PrivacyEngine
from opacus.accountants import create_accountant
from opacus.accountants.utils import get_noise_multiplier

from opacus_training import NOISE_MULTIPLIER
from opacus_training import make_data_loader
from opacus_training import make_private
from opacus_training import released_noise
from opacus_training import train
from shuffle_accountants import DistributedCheckInEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.adapters import opacus as adapter

DISTRIBUTED = adapter.DISTRIBUTED_MECHANISM
# make_data_loader(): 640 examples in batches of 64, so q = 0.1, q·n = 64.
NUM_USERS, SAMPLE_RATE, COHORT = 640, 0.1, 64

# The stock PrivacyEngine checks the data loader only after this call.
adapter.install_data_loader_check()

pytestmark = pytest.mark.filterwarnings(
    'ignore:Secure RNG turned off', 'ignore:Full backward hook',
    'ignore:Optimal order is the')


def _engine(index, mechanism=DISTRIBUTED):
  return (PrivacyEngine(accountant=mechanism) if index == 0 else
          adapter.ShufflePrivacyEngine(accountant=mechanism))


def _reference_epsilon(library, history, num_users=NUM_USERS):
  """The library's ε for one DistributedCheckInEvent per step, σ/√(q·n) each."""
  accountant = library()
  for sigma, rate, steps in history:
    accountant.compose(
        DistributedCheckInEvent(num_users=num_users, checkin_rate=rate,
                                noise_multiplier=sigma / math.sqrt(
                                    rate * num_users)), steps)
  return accountant.get_epsilon(1e-5)


@pytest.mark.parametrize('accountant_class, library', [
    (adapter.DistributedCheckinAccountant, ShufflePldAccountant),
    (adapter.DistributedCheckinRdpAccountant, ShuffleRdpAccountant),
])
def test_each_step_is_one_event_at_the_per_participant_multiplier(
    accountant_class, library):
  accountant = accountant_class(num_users=NUM_USERS)
  for sigma, steps in ((0.7, 20), (1.4, 3)):
    for _ in range(steps):
      accountant.step(noise_multiplier=sigma, sample_rate=SAMPLE_RATE)
  assert accountant.history == [(0.7, 0.1, 20), (1.4, 0.1, 3)]
  # Aggregate σ = 0.7 at the expected cohort 64: each participant adds 0.7/8.
  event = accountant._event(NUM_USERS, SAMPLE_RATE, 0.7)
  assert (event.num_users, event.checkin_rate) == (NUM_USERS, SAMPLE_RATE)
  assert event.noise_multiplier == pytest.approx(0.0875, rel=1e-15)
  assert accountant.get_epsilon(1e-5) == pytest.approx(
      _reference_epsilon(library, accountant.history), rel=1e-12)
  assert accountant.participant_noise_scale(SAMPLE_RATE) == pytest.approx(
      1 / 8, rel=1e-15)


@pytest.mark.parametrize('engine_index', [0, 1])
def test_training_accounts_the_events_it_trains(engine_index):
  engine = _engine(engine_index)
  model, optimizer, data_loader = make_private(engine)
  train(model, optimizer, data_loader, epochs=2)
  assert engine.accountant.history == [(NOISE_MULTIPLIER, SAMPLE_RATE, 20)]
  assert engine.accountant.num_users == NUM_USERS
  assert optimizer.participant_noise_scale == pytest.approx(1 / 8)
  assert engine.get_epsilon(1e-5) == pytest.approx(
      _reference_epsilon(ShufflePldAccountant, engine.accountant.history),
      rel=1e-12)


@pytest.mark.parametrize('engine_index', [0, 1])
def test_released_noise_is_the_sum_of_per_participant_noises(engine_index):
  engine = _engine(engine_index)
  model, optimizer, _ = make_private(engine, loss_reduction='sum')
  # The stock engine's first step redraws Opacus' central noise.
  for participants in (64, 9, 1, 150, 0):
    noise = released_noise(model, optimizer, participants)
    assert optimizer.last_participants == participants
    # k participants each add N(0, (σC)²/(q·n)); C = 1.
    expected = NOISE_MULTIPLIER * math.sqrt(participants / COHORT)
    # 10^4 independent entries: the sample std is within 3 % of the truth.
    assert float(noise.std()) == pytest.approx(expected, rel=0.03)
  assert isinstance(optimizer, adapter.LocalNoiseDPOptimizer)


def test_mean_reduction_divides_the_summed_noise_like_opacus():
  model, optimizer, _ = make_private(PrivacyEngine(accountant=DISTRIBUTED))
  optimizer.zero_grad()
  inputs = torch.zeros(16, 500)
  labels = torch.zeros(16, dtype=torch.long)
  torch.nn.functional.cross_entropy(model(inputs), labels).backward()
  optimizer.step()
  noise = model._module.weight.grad
  expected = NOISE_MULTIPLIER * math.sqrt(16 / COHORT) / 64
  assert float(noise.std()) == pytest.approx(expected, rel=0.03)


def _our_warnings(engine, epochs=2):
  model, optimizer, data_loader = make_private(engine)
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    train(model, optimizer, data_loader, epochs=epochs)
  return [w for w in caught if str(w.message).startswith('accountant=')]


@pytest.mark.parametrize('engine_index', [0, 1])
def test_local_noise_warns_once_with_its_factor(engine_index):
  caught = _our_warnings(_engine(engine_index, adapter.MECHANISM))
  assert len(caught) == 1
  assert caught[0].category is UserWarning
  message = str(caught[0].message)
  assert 'q·n = 64 that is √(q·n) = 8 times more noise' in message
  assert "'distributed_checkin'" in message and "accountant='prv'" in message


@pytest.mark.parametrize('engine_index', [0, 1])
def test_local_noise_warning_points_at_the_users_step(engine_index):
  # stacklevel=2 named a line inside Opacus' optimizer.step().
  model, optimizer, data_loader = make_private(
      _engine(engine_index, adapter.MECHANISM))
  inputs, labels = next(iter(data_loader))
  optimizer.zero_grad()
  torch.nn.functional.cross_entropy(model(inputs), labels).backward()
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    optimizer.step()  # the user's line
  ours = [w for w in caught if str(w.message).startswith('accountant=')]
  assert len(ours) == 1
  assert ours[0].filename == __file__


@pytest.mark.parametrize('engine_index', [0, 1])
def test_distributed_checkin_does_not_warn(engine_index):
  assert not _our_warnings(_engine(engine_index))


@pytest.mark.parametrize('engine_index', [0, 1])
@pytest.mark.parametrize('num_examples, batch_size', [(640, 64), (1000, 143)])
def test_make_private_with_epsilon_meets_the_target(engine_index, num_examples,
                                                    batch_size):
  engine = _engine(engine_index)
  extra = {'num_users': num_examples} if engine_index == 0 else {}
  model, optimizer, data_loader = make_private(
      engine, target_epsilon=4.0, target_delta=1e-5, epochs=2,
      data_loader=make_data_loader(num_examples, batch_size), **extra)
  train(model, optimizer, data_loader, epochs=2)
  epsilon = engine.get_epsilon(1e-5)
  assert 4.0 * 0.98 <= epsilon <= 4.0
  assert len(engine.accountant) == 2 * len(data_loader)


def test_the_population_sets_the_per_participant_noise():
  # 1000 examples in 7 batches: the stock engine certifies 994 users.
  for engine, users in ((PrivacyEngine(accountant=DISTRIBUTED), 994),
                        (adapter.ShufflePrivacyEngine(accountant=DISTRIBUTED),
                         1000)):
    model, optimizer, data_loader = make_private(
        engine, data_loader=make_data_loader(1000, 143))
    train(model, optimizer, data_loader)
    assert engine.accountant.num_users == users
    assert optimizer.participant_noise_scale == pytest.approx(
        math.sqrt(7 / users), rel=1e-14)


def test_a_population_changed_after_make_private_is_refused():
  engine = adapter.ShufflePrivacyEngine(accountant=DISTRIBUTED)
  model, optimizer, data_loader = make_private(engine)
  engine.accountant.num_users = 320
  with pytest.raises(ValueError, match='keep accountant.num_users'):
    train(model, optimizer, data_loader)
  assert len(engine.accountant) == 0


def test_a_population_larger_than_the_data_set_is_refused():
  engine = PrivacyEngine(accountant=DISTRIBUTED)
  engine.accountant.num_users = 10**6
  model, optimizer, data_loader = make_private(engine)
  with pytest.raises(ValueError, match='set num_users to len'):
    train(model, optimizer, data_loader)


def test_unsupported_set_ups_stop_with_the_fix():
  with pytest.raises(ValueError, match='num_users=len'):
    make_private(PrivacyEngine(accountant=DISTRIBUTED), target_epsilon=4.0,
                 target_delta=1e-5, epochs=2)
  # Opacus sets distributed=True for a DDP/FSDP module.
  with pytest.raises(ValueError, match='train in one process'):
    adapter.ShufflePrivacyEngine(accountant=DISTRIBUTED)._prepare_data_loader(
        make_data_loader(), poisson_sampling=True, distributed=True)
  with pytest.raises(ValueError, match='ghost clipping and adaptive'):
    make_private(adapter.ShufflePrivacyEngine(accountant=DISTRIBUTED),
                 grad_sample_mode='ghost')
  engine = PrivacyEngine(accountant=DISTRIBUTED)
  model, optimizer, data_loader = make_private(
      engine, clipping='adaptive', target_unclipped_quantile=0.5,
      clipbound_learning_rate=0.2, max_clipbound=10.0, min_clipbound=0.1,
      unclipped_num_std=1.0)
  with pytest.raises(ValueError, match='adaptive clipping are not supported'):
    train(model, optimizer, data_loader)
  assert len(engine.accountant) == 0
  with pytest.raises(ValueError, match='participant_noise_scale must be'):
    adapter.install_local_noise(optimizer, 0.0)


def test_registered_calibrated_and_checkpointed_like_opacus_accountants():
  assert isinstance(create_accountant(DISTRIBUTED),
                    adapter.DistributedCheckinAccountant)
  assert isinstance(create_accountant(adapter.DISTRIBUTED_RDP_MECHANISM),
                    adapter.DistributedCheckinRdpAccountant)
  sigma = get_noise_multiplier(target_epsilon=3.0, target_delta=1e-5,
                               sample_rate=0.01, steps=300,
                               accountant=DISTRIBUTED, num_users=10**4)
  accountant = create_accountant(DISTRIBUTED)
  accountant.history = [(sigma, 0.01, 300)]
  assert 3.0 - 0.011 <= accountant.get_epsilon(1e-5, num_users=10**4) <= 3.0
  accountant.num_users = 10**4
  state = accountant.state_dict()
  restored = create_accountant(DISTRIBUTED)
  restored.load_state_dict(state)
  assert restored.history == accountant.history
  assert restored.num_users == 10**4
  with pytest.raises(ValueError, match='cannot be loaded'):
    create_accountant(adapter.MECHANISM).load_state_dict(state)


def test_the_error_without_registration_is_the_one_the_docs_explain():
  # Opacus alone does not know our names; docs/opacus.md opens with this.
  code = ('from opacus import PrivacyEngine\n'
          f'PrivacyEngine(accountant={DISTRIBUTED!r})')
  result = subprocess.run([sys.executable, '-c', code], capture_output=True,
                          text=True, check=False, cwd='/')
  last_line = result.stderr.strip().splitlines()[-1]
  assert last_line == ('ValueError: Unexpected accounting mechanism: '
                       f'{DISTRIBUTED}')
  docs = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, 'docs',
                      'opacus.md')
  with open(docs, encoding='utf-8') as page:
    opening = ''.join(page.readlines()[:12])
  assert ('ValueError: Unexpected accounting mechanism: shuffle_checkin'
          in opening)
  assert 'import shuffle_accountants' in opening


def test_participation_defaults_to_revealed_and_reaches_every_event():
  accountant = adapter.DistributedCheckinAccountant(num_users=NUM_USERS)
  accountant.history = [(0.7, SAMPLE_RATE, 20)]
  assert accountant.participation == 'revealed'
  revealed = accountant.get_epsilon(1e-5)
  hidden_call = accountant.get_epsilon(1e-5, participation='hidden')
  assert accountant.participation == 'revealed'  # per call only
  assert hidden_call < revealed
  for library in (ShufflePldAccountant, ShuffleRdpAccountant):
    for participation in ('revealed', 'hidden'):
      expected = library().compose(DistributedCheckInEvent(
          NUM_USERS, SAMPLE_RATE, 0.7 / math.sqrt(COHORT),
          participation=participation), 20).get_epsilon(1e-5)
      accountant = (adapter.DistributedCheckinAccountant
                    if library is ShufflePldAccountant
                    else adapter.DistributedCheckinRdpAccountant)(
                        num_users=NUM_USERS, participation=participation)
      accountant.history = [(0.7, SAMPLE_RATE, 20)]
      assert accountant.get_epsilon(1e-5) == pytest.approx(expected, rel=1e-12)
  state = accountant.state_dict()
  assert state['participation'] == 'hidden'
  restored = create_accountant(adapter.DISTRIBUTED_RDP_MECHANISM)
  restored.load_state_dict(state)
  assert restored.participation == 'hidden'
  del state['participation']  # a checkpoint from before the choice
  del state['integrity']  # (and before digests)
  with pytest.warns(UserWarning, match='unverified'):
    restored.load_state_dict(state, allow_unverified=True)
  assert restored.participation == 'revealed'


def test_the_engine_takes_participation_and_calibrates_with_it():
  engine = adapter.ShufflePrivacyEngine(accountant=DISTRIBUTED,
                                        participation='hidden')
  model, optimizer, data_loader = make_private(
      engine, target_epsilon=4.0, target_delta=1e-5, epochs=2)
  train(model, optimizer, data_loader, epochs=2)
  assert engine.accountant.participation == 'hidden'
  assert 4.0 * 0.98 <= engine.get_epsilon(1e-5) <= 4.0
  hidden_sigma = engine.accountant.history[0][0]
  revealed = adapter.ShufflePrivacyEngine(accountant=DISTRIBUTED)
  make_private(revealed, target_epsilon=4.0, target_delta=1e-5, epochs=2)
  assert revealed.accountant.participation == 'revealed'
  assert revealed.accountant.history == []
  # Seeing who took part needs more noise for the same epsilon.
  assert get_noise_multiplier(
      target_epsilon=4.0, target_delta=1e-5, sample_rate=SAMPLE_RATE,
      steps=20, accountant=DISTRIBUTED, num_users=NUM_USERS) > hidden_sigma


@pytest.mark.parametrize('arguments,match', [
    (dict(accountant=DISTRIBUTED, participation='anonymous'),
     "participation must be one of.*'anonymous'"),
    (dict(accountant=adapter.MECHANISM, participation='hidden'),
     "participation='hidden' describes secure aggregation.*shuffle_checkin"),
])
def test_a_bad_participation_names_the_fix(arguments, match):
  with pytest.raises(ValueError, match=match):
    adapter.ShufflePrivacyEngine(**arguments)
  with pytest.raises(ValueError, match='participation must be one of'):
    adapter.DistributedCheckinAccountant(participation=None)


def test_hidden_count_is_not_trained_by_the_adapter():
  # Its sum carries every client's noise share, which the optimizer omits.
  for build in (lambda: adapter.DistributedCheckinAccountant(
                    participation='hidden_count'),
                lambda: adapter.ShufflePrivacyEngine(
                    accountant=DISTRIBUTED, participation='hidden_count')):
    with pytest.raises(ValueError, match="'hidden_count' is not trained"):
      build()
