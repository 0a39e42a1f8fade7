"""What the two strategy wrappers share: FedAvg, the population, the sum.

`FixedClippingWrapper` is the base of `strategies.DistributedNoiseFixedClipping`
and `strategies.SampledServerSideFixedClipping`.
"""

from typing import Dict, List, Optional

from flwr.app import Array
from flwr.app import ArrayRecord
from flwr.app import Message
from flwr.app import MessageType
from flwr.app import RecordDict
from flwr.serverapp.strategy import FedAvg
from flwr.serverapp.strategy import Strategy
from flwr.serverapp.strategy.strategy_utils import sample_nodes
from flwr.supercore.differential_privacy import compute_clip_model_update
import numpy as np

from shuffle_accountants import _validation


class FixedClippingWrapper(Strategy):
  """What the two wrappers share: a FedAvg to wrap, the whole population
  connected, training messages, the sum of the replies' updates."""

  def __init__(self, strategy, noise_multiplier: float, clipping_norm: float,
               num_users: int, train_action: str) -> None:
    super().__init__()
    if not isinstance(strategy, FedAvg) or (
        type(strategy).aggregate_train is not FedAvg.aggregate_train):
      raise ValueError(
          f'strategy={type(strategy).__name__}: the release accounted is the '
          'plain sum of the clients\' clipped updates, so the wrapped '
          'strategy must aggregate as FedAvg does (FedAvg itself; weighted '
          'aggregation and server optimizers are not what is accounted).')
    if not isinstance(train_action, str) or not train_action:
      raise ValueError('train_action must be a non-empty string (the '
                       f'ClientApp train action); got {train_action!r}.')
    self.strategy = strategy
    self.noise_multiplier = _validation.check_real(
        'noise_multiplier', noise_multiplier, 0.0, min_inclusive=False)
    self.clipping_norm = _validation.check_real(
        'clipping_norm', clipping_norm, 0.0, min_inclusive=False)
    self.num_users = _validation.check_integer('num_users', num_users, 1)
    self._message_type = (MessageType.TRAIN if train_action == 'default'
                          else f'{MessageType.TRAIN}.{train_action}')
    self._current_arrays: Optional[ArrayRecord] = None
    self._sent: Dict[int, int] = {}
    self.num_rounds = 0  # rounds accounted

  def _population(self, grid) -> List[int]:
    """The connected clients (waiting for `num_users` of them)."""
    _, node_ids = sample_nodes(grid, self.num_users, self.num_users)
    if len(node_ids) != self.num_users:
      raise ValueError(
          f'{len(node_ids)} clients are connected but num_users='
          f'{self.num_users} is accounted; the population must be the '
          'connected clients: set num_users to their number.')
    return node_ids

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
    """The replies without errors; all that were sent unless allowed."""
    sent = self._sent.pop(server_round)
    arrived = [reply for reply in replies if not reply.has_error()]
    if not dropouts_allowed and len(arrived) != sent:
      raise ValueError(
          f'round {server_round}: {len(arrived)} of {sent} clients replied, '
          f'but the round accounted has every sampled client\'s update; {fix}')
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
    return self.strategy.configure_evaluate(server_round, arrays, config, grid)

  def aggregate_evaluate(self, server_round: int, replies):
    return self.strategy.aggregate_evaluate(server_round, replies)


def summed_updates(updates):
  """The elementwise sum of model updates (None for no update)."""
  total = None
  for update in updates:
    total = update if total is None else [
        first + second for first, second in zip(total, update, strict=True)]
  return total

