"""The computed numbers of docs/dap.md (the DAP draft's rows under deletion)."""

import functools

from .core import sig
from .core import table
from .sums import DELTA
from .sums import DRAFT_POINTS
from .sums import DRAFT_USERS


def _event(num_users, bit_epsilon, domain_size=16):
  from shuffle_accountants import events
  from shuffle_accountants import randomizers
  return events.SumOfReportsEvent(num_users, randomizers.SymmetricUnaryEncoding(
      domain_size, 2 * bit_epsilon))


def _relation(deletion):
  from dp_accounting import NeighboringRelation
  return (NeighboringRelation.REPLACE_SPECIAL if deletion
          else NeighboringRelation.REPLACE_ONE)


@functools.lru_cache(maxsize=None)
def certified(num_users, bit_epsilon, deletion=True):
  from shuffle_accountants import ShufflePldAccountant
  return ShufflePldAccountant(_relation(deletion)).compose(
      _event(num_users, bit_epsilon)).get_epsilon(DELTA)


@functools.lru_cache(maxsize=None)
def exact_pair(bit_epsilon):
  from shuffle_accountants.pld import sums
  return sums.sum_release_lower_bound(_event(DRAFT_USERS, bit_epsilon), DELTA,
                                      deletion=True)


@functools.lru_cache(maxsize=None)
def smallest_batch(bit_epsilon, target):
  from shuffle_accountants import calibration
  from shuffle_accountants import randomizers
  return calibration.calibrate_num_users(
      target, DELTA, randomizers.SymmetricUnaryEncoding(16, 2 * bit_epsilon),
      release='sum', relation=_relation(True))


@table('dap.client', slow=True)
def _client():
  header = ['per-bit ε0', 'DAP draft (deletion)',
            'exact pair, deletion (LB-SUM-DELETION)',
            'certified, deletion (SUM-OF-BITS-DELETION)', 'certified / exact',
            'before: replace-one (SUM-OF-BITS)', 'replace-one / deletion']
  rows = []
  for bit_epsilon, draft in DRAFT_POINTS:
    ours, exact = certified(DRAFT_USERS, bit_epsilon), exact_pair(bit_epsilon)
    replace_one = certified(DRAFT_USERS, bit_epsilon, False)
    rows.append([f'{bit_epsilon:g}', f'{draft:g}', sig(exact), sig(ours),
                 sig(ours / exact, 4), sig(replace_one),
                 sig(replace_one / ours, 3)])
  return header, rows


# Seven digits show that n - 1 misses the target; their last digit moves
# between machines (0.9059927 / 0.9059928 and 1.527941 / 1.527942 seen
# for the same calls).
@table('dap.batch', slow=True, machine_noise=2e-6)
def _batch():
  header = ['per-bit ε0', 'target ε (the draft\'s)',
            'smallest batch n, deletion (certified)', 'certified ε at n',
            'certified ε at n − 1']
  rows = []
  for bit_epsilon, draft in DRAFT_POINTS:
    n = smallest_batch(bit_epsilon, draft)
    rows.append([f'{bit_epsilon:g}', f'{draft:g}', str(n),
                 sig(certified(n, bit_epsilon), 7),
                 sig(certified(n - 1, bit_epsilon), 7)])
  return header, rows
