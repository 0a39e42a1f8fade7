"""TF-Privacy-style privacy statements for shuffled DP-SGD.

IDs: GAUSS-NO-GAIN, LABEL-MIXTURE, LIEW-THM2, GAUSS-LOCAL-UNCOVERED,
  GROUP-PRIVACY [UB]

No TensorFlow needed: TF-Privacy's accounting is dp_accounting, whose events
our accountants compose (see docs/tf_privacy.md). This module adds

* `shuffle_dp_sgd_event`: the `DpEvent` of a whole shuffle-model DP-SGD run
  (one `CheckInEvent` per iteration), to compose with anything else; and
* `compute_shuffle_privacy_statement`: a drop-in for TF-Privacy's
  `compute_dp_sgd_privacy_statement` (its arguments, its RDP default, its
  statement's structure), printing the shuffle model's certified ε before
  TF-Privacy's own central lines; user-level lines by `group_privacy_epsilon`
  (GROUP-PRIVACY).
"""

import enum
import math
import textwrap
from typing import Callable, Optional, Union

import dp_accounting
from dp_accounting import pld
from dp_accounting import rdp

from shuffle_accountants import _validation
from shuffle_accountants.events import CheckInEvent
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.rdp.accountant import ShuffleRdpAccountant


class AccountantType(enum.Enum):
  """Like TF-Privacy's enum; its members (or 'RDP' / 'PLD') are accepted."""
  RDP = 'RDP'
  PLD = 'PLD'


# One sentence for every statement that prints both numbers
# (GAUSS-LOCAL-UNCOVERED).
WHY_LARGER = (
    'Why the shuffle-model epsilon is larger at the same noise multiplier: '
    'each report is released with only its own noise (central DP-SGD hides '
    'every example in one noisy sum), no sound amplification by shuffling is '
    'known for Gaussian vectors (GAUSS-LOCAL-UNCOVERED), and the guarantee '
    'holds against a '
    'server that sees every report, whereas central DP-SGD trusts the server '
    'with the raw gradients.')

def _accountant_type(accountant_type) -> AccountantType:
  value = str(getattr(accountant_type, 'value', accountant_type)).upper()
  try:
    return AccountantType(value)
  except ValueError:
    raise ValueError(f"accountant_type must be 'RDP' or 'PLD'; got "
                     f'{accountant_type!r}.') from None


def _checkin_rate(number_of_examples: int, batch_size: Optional[int],
                  checkin_rate: Optional[float]) -> float:
  if (batch_size is None) == (checkin_rate is None):
    raise ValueError('give exactly one of batch_size (expected examples per '
                     'iteration) or checkin_rate; got batch_size='
                     f'{batch_size}, checkin_rate={checkin_rate}.')
  if checkin_rate is not None:
    return _validation.check_real('checkin_rate', checkin_rate, 0.0, 1.0,
                                  min_inclusive=False)
  batch_size = _validation.check_integer('batch_size', batch_size, 1,
                                         number_of_examples)
  return batch_size / number_of_examples


def shuffle_dp_sgd_event(
    number_of_examples: int, num_epochs: float, *,
    batch_size: Optional[int] = None, checkin_rate: Optional[float] = None,
    noise_multiplier: Optional[float] = None,
    local_epsilon: Optional[float] = None) -> dp_accounting.DpEvent:
  """The exact `DpEvent` of shuffled DP-SGD (LIEW-THM2, LABEL-MIXTURE).

  Each of `number_of_examples` users checks in every iteration with
  probability q (`checkin_rate`, or `batch_size` / `number_of_examples`),
  clips its gradient and adds its own noise (`noise_multiplier` σ: Gaussian
  N(0, σ²C²); or any `local_epsilon`-LDP randomizer); a shuffler releases the
  reports. As in TF-Privacy, the run has ceil(num_epochs / q) iterations.
  """
  number_of_examples = _validation.check_integer('number_of_examples',
                                                 number_of_examples, 1)
  num_epochs = _validation.check_real('num_epochs', num_epochs, 0.0,
                                      min_inclusive=False)
  rate = _checkin_rate(number_of_examples, batch_size, checkin_rate)
  return dp_accounting.SelfComposedDpEvent(
      CheckInEvent(num_users=number_of_examples, checkin_rate=rate,
                   noise_multiplier=noise_multiplier,
                   local_epsilon=local_epsilon),
      math.ceil(num_epochs / rate))


def _epsilon_line(label: str, epsilon: float, note: str = '') -> str:
  """One line of numbers, laid out as TF-Privacy's statement lays them out."""
  number = f'{"inf" + note:>12}' if math.isinf(epsilon) else f'{epsilon:12.3f}'
  return f'\n    {label + ":":<53}{number}'


def _logexpm1(x: float) -> float:
  """log(e^x - 1) for x > 0."""
  return x + math.log(-math.expm1(-x))


def group_privacy_epsilon(example_epsilon: Callable[[float], float],
                          group_size: int, delta: float) -> float:
  """User-level ε for users of at most `group_size` records. [UB]

  GROUP-PRIVACY (Vadhan 2017, Lemma 2.2, as TF-Privacy applies it):
  `example_epsilon(d)` is a certified ε at example-level δ = d; the result
  is group_size · ε at an example-level δ whose user-level δ,
  d · (e^{kε} − 1)/(e^{ε} − 1), is at most `delta` (found by bisection in
  log d and checked at the point returned), or inf if none is found.
  """
  if group_size == 1:
    return example_epsilon(delta)
  log_target = math.log(delta)

  def user_log_delta(log_delta: float, epsilon: float) -> float:
    if epsilon == 0:
      return log_delta + math.log(group_size)
    return (log_delta + _logexpm1(group_size * epsilon)
            - _logexpm1(epsilon))

  def feasible(log_delta: float) -> Optional[float]:
    """k·ε at example-level δ = e^log_delta if its user-level δ fits."""
    epsilon = example_epsilon(math.exp(log_delta))
    if math.isfinite(epsilon) and user_log_delta(log_delta,
                                                 epsilon) <= log_target:
      return group_size * epsilon
    return None

  # Step down from the target (infeasible: the user-level δ exceeds the
  # example-level one) until a feasible example-level δ, as TF-Privacy's
  # search does; too small a δ makes ε, and with it the user-level δ, grow,
  # so the feasible deltas lie between, and bisection finds the largest.
  high, low = log_target, log_target - math.log(10)
  best = feasible(low)
  while best is None:
    high, low = low, low - math.log(10)
    if low < _SMALLEST_LOG_DELTA:
      return math.inf
    best = feasible(low)
  for _ in range(30):  # the bracket to 1e-9 of its width, at least log 10
    middle = (low + high) / 2
    found = feasible(middle)
    if found is None:
      high = middle
    else:
      low, best = middle, min(best, found)
  return best


# The search for an example-level delta stops below e^-690 (about 1e-300).
_SMALLEST_LOG_DELTA = -690.0


def _event_epsilon(accountant, event) -> Callable[[float], float]:
  """ε(δ) of `event` composed once in `accountant`."""
  accountant.compose(event)
  return lambda delta: float(accountant.get_epsilon(delta))


def _central_event(noise_multiplier: float,
                   sampling_probability: Optional[float],
                   num_epochs: float) -> dp_accounting.DpEvent:
  """TF-Privacy's central DP-SGD event (`_compute_dp_sgd_example_privacy`)."""
  event = dp_accounting.GaussianDpEvent(noise_multiplier)
  if sampling_probability is None:
    return dp_accounting.SelfComposedDpEvent(event, math.ceil(num_epochs))
  return dp_accounting.SelfComposedDpEvent(
      dp_accounting.PoissonSampledDpEvent(sampling_probability, event),
      math.ceil(num_epochs / sampling_probability))


_NO_USER_BOUND = ('No user-level privacy guarantee is possible without a bound '
                  'on the number of examples per user.')
_POISSON_NOTE = (
    '(*) Poisson sampling is not usually done in training pipelines, but '
    'assuming that the data was randomly shuffled, it is believed that the '
    'actual epsilon should be closer to this value than the conservative '
    'assumption of an arbitrary data order.')
_INFINITE_NOTE = (
    '(**) A finite example-level epsilon implies a finite user-level epsilon '
    'at any `max_examples_per_user`, but because conversion from '
    'example-level to user-level DP is not exact, it is possible for the '
    'upper bound on the user-level epsilon to still be infinite.')
# used_microbatching=True: a report holds a microbatch of several examples,
# which `CheckInEvent` (one report per example) does not describe.
_NO_MICROBATCH_SHUFFLE = ('n/a: with microbatching a report holds several '
                          'examples, which no shuffle-model bound here '
                          'covers; pass used_microbatching=False when each '
                          'example sends its own report')


def compute_shuffle_privacy_statement(
    number_of_examples: int,
    batch_size: Optional[int],
    num_epochs: float,
    noise_multiplier: Optional[float] = None,
    delta: Optional[float] = None,
    used_microbatching: bool = False,
    max_examples_per_user: Optional[int] = None,
    accountant_type: Union[AccountantType, str] = AccountantType.RDP,
    *,
    checkin_rate: Optional[float] = None,
    local_epsilon: Optional[float] = None,
) -> str:
  """A report of the shuffle-model guarantee, beside central DP-SGD's.

  A drop-in for TF-Privacy's `compute_dp_sgd_privacy_statement`: the same
  arguments in the same order, the same default accountant (RDP), and its
  statement's structure, with the shuffle model's certified ε first and
  TF-Privacy's own central lines after it (the same numbers, checked
  against TF-Privacy by tests/adapters/test_tf_privacy.py). Give
  `batch_size` (expected examples per iteration) or `checkin_rate`, and
  `noise_multiplier` or, for pure-LDP reports, `local_epsilon` (then
  `noise_multiplier` is omitted and only the shuffle model is reported).

  The shuffle-model ε is a certified upper bound under replace-one adjacency
  (`shuffle_dp_sgd_event` composed in `ShuffleRdpAccountant` or
  `ShufflePldAccountant`). `used_microbatching` is TF-Privacy's (central
  lines at half the noise multiplier under add-or-remove-one); its default
  here is False, because in the shuffle model every example sends its own
  report; with True the shuffle line says n/a. `max_examples_per_user` = k
  adds user-level lines by group privacy (GROUP-PRIVACY, as TF-Privacy),
  with either accountant (TF-Privacy prints them for RDP only).
  """
  kind = _accountant_type(accountant_type)
  if delta is None:
    raise ValueError('delta (the target delta) is required; got None.')
  delta = _validation.check_real('delta', delta, 0.0, 1.0,
                                 min_inclusive=False, max_inclusive=False)
  if not isinstance(used_microbatching, bool):
    raise TypeError(f'used_microbatching must be True or False; got '
                    f'{used_microbatching!r}.')
  if max_examples_per_user is not None:
    max_examples_per_user = _validation.check_integer(
        'max_examples_per_user', max_examples_per_user, 1)
  event = shuffle_dp_sgd_event(
      number_of_examples, num_epochs, batch_size=batch_size,
      checkin_rate=checkin_rate, noise_multiplier=noise_multiplier,
      local_epsilon=local_epsilon)
  rate = event.event.checkin_rate
  examples = (f'{batch_size} examples per iteration' if batch_size is not None
              else f'each example in an iteration with probability {rate:.6g}')
  if noise_multiplier is not None:
    report = (f'noise multiplier {noise_multiplier} added by each example to '
              'its own clipped gradient')
  else:
    report = (f'each example randomizing its report with a {local_epsilon}-LDP '
              'randomizer')
  users = ('no bound on number of examples per user'
           if max_examples_per_user is None
           else f'at most {max_examples_per_user} examples per user')
  shuffle_accountant = (ShufflePldAccountant() if kind is AccountantType.PLD
                        else ShuffleRdpAccountant())
  shuffle_epsilon = (None if used_microbatching
                     else _event_epsilon(shuffle_accountant, event))
  paragraphs = [
      textwrap.fill(
          f'Shuffle-model DP-SGD performed over {number_of_examples} examples '
          f'with {examples} ({event.count} iterations), {report}, for '
          f'{num_epochs} epochs '
          f'{"with" if used_microbatching else "without"} microbatching, and '
          f'{users}; a trusted shuffler releases the reports of each '
          'iteration in random order.', width=80),
      textwrap.fill(
          'This privacy guarantee protects the release of all reports and '
          'model checkpoints in addition to the final model.', width=80),
  ]

  def shuffle_line(epsilon: Optional[float], note: str = '') -> str:
    if epsilon is None:
      return f'\n    Epsilon in the shuffle model: {_NO_MICROBATCH_SHUFFLE}'
    return _epsilon_line('Epsilon in the shuffle model', epsilon, note)

  paragraphs.append(textwrap.fill(
      f'Example-level DP with replace-one adjacency at delta = {delta} '
      f'computed with {kind.value} accounting (certified upper bound):',
      width=80) + shuffle_line(None if shuffle_epsilon is None
                               else shuffle_epsilon(delta)))
  infinite = False
  if noise_multiplier is not None:
    # TF-Privacy's central lines: microbatching doubles the add-or-remove
    # sensitivity (noise multiplier halved); replace-one already reads
    # sensitivity 2 (UPSTREAM-SENSITIVITY), which microbatching keeps.
    central_sigma = noise_multiplier / 2 if used_microbatching else (
        noise_multiplier)
    central = {
        sampled: _event_epsilon(_dp_accounting_accountant(kind),
                                _central_event(central_sigma, sampled,
                                               num_epochs))
        for sampled in (None, rate)}
    replace_one = _event_epsilon(
        pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE),
        _central_event(noise_multiplier, rate, num_epochs))
    paragraphs.append(
        textwrap.fill(
            'For comparison, central DP-SGD at the same noise multiplier (the '
            'server adds the noise once, so the sum of k participants carries '
            'sqrt(k) times less noise), as TF-Privacy states it. '
            f'Example-level DP with add-or-remove-one adjacency at delta = '
            f'{delta} computed with {kind.value} accounting:', width=80) +
        _epsilon_line('Epsilon with each example occurring once per epoch',
                      central[None](delta)) +
        _epsilon_line('Epsilon assuming Poisson sampling (*)',
                      central[rate](delta)) +
        _epsilon_line('Epsilon, Poisson sampling, replace-one (PLD)',
                      replace_one(delta)))
  if max_examples_per_user is None:
    paragraphs.append(textwrap.fill(_NO_USER_BOUND, width=80))
  else:
    group = lambda epsilon_at: group_privacy_epsilon(
        epsilon_at, max_examples_per_user, delta)
    paragraph = textwrap.fill(
        f'User-level DP with replace-one adjacency at delta = {delta} '
        f'computed using {kind.value} accounting and group privacy '
        '(certified upper bound):', width=80)
    user_epsilon = (None if shuffle_epsilon is None
                    else group(shuffle_epsilon))
    infinite |= user_epsilon is not None and math.isinf(user_epsilon)
    paragraph += shuffle_line(user_epsilon, ' (**)')
    if noise_multiplier is not None:
      users_central = {sampled: group(central[sampled])
                       for sampled in (None, rate)}
      infinite |= any(math.isinf(value) for value in users_central.values())
      paragraph += (
          '\n' + textwrap.fill(
              f'Central DP-SGD, user-level DP with add-or-remove-one adjacency '
              f'at delta = {delta} computed using {kind.value} accounting '
              'and group privacy:', width=80) +
          _epsilon_line('Epsilon with each example occurring once per epoch',
                        users_central[None], ' (**)') +
          _epsilon_line('Epsilon assuming Poisson sampling (*)',
                        users_central[rate], ' (**)'))
    paragraphs.append(paragraph)
  if noise_multiplier is not None:
    paragraphs.append(textwrap.fill(_POISSON_NOTE, width=80))
  if infinite:
    paragraphs.append(textwrap.fill(_INFINITE_NOTE, width=80))
  if noise_multiplier is not None:
    paragraphs.append(textwrap.fill(WHY_LARGER, width=80))
  return '\n\n'.join(paragraphs) + '\n'


def _dp_accounting_accountant(
    kind: AccountantType) -> dp_accounting.PrivacyAccountant:
  """dp_accounting's accountant of `kind`, as TF-Privacy's `get_accountant`."""
  return pld.PLDAccountant() if kind is AccountantType.PLD else (
      rdp.RdpAccountant())
