"""The computed numbers of docs/errata.md."""

from .core import sig
from .core import value


@value('errata.fmt21_generic_1e4')
def _errata_generic():
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users=10**4, local_epsilon=1.0))
  return sig(accountant.get_epsilon(1e-6), 4)


@value('errata.wang_10rr_1000')
def _errata_wang():
  from shuffle_accountants import ShuffleEvent
  from shuffle_accountants import ShufflePldAccountant
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(num_users=1000, local_epsilon=1.0,
                                  num_categories=10))
  return sig(accountant.get_epsilon(1e-6), 3)
