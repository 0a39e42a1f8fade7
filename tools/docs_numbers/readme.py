"""The computed numbers of README.md."""

from .core import sig
from .core import value


@value('readme.oue_generic')
def _readme_oue_generic():
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users=10**4, local_epsilon=1.0))
  return sig(accountant.get_epsilon(1e-6), 3)
