"""Local randomizers as named, frozen descriptions, with their tables.

IDs: NAMED-CLONE-RATE, BLANKET-TWO-LEVEL, GAUSS-PROFILE-LDP,
UNARY-ENCODING-RATES, RAPPOR-ONE-REPORT, RAPPOR-LONGITUDINAL [UB]

A `ShuffleEvent(randomizer=...)` is accounted with every dominating pair the
randomizer admits, the smallest profile winning:

* FMT21-CLONES (any pure eps0-LDP randomizer);
* the clone pair with clone probability 2 s(R) (NAMED-CLONE-RATE), where
  s(R) = inf_{x, x0, x1, y} R(x)[y] / (R(x0)[y] + R(x1)[y]) >= e^-eps0 / 2;
* the privacy blanket (BLANKET-TWO-LEVEL) when the randomizer has a *two-level*
  structure: there are a blanket mass gamma and a distribution omega with
  gamma omega <= R(x) for every x, and for the worst pair of inputs (x, x')
  every output y carries two bits b(y) ("y supports x") and b'(y) ("y
  supports x'") with R(x)[y] / omega(y) = alpha e^{eta b(y)} and
  R(x')[y] / omega(y) = alpha e^{eta b'(y)}, and the omega-masses of the
  cells (b, b') = (1, 0) and (0, 1) are equal. `BlanketTable` holds gamma,
  the two cell masses and eta; `pairs.blanket` evaluates the pair.

Every catalogue randomizer below is symmetric under permutations of its
domain (for hashing, of the hash family), so every pair of distinct inputs
has the same table: the "worst pair" is any pair. Each randomizer also
states the laws of the two bits for reports of x, x' and a third value z
(also split by a third bit c, "supports z"), which `pld.lower_bounds` turns
into lower bounds [LB, PAIR] for the dataset pairs "every other user holds
x'" and "every other user holds z" (LB-THIRD-SPLIT).

Domains are {0, ..., domain_size - 1}. Every value is computed in closed
form; `output_probabilities` gives the full matrix for small instances
(tests compare it with the closed forms and with brute force).
"""

import itertools
import math
import typing
from typing import Dict, Optional, Tuple

import attr
import numpy as np
from scipy import special

from shuffle_accountants import _validation

__all__ = [
    'BlanketTable', 'clone_view_table', 'checkin_blanket_tables', 'PairCells',
    'Randomizer', 'KRandomizedResponse', 'SymmetricUnaryEncoding',
    'OptimizedUnaryEncoding', 'UnaryEncoding', 'rappor_longitudinal_epsilon',
    'OptimizedLocalHashing', 'BinaryLocalHashing',
    'HadamardResponse', 'SubsetSelection', 'FiniteRandomizer',
    'GaussianRandomizer', 'LaplaceRandomizer', 'CATALOGUE',
]

# Matrices with more entries than this are not materialised.
_MAX_MATRIX_ENTRIES = 10**6
# Relative tolerance of FiniteRandomizer's checks (rows summing to one, the
# stated local_epsilon).
_MATRIX_TOLERANCE = 1e-9


@attr.s(frozen=True, slots=True, auto_attribs=True)
class BlanketTable:
  """The two-level structure of a randomizer for its worst pair.

  See BLANKET-TWO-LEVEL.

  Attributes:
    blanket_mass: gamma in (0, 1]: gamma omega(y) <= R(x)[y] for all x, y.
    single_mass: omega-mass of the outputs supporting x but not x' (equal
      to that of the outputs supporting x' but not x).
    double_mass: omega-mass of the outputs supporting both.
    log_ratio: eta > 0: the likelihood ratio R(x)/omega is e^eta times
      higher on outputs supporting x than on the others.
  """
  blanket_mass: float
  single_mass: float
  double_mass: float
  log_ratio: float

  def with_absence(self, checkin_rate: float) -> 'BlanketTable':
    """The table of R'(x) = bottom w.p. 1 - checkin_rate, else R(x).

    A check-in round is the shuffle of R' by all users (CHECKIN-BLANKET), so its
    blanket pair is BLANKET-TWO-LEVEL's with this table. R(x)/omega is alpha
    e^{eta b} with alpha = 1 / (1 + (e^eta - 1)(w1 + w2)) >= gamma; a fraction
    kappa = gamma / alpha of each bottom joins the blanket, where its ratio
    alpha / gamma equals the low level of the other outputs (the rest of
    the bottoms are leftover, revealed): gamma' = kappa (1 - c) + c gamma,
    omega'-masses of the cells scaled by c gamma / gamma', eta unchanged.
    Rate 1 gives this table back. The blanket mass is rounded down (fewer
    blanket draws only loosen the pair); the target's law R'(x) =
    alpha' omega' e^{eta b} does not depend on it.
    """
    rate = _validation.check_real('checkin_rate', checkin_rate, 0.0, 1.0,
                                  min_inclusive=False)
    gamma, single, double = (self.blanket_mass, self.single_mass,
                             self.double_mass)
    kappa = min(1.0, gamma * (1.0 + math.expm1(self.log_ratio)
                              * (single + double)))
    present = rate * gamma
    blanket = kappa * (1.0 - rate) + present
    return BlanketTable(blanket * (1 - 1e-12), present * single / blanket,
                        present * double / blanket, self.log_ratio)


def clone_view_table(local_epsilon: float, clone_rate: float) -> BlanketTable:
  """The clone view of NAMED-CLONE-RATE as a two-level table (CHECKIN-BLANKET).

  Every report law contains s (R(x0) + R(x1)) = s (U0 + U1), with U0, U1
  the laws behind the target's R(x0) = p U0 + (1 - p) U1, p = e^eps0 /
  (e^eps0 + 1) (FMT21): blanket mass 2 s, omega uniform on the two labels
  (w1 = 1/2, no double cell), eta = eps0. Its BLANKET-TWO-LEVEL pair is
  FMT21-CLONES with clone probability 2 s; with `BlanketTable.with_absence` it
  is the generic check-in pair.
  """
  return BlanketTable(min(1.0, 2.0 * clone_rate), 0.5, 0.0, local_epsilon)


def checkin_blanket_tables(local_epsilon: float,
                           randomizer: Optional['Randomizer']
                           ) -> Dict[str, BlanketTable]:
  """The two-level tables, by name, whose blanket pairs bound a round of R.

  The pairs are BLANKET-TWO-LEVEL's, the round CHECKIN-BLANKET's.

  The clone view of NAMED-CLONE-RATE at the randomizer's clone rate s(R)
  (e^-eps0 / 2 without one: every eps0-LDP randomizer) and, for a named
  randomizer with a table, its own; `BlanketTable.with_absence` adds a check-in
  rate.
  """
  rate = (randomizer.clone_rate() if randomizer is not None
          else 0.5 * math.exp(-local_epsilon))
  tables = {'NAMED-CLONE-RATE clone view':
                clone_view_table(local_epsilon, rate)}
  own = randomizer.blanket() if randomizer is not None else None
  if own is not None and own != tables['NAMED-CLONE-RATE clone view']:
    tables['BLANKET-TWO-LEVEL privacy blanket'] = own
  return tables


@attr.s(frozen=True, slots=True, auto_attribs=True)
class PairCells:
  """Laws of the bits (b, b') of one report, for the lower bounds' pairs.

  A report of x has (b, b') = (1, 0) with probability `target_for` and
  (0, 1) with `target_against` (a report of x' swaps them). A report of a
  third value z has each with probability `third_value_single` (None when
  no third value has that symmetric law, e.g. a domain of two).

  `third_value_laws` holds further third-value pairs (LB-THIRD-SPLIT), each
  as (others_for, others_against, target_for, target_against): the
  probabilities that a report of z (others) or of x (target) lands in the
  two counted cells. The cells are (b, b', c) = (1, 0, c) and (0, 1, c) for
  each value of a third bit c ("supports z"), or (1, 0) and (0, 1) for
  another third value z (Hadamard response: the row x XOR x'). Empty when
  none is known.
  """
  target_for: float
  target_against: float
  third_value_single: Optional[float]
  third_value_laws: Tuple[Tuple[float, float, float, float], ...] = ()


def _independent_bits_split(on_own: float, on_other: float
                            ) -> Tuple[Tuple[float, float, float, float], ...]:
  """LB-THIRD-SPLIT laws when b, b' and c are independent bits.

  A report of v has its own bit 1 with probability `on_own` and every other
  bit 1 with `on_other`, independently (unary encoding; local hashing with
  h(x), h(x'), h(z) independent). Others hold z (c is their own bit), the
  target x (c is another bit).
  """
  p, q = on_own, on_other
  return tuple((q * (1 - q) * others_c, q * (1 - q) * others_c,
                p * (1 - q) * target_c, (1 - p) * q * target_c)
               for others_c, target_c in ((p, q), (1 - p, 1 - q)))


def _check_epsilon(value) -> float:
  return _validation.check_local_epsilon(value)


def _rr_clone_rate(local_epsilon: float) -> float:
  """1 / (e^eps0 + 1): the clone rate when no third input is worse.

  See NAMED-CLONE-RATE.
  """
  return 1.0 / (math.exp(local_epsilon) + 1.0)


def _generic_clone_rate(local_epsilon: float) -> float:
  """e^-eps0 / 2: the clone rate of every eps0-LDP randomizer.

  See NAMED-CLONE-RATE.
  """
  return 0.5 * math.exp(-local_epsilon)


class Randomizer:
  """Interface of a local randomizer description (see the module docstring).

  Subclasses are frozen attrs classes with a `local_epsilon` attribute.
  """
  local_epsilon: Optional[float]  # for type checkers; subclasses set it

  def clone_rate(self) -> float:
    """s(R) of NAMED-CLONE-RATE, rounded down.

    Clone probability 2 s(R) is certified.
    """
    raise NotImplementedError

  def blanket(self) -> Optional[BlanketTable]:
    """The BLANKET-TWO-LEVEL table, or None without a two-level form."""
    raise NotImplementedError

  @property
  def blanket_note(self) -> str:
    """Why `blanket` is None ('' when it is not)."""
    return '' if self.blanket() is not None else 'no privacy loss to amplify'

  def pair_cells(self) -> Optional[PairCells]:
    """Bit laws of the lower bounds' dataset pairs (None: not known)."""
    raise NotImplementedError

  def output_probabilities(self) -> np.ndarray:
    """The matrix R[x, y] (small instances only)."""
    raise NotImplementedError

  def to_named_tuple(self):
    """A named tuple like `DpEvent.to_named_tuple` (nested in events)."""
    cls = type(self)
    fields = [('module_name', str), ('class_name', str)] + [
        (field.name, field.type) for field in attr.fields(cls)]
    wrapper = typing.NamedTuple(
        f'_{cls.__name__}NamedTupleWrapper', fields)
    return wrapper(module_name=cls.__module__, class_name=cls.__name__,
                   **attr.asdict(self, recurse=False))


def _check_domain(instance, attribute, value):
  del instance
  _validation.check_domain_size(attribute.name, value)


def _epsilon_validator(instance, attribute, value):
  del instance, attribute
  _check_epsilon(value)


def _third_value_clone_rate(domain_size: int, local_epsilon: float) -> float:
  # With a third input z whose report law is e^eps0 below both R(x0) and
  # R(x1) somewhere, s = e^-eps0 / 2; e^-eps0 / 2 is valid in every case.
  if domain_size >= 3:
    return _generic_clone_rate(local_epsilon)
  return _rr_clone_rate(local_epsilon)


def _check_matrix_size(rows: int, columns: int):
  if rows * columns > _MAX_MATRIX_ENTRIES:
    raise ValueError(
        f'the output matrix would have {rows} x {columns} entries, more than '
        f'{_MAX_MATRIX_ENTRIES}; output_probabilities is for small domains.')


@attr.s(frozen=True, slots=True, auto_attribs=True)
class _DomainRandomizer(Randomizer):
  """A randomizer on {0, ..., domain_size - 1} with local epsilon eps0.

  Its clone rate is e^-eps0 / 2 when a third input exists (NAMED-CLONE-RATE: an
  output supporting x0 and x1 but not x), else 1 / (e^eps0 + 1).
  """
  domain_size: int = attr.ib(
      converter=_validation.whole_if_integral, validator=_check_domain)
  local_epsilon: float = attr.ib(validator=_epsilon_validator)

  def clone_rate(self) -> float:
    return _third_value_clone_rate(self.domain_size, self.local_epsilon)



@attr.s(frozen=True, slots=True, auto_attribs=True)
class KRandomizedResponse(Randomizer):
  """k-ary randomized response (Warner 1965; Kairouz et al. 2016).

  Reports the true value with probability e^eps0 / (e^eps0 + k - 1) and each
  other value with probability 1 / (e^eps0 + k - 1); eps0-LDP exactly.
  Clone rate s = 1 / (e^eps0 + 1) for every k (NAMED-CLONE-RATE). Its blanket
  pair is KHH-KRR-WEAK, which the accountant already evaluates exactly.

  Attributes:
    num_categories: k in [2, 10^6].
    local_epsilon: eps0 in [0, 700].
  """
  num_categories: int = attr.ib(
      converter=_validation.whole_if_integral, validator=_check_domain)
  local_epsilon: float = attr.ib(validator=_epsilon_validator)

  def clone_rate(self) -> float:
    return _rr_clone_rate(self.local_epsilon)

  def blanket(self) -> BlanketTable:
    k, e = self.num_categories, math.exp(self.local_epsilon)
    return BlanketTable(k / (e + k - 1), 1.0 / k, 0.0, self.local_epsilon)

  def pair_cells(self) -> PairCells:
    denominator = math.exp(self.local_epsilon) + self.num_categories - 1
    return PairCells(math.exp(self.local_epsilon) / denominator,
                     1 / denominator,
                     1 / denominator if self.num_categories >= 3 else None)

  def output_probabilities(self) -> np.ndarray:
    k, e = self.num_categories, math.exp(self.local_epsilon)
    _check_matrix_size(k, k)
    return (np.ones((k, k)) + (e - 1) * np.eye(k)) / (e + k - 1)


class _UnaryEncoding(Randomizer):
  """Unary encoding: the one-hot vector of x, each bit flipped independently.

  Bit x is 1 with probability p, every other bit with probability q; eps0 =
  log(p (1 - q) / ((1 - p) q)) (UNARY-ENCODING-RATES). Blanket
  (BLANKET-TWO-LEVEL): omega is the
  product of Bernoulli(q) bits and gamma = (1 - p) / (1 - q) (gamma omega <=
  R(x) everywhere); under omega the bits at x and x' are independent, so the
  cells have masses q (1 - q) and q^2. s = e^-eps0 / 2 for d >= 3
  (NAMED-CLONE-RATE: no gain). Third value z: the bits at x and x' are
  Bernoulli(q) for z. Subclasses have `domain_size` and `local_epsilon`.
  """
  domain_size: int  # for type checkers; subclasses set it
  local_epsilon: float

  def clone_rate(self) -> float:
    return _third_value_clone_rate(self.domain_size, self.local_epsilon)

  def _bit_probabilities(self) -> Tuple[float, float]:
    raise NotImplementedError

  def bit_probabilities(self) -> Tuple[float, float]:
    """(p, q): P[bit = 1] at the user's own coordinate and elsewhere."""
    return self._bit_probabilities()

  def blanket(self) -> Optional[BlanketTable]:
    if self.local_epsilon == 0:
      return None
    p, q = self._bit_probabilities()
    return BlanketTable((1 - p) / (1 - q), q * (1 - q), q * q,
                        self.local_epsilon)

  def pair_cells(self) -> PairCells:
    p, q = self._bit_probabilities()
    third = self.domain_size >= 3
    return PairCells(p * (1 - q), (1 - p) * q, q * (1 - q) if third else None,
                     _independent_bits_split(p, q) if third else ())

  def output_probabilities(self) -> np.ndarray:
    d = self.domain_size
    _check_matrix_size(d, 2**d)
    p, q = self._bit_probabilities()
    outputs = np.array(list(itertools.product((0, 1), repeat=d)))
    truth = np.eye(d, dtype=bool)
    on = np.where(truth[:, None, :], p, q)  # P[bit = 1], per input and bit
    return np.prod(np.where(outputs[None] == 1, on, 1 - on), axis=2)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SymmetricUnaryEncoding(_UnaryEncoding, _DomainRandomizer):
  """Symmetric unary encoding, i.e. basic one-time RAPPOR.

  p = e^{eps0/2} / (e^{eps0/2} + 1), q = 1 - p (Erlingsson, Pihur, Korolova,
  CCS 2014; "SUE" in Wang, Blocki, Li, Jha, USENIX Security 2017).
  See `_UnaryEncoding` for the blanket and clone rate.

  Attributes:
    domain_size: d in [2, 10^6].
    local_epsilon: eps0 in [0, 700].
  """

  def _bit_probabilities(self) -> Tuple[float, float]:
    half = self.local_epsilon / 2
    return 1 / (1 + math.exp(-half)), 1 / (1 + math.exp(half))


@attr.s(frozen=True, slots=True, auto_attribs=True)
class OptimizedUnaryEncoding(_UnaryEncoding, _DomainRandomizer):
  """Optimized unary encoding: p = 1/2, q = 1 / (e^eps0 + 1).

  ("OUE", Wang, Blocki, Li, Jha, USENIX Security 2017.) See
  `_UnaryEncoding` for the blanket and clone rate.

  Attributes:
    domain_size: d in [2, 10^6].
    local_epsilon: eps0 in [0, 700].
  """

  def _bit_probabilities(self) -> Tuple[float, float]:
    return 0.5, 1 / (math.exp(self.local_epsilon) + 1)


def _unary_epsilon(rate_if_one: float, rate_if_zero: float) -> float:
  """log(p (1 - q) / (q (1 - p))), the two log-ratios summed in log space."""
  p, q = rate_if_one, rate_if_zero
  return (math.log(p) - math.log(q)) + (math.log1p(-q) - math.log1p(-p))


def _check_unary_rates(instance, attribute, value):
  del attribute, value
  p, q = (_validation.check_real(name, getattr(instance, name), 0.0, 1.0,
                                 min_inclusive=False, max_inclusive=False)
          for name in ('rate_if_one', 'rate_if_zero'))
  if not q < p:
    raise ValueError(
        f'rate_if_zero={q!r} must be below rate_if_one={p!r} (0 < '
        'rate_if_zero < rate_if_one < 1): a reported 1 must be more likely '
        'when the true bit is 1.')
  epsilon = _unary_epsilon(p, q)
  if epsilon > _validation.MAX_LOCAL_EPSILON:
    raise ValueError(
        f'rate_if_one={p!r} and rate_if_zero={q!r} give eps0 = {epsilon!r},'
        f' above {_validation.MAX_LOCAL_EPSILON:g}; rates closer together '
        'are supported.')


@attr.s(frozen=True, slots=True, auto_attribs=True)
class UnaryEncoding(_UnaryEncoding):
  """Unary encoding with any per-bit rates p > q (UNARY-ENCODING-RATES).

  A user holding x in {0, ..., d - 1} reports d independent bits: bit x is 1
  with probability p = `rate_if_one`, every other bit with probability q =
  `rate_if_zero`. Fresh randomness for every report. Replace-one eps0 =
  log(p (1 - q) / (q (1 - p))) exactly (`local_epsilon`); under deletion
  to the all-zero vector one bit changes, at most max(log(p / q),
  log((1 - q) / (1 - p))). `SymmetricUnaryEncoding(d, e)` is p = 1 - q =
  e^{e/2} / (e^{e/2} + 1), `OptimizedUnaryEncoding(d, e)` is p = 1/2, q =
  1 / (e^e + 1): the same law, accounted by the same code (the symmetric
  class alone uses the reflection that p + q = 1 allows). See
  `_UnaryEncoding` for the blanket and clone rate; `from_rappor` for
  RAPPOR's one-report rates.

  Attributes:
    domain_size: d in [2, 10^6].
    rate_if_one: p = P[reported bit = 1 | true bit = 1], in (0, 1).
    rate_if_zero: q = P[reported bit = 1 | true bit = 0], in (0, p); eps0
      at most 700. Rates 0 and 1 are refused: some report would then
      reveal the value with certainty (eps0 infinite), and at the
      neighbours "every other user at x" (p = 1) or "no other user at x"
      (q = 0) the sum does too, with probability 1 - q or p.
  """
  domain_size: int = attr.ib(
      converter=_validation.whole_if_integral, validator=_check_domain)
  rate_if_one: float = attr.ib()
  rate_if_zero: float = attr.ib(validator=_check_unary_rates)

  # A property, not a field: eps0 follows from the rates (and a field
  # outside __init__ would break DpEvent.from_named_tuple).
  @property
  def local_epsilon(self) -> float:  # type: ignore[override]
    """eps0 = log(p (1 - q) / (q (1 - p))): replace-one, exact."""
    return _unary_epsilon(self.rate_if_one, self.rate_if_zero)

  def _bit_probabilities(self) -> Tuple[float, float]:
    return float(self.rate_if_one), float(self.rate_if_zero)

  @classmethod
  def from_rappor(cls, domain_size: int, f: float, p: float, q: float
                  ) -> 'UnaryEncoding':
    """One RAPPOR report of a one-hot vector (RAPPOR-ONE-REPORT), as rates.

    RAPPOR (Erlingsson, Pihur, Korolova, CCS 2014) with one hash function
    over d values: the permanent randomized response B' sets each bit of
    the one-hot vector B to 1 with probability f/2, to 0 with probability
    f/2 and keeps it otherwise; the instantaneous randomized response S
    reports each bit 1 with probability q if B'_i = 1 and p if B'_i = 0
    (RAPPOR's letters: q > p). One report S has independent bits with

      rate_if_one  = q* = (1 - f/2) q + (f/2) p,
      rate_if_zero = p* = (f/2) q + (1 - f/2) p,

    so its eps0 is the paper's eps_1 = log(q* (1 - p*) / (p* (1 - q*))).

    What is accounted: ONE round (one instantaneous report per user). The
    permanent response is memoized: a client reports the same value in
    later rounds from the same B', so rounds are not independent
    randomizations and composing this randomizer's rounds in an
    accountant is not a proven bound for memoized RAPPOR (it is for a
    deployment that draws a fresh B' every round). The guarantee of all
    rounds together, for one memoized value, is `rappor_longitudinal_epsilon`
    (RAPPOR-LONGITUDINAL: local, no amplification by the sum).

    Args:
      domain_size: d in [2, 10^6].
      f: the permanent rate, in [0, 1).
      p: P[S_i = 1 | B'_i = 0], in [0, 1].
      q: P[S_i = 1 | B'_i = 1], in (p, 1].

    Raises:
      ValueError: a parameter outside its range, or rates of 0 or 1 (f = 0
        with p = 0 or q = 1).
    """
    f = _validation.check_real('f', f, 0.0, 1.0, max_inclusive=False)
    p = _validation.check_real('p', p, 0.0, 1.0)
    q = _validation.check_real('q', q, 0.0, 1.0)
    if not p < q:
      raise ValueError(f'q={q!r} must exceed p={p!r} (RAPPOR\'s q = '
                       'P[S_i = 1 | B\'_i = 1] > p = P[S_i = 1 | B\'_i = 0]).')
    keep = 1 - f / 2
    on, off = keep * q + (f / 2) * p, (f / 2) * q + keep * p
    if not 0 < off < on < 1:
      raise ValueError(
          f'f={f!r}, p={p!r}, q={q!r} give per-bit rates {on!r} and '
          f'{off!r}; a rate of 0 or 1 reveals the bit (eps0 infinite): '
          'take f > 0, or 0 < p < q < 1.')
    return cls(domain_size, on, off)


def rappor_longitudinal_epsilon(f: float, deletion: bool = False) -> float:
  """eps_inf of memoized RAPPOR over one-hot vectors (RAPPOR-LONGITUDINAL).

  Every round's report of a memoized value is computed from the same
  permanent response B' with data-independent fresh coins, so all rounds
  together (shuffled, summed or seen one by one) are a post-processing of
  B', whose eps0 bounds them: 2 log((1 - f/2) / (f/2)) under replace-one
  (two bits of B change), log((1 - f/2) / (f/2)) under deletion to the
  all-zero vector (one bit). [UB, pure, any number of rounds, per value:
  a client that memoizes k distinct values has k times this.] Infinite at
  f = 0.
  """
  f = _validation.check_real('f', f, 0.0, 1.0, max_inclusive=False)
  if f == 0:
    return math.inf
  return (1 if deletion else 2) * math.log((1 - f / 2) / (f / 2))


class _LocalHashing(_DomainRandomizer):
  """Local hashing: report (h, v), h from a hash family into [g].

  Each user draws h uniformly from a pairwise-independent family (h(x) and
  h(x') independent and uniform on [g] for x != x') and reports v = h(x)
  with probability e^eps0 / (e^eps0 + g - 1), each other value of [g] with
  probability 1 / (e^eps0 + g - 1). eps0-LDP exactly. Blanket
  (BLANKET-TWO-LEVEL): omega uniform over (h, v), gamma = g / (e^eps0 + g - 1);
  b(y) = [h(x) = v] has omega-mass 1/g independently for x and x', so the cells
  have masses (1/g)(1 - 1/g) and 1/g^2. s = e^-eps0 / 2 for d >= 3. The lower
  bound's third-value laws assume h(x), h(x'), h(z) independent (a fully random
  function, as in `output_probabilities`), under which they are
  (1/g)(1 - 1/g) for z, and p (1 - 1/g), (1 - p) / g for the target.
  """

  def _range(self) -> int:
    raise NotImplementedError

  def _true_value_probability(self) -> float:
    return math.exp(self.local_epsilon) / (math.exp(self.local_epsilon)
                                           + self._range() - 1)

  def blanket(self) -> Optional[BlanketTable]:
    if self.local_epsilon == 0:
      return None
    g = self._range()
    return BlanketTable(g / (math.exp(self.local_epsilon) + g - 1),
                        (1 / g) * (1 - 1 / g), 1 / g**2, self.local_epsilon)

  def pair_cells(self) -> PairCells:
    g, p = self._range(), self._true_value_probability()
    third = self.domain_size >= 3
    return PairCells(p * (1 - 1 / g), (1 - p) / g,
                     (1 / g) * (1 - 1 / g) if third else None,
                     _independent_bits_split(p, 1 / g) if third else ())

  def output_probabilities(self) -> np.ndarray:
    """Over a fully random hash: outputs (h, v), h all g^d functions."""
    d, g = self.domain_size, self._range()
    _check_matrix_size(d, g**d * g)
    p = self._true_value_probability()
    q = (1 - p) / (g - 1)
    functions = np.array(list(itertools.product(range(g), repeat=d)))
    values = np.arange(g)
    hit = functions.T[:, :, None] == values[None, None, :]  # [x, h, v]
    return (np.where(hit, p, q) / len(functions)).reshape(d, -1)


def _check_range(instance, attribute, value):
  del instance
  if value is not None:
    _validation.check_integer(attribute.name, value, 2)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class OptimizedLocalHashing(_LocalHashing):
  """Optimized local hashing (Wang, Blocki, Li, Jha, USENIX Security 2017).

  `hash_range` g defaults to the paper's choice round(e^eps0 + 1) (at least
  2). See `_LocalHashing`.

  Attributes:
    domain_size: d in [2, 10^6].
    local_epsilon: eps0 in [0, 700].
    hash_range: g >= 2, or None for round(e^eps0 + 1).
  """
  hash_range: Optional[int] = attr.ib(
      default=None, converter=_validation.whole_if_integral,
      validator=_check_range)

  def _range(self) -> int:
    if self.hash_range is not None:
      return self.hash_range
    return max(2, int(round(math.exp(self.local_epsilon) + 1)))


@attr.s(frozen=True, slots=True, auto_attribs=True)
class BinaryLocalHashing(_LocalHashing):
  """Binary local hashing: local hashing with g = 2 (Bassily, Smith 2015).

  See `_LocalHashing`.

  Attributes:
    domain_size: d in [2, 10^6].
    local_epsilon: eps0 in [0, 700].
  """

  def _range(self) -> int:
    return 2


@attr.s(frozen=True, slots=True, auto_attribs=True)
class HadamardResponse(_DomainRandomizer):
  """Hadamard response (Acharya, Sun, Zhang, AISTATS 2019).

  With K the least power of two > d and H the K x K Sylvester-Hadamard
  matrix, input x owns the K/2 columns C_x = {j : H[x + 1, j] = +1} and the
  report j is drawn with probability 2 e^eps0 / (K (e^eps0 + 1)) on C_x and
  2 / (K (e^eps0 + 1)) off it; eps0-LDP exactly. Blanket (BLANKET-TWO-LEVEL):
  omega uniform on [K], gamma = 2 / (e^eps0 + 1); distinct rows are independent
  bits under the uniform law, so the cells have masses 1/4 and 1/4.
  s = e^-eps0 / 2 is used for d >= 3 (always valid). Third value: row z + 1
  chosen independent of rows x + 1 and x' + 1 (possible when d >= 4), so
  the bits are uniform and independent for z.

  Attributes:
    domain_size: d in [2, 10^6].
    local_epsilon: eps0 in [0, 700].
  """

  def _columns(self) -> int:
    return 2 ** math.ceil(math.log2(self.domain_size + 1))

  def blanket(self) -> Optional[BlanketTable]:
    if self.local_epsilon == 0:
      return None
    return BlanketTable(2 / (math.exp(self.local_epsilon) + 1), 0.25, 0.25,
                        self.local_epsilon)

  def pair_cells(self) -> PairCells:
    on = 1 / (1 + math.exp(-self.local_epsilon))
    if self.domain_size < 4:  # the XOR row of x, x' = 0, 1 is z = 2
      return PairCells(on / 2, (1 - on) / 2, None, ((
          (1 - on) / 2, (1 - on) / 2, on / 2, (1 - on) / 2),) if (
              self.domain_size == 3) else ())
    # Row z + 1 independent of rows x + 1 and x' + 1 (d >= 4), split by
    # c = "row z + 1 is +1 at the column": independent of (b, b') under
    # every law but z's own, under which it is 1 with probability `on`.
    laws = tuple((others_c / 4, others_c / 4, on / 4, (1 - on) / 4)
                 for others_c in (on, 1 - on))
    # Row z + 1 = (x + 1) XOR (x' + 1) (z = 2 for x, x' = 0, 1): z's +1
    # columns are the cells (1, 1) and (0, 0), so each single cell has
    # probability (1 - on) / 2 under z.
    laws += (((1 - on) / 2, (1 - on) / 2, on / 2, (1 - on) / 2),)
    return PairCells(on / 2, (1 - on) / 2, 0.25, laws)

  def output_probabilities(self) -> np.ndarray:
    columns = self._columns()
    _check_matrix_size(self.domain_size, columns)
    rows = np.arange(1, self.domain_size + 1)
    # Sylvester: H[r, j] = (-1)^{popcount(r & j)}.
    parity = np.vectorize(lambda v: bin(v).count('1') % 2)(
        rows[:, None] & np.arange(columns)[None, :])
    e = math.exp(self.local_epsilon)
    return np.where(parity == 0, e, 1.0) * 2 / (columns * (e + 1))


def _check_subset_size(instance, attribute, value):
  if value is not None:
    _validation.check_integer(attribute.name, value, 1,
                              instance.domain_size - 1)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SubsetSelection(_DomainRandomizer):
  """k-subset selection (Wang et al. 2016; Ye, Barg,
  IEEE Trans. Inf. Theory 2018).

  Reports a subset S of size k with probability proportional to e^eps0 if
  x is in S and 1 otherwise; eps0-LDP exactly. `subset_size` defaults to
  the usual choice max(1, round(d / (e^eps0 + 1))). Blanket (BLANKET-TWO-LEVEL):
  omega uniform over k-subsets, gamma = d / (k e^eps0 + d - k); the cells have
  masses k (d - k) / (d (d - 1)) and k (k - 1) / (d (d - 1)). s = e^-eps0 / 2
  when k >= 2 and d >= 3, and 1 / (e^eps0 + 1) when k = 1 (k-RR).

  Attributes:
    domain_size: d in [2, 10^6].
    local_epsilon: eps0 in [0, 700].
    subset_size: k in [1, d - 1], or None for the default.
  """
  subset_size: Optional[int] = attr.ib(
      default=None, converter=_validation.whole_if_integral,
      validator=_check_subset_size)

  def _size(self) -> int:
    if self.subset_size is not None:
      return self.subset_size
    guess = round(self.domain_size / (math.exp(self.local_epsilon) + 1))
    return min(max(1, guess), self.domain_size - 1)

  def clone_rate(self) -> float:
    if self._size() == 1:
      return _rr_clone_rate(self.local_epsilon)
    return _DomainRandomizer.clone_rate(self)

  def blanket(self) -> Optional[BlanketTable]:
    if self.local_epsilon == 0:
      return None
    d, k = self.domain_size, self._size()
    return BlanketTable(d / (k * math.exp(self.local_epsilon) + d - k),
                        k * (d - k) / (d * (d - 1)),
                        k * (k - 1) / (d * (d - 1)), self.local_epsilon)

  def pair_cells(self) -> PairCells:
    d, k = self.domain_size, self._size()
    e = math.exp(self.local_epsilon)
    # Subset counts relative to C(d - 2, k - 1): the normaliser
    # C(d-1, k-1) e + C(d-1, k), and C(d-3, k-2) e + C(d-3, k-1) subsets
    # holding x but not x' weighted for a third value z.
    total = (d - 1) * (k * e + d - k) / (k * (d - k))
    if d < 3:
      return PairCells(e / total, 1 / total, None)
    # The same subsets split by c = [z in S]: C(d - 3, k - 2) and
    # C(d - 3, k - 1) of them, relative to C(d - 2, k - 1); z weighs e^eps0
    # in z's own law.
    split = tuple((weight * share / total, weight * share / total,
                   e * share / total, share / total)
                  for share, weight in (((k - 1) / (d - 2), e),
                                        ((d - k - 1) / (d - 2), 1.0))
                  if share > 0)
    return PairCells(e / total, 1 / total,
                     (e * (k - 1) + d - k - 1) / (d - 2) / total, split)

  def output_probabilities(self) -> np.ndarray:
    d, k = self.domain_size, self._size()
    _check_matrix_size(d, math.comb(d, k))
    subsets = list(itertools.combinations(range(d), k))
    e = math.exp(self.local_epsilon)
    member = np.array([[x in subset for subset in subsets] for x in range(d)])
    weights = np.where(member, e, 1.0)
    return weights / weights.sum(axis=1, keepdims=True)


def _to_matrix(value) -> Tuple[Tuple[float, ...], ...]:
  try:
    array = np.asarray(value, dtype=np.float64)
  except (TypeError, ValueError) as error:
    raise TypeError(f'probabilities must be a 2-d array of numbers; got '
                    f'{value!r}.') from error
  if array.ndim != 2 or array.shape[0] < 2 or array.shape[1] < 2:
    raise ValueError(f'probabilities must be a 2-d array with at least 2 rows '
                     f'(inputs) and 2 columns (outputs); got shape '
                     f'{array.shape}.')
  return tuple(tuple(float(v) for v in row) for row in array)


# Pair-by-output work above which the blanket tables are not derived.
_MAX_PAIR_WORK = 10**7


@attr.s(frozen=True, slots=True, auto_attribs=True)
class FiniteRandomizer(Randomizer):
  """Any randomizer with finitely many inputs and outputs, as a matrix.

  `probabilities[x][y]` is the probability of output y on input x: entries
  >= 0, each row summing to one (within 1e-9), at least 2 inputs and 2
  outputs. Its eps0 is the largest log-ratio of two entries of a column
  (pure LDP: a column is all zero or all positive); when `local_epsilon` is
  given it must equal that (within 1e-9), else it is filled in.

  s(R) (NAMED-CLONE-RATE) is the matrix minimum: min over columns of the column
  minimum over the sum of its two largest entries. The blanket
  (BLANKET-TWO-LEVEL) takes gamma omega = the column minima; it is used when,
  for every pair of inputs, the ratios R(x)/omega and R(x')/omega take at most
  two values (exactly, in floating point) with equal single-cell masses, and all
  pairs share one table; otherwise the blanket route is skipped and
  `blanket_note` says why.

  Attributes:
    probabilities: the row-stochastic matrix (stored as a tuple of tuples).
    local_epsilon: eps0 of the matrix, or None to compute it.
  """
  probabilities: Tuple[Tuple[float, ...], ...] = attr.ib(converter=_to_matrix)
  local_epsilon: Optional[float] = attr.ib(default=None)

  def __attrs_post_init__(self):
    matrix = np.array(self.probabilities)
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
      bad = matrix[~np.isfinite(matrix) | (matrix < 0)][0]
      raise ValueError(f'probabilities must be finite and >= 0; got {bad}.')
    sums = matrix.sum(axis=1)
    off = np.abs(sums - 1) > _MATRIX_TOLERANCE * matrix.shape[1]
    if np.any(off):
      row = int(np.argmax(off))
      raise ValueError(f'each row of probabilities must sum to 1; row {row} '
                       f'sums to {sums[row]!r}.')
    used = matrix.max(axis=0) > 0
    if np.any(matrix[:, used].min(axis=0) == 0):
      raise ValueError(
          'probabilities is not pure LDP: some output has probability 0 '
          'under one input and > 0 under another (its eps0 is infinite); '
          'use ShuffleEvent(local_epsilon=..., local_delta=...) for '
          'approximate LDP.')
    with np.errstate(divide='ignore'):
      logs = np.log(matrix[:, used])
    epsilon = float(np.max(logs.max(axis=0) - logs.min(axis=0)))
    if self.local_epsilon is None:
      object.__setattr__(self, 'local_epsilon', epsilon)
      return
    stated = _check_epsilon(self.local_epsilon)
    if abs(stated - epsilon) > _MATRIX_TOLERANCE * max(1.0, epsilon):
      raise ValueError(
          f'local_epsilon={stated} does not match the matrix, whose largest '
          f'log-ratio in a column is {epsilon}; omit local_epsilon to use '
          'the matrix value.')

  def _matrix(self) -> np.ndarray:
    return np.array(self.probabilities)

  def clone_rate(self) -> float:
    matrix = self._matrix()
    matrix = matrix[:, matrix.max(axis=0) > 0]
    top_two = np.sort(matrix, axis=0)[-2:].sum(axis=0)
    rate = float(np.min(matrix.min(axis=0) / top_two))
    # Round down: s enters as a lower bound on the clone probability.
    return rate * (1 - 1e-12)

  def _pair_tables(self):
    """(tables, note): the distinct pair tables, or () and why not."""
    matrix = self._matrix()
    inputs, outputs = matrix.shape
    if inputs * inputs * outputs > _MAX_PAIR_WORK:
      return (), (f'{inputs} inputs x {outputs} outputs is too large to '
                  'derive the pair tables')
    minimum = matrix.min(axis=0)
    keep = minimum > 0
    gamma = math.fsum(minimum[keep])
    omega = minimum[keep] / gamma
    ratios = matrix[:, keep] / minimum[keep]
    tables = set()
    for x, other in itertools.combinations(range(inputs), 2):
      levels = np.unique(np.concatenate([ratios[x], ratios[other]]))
      if levels.size == 1:
        continue  # identical report laws: no privacy loss
      if levels.size > 2:
        return (), (f'inputs {x} and {other} have {levels.size} distinct '
                    'likelihood ratios to the blanket, not two levels')
      high = levels[1]
      supports, supports_other = ratios[x] == high, ratios[other] == high
      single = math.fsum(omega[supports & ~supports_other])
      if single != math.fsum(omega[~supports & supports_other]):
        return (), (f'inputs {x} and {other} are not symmetric (their '
                    'single cells have different blanket masses)')
      log_ratio = float(np.nextafter(math.log(high / levels[0]), np.inf))
      tables.add(BlanketTable(gamma, single, math.fsum(
          omega[supports & supports_other]), log_ratio))
      if len(tables) > 1:
        return (), ('pairs of inputs have different tables (the blanket '
                    'route needs one worst pair)')
    return tuple(tables), ''

  def blanket(self) -> Optional[BlanketTable]:
    tables = self._pair_tables()[0]
    return tables[0] if tables else None

  @property
  def blanket_note(self) -> str:
    return self._pair_tables()[1] or Randomizer.blanket_note.fget(self)  # type: ignore[attr-defined]

  def pair_cells(self) -> Optional[PairCells]:
    return None

  def output_probabilities(self) -> np.ndarray:
    return self._matrix()


def _check_noise_multiplier(instance, attribute, value):
  del instance
  _validation.check_real(attribute.name, value, 0.0, min_inclusive=False)


def _check_dimension(instance, attribute, value):
  del instance
  _validation.check_integer(attribute.name, value, 1)


class _ContinuousRandomizer(Randomizer):
  """A randomizer with real-valued reports.

  It has no BLANKET-TWO-LEVEL table and no output matrix; its continuous
  blanket is NUM-BLANKET (`pld.continuous_blanket`).
  """

  def blanket(self) -> Optional[BlanketTable]:
    return None

  @property
  def blanket_note(self) -> str:
    return 'continuous blanket: see NUM-BLANKET'

  def pair_cells(self) -> Optional[PairCells]:
    return None

  def output_probabilities(self) -> np.ndarray:
    raise ValueError(f'{type(self).__name__} has continuous outputs: no '
                     'output matrix.')


def _check_bool(instance, attribute, value):
  del instance
  if not isinstance(value, (bool, np.bool_)):
    raise TypeError(f'{attribute.name} must be True or False; got '
                    f'{value!r}.')


@attr.s(frozen=True, slots=True, auto_attribs=True)
class GaussianRandomizer(_ContinuousRandomizer):
  """Gaussian reports: a vector of L2 norm at most C plus N(0, sigma^2 C^2 I_d).

  Each user reports x + N(0, sigma^2 C^2 I_d), x its record clipped to the
  ball of radius C in R^d (or rounded, below), sigma = `noise_multiplier`.
  Replace-one: one user's record changes, so its report's mean moves by up to
  2C. Not pure LDP (`local_epsilon` is infinite): shuffle rounds are
  accounted with the GAUSS-NO-GAIN Gaussian pair (no amplification), FMT-EQ10-11
  along the report's privacy profile (GAUSS-PROFILE-LDP, `local_deltas`: any d)
  and, for d = 1, the continuous privacy blanket NUM-BLANKET
  (`pld.continuous_blanket`), the smallest profile winning; for d > 1 the
  contribution record names the blanket as not used.

  The mechanism, by `randomized_rounding`:
    False (default, plain clipping): x is clipped to norm C and the noise
      is added to it. The blanket's worst-pair step is unproven for
      interior inputs (NUM-BLANKET (iv)), so d = 1 uses the envelope of
      every pair's blanket loss (NUM-BLANKET (v), proven, looser) and
      d > 1 only GAUSS-NO-GAIN; the extreme pair's blanket value is
      `continuous_blanket.extreme_pair_epsilon`, an estimate never
      composed.
    True (d = 1 only): x clipped to [-C, C] is rounded to +C with
      probability (1 + x / C) / 2, else to -C (unbiased), and the noise is
      added to the rounded value. Every report law is a mixture of the
      laws at +C and -C, so the pair (C, -C) is the worst (joint
      convexity) and NUM-BLANKET is proven.

  Attributes:
    noise_multiplier: sigma > 0 (noise standard deviation over C).
    dimension: d >= 1.
    randomized_rounding: False (plain clipping) or True (d = 1 only: round
      to +-C, unbiased, before the noise).
  """
  noise_multiplier: float = attr.ib(validator=_check_noise_multiplier)
  dimension: int = attr.ib(default=1, converter=_validation.whole_if_integral,
                           validator=_check_dimension)
  randomized_rounding: bool = attr.ib(default=False, validator=_check_bool)

  def __attrs_post_init__(self):
    if self.randomized_rounding and self.dimension > 1:
      raise ValueError(
          f'randomized_rounding=True needs dimension=1; got '
          f'dimension={self.dimension} (randomized rounding of vectors is '
          'not implemented: use randomized_rounding=False).')

  @property
  def local_epsilon(self) -> float:  # type: ignore[override]
    return math.inf

  def clone_rate(self) -> float:
    return 0.0

  def local_deltas(self, local_epsilons) -> np.ndarray:
    """delta0(eps0) at each eps0 >= 0: every report is (eps0, delta0)-LDP. [UB]

    GAUSS-PROFILE-LDP: the reports of any two inputs are N(u, s^2 I_d) and
    N(v, s^2 I_d), s = sigma C, with |u - v|_2 <= 2C (both in the L2 ball of
    radius C; rounded inputs are mixtures of the laws at +-C). Their
    hockey-stick divergence at e^eps0 is the one-dimensional
    Phi(mu/2 - eps0/mu) - e^eps0 Phi(-mu/2 - eps0/mu) at mu = |u - v|_2 / s,
    largest at mu = 2 / sigma, whatever d. Log-space CDFs; the result is
    rounded up by 1e-10 Phi(mu/2 - eps0/mu) (the CDFs' and the difference's
    rounding) and 1e-300.
    """
    epsilons = np.asarray(local_epsilons, dtype=np.float64)
    mu = 2.0 / self.noise_multiplier
    log_first = special.log_ndtr(mu / 2 - epsilons / mu)
    log_second = epsilons + special.log_ndtr(-mu / 2 - epsilons / mu)
    first = np.exp(log_first)
    difference = -np.expm1(np.minimum(log_second - log_first, 0.0))
    return np.minimum(first * difference * (1 + 1e-9) + first * 1e-10
                      + 1e-300, 1.0)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class LaplaceRandomizer(_ContinuousRandomizer):
  """Laplace reports: a scalar in [-C, C] plus Laplace noise.

  Each user reports its value x in [-C, C] (see below) plus Lap(b),
  density e^{-|z| / b} / (2 b), with scale b = 2C / eps0: the report is
  exactly eps0-LDP (replace-one: x moves by up to 2C). Shuffle rounds are
  accounted with every pure-LDP pair (FMT21-CLONES, the generic clone rate
  e^-eps0 / 2 of NAMED-CLONE-RATE) and, with randomized rounding only, the
  continuous privacy blanket NUM-BLANKET (`pld.continuous_blanket`), the
  smallest profile winning.

  The mechanism, by `randomized_rounding`:
    False (default, plain clipping): x is clipped to [-C, C] and the noise
      is added to it; only the pure-LDP pairs are used (NUM-BLANKET's
      worst-pair step is unproven for interior inputs, NUM-BLANKET (iv)).
    True: x clipped to [-C, C] is rounded to +C with probability
      (1 + x / C) / 2, else to -C (unbiased), and the noise is added to the
      rounded value; NUM-BLANKET (pair (C, -C), the worst by joint
      convexity) is proven and used.

  Attributes:
    local_epsilon: eps0 in (0, 700] (the noise scale is b = 2C / eps0).
    randomized_rounding: False (plain clipping) or True (round to +-C,
      unbiased, before the noise).
  """
  local_epsilon: float = attr.ib(validator=_epsilon_validator)
  randomized_rounding: bool = attr.ib(default=False, validator=_check_bool)

  def __attrs_post_init__(self):
    if self.local_epsilon == 0:
      raise ValueError('local_epsilon must be in (0, 700] for '
                       'LaplaceRandomizer (eps0 = 0 is infinite noise); got '
                       '0.')

  def clone_rate(self) -> float:
    return _generic_clone_rate(self.local_epsilon)


CATALOGUE = (KRandomizedResponse, SymmetricUnaryEncoding,
             OptimizedUnaryEncoding, UnaryEncoding, OptimizedLocalHashing,
             BinaryLocalHashing, HadamardResponse, SubsetSelection,
             FiniteRandomizer)
