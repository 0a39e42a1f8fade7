"""Girgis et al., Figs. 2 and 4, with this library's sound methods.

Fig. 2: RDP of one shuffled eps0-LDP round against the order, for
GIRGIS-UB1, GIRGIS-UB2, the FMT21 clone pair (KHH-RDP-CLONE, what
ShuffleRdpAccountant takes the min with) and the GIRGIS-LB lower bound.
Fig. 4: epsilon after T rounds (n = 10^6, eps0 = 0.5, delta = 1e-6, the
paper's "8x" setting at T = 10^5) for the certified accountants, the
GIRGIS-UB1 RDP route, FMT21's closed form composed by PLD, and the exact
epsilon of binary RR on the all-equal pair (a lower bound).

Run: python examples/girgis_figures.py --output figures  (about a minute)
"""

import numpy as np

import _figures
from _figures import pyplot
from shuffle_accountants import clones
from shuffle_accountants import girgis
from shuffle_accountants import protocols


def figure_2(args):
  orders = np.unique(np.round(np.geomspace(2, 200 if args.quick else 1000,
                                           15 if args.quick else 40)))
  figure, panels = pyplot.subplots(1, 2, figsize=(10, 4))
  for panel, local_epsilon in zip(panels, (0.1, 3.0)):
    num_users = 10**4
    curves = {
        'GIRGIS-UB1 (upper bound)': girgis.girgis_ub1(num_users,
                                                      local_epsilon, orders),
        'GIRGIS-UB2 (upper bound)': girgis.girgis_ub2(num_users,
                                                      local_epsilon, orders),
        'clone pair, KHH-RDP-CLONE (upper bound)': clones.clone_pair_rdp(
            num_users, local_epsilon, orders),
        'GIRGIS-LB (lower bound)': girgis.girgis_lower_bound(
            num_users, local_epsilon, orders),
    }
    for label, values in curves.items():
      panel.plot(orders, values, label=label, **_figures.line_styles(
          'lower bound' if 'lower' in label else 'upper bound'))
    panel.set(xscale='log', yscale='log', xlabel='order lambda',
              ylabel='RDP', title=f'n = {num_users}, eps0 = {local_epsilon}')
    panel.grid(True, which='both', alpha=0.3)
  panels[0].legend(fontsize=7)
  return _figures.save(figure, args.output, 'girgis_fig2_rdp.png')


def figure_4(args):
  rounds = ([1, 100, 10**4, 10**5] if args.quick
            else [1, 10, 100, 1000, 10**4, 10**5])
  base = protocols.Protocol(num_users=10**6, local_epsilon=0.5, delta=1e-6)
  methods = ['pld', 'rdp', 'girgis-ub1', 'fmt21-closed', 'binary-rr-pair']
  series = {name: [] for name in methods}
  for index, count in enumerate(rounds):
    for name in methods:
      series[name].append(protocols.evaluate(base.replace(rounds=count),
                                             name).epsilon)
    _figures.progress('Fig. 4', index + 1, len(rounds))
  figure, axes = pyplot.subplots(figsize=(6, 4))
  for name, values in series.items():
    kind = protocols.METHODS[name][0]
    axes.plot(rounds, values, label=f'{name} ({kind})',
              **_figures.line_styles(kind))
  axes.set(xscale='log', yscale='log', xlabel='rounds T',
           ylabel='epsilon at delta = 1e-6',
           title='n = 10^6, eps0 = 0.5 (Girgis Fig. 4a)')
  axes.grid(True, which='both', alpha=0.3)
  axes.legend(fontsize=7)
  print(f'{"T":>7} ' + ' '.join(f'{name:>15}' for name in methods))
  for row, count in enumerate(rounds):
    print(f'{count:>7} ' + ' '.join(f'{series[name][row]:>15.5g}'
                                    for name in methods))
  last = len(rounds) - 1
  print(f'T = 10^5: FMT21 closed form / certified PLD = '
        f'{series["fmt21-closed"][last] / series["pld"][last]:.1f}x '
        '(the paper reports 8x for GIRGIS-UB1 against FMT20 numerics with '
        'strong composition)')
  return _figures.save(figure, args.output, 'girgis_fig4_rounds.png')


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  figure_2(args)
  figure_4(args)


if __name__ == '__main__':
  main()
