"""Girgis et al., Figs. 2 and 4, with this library's sound methods.

Fig. 2: RDP of one shuffled eps0-LDP round against the order, n and eps0, for
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
from shuffle_accountants import figure_style
from shuffle_accountants.cli import protocols
from shuffle_accountants.rdp import clone
from shuffle_accountants.rdp import girgis


def _rdp_curves(num_users, local_epsilon, orders):
  return {
      'GIRGIS-UB1 (upper bound)': girgis.girgis_ub1(num_users, local_epsilon,
                                                    orders),
      'GIRGIS-UB2 (upper bound)': girgis.girgis_ub2(num_users, local_epsilon,
                                                    orders),
      'clone pair, KHH-RDP-CLONE (upper bound)': clone.clone_pair_rdp(
          num_users, local_epsilon, orders),
      'GIRGIS-LB (lower bound)': girgis.girgis_lower_bound(
          num_users, local_epsilon, orders),
  }


def _sweep(parameter_values, curve_at):
  """Curves at order 100 as one parameter varies: {label: [values]}."""
  columns = [curve_at(value) for value in parameter_values]
  return {label: [float(column[label][0]) for column in columns]
          for label in columns[0]}


def figure_2(args):
  """Panels (a), (d): against the order; (b): against n; (c): against eps0."""
  orders = np.unique(np.round(np.geomspace(2, 200 if args.quick else 1000,
                                           15 if args.quick else 40)))
  order = np.array([100.0])
  users = np.geomspace(10**3, 10**7, 5 if args.quick else 9).astype(int)
  local_epsilons = np.linspace(0.1, 3.0, 5 if args.quick else 12)
  panels_data = [
      ('(a) n = 10^4, eps0 = 0.1', 'order', orders,
       _rdp_curves(10**4, 0.1, orders)),
      ('(d) n = 10^4, eps0 = 3', 'order', orders,
       _rdp_curves(10**4, 3.0, orders)),
      ('(b) eps0 = 0.1, order 100', 'n', users,
       _sweep(users, lambda n: _rdp_curves(int(n), 0.1, order))),
      ('(c) n = 10^4, order 100', 'eps0', local_epsilons,
       _sweep(local_epsilons, lambda e: _rdp_curves(10**4, float(e), order))),
  ]
  figure, panels = pyplot.subplots(2, 2, figsize=(12, 7))
  for panel, (title, xlabel, xs, curves) in zip(panels.flat, panels_data):
    for index, (label, values) in enumerate(curves.items()):
      panel.plot(xs, values, label=label,
                 markevery=max(1, len(xs) // 12),
                 **figure_style.series_style(index, _kind(label)))
    panel.set(xscale='linear' if xlabel == 'eps0' else 'log', yscale='log',
              xlabel=xlabel, ylabel='RDP', title=title)
    panel.grid(True, which='both', alpha=0.3)
  figure.suptitle('RDP of one shuffled eps0-LDP round (Girgis et al., Fig. 2)')
  figure_style.legend_outside(panels[0, 1], [_kind(label) for label in curves])
  return _figures.save(figure, args.output, 'girgis_fig2_rdp.png')


def _kind(label):
  return figure_style.LOWER if 'lower' in label else figure_style.UPPER


LABELS = {'pld': 'PLD accountant', 'rdp': 'RDP accountant',
          'girgis-ub1': 'GIRGIS-UB1 route',
          'fmt21-closed': 'FMT21 closed form, composed',
          'binary-rr-pair': 'binary RR, exact pair (lower bound)'}


def figure_4(args):
  """Panels (a) eps0 = 0.5 and (d) eps0 = 2, n = 10^6, against T."""
  rounds = ([1, 100, 10**4, 10**5] if args.quick
            else [1, 10, 100, 1000, 10**4, 10**5])
  methods = ['pld', 'rdp', 'girgis-ub1', 'fmt21-closed', 'binary-rr-pair']
  # The CLI skips the lower bound above 10^4 rounds to stay fast; this
  # offline figure pays its ~10 s at 10^5.
  protocols.MAX_LOWER_BOUND_ROUNDS = max(rounds)
  figure, panels = pyplot.subplots(1, 2, figsize=(12, 4.2))
  for panel, local_epsilon in zip(panels, (0.5, 2.0)):
    base = protocols.Protocol(num_users=10**6, local_epsilon=local_epsilon,
                              delta=1e-6)
    series = {name: [] for name in methods}
    for index, count in enumerate(rounds):
      for name in methods:
        # None: the method skips that point (e.g. FMT21's closed form past
        # its grid limit); left out of the curve and printed as '-'.
        epsilon = protocols.evaluate(base.replace(rounds=count),
                                     name).epsilon
        series[name].append(np.nan if epsilon is None else epsilon)
      _figures.progress(f'Fig. 4, eps0 = {local_epsilon}', index + 1,
                        len(rounds))
    for index, (name, values) in enumerate(series.items()):
      panel.plot(rounds, values, label=LABELS[name],
                 **figure_style.series_style(index, protocols.METHODS[name][0]))
    panel.set(xscale='log', yscale='log', xlabel='rounds T',
              ylabel='epsilon at delta = 1e-6',
              title=f'({"ad"[local_epsilon > 1]}) n = 10^6, '
              f'eps0 = {local_epsilon:g}')
    panel.grid(True, which='both', alpha=0.3)
    print(f'eps0 = {local_epsilon}')
    print(f'{"T":>7} ' + ' '.join(f'{name:>15}' for name in methods))
    for row, count in enumerate(rounds):
      print(f'{count:>7} ' + ' '.join(f'{series[name][row]:>15.5g}'
                                      if not np.isnan(series[name][row])
                                      else f'{"-":>15}'
                                      for name in methods))
    last = len(rounds) - 1
    closed = max(row for row in range(len(rounds))
                 if not np.isnan(series['fmt21-closed'][row]))
    print(f'T = {rounds[closed]}: FMT21 closed form / certified PLD = '
          f'{series["fmt21-closed"][closed] / series["pld"][closed]:.1f}x; '
          f'T = {rounds[last]}: GIRGIS-UB1 / PLD = '
          f'{series["girgis-ub1"][last] / series["pld"][last]:.2f}x')
  figure.suptitle('epsilon after T shuffled rounds at delta = 1e-6 '
                  '(Girgis et al., Fig. 4)')
  figure_style.legend_outside(panels[-1], [protocols.METHODS[name][0]
                                           for name in methods])
  return _figures.save(figure, args.output, 'girgis_fig4_rounds.png')


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  figure_2(args)
  figure_4(args)


if __name__ == '__main__':
  main()
