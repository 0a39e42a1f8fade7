"""TF-Privacy-style privacy statements for shuffled DP-SGD.

IDs: GAUSS-NO-GAIN, LABEL-MIXTURE, LIEW-THM2, GAUSS-LOCAL-UNCOVERED

No TensorFlow needed: TF-Privacy's accounting is dp_accounting, whose events
our accountants compose (see docs/tf_privacy.md). This module adds

* `shuffle_dp_sgd_event`: the `DpEvent` of a whole shuffle-model DP-SGD run
  (one `CheckInEvent` per iteration), to compose with anything else; and
* `compute_shuffle_privacy_statement`: the counterpart of TF-Privacy's
  `compute_dp_sgd_privacy_statement`, with the same kind of inputs, printing
  the shuffle model's certified ε next to central DP-SGD's.
"""

import enum
import math
import textwrap
from typing import Optional, Union

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


def _epsilon_line(label: str, event, accountant, delta: float) -> str:
  epsilon = accountant.compose(event).get_epsilon(delta)
  return f'\n    {label + ":":<52}{epsilon:12.3f}'


def compute_shuffle_privacy_statement(
    number_of_examples: int,
    batch_size: Optional[int],
    num_epochs: float,
    noise_multiplier: Optional[float],
    delta: float,
    *,
    checkin_rate: Optional[float] = None,
    local_epsilon: Optional[float] = None,
    accountant_type: Union[AccountantType, str] = AccountantType.PLD,
) -> str:
  """A report of the shuffle-model guarantee, beside central DP-SGD's.

  Shaped like TF-Privacy's `compute_dp_sgd_privacy_statement`: the first five
  arguments mean the same (without microbatching: in the shuffle model every
  example is its own report). Give `batch_size` or `checkin_rate`, and
  `noise_multiplier` or `local_epsilon`.

  The shuffle-model ε is a certified upper bound under replace-one adjacency
  (`shuffle_dp_sgd_event` composed in `ShufflePldAccountant` or
  `ShuffleRdpAccountant`). For a Gaussian `noise_multiplier` the report adds
  central DP-SGD with Poisson sampling at the same σ (noise added once, by
  the server): add-or-remove-one as TF-Privacy prints it, and replace-one
  (PLD accounting, since dp_accounting's RDP has no replace-one Poisson
  sampling).
  """
  kind = _accountant_type(accountant_type)
  delta = _validation.check_real('delta', delta, 0.0, 1.0,
                                 min_inclusive=False, max_inclusive=False)
  event = shuffle_dp_sgd_event(
      number_of_examples, num_epochs, batch_size=batch_size,
      checkin_rate=checkin_rate, noise_multiplier=noise_multiplier,
      local_epsilon=local_epsilon)
  check_in = event.event
  shuffle_accountant = (ShufflePldAccountant() if kind is AccountantType.PLD
                        else ShuffleRdpAccountant())
  if noise_multiplier is not None:
    randomizer = (f'adds its own Gaussian noise with noise multiplier '
                  f'{noise_multiplier} to its clipped gradient')
  else:
    randomizer = f'randomizes its report with a {local_epsilon}-LDP randomizer'
  paragraphs = [
      textwrap.fill(
          f'Shuffle-model DP-SGD over {number_of_examples} examples: in each '
          f'of {event.count} iterations ({num_epochs} epoch(s)) every example '
          f'checks in with probability {check_in.checkin_rate:.6g}, every '
          f'participant {randomizer}, and a trusted shuffler releases the '
          'reports in random order.', width=80),
      textwrap.fill(
          'This privacy guarantee protects the release of all reports and '
          'model checkpoints in addition to the final model.', width=80),
      textwrap.fill(
          f'Example-level DP with replace-one adjacency at delta = {delta} '
          f'computed with {kind.value} accounting (certified upper bound):',
          width=80) +
      _epsilon_line('Epsilon in the shuffle model', event,
                    shuffle_accountant, delta),
  ]
  if noise_multiplier is not None:
    central = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(
            check_in.checkin_rate,
            dp_accounting.GaussianDpEvent(noise_multiplier)), event.count)
    add_remove = (pld.PLDAccountant() if kind is AccountantType.PLD
                  else rdp.RdpAccountant())
    replace_one = pld.PLDAccountant(
        dp_accounting.NeighboringRelation.REPLACE_ONE)
    paragraphs.append(
        textwrap.fill(
            'For comparison, central DP-SGD with Poisson sampling at the same '
            'noise multiplier (the server adds the noise once, so the sum of '
            'k participants carries sqrt(k) times less noise):', width=80) +
        _epsilon_line(f'Epsilon, add-or-remove-one adjacency ({kind.value})',
                      central, add_remove, delta) +
        _epsilon_line('Epsilon, replace-one adjacency (PLD)', central,
                      replace_one, delta))
    paragraphs.append(textwrap.fill(WHY_LARGER, width=80))
  return '\n\n'.join(paragraphs) + '\n'
