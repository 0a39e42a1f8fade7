"""The computed numbers of docs/checkin.md (and the README's cohorts)."""

import functools

from .core import benchmark
from .core import power_of_ten
from .core import sig
from .core import table
from .core import value

# ---- docs/checkin.md

@functools.lru_cache(maxsize=None)
def _checkin_row(rate: float, kind: str, local: float):
  """(PLD, RDP, central DP-SGD) as benchmarks/checkin.py --quick --rdp."""
  from dp_accounting import dp_event
  from dp_accounting.pld import pld_privacy_accountant

  from shuffle_accountants import CheckInEvent
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import ShuffleRdpAccountant
  keyword = 'local_epsilon' if kind == 'eps0' else 'noise_multiplier'
  event = CheckInEvent(60_000, rate, **{keyword: local})
  pld, rdp = (accountant.compose(event, 100).get_epsilon(1 / 60_000)
              for accountant in (ShufflePldAccountant(),
                                 ShuffleRdpAccountant()))
  central = None
  if kind == 'sigma':
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.PoissonSampledDpEvent(
        rate, dp_event.GaussianDpEvent(local)), 100)
    central = accountant.get_epsilon(1 / 60_000)
  return pld, rdp, central


CHECKIN_ROWS = [(1e-3, 'eps0', 1.0), (1e-3, 'eps0', 2.0), (1e-3, 'eps0', 8.0),
                (1e-3, 'sigma', 0.86), (1e-3, 'sigma', 2.0),
                (1e-3, 'sigma', 5.0), (1e-2, 'eps0', 1.0), (1e-2, 'eps0', 2.0),
                (1e-2, 'sigma', 2.0), (0.1, 'eps0', 1.0), (0.1, 'eps0', 2.0),
                (0.1, 'sigma', 2.0)]


@table('checkin.numbers', slow=True)
def _checkin_numbers():
  header = ['γ', 'local randomizer', 'PLD ε', 'RDP ε', 'central DP-SGD ε']
  rows = []
  for rate, kind, local in CHECKIN_ROWS:
    pld, rdp, central = _checkin_row(rate, kind, local)
    rows.append([power_of_ten(rate) if rate < 0.1 else f'{rate:g}',
                 f'{"ε0" if kind == "eps0" else "σ"} = {local:g}',
                 sig(pld, 3), sig(rdp, 3),
                 '' if central is None else sig(central, 3)])
  return header, rows


@value('checkin.local_over_central', slow=True)
def _checkin_local_over_central():
  ratios = [pld / central for pld, _, central in
            (_checkin_row(*row) for row in CHECKIN_ROWS) if central]
  return f'{min(ratios):.0f}–{max(ratios):.0f}'


@value('checkin.gaussian_rdp', slow=True)
def _checkin_gaussian_rdp():
  return sig(_checkin_row(1e-3, 'sigma', 2.0)[1], 3)


@value('checkin.gaussian_pld', slow=True)
def _checkin_gaussian_pld():
  return sig(_checkin_row(1e-3, 'sigma', 2.0)[0], 3)


@functools.lru_cache(maxsize=None)
def _checkin_blanket_rows():
  return benchmark('checkin').blanket_table()


@table('checkin.blanket', slow=True)
def _checkin_blanket_table():
  """benchmarks/checkin.py --blanket without its times.

  See issue 34 and CHECKIN-BLANKET.
  """
  header = ['n', 'γ', 'ε0', 'rounds', 'exact pair (lower bound)',
            'k = 2 before', 'k = 2 now', 'now / pair', 'generic before',
            'generic now', 'now / pair']
  rows = []
  for n, gamma, eps0, rounds, exact, *results in _checkin_blanket_rows():
    row = [f'{n:,}', f'{gamma:g}', f'{eps0:g}', str(rounds),
           '—' if exact is None else sig(exact, 3)]
    for before, after, _ in (results[:3], results[3:]):
      row += [sig(before, 3), sig(after, 3),
              '—' if exact is None else f'{after / exact:.2f}×']
    rows.append(row)
  return header, rows


@value('checkin.blanket_moved', slow=True)
def _checkin_blanket_moved():
  """How far CHECKIN-BLANKET moved epsilon at the table's points.

  As after / before.
  """
  ratios = [after / before for row in _checkin_blanket_rows()
            for before, after, _ in (row[5:8], row[8:11])]
  return f'{min(ratios):.2f}–{max(ratios):.2f}'


@value('checkin.rdp_over_pld_100', slow=True)
def _checkin_rdp_over_pld_100():
  """RDP over PLD epsilon after BLANKET-RDP.

  At the blanket table's 100-round points.
  """
  from shuffle_accountants import CheckInEvent
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import ShuffleRdpAccountant
  checkin = benchmark('checkin')
  ratios = []
  for n, gamma, eps0, rounds in checkin.BLANKET_POINTS:
    if rounds != 100:
      continue
    for categories in (2, None):
      event = CheckInEvent(n, gamma, local_epsilon=eps0,
                           num_categories=categories)
      rdp, pld = (accountant.compose(event, rounds).get_epsilon(
          checkin.BLANKET_DELTA) for accountant in (ShuffleRdpAccountant(),
                                                    ShufflePldAccountant()))
      ratios.append(rdp / pld)
  return f'{min(ratios):.2f}–{max(ratios):.2f}'


@functools.lru_cache(maxsize=None)
def _issue_16_rdp():
  from shuffle_accountants import CheckInEvent
  from shuffle_accountants import ShuffleRdpAccountant
  accountant = ShuffleRdpAccountant(orders=[1.5, 2.0, 3.0])
  accountant.compose(CheckInEvent(num_users=10, checkin_rate=0.001,
                                  local_epsilon=3.0, num_categories=3))
  return ' / '.join(sig(rdp, 3)
                    for rdp in accountant.contributions[0].bound.rdp)


value('checkin.issue_16_now')(_issue_16_rdp)


# ---- docs/checkin.md (distributed check-in) and the README

DISTRIBUTED_SETTINGS = [(60_000, 256)] + [(10**6, cohort) for cohort in
                                          (10, 100, 1_000, 10_000, 100_000)]


@functools.lru_cache(maxsize=None)
def _distributed_row(num_users: int, cohort: int):
  """benchmarks/distributed_checkin.py's row: sigma_agg 1, 2,340 steps."""
  return benchmark('distributed_checkin').row(num_users, cohort, 1.0, 2340,
                                               with_rdp=False)


def _distributed_target():
  return _distributed_row(*DISTRIBUTED_SETTINGS[0])


@table('checkin.distributed', slow=True)
def _checkin_distributed():
  header = ['n', 'qn', 'σ per participant', 'PLD ε', 'SECAGG-HIDDEN pair',
            'PLD / pair', 'central a/r', 'central r-1']
  rows = []
  for num_users, cohort in DISTRIBUTED_SETTINGS:
    r = _distributed_row(num_users, cohort)
    rows.append([f'{num_users:,}' if num_users < 10**6
                 else power_of_ten(num_users),
                 f'{cohort:g}' if cohort < 10**4 else power_of_ten(cohort),
                 f'{r["sigma"]:.3g}', sig(r['pld'], 4), sig(r['pair'], 4),
                 sig(r['ratio'], 4), sig(r['central_add_remove'], 4),
                 sig(r['central_replace_one'], 4)])
  return header, rows


for _key, _field, _digits in (('pld', 'pld', 4), ('pair', 'pair', 3),
                              ('ratio', 'ratio', 4),
                              ('central_add_remove', 'central_add_remove', 3),
                              ('central_replace_one', 'central_replace_one',
                               3)):
  value(f'checkin.distributed_{_key}', slow=True)(
      functools.partial(lambda f, d: sig(_distributed_target()[f], d),
                        _field, _digits))


@value('checkin.distributed_large_cohort_ratio', slow=True)
def _distributed_large_cohort_ratio():
  return sig(_distributed_row(*DISTRIBUTED_SETTINGS[-1])['ratio'], 3)


@functools.lru_cache(maxsize=None)
def _distributed_target_event():
  import math

  from shuffle_accountants import DistributedCheckInEvent
  return DistributedCheckInEvent(60_000, 256 / 60_000, 1.0 / math.sqrt(256),
                                 participation='hidden')


@value('checkin.distributed_rdp', slow=True)
def _distributed_rdp():
  from shuffle_accountants import ShuffleRdpAccountant
  return sig(ShuffleRdpAccountant().compose(_distributed_target_event(), 2340)
             .get_epsilon(1e-5), 3)


@value('checkin.distributed_local_noise', slow=True)
def _distributed_local_noise():
  """CheckInEvent with each participant's noise at sigma_agg = 1."""
  from shuffle_accountants import CheckInEvent
  from shuffle_accountants import ShufflePldAccountant
  event = CheckInEvent(60_000, 256 / 60_000, noise_multiplier=1.0)
  return sig(ShufflePldAccountant().compose(event, 2340).get_epsilon(1e-5), 4)
