"""Flower's real SecAgg+ with Skellam noise releases what is accounted.

Flower's own ``SecAggPlusWorkflow`` (server) and ``secaggplus_mod``
(clients) run unchanged; the Grid below delivers their messages to a real
``ClientApp`` in this process, so that the test can record what every
client uploaded.
"""

import math
import pathlib

import numpy as np
import pytest

pytest.importorskip('flwr.server.workflow')
from flwr.app import Context  # noqa: E402
from flwr.app import Error  # noqa: E402
from flwr.app import Message  # noqa: E402
from flwr.app import RecordDict  # noqa: E402
from flwr.client import ClientApp  # noqa: E402
from flwr.client import NumPyClient  # noqa: E402
from flwr.client.mod import secaggplus_mod  # noqa: E402
from flwr.common import Code  # noqa: E402
from flwr.common import FitRes  # noqa: E402
from flwr.common import Status  # noqa: E402
from flwr.common import ndarrays_to_parameters  # noqa: E402
from flwr.common import parameters_to_ndarrays  # noqa: E402
from flwr.common import serde  # noqa: E402
from flwr.common.secure_aggregation.secaggplus_constants import (  # noqa: E402
  RECORD_KEY_CONFIGS,
)
from flwr.common.secure_aggregation.secaggplus_constants import Key  # noqa: E402
from flwr.common.secure_aggregation.secaggplus_constants import Stage  # noqa: E402
from flwr.compat.common import recorddict_compat as compat  # noqa: E402
from flwr.server import LegacyContext  # noqa: E402
from flwr.server import ServerConfig  # noqa: E402
from flwr.server.workflow import DefaultWorkflow  # noqa: E402
from flwr.server.workflow import SecAggPlusWorkflow  # noqa: E402
from flwr.server.workflow.default_workflows import default_fit_workflow  # noqa: E402
from flwr.serverapp.grid import Grid  # noqa: E402
from flwr.supercore.run import Run  # noqa: E402
from flwr.supercore.task_identity import TaskIdentity  # noqa: E402

from flower_apps import flwr_run  # noqa: E402
from shuffle_accountants import ShuffleRdpAccountant  # noqa: E402
from shuffle_accountants import SkellamSecureSumEvent  # noqa: E402
from shuffle_accountants.adapters.flower import secagg  # noqa: E402

# Real 64-bit node IDs, straddling 2^63 as Flower's do.
NODE_IDS = [2**63 - 12345, 2**63 + 777, 18_000_000_000_000_000_001,
            4_611_686_018_427_387_904]
SHAPES = [(10, 20), (7,)]
CLIP, GRANULARITY, MU, BITS = 1.0, 40.0, 4.0e4, 16


class InProcessGrid(Grid):
  """Delivers each message to the ClientApp of its node, in this process."""

  def __init__(self, client_app, node_ids):
    self._app = client_app
    self._contexts = {
        node: Context(run_id=1, node_id=node, node_config={},
                      state=RecordDict(), run_config={})
        for node in node_ids}
    self._run = Run.create_empty(1)

  def set_run(self, run):
    self._run = run

  @property
  def run(self):
    return self._run

  def create_message(self, content, message_type, dst_node_id, group_id,
                     ttl=None):
    raise NotImplementedError

  def get_node_ids(self):
    return list(self._contexts)

  def push_messages(self, messages):
    raise NotImplementedError

  def pull_messages(self, message_ids):
    raise NotImplementedError

  def send_and_receive(self, messages, *, timeout=None):
    """Every message and reply crosses as bytes, as over the network; a
    client that raises replies with an error (it dropped out)."""
    del timeout
    wire = lambda message: serde.message_from_proto(
        serde.message_to_proto(message))
    replies = []
    for message in messages:
      try:
        reply = self._app(wire(message),
                          self._contexts[message.metadata.dst_node_id])
      except DroppedOut as error:
        reply = Message(error=Error(code=0, reason=str(error)),
                        reply_to=message)
      replies.append(wire(reply))
    return replies


class DroppedOut(Exception):
  """A client lost during training."""


class Client(NumPyClient):
  """Moves every coordinate of the model by its own constant; drops out in
  round 1 if told to."""

  def __init__(self, step, drops):
    self.step, self.drops = step, drops

  def fit(self, parameters, config):
    if self.drops and config['round'] == 1:
      raise DroppedOut('lost in round 1')
    return [p + self.step for p in parameters], 3, {'loss': 0.25}


def dropper(nodes, stage):
  """A client mod (before ``secaggplus_mod``): `nodes` drop out at SecAgg+'s
  `stage` of round 1."""

  def mod(msg, ctxt, call_next):
    configs = msg.content.config_records.get(RECORD_KEY_CONFIGS, {})
    if (ctxt.node_id in nodes and msg.metadata.group_id == '1'
        and configs.get(Key.STAGE) == stage):
      raise DroppedOut(f'lost at the {stage} stage')
    return call_next(msg, ctxt)
  return mod


def run(num_rounds=2, drop_node=None, fit_workflow=None, mods=None,
        drop_nodes=(), drop_stage=None, bits=BITS, nodes=tuple(NODE_IDS),
        **strategy_options):
  """Runs Flower's SecAgg+ workflow with the Skellam strategy and mod."""
  uploads = []

  def recorder(msg, ctxt, call_next):
    reply = call_next(msg, ctxt)
    if msg.metadata.message_type == 'train':
      fitres = compat.recorddict_to_fitres(reply.content, keep_input=True)
      uploads.append((msg.metadata.dst_node_id,
                      parameters_to_ndarrays(fitres.parameters),
                      fitres.num_examples, fitres.metrics))
    return reply

  steps = {node: 0.01 * (i + 1) for i, node in enumerate(nodes)}
  app = ClientApp(client_fn=lambda context: Client(
      steps[context.node_id], context.node_id == drop_node).to_client(),
                  mods=mods or [dropper(drop_nodes, drop_stage), secaggplus_mod,
                                recorder, secagg.skellam_mod])
  grid = InProcessGrid(app, nodes)
  strategy = secagg.SkellamSecAggFedAvg(
      clipping_norm=CLIP, granularity=GRANULARITY, noise_variance=MU,
      modulus_bits=bits, target_delta=1e-5, fraction_fit=1.0,
      min_fit_clients=len(nodes), min_available_clients=len(nodes),
      on_fit_config_fn=lambda server_round: {'round': server_round},
      initial_parameters=ndarrays_to_parameters(
          [np.zeros(shape) for shape in SHAPES]), **strategy_options)
  context = LegacyContext(
      Context(run_id=1, node_id=0, node_config={}, state=RecordDict(),
              run_config={}),
      config=ServerConfig(num_rounds=num_rounds), strategy=strategy)
  DefaultWorkflow(fit_workflow=fit_workflow or (
      secagg.skellam_secaggplus_workflow(bits)))(grid, context)
  return strategy, uploads


@pytest.fixture(name='identity')
def server_identity(monkeypatch):
  for name, value in (('_run_id', 1), ('_task_id', 1), ('_node_id', 0)):
    monkeypatch.setattr(TaskIdentity, name, value, raising=False)


def centred(values, modulus):
  residue = np.mod(values, modulus)
  return np.where(residue >= modulus // 2, residue - modulus, residue)


@pytest.mark.usefixtures('identity')
def test_the_released_sum_is_the_clients_integers_mod_m_and_accounted():
  strategy, uploads = run()
  m, k = 2**BITS, len(NODE_IDS)
  dimension = sum(math.prod(shape) for shape in SHAPES)
  assert len(strategy.rounds) == 2 and len(uploads) == 2 * k
  model = [np.zeros(shape) for shape in SHAPES]
  for index, released in enumerate(strategy.rounds):
    sent = uploads[index * k:(index + 1) * k]
    assert sorted(node for node, *_ in sent) == sorted(NODE_IDS)
    for _, arrays, weight, metrics in sent:
      # Weight 1, no client metrics, integers SecAgg+ leaves unchanged.
      assert weight == 1 and metrics == {}
      for array in arrays:
        assert np.array_equal(array, np.round(array))
        assert array.min() >= -m // 2 and array.max() < m // 2
    # Flower's modular sum, decoded: (sum of the clients' integers) mod m.
    for position, residue in enumerate(released.residues):
      integers = sum(arrays[position] + m // 2 for _, arrays, *_ in sent)
      assert np.array_equal(residue, centred(integers.astype(np.int64), m))
    # Each client's integers: g times its step (well inside C), rounded,
    # plus Skellam noise of variance mu / k.
    # (Its update has norm below C: no clipping.)
    deviations = np.concatenate([
        centred(np.concatenate([a.ravel() for a in arrays]) + m // 2, m)
        - GRANULARITY * (0.01 * (NODE_IDS.index(node) + 1))
        for node, arrays, *_ in sent])
    assert np.abs(deviations).max() < 8 * math.sqrt(MU / k) + 1
    assert np.var(deviations) == pytest.approx(MU / k, rel=0.25)
    assert released.event == SkellamSecureSumEvent(dimension, CLIP,
                                                   GRANULARITY, MU)
    assert released.num_sampled == released.num_summed == k
    model = [old + residue / (GRANULARITY * k)
             for old, residue in zip(model, released.residues)]
  # The strategy's epsilon is the RDP of the two released events.
  reference = ShuffleRdpAccountant()
  for released in strategy.rounds:
    reference.compose(released.event)
    assert released.epsilon == reference.get_epsilon(1e-5)
  # And the global model moved by the decoded sums over g k.
  final = parameters_to_ndarrays(strategy.final_parameters)
  for got, want in zip(final, model):
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.usefixtures('identity')
def test_a_dropout_is_accounted_with_the_noise_that_reached_the_sum():
  strategy, uploads = run(num_rounds=1, drop_node=NODE_IDS[2])
  m, k = 2**BITS, len(NODE_IDS)
  (released,) = strategy.rounds
  assert (released.num_sampled, released.num_summed) == (k, k - 1)
  assert sorted(node for node, *_ in uploads) == sorted(
      set(NODE_IDS) - {NODE_IDS[2]})
  for position, residue in enumerate(released.residues):
    integers = sum(arrays[position] + m // 2 for _, arrays, *_ in uploads)
    assert np.array_equal(residue, centred(integers.astype(np.int64), m))
  dimension = sum(math.prod(shape) for shape in SHAPES)
  assert released.event == SkellamSecureSumEvent(
      dimension, CLIP, GRANULARITY, MU * (k - 1) / k)


def assert_released_what_arrived(released, uploads):
  """The released sum is the uploads' integers mod m, accounted with the
  noise shares they carry (mu k' / k for k' of k)."""
  m = 2**BITS
  assert released.num_summed == len(uploads)
  for position, residue in enumerate(released.residues):
    integers = sum(arrays[position] + m // 2 for _, arrays, *_ in uploads)
    assert np.array_equal(residue, centred(integers.astype(np.int64), m))
  dimension = sum(math.prod(shape) for shape in SHAPES)
  assert released.event == SkellamSecureSumEvent(
      dimension, CLIP, GRANULARITY,
      MU * released.num_summed / released.num_sampled)


@pytest.mark.usefixtures('identity')
@pytest.mark.parametrize('stage, summed', [
    (Stage.SETUP, 3), (Stage.SHARE_KEYS, 3),
    (Stage.COLLECT_MASKED_VECTORS, 3), (Stage.UNMASK, 4)])
def test_one_dropout_at_each_stage_releases_the_sum_that_arrived(stage,
                                                                 summed):
  # The defaults (dropout_tolerance 0.2): 4 shares of each key, 3 rebuild
  # it. A client lost at the unmask stage had uploaded its vector.
  strategy, uploads = run(num_rounds=1, drop_nodes={NODE_IDS[1]},
                          drop_stage=stage)
  (released,) = strategy.rounds
  assert (released.num_sampled, released.num_summed) == (4, summed)
  assert_released_what_arrived(released, uploads)
  reference = ShuffleRdpAccountant().compose(released.event)
  assert released.epsilon == reference.get_epsilon(1e-5)


@pytest.mark.usefixtures('identity')
def test_a_share_keys_loss_and_a_later_dropout_release_the_right_sum():
  """Six clients, one lost before dealing its shares and one after: Flower
  1.42 would unmask the later dropout against every neighbour, the first
  included, whose pairwise mask no upload holds (a wrong sum)."""
  nodes = tuple(NODE_IDS) + (5_000_000_000_000_000_001,
                             7_000_000_000_000_000_003)
  uploads = []

  def recorder(msg, ctxt, call_next):
    reply = call_next(msg, ctxt)
    fitres = compat.recorddict_to_fitres(reply.content, keep_input=True)
    uploads.append((ctxt.node_id, parameters_to_ndarrays(fitres.parameters)))
    return reply

  strategy, _ = run(num_rounds=1, nodes=nodes, mods=[
      dropper({nodes[1]}, Stage.SHARE_KEYS),
      dropper({nodes[2]}, Stage.COLLECT_MASKED_VECTORS), secaggplus_mod,
      recorder, secagg.skellam_mod], fit_workflow=(
          secagg.skellam_secaggplus_workflow(BITS, dropout_tolerance=0.34)))
  (released,) = strategy.rounds
  assert (released.num_sampled, released.num_summed) == (6, 4)
  assert_released_what_arrived(released, uploads)


@pytest.mark.usefixtures('identity')
def test_flowers_own_workflow_loses_the_round_of_a_share_keys_dropout():
  """The upstream bug `skellam_secaggplus_workflow` works around."""
  flower = SecAggPlusWorkflow(
      1.0, 0.8, max_weight=1.0, clipping_range=2.0**(BITS - 1),
      quantization_range=2**BITS, modulus_range=2**32)
  with pytest.raises(KeyError):
    run(num_rounds=1, drop_nodes={NODE_IDS[1]}, drop_stage=Stage.SHARE_KEYS,
        fit_workflow=flower)


@pytest.mark.usefixtures('identity')
def test_a_round_that_releases_nothing_is_accounted_as_nothing():
  # Two of four lost: 2 survivors cannot rebuild a key (3 needed).
  strategy, uploads = run(num_rounds=2, drop_nodes=set(NODE_IDS[:2]),
                          drop_stage=Stage.COLLECT_MASKED_VECTORS)
  (released,) = strategy.rounds
  assert released.server_round == 2 and released.num_summed == 4
  assert_released_what_arrived(released, uploads[-4:])
  assert strategy.accountant.ledger == released.event


def test_the_workflow_tolerates_the_stated_fraction_of_the_cohort():
  workflow = secagg.skellam_secaggplus_workflow(BITS)
  assert (workflow.num_shares, workflow.reconstruction_threshold) == (
      1.0, pytest.approx(0.8))
  with pytest.raises(ValueError, match='dropout_tolerance'):
    secagg.skellam_secaggplus_workflow(BITS, dropout_tolerance=0.5)


@pytest.mark.usefixtures('identity')
def test_a_modulus_that_may_wrap_is_refused_with_the_smallest_safe_one():
  with pytest.raises(ValueError, match='modulus_bits=12 is the smallest'):
    run(num_rounds=1, bits=11)


@pytest.mark.usefixtures('identity')
def test_the_budget_stops_training_before_the_round_that_exceeds_it():
  one = ShuffleRdpAccountant().compose(SkellamSecureSumEvent(
      sum(math.prod(shape) for shape in SHAPES), CLIP, GRANULARITY, MU))
  first = one.get_epsilon(1e-5)
  strategy, uploads = run(num_rounds=3, max_epsilon=first * 1.2)
  assert [r.server_round for r in strategy.rounds] == [1]
  assert strategy.budget_exhausted_at == 2 and len(uploads) == 4
  assert strategy.epsilon() == first


@pytest.mark.usefixtures('identity')
def test_the_mod_refuses_to_upload_outside_secaggplus():
  with pytest.raises(RuntimeError, match='inside Flower.s secaggplus_mod'):
    run(num_rounds=1, fit_workflow=default_fit_workflow,
        mods=[secagg.skellam_mod])


@pytest.mark.usefixtures('identity')
def test_the_mod_refuses_secaggplus_settings_that_change_its_integers():
  # Flower's defaults: clipping range 8, quantization range 2^22.
  with pytest.raises(ValueError, match='clipping_range'):
    run(num_rounds=1, fit_workflow=SecAggPlusWorkflow(4, 3))


def test_the_strategy_refuses_individual_uploads():
  strategy = secagg.SkellamSecAggFedAvg(
      clipping_norm=1.0, granularity=10.0, noise_variance=100.0,
      modulus_bits=12)
  replies = [(None, FitRes(Status(Code.OK, ''), ndarrays_to_parameters(
      [np.full(3, float(i))]), 1, {})) for i in range(3)]
  with pytest.raises(RuntimeError, match='skellam_secaggplus_workflow'):
    strategy.aggregate_fit(1, replies, [])


def test_an_accountant_that_cannot_compose_the_round_is_refused_at_once():
  """Issue 49: accepted, it raised UnsupportedEventError at the first
  aggregate_fit, after SecAgg+ had released round 1's sum, the round in no
  ledger."""
  from dp_accounting.privacy_accountant import NeighboringRelation

  from shuffle_accountants import ShufflePldAccountant
  for make in (ShuffleRdpAccountant, ShufflePldAccountant):
    for relation in (NeighboringRelation.ADD_OR_REMOVE_ONE,
                     NeighboringRelation.REPLACE_SPECIAL):
      accountant = make(neighboring_relation=relation)
      with pytest.raises(ValueError, match=(
          f'SkellamSecureSumEvent.*{make.__name__}.*{relation.name}.*Fix: '
          'pass .*REPLACE_ONE')):
        secagg.SkellamSecAggFedAvg(
            clipping_norm=1.0, granularity=10.0, noise_variance=100.0,
            modulus_bits=12, accountant=accountant)
      assert accountant.ledger == ShuffleRdpAccountant().ledger  # untouched
  strategy = secagg.SkellamSecAggFedAvg(
      clipping_norm=1.0, granularity=10.0, noise_variance=100.0,
      modulus_bits=12, accountant=ShufflePldAccountant())
  assert 'NoOpDpEvent' in repr(strategy.accountant.ledger)  # still empty


APP = pathlib.Path(__file__).parents[2] / 'examples' / 'flower_secagg_app'


@pytest.mark.slow
def test_the_app_runs_secagg_in_flowers_simulation_engine(tmp_path):
  """`flwr run examples/flower_secagg_app` (tests/flower_apps.py)."""
  metrics = flwr_run(
      APP, tmp_path, 'num-clients=5 rounds=3 seeds=2 noise-multiplier=1.0 '
      'output-dir={OUT}', num_supernodes=5)['flower_secagg_metrics.json']
  rounds = metrics['rounds']
  assert [r[0] for r in rounds] == [0, 1, 2, 3]
  # 5 clients, all summed each round: the event of (d, C, g, mu).
  mu = (1.0 * (1000.0 * 2.0 + math.sqrt(650)))**2
  assert metrics['mu'] == pytest.approx(mu, rel=1e-12)
  reference = ShuffleRdpAccountant()
  for _, _, epsilon in rounds[1:]:
    reference.compose(SkellamSecureSumEvent(650, 2.0, 1000.0, mu))
    assert epsilon == pytest.approx(reference.get_epsilon(1e-5), abs=5e-7)
  assert rounds[-1][1] > rounds[0][1] + 0.2  # it learns
  gaussian = next(row for row in metrics['table']
                  if row[0].startswith('Gaussian'))
  # Matched: the same epsilon.
  assert gaussian[1] == pytest.approx(rounds[-1][2], rel=1e-6)


def example_task(monkeypatch):
  pytest.importorskip('sklearn')
  monkeypatch.syspath_prepend(str(APP))
  import flower_secagg_app.task as task  # pylint: disable=import-outside-toplevel
  return task


def test_the_example_reports_a_round_that_released_nothing(monkeypatch,
                                                           capsys):
  """Issue 49: one more evaluation than released rounds (round 2 of 3
  halted) was an IndexError; each evaluation now shows the epsilon of the
  rounds released up to it, and a run near chance says it is a smoke
  test."""
  task = example_task(monkeypatch)
  settings = task.settings_from({
      'num-clients': 2, 'rounds': 3, 'clip': 2.0, 'noise-multiplier': 3.0,
      'granularity': 1000.0, 'bits': 18, 'steps': 1, 'rate': 0.5,
      'seeds': 1, 'output-dir': ''})
  released = [secagg.SkellamRound(r, 2, 2, (), None, epsilon)
              for r, epsilon in ((1, 1.5), (3, 2.5))]
  strategy = type('Strategy', (), {'rounds': released})()
  results = task.report(settings, [0.1, 0.12, 0.12, 0.13], strategy)
  assert [row[2] for row in results['rounds']] == [0.0, 1.5, 1.5, 2.5]
  assert results['released_rounds'] == [1, 3] and not results['useful']
  assert 'SMOKE TEST' in capsys.readouterr().out


def new_api_run(num_rounds=2, drop_node=None, **options):
  """`SkellamNoiseFixedClipping.start` on the in-process grid: a ClientApp
  of Flower's current API with `skellam_noise_mod`; the uploads recorded
  per round."""
  from flwr.app import ArrayRecord  # pylint: disable=import-outside-toplevel
  from flwr.app import MetricRecord  # pylint: disable=import-outside-toplevel
  from flwr.clientapp import ClientApp as CurrentClientApp  # pylint: disable=import-outside-toplevel
  from flwr.serverapp.strategy import FedAvg  # pylint: disable=import-outside-toplevel
  uploads = {}
  steps = {node: 0.01 * (i + 1) for i, node in enumerate(NODE_IDS)}
  app = CurrentClientApp()

  def record(msg, ctxt, call_next):
    reply = call_next(msg, ctxt)
    uploads.setdefault(msg.content['config']['server-round'], {})[
        ctxt.node_id] = reply.content['arrays'].to_numpy_ndarrays()
    return reply

  @app.train(mods=[record, secagg.skellam_noise_mod])
  def train(msg, ctxt):
    if ctxt.node_id == drop_node and msg.content['config'][
        'server-round'] == 1:
      raise DroppedOut('lost in round 1')
    model = msg.content['arrays'].to_numpy_ndarrays()
    return Message(RecordDict({
        'arrays': ArrayRecord(numpy_ndarrays=[
            array + steps[ctxt.node_id] for array in model]),
        'metrics': MetricRecord({'num-examples': 3, 'loss': 0.25})}),
                   reply_to=msg)

  strategy = secagg.SkellamNoiseFixedClipping(
      FedAvg(fraction_evaluate=0.0), clipping_norm=CLIP,
      granularity=GRANULARITY, noise_variance=MU,
      num_users=len(NODE_IDS), **{'modulus_bits': BITS, **options})
  result = strategy.start(
      InProcessGrid(app, NODE_IDS),
      ArrayRecord(numpy_ndarrays=[np.zeros(shape) for shape in SHAPES]),
      num_rounds=num_rounds)
  return strategy, uploads, result


@pytest.mark.usefixtures('identity')
def test_the_current_api_strategy_releases_and_accounts_the_uploads_sum():
  strategy, uploads, result = new_api_run(num_rounds=2,
                                          drop_node=NODE_IDS[0])
  dimension = sum(math.prod(shape) for shape in SHAPES)
  assert [len(uploads[r]) for r in (1, 2)] == [3, 4]
  reference, view = ShuffleRdpAccountant(), ShuffleRdpAccountant()
  for released in strategy.rounds:
    sent = [(node, arrays, 1, {}) for node, arrays in
            uploads[released.server_round].items()]
    assert released.num_sampled == 4
    assert_released_what_arrived(released, sent)
    reference.compose(released.event)
    view.compose(SkellamSecureSumEvent(dimension, CLIP, GRANULARITY, MU / 4))
    metrics = result.train_metrics_clientapp[released.server_round]
    assert metrics['dp-epsilon'] == released.epsilon == (
        reference.get_epsilon(1e-5))
    # What this server sees: each upload with its own share alone.
    assert metrics['dp-epsilon-server-view'] == view.get_epsilon(1e-5)
    assert metrics['dp-epsilon-server-view'] > metrics['dp-epsilon']
  # The model moved by the decoded sums over g k'.
  expected = [np.zeros(shape) for shape in SHAPES]
  for released in strategy.rounds:
    expected = [old + residue / (GRANULARITY * released.num_summed)
                for old, residue in zip(expected, released.residues)]
  for got, want in zip(result.arrays.to_numpy_ndarrays(), expected):
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.usefixtures('identity')
def test_the_current_api_strategy_stops_at_the_budget_with_a_result():
  one = ShuffleRdpAccountant().compose(SkellamSecureSumEvent(
      sum(math.prod(shape) for shape in SHAPES), CLIP, GRANULARITY, MU))
  strategy, uploads, result = new_api_run(
      num_rounds=3, max_epsilon=one.get_epsilon(1e-5) * 1.2)
  assert strategy.budget_exhausted_at == 2 and sorted(uploads) == [1]
  assert sorted(result.train_metrics_clientapp) == [1]
  with pytest.raises(ValueError, match='modulus_bits=12 is the smallest'):
    new_api_run(num_rounds=1, modulus_bits=11)
