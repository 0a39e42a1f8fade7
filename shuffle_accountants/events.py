"""`DpEvent`s of the shuffle model: frozen, with replace-one neighbours.

IDs: REPLACE-ONE-ONLY

Like `dp_accounting.dp_event`, each event documents the mechanism it stands
for completely, so that an accountant can be written from the docstring alone.
All shuffle events are defined under the *replace-one* neighbouring relation
over a public population of users (`NeighboringRelation.REPLACE_ONE`): two
datasets are neighbours when they have the same number of users and differ in
the data of exactly one of them. Under add/remove the number of shuffled
reports would reveal membership, so no amplification result applies.

Events are frozen `attrs` classes at module level, so that
`DpEvent.to_named_tuple()` / `from_named_tuple()` round-trip them. Invalid
parameters raise at construction.
"""

import math
from typing import Optional, Tuple, Union

import attr
from dp_accounting import dp_event

from shuffle_accountants import _validation
from shuffle_accountants import randomizers as randomizers_

__all__ = [
    'ShuffleEvent', 'CheckInEvent', 'SubsampledShuffleGaussianEvent',
    'PARTICIPATION_MODELS', 'DEFAULT_PARTICIPATION', 'check_participation',
    'DistributedCheckInEvent', 'SkellamSecureSumEvent', 'SUM_RANDOMIZERS',
    'SumOfReportsEvent', 'BinomialSecureSumEvent', 'DiscreteGaussianSumEvent',
    'DiscreteLaplaceSumEvent', 'AGGREGATOR_TRUST',
]


_num_users = _validation.positive_integer_field
# The sum's accounting convolves the others' counts: its time and memory
# grow with n beyond the documented range (n = 1e12: 40 s, 1.7 GB, and an
# epsilon above n = 1e10's), so Python refuses it there as the CLI does.
MAX_SUM_USERS = 10**10


def _bounded_integer(maximum):
  def validate(instance, attribute, value):
    del instance
    _validation.check_integer(attribute.name, value, 1, maximum)
  return validate


def _local_epsilon(instance, attribute, value):
  del instance
  _validation.check_local_epsilon(value, attribute.name)


def _num_categories(instance, attribute, value):
  del instance
  if value is not None:
    _validation.check_domain_size(attribute.name, value)


def _randomizer(instance, attribute, value):
  del instance
  if value is not None and not isinstance(value, randomizers_.Randomizer):
    raise TypeError(
        f'{attribute.name} must be None or a randomizer from '
        'shuffle_accountants.randomizers (e.g. OptimizedUnaryEncoding); got '
        f'{value!r} of type {type(value).__name__}.')


def _optional_local_epsilon(instance, attribute, value):
  # Gaussian reports are not pure LDP: their eps0 is infinite (evolve
  # passes it back in).
  gaussian = isinstance(getattr(instance, 'randomizer', None),
                        randomizers_.GaussianRandomizer)
  if value is not None and not (gaussian and value == float('inf')):
    _local_epsilon(instance, attribute, value)


def _adopt_randomizer(event, event_name: str, required: bool) -> None:
  """Fills local_epsilon / num_categories from `event.randomizer` (frozen).

  The event's fields must agree with the randomizer; k-RR given either way
  ends as `num_categories=k` so that its k-RR pairs apply.
  """
  randomizer = event.randomizer
  if randomizer is None:
    if required and event.local_epsilon is None:
      raise ValueError(f'{event_name} needs local_epsilon (eps0 >= 0) or a '
                       'randomizer; got neither.')
    return
  implied = randomizer.local_epsilon
  if event.local_epsilon is None:
    object.__setattr__(event, 'local_epsilon', implied)
  elif abs(event.local_epsilon - implied) > 1e-9 * max(1.0, implied):
    raise ValueError(
        f'local_epsilon={event.local_epsilon} does not match the '
        f'randomizer {randomizer!r}, which is {implied}-LDP; omit '
        'local_epsilon or make them equal.')
  categories = (randomizer.num_categories if isinstance(
      randomizer, randomizers_.KRandomizedResponse) else None)
  if event.num_categories is None and categories is not None:
    object.__setattr__(event, 'num_categories', categories)
  elif event.num_categories != categories:
    raise ValueError(
        f'num_categories={event.num_categories} means k-randomized response,'
        f' which contradicts randomizer={randomizer!r}; give only one.')


def _local_delta(instance, attribute, value):
  del instance
  _validation.check_real(attribute.name, value, 0.0, 1.0, max_inclusive=False)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ShuffleEvent(dp_event.DpEvent):
  """One round of the shuffle model with local randomizers.

  Each of `num_users` users applies a local randomizer to its own record and
  sends the report to a trusted shuffler, which releases all `num_users`
  reports in a uniformly random order (only the multiset reaches the server).
  Randomizers may be chosen adaptively from earlier rounds' outputs, and may
  differ between users, as long as each satisfies the local guarantee below.

  * `num_categories` is None: each randomizer is `local_epsilon`-LDP (when
    `local_delta` is 0) for arbitrary inputs and outputs.
  * `num_categories` = k >= 2: each randomizer is k-ary randomized response
    with parameter `local_epsilon`: it reports its true category with
    probability e^eps0 / (e^eps0 + k - 1) and each other category with
    probability 1 / (e^eps0 + k - 1).
  * `local_delta` > 0: each randomizer is (`local_epsilon`, `local_delta`)-LDP
    (approximate LDP). No finite RDP bound exists for such randomizers.
  * `randomizer` given: every user applies this randomizer (one of
    `shuffle_accountants.randomizers`); `local_epsilon` may be omitted (it
    is the randomizer's eps0) and must equal it otherwise. Its
    mechanism-specific pairs (NAMED-CLONE-RATE, BLANKET-TWO-LEVEL) are used
    besides the generic one.

  Neighbouring relation: replace-one over the `num_users` users (the number of
  users is public). Under the accountant's
  `NeighboringRelation.REPLACE_SPECIAL` (deletion, as the DAP draft states
  eps0): one user's report is replaced by the randomizer's output on a fixed
  reference input of its domain, chosen before the release (any one: the
  bound holds for each). Such neighbours are replace-one neighbours (the
  target's value x becomes the reference), so the replace-one bound is what
  is reported (DELETION-AS-REPLACE-ONE), labelled as such.

  Attributes:
    num_users: number of users n whose reports are shuffled, an integer >= 1.
    local_epsilon: the local privacy parameter eps0 in [0, 700] (None: the
      randomizer's).
    num_categories: None for a generic randomizer, or k >= 2 for k-RR.
    local_delta: the local delta0 in [0, 1); 0 means pure LDP.
    randomizer: None (described by the fields above) or a randomizer.
  """
  num_users: int = attr.ib(
      converter=_validation.whole_if_integral, validator=_num_users)
  local_epsilon: Optional[float] = attr.ib(
      default=None, validator=_optional_local_epsilon)
  num_categories: Optional[int] = attr.ib(
      default=None, converter=_validation.whole_if_integral,
      validator=_num_categories)
  local_delta: float = attr.ib(default=0.0, validator=_local_delta)
  randomizer: Optional[randomizers_.Randomizer] = attr.ib(
      default=None, validator=_randomizer)

  def __attrs_post_init__(self):
    _adopt_randomizer(self, 'ShuffleEvent', required=True)
    if self.randomizer is not None and self.local_delta > 0:
      raise ValueError(
          f'local_delta={self.local_delta} > 0 contradicts '
          f'randomizer={self.randomizer!r}, which is pure LDP.')


def _checkin_rate(instance, attribute, value):
  del instance
  _validation.check_real(attribute.name, value, 0.0, 1.0, min_inclusive=False)


def _noise_multiplier(instance, attribute, value):
  del instance
  _validation.check_real(attribute.name, value, 0.0, min_inclusive=False)


def _optional_noise_multiplier(instance, attribute, value):
  if value is not None:
    _noise_multiplier(instance, attribute, value)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class CheckInEvent(dp_event.DpEvent):
  """One round of shuffled check-in (Liew, Hasegawa, Takahashi).

  Each of `num_users` users independently checks in with probability
  `checkin_rate`, whatever its data; each participant randomizes its record
  locally and a trusted shuffler releases the participants' reports in a
  uniformly random order. The number k of participants is visible, who
  participated is not. Exactly one of the two local randomizers is described:

  * `local_epsilon` = eps0: each report is pure eps0-LDP (generic, or k-ary
    randomized response when `num_categories` is given, as in
    `ShuffleEvent`). A `randomizer` may describe it instead (its eps0 is
    used, and its clone rate and blanket in the pairs of the round as a
    shuffle of n reports with absent users as bottoms, CHECKIN-BLANKET).
  * `noise_multiplier` = sigma: each participant sends its record, a vector
    clipped to L2 norm C, plus Gaussian noise N(0, sigma^2 C^2 I) (DP-SGD with
    local noise). Replacing one record moves its report's mean by up to 2C.

  Neighbouring relation: replace-one over the public population of
  `num_users` users.

  Attributes:
    num_users: population size n, an integer >= 1.
    checkin_rate: participation probability gamma in (0, 1].
    local_epsilon: eps0 in [0, 700] of a pure local randomizer, or None.
    noise_multiplier: sigma > 0 of the local Gaussian noise, or None.
    num_categories: k >= 2 for k-RR reports (with `local_epsilon` only).
    randomizer: None or a randomizer from `shuffle_accountants.randomizers`.
  """
  num_users: int = attr.ib(
      converter=_validation.whole_if_integral, validator=_num_users)
  checkin_rate: float = attr.ib(validator=_checkin_rate)
  local_epsilon: Optional[float] = attr.ib(
      default=None, validator=_optional_local_epsilon)
  noise_multiplier: Optional[float] = attr.ib(
      default=None, validator=_optional_noise_multiplier)
  num_categories: Optional[int] = attr.ib(
      default=None, converter=_validation.whole_if_integral,
      validator=_num_categories)
  randomizer: Optional[randomizers_.Randomizer] = attr.ib(
      default=None, validator=_randomizer)

  def __attrs_post_init__(self):
    if isinstance(self.randomizer, randomizers_.GaussianRandomizer):
      # Gaussian reports: the noise_multiplier route (below rate 1 the PLD
      # route also takes the rate-1 shuffle round's blanket, DOMINATING-ROUNDS).
      sigma = self.randomizer.noise_multiplier
      if self.noise_multiplier not in (None, sigma):
        raise ValueError(
            f'noise_multiplier={self.noise_multiplier} does not match '
            f'randomizer={self.randomizer!r}; give only one.')
      object.__setattr__(self, 'noise_multiplier', sigma)
    else:
      _adopt_randomizer(self, 'CheckInEvent', required=False)
    if (self.local_epsilon is None) == (self.noise_multiplier is None):
      raise ValueError(
          'CheckInEvent needs exactly one of local_epsilon (a pure LDP '
          'randomizer) or noise_multiplier (local Gaussian noise); got '
          f'local_epsilon={self.local_epsilon}, '
          f'noise_multiplier={self.noise_multiplier}.')
    if self.num_categories is not None and self.local_epsilon is None:
      raise ValueError(
          f'num_categories={self.num_categories} describes k-randomized '
          'response, which needs local_epsilon; it cannot be combined with '
          f'noise_multiplier={self.noise_multiplier}.')


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SubsampledShuffleGaussianEvent(dp_event.DpEvent):
  """Shuffled Gaussian reports of a hidden fixed-size sample (Liew et al. 5).

  Exactly `sample_size` of the `num_users` users are sampled uniformly
  without replacement (who was sampled is hidden); each sampled user sends
  its record, clipped to L2 norm C, plus N(0, sigma^2 C^2 I), and the reports
  are shuffled. This is DP-SGD on shuffled fixed-size batches with local
  noise. Replace-one over the `num_users` users.

  On the PLD route, a known `dimension` d also takes the hidden sample of
  the shuffle of m reports of dimension d, under KHH-SUBSAMPLED, and keeps
  the smaller profile: for scalars (d = 1) through the continuous blanket
  (NUM-BLANKET (v)), for every d through FMT-EQ10-11 along the report's
  privacy profile (GAUSS-PROFILE-LDP). An unknown dimension (None) gets the
  Gaussian pair alone (GAUSS-NO-GAIN: the Flower adapter composes a central
  Gaussian sum as this event), and the contribution's pair names say why.
  The RDP route takes `dimension=1` as scalar reports (WBK19-THM9 on the
  shuffle's NUM-BLANKET-RDP, plain clipping, beside the Gaussian's) and any
  other value as the Gaussian's alone.

  Attributes:
    num_users: population size n, an integer >= 1.
    sample_size: number m of sampled users, 1 <= m <= n.
    noise_multiplier: sigma > 0.
    dimension: d, the dimension of each report, an integer >= 1; None
      (default) when it is unknown, accounted as high-dimensional.
  """
  num_users: int = attr.ib(
      converter=_validation.whole_if_integral, validator=_num_users)
  sample_size: int = attr.ib(converter=_validation.whole_if_integral)
  noise_multiplier: float = attr.ib(validator=_noise_multiplier)
  dimension: Optional[int] = attr.ib(
      default=None, converter=_validation.whole_if_integral,
      validator=attr.validators.optional(_validation.positive_integer_field))

  @sample_size.validator
  def _sample_size(self, attribute, value):
    _validation.check_integer(attribute.name, value, 1, self.num_users)


# Who the secure aggregation protocol lets the server see (SECAGG-REVEALED,
# SECAGG-HIDDEN).
PARTICIPATION_MODELS = ('revealed', 'hidden', 'hidden_count')
DEFAULT_PARTICIPATION = 'revealed'


def _participation_name(value):
  """Undoes `DpEvent.from_named_tuple`, which rebuilds a str field as the
  repr of the list of its characters (it treats every Sequence so)."""
  for model in PARTICIPATION_MODELS:
    if value == str(list(model)):
      return model
  return value


def check_participation(value, name: str = 'participation') -> str:
  """`value` if it is one of `PARTICIPATION_MODELS`; raises otherwise."""
  if value not in PARTICIPATION_MODELS:
    raise ValueError(
        f'{name} must be one of {PARTICIPATION_MODELS} ("revealed": the '
        'server sees who took part, as with standard secure aggregation; '
        '"hidden": an anonymous check-in channel hides it; "hidden_count": '
        'every client uploads every round, non-participants their noise '
        f'share alone); got {value!r}.')
  return value


def _participation(instance, attribute, value):
  del instance
  check_participation(value, attribute.name)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DistributedCheckInEvent(dp_event.DpEvent):
  """One round of distributed check-in with secure aggregation.

  See SECAGG-REVEALED and SECAGG-HIDDEN.

  Each of `num_users` users independently checks in with probability
  `checkin_rate`, whatever its data. Each participant clips its vector to L2
  norm C and adds its *own* Gaussian noise N(0, sigma^2 C^2 I), sigma =
  `noise_multiplier`; a secure aggregation protocol (trusted, the server is
  not) reveals the sum of the k participants' noisy vectors, which carries
  noise N(0, k sigma^2 C^2 I), and the count k (k = 0 releases nothing).
  What else the server sees is `participation`:

  * ``'revealed'`` (default; it holds under the weaker assumption): the
    server also learns *who* took part, as with standard secure aggregation
    (Bonawitz et al., Flower's SecAgg+), where the set of clients whose
    inputs are summed is known to the server. Accounted exactly
    (docs/mathematics.md SECAGG-REVEALED): the target's participation and k are
    seen, and a round it joins is the Gaussian sum of k noisy vectors.
  * ``'hidden'``: the server cannot link a report or a participation to an
    identity, only the count k is revealed (an anonymous check-in channel,
    as in Liew et al.). The deployment must guarantee it: participants reach
    the aggregation anonymously (no identity, address or timing that links
    a contribution to a user) and the protocol reveals no set of
    contributors. Accounted by SECAGG-HIDDEN (PLD) and LIEW-THM4 with k = 0
    (RDP), upper bounds. A protocol that also hides k is a post-processing of
    this one, so the bounds hold for it too.
  * ``'hidden_count'``: every one of the n clients uploads every round
    through secure aggregation, a participant its clipped vector plus its
    noise share, a non-participant its noise share N(0, sigma^2 C^2 I)
    alone, so the server sees all n uploaders and a sum carrying noise
    sigma C sqrt(n) (not sqrt(k)); who took part and k stay hidden as long
    as the uploads of participants and non-participants are
    indistinguishable. Accounted as the Poisson-subsampled Gaussian sum
    (SECAGG-REVEALED (v), upper bounds): the SECAGG-HIDDEN pair with ratio gamma
    and shift 2 / (sigma sqrt(n)); `noise_multiplier` is every client's share.

  `min_reporting` = m models dropouts: selected clients may drop out (their
  vectors and noise shares are then missing from the sum), chosen by an
  adversary who may know identities but not the data; the protocol aborts
  (releases nothing) when fewer than m shares survive. A released sum then
  carries the noise of at least m shares, and the worst adversary keeps
  the target and exactly m - 1 others whenever k >= m (SECAGG-REVEALED (iii),
  exact). The same bound is used with ``'hidden'``: knowing identities, the
  adversary can also abort whenever the target did not join. With
  ``'hidden_count'`` the adversary cannot tell participants from the
  others, and a released sum carries the noise of at least m shares. None
  (default): every selected client reports.

  Neighbouring relation: replace-one over the public population of
  `num_users` users: one user's vector changes, so the sum of the
  participants moves by up to 2C (its replace-one sensitivity).

  `noise_multiplier` is per participant. Opacus' aggregate noise multiplier
  sigma_agg at the expected cohort q n corresponds to
  `noise_multiplier = sigma_agg / sqrt(q n)`.

  Attributes:
    num_users: population size n, an integer >= 1.
    checkin_rate: participation probability gamma in (0, 1].
    noise_multiplier: sigma > 0, each participant's noise standard deviation
      divided by the clipping norm C.
    participation: 'revealed' (default), 'hidden' or 'hidden_count', see
      above.
    min_reporting: None (no dropouts) or the fewest surviving shares m in
      [1, num_users] for which the protocol releases the sum.
  """
  num_users: int = attr.ib(
      converter=_validation.whole_if_integral, validator=_num_users)
  checkin_rate: float = attr.ib(validator=_checkin_rate)
  noise_multiplier: float = attr.ib(validator=_noise_multiplier)
  participation: str = attr.ib(default=DEFAULT_PARTICIPATION,
                               converter=_participation_name,
                               validator=_participation)
  min_reporting: Optional[int] = attr.ib(
      default=None, converter=_validation.whole_if_integral)

  @min_reporting.validator
  def _min_reporting(self, attribute, value):
    if value is not None:
      _validation.check_integer(attribute.name, value, 1, self.num_users)

  def to_named_tuple(self):
    # dp_accounting rebuilds every Sequence field element by element, which
    # turns a str into the repr of a list of its characters; keep the str
    # (`_participation_name` repairs the way back).
    return super().to_named_tuple()._replace(participation=self.participation)



_positive_real = _noise_multiplier  # a finite real > 0, named after its field


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SkellamSecureSumEvent(dp_event.DpEvent):
  """One round of secure summation of rounded vectors with Skellam noise.

  See SKELLAM-SUM.

  A public set of k >= 1 participants (chosen without looking at the data)
  each holds a vector x_i in R^d clipped to L2 norm C = `clip_norm`,
  scales it by the granularity g = `granularity` and rounds every
  coordinate of g x_i at random to one of its two neighbouring integers
  (unbiased randomized rounding, independent coins), giving r_i in Z^d; it
  adds integer noise Sk(mu / k) per coordinate (the difference of two
  independent Poisson(mu / (2 k)) variables) and sends the result modulo
  a modulus m through secure aggregation (trusted; the server is not),
  which reveals only (sum_i r_i + Z) mod m, where Z ~ Sk(mu)^d, mu =
  `noise_variance` (the per-coordinate variance of the total noise: a sum
  of independent Skellam variables is Skellam). The count k and the set of
  participants may be public; dropouts are accounted by giving the noise
  of the shares that reach the sum as `noise_variance`. Reducing modulo m
  and decoding are post-processing, so any modulus is covered.

  Neighbouring relation: replace-one over the participants: one
  participant's vector changes and the others' stay. Its rounded vector
  has L2 norm below g C + sqrt(d) whatever the coins (each coordinate
  moves by less than 1), so the sum moves by an integer vector of L2 norm
  at most `l2_sensitivity` = 2 (g C + sqrt(d)) and L1 norm at most
  `l1_sensitivity` = sqrt(d) `l2_sensitivity` (deterministic bounds; no
  probability is spent on the rounding).

  Attributes:
    dimension: d, the number of coordinates, an integer >= 1.
    clip_norm: C > 0, the L2 norm each vector is clipped to.
    granularity: g > 0, the scale applied before rounding (the integer
      unit is 1 / g).
    noise_variance: mu > 0, the per-coordinate variance of the total
      Skellam noise, in integer units.
  """
  dimension: int = attr.ib(converter=_validation.whole_if_integral,
                           validator=_num_users)
  clip_norm: float = attr.ib(validator=_positive_real)
  granularity: float = attr.ib(validator=_positive_real)
  noise_variance: float = attr.ib(validator=_positive_real)

  @property
  def l2_sensitivity(self) -> float:
    """2 (g C + sqrt(d)): a bound on the L2 norm of the sum's change."""
    return 2.0 * (self.granularity * self.clip_norm
                  + math.sqrt(self.dimension))

  @property
  def l1_sensitivity(self) -> float:
    """sqrt(d) times `l2_sensitivity`: a bound on the L1 norm of it."""
    return math.sqrt(self.dimension) * self.l2_sensitivity
# The randomizers whose sum-only release `SumOfReportsEvent` accounts.
SUM_RANDOMIZERS = (randomizers_.SymmetricUnaryEncoding,
                   randomizers_.OptimizedUnaryEncoding,
                   randomizers_.UnaryEncoding,
                   randomizers_.KRandomizedResponse)
_SumRandomizer = Union[randomizers_.SymmetricUnaryEncoding,
                       randomizers_.OptimizedUnaryEncoding,
                       randomizers_.UnaryEncoding,
                       randomizers_.KRandomizedResponse]


def _sum_randomizer(instance, attribute, value):
  del instance
  if not isinstance(value, SUM_RANDOMIZERS):
    names = ', '.join(cls.__name__ for cls in SUM_RANDOMIZERS)
    raise TypeError(
        f'{attribute.name} must be one of {names} (reports whose bits are '
        'independent given the value, or k-RR); got '
        f'{value!r} of type {type(value).__name__}.')


def _domain_size(randomizer: _SumRandomizer) -> int:
  if isinstance(randomizer, randomizers_.KRandomizedResponse):
    return randomizer.num_categories
  return randomizer.domain_size


def _reference_input(instance, attribute, value):
  if value is None:
    return
  size = _domain_size(instance.randomizer)
  if isinstance(value, bool) or not isinstance(value, int):
    raise TypeError(f'{attribute.name} must be None (the empty input) or a '
                    f'value in {{0, ..., {size - 1}}}; got {value!r} of type '
                    f'{type(value).__name__}.')
  if not 0 <= value < size:
    raise ValueError(f'{attribute.name}={value} is outside the domain '
                     f'{{0, ..., {size - 1}}} of {instance.randomizer!r}; '
                     'give a value of the domain or None (the empty input).')


def _aggregator_noise(instance, attribute, value):
  if value is None:
    return
  if not isinstance(value, (DiscreteGaussianSumEvent,
                            DiscreteLaplaceSumEvent)):
    raise TypeError(
        f'{attribute.name} must be None, a DiscreteGaussianSumEvent or a '
        f'DiscreteLaplaceSumEvent; got {value!r} of type '
        f'{type(value).__name__}.')
  if value.sensitivity != 1:
    raise ValueError(
        f'{attribute.name}.sensitivity={value.sensitivity} must be 1: the '
        'noise is added to each coordinate of a sum of bits, which a '
        'neighbour moves by at most 1 per coordinate.')
  if isinstance(instance.randomizer, randomizers_.KRandomizedResponse):
    raise ValueError(
        f'{attribute.name} is for unary encodings (independent bits); '
        f'{instance.randomizer!r} is k-RR, whose counts are not independent '
        'across coordinates. Account the reports alone (aggregator_noise='
        'None: the noise is post-processing of the sum) or the noise alone '
        '(compose(the noise event, 2)), whichever is smaller.')


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SumOfReportsEvent(dp_event.DpEvent):
  """One round in which only the coordinate-wise sum of the reports is seen.

  See SUM-OF-BITS.

  Each of `num_users` users holds a value in {0, ..., d - 1} and applies
  `randomizer` to it locally; a secure aggregation protocol (Prio / DAP,
  Apple's private federated statistics, Flower SecAgg+: trusted, the
  server is not) releases only the sum of the n reports, and nothing else
  about them (who reported is public: all n users, every round).

  * `SymmetricUnaryEncoding` (basic one-time RAPPOR),
    `OptimizedUnaryEncoding` or `UnaryEncoding` (any per-bit rates p > q):
    a report is a vector of d bits, independent given the value x: bit x is
    1 with probability p, every other bit with probability q, fresh coins
    in every report; the release is the d per-coordinate counts of ones.
    Symmetric RAPPOR with per-bit epsilon e (each bit flipped with
    probability 1 / (e^e + 1)) is `SymmetricUnaryEncoding(d, 2 e)`.
    RAPPOR with a permanent response (`UnaryEncoding.from_rappor`): one
    event is one round; a memoized permanent response reused in later
    rounds makes the rounds dependent, and composing this event over them
    is not a proven bound: their joint guarantee is
    `randomizers.rappor_longitudinal_epsilon` (RAPPOR-LONGITUDINAL). A
    fresh permanent response every round composes like any other event.
  * `KRandomizedResponse`: a report is one value, one-hot encoded; the sum
    is the histogram of the reports, which is exactly what the shuffle of
    the reports releases: accounted as `ShuffleEvent(num_users,
    randomizer=randomizer)`.

  Neighbouring relation: that of the accountant, over the `num_users` users
  (the number of users is public, all report every round).

  * `NeighboringRelation.REPLACE_ONE`: one user's value x changes to x'
    (SUM-OF-BITS).
  * `NeighboringRelation.REPLACE_SPECIAL` (deletion, the relation of the
    DAP draft's eps0): one user's report is replaced by the randomizer's
    output on the reference input `reference_input`. None (the default) is
    the empty input: for the unary encodings the all-zero vector, whose
    report is d independent Bern(q) bits, so that only the target's
    coordinate x changes (SUM-OF-BITS-DELETION); k-RR has no empty input,
    and None means a fixed value of its domain (any one). A value r of the
    domain makes the neighbours replace-one neighbours with x' = r, and the
    replace-one bound is reported (DELETION-AS-REPLACE-ONE).

  Aggregator noise (`aggregator_noise`, unary encodings only; see
  SUM-OF-BITS-WITH-NOISE): the release is instead S + Z, S the d counts
  and Z a vector of d independent noise draws, one per coordinate, each
  the noise of `aggregator_noise` (a `DiscreteGaussianSumEvent` or
  `DiscreteLaplaceSumEvent` with sensitivity 1: each of its c aggregators
  adds its own independent draw to every coordinate, and its `trust` says
  which draws the guarantee relies on), independent of the reports and
  secret from the adversary; nothing else is released. The reports' coins
  and the noise are accounted together, as one release, under both
  relations above: never more than the reports alone or the noise alone.

  Attributes:
    num_users: number of users n, an integer in [1, 10^10].
    randomizer: the local randomizer of every user (see above).
    reference_input: the reference input of the deletion relation: None
      (the empty input) or a value in {0, ..., d - 1}; read only under
      REPLACE_SPECIAL.
    aggregator_noise: None (the default: the sum is released as it is) or
      the aggregators' noise added to each coordinate, a
      `DiscreteGaussianSumEvent` or `DiscreteLaplaceSumEvent` with
      sensitivity 1.
  """
  num_users: int = attr.ib(
      converter=_validation.whole_if_integral,
      validator=_bounded_integer(MAX_SUM_USERS))
  randomizer: _SumRandomizer = attr.ib(validator=_sum_randomizer)
  reference_input: Optional[int] = attr.ib(
      default=None, converter=_validation.whole_if_integral,
      validator=_reference_input)
  aggregator_noise: Optional[Union['DiscreteGaussianSumEvent',
                                   'DiscreteLaplaceSumEvent']] = attr.ib(
                                       default=None,
                                       validator=_aggregator_noise)

  @property
  def local_epsilon(self) -> float:
    """eps0 of one report (the randomizer's)."""
    return self.randomizer.local_epsilon

  def as_shuffle_event(self) -> Optional[ShuffleEvent]:
    """The `ShuffleEvent` with the same release (k-RR), or None."""
    if isinstance(self.randomizer, randomizers_.KRandomizedResponse):
      return ShuffleEvent(num_users=self.num_users, randomizer=self.randomizer)
    return None

  def bit_probabilities(self) -> Tuple[float, float]:
    """(p, q) of the independent bits of a unary encoding."""
    if isinstance(self.randomizer, randomizers_.KRandomizedResponse):
      raise ValueError(f'{self.randomizer!r} reports one value, not '
                       'independent bits: see as_shuffle_event.')
    return self.randomizer.bit_probabilities()


# Largest supported parameters of the noisy secure sums (each call stays
# within seconds: the pair is one window of about 19 sqrt(N) or 28 sigma
# points).
MAX_NUM_TRIALS = 10**10
MAX_NOISE_SENSITIVITY = 10**4
MIN_DISCRETE_SIGMA, MAX_DISCRETE_SIGMA = 0.1, 1e5
MIN_LAPLACE_SCALE, MAX_LAPLACE_SCALE = 0.1, 1e4
AGGREGATOR_TRUST = ('one-honest', 'all-honest')


def _sensitivity_field():
  return attr.ib(default=1, converter=_validation.whole_if_integral,
                 validator=_bounded_integer(MAX_NOISE_SENSITIVITY))


def _aggregators_field():
  return attr.ib(default=1, converter=_validation.whole_if_integral,
                 validator=_num_users)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class BinomialSecureSumEvent(dp_event.DpEvent):
  """One release of an integer sum plus centred binomial noise.

  See BINOMIAL-SUM (draft-case-ppm-binomial-dp; the binomial mechanism).

  The release is S + Z - N / 2: S an integer, the sum of the contributions
  (computed in MPC or by secure aggregation, which reveals nothing else), Z
  ~ Bin(N, 1/2), N =
  `num_trials` fair coin flips in total. The flips may be split across
  parties in any way (N_1 + ... + N_m = N): a sum of independent
  Bin(N_i, 1/2) is Bin(N, 1/2), so the split does not matter when every
  share reaches the sum. Parties that drop out or are dishonest (whose
  coins may be known to the adversary) are out of scope: give as
  `num_trials` only the flips of the honest parties whose shares reach
  the sum (the others' are then post-processing). Centring by N / 2 is
  public post-processing.

  Neighbouring relation: two datasets are neighbours when their sums S,
  S' differ by at most Delta = `sensitivity`: |S - S'| <= Delta. This is
  the sum's change under replace-one (contributions in {0, ..., Delta})
  or under add/remove of one contribution in {-Delta, ..., Delta},
  provided the number of contributions is not released, or under deletion
  (one contribution replaced by a fixed reference contribution):
  `NeighboringRelation.REPLACE_ONE`, `ADD_OR_REMOVE_ONE` and
  `REPLACE_SPECIAL` are accepted, with this meaning of Delta.

  A vector sum in Z^d with independent noise per coordinate, each
  coordinate changing by at most Delta (l_inf), is the composition of d
  such releases: `accountant.compose(event, d)` accounts it.

  Attributes:
    num_trials: N, the total number of fair coin flips, an integer in [1,
      10^10].
    sensitivity: Delta, the largest change of the sum, an integer in [1,
      10^4].
  """
  num_trials: int = attr.ib(converter=_validation.whole_if_integral,
                            validator=_bounded_integer(MAX_NUM_TRIALS))
  sensitivity: int = _sensitivity_field()


def _discrete_sigma(instance, attribute, value):
  del instance
  _validation.check_real(attribute.name, value, MIN_DISCRETE_SIGMA,
                         MAX_DISCRETE_SIGMA)


def _trust(instance, attribute, value):
  del instance
  if value not in AGGREGATOR_TRUST:
    raise ValueError(f'{attribute.name} must be one of {AGGREGATOR_TRUST}; '
                     f'got {value!r}.')


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DiscreteGaussianSumEvent(dp_event.DpEvent):
  """One release of an integer sum plus discrete Gaussian noise from c
  aggregators.

  See DISCRETE-GAUSSIAN-SUM (Canonne, Kamath and Steinke 2020; the DAP
  draft's aggregator noise).

  The release is S + Z_1 + ... + Z_c: S an integer, the sum of the
  contributions (secure aggregation reveals nothing else), and each of the
  c = `num_aggregators` aggregators adds its own independent Z_i ~
  N_Z(0, sigma^2) (P(z) proportional to exp(-z^2 / (2 sigma^2)) on the
  integers). `trust` says which noise the guarantee relies on:

  * 'one-honest': at least one aggregator is honest (its noise is secret
    and fresh); the others' noise may be known or zero. Accounted as one
    N_Z(0, sigma^2) (the rest is post-processing): c does not matter.
  * 'all-honest': every aggregator is honest; the noise is the sum of c
    discrete Gaussians (which is not a discrete Gaussian), accounted by
    the exact law on the lattice of the sum of as many of them as a fixed
    cost allows (313 at sigma = 5, 8 at sigma = 200, 2 up to sigma =
    1129), else as one aggregator's noise (sound: the rest is
    post-processing). More aggregators never give a larger epsilon.

  Neighbouring relation: the sums S, S' differ by at most Delta =
  `sensitivity`, under `REPLACE_ONE`, `ADD_OR_REMOVE_ONE` (then the
  number of contributions is not released) or `REPLACE_SPECIAL` (one
  contribution replaced by a reference one). A vector sum in Z^d with
  independent noise per coordinate, each changing by at most Delta, is
  `accountant.compose(event, d)`.

  Attributes:
    sigma: the scale of each aggregator's discrete Gaussian, in [0.1, 1e5].
    sensitivity: Delta, an integer in [1, 10^4].
    num_aggregators: c, an integer >= 1.
    trust: 'one-honest' (default) or 'all-honest'.
  """
  sigma: float = attr.ib(validator=_discrete_sigma)
  sensitivity: int = _sensitivity_field()
  num_aggregators: int = _aggregators_field()
  trust: str = attr.ib(default='one-honest', validator=_trust)


def _laplace_scale(instance, attribute, value):
  del instance
  _validation.check_real(attribute.name, value, MIN_LAPLACE_SCALE,
                         MAX_LAPLACE_SCALE)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DiscreteLaplaceSumEvent(dp_event.DpEvent):
  """One release of an integer sum plus discrete Laplace noise from c
  aggregators.

  See DISCRETE-GAUSSIAN-SUM (iv).

  As `DiscreteGaussianSumEvent`, with each aggregator's Z_i a discrete
  Laplace variable of scale b = `scale` (P(z) proportional to exp(-|z| /
  b) on the integers; the difference of two independent geometric
  variables). `trust`: 'one-honest' (one aggregator's noise relied on) or
  'all-honest' (the sum of as many of the c noises as a fixed cost allows,
  convolved exactly on the lattice, as for the discrete Gaussian).
  Neighbouring relation: the sums differ by at most Delta = `sensitivity`,
  under `REPLACE_ONE`, `ADD_OR_REMOVE_ONE` or `REPLACE_SPECIAL`; a vector
  sum is `compose(event, d)`.

  Attributes:
    scale: b, in [0.1, 1e4].
    sensitivity: Delta, an integer in [1, 10^4].
    num_aggregators: c, an integer >= 1.
    trust: 'one-honest' (default) or 'all-honest'.
  """
  scale: float = attr.ib(validator=_laplace_scale)
  sensitivity: int = _sensitivity_field()
  num_aggregators: int = _aggregators_field()
  trust: str = attr.ib(default='one-honest', validator=_trust)
