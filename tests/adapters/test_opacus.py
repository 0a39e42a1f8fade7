"""Opacus adapter: a real (tiny) training loop trains and accounts the shuffle
model."""

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch')
pytest.importorskip('opacus')

# ruff: noqa: E402
from opacus import PrivacyEngine
from opacus.accountants import create_accountant
from opacus.accountants import register_accountant
from opacus.accountants.utils import get_noise_multiplier
from opacus.optimizers import AdaClipDPOptimizer
from opacus.utils.batch_memory_manager import BatchMemoryManager
from torch import nn

from opacus_training import FEATURES
from opacus_training import NOISE_MULTIPLIER
from opacus_training import make_data_loader as _data_loader
from opacus_training import make_private as _private
from opacus_training import released_noise as _released_noise
from opacus_training import train as _train
from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.adapters import opacus as adapter

# The stock PrivacyEngine checks the data loader only after this call.
adapter.install_data_loader_check()

pytestmark = pytest.mark.filterwarnings(
    'ignore:Secure RNG turned off', 'ignore:Full backward hook',
    'ignore:Optimal order is the',
    "ignore:accountant='shuffle_checkin")


def _engines():
  return [PrivacyEngine(accountant=adapter.MECHANISM),
          adapter.ShufflePrivacyEngine()]


@pytest.mark.parametrize('engine_index', [0, 1])
def test_released_sum_carries_sqrt_k_local_noise(engine_index):
  engine = _engines()[engine_index]
  model, optimizer, _ = _private(engine, loss_reduction='sum')
  for participants in (64, 9, 1, 64):
    noise = _released_noise(model, optimizer, participants)
    assert optimizer.last_participants == participants
    expected = participants**0.5 * NOISE_MULTIPLIER * 1.0
    # 10^4 independent entries: the sample std is within 3 % of the truth.
    assert float(noise.std()) == pytest.approx(expected, rel=0.03)
    assert float(noise.mean()) == pytest.approx(0.0, abs=4 * expected / 100)
  assert isinstance(optimizer, adapter.LocalNoiseDPOptimizer)


def test_mean_reduction_scales_the_local_noise_like_opacus():
  engine = PrivacyEngine(accountant=adapter.MECHANISM)
  model, optimizer, _ = _private(engine)  # loss_reduction='mean'
  participants = 16
  optimizer.zero_grad()
  inputs = torch.zeros(participants, FEATURES)
  labels = torch.zeros(participants, dtype=torch.long)
  nn.functional.cross_entropy(model(inputs), labels).backward()
  optimizer.step()
  noise = model._module.weight.grad
  expected = (participants**0.5 * NOISE_MULTIPLIER
              / optimizer.expected_batch_size)
  assert float(noise.std()) == pytest.approx(expected, rel=0.03)


def test_per_layer_clipping_uses_the_norm_of_the_layer_bounds():
  engine = adapter.ShufflePrivacyEngine()
  model, optimizer, _ = _private(engine, loss_reduction='sum',
                                 clipping='per_layer', max_grad_norm=[0.6])
  assert isinstance(optimizer, adapter.LocalNoiseDPPerLayerOptimizer)
  noise = _released_noise(model, optimizer, 25)
  assert float(noise.std()) == pytest.approx(5 * NOISE_MULTIPLIER * 0.6,
                                             rel=0.03)


def test_the_engine_builds_the_local_noise_optimizer_as_opacus_would():
  generator = torch.Generator()
  _, optimizer, _ = _private(adapter.ShufflePrivacyEngine(),
                             loss_reduction='sum', noise_generator=generator)
  assert type(optimizer) is adapter.LocalNoiseDPOptimizer
  assert optimizer.generator is generator
  assert (optimizer.noise_multiplier, optimizer.max_grad_norm,
          optimizer.loss_reduction) == (NOISE_MULTIPLIER, 1.0, 'sum')
  assert optimizer.participant_noise_scale == 1.0


def test_an_empty_batch_gets_no_local_noise():
  model, optimizer, _ = _private(adapter.ShufflePrivacyEngine(),
                                 loss_reduction='sum')
  _released_noise(model, optimizer, 5)
  noise = _released_noise(model, optimizer, 0)
  assert optimizer.last_participants == 0
  assert float(noise.abs().max()) == 0.0


def test_batch_memory_manager_counts_every_physical_batch():
  engine = adapter.ShufflePrivacyEngine()
  model, optimizer, data_loader = _private(
      engine, loss_reduction='sum',
      data_loader=_data_loader(num_examples=640, batch_size=160))
  counted = []
  with BatchMemoryManager(data_loader=data_loader, max_physical_batch_size=16,
                          optimizer=optimizer) as memory_safe_loader:
    expected = 0
    for inputs, labels in memory_safe_loader:
      optimizer.zero_grad()
      nn.functional.cross_entropy(model(inputs), labels,
                                  reduction='sum').backward()
      expected += len(inputs)
      optimizer.step()
      if not optimizer._is_last_step_skipped:
        counted.append((optimizer.last_participants, expected))
        expected = 0
  assert counted and all(seen == truth for seen, truth in counted)
  assert len(engine.accountant) == len(counted)


def test_stock_engine_refuses_batch_memory_manager_with_the_fix():
  engine = PrivacyEngine(accountant=adapter.MECHANISM)
  model, optimizer, data_loader = _private(
      engine, data_loader=_data_loader(num_examples=640, batch_size=160))
  with pytest.raises(ValueError, match=r'BatchMemoryManager \(or signal'):
    with BatchMemoryManager(data_loader=data_loader,
                            max_physical_batch_size=8,
                            optimizer=optimizer) as memory_safe_loader:
      _train(model, optimizer, memory_safe_loader)
  assert len(engine.accountant) == 0


def test_stock_engine_refuses_fixed_size_batches_at_make_private():
  # Accumulated micro-batches need poisson_sampling=False, which the sampler
  # contract (adapters/opacus/samplers.py) already refuses for check-in.
  engine = PrivacyEngine(accountant=adapter.MECHANISM)
  with pytest.raises(ValueError, match='assumes Poisson sampling'):
    _private(engine, poisson_sampling=False)


@pytest.mark.parametrize('engine_class, mechanism, library', [
    (PrivacyEngine, adapter.MECHANISM, ShufflePldAccountant),
    (adapter.ShufflePrivacyEngine, adapter.MECHANISM, ShufflePldAccountant),
    (adapter.ShufflePrivacyEngine, adapter.RDP_MECHANISM,
     ShuffleRdpAccountant),
])
def test_epsilon_is_the_library_accountants_for_the_same_events(
    engine_class, mechanism, library):
  engine = engine_class(accountant=mechanism)
  model, optimizer, data_loader = _private(engine)
  _train(model, optimizer, data_loader, epochs=2)
  sample_rate = 1 / len(data_loader)
  assert engine.accountant.history == [(NOISE_MULTIPLIER, sample_rate, 20)]
  # 640 examples, 10 batches: both engines know n exactly here.
  assert engine.accountant.num_users == 640
  reference = library()
  reference.compose(CheckInEvent(num_users=640, checkin_rate=sample_rate,
                                 noise_multiplier=NOISE_MULTIPLIER), 20)
  assert engine.get_epsilon(1e-5) == reference.get_epsilon(1e-5)


def test_realized_batch_sizes_never_reach_epsilon():
  histories = []
  for participants in (3, 50):
    engine = PrivacyEngine(accountant=adapter.MECHANISM)
    model, optimizer, _ = _private(engine, loss_reduction='sum')
    for _ in range(4):
      _released_noise(model, optimizer, participants)
    histories.append((engine.accountant.history, engine.get_epsilon(1e-5)))
  assert histories[0] == histories[1]


def test_stock_engine_never_over_estimates_the_population():
  # 1000 examples in 7 batches: Opacus tells the optimizer only
  # int(1000/7) = 142 expected examples, which certifies 994 users.
  engine = PrivacyEngine(accountant=adapter.MECHANISM)
  model, optimizer, data_loader = _private(
      engine, data_loader=_data_loader(num_examples=1000, batch_size=143))
  _train(model, optimizer, data_loader)
  assert engine.accountant.num_users == 994 <= 1000
  assert adapter.stock_engine_population(1000, 1 / 7) == 994
  # ShufflePrivacyEngine reads the data set and uses the exact size.
  engine = adapter.ShufflePrivacyEngine()
  model, optimizer, data_loader = _private(
      engine, data_loader=_data_loader(num_examples=1000, batch_size=143))
  _train(model, optimizer, data_loader)
  assert engine.accountant.num_users == 1000


def test_a_population_larger_than_the_data_set_is_refused():
  engine = PrivacyEngine(accountant=adapter.MECHANISM)
  engine.accountant.num_users = 10**6
  model, optimizer, data_loader = _private(engine)
  with pytest.raises(ValueError, match='num_users=1000000 is larger'):
    _train(model, optimizer, data_loader)


def test_shuffle_engine_samples_at_the_rate_it_accounts():
  # Opacus runs int(1/q) batches per epoch: 92 for a 93-batch loader.
  engine = adapter.ShufflePrivacyEngine()
  _, _, data_loader = _private(
      engine, data_loader=_data_loader(num_examples=93, batch_size=1))
  assert len(data_loader) == 93
  assert data_loader.sample_rate == 1 / 93


@pytest.mark.parametrize('engine_index', [0, 1])
def test_make_private_with_epsilon_reaches_the_target(engine_index):
  engine = _engines()[engine_index]
  extra = {'num_users': 640} if engine_index == 0 else {}
  model, optimizer, data_loader = _private(
      engine, target_epsilon=4.0, target_delta=1e-5, epochs=2, **extra)
  _train(model, optimizer, data_loader, epochs=2)
  epsilon = engine.get_epsilon(1e-5)
  # Opacus bisects until target - 0.01 <= epsilon <= target.
  assert 4.0 - 0.011 <= epsilon <= 4.0
  assert len(engine.accountant) == 20


def test_calibration_without_the_population_names_the_fix():
  with pytest.raises(ValueError, match='num_users=len'):
    _private(PrivacyEngine(accountant=adapter.MECHANISM), target_epsilon=4.0,
             target_delta=1e-5, epochs=2)


def test_get_noise_multiplier_writes_history_directly():
  sigma = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5,
                               sample_rate=0.01, steps=300,
                               accountant=adapter.RDP_MECHANISM,
                               num_users=10**5)
  accountant = create_accountant(adapter.RDP_MECHANISM)
  accountant.history = [(sigma, 0.01, 300)]
  assert accountant.get_epsilon(1e-5, num_users=10**5) <= 2.0


def test_checkpoint_round_trips_the_accountant(tmp_path):
  engine = adapter.ShufflePrivacyEngine()
  model, optimizer, data_loader = _private(engine)
  _train(model, optimizer, data_loader)
  path = tmp_path / 'checkpoint.pt'
  engine.save_checkpoint(path=path, module=model, optimizer=optimizer)
  restored = adapter.ShufflePrivacyEngine()
  model_copy, optimizer_copy, _ = _private(restored)
  restored.load_checkpoint(path=path, module=model_copy,
                           optimizer=optimizer_copy)
  assert restored.accountant.history == engine.accountant.history
  assert restored.accountant.num_users == engine.accountant.num_users
  assert restored.get_epsilon(1e-5) == engine.get_epsilon(1e-5)
  state = engine.accountant.state_dict()
  with pytest.raises(ValueError, match='cannot be loaded'):
    create_accountant(adapter.RDP_MECHANISM).load_state_dict(state)
  with pytest.raises(ValueError, match='cannot be loaded'):
    create_accountant('rdp').load_state_dict(state)


def test_accountant_basics():
  accountant = adapter.ShuffleCheckinAccountant(num_users=1000)
  assert accountant.get_epsilon(1e-5) == 0.0 and len(accountant) == 0
  accountant.step(noise_multiplier=1.0, sample_rate=0.1)
  accountant.step(noise_multiplier=1.0, sample_rate=0.1)
  accountant.step(noise_multiplier=2.0, sample_rate=0.1)
  assert accountant.history == [(1.0, 0.1, 2), (2.0, 0.1, 1)]
  assert len(accountant) == 3
  more = adapter.ShuffleCheckinAccountant(num_users=1000)
  more.history = accountant.history + [(1.0, 0.1, 5)]
  assert more.get_epsilon(1e-5) > accountant.get_epsilon(1e-5) > 0
  accountant.step(noise_multiplier=0.0, sample_rate=0.1)
  assert accountant.get_epsilon(1e-5) == float('inf')


@pytest.mark.parametrize('call, message', [
    (lambda a: a.step(noise_multiplier=-1.0, sample_rate=0.1),
     'noise_multiplier must be'),
    (lambda a: a.step(noise_multiplier=1.0, sample_rate=1.5),
     'sample_rate must be'),
    (lambda a: a.get_epsilon(0.0), 'delta must be'),
    (lambda a: a.get_epsilon(1e-5, num_users=0), 'num_users must be'),
    (lambda a: a.get_optimizer_hook_fn(0.0), 'sample_rate must be'),
])
def test_bad_arguments_name_the_parameter(call, message):
  accountant = adapter.ShuffleCheckinAccountant(num_users=100)
  accountant.step(noise_multiplier=1.0, sample_rate=0.1)
  with pytest.raises(ValueError, match=message):
    call(accountant)


def test_unsupported_set_ups_stop_with_the_fix():
  with pytest.raises(ValueError, match='needs a check-in accountant'):
    adapter.ShufflePrivacyEngine(accountant='rdp')
  with pytest.raises(ValueError, match='poisson_sampling=True'):
    _private(adapter.ShufflePrivacyEngine(), poisson_sampling=False)
  with pytest.raises(ValueError, match='adaptive clipping'):
    _private(adapter.ShufflePrivacyEngine(), clipping='adaptive',
             target_unclipped_quantile=0.5, clipbound_learning_rate=0.2,
             max_clipbound=10.0, min_clipbound=0.1,
             unclipped_num_std=1.0)
  engine = PrivacyEngine(accountant=adapter.MECHANISM)
  model, optimizer, data_loader = _private(
      engine, clipping='adaptive', target_unclipped_quantile=0.5,
      clipbound_learning_rate=0.2, max_clipbound=10.0, min_clipbound=0.1,
      unclipped_num_std=1.0)
  assert isinstance(optimizer, AdaClipDPOptimizer)
  with pytest.raises(ValueError, match='adaptive clipping'):
    _train(model, optimizer, data_loader)
  assert len(engine.accountant) == 0


def test_registration_is_idempotent_and_leaves_opacus_accountants_alone():
  adapter.register_accountants()
  adapter.register_accountants()
  assert isinstance(create_accountant(adapter.MECHANISM),
                    adapter.ShuffleCheckinAccountant)
  assert isinstance(create_accountant(adapter.RDP_MECHANISM),
                    adapter.ShuffleCheckinRdpAccountant)
  for name in ('rdp', 'gdp', 'prv'):
    assert create_accountant(name).mechanism() == name
  model, optimizer, data_loader = _private(PrivacyEngine(accountant='rdp'))
  assert type(optimizer).__name__ == 'DPOptimizer'


def test_a_foreign_registration_is_left_in_place_with_a_warning():

  class Foreign(adapter.ShuffleCheckinAccountant):
    pass

  register_accountant(adapter.MECHANISM, Foreign, force=True)
  try:
    with pytest.warns(UserWarning, match='leaves it in place'):
      adapter.register_accountants()
    assert type(create_accountant(adapter.MECHANISM)) is Foreign
  finally:
    register_accountant(adapter.MECHANISM, adapter.ShuffleCheckinAccountant,
                        force=True)


def _fresh_python(code: str) -> str:
  """stdout of `code` in a new interpreter, outside the checkout."""
  return subprocess.run([sys.executable, '-c', code], capture_output=True,
                        text=True, check=True, cwd='/', timeout=300).stdout


def test_importing_the_adapter_registers_with_opacus():
  output = _fresh_python('import shuffle_accountants.adapters.opacus\n'
                         'from opacus import PrivacyEngine\n'
                         'engine = PrivacyEngine('
                         'accountant="shuffle_checkin")\n'
                         'print(type(engine.accountant).__name__)')
  assert output.strip() == 'ShuffleCheckinAccountant'


@pytest.mark.parametrize('statements', [
    'import shuffle_accountants; import opacus',
    'import opacus; import shuffle_accountants',
])
def test_importing_the_package_alone_leaves_opacus_alone(statements):
  # No import hook, no registration, Opacus' own data loader preparation.
  output = _fresh_python(
      f'import sys; hooks = list(sys.meta_path)\n{statements}\n'
      'from opacus import PrivacyEngine\n'
      'from opacus.accountants import registry\n'
      'print(sorted(registry._ACCOUNTANTS), sys.meta_path == hooks,\n'
      '      PrivacyEngine._prepare_data_loader.__module__)')
  assert output.strip() == "['gdp', 'prv', 'rdp'] True opacus.privacy_engine"


def test_importing_the_adapter_leaves_the_stock_engine_alone():
  output = _fresh_python('import shuffle_accountants.adapters.opacus\n'
                         'from opacus import PrivacyEngine\n'
                         'print(PrivacyEngine._prepare_data_loader.__module__)')
  assert output.strip() == 'opacus.privacy_engine'


# The stock engine makes a tiny model private with "shuffle_checkin", before
# and after install_data_loader_check(); ShufflePrivacyEngine needs no call.
STOCK_ENGINE_RUN = f'''
import sys, warnings
sys.path.insert(0, {os.path.dirname(os.path.dirname(__file__))!r})
warnings.simplefilter('ignore')
from opacus import PrivacyEngine
from shuffle_accountants.adapters import opacus as adapter
import opacus_training
print(type(opacus_training.make_private(adapter.ShufflePrivacyEngine(),
                                        features=4)[1]).__name__)
try:
  opacus_training.make_private(PrivacyEngine(accountant='shuffle_checkin'),
                               features=4)
except ValueError as error:
  print(error)
adapter.install_data_loader_check()
adapter.install_data_loader_check()
print(PrivacyEngine._prepare_data_loader is adapter.prepare_data_loader)
opacus_training.make_private(PrivacyEngine(accountant='shuffle_checkin'),
                             features=4)
print('stock engine made private')
'''


def test_the_stock_engine_checks_the_data_loader_only_when_asked():
  lines = _fresh_python(STOCK_ENGINE_RUN).strip().splitlines()
  assert lines[0] == 'LocalNoiseDPOptimizer'
  assert 'did not check the data loader' in lines[1]
  assert 'ShufflePrivacyEngine' in lines[1]
  assert 'install_data_loader_check()' in lines[1]
  assert lines[2:] == ['True', 'stock engine made private']


def test_names_of_the_former_samplers_module_are_the_package_names():
  from shuffle_accountants.adapters import opacus_samplers
  for name in opacus_samplers.__all__:
    expected = ('install_data_loader_check' if name == 'install_contract_check'
                else name)
    assert getattr(opacus_samplers, name) is getattr(adapter, expected), name


def test_example_trains_and_certifies(tmp_path):
  pytest.importorskip('sklearn')
  example = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                         'examples', 'opacus_shuffle_checkin.py')
  output = subprocess.run(
      [sys.executable, example, '--epochs', '1'], capture_output=True,
      text=True, check=True, cwd=tmp_path).stdout
  assert 'shuffle model : accuracy' in output
  assert 'certified epsilon' in output
