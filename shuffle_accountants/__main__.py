"""Default scenario: `python -m shuffle_accountants` prints a certified epsilon.

A telemetry deployment: 10^6 users report through an eps0 = 1 local
randomizer every round for 1,000 rounds; what does the shuffle model certify at
delta = 10^-6, compared with the local guarantee alone?
"""

import time

from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShuffleRdpAccountant

NUM_USERS = 10**6
LOCAL_EPSILON = 1.0
ROUNDS = 1000
DELTA = 1e-6


def main() -> None:
  start = time.perf_counter()
  accountant = ShuffleRdpAccountant()
  accountant.compose(ShuffleEvent(num_users=NUM_USERS,
                                  local_epsilon=LOCAL_EPSILON), count=ROUNDS)
  epsilon, order = accountant.get_epsilon_and_optimal_order(DELTA)
  elapsed = time.perf_counter() - start
  winner = accountant.explain(DELTA)[0]['bound']
  print(f'{ROUNDS} shuffled rounds, {NUM_USERS:,} users, local epsilon '
        f'{LOCAL_EPSILON} each')
  print(f'  certified epsilon (upper bound) at delta={DELTA:g}: {epsilon:.4f}')
  print(f'  optimal RDP order {order:g}, winning bound: {winner}')
  print(f'  without shuffling (basic composition): '
        f'{ROUNDS * LOCAL_EPSILON:g}')
  print(f'  computed in {elapsed:.2f} s')


if __name__ == '__main__':
  main()
