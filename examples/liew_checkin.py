"""Liew, Hasegawa, Takahashi's check-in settings, certified.

Table 2 (100 rounds, n = 10^4, delta = 1/n): epsilon of shuffled check-in
with pure eps0-LDP reports, next to the numbers the paper printed. Those came
from pipelines that convert (eps, delta) into RDP with LIEW-LEMMA1, which is
false (docs/mathematics.md APPROX-LDP-NO-RDP), and from the FMT closed form
outside its condition (LIEW-TABLE2-UNSOUND), so they are neither upper nor lower
bounds; ours are certified (LIEW-THM2 and the LABEL-MIXTURE PLD mixture). Then
the paper's MNIST setting (n = 60,000, gamma = 1e-3, sigma = 0.86, delta = 1/n)
against epochs, as a figure.

Run: python examples/liew_checkin.py --output figures  (about a minute)
"""

import _figures
from _figures import pyplot
from shuffle_accountants import figure_style
from shuffle_accountants.cli import protocols

# (eps0, gamma) -> (baseline, Approach 1, Approach 2) as printed
# (docs/mathematics.md).
PRINTED = {(2.0, 1e-2): (0.096, 0.17, 0.049),
           (2.0, 1e-3): (0.013, 0.012, 0.024),
           (8.0, 1e-2): (9.52, 8.57, 8.18), (8.0, 1e-3): (3.86, 1.78, 1.58)}


def table_2():
  print('Liew Table 2 settings: 100 rounds, n = 10^4, delta = 1e-4')
  print(f'{"eps0":>5} {"gamma":>6} | {"PLD (ours)":>10} {"RDP (ours)":>10} | '
        f'{"printed: baseline":>17} {"Appr. 1":>7} {"Appr. 2":>7}')
  for (local_epsilon, rate), printed in PRINTED.items():
    protocol = protocols.Protocol(num_users=10**4, local_epsilon=local_epsilon,
                                  checkin_rate=rate, rounds=100, delta=1e-4)
    pld = protocols.evaluate(protocol, 'pld').epsilon
    rdp = protocols.evaluate(protocol, 'rdp').epsilon
    print(f'{local_epsilon:>5g} {rate:>6g} | {pld:>10.4g} {rdp:>10.4g} | '
          f'{printed[0]:>17g} {printed[1]:>7g} {printed[2]:>7g}')
  print('The printed numbers rest on LIEW-LEMMA1 (false, APPROX-LDP-NO-RDP) '
        'and on the FMT '
        'closed form outside its condition (LIEW-TABLE2-UNSOUND); ours are '
        'certified.')


def mnist_figure(args):
  epochs = [1, 10, 100] if args.quick else [1, 3, 10, 30, 100]
  rate = 1e-3
  values = {'pld': [], 'rdp': []}
  for index, count in enumerate(epochs):
    protocol = protocols.Protocol(num_users=60_000, noise_multiplier=0.86,
                                  checkin_rate=rate,
                                  rounds=int(count / rate), delta=1 / 60_000)
    for name in values:
      values[name].append(protocols.evaluate(protocol, name).epsilon)
    _figures.progress('MNIST setting', index + 1, len(epochs))
  figure, axes = pyplot.subplots(figsize=(8, 4))
  for index, (name, series) in enumerate(values.items()):
    axes.plot(epochs, series, label=f'{name.upper()} accountant',
              **figure_style.series_style(index))
  axes.set(xscale='log', yscale='log', xlabel='epochs',
           ylabel='epsilon at delta = 1/n',
           title='shuffled check-in, local Gaussian sigma = 0.86, '
           'n = 60,000, gamma = 1e-3 (Liew et al., MNIST)')
  axes.title.set_fontsize(9)
  axes.grid(True, which='both', alpha=0.3)
  figure_style.legend_outside(axes, [figure_style.UPPER])
  for count, pld in zip(epochs, values['pld']):
    print(f'  {count:>4} epochs: certified epsilon {pld:.4g}')
  return _figures.save(figure, args.output, 'liew_mnist_checkin.png')


def main():
  args = _figures.parse_args(__doc__.splitlines()[0])
  table_2()
  mnist_figure(args)


if __name__ == '__main__':
  main()
