"""The `shuffle-accountant` command line over the `protocols` table.

Subcommands (protocol flags are named like the event fields):

  epsilon    certified ε (upper bound), best lower bound, winning method, time
  compare    every method side by side, with ratios to the certified ε
  calibrate  largest ε0, smallest σ or most rounds that meet a target (ε, δ)
  plot       PNG of ε against rounds, n or ε0 (needs the `plot` extra)
  reference  the statement, status, source and users of a cited ID
  (POISSON-UNSOUND, GAUSS-NO-GAIN)

Every command takes --json. Bad flags or values print one line to stderr and
exit with status 2; impossible requests (a target nothing meets) with 1; an
interrupt (Ctrl-C) with 130. Progress goes to stderr only when it is a
terminal and --json is not given. Limits: see LIMITS and docs/limits.md.
"""

import argparse
import difflib
import math
import os
import sys
from typing import List, Optional, Sequence
import warnings

import attr

from shuffle_accountants import _json
from shuffle_accountants import _validation
from shuffle_accountants import figure_style
from shuffle_accountants.cli import noise

__all__ = [
    'protocols', 'calibration', 'PROGRAM', 'DELTA_RULE', 'default_delta',
    'UsageError', 'Impossible', 'LIMITS', 'main', 'entry_point',
]

# The numerical stack (numpy, scipy, dp_accounting) is imported only when a
# command computes, so that --help and usage errors answer at once.
protocols = None
calibration = None

PROGRAM = 'shuffle-accountant'
_PROTOCOL_FIELDS = ('num_users', 'delta', 'rounds', 'local_epsilon',
                    'noise_multiplier', 'num_categories', 'checkin_rate',
                    'sample_size', 'randomizer', 'domain_size', 'release',
                    'relation', 'dimension', 'rate_if_one', 'rate_if_zero')
_SWEEPS = ('rounds', 'num-users', 'local-epsilon')
# Without --delta: well below 1/n (a mechanism releasing one random user's
# record is (0, 1/n)-DP), and never above the customary 1e-6.
DELTA_RULE = 'min(1e-6, 1/(10 n))'


def default_delta(num_users: int) -> float:
  """The target delta used without --delta: DELTA_RULE."""
  return min(1e-6, 1 / (10 * num_users))


class UsageError(Exception):
  """A flag is missing, malformed or out of range (exit status 2)."""


class Impossible(Exception):
  """The request is well formed but nothing meets it (exit status 1)."""


# Documented ranges of the protocol flags: (smallest, largest).
LIMITS = {
    'num-users': (1, 10**10), 'rounds': (1, _validation.MAX_COUNT),
    'num-categories': (2, _validation.MAX_DOMAIN_SIZE),
    'sample-size': (1, 10**10),
    'domain-size': (2, _validation.MAX_DOMAIN_SIZE),
    'local-epsilon': (0.0, 20.0), 'noise-multiplier': (1e-3, 1e5),
    'checkin-rate': (1e-12, 1.0), 'delta': (1e-300, 0.5),
    'dimension': (1, 10**9),
    'target-epsilon': (1e-6, 1e6),
    'num-trials': (1, 10**10), 'sigma': (0.1, 1e5), 'sensitivity': (1, 10**4),
    'aggregators': (1, 10**6), 'scale': (0.1, 1e4),
    'rate-if-one': (0.0, 1.0), 'rate-if-zero': (0.0, 1.0),
}
# Flags whose range excludes its ends: a bit reported with rate 0 or 1
# reveals the value (UNARY-ENCODING-RATES).
_OPEN_RANGES = ('rate-if-one', 'rate-if-zero')
_FLAG_NAMES = {name.replace('-', '_'): f'--{name}' for name in LIMITS}
_PLOT_VALUES = {'rounds': '1,10,100,1000',
                'num-users': '1000,10000,100000,1000000',
                'local-epsilon': '0.5,1,2,4'}
_PLOT_FORMATS = ('.png', '.pdf', '.svg')


def _bounded(flag: str, whole: bool):
  """An argparse type: a number in LIMITS; whole numbers may be written 1e6.

  Whole numbers are checked by the library's own check, so that the flag
  and the Python parameter accept the same values with the same message.
  """
  low, high = LIMITS[flag]
  kind = 'a whole number' if whole else 'a number'
  ends = '()' if flag in _OPEN_RANGES else '[]'
  allowed = f'{kind} in {ends[0]}{low:g}, {high:g}{ends[1]}'

  def parse(text: str):
    try:
      value = float(text)
    except ValueError:
      value = math.nan
    if math.isnan(value) or (not whole and math.isinf(value)):
      raise argparse.ArgumentTypeError(f'--{flag} must be {allowed}; got '
                                       f'{text!r}')
    if whole:
      try:
        return _validation.check_integer(flag.replace('-', '_'), value, low,
                                         high)
      except ValueError as error:
        raise argparse.ArgumentTypeError(_flag_message(error)) from None
    inside = (low < value < high if flag in _OPEN_RANGES
              else low <= value <= high)
    if not inside:
      raise argparse.ArgumentTypeError(f'--{flag} must be {allowed}; got '
                                       f'{text}')
    return value
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
  """argparse, but errors are one line and raise instead of exiting.

  Flags must be spelled out: `--num-user` is an error, not `--num-users`.
  """

  def __init__(self, *args, **kwargs):
    kwargs.setdefault('allow_abbrev', False)
    super().__init__(*args, **kwargs)

  def error(self, message):
    if message.startswith('unrecognized arguments'):
      # The commands' parsers leave unknown flags to this one: their flags
      # are the candidates.
      parsers = [self] + [parser for action in self._actions
                          if isinstance(action, argparse._SubParsersAction)
                          for parser in action.choices.values()]
      flags = sorted({option for parser in parsers
                      for option in parser._option_string_actions
                      if option.startswith('--')})
      unknown = [word.split('=')[0] for word in message.split(': ', 1)[-1]
                 .split() if word.startswith('--')]
      close = sorted({match for word in unknown
                      for match in difflib.get_close_matches(word, flags,
                                                              cutoff=0.7)})
      hint = f'did you mean {", ".join(close)}? ' if close else ''
      message += f' ({hint}{self.prog} COMMAND --help lists its flags)'
    raise UsageError(message)


_PROGRESS_OPEN = [False]  # a progress line awaits its newline
_PROGRESS_SHOWN = [False]  # stderr is a terminal and --json was not given


def _progress(done: int, total: int, label: str) -> None:
  """A one-line progress bar on stderr for long work (terminals only)."""
  if not _PROGRESS_SHOWN[0]:
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
                     help='k for k-ary randomized response reports '
                     '(2 to 1e6)')
  group.add_argument('--randomizer',
                     choices=('krr', 'sue', 'oue', 'olh', 'blh', 'hadamard',
                              'subset', 'ue', 'gaussian'),
                     help='the deployed randomizer (with --local-epsilon and '
                     '--domain-size): k-RR, unary encoding (symmetric, '
                     'optimized), local hashing (optimized, binary), '
                     'Hadamard response, subset selection; ue (with '
                     '--rate-if-one, --rate-if-zero and --domain-size): '
                     'unary encoding with those per-bit rates (e.g. '
                     'RAPPOR\'s); or gaussian '
                     '(with --noise-multiplier and --dimension): a vector '
                     'clipped to L2 norm C plus local Gaussian noise')
  group.add_argument('--domain-size', type=_whole('domain-size'),
                     help='number of input values d of --randomizer '
                     '(2 to 1e6)')
  for flag, rate, where in (('rate-if-one', 'p', 'the user\'s own value'),
                            ('rate-if-zero', 'q', 'every other value')):
    group.add_argument(f'--{flag}', type=_real(flag),
                       help=f'{rate} of --randomizer ue: P[reported bit = 1] '
                       f'at {where} (0 < q < p < 1)')
  group.add_argument('--dimension', type=_whole('dimension'),
                     help='dimension d of --randomizer gaussian reports, or '
                     'the coordinates of a --noise sum, each with its own '
                     'noise (composed) (1 to 1e9; default 1)')
  group.add_argument('--release', choices=('shuffle', 'sum'),
                     help='what the server sees of a round: the shuffled '
                     'reports (default) or only their coordinate-wise sum '
                     '(secure aggregation of sue, oue, ue or krr reports)')
  group.add_argument('--relation', choices=('replace-one', 'deletion'),
                     help='neighbouring datasets: one user\'s value '
                     'replaced (default), or deletion (REPLACE_SPECIAL: one '
                     'report replaced by the randomizer\'s output on a '
                     'reference input; a sum\'s is the all-zero vector, as '
                     'in the DAP draft)')
  sampling = group.add_mutually_exclusive_group()
  sampling.add_argument('--checkin-rate', type=_real('checkin-rate'),
                        help='each user checks in with this probability '
                        '(1e-12 to 1)')
  sampling.add_argument('--sample-size', type=_whole('sample-size'),
                        help='a hidden uniform sample of this many users '
                        '(1 to 1e10)')
  group.add_argument('--rounds', type=_whole('rounds'),
                     help='T, rounds of the protocol (1 to 1e9; default 1; '
                     'whole numbers may be written 1e6)')
  group.add_argument('--delta', type=_real('delta'),
                     help=f'target delta (1e-300 to 0.5; default '
                     f'{DELTA_RULE}, printed with the result)')
  parser.add_argument('--json', action='store_true',
                      help='machine-readable output')


def _add_accountant_flag(parser):
  parser.add_argument('--accountant', choices=('best', 'pld', 'rdp'),
                      default='best',
                      help='which certified accountant (default: the smaller '
                      'of both)')


_DESCRIPTION = """\
How private is a shuffle-model protocol? Describe it with flags (users,
their local randomizer, rounds) and get the certified epsilon: a proven
upper bound on the central (epsilon, delta)-DP of everything the server
sees, with only the shuffler (or secure aggregation) trusted."""

_EXAMPLES = """\
examples:
  # 1,000,000 users, each sending one eps0 = 1 report a day for 1,000 days:
  shuffle-accountant epsilon --num-users 1000000 --local-epsilon 1 --rounds 1000

  # the same with optimized unary encoding over 100 values, every method:
  shuffle-accountant compare --num-users 1000000 --local-epsilon 1 \\
      --randomizer oue --domain-size 100 --rounds 1000

  # the largest eps0 each user may spend to stay within epsilon = 1:
  shuffle-accountant calibrate --num-users 1000000 --rounds 1000 \\
      --target-epsilon 1 --solve local-epsilon

`shuffle-accountant COMMAND --help` lists a command's flags; without
--delta, delta = min(1e-6, 1/(10 n)), printed with the result."""


def _build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
  parser = _Parser(prog=PROGRAM, description=_DESCRIPTION, epilog=_EXAMPLES,
                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument('--version', action='version',
                      version=f'%(prog)s {_version()}')
  commands = parser.add_subparsers(dest='command', required=True,
                                   parser_class=_Parser)
  # A noisy integer sum (--noise) has no population.
  noisy = ('num_users',) if noise.given(argv) else ()
  epsilon = commands.add_parser(
      'epsilon', help='the certified epsilon of a protocol and its best '
      'lower bound, in words')
  _add_protocol_flags(epsilon, solved=noisy)
  _add_accountant_flag(epsilon)
  noise.add_flags(epsilon, _whole, _real)
  compare = commands.add_parser(
      'compare', help='every upper and lower bound side by side')
  _add_protocol_flags(compare)
  compare.add_argument('--methods', help='comma-separated method names '
                       '(default: all of them, as listed by compare)')
  calibrate = commands.add_parser(
      'calibrate', help='the largest eps0, smallest sigma, most rounds, '
      'fewest users or fewest coin flips that meet a target epsilon')
  # --solve num-users chooses the population; a noisy sum has none.
  _add_protocol_flags(calibrate, solved=('num_users',))
  _add_accountant_flag(calibrate)
  calibrate.add_argument('--target-epsilon', type=_real('target-epsilon'),
                         required=True,
                         help='the epsilon to meet at --delta (1e-6 to 1e6)')
  calibrate.add_argument('--solve', required=True,
                         choices=('local-epsilon', 'noise-multiplier',
                                  'rounds', 'num-users') + noise.SOLVED,
                         help='the parameter to choose')
  noise.add_flags(calibrate, _whole, _real)
  plot = commands.add_parser(
      'plot', help='a figure of epsilon against rounds, users or eps0')
  _add_protocol_flags(plot, solved=('num_users',))
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
  reference = commands.add_parser(
      'reference', help='what a cited ID (POISSON-UNSOUND, GAUSS-NO-GAIN, '
                        'GIRGIS-UB1) states')
  reference.add_argument('id', nargs='?',
                         help='the ID; without it, every ID with its status')
  reference.add_argument('--json', action='store_true',
                         help='machine-readable output')
  return parser


def _version() -> str:
  from shuffle_accountants import __version__
  return __version__


def _protocol(args, **overrides) -> 'protocols.Protocol':
  fields = {name: getattr(args, name, None) for name in _PROTOCOL_FIELDS}
  fields['aggregator_noise'] = noise.aggregator_noise(args)
  fields.update(overrides)
  if fields['delta'] is None:
    fields['delta'] = default_delta(fields['num_users'])
  return protocols.Protocol(**{name: value for name, value in fields.items()
                               if value is not None})


def _delta_note(args) -> str:
  return ('' if args.delta is not None else
          f' (default {DELTA_RULE}; choose with --delta)')


def _methods(text: Optional[str]) -> Optional[List[str]]:
  if text is None:
    return None
  names = [name.strip() for name in text.split(',') if name.strip()]
  unknown = [name for name in names if name not in protocols.METHODS]
  if unknown or not names:
    raise UsageError(f'--methods must be a comma-separated subset of '
                     f'{",".join(protocols.METHODS)}; got {text!r}')
  return names


# --randomizer names in words.
_RANDOMIZER_WORDS = {
    'krr': 'k-ary randomized response', 'sue': 'symmetric unary encoding',
    'oue': 'optimized unary encoding', 'olh': 'optimized local hashing',
    'blh': 'binary local hashing', 'hadamard': 'Hadamard response',
    'subset': 'subset selection', 'ue': 'unary encoding'}


def _report_words(protocol: 'protocols.Protocol') -> str:
  """What one user sends in a round, in words."""
  if protocol.noise_multiplier is not None:
    dimension = protocol.dimension or 1
    vector = (f'{dimension:,}-dimensional vector' if dimension > 1
              else 'value')
    return (f'its clipped {vector} (norm at most C) plus its own Gaussian '
            f'noise N(0, ({protocol.noise_multiplier:g} C)^2)')
  if protocol.randomizer == protocols.UNARY_RATES:
    epsilon = f'eps0 = {protocol.local_randomizer().local_epsilon:g}'
    return (f'one report of unary encoding over {protocol.domain_size:,} '
            f'values, each bit 1 with probability p = '
            f'{protocol.rate_if_one:g} at its own value and q = '
            f'{protocol.rate_if_zero:g} elsewhere ({epsilon}, '
            'UNARY-ENCODING-RATES)')
  epsilon = f'eps0 = {protocol.local_epsilon:g}'
  if protocol.randomizer is not None:
    return (f'one report of {_RANDOMIZER_WORDS[protocol.randomizer]} over '
            f'{protocol.domain_size:,} values ({epsilon})')
  if protocol.num_categories is not None:
    return (f'one report of {protocol.num_categories}-ary randomized '
            f'response ({epsilon})')
  return f'one report through any {epsilon} local randomizer (pure LDP)'


def _relation_words(protocol: 'protocols.Protocol') -> str:
  """The neighbouring relation in words."""
  if not protocol.deletion:
    return 'Neighbouring datasets differ in one user\'s data (replace-one).'
  if 'SUM-OF-BITS-DELETION' in protocol.relation_label():
    return ('Neighbouring datasets: one user\'s report is replaced by the '
            'randomizer\'s output on the all-zero vector (deletion, '
            'dp_accounting\'s REPLACE_SPECIAL; SUM-OF-BITS-DELETION).')
  return ('Neighbouring datasets: one user\'s report is replaced by the '
          'randomizer\'s output on a fixed input of its domain (deletion, '
          'dp_accounting\'s REPLACE_SPECIAL), accounted with the replace-one '
          'bound (DELETION-AS-REPLACE-ONE).')


# What calibrate found, in words ('most local-epsilon' read badly).
_SOLVED_WORDS = {('most', 'local_epsilon'): 'largest eps0',
                 ('most', 'rounds'): 'most rounds',
                 ('least', 'num_users'): 'fewest users',
                 ('least', 'noise_multiplier'): 'smallest noise multiplier'}


def _protocol_words(protocol: 'protocols.Protocol') -> List[str]:
  """The protocol as sentences: who takes part, who is trusted, the relation."""
  users = (f'{protocol.num_users:,} users' if protocol.num_users != 1
           else '1 user')
  each_of = 'The 1 user' if protocol.num_users == 1 else f'Each of {users}'
  rounds = (f'in each of {protocol.rounds:,} rounds' if protocol.rounds > 1
            else 'in one round')
  sends = _report_words(protocol)
  if protocol.release == 'sum' and protocol.aggregator_noise is not None:
    who = (f'{each_of} sends {sends} {rounds}; only a '
           'secure aggregation protocol is trusted: the server sees the '
           'coordinate-wise sum of the reports plus, on every coordinate, '
           f'{noise.noise_words(protocol.aggregator_noise)}, nothing else; '
           'the reports and the noise are accounted as one release '
           '(SUM-OF-BITS-WITH-NOISE).')
  elif protocol.release == 'sum':
    who = (f'{each_of} sends {sends} {rounds}; only a '
           'secure aggregation protocol is trusted: the server sees the '
           'coordinate-wise sum of the reports, nothing else.')
  elif protocol.sample_size is not None:
    who = (f'{rounds.capitalize()}, a hidden uniform sample of '
           f'{protocol.sample_size:,} of {users} each sends {sends}; only '
           'the shuffler is trusted: it hides who was sampled and who sent '
           'which report, and the server sees the shuffled reports.')
  elif protocol.checkin_rate is not None or (
      protocol.noise_multiplier is not None
      and protocol.randomizer != protocols.GAUSSIAN):
    rate = 1.0 if protocol.checkin_rate is None else protocol.checkin_rate
    who = (f'{rounds.capitalize()}, each of {users} checks in with '
           f'probability {rate:g} and then sends {sends}; only the '
           'shuffler is trusted: it hides who sent which report, and the '
           'server sees the shuffled reports and how many there are.')
  else:
    who = (f'{each_of} sends {sends} {rounds}; only the '
           'shuffler is trusted: it hides who sent which report, and the '
           'server sees the shuffled reports.')
  return [who, _relation_words(protocol)]


def _describe(protocol: 'protocols.Protocol', args) -> str:
  return ' '.join(_protocol_words(protocol)) + (
      f' delta = {protocol.delta:g}{_delta_note(args)}.')


def _number(value: Optional[float]) -> str:
  return 'n/a' if value is None else f'{value:.6g}'


def _as_dict(result: 'protocols.MethodResult') -> dict:
  return attr.asdict(result)


def _epsilon(args) -> dict:
  if args.noise is not None and not noise.on_reports(args):
    return noise.epsilon(args, protocols)
  protocol = _protocol(args)
  _progress(0, 2, 'certified epsilon')
  certified = protocols.certified_epsilon(protocol, args.accountant)
  _progress(1, 2, 'lower bound      ')
  lower = protocols.best_lower_bound(protocol)
  _progress(2, 2, 'done             ')
  return dict(protocol=attr.asdict(protocol), certified=_as_dict(certified),
              lower_bound=_as_dict(lower),
              relation=protocol.relation_label(), text=[
                  *_protocol_words(protocol), '',
                  f'  certified epsilon (upper bound): '
                  f'{_number(certified.epsilon):>10}   at delta = '
                  f'{protocol.delta:g}'
                  f'{" under deletion" if protocol.deletion else ""}',
                  f'  best lower bound:                '
                  f'{_number(lower.epsilon):>10}', '',
                  f'epsilon is central (epsilon, delta)-DP of everything the '
                  f'server sees over {_rounds_words(protocol)}, proven by '
                  f'{_ACCOUNTANT_WORDS[certified.method]} '
                  f'({certified.seconds:.2f} s).',
                  _lower_bound_words(protocol, lower),
                  *([] if args.delta is not None else [
                      f'delta = {protocol.delta:g} is the default '
                      f'{DELTA_RULE}; choose another with --delta.'])])


_ACCOUNTANT_WORDS = {'pld': 'the PLD accountant (ShufflePldAccountant)',
                     'rdp': 'the RDP accountant (ShuffleRdpAccountant)'}


def _rounds_words(protocol: 'protocols.Protocol') -> str:
  return (f'all {protocol.rounds:,} rounds' if protocol.rounds > 1
          else 'the round')


def _lower_bound_words(protocol: 'protocols.Protocol',
                       lower: 'protocols.MethodResult') -> str:
  """What the best lower bound means, or why there is none."""
  if lower.epsilon is None:
    return f'Lower bound n/a: {lower.detail}.'
  if lower.method == 'binary-rr-pair' and protocol.randomizer is None and (
      protocol.num_categories is None):
    which = ('for any eps0-LDP randomizer: binary randomized response is one '
             'of them, and this is its exact epsilon on one pair of datasets')
  else:
    released = ('this randomizer\'s sum' if protocol.release == 'sum'
                else 'this randomizer')
    which = (f'for {released}: this is its exact epsilon on specific pairs '
             'of datasets')
  return (f'The lower bound means: no accountant can certify less {which} '
          f'({lower.seconds:.2f} s).')


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
  width = max(len(name) for name in protocols.METHODS)
  text = [_describe(protocol, args),
          f'  {"method":<{width}} {"kind":<12} {"epsilon":>10} {"ratio":>7} '
          f'{"s":>6}  detail']
  for result in results:
    ratio = (None if result.epsilon is None or not best
             else result.epsilon / best)
    rows.append(dict(_as_dict(result), ratio_to_best_upper=ratio))
    text.append(f'  {result.method:<{width}} {result.kind:<12} '
                f'{_number(result.epsilon):>10} '
                f'{"" if ratio is None else f"{ratio:.3f}":>7} '
                f'{result.seconds:>6.2f}  {result.detail}')
  text.append('  ratio = epsilon / smallest certified upper bound')
  return dict(protocol=attr.asdict(protocol), methods=rows,
              relation=protocol.relation_label(), text=text)


def _calibrate(args) -> dict:
  if (args.noise is not None and not noise.on_reports(args)) or (
      args.solve in noise.SOLVED):
    return noise.calibrate(args, protocols, calibration)
  solve = args.solve.replace('-', '_')
  if getattr(args, solve) is not None:
    raise UsageError(f'--{args.solve} is what calibrate solves for; do not '
                     'give it')
  _check_solvable(args, solve)
  target = args.target_epsilon
  delta = args.delta or default_delta(args.num_users)
  names = (protocols.ACCOUNTANTS if args.accountant == 'best'
           else (args.accountant,))
  relation = protocols.RELATIONS[args.relation or 'replace-one']
  values, unreachable = [], []
  for index, name in enumerate(names):
    _progress(index, len(names), f'calibrating ({name})')
    options = dict(make_fresh_accountant=(
        lambda kind=protocols.ACCOUNTANT_TYPES[name]: kind(
            neighboring_relation=relation)))
    make_event = lambda value: _protocol(args, **{solve: value}).round_event()
    try:
      if solve == 'num_users':
        values.append(calibration.calibrate_num_users(
            target, delta, rounds=args.rounds or 1, relation=relation,
            make_event=lambda n: _protocol(args, num_users=n, delta=delta
                                           ).round_event(),
            max_num_users=LIMITS['num-users'][1], **options))
      elif solve == 'rounds':
        values.append(calibration.calibrate_rounds(
            make_event(None), target, delta,
            max_rounds=LIMITS['rounds'][1], **options))
      elif solve == 'local_epsilon':
        values.append(calibration.calibrate_local_epsilon(
            target, delta, rounds=args.rounds or 1, make_event=make_event,
            max_local_epsilon=LIMITS['local-epsilon'][1], **options))
      else:
        values.append(calibration.calibrate_noise_multiplier(
            target, delta, rounds=args.rounds or 1, make_event=make_event,
            noise_multiplier_range=LIMITS['noise-multiplier'], **options))
    except calibration.UnreachableTargetError as error:
      unreachable.append(f'{name}: {error}')
  _progress(len(names), len(names), 'done                 ')
  if not values:
    raise Impossible(f'impossible: {unreachable[0]}')
  verb = 'most' if solve in ('local_epsilon', 'rounds') else 'least'
  if solve == 'num_users':
    args.num_users = min(values)  # the protocol described below
  value = max(values) if verb == 'most' else min(values)
  end = LIMITS[args.solve][1 if verb == 'most' else 0]
  at_limit = (' (the end of the search range; more would do too)'
              if value == end and solve != 'num_users' else '')
  protocol = _protocol(args, **{solve: value})
  achieved = protocols.certified_epsilon(protocol, args.accountant)
  return dict(protocol=attr.asdict(protocol), solved=solve, value=value,
              certified=_as_dict(achieved),
              relation=protocol.relation_label(), text=[
                  _describe(protocol, args),
                  f'  {_SOLVED_WORDS.get((verb, solve), solve)} meeting '
                  'epsilon <= '
                  f'{target:g}: '
                  f'{noise.solved_text(value, larger_meets=verb == "least")}'
                  f'{at_limit}',
                  f'  certified epsilon (upper bound) there: '
                  f'{achieved.epsilon:.6g} ({achieved.method})'])


# Flags that describe a pure LDP randomizer, which local Gaussian noise
# (--noise-multiplier) replaces.
_PURE_LDP_FLAGS = ('local_epsilon', 'num_categories', 'randomizer',
                   'domain_size')


def _check_solvable(args, solve: str) -> None:
  """Refuses flags that exclude the solved parameter, before any search.

  Found later, such a conflict would be reported with the solver's trial
  value (`--noise-multiplier=100000.0`), which the user never passed.
  """
  if solve != 'num_users' and args.num_users is None:
    raise UsageError('calibrate needs --num-users (unless --solve '
                     'num-users)')
  if solve == 'num_users' and args.delta is None:
    raise UsageError('--solve num-users needs --delta (its default depends '
                     'on n)')
  if solve == 'noise_multiplier':
    given = [f'--{name.replace("_", "-")}' for name in _PURE_LDP_FLAGS
             if getattr(args, name) not in (None, 'gaussian')]
    if given:
      raise UsageError(
          f'--solve noise-multiplier chooses local Gaussian noise, which '
          f'replaces the pure LDP randomizer of {", ".join(given)}: drop '
          f'{"it" if len(given) == 1 else "them"}, or use --solve '
          'local-epsilon')
  if solve == 'local_epsilon' and args.randomizer == protocols.UNARY_RATES:
    raise UsageError('--solve local-epsilon chooses eps0, which the rates '
                     'of --randomizer ue fix: solve rounds or num-users, or '
                     'use --randomizer sue or oue')
  if solve == 'local_epsilon' and args.noise_multiplier is not None:
    raise UsageError('--solve local-epsilon chooses the eps0 of a pure LDP '
                     'randomizer, which --noise-multiplier (local Gaussian '
                     'noise) excludes: drop it, or use --solve '
                     'noise-multiplier')


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
  field = args.x.replace('-', '_')
  if getattr(args, field) is not None:
    raise UsageError(f'--{args.x} is swept by --x {args.x}; give its values '
                     'with --values instead')
  if args.num_users is None and field != 'num_users':
    raise UsageError('the following arguments are required: --num-users')
  if field == 'local_epsilon' and args.randomizer == protocols.UNARY_RATES:
    raise UsageError('--x local-epsilon sweeps eps0, which the rates of '
                     '--randomizer ue fix: sweep rounds or num-users')
  parse = (_real if args.x == 'local-epsilon' else _whole)(args.x)
  text = args.values or _PLOT_VALUES[args.x]
  try:
    values = [parse(value) for value in text.split(',')]
  except argparse.ArgumentTypeError as error:
    raise UsageError(f'--values: {error}') from None
  # One delta for the whole figure: the default rule at the largest n.
  delta = args.delta
  if delta is None:
    delta = default_delta(max(values) if field == 'num_users'
                          else args.num_users)
  sweep = [_protocol(args, delta=delta, **{field: value}) for value in values]
  try:
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot
  except ImportError:
    raise UsageError('plot needs matplotlib: '
                     f'{_validation.install_hint("plot")}') from None
  series = {name: [] for name in methods}
  total = len(sweep) * len(methods)
  for index, protocol in enumerate(sweep):
    for offset, name in enumerate(methods):
      series[name].append(protocols.evaluate(protocol, name).epsilon)
      _progress(index * len(methods) + offset + 1, total, 'plotting')
  figure, axes = pyplot.subplots(figsize=(7.5, 4))
  kinds = []
  for index, (name, epsilons) in enumerate(series.items()):
    points = [(x, y) for x, y in zip(values, epsilons) if y is not None]
    if points:
      kinds.append(protocols.METHODS[name][0])
      axes.plot(*zip(*points), label=name,
                **figure_style.series_style(index, kinds[-1]))
  if args.x != 'local-epsilon':
    axes.set_xscale('log')
  axes.set_yscale('log')
  axes.set_xlabel(args.x)
  axes.set_ylabel(f'epsilon at delta = {delta:g}')
  fixed = {key: value for key, value in attr.asdict(sweep[0]).items()
           if key != field}
  axes.set_title(f'{type(sweep[0].round_event()).__name__}: '
                 + figure_style.parameter_title(fixed), fontsize=9)
  figure_style.legend_outside(axes, kinds)
  axes.grid(True, which='both', alpha=0.3)
  figure_style.save(figure, args.output, format=output_format, dpi=120)
  pyplot.close(figure)
  text = [f'wrote {args.output}; delta = {delta:g}{_delta_note(args)}',
          f'  {args.x:>14} ' + ' '.join(f'{name:>14}' for name in methods)]
  for row, value in enumerate(values):
    text.append(f'  {value:>14g} ' + ' '.join(
        f'{_number(series[name][row]):>14}' for name in methods))
  return dict(x=args.x, values=values, series=series, output=args.output,
              delta=delta, text=text)


def _reference(args) -> dict:
  from shuffle_accountants import reference
  if args.id is None:
    entries = [reference.entry(i) for i in reference.identifiers()]
    return dict(entries=[attr.asdict(e) for e in entries], text=[
        f'{e.id:<24} {e.status}' for e in entries] + [
            f'Details: {reference.COMMAND} ID'])
  try:
    entry = reference.entry(args.id)
  except reference.UnknownIdError as error:
    raise UsageError(str(error)) from None
  used = reference.used_in(entry.id)
  sources = '; '.join(entry.sources) or (
      'none cited: the argument below is the project\'s')
  former = f' (formerly {entry.former})' if entry.former else ''
  return dict(attr.asdict(entry), used_in=list(used), text=[
      f'{entry.id}: {entry.status}',
      *([f'Title: {entry.title}{former}'] if entry.title else []),
      f'Source: {sources}',
      f'Section: {entry.section} (docs/mathematics.md#{entry.anchor})',
      '', entry.statement, '',
      'Used in:' + ''.join(f'\n  {name}' for name in used) if used else
      'Used in: no module of the package (cited by the docs)'])


_COMMANDS = {'epsilon': _epsilon, 'compare': _compare,
             'calibrate': _calibrate, 'plot': _plot, 'reference': _reference}


def main(argv: Optional[Sequence[str]] = None) -> int:
  """Runs the CLI; returns the exit status (0; 1 impossible; 2 usage; 130)."""
  global protocols, calibration
  arguments = sys.argv[1:] if argv is None else list(argv)
  if not arguments:
    # No command: the usage line and where to read more, not only an error.
    sys.stderr.write(_build_parser().format_usage())
    return _fail(False, f'give a command; `{PROGRAM} --help` explains '
                 'them with examples', 2)
  # With --json a failure is also a JSON object on stdout, so that a script
  # reading it gets one (the flag is looked for even when parsing fails).
  as_json = '--json' in arguments
  try:
    args = _build_parser(arguments).parse_args(arguments)
    _PROGRESS_SHOWN[0] = sys.stderr.isatty() and not args.json
    if args.command == 'reference':
      report = _reference(args)
    else:
      with warnings.catch_warnings():
        # The library is quiet on valid input (tests run it with warnings
        # as errors); this keeps a dependency's warning off the terminal.
        warnings.simplefilter('ignore')
        if protocols is None:
          from shuffle_accountants import calibration as calibration_module
          from shuffle_accountants.cli import protocols as loaded
          protocols, calibration = loaded, calibration_module
        report = _COMMANDS[args.command](args)
      if args.delta is None:
        report['delta_rule'] = DELTA_RULE
  except (UsageError, noise.NoiseUsageError) as error:
    return _fail(as_json, str(error), 2)
  except (ValueError, TypeError) as error:
    return _fail(as_json, _flag_message(error), 2)
  except (Impossible, noise.NoiseImpossible) as error:
    return _fail(as_json, str(error), 1)
  except KeyboardInterrupt:
    return _fail(as_json, 'interrupted', 130)
  except MemoryError:
    return _fail(as_json, 'out of memory; please report the command that '
                 'caused it', 1)
  except Exception as error:
    # Never a traceback: one line that can be reported.
    return _fail(as_json, f'internal error ({type(error).__name__}: '
                 f'{_flag_message(error)}); please report the command', 1)
  text = report.pop('text')
  try:
    if args.json:
      print(_json.dumps(report, default=str))
    else:
      print('\n'.join(text))
    sys.stdout.flush()
  except BrokenPipeError:
    # The reader closed the pipe (`| head -1`): what it read is what it
    # wanted. Point stdout at devnull so that the interpreter's last flush
    # does not print a traceback either.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
  return 0


def _fail(as_json: bool, message: str, status: int) -> int:
  sys.stderr.write('\n' if _PROGRESS_OPEN[0] else '')
  print(f'{PROGRAM}: error: {message}', file=sys.stderr)
  if as_json:
    print(_json.dumps({'error': message, 'exit_status': status}))
  return status


def entry_point() -> None:
  """Console-script entry: exit with `main`'s status."""
  sys.exit(main())
