"""What the two strategy wrappers share: FedAvg, the population, the sum.

`FixedClippingWrapper` is the base of `strategies.DistributedNoiseFixedClipping`
and `strategies.SampledServerSideFixedClipping`: the checks of the wrapped
FedAvg, waiting for the population (`NotEnoughClients` after
`connection_timeout`), the training messages, the sum of the replies, and
the clean stop when the privacy budget is exhausted.
"""

import functools
from logging import WARNING
import time
from typing import Dict, List, Optional

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from flwr.app import Array
from flwr.app import ArrayRecord
from flwr.app import Message
from flwr.app import MessageType
from flwr.app import RecordDict
from flwr.serverapp.strategy import FedAvg
from flwr.serverapp.strategy import Strategy
from flwr.supercore import log
from flwr.supercore.differential_privacy import compute_clip_model_update
import numpy as np

from shuffle_accountants import _validation

EVALUATION_METRICS = ('refused', 'unaccounted')
# Seconds to wait for `num_users` clients to connect: a simulation's
# clients come up in seconds, a deployment's SuperNodes may take minutes.
DEFAULT_CONNECTION_TIMEOUT = 300.0
# Seconds between two looks at the connected clients while waiting for them.
_POLL_INTERVAL = 1.0


class NotEnoughClients(RuntimeError):
  """Fewer clients connected than the population accounted, after the wait."""


class FixedClippingWrapper(Strategy):
  """What the two wrappers share: a FedAvg to wrap, the whole population
  connected, training messages, the sum of the replies' updates, and the
  stop when the budget is exhausted.

  Once a round is refused for the budget (`_stop_for_budget`) no message is
  sent any more and no metric recorded: the rounds left in
  ``strategy.start`` pass empty, and the `Result` it returns holds the
  model and metrics of the completed rounds; `budget_exhausted_at` is the
  first round not run. A round in which a sampled client's reply fails
  while the strategy tolerates no dropouts releases nothing and stops
  training the same way (`dropout_at` is that round): the sum of the
  replies that arrived is not the release accounted.
  """

  def __init__(self, strategy, noise_multiplier: float, clipping_norm: float,
               num_users: int, train_action: str, connection_timeout: float,
               evaluation_metrics: str) -> None:
    super().__init__()
    if not isinstance(strategy, FedAvg) or (
        type(strategy).aggregate_train is not FedAvg.aggregate_train):
      raise ValueError(
          f'strategy={type(strategy).__name__}: the release accounted is the '
          'plain sum of the clients\' clipped updates, so the wrapped '
          'strategy must aggregate as FedAvg does (FedAvg itself; weighted '
          'aggregation and server optimizers are not what is accounted).')
    if strategy.fraction_train != 1.0:
      raise ValueError(
          f'FedAvg(fraction_train={strategy.fraction_train}) would be '
          'ignored: the wrapper samples the clients itself as accounted. '
          'Leave fraction_train at 1.0 and set the sampling on the wrapper '
          '(checkin_rate, or num_sampled_clients).')
    if evaluation_metrics not in EVALUATION_METRICS:
      raise ValueError(
          f'evaluation_metrics must be one of {EVALUATION_METRICS}; got '
          f'{evaluation_metrics!r}.')
    if evaluation_metrics == 'refused' and strategy.fraction_evaluate > 0:
      raise ValueError(
          f'FedAvg(fraction_evaluate={strategy.fraction_evaluate}) has '
          'clients evaluate the model and send metrics computed on their '
          'data, which no epsilon accounts. Evaluate on the server instead '
          '(FedAvg(fraction_evaluate=0.0) and start(..., evaluate_fn=...)), '
          'or pass evaluation_metrics=\'unaccounted\' to send them anyway: '
          'they are then not private.')
    if not isinstance(train_action, str) or not train_action:
      raise ValueError('train_action must be a non-empty string (the '
                       f'ClientApp train action); got {train_action!r}.')
    self.strategy = strategy
    self.noise_multiplier = _validation.check_real(
        'noise_multiplier', noise_multiplier, 0.0, min_inclusive=False)
    self.clipping_norm = _validation.check_real(
        'clipping_norm', clipping_norm, 0.0, min_inclusive=False)
    self.num_users = _validation.check_integer('num_users', num_users, 1)
    self.connection_timeout = _validation.check_real(
        'connection_timeout', connection_timeout, 0.0)
    self.evaluation_metrics = evaluation_metrics
    self.budget_exhausted_at: Optional[int] = None
    self.dropout_at: Optional[int] = None
    self._message_type = (MessageType.TRAIN if train_action == 'default'
                          else f'{MessageType.TRAIN}.{train_action}')
    self._current_arrays: Optional[ArrayRecord] = None
    self._sent: Dict[int, int] = {}
    self.num_rounds = 0  # rounds accounted

  def _population(self, grid) -> List[int]:
    """The connected clients (waiting up to `connection_timeout` for
    `num_users` of them)."""
    deadline = time.monotonic() + self.connection_timeout
    while len(node_ids := list(grid.get_node_ids())) < self.num_users:
      left = deadline - time.monotonic()
      if left <= 0:
        raise NotEnoughClients(
            f'{len(node_ids)} clients connected after waiting '
            f'connection_timeout={self.connection_timeout:g} s, but '
            f'num_users={self.num_users} is accounted. Start the missing '
            'clients, raise connection_timeout, or set num_users to the '
            'number of clients that take part.')
      time.sleep(min(_POLL_INTERVAL, left))
    if len(node_ids) != self.num_users:
      raise ValueError(
          f'{len(node_ids)} clients are connected but num_users='
          f'{self.num_users} is accounted; the population must be the '
          'connected clients: set num_users to their number.')
    return node_ids

  @property
  def _stopped(self) -> bool:
    """Whether training stopped (budget, or a dropout not tolerated)."""
    return self.budget_exhausted_at is not None or self.dropout_at is not None

  def _stop_for_budget(self, server_round: int, reason: str) -> list:
    """No messages: training stops before `server_round`, whose release
    would exceed the budget; the completed rounds stay in the Result."""
    self.budget_exhausted_at = server_round
    log(WARNING, 'Privacy budget exhausted: %s Training stops after round '
        '%d; the model and metrics of the completed rounds are in the '
        'Result.', reason, server_round - 1)
    return []

  def start(self, grid, initial_arrays, num_rounds: int = 3,
            timeout: float = 3600, train_config=None, evaluate_config=None,
            evaluate_fn=None):
    """Flower's `Strategy.start`; the server evaluation stops with training."""
    if self.evaluation_metrics == 'unaccounted':
      log(WARNING, 'evaluation_metrics=\'unaccounted\': the clients\' '
          'evaluation metrics leave them unaccounted and are not private.')
    return super().start(
        grid, initial_arrays, num_rounds, timeout, train_config,
        evaluate_config, None if evaluate_fn is None else functools.partial(
            self._evaluate_until_stop, evaluate_fn))

  def _evaluate_until_stop(self, evaluate_fn, server_round: int, arrays):
    if self._stopped:
      return None
    return evaluate_fn(server_round, arrays)

  def _messages(self, server_round: int, arrays, config, node_ids):
    self._sent[server_round] = len(node_ids)
    self._current_arrays = arrays
    config['server-round'] = server_round
    record = RecordDict({self.strategy.arrayrecord_key: arrays,
                         self.strategy.configrecord_key: config})
    return [Message(content=record, message_type=self._message_type,
                    dst_node_id=node) for node in node_ids]

  def _arrived(self, server_round: int, replies, dropouts_allowed: bool,
               fix: str):
    """The replies without errors; None, after stopping training, when
    fewer than were sent arrived and dropouts are not allowed."""
    sent = self._sent.pop(server_round)
    arrived = [reply for reply in replies if not reply.has_error()]
    if not dropouts_allowed and len(arrived) != sent:
      self.dropout_at = server_round
      log(WARNING, 'round %d: %d of %d clients replied, but the round '
          'accounted has every sampled client\'s update: nothing is '
          'released and training stops; the model and metrics of the '
          'completed rounds are in the Result. %s', server_round,
          len(arrived), sent, fix)
      return None
    return arrived

  def _updates(self, replies, clip: bool):
    """Each reply's update (model − global), clipped to C if `clip`."""
    assert self._current_arrays is not None  # set by _messages
    global_arrays = self._current_arrays.to_numpy_ndarrays()
    for reply in replies:
      local = reply.content[self.strategy.arrayrecord_key].to_numpy_ndarrays()
      if clip:
        compute_clip_model_update(local, global_arrays, self.clipping_norm)
      yield [np.asarray(new, dtype=np.float64) - old
             for new, old in zip(local, global_arrays, strict=True)]

  def _moved_by(self, total, divisor: float):
    """The global model plus `total` / `divisor`."""
    assert self._current_arrays is not None  # set by _messages
    return ArrayRecord(array_dict={
        name: Array(np.asarray(old + update / divisor))
        for name, old, update in zip(
            self._current_arrays.keys(),
            self._current_arrays.to_numpy_ndarrays(), total, strict=True)})

  def configure_evaluate(self, server_round: int, arrays, config, grid):
    if self._stopped:
      return []
    return self.strategy.configure_evaluate(server_round, arrays, config, grid)

  def aggregate_evaluate(self, server_round: int, replies):
    if self._stopped:
      return None
    return self.strategy.aggregate_evaluate(server_round, replies)


def check_composable(accountant, event, owner: str) -> None:
  """Refuses, when `owner` is built, an accountant that cannot compose the
  event it will compose every round: `event` is composed on a fresh
  accountant of the same configuration (`accountant.fresh()`), so a round
  is never released first and refused by the ledger after."""
  try:
    accountant.fresh().compose(event)
  except (privacy_accountant.UnsupportedEventError, TypeError,
          ValueError) as error:
    relation = accountant.neighboring_relation
    fix = (f'pass a {type(accountant).__name__}() under '
           'NeighboringRelation.REPLACE_ONE (the default)'
           if relation != privacy_accountant.NeighboringRelation.REPLACE_ONE
           else 'pass an accountant that supports it (see the event\'s '
           'docstring)')
    raise ValueError(
        f'{owner} composes a {type(event).__name__} every round, which '
        f'accountant={type(accountant).__name__}(neighboring_relation='
        f'{relation.name}) cannot account: {error} Fix: {fix}.') from error


def with_round(accountant, event):
  """A new accountant of `accountant`'s configuration holding its ledger
  and `event` once more (the same ledger as `accountant.compose(event)`),
  `accountant` unchanged: the budget check's projection. Its ledger is
  replayed event by event (a deep copy took time growing with the run:
  0.4 s at round 1,000)."""
  projected = accountant.fresh()
  ledger = accountant.ledger
  for past in (ledger.events if isinstance(ledger, dp_event.ComposedDpEvent)
               else [ledger]):
    if not isinstance(past, dp_event.NoOpDpEvent):  # the empty ledger
      projected.compose(past)
  return projected.compose(event)


def summed_updates(updates):
  """The elementwise sum of model updates (None for no update)."""
  total = None
  for update in updates:
    total = update if total is None else [
        first + second for first, second in zip(total, update, strict=True)]
  return total

