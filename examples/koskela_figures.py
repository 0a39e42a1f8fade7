"""Koskela, Heikkilä, Honkela, Figs. 1-3, with this library's sound methods.

Fig. 1: delta(eps) of T = 1..4 shuffled rounds (n = 10^4, eps0 = 4): the
certified PLD accountant against the certified RDP accountant and FMT21's
closed form. Fig. 2: epsilon against T for a hidden uniform sample (n = 10^5,
m = 1000, eps0 = 3, delta = 1e-5; the paper's Girgis comparison), PLD vs RDP
(WBK19 on the shuffle RDP). Fig. 3: k-RR adversaries (n = 1000, k = 4,
eps0 = log 13): epsilon against delta for T = 1, 4, 16 with the strong and
weak adversary pairs (KHH-KRR-STRONG / -WEAK) and the generic clone pair.

The paper's public numbers use the FMT23 clone pair, which is not valid for a
generic randomizer (docs/mathematics.md W12), so our generic curves sit above them.

Run: python examples/koskela_figures.py --output figures  (about a minute)
"""

import dp_accounting
import numpy as np

import _figures
from _figures import pyplot
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.pld import fmt21


def figure_1(args):
  epsilons = np.linspace(0.1, 1.0, 8 if args.quick else 30)
  event = ShuffleEvent(num_users=10**4, local_epsilon=4.0)
  figure, axes = pyplot.subplots(figsize=(6, 4))
  for rounds in (1, 2, 3, 4):
    pld = ShufflePldAccountant().compose(event, rounds)
    rdp = ShuffleRdpAccountant().compose(event, rounds)
    line, = axes.plot(epsilons, [pld.get_delta(e) for e in epsilons],
                      label=f'PLD, T = {rounds}')
    axes.plot(epsilons, [rdp.get_delta(e) for e in epsilons], ':',
              color=line.get_color(), label=f'RDP, T = {rounds}')
  closed = [fmt21.closed_form_epsilon(10**4, 4.0, delta)
            for delta in np.geomspace(1e-6, 0.1, 30)]
  axes.plot(closed, np.geomspace(1e-6, 0.1, 30), 'k--',
            label='FMT21 closed form, T = 1')
  axes.set(yscale='log', xlabel='epsilon', ylabel='delta', xlim=(0.1, 1.0),
           ylim=(1e-6, 1), title='n = 10^4, eps0 = 4 (Koskela Fig. 1)')
  axes.grid(True, which='both', alpha=0.3)
  axes.legend(fontsize=7, ncol=2)
  return _figures.save(figure, args.output, 'koskela_fig1_delta.png')


def figure_2(args):
  rounds = [10, 100, 1000] if args.quick else [10, 31, 100, 316, 1000, 3162,
                                                10000]
  event = dp_accounting.SampledWithoutReplacementDpEvent(
      10**5, 1000, ShuffleEvent(num_users=1000, local_epsilon=3.0))
  values = {'PLD (KHH-SUBSAMPLED)': [], 'RDP (WBK19-THM9)': []}
  for index, count in enumerate(rounds):
    values['PLD (KHH-SUBSAMPLED)'].append(
        ShufflePldAccountant().compose(event, count).get_epsilon(1e-5))
    values['RDP (WBK19-THM9)'].append(
        ShuffleRdpAccountant().compose(event, count).get_epsilon(1e-5))
    _figures.progress('Fig. 2', index + 1, len(rounds))
  figure, axes = pyplot.subplots(figsize=(6, 4))
  for label, series in values.items():
    axes.plot(rounds, series, label=label, **_figures.line_styles('upper bound'))
  axes.set(xscale='log', yscale='log', xlabel='rounds T',
           ylabel='epsilon at delta = 1e-5',
           title='hidden sample 1000 of 10^5, eps0 = 3 (Koskela Fig. 2)')
  axes.grid(True, which='both', alpha=0.3)
  axes.legend(fontsize=8)
  return _figures.save(figure, args.output, 'koskela_fig2_subsampled.png')


def figure_3(args):
  deltas = 10.0 ** np.linspace(-4, -7, 5)
  local_epsilon = np.log(13.0)
  figure, axes = pyplot.subplots(figsize=(6, 4))
  adversaries = {'strong': dict(num_categories=4),
                 'weak': dict(num_categories=4),
                 'generic clone pair': {}}
  for rounds in ((1, 4) if args.quick else (1, 4, 16)):
    for name, fields in adversaries.items():
      kwargs = ({} if name == 'generic clone pair'
                else {'krr_adversary': name})
      accountant = ShufflePldAccountant(**kwargs).compose(
          ShuffleEvent(num_users=1000, local_epsilon=local_epsilon, **fields),
          rounds)
      axes.plot(deltas, [accountant.get_epsilon(d) for d in deltas],
                label=f'{name}, T = {rounds}', marker='o', markersize=3)
  axes.set(xscale='log', xlabel='delta', ylabel='epsilon',
           title='4-RR, n = 1000, eps0 = log 13 (Koskela Fig. 3)')
  axes.grid(True, which='both', alpha=0.3)
  axes.legend(fontsize=7, ncol=2)
  return _figures.save(figure, args.output, 'koskela_fig3_krr.png')


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  figure_1(args)
  figure_2(args)
  figure_3(args)


if __name__ == '__main__':
  main()
