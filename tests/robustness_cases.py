"""Runs random accountant calls over the documented ranges; prints JSON lines.

Run as a script (by tests/cross_route/test_robustness.py) in a subprocess with a
timeout. Each case runs in a child forked from this small process (its
numerical stack imported, nothing computed), whose resident memory is capped
on its own: the cap bounds one public call, not what earlier unrelated
ledgers left in caches or in the allocator, and a runaway case fails the
test instead of hanging or exhausting CI.

  python robustness_cases.py SEED COUNT KIND CAP_BYTES [PART PARTS]

With PART and PARTS, the same COUNT cases are drawn and only those whose
index is PART modulo PARTS run, so that a sweep can be shared by workers.
"""

import json
import math
import os
import random
import resource
import sys
import time
import traceback
import warnings

import peak_memory

DELTAS = (1e-300, 1e-30, 1e-12, 1e-5, 0.1, 0.9)


def _log_uniform(rng, low, high):
  return math.exp(rng.uniform(math.log(low), math.log(high)))


def _event(rng):
  """A random event over the documented ranges, with its pure eps0 or None."""
  from shuffle_accountants import CheckInEvent
  from shuffle_accountants import ShuffleEvent
  num_users = int(_log_uniform(rng, 1, 1e10))
  kind = rng.choice(['shuffle', 'krr', 'checkin', 'gaussian'])
  local_epsilon = rng.choice([0.0, 20.0, rng.uniform(0, 20),
                              _log_uniform(rng, 1e-6, 20)])
  rate = rng.choice([1e-12, 1.0, _log_uniform(rng, 1e-12, 1)])
  if kind == 'shuffle':
    return ShuffleEvent(num_users, local_epsilon), local_epsilon
  if kind == 'krr':
    return (ShuffleEvent(max(num_users, 1), local_epsilon,
                         num_categories=rng.choice([2, 3, 10, 1000])),
            local_epsilon)
  if kind == 'checkin':
    return CheckInEvent(num_users, rate, local_epsilon=local_epsilon), \
        local_epsilon
  sigma = rng.choice([1e-3, 1e5, _log_uniform(rng, 1e-3, 1e5)])
  return CheckInEvent(num_users, rate, noise_multiplier=sigma), None


def _run(accountant_type, event, rounds, local_epsilon) -> None:
  """One case: compose, query, print its JSON line."""
  accountant = accountant_type()
  start = time.perf_counter()
  accountant.compose(event, rounds)
  epsilons = [accountant.get_epsilon(delta) for delta in DELTAS]
  deltas = [accountant.get_delta(e) for e in (0.0, 1.0, 10.0)]
  print(json.dumps(dict(
      event=repr(event), rounds=rounds, local_epsilon=local_epsilon,
      deltas=DELTAS, epsilons=epsilons, delta_at=deltas,
      seconds=time.perf_counter() - start,
      peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)),
        flush=True)


def main(seed: int, count: int, accountant_name: str, cap_bytes: int,
         part: int = 0, parts: int = 1) -> None:
  import shuffle_accountants
  accountant_type = getattr(shuffle_accountants, accountant_name)
  # Quiet by default: a warning escaping a public call on valid input fails
  # the case (import-time deprecations of dependencies are not ours).
  warnings.simplefilter('error')
  rng = random.Random(seed)
  for index in range(count):
    event, local_epsilon = _event(rng)
    rounds = int(rng.choice([1, 10**9, _log_uniform(rng, 1, 1e9)]))
    if index % parts != part:
      continue
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
      code = 0
      try:
        _run(accountant_type, event, rounds, local_epsilon)
      except BaseException:
        traceback.print_exc()
        code = 1
      sys.stdout.flush()
      sys.stderr.flush()
      os._exit(code)
    watched = peak_memory.watch(pid, float('inf'), cap_bytes)
    if watched.reason or watched.status != 0:
      sys.exit(f'{event!r} x {rounds}: {watched.reason or "failed"}')


if __name__ == '__main__':
  main(*(int(arg) for arg in sys.argv[1:3]), sys.argv[3],
       *(int(arg) for arg in sys.argv[4:]))
