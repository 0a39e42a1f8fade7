"""`shuffle-accountant`: the command line over `protocols` (every number cites its method's ID).

Subcommands (protocol flags are named like the event fields):

  epsilon    certified ε (upper bound), best lower bound, winning method, time
  compare    every method side by side, with ratios to the certified ε
  calibrate  largest ε0, smallest σ or most rounds that meet a target (ε, δ)
  plot       PNG of ε against rounds, n or ε0 (needs the `plot` extra)

Every command takes --json. Bad flags or values print one line to stderr and
exit with status 2; impossible requests (a target nothing meets) with 1; an
interrupt (Ctrl-C) with 130. Limits: see LIMITS and docs/limits.md.
"""

import argparse
import json
import math
import os
import sys
from typing import Callable, List, Optional, Sequence
import warnings

import attr

# The numerical stack (numpy, scipy, dp_accounting) is imported only when a
# command computes, so that --help and usage errors answer at once.
protocols = None  # pylint: disable=invalid-name

PROGRAM = 'shuffle-accountant'
_PROTOCOL_FIELDS = ('num_users', 'delta', 'rounds', 'local_epsilon',
                    'noise_multiplier', 'num_categories', 'checkin_rate',
                    'sample_size', 'randomizer', 'domain_size')
_SWEEPS = ('rounds', 'num-users', 'local-epsilon')


class UsageError(Exception):
  """A flag is missing, malformed or out of range (exit status 2)."""


class Impossible(Exception):
  """The request is well formed but nothing meets it (exit status 1)."""


# Documented ranges of the protocol flags: (smallest, largest).
LIMITS = {
    'num-users': (1, 10**10), 'rounds': (1, 10**9),
    'num-categories': (2, 10**6), 'sample-size': (1, 10**10),
    'domain-size': (2, 10**6),
    'local-epsilon': (0.0, 20.0), 'noise-multiplier': (1e-3, 1e5),
    'checkin-rate': (1e-12, 1.0), 'delta': (1e-300, 0.5),
    'target-epsilon': (1e-6, 1e6),
}
_FLAG_NAMES = {name.replace('-', '_'): f'--{name}' for name in LIMITS}
_PLOT_VALUES = {'rounds': '1,10,100,1000',
                'num-users': '1000,10000,100000,1000000',
                'local-epsilon': '0.5,1,2,4'}
_PLOT_FORMATS = ('.png', '.pdf', '.svg')


def _bounded(flag: str, whole: bool):
  """An argparse type: a number in LIMITS; whole numbers may be written 1e6."""
  low, high = LIMITS[flag]
  kind = 'a whole number' if whole else 'a number'

  def parse(text: str):
    try:
      value = float(text)
    except ValueError:
      value = math.nan
    if not math.isfinite(value) or (whole and value != math.floor(value)):
      raise argparse.ArgumentTypeError(f'--{flag} must be {kind}; got '
                                       f'{text!r}')
    if not low <= value <= high:
      raise argparse.ArgumentTypeError(
          f'--{flag} must be {kind} in [{low:g}, {high:g}]; got {text}')
    return int(value) if whole else value
  return parse


def _whole(flag: str):
  return _bounded(flag, whole=True)


def _real(flag: str):
  return _bounded(flag, whole=False)


def _flag_message(error: Exception) -> str:
  """A library message with the parameter names the user typed as flags."""
  message = str(error)
  for name, flag in _FLAG_NAMES.items():
    message = message.replace(name, flag)
  return message


class _Parser(argparse.ArgumentParser):
  """argparse, but errors are one line and raise instead of exiting."""

  def error(self, message):
    raise UsageError(message)


_PROGRESS_OPEN = [False]  # a progress line awaits its newline
# Progress is shown on a terminal only, never with --json (set by `main`).
_SHOW_PROGRESS = [False]


def _progress(done: int, total: int, label: str) -> None:
  """A one-line progress bar on stderr for long work (terminals only)."""
  if not _SHOW_PROGRESS[0]:
    return
  _PROGRESS_OPEN[0] = done < total
  width = 30
  filled = int(width * done / total)
  end = '\n' if done == total else ''
  sys.stderr.write(f'\r{label} [{"#" * filled}{"." * (width - filled)}] '
                   f'{done}/{total}{end}')
  sys.stderr.flush()


def _add_protocol_flags(parser, solved: Sequence[str] = ()):
  group = parser.add_argument_group('protocol (one round, repeated)')
  group.add_argument('--num-users', type=_whole('num-users'),
                     required='num_users' not in solved,
                     help='population size n (1 to 1e10)')
  randomizer = group.add_mutually_exclusive_group()
  randomizer.add_argument('--local-epsilon', type=_real('local-epsilon'),
                          help='eps0 of a pure LDP randomizer (0 to 20)')
  randomizer.add_argument('--noise-multiplier',
                          type=_real('noise-multiplier'),
                          help='sigma of local Gaussian noise (clip norm C; '
                          '1e-3 to 1e5)')
  group.add_argument('--num-categories', type=_whole('num-categories'),
                     help='k for k-ary randomized response reports')
  group.add_argument('--randomizer',
                     choices=('krr', 'sue', 'oue', 'olh', 'blh', 'hadamard',
                              'subset'),
                     help='the deployed randomizer (with --local-epsilon and '
                     '--domain-size): k-RR, unary encoding (symmetric, '
                     'optimized), local hashing (optimized, binary), '
                     'Hadamard response, subset selection')
  group.add_argument('--domain-size', type=_whole('domain-size'),
                     help='number of input values d of --randomizer '
                     '(2 to 1e6)')
  sampling = group.add_mutually_exclusive_group()
  sampling.add_argument('--checkin-rate', type=_real('checkin-rate'),
                        help='each user checks in with this probability '
                        '(1e-12 to 1)')
  sampling.add_argument('--sample-size', type=_whole('sample-size'),
                        help='a hidden uniform sample of this many users')
  group.add_argument('--rounds', type=_whole('rounds'), default=1,
                     help='T (default 1; 1 to 1e9, 1e6 is accepted)')
  group.add_argument('--delta', type=_real('delta'), default=1e-6,
                     help='target delta (default 1e-6; 1e-300 to 0.5)')
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
  compare.add_argument('--methods', help='comma-separated method names '
                       '(default: all of them, as listed by compare)')
  calibrate = commands.add_parser('calibrate', help='meet a target epsilon')
  _add_protocol_flags(calibrate)
  _add_accountant_flag(calibrate)
  calibrate.add_argument('--target-epsilon', type=_real('target-epsilon'),
                         required=True)
  calibrate.add_argument('--solve', required=True,
                         choices=('local-epsilon', 'noise-multiplier',
                                  'rounds'),
                         help='the parameter to choose')
  plot = commands.add_parser('plot', help='PNG of epsilon against a sweep')
  _add_protocol_flags(plot)
  plot.add_argument('--x', default='rounds', choices=tuple(_SWEEPS),
                    help='the swept parameter (default: rounds)')
  plot.add_argument('--values',
                    help='comma-separated values of the swept parameter '
                    f'(default: {_PLOT_VALUES})')
  plot.add_argument('--methods', default='pld,rdp,binary-rr-pair',
                    help='comma-separated methods (default: %(default)s)')
  plot.add_argument('--output', required=True,
                    help=f'file to write, format from its suffix '
                    f'({", ".join(_PLOT_FORMATS)})')
  return parser


def _protocol(args, **overrides) -> 'protocols.Protocol':
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


def _describe(protocol: 'protocols.Protocol') -> str:
  return (f'{protocol.rounds} round(s) of {protocol.round_event()}, '
          f'delta = {protocol.delta:g}')


def _number(value: Optional[float]) -> str:
  return 'n/a' if value is None else f'{value:.6g}'


def _as_dict(result: 'protocols.MethodResult') -> dict:
  return attr.asdict(result)


def _epsilon(args) -> dict:
  protocol = _protocol(args)
  _progress(0, 2, 'certified epsilon')
  certified = protocols.certified_epsilon(protocol, args.accountant)
  _progress(1, 2, 'lower bound      ')
  lower = protocols.best_lower_bound(protocol)
  _progress(2, 2, 'done             ')
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
  names = _methods(args.methods) or list(protocols.METHODS)
  results = []
  for index, name in enumerate(names):
    results.append(protocols.evaluate(protocol, name))
    _progress(index + 1, len(names), 'comparing')
  uppers = [r.epsilon for r in results
            if r.kind == protocols.UPPER and r.epsilon is not None]
  best = min(uppers) if uppers else None
  rows = []
  text = [_describe(protocol),
          f'  {"method":<16} {"kind":<12} {"epsilon":>10} {"ratio":>7} '
          f'{"s":>6}  detail']
  for result in results:
    ratio = (None if result.epsilon is None or not best
             else result.epsilon / best)
    rows.append(dict(_as_dict(result), ratio_to_best_upper=ratio))
    text.append(f'  {result.method:<16} {result.kind:<12} '
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
      raise Impossible(f'even 1 round costs epsilon {epsilon_at(1):.6g} > '
                       f'target {target:g}')
    # Basic composition certifies rounds * eps0 <= target: start there.
    good = max(1, int(target / args.local_epsilon)) if (
        args.local_epsilon) else 1
    good = min(good, LIMITS['rounds'][1])
    bad = 2 * good
    while holds(bad):
      _progress(min(29, int(math.log2(bad))), 30, 'searching  ')
      if bad >= LIMITS['rounds'][1]:
        raise Impossible(f'more than {LIMITS["rounds"][1]:.0e} rounds meet '
                         'the target (the documented limit): the protocol '
                         'barely spends privacy')
      good, bad = bad, min(bad * 2, LIMITS['rounds'][1])
    value = _bisect(good, bad, holds, True, max(1, int(math.log2(bad))),
                    'calibrating')
  else:
    # Search ranges: eps0 over the library's tested range; sigma below 0.1
    # certifies epsilon in the thousands and strains the PLD grid.
    easy, hard = ((1e-3, 20.0) if solve == 'local_epsilon' else (1e4, 0.1))
    if not holds(easy):
      raise Impossible(f'impossible: even --{args.solve} {easy:g} gives '
                       f'epsilon {epsilon_at(easy):.6g} > target {target:g}')
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


def _check_output(path: str) -> str:
  """The format to write `path` in; checked before any work is done."""
  suffix = os.path.splitext(path)[1].lower()
  if suffix not in _PLOT_FORMATS:
    raise UsageError(f'--output must end in {", ".join(_PLOT_FORMATS)} (the '
                     f'format follows the suffix); got {path!r}')
  if os.path.isdir(path):
    raise UsageError(f'--output {path!r} is a directory; give a file name')
  folder = os.path.dirname(os.path.abspath(path))
  if not os.path.isdir(folder):
    raise UsageError(f'--output: the folder {folder!r} does not exist')
  if not os.access(folder, os.W_OK):
    raise UsageError(f'--output: the folder {folder!r} is not writable')
  return suffix[1:]


def _plot(args) -> dict:
  output_format = _check_output(args.output)
  methods = _methods(args.methods)
  parse = (_real if args.x == 'local-epsilon' else _whole)(args.x)
  text = args.values or _PLOT_VALUES[args.x]
  try:
    values = [parse(value) for value in text.split(',')]
  except argparse.ArgumentTypeError as error:
    raise UsageError(f'--values: {error}') from None
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
  figure.savefig(args.output, format=output_format, dpi=120)
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
  """Runs the CLI; returns the exit status (0; 1 impossible; 2 usage; 130)."""
  global protocols  # pylint: disable=global-statement
  try:
    args = _build_parser().parse_args(argv)
    _SHOW_PROGRESS[0] = not args.json and sys.stderr.isatty()
    with warnings.catch_warnings():
      # Library warnings (numpy overflow in far tails, Opacus) are not the
      # user's business: every number printed is already certified.
      warnings.simplefilter('ignore')
      if protocols is None:
        from shuffle_accountants.cli import protocols as loaded  # pylint: disable=g-import-not-at-top
        protocols = loaded
      import numpy  # pylint: disable=g-import-not-at-top
      with numpy.errstate(all='ignore'):
        report = _COMMANDS[args.command](args)
  except UsageError as error:
    return _fail(str(error), 2)
  except (ValueError, TypeError) as error:
    return _fail(_flag_message(error), 2)
  except Impossible as error:
    return _fail(str(error), 1)
  except KeyboardInterrupt:
    return _fail('interrupted', 130)
  except MemoryError:
    return _fail('out of memory; please report the command that caused it',
                 1)
  except Exception as error:  # pylint: disable=broad-except
    # Never a traceback: one line that can be reported.
    return _fail(f'internal error ({type(error).__name__}: '
                 f'{_flag_message(error)}); please report the command', 1)
  text = report.pop('text')
  if args.json:
    print(json.dumps(report, default=str))
  else:
    print('\n'.join(text))
  return 0


def _fail(message: str, status: int) -> int:
  sys.stderr.write('\n' if _PROGRESS_OPEN[0] else '')
  print(f'{PROGRAM}: error: {message}', file=sys.stderr)
  return status


def entry_point() -> None:
  """Console-script entry: exit with `main`'s status."""
  sys.exit(main())
