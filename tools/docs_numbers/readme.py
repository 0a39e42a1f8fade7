"""The computed numbers of README.md."""

from .cli import main_job_output
from .core import output
from .core import sig
from .core import value


@value('readme.oue_generic')
def _readme_oue_generic():
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users=10**4, local_epsilon=1.0))
  return sig(accountant.get_epsilon(1e-6), 3)


# The Quick start shows the main job's output, as docs/cli.md does.
output('readme.main_job')(main_job_output)
