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


def run(num_rounds=2, drop_node=None, fit_workflow=None, mods=None):
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

  steps = {node: 0.01 * (i + 1) for i, node in enumerate(NODE_IDS)}
  app = ClientApp(client_fn=lambda context: Client(
      steps[context.node_id], context.node_id == drop_node).to_client(),
                  mods=mods or [secaggplus_mod, recorder, secagg.skellam_mod])
  grid = InProcessGrid(app, NODE_IDS)
  strategy = secagg.SkellamSecAggFedAvg(
      clipping_norm=CLIP, granularity=GRANULARITY, noise_variance=MU,
      modulus_bits=BITS, target_delta=1e-5, fraction_fit=1.0,
      min_fit_clients=len(NODE_IDS), min_available_clients=len(NODE_IDS),
      on_fit_config_fn=lambda server_round: {'round': server_round},
      initial_parameters=ndarrays_to_parameters(
          [np.zeros(shape) for shape in SHAPES]))
  context = LegacyContext(
      Context(run_id=1, node_id=0, node_config={}, state=RecordDict(),
              run_config={}),
      config=ServerConfig(num_rounds=num_rounds), strategy=strategy)
  DefaultWorkflow(fit_workflow=fit_workflow or (
      secagg.skellam_secaggplus_workflow(
          BITS, num_shares=len(NODE_IDS), reconstruction_threshold=3)))(
              grid, context)
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
