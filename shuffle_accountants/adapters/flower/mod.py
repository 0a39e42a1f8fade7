"""The client mod of distributed noise: clip, then add a noise share.

`distributed_noise_mod` is the client half of
`strategies.DistributedNoiseFixedClipping`; the keys below are what the
server's training config tells it (SECAGG-REVEALED, SECAGG-HIDDEN).
"""

import math
from typing import Dict, Optional

from flwr.app import Array
from flwr.app import ArrayRecord
from flwr.app import Message
from flwr.app import MessageType
from flwr.app import MetricRecord
from flwr.app import MetricRecordValues
from flwr.app import RecordDict
from flwr.supercore.differential_privacy import compute_clip_model_update
import numpy as np

# Keys of the training config the server sends to `distributed_noise_mod`.
KEY_CLIPPING_NORM = 'dp-clipping-norm'
KEY_NOISE_SHARE = 'dp-noise-share-stdv'
KEY_PARTICIPATION = 'dp-participation'
KEY_CHECKIN_RATE = 'dp-checkin-rate'
# Metric of each reply: 1 if the client's update and noise share are in it.
KEY_PARTICIPANT = 'dp-participant'


def participant_noise_multiplier(noise_multiplier: float, num_users: int,
                                 checkin_rate: float) -> float:
  """σ_agg / √(q·n): each participant's share of the aggregate noise σ_agg·C.

  The sum of k shares N(0, (σ_agg C)² / (q n)) has standard deviation
  σ_agg C √(k / (q n)): σ_agg C at the expected cohort q n, as for
  ``accountant="distributed_checkin"`` in the Opacus adapter.
  """
  return noise_multiplier / math.sqrt(num_users * checkin_rate)


def uploader_noise_multiplier(noise_multiplier: float, num_users: int) -> float:
  """σ_agg / √n: every client's share when all n upload (``'hidden_count'``).

  All n uploads are summed, so the sum carries σ_agg C whatever the number
  of participants, which stays hidden.
  """
  return noise_multiplier / math.sqrt(num_users)


def _only_array_record(content, where: str) -> str:
  names = list(content.array_records)
  if len(names) != 1:
    raise ValueError(
        f'{where} holds {len(names)} ArrayRecords ({names}); distributed '
        'noise clips and noises one model update, so send exactly one.')
  return names[0]


def distributed_noise_mod(msg, ctxt, call_next):
  """Client mod of `DistributedNoiseFixedClipping`: clip, add a noise share.

  On a training message from the wrapper it reads the clipping norm C, the
  noise share s (σ_agg·C/√(q·n); σ_agg·C/√n with ``'hidden_count'``) and
  the participation model from the config. With ``'hidden'`` and
  ``'hidden_count'`` participation the client checks in by its own coin
  (probability q, from the operating system's randomness). A participant trains
  (the inner app), clips its update (model − global) to C and adds N(0, s² I) to
  it. A non-participant does not train: with ``'hidden'`` it replies with a zero
  update; with ``'hidden_count'`` with its noise share alone (a zero update plus
  N(0, s² I)), so that every upload looks alike. The reply's metric
  ``dp-participant`` (1 or 0) is summed by secure aggregation into the revealed
  count k; with ``'hidden_count'`` no such bit is sent (k stays hidden).

  Put it last among the mods that touch the parameters, as Flower's
  ``fixedclipping_mod``. It also serves a train function of its own
  (``@app.train('distributed_noise', mods=[distributed_noise_mod])`` with
  ``DistributedNoiseFixedClipping(..., train_action='distributed_noise')``).
  """
  if msg.metadata.message_type.split('.')[0] != MessageType.TRAIN:
    return call_next(msg, ctxt)
  key = _only_array_record(msg.content, 'the training message')
  config = next(iter(msg.content.config_records.values()), {})
  missing = [name for name in (KEY_CLIPPING_NORM, KEY_NOISE_SHARE,
                               KEY_PARTICIPATION, KEY_CHECKIN_RATE)
             if name not in config]
  if missing:
    raise KeyError(
        f'distributed_noise_mod needs {missing} in the training config; '
        'wrap the server strategy in DistributedNoiseFixedClipping.')
  record = msg.content[key]
  global_arrays = record.to_numpy_ndarrays()
  rng = np.random.default_rng()  # seeded from the OS's entropy
  participation = config[KEY_PARTICIPATION]
  participates = (participation == 'revealed'
                  or rng.random() < float(config[KEY_CHECKIN_RATE]))
  bit = None if participation == 'hidden_count' else int(participates)
  if participates:
    out_msg = call_next(msg, ctxt)
    if out_msg.has_error():
      return out_msg
    local = out_msg.content[_only_array_record(
        out_msg.content, 'the training reply')].to_numpy_ndarrays()
    compute_clip_model_update(local, global_arrays,
                              float(config[KEY_CLIPPING_NORM]))
  elif participation == 'hidden':
    return _reply(msg, key, record.keys(), global_arrays, participant=bit)
  else:  # 'hidden_count': the noise share alone, on the unchanged model
    local = global_arrays
  noisy = [np.asarray(array, dtype=np.float64) + rng.normal(
      0.0, float(config[KEY_NOISE_SHARE]), np.shape(array)) for array in local]
  return _reply(msg, key, record.keys(), noisy, participant=bit)


def _reply(msg, key: str, names, arrays, participant: Optional[int]):
  """The training reply: the (noisy) model and the participation bit.

  Client metrics (train loss, example counts) would be releases of their
  own, which nothing accounts: only the bit that secure aggregation sums is
  sent (none when `participant` is None: the count stays hidden), with
  FedAvg's weight key at the same value for every client.
  """
  metrics: Dict[str, MetricRecordValues] = {'num-examples': 1}
  if participant is not None:
    metrics[KEY_PARTICIPANT] = participant
  content = RecordDict({
      key: ArrayRecord(array_dict={
          name: Array(np.asarray(array))
          for name, array in zip(names, arrays, strict=True)}),
      'metrics': MetricRecord(metrics),
  })
  return Message(content=content, reply_to=msg)

