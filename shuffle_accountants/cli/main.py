"""`shuffle-accountant`: the command line over `protocols` (every number cites its method's ID).

Subcommands (protocol flags are named like the event fields):

  epsilon    certified ε (upper bound), best lower bound, winning method, time
  compare    every method side by side, with ratios to the certified ε
  calibrate  largest ε0, smallest σ or most rounds that meet a target (ε, δ)
  plot       PNG of ε against rounds, n or ε0 (needs the `plot` extra)

Every command takes --json. Bad flags or impossible requests print one line
to stderr and exit with status 2 (usage) or 1 (impossible request).
"""

import argparse
import json
import math
import sys
from typing import Callable, List, Optional, Sequence

import attr

from shuffle_accountants.cli import protocols

PROGRAM = 'shuffle-accountant'
_PROTOCOL_FIELDS = ('num_users', 'delta', 'rounds', 'local_epsilon',
                    'noise_multiplier', 'num_categories', 'checkin_rate',
                    'sample_size')
_SWEEPS = {'rounds': int, 'num-users': int, 'local-epsilon': float}


class UsageError(Exception):
  """A flag is missing, malformed or out of range."""


class _Parser(argparse.ArgumentParser):
  """argparse, but errors are one line and raise instead of exiting."""

  def error(self, message):
    raise UsageError(message)


def _progress(done: int, total: int, label: str) -> None:
  """A one-line progress bar on stderr for sweeps."""
  width = 30
  filled = int(width * done / total)
  end = '\n' if done == total else ''
  sys.stderr.write(f'\r{label} [{"#" * filled}{"." * (width - filled)}] '
                   f'{done}/{total}{end}')
  sys.stderr.flush()


def _add_protocol_flags(parser, solved: Sequence[str] = ()):
  group = parser.add_argument_group('protocol (one round, repeated)')
  group.add_argument('--num-users', type=int, required='num_users' not in
                     solved, help='population size n')
  randomizer = group.add_mutually_exclusive_group()
  randomizer.add_argument('--local-epsilon', type=float,
                          help='eps0 of a pure LDP randomizer')
  randomizer.add_argument('--noise-multiplier', type=float,
                          help='sigma of local Gaussian noise (clip norm C)')
  group.add_argument('--num-categories', type=int,
                     help='k for k-ary randomized response reports')
  sampling = group.add_mutually_exclusive_group()
  sampling.add_argument('--checkin-rate', type=float,
                        help='each user checks in with this probability')
  sampling.add_argument('--sample-size', type=int,
                        help='a hidden uniform sample of this many users')
  group.add_argument('--rounds', type=int, default=1, help='T (default 1)')
  group.add_argument('--delta', type=float, default=1e-6,
                     help='target delta (default 1e-6)')
  parser.add_argument('--json', action='store_true',
                      help='machine-readable output')


def _add_accountant_flag(parser):
  parser.add_argument('--accountant', choices=('best', 'pld', 'rdp'),
                      default='best',
                      help='which certified accountant (default: the smaller '
                      'of both)')


def _build_parser() -> argparse.ArgumentParser:
  parser = _Parser(prog=PROGRAM, description=__doc__.split('\n\n')[0])
  commands = parser.add_subparsers(dest='command', required=True,
                                   parser_class=_Parser)
  epsilon = commands.add_parser('epsilon', help='certified epsilon')
  _add_protocol_flags(epsilon)
  _add_accountant_flag(epsilon)
  compare = commands.add_parser('compare', help='all methods side by side')
  _add_protocol_flags(compare)
  compare.add_argument('--methods', help='comma-separated subset of '
                       f'{",".join(protocols.METHODS)}')
  calibrate = commands.add_parser('calibrate', help='meet a target epsilon')
  _add_protocol_flags(calibrate)
  _add_accountant_flag(calibrate)
  calibrate.add_argument('--target-epsilon', type=float, required=True)
  calibrate.add_argument('--solve', required=True,
                         choices=('local-epsilon', 'noise-multiplier',
                                  'rounds'),
                         help='the parameter to choose')
  plot = commands.add_parser('plot', help='PNG of epsilon against a sweep')
  _add_protocol_flags(plot)
  plot.add_argument('--x', required=True, choices=tuple(_SWEEPS),
                    help='the swept parameter')
  plot.add_argument('--values', required=True,
                    help='comma-separated values of the swept parameter')
  plot.add_argument('--methods', default='pld,rdp,binary-rr-pair',
                    help='comma-separated methods (default: %(default)s)')
  plot.add_argument('--output', required=True, help='PNG file to write')
  return parser


def _protocol(args, **overrides) -> protocols.Protocol:
  fields = {name: getattr(args, name, None) for name in _PROTOCOL_FIELDS}
  fields.update(overrides)
  return protocols.Protocol(**{name: value for name, value in fields.items()
                               if value is not None})


def _methods(text: Optional[str]) -> Optional[List[str]]:
  if text is None:
    return None
  names = [name.strip() for name in text.split(',') if name.strip()]
  unknown = [name for name in names if name not in protocols.METHODS]
  if unknown or not names:
    raise UsageError(f'--methods must be a comma-separated subset of '
                     f'{",".join(protocols.METHODS)}; got {text!r}')
  return names


def _describe(protocol: protocols.Protocol) -> str:
  return (f'{protocol.rounds} round(s) of {protocol.round_event()}, '
          f'delta = {protocol.delta:g}')


def _number(value: Optional[float]) -> str:
  return 'n/a' if value is None else f'{value:.6g}'


def _as_dict(result: protocols.MethodResult) -> dict:
  return attr.asdict(result)


def _epsilon(args) -> dict:
  protocol = _protocol(args)
  certified = protocols.certified_epsilon(protocol, args.accountant)
  lower = protocols.best_lower_bound(protocol)
  return dict(protocol=attr.asdict(protocol), certified=_as_dict(certified),
              lower_bound=_as_dict(lower), text=[
                  _describe(protocol),
                  f'  certified epsilon (upper bound): '
                  f'{_number(certified.epsilon):>10}   {certified.method}: '
                  f'{certified.detail}   ({certified.seconds:.2f} s)',
                  f'  best lower bound:                '
                  f'{_number(lower.epsilon):>10}   {lower.method}: '
                  f'{lower.detail}   ({lower.seconds:.2f} s)'])


def _compare(args) -> dict:
  protocol = _protocol(args)
  results = protocols.compare(protocol, _methods(args.methods))
  uppers = [r.epsilon for r in results
            if r.kind == protocols.UPPER and r.epsilon is not None]
  best = min(uppers) if uppers else None
  rows = []
  text = [_describe(protocol),
          f'  {"method":<15} {"kind":<12} {"epsilon":>10} {"ratio":>7} '
          f'{"s":>6}  detail']
  for result in results:
    ratio = (None if result.epsilon is None or not best
             else result.epsilon / best)
    rows.append(dict(_as_dict(result), ratio_to_best_upper=ratio))
    text.append(f'  {result.method:<15} {result.kind:<12} '
                f'{_number(result.epsilon):>10} '
                f'{"" if ratio is None else f"{ratio:.3f}":>7} '
                f'{result.seconds:>6.2f}  {result.detail}')
  text.append('  ratio = epsilon / smallest certified upper bound')
  return dict(protocol=attr.asdict(protocol), methods=rows, text=text)


def _bisect(good: float, bad: float, holds: Callable[[float], bool],
            integer: bool, steps: int, label: str) -> float:
  """Moves `good` (where `holds`) towards `bad`; returns the last good value."""
  for step in range(steps):
    _progress(step + 1, steps, label)
    if integer:
      if abs(bad - good) <= 1:
        continue
      middle = (good + bad) // 2
    else:
      middle = math.sqrt(good * bad)  # geometric: parameters span decades
    if holds(middle):
      good = middle
    else:
      bad = middle
  return good


def _calibrate(args) -> dict:
  solve = args.solve.replace('-', '_')
  if getattr(args, solve) is not None and solve != 'rounds':
    raise UsageError(f'--{args.solve} is what calibrate solves for; do not '
                     'give it')
  target = args.target_epsilon
  if not target > 0:
    raise UsageError(f'--target-epsilon must be > 0; got {target}')

  def epsilon_at(value):
    protocol = _protocol(args, **{solve: value})
    return protocols.certified_epsilon(protocol, args.accountant).epsilon

  holds = lambda value: epsilon_at(value) <= target
  at_limit = ''
  if solve == 'rounds':
    if not holds(1):
      raise ValueError(f'even 1 round costs epsilon {epsilon_at(1):.6g} > '
                       f'target {target:g}')
    good, bad = 1, 2
    while holds(bad):
      good, bad = bad, bad * 2
      if bad > 10**9:
        raise ValueError('more than 10^9 rounds meet the target; the '
                         'protocol barely spends privacy')
    value = _bisect(good, bad, holds, True, max(1, int(math.log2(bad))),
                    'calibrating')
  else:
    # Search ranges: eps0 over the library's tested range; sigma below 0.1
    # certifies epsilon in the thousands and strains the PLD grid.
    easy, hard = ((1e-3, 20.0) if solve == 'local_epsilon' else (1e4, 0.1))
    if not holds(easy):
      raise ValueError(f'impossible: even {solve}={easy:g} gives epsilon '
                       f'{epsilon_at(easy):.6g} > target {target:g}')
    if holds(hard):
      value = hard
      at_limit = ' (the end of the search range; more would do too)'
    else:
      value = _bisect(easy, hard, holds, False, 24, 'calibrating')
  protocol = _protocol(args, **{solve: value})
  achieved = protocols.certified_epsilon(protocol, args.accountant)
  verb = 'most' if solve in ('local_epsilon', 'rounds') else 'least'
  return dict(protocol=attr.asdict(protocol), solved=solve, value=value,
              certified=_as_dict(achieved), text=[
                  _describe(protocol),
                  f'  {verb} {solve} meeting epsilon <= {target:g}: '
                  f'{value:.6g}{at_limit}',
                  f'  certified epsilon (upper bound) there: '
                  f'{achieved.epsilon:.6g} ({achieved.method})'])


def _plot(args) -> dict:
  methods = _methods(args.methods)
  parse = _SWEEPS[args.x]
  try:
    values = [parse(value) for value in args.values.split(',')]
  except ValueError:
    raise UsageError(f'--values must be comma-separated '
                     f'{parse.__name__}s; got {args.values!r}') from None
  field = args.x.replace('-', '_')
  sweep = [_protocol(args, **{field: value}) for value in values]
  try:
    import matplotlib  # pylint: disable=g-import-not-at-top
    matplotlib.use('Agg')
    from matplotlib import pyplot  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise ValueError('plot needs matplotlib: pip install '
                     '"shuffle-accountants[plot]"') from None
  series = {name: [] for name in methods}
  total = len(sweep) * len(methods)
  for index, protocol in enumerate(sweep):
    for offset, name in enumerate(methods):
      series[name].append(protocols.evaluate(protocol, name).epsilon)
      _progress(index * len(methods) + offset + 1, total, 'plotting')
  figure, axes = pyplot.subplots(figsize=(6, 4))
  for name, epsilons in series.items():
    points = [(x, y) for x, y in zip(values, epsilons) if y is not None]
    if points:
      kind = protocols.METHODS[name][0]
      axes.plot(*zip(*points), marker='o',
                linestyle='--' if kind == protocols.LOWER else '-',
                label=f'{name} ({kind})')
  if args.x != 'local-epsilon':
    axes.set_xscale('log')
  axes.set_yscale('log')
  axes.set_xlabel(args.x)
  axes.set_ylabel(f'epsilon at delta = {args.delta:g}')
  axes.legend()
  axes.grid(True, which='both', alpha=0.3)
  figure.tight_layout()
  figure.savefig(args.output, format='png', dpi=120)
  pyplot.close(figure)
  text = [f'wrote {args.output}',
          f'  {args.x:>14} ' + ' '.join(f'{name:>14}' for name in methods)]
  for row, value in enumerate(values):
    text.append(f'  {value:>14g} ' + ' '.join(
        f'{_number(series[name][row]):>14}' for name in methods))
  return dict(x=args.x, values=values, series=series, output=args.output,
              text=text)


_COMMANDS = {'epsilon': _epsilon, 'compare': _compare,
             'calibrate': _calibrate, 'plot': _plot}


def main(argv: Optional[Sequence[str]] = None) -> int:
  """Runs the CLI; returns the exit status (0, 1 impossible, 2 usage)."""
  try:
    args = _build_parser().parse_args(argv)
    report = _COMMANDS[args.command](args)
  except UsageError as error:
    print(f'{PROGRAM}: error: {error}', file=sys.stderr)
    return 2
  except (ValueError, TypeError) as error:
    print(f'{PROGRAM}: error: {error}', file=sys.stderr)
    return 1
  text = report.pop('text')
  if args.json:
    print(json.dumps(report, default=str))
  else:
    print('\n'.join(text))
  return 0


def entry_point() -> None:
  """Console-script entry: exit with `main`'s status."""
  sys.exit(main())
