"""The command line's noisy integer sums and noisy sums of reports (--noise).

IDs: BINOMIAL-SUM, DISCRETE-GAUSSIAN-SUM, SUM-OF-BITS-WITH-NOISE

`epsilon --noise binomial --num-trials N` (or `--noise discrete-gaussian
--sigma S`, `--noise discrete-laplace --scale B`) accounts an integer sum
plus that noise on its own (`BinomialSecureSumEvent`,
`DiscreteGaussianSumEvent`, `DiscreteLaplaceSumEvent`); `calibrate
--solve num-trials` / `--solve sigma` finds the fewest flips or the
smallest sigma meeting a target (the library has no search for the
Laplace scale). With flags that describe the clients' randomizer,
`--release sum` and a discrete Gaussian or Laplace `--noise` add the
aggregators' noise to every coordinate of the sum of the reports:
`aggregator_noise` is that noise, which the CLI's `Protocol` accounts with
the reports as one release (`SumOfReportsEvent(..., aggregator_noise=...)`,
SUM-OF-BITS-WITH-NOISE; unary encodings only, no binomial noise: the
library has neither).
"""

import math
from typing import Callable, Dict, List, Sequence, Tuple

__all__ = ['NOISES', 'SOLVED', 'NoiseUsageError', 'NoiseImpossible',
           'given', 'add_flags', 'on_reports', 'aggregator_noise',
           'noise_words', 'epsilon', 'calibrate', 'solved_text']

NOISES = ('binomial', 'discrete-gaussian', 'discrete-laplace')
# The flag that gives each noise its size.
_SIZE = {'binomial': 'num_trials', 'discrete-gaussian': 'sigma',
         'discrete-laplace': 'scale'}
# calibrate --solve values this module answers, and the noise each sizes.
_SOLVES = {'num-trials': 'binomial', 'sigma': 'discrete-gaussian'}
SOLVED = tuple(_SOLVES)
# Flags of a client randomizer or population: with them, --noise is added
# to the sum of the clients' reports (`on_reports`).
_CLIENT_FLAGS = ('local_epsilon', 'noise_multiplier', 'num_categories',
                 'randomizer', 'domain_size', 'checkin_rate', 'sample_size',
                 'rate_if_one', 'rate_if_zero')
# The noises a sum of reports takes (SUM-OF-BITS-WITH-NOISE).
_ON_REPORTS = ('discrete-gaussian', 'discrete-laplace')


class NoiseUsageError(ValueError):
  """A flag combination --noise cannot account (exit status 2)."""


class NoiseImpossible(Exception):
  """No value in the range meets the target (exit status 1)."""


def solved_text(value: float, larger_meets: bool) -> str:
  """A solved parameter as printed: a whole number in full; any other to six
  significant digits rounded toward the side that still meets the target
  (up where a larger value meets it too: users, sigma; down otherwise: eps0),
  so that the printed value is as certified as the exact one."""
  if isinstance(value, int) or float(value).is_integer():
    return str(int(value))
  step = 10.0**(math.floor(math.log10(abs(value))) - 5)
  rounded = (math.ceil if larger_meets else math.floor)(value / step) * step
  return f'{rounded:.6g}'


def given(argv: Sequence[str]) -> bool:
  """Whether the command line asks for a noisy sum (then no --num-users)."""
  return any(word == '--noise' or word.startswith('--noise=')
             for word in argv)


def add_flags(parser, whole: Callable, real: Callable) -> None:
  group = parser.add_argument_group(
      'noisy integer sum (with --noise; BINOMIAL-SUM, DISCRETE-GAUSSIAN-SUM, '
      'SUM-OF-BITS-WITH-NOISE)')
  group.add_argument('--noise', choices=NOISES,
                     help='account an integer sum plus this noise (MPC '
                     'coin flips, or each aggregator\'s discrete Gaussian '
                     'or Laplace); with --release sum of sue, oue or ue '
                     'reports, discrete-gaussian or discrete-laplace on '
                     'every coordinate of their sum')
  group.add_argument('--num-trials', type=whole('num-trials'),
                     help='N fair coin flips of the binomial noise (1 to '
                     '1e10)')
  group.add_argument('--sigma', type=real('sigma'),
                     help='sigma of each aggregator\'s discrete Gaussian '
                     '(0.1 to 1e5)')
  group.add_argument('--scale', type=real('scale'),
                     help='scale b of each aggregator\'s discrete Laplace '
                     '(0.1 to 1e4)')
  group.add_argument('--sensitivity', type=whole('sensitivity'), default=1,
                     help='largest change of one coordinate of the sum '
                     '(1 to 1e4; default 1; 1 on a sum of reports)')
  group.add_argument('--aggregators', type=whole('aggregators'),
                     help='c aggregators adding discrete Gaussian or '
                     'Laplace noise '
                     '(1 to 1e6; default 1)')
  group.add_argument('--trust', choices=('one-honest', 'all-honest'),
                     help='whose noise is relied on (default: one honest '
                     'aggregator)')


def _aggregation(args) -> Tuple[int, str]:
  """(aggregators, trust) of --noise discrete-gaussian/-laplace, with the
  defaults (one aggregator, one honest)."""
  return (1 if args.aggregators is None else args.aggregators,
          'one-honest' if args.trust is None else args.trust)


def _aggregation_flags(args) -> List[str]:
  return [f'--{name}' for name in ('aggregators', 'trust')
          if getattr(args, name, None) is not None]


def on_reports(args) -> bool:
  """Whether --noise is added to a sum of client reports (flags of a
  client randomizer are given), not accounted on its own."""
  return getattr(args, 'noise', None) is not None and any(
      getattr(args, name) is not None for name in _CLIENT_FLAGS)


def aggregator_noise(args):
  """The `DiscreteGaussianSumEvent` or `DiscreteLaplaceSumEvent` that
  --noise adds to every coordinate of the sum of the reports, or None
  without --noise or without a client randomizer (SUM-OF-BITS-WITH-NOISE).
  """
  if getattr(args, 'noise', None) is None:
    given = [f'--{name.replace("_", "-")}' for name in _SIZE.values()
             if getattr(args, name, None) is not None] + _aggregation_flags(
                 args)
    if given:
      raise NoiseUsageError(f'{given[0]} describes the noise of --noise: '
                            'give --noise, or drop it.')
    return None
  if not on_reports(args):
    return None
  if args.noise not in _ON_REPORTS:
    raise NoiseUsageError(
        f'--noise {args.noise} is accounted on an integer sum on its own '
        f'(drop the client flags); a sum of client reports takes --noise '
        f'{" or ".join(_ON_REPORTS)} only (SUM-OF-BITS-WITH-NOISE).')
  if args.release != 'sum':
    raise NoiseUsageError(
        f'--noise {args.noise} with a client randomizer adds the '
        'aggregators\' noise to the sum of the reports: give --release sum.')
  if args.num_categories is not None or args.randomizer == 'krr':
    raise NoiseUsageError(
        f'--noise {args.noise} on a sum of reports needs a unary encoding '
        '(--randomizer sue, oue or ue: independent bits, '
        'SUM-OF-BITS-WITH-NOISE); k-RR counts are not independent across '
        'coordinates: account the reports alone (drop --noise) or the '
        'noise alone (drop the client flags), whichever is smaller.')
  if args.num_users is None and getattr(args, 'solve', None) != 'num-users':
    raise NoiseUsageError('a sum of client reports needs --num-users.')
  if args.dimension is not None:
    raise NoiseUsageError(
        f'--dimension={args.dimension} counts the coordinates of a noisy '
        'sum on its own; a sum of unary-encoding reports has --domain-size '
        'coordinates, each with its own noise.')
  if args.sensitivity != 1:
    raise NoiseUsageError(
        f'--sensitivity must be 1 on a sum of reports (one user moves each '
        f'coordinate by at most 1); got {args.sensitivity}.')
  _check_parameters(args)
  return _event(args)


def _check(args, solved: str = '') -> None:
  if args.release == 'shuffle':
    raise NoiseUsageError('--noise adds noise to a sum: use --release sum '
                          'or leave --release out.')
  if args.delta is None:
    raise NoiseUsageError('give --delta with --noise (the default delta '
                          'depends on the number of users).')
  if getattr(args, 'num_users', None) is not None:
    raise NoiseUsageError(
        f'--num-users={args.num_users} counts the clients of a sum of '
        'reports; a noisy sum on its own has none: drop it, or give the '
        'clients\' randomizer (--randomizer sue, oue or ue) and --release '
        'sum.')
  _check_parameters(args, solved)


def _check_parameters(args, solved: str = '') -> None:
  """The size flag of the noise (`_SIZE`), and no other noise's."""
  needed = _SIZE[args.noise]
  for other in _SIZE.values():
    if other != needed and getattr(args, other) is not None:
      raise NoiseUsageError(f'--{other.replace("_", "-")} does not describe '
                            f'--noise {args.noise}.')
  if solved != needed.replace('_', '-') and getattr(args, needed) is None:
    raise NoiseUsageError(f'--noise {args.noise} needs --'
                          f'{needed.replace("_", "-")}.')
  if args.noise == 'binomial' and _aggregation_flags(args):
    raise NoiseUsageError(f'{_aggregation_flags(args)[0]} describes the '
                          'aggregators of --noise discrete-gaussian or '
                          'discrete-laplace, not the coin flips of --noise '
                          'binomial.')


def _event(args, value=None):
  from shuffle_accountants import events
  if args.noise == 'binomial':
    return events.BinomialSecureSumEvent(
        args.num_trials if value is None else value, args.sensitivity)
  kind = (events.DiscreteGaussianSumEvent if args.noise == 'discrete-gaussian'
          else events.DiscreteLaplaceSumEvent)
  size = getattr(args, _SIZE[args.noise])
  return kind(size if value is None else value, args.sensitivity,
              *_aggregation(args))


def _count(args) -> int:
  """Compositions: rounds times coordinates (independent noises)."""
  return (args.rounds or 1) * (args.dimension or 1)


def _certified(event, rounds: int, delta: float, names: Tuple[str, ...],
               types: Dict[str, type], relation: str
               ) -> Tuple[float, str]:
  """The smallest certified epsilon over the accountants named."""
  from dp_accounting import privacy_accountant
  results: List[Tuple[float, str]] = []
  for name in names:
    accountant = types[name](neighboring_relation=(
        privacy_accountant.NeighboringRelation[relation]))
    accountant.compose(event, rounds)
    results.append((float(accountant.get_epsilon(delta)), name))
  return min(results)


def _names(args, protocols) -> Tuple[str, ...]:
  return (protocols.ACCOUNTANTS if args.accountant == 'best'
          else (args.accountant,))


def _relation(args) -> str:
  """The relation asked for (--relation). A noisy sum is defined by the
  change of the sum, the same under replace-one and deletion to a
  reference contribution (BINOMIAL-SUM), so both give one number."""
  return ('REPLACE_SPECIAL' if getattr(args, 'relation', None) == 'deletion'
          else 'REPLACE_ONE')


_RELATION_WORDS = {'REPLACE_ONE': 'replace-one',
                   'REPLACE_SPECIAL': 'deletion: one contribution replaced '
                   'by a reference contribution'}


def noise_words(event) -> str:
  """Who adds which noise, and whose noise is relied on, in words."""
  from shuffle_accountants import events
  if isinstance(event, events.BinomialSecureSumEvent):
    return (f'centred binomial noise of {event.num_trials:,} fair coin '
            'flips (MPC)')
  noise = (f'discrete Gaussian noise of sigma = {event.sigma:g}'
           if isinstance(event, events.DiscreteGaussianSumEvent) else
           f'discrete Laplace noise of scale b = {event.scale:g}')
  return (f'{noise} from each '
          f'of {event.num_aggregators} aggregator(s), relying on '
          f'{"all of them" if event.trust == "all-honest" else "one honest aggregator"}')  # noqa: E501


def _words(event, args, rounds: int) -> str:
  """The release in words: who adds which noise, what is trusted."""
  return (f'An integer sum (one user changes each coordinate by at most '
          f'{event.sensitivity}) is released with {noise_words(event)}; secure '
          f'aggregation reveals nothing else; neighbouring datasets change '
          f'the sum by at most that ({_RELATION_WORDS[_relation(args)]}). '
          f'{rounds:,} release(s) of '
          f'one coordinate composed (rounds x dimension), delta = '
          f'{args.delta:g}.')


def epsilon(args, protocols) -> dict:
  """`epsilon --noise ...`: the certified epsilon of the noisy sum."""
  _check(args)
  event = _event(args)
  rounds = _count(args)
  value, name = _certified(event, rounds, args.delta,
                           _names(args, protocols), protocols.ACCOUNTANT_TYPES,
                           _relation(args))
  shown = 'inf' if math.isinf(value) else f'{value:.6g}'
  return dict(event=repr(event), rounds=rounds, delta=args.delta,
              relation=_relation(args),
              certified=dict(epsilon=value, accountant=name), text=[
                  _words(event, args, rounds),
                  f'  certified epsilon (upper bound): {shown:>10}   '
                  f'{name}'])


def calibrate(args, protocols, calibration) -> dict:
  """`calibrate --solve num-trials|sigma` with --noise."""
  if args.noise is None:
    raise NoiseUsageError(f'--solve {args.solve} needs --noise')
  if on_reports(args):
    raise NoiseUsageError(
        f'--solve {args.solve} sizes the noise of an integer sum on its own; '
        'with a client randomizer, solve local-epsilon, rounds or num-users.')
  if args.solve not in SOLVED:
    raise NoiseUsageError(
        f'--solve {args.solve} needs a client randomizer (and --release '
        'sum); --noise on its own is sized by --solve num-trials or sigma.')
  if _SOLVES[args.solve] != args.noise:
    raise NoiseUsageError(f'--solve {args.solve} does not describe --noise '
                          f'{args.noise} (calibrate sizes --noise binomial '
                          'and discrete-gaussian).')
  _check(args, args.solve)
  rounds = _count(args)
  values = []
  for name in _names(args, protocols):
    options = dict(make_fresh_accountant=protocols.ACCOUNTANT_TYPES[name])
    try:
      if args.noise == 'binomial':
        values.append(calibration.calibrate_num_trials(
            args.target_epsilon, args.delta, args.sensitivity, rounds,
            **options))
      else:
        values.append(calibration.calibrate_discrete_sigma(
            args.target_epsilon, args.delta, args.sensitivity,
            *_aggregation(args), rounds, **options))
    except calibration.UnreachableTargetError:
      continue
  if not values:
    raise NoiseImpossible(
        f'impossible: no {args.solve} in its range meets epsilon <= '
        f'{args.target_epsilon:g} at delta = {args.delta:g}')
  value = min(values)
  event = _event(args, value)
  achieved, name = _certified(event, rounds, args.delta,
                              _names(args, protocols),
                              protocols.ACCOUNTANT_TYPES, _relation(args))
  return dict(event=repr(event), relation=_relation(args),
              solved=args.solve.replace('-', '_'),
              value=value, certified=dict(epsilon=achieved, accountant=name),
              text=[_words(event, args, rounds),
                    f'  least {args.solve} meeting epsilon <= '
                    f'{args.target_epsilon:g}: '
                    f'{solved_text(value, larger_meets=True)}',
                    f'  certified epsilon (upper bound) there: '
                    f'{achieved:.6g} ({name})'])
