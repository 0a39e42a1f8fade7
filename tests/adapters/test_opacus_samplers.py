"""Opacus sampler accountants: registration, RandomAllocationSampler, the
sampler <-> accountant contract at make_private, and the noise trained."""

import math

import pytest

torch = pytest.importorskip('torch')
pytest.importorskip('opacus')

# ruff: noqa: E402
from opacus import PrivacyEngine
from opacus.accountants import create_accountant
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data import TensorDataset
from torch.utils.data import WeightedRandomSampler

from shuffle_accountants.adapters import opacus as adapter
from shuffle_accountants.adapters.opacus import RandomAllocationSampler
from shuffle_accountants.adapters.opacus import sampler_accountants
from shuffle_accountants.samplers import shuffled_batches_epsilon

NUM_EXAMPLES, STEPS, FEATURES = 120, 12, 4

# The stock PrivacyEngine checks the data loader only after this call.
adapter.install_data_loader_check()


def _dataset():
  generator = torch.Generator().manual_seed(0)
  return TensorDataset(
      torch.randn(NUM_EXAMPLES, FEATURES, generator=generator),
      torch.randint(0, 2, (NUM_EXAMPLES,), generator=generator))


def _loader(kind):
  dataset = _dataset()
  batch = NUM_EXAMPLES // STEPS
  return {
      'random_allocation': lambda: DataLoader(
          dataset, batch_sampler=RandomAllocationSampler(NUM_EXAMPLES, STEPS)),
      'shuffled': lambda: DataLoader(dataset, batch_size=batch, shuffle=True),
      'sequential': lambda: DataLoader(dataset, batch_size=batch),
      'weighted': lambda: DataLoader(dataset, batch_size=batch,
                                     sampler=WeightedRandomSampler(
                                         [1.0] * NUM_EXAMPLES, NUM_EXAMPLES)),
      'with_replacement': lambda: DataLoader(
          dataset, batch_size=batch, sampler=torch.utils.data.RandomSampler(
              dataset, replacement=True)),
  }[kind]()


def _private(engine, data_loader, poisson_sampling=False, noise=1.0):
  torch.manual_seed(0)
  model = nn.Linear(FEATURES, 2)
  optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
  return engine.make_private(module=model, optimizer=optimizer,
                             data_loader=data_loader, noise_multiplier=noise,
                             max_grad_norm=1.0,
                             poisson_sampling=poisson_sampling)


def _train(model, optimizer, data_loader, epochs):
  for _ in range(epochs):
    for inputs, labels in data_loader:
      optimizer.zero_grad()
      nn.functional.cross_entropy(model(inputs), labels).backward()
      optimizer.step()


def test_accountants_are_registered():
  for name, accountant_class in adapter.ACCOUNTANTS:
    assert isinstance(create_accountant(name), accountant_class)


def test_random_allocation_sampler_places_every_example_once_per_epoch():
  sampler = RandomAllocationSampler(1000, 10,
                                    torch.Generator().manual_seed(1))
  first, second = list(sampler), list(sampler)
  for epoch in (first, second):
    assert len(epoch) == 10
    assert sorted(i for batch in epoch for i in batch) == list(range(1000))
  assert first != second  # re-drawn every epoch
  assert sampler.epochs_started == 2
  sizes = [len(batch) for batch in first]
  assert 60 < min(sizes) and max(sizes) < 140  # Bin(1000, 0.1): +-4.2 sd


@pytest.mark.parametrize('engine_class', [PrivacyEngine,
                                          adapter.ShufflePrivacyEngine])
def test_shuffled_batches_epsilon_and_range(engine_class):
  engine = engine_class(accountant='shuffled_batches')
  model, optimizer, data_loader = _private(engine, _loader('shuffled'))
  _train(model, optimizer, data_loader, epochs=2)
  assert engine.accountant.history == [(1.0, 1 / STEPS, 2 * STEPS)]
  expected = shuffled_batches_epsilon(1.0, STEPS, 2, 1e-5)
  lower, upper = engine.accountant.get_epsilon_range(1e-5)
  assert engine.get_epsilon(1e-5) == upper
  assert expected.upper * (1 - 1e-8) <= upper <= expected.upper * 1.01
  assert lower == expected.lower < upper


def test_sequential_loader_range_is_exact():
  engine = PrivacyEngine(accountant='shuffled_batches')
  model, optimizer, data_loader = _private(engine, _loader('sequential'))
  _train(model, optimizer, data_loader, epochs=1)
  lower, upper = engine.accountant.get_epsilon_range(1e-5)
  assert lower == upper == engine.get_epsilon(1e-5)


def test_epochs_broken_off_and_restarted_count_in_full():
  engine = PrivacyEngine(accountant='shuffled_batches')
  model, optimizer, data_loader = _private(engine, _loader('shuffled'))
  for _ in range(3):  # three half epochs: three permutations
    for step, (inputs, labels) in enumerate(data_loader):
      if step == STEPS // 2:
        break
      optimizer.zero_grad()
      nn.functional.cross_entropy(model(inputs), labels).backward()
      optimizer.step()
  assert engine.get_epsilon(1e-5) >= shuffled_batches_epsilon(
      1.0, STEPS, 3, 1e-5).upper * (1 - 1e-8)


@pytest.mark.parametrize('engine_class', [PrivacyEngine,
                                          adapter.ShufflePrivacyEngine])
def test_random_allocation_trains_with_central_noise(engine_class):
  pytest.importorskip('PLD_accounting')
  engine = engine_class(accountant='random_allocation')
  model, optimizer, data_loader = _private(engine,
                                           _loader('random_allocation'))
  assert type(optimizer).__name__ == 'DPOptimizer'  # stock noise sigma * C
  _train(model, optimizer, data_loader, epochs=2)
  assert engine.accountant.history == [(1.0, 1 / STEPS, 2 * STEPS)]
  epsilon = engine.get_epsilon(1e-5)
  unamplified = shuffled_batches_epsilon(1.0, STEPS, 2, 1e-5).upper
  assert 0 < epsilon < unamplified


def test_random_allocation_starts_its_epoch_at_the_first_step(monkeypatch):
  """The step hook starts the epoch's PMF in the background, once per
  (sigma, t), for the event and accuracy the query composes."""
  from shuffle_accountants.pld import random_allocation
  started = []
  monkeypatch.setattr(random_allocation, 'prefetch',
                      lambda *arguments: started.append(arguments))
  accountant = create_accountant('random_allocation')
  for _ in range(2 * STEPS):
    accountant.step(noise_multiplier=2.0, sample_rate=1 / STEPS)
  accountant.step(noise_multiplier=1.5, sample_rate=1 / STEPS)
  assert [(event.event.noise_multiplier, event.num_steps, accuracy)
          for event, accuracy in started] == [(2.0, STEPS, 1e-3),
                                               (1.5, STEPS, 1e-3)]


def test_random_allocation_composes_an_epoch_once(monkeypatch):
  """Every started epoch counts in full, so queries after every step of an
  epoch ask for one ledger: composed once, the answer a fresh accountant
  gives; the next epoch, or another delta, is composed again."""
  pytest.importorskip('PLD_accounting')
  composed = []
  pld_accountant = sampler_accountants.ShufflePldAccountant
  compose = pld_accountant.compose

  def counted(self, event, count=1):
    composed.append(count)
    return compose(self, event, count)

  monkeypatch.setattr(pld_accountant, 'compose', counted)

  def stepped(steps):
    accountant = create_accountant('random_allocation')
    for _ in range(steps):
      accountant.step(noise_multiplier=2.0, sample_rate=1 / STEPS)
      yield accountant

  answers = [accountant.get_epsilon(1e-5) for accountant in stepped(STEPS + 1)]
  assert composed == [1, 2]
  assert answers[:STEPS] == [answers[0]] * STEPS
  assert answers[STEPS] > answers[0]
  *_, fresh = stepped(STEPS + 1)
  assert fresh.get_epsilon(1e-5) == answers[-1]
  assert fresh.get_epsilon(1e-6) > answers[-1]
  assert composed == [1, 2, 2, 2]


def test_noise_is_sigma_times_clipping_norm_on_the_sum():
  # Zero gradients, summed loss, lr 1: the update is the noise, std sigma C.
  engine = PrivacyEngine(accountant='shuffled_batches')
  torch.manual_seed(0)
  linear = nn.Linear(FEATURES, 1, bias=False)
  nn.init.zeros_(linear.weight)
  optimizer = torch.optim.SGD(linear.parameters(), lr=1.0)
  model, optimizer, data_loader = engine.make_private(
      module=linear, optimizer=optimizer, data_loader=_loader('shuffled'),
      noise_multiplier=2.0, max_grad_norm=3.0, poisson_sampling=False,
      loss_reduction='sum')
  draws = []
  for _ in range(200):
    inputs, _ = next(iter(data_loader))
    optimizer.zero_grad()
    (model(inputs) * 0).sum().backward()
    optimizer.step()
    draws.append(linear.weight.detach().clone().flatten())
    with torch.no_grad():
      linear.weight.zero_()
  assert torch.stack(draws).std().item() == pytest.approx(6.0, rel=0.1)


@pytest.mark.parametrize('accountant, kind, poisson, message', [
    ('shuffle_checkin', 'shuffled', False, 'assumes Poisson sampling'),
    ('distributed_checkin', 'sequential', False, 'assumes Poisson sampling'),
    ('shuffle_checkin', 'random_allocation', True, 'would replace'),
    ('shuffle_checkin_rdp', 'weighted', True, 'would replace'),
    ('shuffled_batches', 'shuffled', True, 'poisson_sampling=False'),
    ('shuffled_batches', 'weighted', False, 'WeightedRandomSampler'),
    ('shuffled_batches', 'with_replacement', False, 'RandomSampler'),
    ('shuffled_batches', 'random_allocation', False, 'shuffled_batches'),
    ('random_allocation', 'shuffled', False, 'RandomAllocationSampler'),
    ('random_allocation', 'random_allocation', True, 'poisson_sampling=False'),
])
def test_contract_errors_name_the_fix(accountant, kind, poisson, message):
  with pytest.raises(ValueError, match=message) as error:
    _private(PrivacyEngine(accountant=accountant), _loader(kind),
             poisson_sampling=poisson)
  assert 'Fix' in str(error.value)


@pytest.mark.parametrize('accountant, kind, poisson, message', [
    ('rdp', 'shuffled', False, 'assumes Poisson sampling'),
    ('prv', 'sequential', False, 'assumes Poisson sampling'),
    ('rdp', 'random_allocation', True, 'would replace'),
    ('gdp', 'weighted', True, 'would replace'),
])
def test_opacus_accountants_get_the_contract_only_when_asked(
    accountant, kind, poisson, message):
  # make_private leaves Opacus' own accountants as Opacus made them; the
  # check is one call away.
  engine = PrivacyEngine(accountant=accountant)
  _private(engine, _loader(kind), poisson_sampling=poisson)
  with pytest.raises(ValueError, match=message) as error:
    adapter.check_sampler_contract(
        engine.accountant, _loader(kind), poisson_sampling=poisson,
        distributed=False)
  assert 'Fix' in str(error.value)


def test_poisson_accountants_keep_working_with_poisson_sampling():
  engine = PrivacyEngine(accountant='rdp')
  model, optimizer, data_loader = _private(engine, _loader('shuffled'),
                                           poisson_sampling=True)
  _train(model, optimizer, data_loader, epochs=1)
  assert 0 < engine.get_epsilon(1e-5) < math.inf


def test_random_allocation_refuses_accumulated_batches():
  engine = PrivacyEngine(accountant='random_allocation')
  model, optimizer, _ = _private(engine, _loader('random_allocation'))
  for _ in range(2):
    inputs, labels = torch.randn(5, FEATURES), torch.zeros(5, dtype=torch.long)
    nn.functional.cross_entropy(model(inputs), labels).backward()
  with pytest.raises(ValueError, match='accumulated micro-batches'):
    optimizer.step()


def test_state_dict_round_trip():
  engine = PrivacyEngine(accountant='shuffled_batches')
  model, optimizer, data_loader = _private(engine, _loader('sequential'))
  _train(model, optimizer, data_loader, epochs=1)
  restored = create_accountant('shuffled_batches')
  restored.load_state_dict(engine.accountant.state_dict())
  assert restored.history == engine.accountant.history
  assert restored.sequential
  assert restored.get_epsilon(1e-5) == engine.get_epsilon(1e-5)


def test_shuffled_batches_epsilon_is_the_closed_form_at_any_epochs(
    monkeypatch):
  # get_epsilon composed a PLD per epoch (0.26 s at 1 epoch, 10 s at 300)
  # for the number shuffled_batches_epsilon gives in closed form
  # (SHUFFLED-BATCHES-UB).
  monkeypatch.setattr(sampler_accountants, 'ShufflePldAccountant', None)
  accountant = create_accountant('shuffled_batches')
  accountant.history = [(1.0, 1 / STEPS, 300 * STEPS)]
  assert accountant.get_epsilon(1e-5) == shuffled_batches_epsilon(
      1.0, STEPS, 300, 1e-5).upper


def test_shuffled_batches_groups_compose_as_one_gaussian():
  from dp_accounting import dp_event

  from shuffle_accountants import ShufflePldAccountant
  accountant = create_accountant('shuffled_batches')
  accountant.history = [(0.8, 1 / 10, 30), (2.0, 1 / 4, 8)]
  ledger = ShufflePldAccountant(adapter.ADD_OR_REMOVE_ONE)
  ledger.compose(dp_event.GaussianDpEvent(0.8), 3)
  ledger.compose(dp_event.GaussianDpEvent(2.0), 2)
  closed_form = accountant.get_epsilon(1e-6)
  assert ledger.get_epsilon(1e-6) * (1 - 1e-3) <= closed_form
  assert closed_form <= ledger.get_epsilon(1e-6) * (1 + 1e-3)
  accountant.history.append((0.0, 1 / 3, 1))
  assert accountant.get_epsilon(1e-6) == math.inf
