"""The method table behind the CLI: one protocol, every bound.

IDs: GIRGIS-UB1, GIRGIS-UB2, FMT21-CLOSED, GIRGIS-LB-BINOMIAL,
SUM-OF-BITS-DELETION, DELETION-AS-REPLACE-ONE, LB-SUM-DELETION,
SUM-OF-BITS-WITH-NOISE, UNARY-ENCODING-RATES

A `Protocol` describes T identical rounds with the event fields' names; the
`METHODS` table maps a method name to a function giving its ε at the
protocol's δ. Upper bounds are certified ([UB] in docs/mathematics.md); lower
bounds ([LB]) say how far from the truth the certificate can be, and are never
reported as ε.
"""

import time
from typing import Callable, Dict, List, Optional, Union

import attr
import dp_accounting
from dp_accounting.rdp import rdp_privacy_accountant
import numpy as np

from shuffle_accountants import _validation
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.core import _event_specs
from shuffle_accountants.pairs import fmt21
from shuffle_accountants.pairs import sums as pair_sums
from shuffle_accountants.pld import checkin
from shuffle_accountants.pld import likelihood_sum
from shuffle_accountants.pld import lower_bounds
from shuffle_accountants.pld import sums
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.rdp import clone
from shuffle_accountants.rdp import girgis
from shuffle_accountants.rdp.accountant import DEFAULT_ORDERS
from shuffle_accountants.rdp.accountant import ShuffleRdpAccountant

__all__ = [
    'RELEASES', 'RELATIONS', 'UPPER', 'LOWER', 'RANDOMIZERS', 'GAUSSIAN',
    'UNARY_RATES', 'MAX_SUM_PAIR_USERS', 'NotApplicable',
    'Protocol',
    'MethodResult', 'MAX_LOWER_BOUND_ROUNDS', 'NO_SAMPLED_LOWER_BOUND',
    'MAX_CHECKIN_PAIR_PARTICIPANTS', 'NO_NOISY_SUM_LOWER_BOUND', 'METHODS',
    'ACCOUNTANTS',
    'ACCOUNTANT_TYPES', 'evaluate', 'certified_epsilon', 'best_lower_bound',
    'compare', 'make_accountant',
]

# What the server sees of a round (`Protocol.release`).
RELEASES = ('shuffle', 'sum')
# --relation names: the accountant's neighbouring relation. Deletion is
# dp_accounting's REPLACE_SPECIAL: one report replaced by the randomizer's
# output on a reference input (a sum's: the all-zero vector).
RELATIONS = {
    'replace-one': dp_accounting.NeighboringRelation.REPLACE_ONE,
    'deletion': dp_accounting.NeighboringRelation.REPLACE_SPECIAL,
}
UPPER = 'upper bound'
LOWER = 'lower bound'

# --randomizer gaussian: GaussianRandomizer (noise multiplier, dimension).
GAUSSIAN = 'gaussian'
# --randomizer ue: UnaryEncoding with the given per-bit rates (its eps0
# follows from them, UNARY-ENCODING-RATES).
UNARY_RATES = 'ue'
# --randomizer names: the catalogue class of each (domain size first).
RANDOMIZERS = {
    'krr': randomizers.KRandomizedResponse,
    'sue': randomizers.SymmetricUnaryEncoding,
    'oue': randomizers.OptimizedUnaryEncoding,
    'olh': randomizers.OptimizedLocalHashing,
    'blh': randomizers.BinaryLocalHashing,
    'hadamard': randomizers.HadamardResponse,
    'subset': randomizers.SubsetSelection,
}


class NotApplicable(Exception):
  """The method does not cover this protocol."""


def _listed(fields: Dict[str, object]) -> str:
  return ', '.join(f'{name}={value}' for name, value in fields.items())


@attr.s(frozen=True, auto_attribs=True)
class Protocol:
  """T identical rounds of one shuffle-model mechanism, reported at δ.

  Which event a round is follows from the fields that are set:
  `noise_multiplier` with `sample_size` is `SubsampledShuffleGaussianEvent`;
  `checkin_rate` (or `noise_multiplier` alone, i.e. rate 1) is
  `CheckInEvent`; `local_epsilon` with `sample_size` is a hidden uniform
  sample (`SampledWithoutReplacementDpEvent` of a `ShuffleEvent`); otherwise
  `ShuffleEvent`. `randomizer` (a name in `RANDOMIZERS`) with
  `domain_size` describes the local randomizer of eps0 `local_epsilon`;
  `randomizer='gaussian'` with `noise_multiplier` and `dimension` (default 1)
  the local Gaussian randomizer (`GaussianRandomizer`, plain clipping);
  `randomizer='ue'` with `domain_size`, `rate_if_one` and `rate_if_zero`
  the unary encoding of those per-bit rates (`UnaryEncoding`, no
  `local_epsilon`: it follows from the rates).
  `release` is what the server sees of a round: 'shuffle' (the shuffled
  reports) or 'sum' (their coordinate-wise sum, `SumOfReportsEvent`:
  unary encodings or k-RR, every user every round), to which
  `aggregator_noise` (a `DiscreteGaussianSumEvent` or
  `DiscreteLaplaceSumEvent` of sensitivity 1, unary encodings only) adds
  noise on every coordinate (SUM-OF-BITS-WITH-NOISE).
  `relation` is a name in `RELATIONS`: 'replace-one' or 'deletion'
  (REPLACE_SPECIAL).
  Invalid combinations raise `ValueError` at construction.
  """
  num_users: int
  delta: float = 1e-6
  rounds: int = 1
  local_epsilon: Optional[float] = None
  noise_multiplier: Optional[float] = None
  num_categories: Optional[int] = None
  checkin_rate: Optional[float] = None
  sample_size: Optional[int] = None
  randomizer: Optional[str] = None
  domain_size: Optional[int] = None
  release: str = 'shuffle'
  relation: str = 'replace-one'
  dimension: Optional[int] = None
  rate_if_one: Optional[float] = None
  rate_if_zero: Optional[float] = None
  aggregator_noise: Optional[Union[events.DiscreteGaussianSumEvent,
                                   events.DiscreteLaplaceSumEvent]] = None

  def __attrs_post_init__(self):
    if self.relation not in RELATIONS:
      raise ValueError(f'relation must be one of {", ".join(RELATIONS)}; '
                       f'got {self.relation!r}.')
    _validation.check_integer('rounds', self.rounds, 1)
    _validation.check_real('delta', self.delta, 0.0, 1.0, False, False)
    if self.checkin_rate is not None and self.sample_size is not None:
      raise ValueError(
          f'give checkin_rate ({self.checkin_rate}) or sample_size '
          f'({self.sample_size}), not both: a round either lets every user '
          'check in independently or samples a fixed number of them.')
    event = self.round_event()  # validates the remaining fields
    if self.deletion and not isinstance(
        event, _event_specs.defined_under('REPLACE_SPECIAL')):
      raise ValueError(
          f'relation=deletion accounts a shuffle or a sum of every user\'s '
          f'report; {type(event).__name__} (checkin_rate, sample_size or '
          'noise_multiplier) is defined under replace-one only.')

  def local_randomizer(self) -> Optional[randomizers.Randomizer]:
    """The catalogue randomizer named by `randomizer`, or None."""
    if self.randomizer == GAUSSIAN:
      return self._gaussian_randomizer()
    if self.randomizer == UNARY_RATES:
      return self._unary_randomizer()
    rates = {name: getattr(self, name) for name in ('rate_if_one',
                                                     'rate_if_zero')
             if getattr(self, name) is not None}
    if rates:
      raise ValueError(f'{_listed(rates)} describe(s) randomizer '
                       f'{UNARY_RATES!r} (unary encoding with these per-bit '
                       f'rates); got randomizer={self.randomizer!r}.')
    if self.dimension is not None:
      raise ValueError(f'dimension={self.dimension} describes Gaussian '
                       'reports: it needs randomizer gaussian.')
    if self.randomizer is None:
      if self.domain_size is not None:
        raise ValueError(f'domain_size={self.domain_size} needs a randomizer '
                         f'(one of {", ".join(RANDOMIZERS)}, or '
                         f'{UNARY_RATES} with the per-bit rates).')
      return None
    if self.randomizer not in RANDOMIZERS:
      raise ValueError(f'randomizer must be one of {", ".join(RANDOMIZERS)}, '
                       f'{UNARY_RATES} or {GAUSSIAN}; got '
                       f'{self.randomizer!r}.')
    if self.local_epsilon is None or self.domain_size is None:
      raise ValueError(f'randomizer {self.randomizer!r} needs local_epsilon '
                       f'and domain_size; got local_epsilon='
                       f'{self.local_epsilon}, domain_size='
                       f'{self.domain_size}.')
    return RANDOMIZERS[self.randomizer](self.domain_size, self.local_epsilon)

  def _gaussian_randomizer(self) -> randomizers.GaussianRandomizer:
    """The `GaussianRandomizer` of randomizer='gaussian'."""
    if self.noise_multiplier is None or self.domain_size is not None:
      raise ValueError(
          f'randomizer {GAUSSIAN!r} needs noise_multiplier (and dimension, '
          f'default 1), not domain_size; got noise_multiplier='
          f'{self.noise_multiplier}, domain_size={self.domain_size}.')
    return randomizers.GaussianRandomizer(self.noise_multiplier,
                                          dimension=self.dimension or 1)

  def _unary_randomizer(self) -> randomizers.UnaryEncoding:
    """The `UnaryEncoding` of randomizer='ue' (UNARY-ENCODING-RATES)."""
    if (self.domain_size is None or self.rate_if_one is None
        or self.rate_if_zero is None or self.local_epsilon is not None):
      raise ValueError(
          f'randomizer {UNARY_RATES!r} needs domain_size, rate_if_one and '
          f'rate_if_zero, not local_epsilon (its eps0 follows from the '
          f'rates); got domain_size={self.domain_size}, rate_if_one='
          f'{self.rate_if_one}, rate_if_zero={self.rate_if_zero}, '
          f'local_epsilon={self.local_epsilon}.')
    return randomizers.UnaryEncoding(self.domain_size, self.rate_if_one,
                                     self.rate_if_zero)

  def round_event(self) -> dp_accounting.DpEvent:
    """The `DpEvent` of one round."""
    if self.release not in RELEASES:
      raise ValueError(f'release must be one of {", ".join(RELEASES)}; got '
                       f'{self.release!r}.')
    if self.release == 'sum':
      return self._sum_event()
    if self.aggregator_noise is not None:
      raise ValueError('aggregator_noise is added to a sum: it needs '
                       f'release=sum; got release={self.release!r}.')
    if self.noise_multiplier is not None and self.sample_size is not None:
      gaussian = self.local_randomizer()
      return events.SubsampledShuffleGaussianEvent(
          self.num_users, self.sample_size, self.noise_multiplier,
          dimension=None if gaussian is None else gaussian.dimension)
    if self.randomizer == GAUSSIAN and self.checkin_rate is None:
      return events.ShuffleEvent(self.num_users,
                                 randomizer=self._gaussian_randomizer())
    if self.checkin_rate is not None or self.noise_multiplier is not None:
      return events.CheckInEvent(
          self.num_users,
          1.0 if self.checkin_rate is None else self.checkin_rate,
          local_epsilon=self.local_epsilon,
          noise_multiplier=self.noise_multiplier,
          num_categories=self.num_categories,
          randomizer=self.local_randomizer())
    randomizer = self.local_randomizer()
    if self.local_epsilon is None and randomizer is None:
      raise ValueError('describe the local randomizer: give local_epsilon '
                       '(pure LDP) or noise_multiplier (Gaussian); got '
                       'neither.')
    if self.sample_size is not None:
      _validation.check_integer('sample_size', self.sample_size, 1,
                                self.num_users)
      return dp_accounting.SampledWithoutReplacementDpEvent(
          self.num_users, self.sample_size,
          events.ShuffleEvent(self.sample_size, self.local_epsilon,
                              num_categories=self.num_categories,
                              randomizer=randomizer))
    return events.ShuffleEvent(self.num_users, self.local_epsilon,
                               num_categories=self.num_categories,
                               randomizer=randomizer)

  def _sum_event(self) -> events.SumOfReportsEvent:
    """The round of release='sum' (every user reports every round)."""
    others = {name: getattr(self, name) for name in (
        'noise_multiplier', 'checkin_rate', 'sample_size')
              if getattr(self, name) is not None}
    if others:
      raise ValueError(f'release=sum accounts every user every round with '
                       f'pure LDP reports; drop {others}.')
    randomizer = self.local_randomizer()
    if randomizer is None and self.num_categories is not None:
      randomizer = randomizers.KRandomizedResponse(self.num_categories,
                                                   self.local_epsilon)
    if not isinstance(randomizer, events.SUM_RANDOMIZERS):
      raise ValueError('release=sum needs randomizer sue, oue, ue or krr '
                       '(with domain_size) or num_categories; got '
                       f'randomizer={self.randomizer!r}.')
    return events.SumOfReportsEvent(self.num_users, randomizer,
                                    aggregator_noise=self.aggregator_noise)

  def replace(self, **changes) -> 'Protocol':
    return attr.evolve(self, **changes)

  @property
  def neighboring_relation(self) -> dp_accounting.NeighboringRelation:
    return RELATIONS[self.relation]

  @property
  def deletion(self) -> bool:
    return self.relation == 'deletion'

  def relation_label(self) -> str:
    """How the round is accounted under the relation, in words."""
    return pair_sums.relation_label(self.round_event(),
                                    self.neighboring_relation)

  @property
  def is_plain_shuffle(self) -> bool:
    """A `ShuffleEvent` of a generic pure-LDP randomizer."""
    event = self.round_event()
    return (isinstance(event, events.ShuffleEvent)
            and event.num_categories is None and event.randomizer is None)


@attr.s(frozen=True, auto_attribs=True)
class MethodResult:
  """One method's ε for a protocol; epsilon is None where it does not apply."""
  method: str
  kind: str
  epsilon: Optional[float]
  detail: str
  seconds: float


def _accountant_epsilon(accountant, protocol: Protocol) -> float:
  accountant.compose(protocol.round_event(), protocol.rounds)
  return float(accountant.get_epsilon(protocol.delta))


def make_accountant(name: str, protocol: Protocol):
  """An empty accountant `name` ('pld' or 'rdp') under the protocol's
  relation."""
  return ACCOUNTANT_TYPES[name](
      neighboring_relation=protocol.neighboring_relation)


def _relation_note(protocol: Protocol) -> str:
  return f' under {protocol.relation_label()}' if protocol.deletion else ''


def _noise_note(protocol: Protocol) -> str:
  return (' of the reports and the aggregator noise as one release '
          '(SUM-OF-BITS-WITH-NOISE)' if protocol.aggregator_noise is not None
          else '')


def _pld(protocol: Protocol):
  return (_accountant_epsilon(make_accountant('pld', protocol), protocol),
          f'ShufflePldAccountant (certified PLD){_noise_note(protocol)}'
          f'{_relation_note(protocol)}')


def _check_replace_one_method(protocol: Protocol) -> None:
  """A replace-one upper bound of the shuffle is sound under deletion to a
  value of the domain (DELETION-AS-REPLACE-ONE); a sum's reference (the
  all-zero vector) is not one."""
  if protocol.deletion and isinstance(protocol.round_event(),
                                      events.SumOfReportsEvent):
    raise NotApplicable('not under deletion of a sum (its reference, the '
                        'all-zero vector, is no input of the domain)')


def _rdp(protocol: Protocol):
  accountant = make_accountant('rdp', protocol)
  epsilon = _accountant_epsilon(accountant, protocol)
  explanation = accountant.explain(protocol.delta)
  winner = explanation[0]['bound'] if explanation else 'RDP'
  return epsilon, (f'ShuffleRdpAccountant{_noise_note(protocol)}, winning '
                   f'bound {winner}{_relation_note(protocol)}')


def _rdp_curve(bound: Callable, integer_orders: bool = False):
  """ε of T rounds of one RDP upper bound for a plain shuffle round. [UB]"""

  def method(protocol: Protocol):
    if not protocol.is_plain_shuffle:
      raise NotApplicable
    orders = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
    if integer_orders:
      orders = orders[(orders >= 2) & (orders == np.floor(orders))]
    rdp = bound(protocol.num_users, protocol.local_epsilon, orders)
    epsilon, order = rdp_privacy_accountant.compute_epsilon(
        orders, protocol.rounds * rdp, protocol.delta)
    return float(epsilon), (f'optimal order {order:g}'
                            f'{_relation_note(protocol)}')

  return method


def _fmt21_closed(protocol: Protocol):
  if not protocol.is_plain_shuffle:
    raise NotApplicable
  try:
    epsilon = fmt21.composed_closed_form_epsilon(
        protocol.num_users, protocol.local_epsilon, protocol.rounds,
        protocol.delta)
  except ValueError as error:  # its composed PLD would not fit in memory
    raise NotApplicable(f'skipped: {error}') from None
  if not np.isfinite(epsilon):
    # dp_accounting's composition puts its truncated tail (1e-15) at +inf.
    raise NotApplicable(
        f'no finite value at delta = {protocol.delta:g}: dp_accounting '
        'composes the rounds with 1e-15 of mass at +infinity, above delta '
        '(see pld)')
  return epsilon, ('FMT21-CLOSED at delta/(2T) per round, composed by PLD'
                   f'{_relation_note(protocol)}')


# The pair's PLD is composed by repeated squaring on a fine grid: beyond
# this many rounds it would cost more than the certified epsilon itself.
MAX_LOWER_BOUND_ROUNDS = 10**4


# Why no lower bound is shown for rounds that sample their users.
NO_SAMPLED_LOWER_BOUND = ('no lower bound for rounds that sample users '
                          '(check-in, hidden sample): none is implemented '
                          'but binary-rr-pair for binary or generic check-in')
# Why no lower bound is shown for a sum with aggregator noise (the
# noise-free sum's pairs would exceed the noisy release's truth).
NO_NOISY_SUM_LOWER_BOUND = ('no lower bound for a sum with aggregator noise: '
                            'none is implemented')
# The exact check-in pair has an atom per (participants, reports of x) in
# wide windows: above this many expected participants it is skipped (cost).
MAX_CHECKIN_PAIR_PARTICIPANTS = 10**5
# The exact sum pair convolves the others' counts: skipped above this n.
MAX_SUM_PAIR_USERS = 10**7


def _check_deletion_lower_bound(protocol: Protocol,
                                event: dp_accounting.DpEvent) -> None:
  """Under deletion a replace-one pair (x, x') is a deletion pair with the
  reference x' only for randomizers whose inputs are interchangeable
  (generic, binary RR, k-RR): other randomizers' pairs are not claimed."""
  symmetric = (getattr(event, 'randomizer', None) is None
               or isinstance(event.randomizer,
                             randomizers.KRandomizedResponse))
  if protocol.deletion and not symmetric:
    raise NotApplicable('under deletion only for generic, binary or k-RR '
                        'randomizers (interchangeable inputs)')


def _check_lower_bound_applies(event: dp_accounting.DpEvent) -> None:
  if isinstance(event, events.SumOfReportsEvent):
    raise NotApplicable(NO_NOISY_SUM_LOWER_BOUND if event.aggregator_noise
                        is not None else 'see sum-configurations')
  if not isinstance(event, events.ShuffleEvent):
    raise NotApplicable(NO_SAMPLED_LOWER_BOUND)


def _shuffle_view(protocol: Protocol) -> dp_accounting.DpEvent:
  """The round, a k-RR sum as the shuffle it equals (SUM-OF-BITS (v))."""
  event = protocol.round_event()
  if isinstance(event, events.SumOfReportsEvent):
    return event.as_shuffle_event() or event
  return event


def _binary_rr_pair(protocol: Protocol):
  event = _shuffle_view(protocol)
  if isinstance(event, events.SumOfReportsEvent):
    _check_lower_bound_applies(event)
  # Binary RR is one eps0-LDP randomizer: this pair bounds a generic round
  # (or binary RR itself) from below, not a round of another randomizer.
  binary_or_generic = (
      getattr(event, 'local_epsilon', None) is not None
      and event.num_categories in (None, 2)
      and (event.randomizer is None or event.num_categories == 2))
  if not (binary_or_generic and isinstance(event, events.CheckInEvent)):
    _check_lower_bound_applies(event)
  if not binary_or_generic:
    raise NotApplicable('binary RR bounds only a generic or binary round '
                        '(see randomizer-pairs)')
  _check_deletion_lower_bound(protocol, event)
  if protocol.rounds > MAX_LOWER_BOUND_ROUNDS:
    raise NotApplicable(f'skipped above {MAX_LOWER_BOUND_ROUNDS} rounds (its '
                        'cost grows with the rounds)')
  if isinstance(event, events.CheckInEvent):
    if event.num_users * event.checkin_rate > MAX_CHECKIN_PAIR_PARTICIPANTS:
      raise NotApplicable(f'skipped above {MAX_CHECKIN_PAIR_PARTICIPANTS} '
                          'expected participants (its cost)')
    return (checkin.binary_rr_checkin_epsilon_lower_bound(
        event.num_users, event.checkin_rate, event.local_epsilon,
        protocol.delta, protocol.rounds),
            'exact epsilon of binary RR check-in on the all-equal pair '
            '(specific pair, count of participants revealed)')
  all_equal = lower_bounds.binary_rr_all_equal_pair_epsilon_lower_bound(
      protocol.num_users, protocol.local_epsilon, protocol.rounds,
      protocol.delta)
  all_equal_words = ('exact epsilon of binary RR on the all-equal pair '
                     '(specific pair)')
  if event.num_categories == 2:  # its other pairs are randomizer-pairs'
    return all_equal, all_equal_words
  # For a generic round binary RR's other pairs (every other user at x')
  # bound it too, and can be larger (n = 1e5, eps0 = 4: 0.08471 against
  # 0.08417).
  other_pairs = lower_bounds.randomizer_epsilon_lower_bound(
      randomizers.KRandomizedResponse(2, protocol.local_epsilon),
      protocol.num_users, protocol.rounds, protocol.delta)
  if other_pairs > all_equal:
    return other_pairs, ('exact epsilon of binary RR on its dataset pairs '
                         '(others hold x\'; specific pairs)')
  return all_equal, all_equal_words


def _pld_generic(protocol: Protocol):
  if protocol.randomizer is None and protocol.num_categories is None:
    raise NotApplicable('only with --randomizer or --num-categories')
  if protocol.randomizer == GAUSSIAN:
    raise NotApplicable('Gaussian reports are not pure LDP')
  _check_replace_one_method(protocol)
  # A sum, and any noise added to it, is a post-processing of the shuffled
  # reports (SUM-OF-BITS); eps0 is the randomizer's ('ue': its rates').
  local_epsilon = (protocol.local_epsilon if protocol.randomizer != UNARY_RATES
                   else protocol.local_randomizer().local_epsilon)
  generic = protocol.replace(
      randomizer=None, domain_size=None, num_categories=None,
      release='shuffle', rate_if_one=None, rate_if_zero=None,
      aggregator_noise=None, local_epsilon=local_epsilon)
  return (_accountant_epsilon(make_accountant('pld', generic), generic),
          'ShufflePldAccountant for a generic eps0-LDP randomizer (FMT21)'
          f'{_relation_note(generic)}')


def _gaussian_lower_bound(protocol: Protocol,
                          randomizer: randomizers.GaussianRandomizer):
  """NUM-LB / NUM-LB-LIKELIHOOD of one round (T rounds leak at least as
  much as one)."""
  return (likelihood_sum.gaussian_shuffle_epsilon_lower_bound(
      protocol.num_users, randomizer.noise_multiplier, protocol.delta),
          'NUM-LB / NUM-LB-LIKELIHOOD: the pair along one axis, every other '
          'user at -C, as a thresholded count or a sum of likelihood ratios '
          '(one round; every d; specific pair)')


def _randomizer_pairs(protocol: Protocol):
  event = _shuffle_view(protocol)
  _check_lower_bound_applies(event)
  if event.randomizer is None and event.num_categories is None:
    raise NotApplicable('only with --randomizer or --num-categories')
  _check_deletion_lower_bound(protocol, event)
  if protocol.rounds > MAX_LOWER_BOUND_ROUNDS:
    raise NotApplicable(f'skipped above {MAX_LOWER_BOUND_ROUNDS} rounds (its '
                        'cost grows with the rounds)')
  if isinstance(event.randomizer, randomizers.GaussianRandomizer):
    return _gaussian_lower_bound(protocol, event.randomizer)
  randomizer = event.randomizer or randomizers.KRandomizedResponse(
      event.num_categories, event.local_epsilon)
  epsilon = lower_bounds.randomizer_epsilon_lower_bound(
      randomizer, protocol.num_users, protocol.rounds, protocol.delta)
  return epsilon, ('exact epsilon of dataset pairs of this randomizer '
                   '(others hold x\' or a third value; specific pairs)')


def _sum_configurations(protocol: Protocol):
  event = protocol.round_event()
  if (not isinstance(event, events.SumOfReportsEvent)
      or event.as_shuffle_event() is not None):
    raise NotApplicable('only with --release sum of sue, oue or ue reports')
  if event.aggregator_noise is not None:
    raise NotApplicable(NO_NOISY_SUM_LOWER_BOUND)
  if protocol.rounds > MAX_LOWER_BOUND_ROUNDS:
    raise NotApplicable(f'skipped above {MAX_LOWER_BOUND_ROUNDS} rounds (its '
                        'cost grows with the rounds)')
  if protocol.num_users > MAX_SUM_PAIR_USERS:
    raise NotApplicable(f'skipped above {MAX_SUM_PAIR_USERS} users (its '
                        'cost)')
  epsilon = sums.sum_release_lower_bound(event, protocol.delta,
                                         protocol.rounds,
                                         deletion=protocol.deletion)
  if epsilon is None:
    raise NotApplicable('no configuration resolves this delta: epsilon is '
                        'so large (about 190) that the windows left out '
                        'could matter')
  if protocol.deletion:
    return (epsilon,
            'exact epsilon of the sum release under deletion (to the '
            'all-zero vector) when every other user holds x or none does '
            '(LB-SUM-DELETION, specific pairs)')
  return (epsilon,
          'exact epsilon of the sum release when every other user holds x, '
          'x\' or a third value (LB-SUM-CONFIGURATIONS, specific pairs)')


# name -> (kind, function); the order is the order of reports.
METHODS: Dict[str, tuple] = {
    'pld': (UPPER, _pld),
    'rdp': (UPPER, _rdp),
    'clone-rdp': (UPPER, _rdp_curve(clone.clone_pair_rdp)),
    'girgis-ub1': (UPPER, _rdp_curve(girgis.girgis_ub1, integer_orders=True)),
    'girgis-ub2': (UPPER, _rdp_curve(girgis.girgis_ub2)),
    'fmt21-closed': (UPPER, _fmt21_closed),
    'pld-generic': (UPPER, _pld_generic),
    'binary-rr-pair': (LOWER, _binary_rr_pair),
    'randomizer-pairs': (LOWER, _randomizer_pairs),
    'sum-configurations': (LOWER, _sum_configurations),
}
ACCOUNTANTS = ('pld', 'rdp')
ACCOUNTANT_TYPES = {'pld': ShufflePldAccountant, 'rdp': ShuffleRdpAccountant}


def evaluate(protocol: Protocol, method: str) -> MethodResult:
  """One method's result; epsilon None (and a reason) where it does not
  apply."""
  if method not in METHODS:
    raise ValueError(f'method must be one of {", ".join(METHODS)}; got '
                     f'{method!r}.')
  kind, function = METHODS[method]
  start = time.perf_counter()
  try:
    epsilon, detail = function(protocol)
  except NotApplicable as reason:
    epsilon, detail = None, str(reason) or 'does not apply to this protocol'
  return MethodResult(method, kind, epsilon, detail,
                      time.perf_counter() - start)


def certified_epsilon(protocol: Protocol, accountant: str = 'best'
                      ) -> MethodResult:
  """The certified ε: `accountant` 'pld' or 'rdp', or 'best' = the smaller."""
  if accountant not in ACCOUNTANTS + ('best',):
    raise ValueError(f"accountant must be 'pld', 'rdp' or 'best'; got "
                     f'{accountant!r}.')
  names = ACCOUNTANTS if accountant == 'best' else (accountant,)
  results = [evaluate(protocol, name) for name in names]
  best = min(results, key=lambda result: result.epsilon)
  return attr.evolve(best, seconds=sum(r.seconds for r in results))


def best_lower_bound(protocol: Protocol) -> MethodResult:
  """The largest applicable lower bound (epsilon None when there is none)."""
  results = [evaluate(protocol, name) for name, (kind, _) in METHODS.items()
             if kind == LOWER]
  applicable = [r for r in results if r.epsilon is not None]
  return (max(applicable, key=lambda result: result.epsilon) if applicable
          else results[0])


def compare(protocol: Protocol,
            methods: Optional[List[str]] = None) -> List[MethodResult]:
  """Every method (or the given ones) for one protocol, in `METHODS` order."""
  return [evaluate(protocol, name) for name in (methods or list(METHODS))]
