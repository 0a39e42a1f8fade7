"""The computed numbers of docs/limits.md."""

import math

from .core import table


# The estimate's last digits follow the CPU's FFT round-off (6e-6 relative
# apart on two x86-64 machines at delta = 1e-8 after 1e5 rounds).
@table('limits.roundoff', machine_noise=2e-5)
def _roundoff_table():
  """epsilon of the composed PLD: round-off estimate against certificate.

  NOT-MONOTONE's estimate against ROUNDOFF-CERTIFIED's certificate.
  """
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants.pld import composition
  rows = []
  for num_users, rounds in ((10**5, 365), (10**6, 10**3), (10**6, 10**4),
                            (10**4, 10**5)):
    accountant = ShufflePldAccountant().compose(
        ShuffleEvent(num_users, local_epsilon=1.0), rounds)
    pld = accountant._composition().pld
    certified = composition.DirectProfile(pld)
    estimated = composition.DirectProfile(pld, certify=False)
    for delta in (1e-6, 1e-8):
      old, new = estimated.epsilon(delta), certified.epsilon(delta)
      rows.append([f'10^{round(math.log10(num_users))}', f'{rounds:,}',
                   f'{delta:.0e}', f'{old:.6f}', f'{new:.6f}'])
  return (['n', 'rounds', 'δ', 'ε, estimate (NOT-MONOTONE)',
           'ε, certified (ROUNDOFF-CERTIFIED)'],
          rows)
