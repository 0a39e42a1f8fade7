"""Koskela, Heikkilä, Honkela, Figs. 1-3, with this library's sound methods.

Fig. 1: delta(eps) of T = 1..4 shuffled rounds (n = 10^4, eps0 = 4): the
certified PLD accountant against the certified RDP accountant and FMT21's
closed form. Fig. 2: epsilon against T for a hidden uniform sample (n = 10^5,
m = 1000, eps0 = 3, delta = 1e-5; the paper's Girgis comparison), PLD vs RDP
(WBK19 on the shuffle RDP). Fig. 3: k-RR adversaries (n = 1000, k = 4,
eps0 = log 13): epsilon against delta for T = 1, 4, 16 with the strong and
weak adversary pairs (KHH-KRR-STRONG / -WEAK) and the generic clone pair.

The paper's public numbers use the FMT23 clone pair, which is not valid for a
generic randomizer (docs/mathematics.md FMT23-UNPROVEN), so our generic curves
sit above them.

Run: python examples/koskela_figures.py --output figures  (about a minute)
"""

import dp_accounting
import numpy as np

import _figures
from _figures import pyplot
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import figure_style
from shuffle_accountants.pairs import fmt21


def figure_1(args):
  epsilons = np.linspace(0.1, 1.0, 8 if args.quick else 30)
  deltas = np.geomspace(1e-6, 0.1, 12 if args.quick else 30)
  event = ShuffleEvent(num_users=10**4, local_epsilon=4.0)
  figure, panels = pyplot.subplots(1, 4, figsize=(13, 3.6), sharey=True)
  for panel, rounds in zip(panels, (1, 2, 3, 4)):
    pld = ShufflePldAccountant().compose(event, rounds)
    rdp = ShuffleRdpAccountant().compose(event, rounds)
    closed = [fmt21.composed_closed_form_epsilon(10**4, 4.0, rounds, delta)
              for delta in deltas]
    for index, (label, xs, ys) in enumerate((
        ('PLD accountant', epsilons, [pld.get_delta(e) for e in epsilons]),
        ('RDP accountant', epsilons, [rdp.get_delta(e) for e in epsilons]),
        ('FMT21 closed form, composed', closed, deltas))):
      panel.plot(xs, ys, label=label, markevery=max(1, len(xs) // 10),
                 **figure_style.series_style(index))
    if min(closed) > 1.0:
      panel.text(0.97, 0.97,
                 f'FMT21 closed form:\nepsilon >= {min(closed):.2g}',
                 transform=panel.transAxes, ha='right', va='top', fontsize=8)
    panel.set(yscale='log', xlabel='epsilon', xlim=(0.1, 1.0),
              ylim=(1e-6, 1), title=f'T = {rounds}')
    panel.grid(True, which='both', alpha=0.3)
  panels[0].set_ylabel('delta')
  figure.suptitle('delta(epsilon) of T shuffled rounds, n = 10^4, eps0 = 4 '
                  '(Koskela et al., Fig. 1)')
  figure_style.legend_outside(panels[-1], [figure_style.UPPER])
  return _figures.save(figure, args.output, 'koskela_fig1_delta.png')


def figure_2(args):
  rounds = [10, 100, 1000] if args.quick else [10, 31, 100, 316, 1000, 3162,
                                                10000]
  event = dp_accounting.SampledWithoutReplacementDpEvent(
      10**5, 1000, ShuffleEvent(num_users=1000, local_epsilon=3.0))
  values = {'PLD accountant (KHH-SUBSAMPLED)': [],
            'RDP accountant (WBK19-THM9)': []}
  for index, count in enumerate(rounds):
    values['PLD accountant (KHH-SUBSAMPLED)'].append(
        ShufflePldAccountant().compose(event, count).get_epsilon(1e-5))
    values['RDP accountant (WBK19-THM9)'].append(
        ShuffleRdpAccountant().compose(event, count).get_epsilon(1e-5))
    _figures.progress('Fig. 2', index + 1, len(rounds))
  figure, axes = pyplot.subplots(figsize=(8, 4))
  for index, (label, series) in enumerate(values.items()):
    axes.plot(rounds, series, label=label, **figure_style.series_style(index))
  axes.set(xscale='log', yscale='log', xlabel='rounds T',
           ylabel='epsilon at delta = 1e-5',
           title='hidden sample of 1000 of 10^5 users, eps0 = 3 '
           '(Koskela et al., Fig. 2)')
  axes.title.set_fontsize(10)
  axes.grid(True, which='both', alpha=0.3)
  figure_style.legend_outside(axes, [figure_style.UPPER])
  return _figures.save(figure, args.output, 'koskela_fig2_subsampled.png')


def figure_3(args):
  deltas = 10.0 ** np.linspace(-4, -7, 5)
  local_epsilon = np.log(13.0)
  round_counts = (1, 4) if args.quick else (1, 4, 16)
  adversaries = {'strong adversary (KHH-KRR-STRONG)': 'strong',
                 'weak adversary (KHH-KRR-WEAK)': 'weak',
                 'generic clone pair (FMT21)': None}
  figure, panels = pyplot.subplots(1, len(round_counts),
                                   figsize=(4 * len(round_counts) + 2, 3.6))
  for panel, rounds in zip(panels, round_counts):
    for index, (label, adversary) in enumerate(adversaries.items()):
      if adversary is None:
        accountant = ShufflePldAccountant().compose(
            ShuffleEvent(num_users=1000, local_epsilon=local_epsilon), rounds)
      else:
        accountant = ShufflePldAccountant(krr_adversary=adversary).compose(
            ShuffleEvent(num_users=1000, local_epsilon=local_epsilon,
                         num_categories=4), rounds)
      panel.plot(deltas, [accountant.get_epsilon(d) for d in deltas],
                 label=label, **figure_style.series_style(index))
    panel.set(xscale='log', xlabel='delta', title=f'T = {rounds}')
    panel.grid(True, which='both', alpha=0.3)
  panels[0].set_ylabel('epsilon')
  figure.suptitle('4-RR, n = 1000, eps0 = log 13: certified epsilon per '
                  'adversary (Koskela et al., Fig. 3)')
  figure_style.legend_outside(panels[-1], [figure_style.UPPER])
  return _figures.save(figure, args.output, 'koskela_fig3_krr.png')


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  figure_1(args)
  figure_2(args)
  figure_3(args)


if __name__ == '__main__':
  main()
