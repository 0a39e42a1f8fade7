"""The computed numbers of docs/pld_accountant.md."""

from .core import power_of_ten
from .core import sig
from .core import table


@table('pld.comparison', slow=True)
def _pld_comparison():
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  from shuffle_accountants import ShuffleRdpAccountant
  from shuffle_accountants.pairs import fmt21
  from shuffle_accountants.pld import lower_bounds
  header = ['ε0', 'n', 'T', 'PLD (ours)', 'RDP (ours)', 'FMT21 closed',
            'lower bound']
  settings = [(1.0, 10**4, 1), (1.0, 10**4, 10**4), (1.0, 10**6, 1),
              (1.0, 10**6, 10**4), (1.0, 10**9, 1), (1.0, 10**9, 10**4),
              (4.0, 10**4, 1), (4.0, 10**6, 1), (4.0, 10**6, 10**4),
              (4.0, 10**9, 10**4)]
  rows = []
  for local_epsilon, num_users, rounds in settings:
    cells = [f'{local_epsilon:g}', power_of_ten(num_users),
             power_of_ten(rounds)]
    for accountant in (ShufflePldAccountant(), ShuffleRdpAccountant()):
      accountant.compose(ShuffleEvent(num_users, local_epsilon), rounds)
      cells.append(sig(accountant.get_epsilon(1e-6), 4))
    if fmt21.condition_holds_unchecked(num_users, local_epsilon,
                                       1e-6 / (2 * rounds)):
      cells.append(sig(fmt21.composed_closed_form_epsilon(
          num_users, local_epsilon, rounds, 1e-6), 4))
    else:
      cells.append(f'{local_epsilon:g} (condition fails)')
    cells.append(sig(lower_bounds.binary_rr_all_equal_pair_epsilon_lower_bound(
        num_users, local_epsilon, 1, 1e-6), 4) if rounds == 1
                 and num_users <= 10**6 else '')
    rows.append(cells)
  return header, rows
