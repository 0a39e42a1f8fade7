"""shuffle-accountants: certified privacy accounting for the shuffle model.

Events describe shuffled rounds; accountants subclass dp_accounting's and
compose them with every other `DpEvent`:

>>> from shuffle_accountants import ShuffleEvent, ShufflePldAccountant
>>> accountant = ShufflePldAccountant()
>>> accountant.compose(ShuffleEvent(num_users=10**6, local_epsilon=1.0), 1000)
>>> accountant.get_epsilon(target_delta=1e-6)

Every epsilon a default path returns is a proven upper bound; lower bounds
live under names that say so. Formulas cite their IDs in MATH.md.
"""

from shuffle_accountants.events import CheckInEvent
from shuffle_accountants.events import ShuffleEvent
from shuffle_accountants.events import SubsampledShuffleGaussianEvent
from shuffle_accountants.liew import checkin_rdp_upper_bound
from shuffle_accountants.liew import shuffled_gaussian_rdp_lower_bound
from shuffle_accountants.liew import subsampled_shuffle_gaussian_rdp_upper_bound
from shuffle_accountants.pld_accountant import KRR_ADVERSARIES
from shuffle_accountants.pld_accountant import ShufflePldAccountant
from shuffle_accountants.rdp_accountant import DEFAULT_ORDERS
from shuffle_accountants.rdp_accountant import ShuffleRdpAccountant
from shuffle_accountants.shuffle_rdp import shuffle_rdp_upper_bound
from shuffle_accountants.shuffle_rdp import subsampled_shuffle_rdp_upper_bound

__version__ = '0.1.0'

__all__ = [
    'CheckInEvent',
    'DEFAULT_ORDERS',
    'KRR_ADVERSARIES',
    'ShuffleEvent',
    'ShufflePldAccountant',
    'ShuffleRdpAccountant',
    'SubsampledShuffleGaussianEvent',
    'checkin_rdp_upper_bound',
    'shuffle_rdp_upper_bound',
    'shuffled_gaussian_rdp_lower_bound',
    'subsampled_shuffle_gaussian_rdp_upper_bound',
    'subsampled_shuffle_rdp_upper_bound',
]
