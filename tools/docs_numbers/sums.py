"""The computed numbers of docs/sums.md."""

import functools

from .core import sig
from .core import table

# The IETF draft's points (draft-wang-ppm-differential-privacy, Table 1):
# per-bit epsilon, n = 10^5, delta = 10^-9, and its stated epsilon.
DRAFT_POINTS = ((5.0, 0.317), (6.5, 0.906), (7.0, 1.528))
DRAFT_USERS = 10**5
DELTA = 1e-9
TARGET_USERS = (10**5, 10**6)
TARGET_BIT_EPSILONS = (0.5, 2.0, 5.0, 8.0)


def _event(num_users, bit_epsilon, domain_size=16):
  from shuffle_accountants import events
  from shuffle_accountants import randomizers
  return events.SumOfReportsEvent(num_users, randomizers.SymmetricUnaryEncoding(
      domain_size, 2 * bit_epsilon))


@functools.lru_cache(maxsize=None)
def certified(num_users, bit_epsilon, rounds=1):
  from shuffle_accountants import ShufflePldAccountant
  return ShufflePldAccountant().compose(
      _event(num_users, bit_epsilon), rounds).get_epsilon(DELTA)


@functools.lru_cache(maxsize=None)
def lower(num_users, bit_epsilon, rounds=1):
  from shuffle_accountants.pld import sums
  return sums.sum_release_lower_bound(_event(num_users, bit_epsilon), DELTA,
                                      rounds)


def _shuffle(randomizer, rounds=1):
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  return ShufflePldAccountant().compose(
      ShuffleEvent(DRAFT_USERS, randomizer=randomizer), rounds).get_epsilon(
          DELTA)


@table('sums.draft', slow=True)
def _draft():
  from shuffle_accountants import randomizers
  header = ['per-bit ε0', 'IETF draft', 'lower bound (LB-SUM-CONFIGURATIONS)',
            'certified (SUM-OF-BITS)', 'certified / lower',
            'shuffle of the vectors', 'per-coordinate shuffles, composed']
  rows = []
  for bit_epsilon, draft in DRAFT_POINTS:
    ours = certified(DRAFT_USERS, bit_epsilon)
    below = lower(DRAFT_USERS, bit_epsilon)
    rows.append([f'{bit_epsilon:g}', f'{draft:g}', sig(below), sig(ours),
                 sig(ours / below, 4), sig(_shuffle(
                     randomizers.SymmetricUnaryEncoding(16, 2 * bit_epsilon))),
                 sig(_shuffle(randomizers.KRandomizedResponse(2, bit_epsilon),
                              rounds=2))])
  return header, rows


# The 365-round certificate at eps0 = 8 sits near a rounding boundary of
# its fourth digit, which the CPU's round-off moves (41.20 / 41.21 seen).
@table('sums.targets', slow=True, machine_noise=3e-4)
def _targets():
  header = ['n', 'per-bit ε0', '1 round: certified', 'lower', 'ratio',
            '365 rounds: certified', 'lower', 'ratio']
  rows = []
  for num_users in TARGET_USERS:
    for bit_epsilon in TARGET_BIT_EPSILONS:
      row = [f'10^{len(str(num_users)) - 1}', f'{bit_epsilon:g}']
      for rounds in (1, 365):
        ours = certified(num_users, bit_epsilon, rounds)
        below = lower(num_users, bit_epsilon, rounds)
        row += [sig(ours), sig(below) if below else 'n/a',
                sig(ours / below, 4) if below else 'n/a']
      rows.append(row)
  return header, rows


# Per-bit rates beyond the two named encodings (UNARY-ENCODING-RATES), and
# RAPPOR's (f, p, q) with one hash function (RAPPOR-ONE-REPORT): d = 16.
RATE_USERS = (10**5, 10**6)
RAPPOR_SETTINGS = ((0.5, 0.5, 0.75), (0.25, 0.25, 0.75))
PLAIN_RATES = ((0.8, 0.05),)


def _rates_row(label, randomizer, longitudinal):
  from dp_accounting import NeighboringRelation

  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import events
  p, q = randomizer.bit_probabilities()
  row = [label, f'{p:.4g}, {q:.4g}', sig(randomizer.local_epsilon)]
  for num_users in RATE_USERS:
    event = events.SumOfReportsEvent(num_users, randomizer)
    for relation in (NeighboringRelation.REPLACE_ONE,
                     NeighboringRelation.REPLACE_SPECIAL):
      row.append(sig(ShufflePldAccountant(relation).compose(
          event).get_epsilon(DELTA)))
  return row + [longitudinal]


@table('sums.rates', slow=True)
def _rates():
  from shuffle_accountants import randomizers
  header = ['randomizer', 'rates p, q', 'ε0 of one report',
            'n = 10^5: replace-one', 'deletion', 'n = 10^6: replace-one',
            'deletion', 'memoized, every round (ε∞)']
  rows = [_rates_row(f'UnaryEncoding(16, {p:g}, {q:g})',
                     randomizers.UnaryEncoding(16, p, q), 'n/a (fresh coins)')
          for p, q in PLAIN_RATES]
  for f, p, q in RAPPOR_SETTINGS:
    rows.append(_rates_row(
        f'RAPPOR f = {f:g}, p = {p:g}, q = {q:g}',
        randomizers.UnaryEncoding.from_rappor(16, f, p, q),
        sig(randomizers.rappor_longitudinal_epsilon(f))))
  return header, rows
