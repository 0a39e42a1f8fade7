"""The computed numbers of docs/tf_privacy.md."""

from .core import output
from .core import value


@output('tf_privacy.statement')
def _tf_privacy_statement():
  from shuffle_accountants.adapters.tf_privacy import (
    compute_shuffle_privacy_statement,
  )
  return compute_shuffle_privacy_statement(
      number_of_examples=60_000, batch_size=256, num_epochs=15,
      noise_multiplier=1.1, delta=1e-5)


@value('tf_privacy.pld_shuffle')
def _tf_privacy_pld_shuffle():
  """The shuffle-model line of the same statement with PLD accounting."""
  from shuffle_accountants.adapters.tf_privacy import (
    compute_shuffle_privacy_statement,
  )
  statement = compute_shuffle_privacy_statement(
      number_of_examples=60_000, batch_size=256, num_epochs=15,
      noise_multiplier=1.1, delta=1e-5, accountant_type='PLD')
  line, = [line for line in statement.splitlines()
           if line.startswith('    Epsilon in the shuffle model:')]
  return line.split()[-1]
