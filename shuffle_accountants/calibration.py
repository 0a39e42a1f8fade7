"""Finds the eps0, noise, rounds or users whose certified epsilon meets a target.

IDs: KHH-DOM, LIEW-THM2, BATCH-MONOTONE

In the style of `dp_accounting.mechanism_calibration`: a function builds the
round's `DpEvent` from the parameter, a fresh accountant composes it
`rounds` times, and a bracketing root search (scipy's Brent method on the
relative gap epsilon / target - 1) moves the parameter. Every value returned
was itself accounted: its certified epsilon is at most the target (an upper
bound from `ShufflePldAccountant` or `ShuffleRdpAccountant`, so the
guarantee is certified), and for a continuous parameter it is at least
(1 - relative_tolerance) times the target, unless the parameter's range ends
first. Rounds are whole: the count returned meets the target and one more
round does not.

A ledger of many different rounds (a year of daily populations) is first
searched with its rounds grouped coarsely (`SEARCH_GROUPING`, sound but a
little looser, several times cheaper); the value found is then accounted,
corrected by one secant step and if need be searched again with the
accountant asked for, so the answer is certified by that accountant at the
stated tolerance.

>>> from shuffle_accountants.calibration import calibrate_local_epsilon
>>> calibrate_local_epsilon(num_users=10**6, rounds=1000, target_epsilon=1.0,
...                         target_delta=1e-6)
"""  # noqa: E501

import math
from typing import Any, Callable, Dict, Optional, Tuple, cast

import attr
from dp_accounting import dp_event
from dp_accounting import privacy_accountant
import numpy as np
from scipy import optimize

from shuffle_accountants import _search
from shuffle_accountants import _validation
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.core import _ledger
from shuffle_accountants.pld.accountant import ShufflePldAccountant

__all__ = [
    'MakeAccountant', 'MAX_LOCAL_EPSILON', 'NOISE_MULTIPLIER_RANGE',
    'MAX_ROUNDS', 'DEFAULT_RELATIVE_TOLERANCE', 'SEARCH_GROUPING',
    'UnreachableTargetError', 'certified_epsilon', 'calibrate_parameter',
    'calibrate_local_epsilon', 'calibrate_noise_multiplier', 'calibrate_rounds',
    'RELEASES', 'MAX_NUM_USERS', 'calibrate_num_users', 'release_event',
    'calibrate_num_trials', 'calibrate_discrete_sigma',
]

MakeAccountant = Callable[[], privacy_accountant.PrivacyAccountant]
# Documented ranges (docs/limits.md) searched by default.
MAX_LOCAL_EPSILON = 20.0
NOISE_MULTIPLIER_RANGE = (1e-3, 1e5)
MAX_ROUNDS = 10**9
MAX_NUM_USERS = 10**10
# What the server sees of a round: the shuffled reports or their sum.
RELEASES = ('shuffle', 'sum')
DEFAULT_RELATIVE_TOLERANCE = 0.01
# The search runs first with the accountant's rounds grouped this coarsely
# (GROUPING: each bin's most pessimistic round, sound, a few times fewer
# distinct rounds on ledgers of many populations); the value it finds is
# then certified, and refined, with the accountant asked for.
SEARCH_GROUPING = 0.1


class UnreachableTargetError(ValueError):
  """Even the most private end of the parameter's range exceeds the target."""


class _Met(Exception):
  """Stops the root search: a value within tolerance below the target."""


def certified_epsilon(event: dp_event.DpEvent, rounds: int,
                      target_delta: float,
                      make_fresh_accountant: MakeAccountant = (
                          ShufflePldAccountant)) -> float:
  """Certified epsilon of `rounds` compositions of `event` at `target_delta`."""
  accountant = make_fresh_accountant()
  if not isinstance(accountant, privacy_accountant.PrivacyAccountant):
    raise TypeError('make_fresh_accountant must return a dp_accounting '
                    'PrivacyAccountant (e.g. ShufflePldAccountant); got '
                    f'{type(accountant).__name__}.')
  if not isinstance(accountant.ledger, dp_event.NoOpDpEvent):
    raise ValueError('make_fresh_accountant must return an empty accountant; '
                     f'its ledger holds {accountant.ledger}.')
  accountant.compose(event, rounds)
  return float(accountant.get_epsilon(target_delta))


def _check_targets(target_epsilon, target_delta) -> Tuple[float, float]:
  target_epsilon = _validation.check_real('target_epsilon', target_epsilon,
                                          0.0, math.inf, min_inclusive=False)
  target_delta = _validation.check_real('target_delta', target_delta, 0.0,
                                        1.0, False, False)
  return target_epsilon, target_delta


def calibrate_parameter(make_event_from_param: Callable[[float],
                                                        dp_event.DpEvent],
                        target_epsilon: float, target_delta: float,
                        lower: float, upper: float, *,
                        more_private_at_lower: bool,
                        rounds: int = 1, discrete: bool = False,
                        make_fresh_accountant: MakeAccountant = (
                            ShufflePldAccountant),
                        relative_tolerance: float = (
                            DEFAULT_RELATIVE_TOLERANCE),
                        name: str = 'parameter') -> float:
  """The least private parameter in [lower, upper] meeting the target.

  Epsilon is assumed monotone in the parameter (as it is for eps0, noise
  and rounds): `more_private_at_lower` says which end is private. The
  search runs in log space when `lower` > 0 (parameters span decades).

  Args:
    make_event_from_param: builds one round's event from the parameter.
    target_epsilon: epsilon > 0 to meet.
    target_delta: delta in (0, 1) at which epsilon is certified.
    lower: smallest parameter value searched.
    upper: largest parameter value searched (> lower).
    more_private_at_lower: True when epsilon grows with the parameter.
    rounds: how many times the round is composed (>= 1).
    discrete: the parameter is a whole number; the exact optimum is found.
    make_fresh_accountant: returns an empty accountant (ShufflePldAccountant
      or ShuffleRdpAccountant, or any dp_accounting accountant).
    relative_tolerance: in (0, 0.5]: for a continuous parameter the search
      stops once epsilon is in [(1 - relative_tolerance) target, target].
    name: the parameter's name, for messages.

  Returns:
    The parameter value (an int when `discrete`), whose certified epsilon
    is at most `target_epsilon`; the private end of the range if nothing
    else meets it, the other end if everything does.

  Raises:
    UnreachableTargetError: (a ValueError) if even the private end exceeds
      the target.
    ValueError, TypeError: invalid arguments (named in the message).
  """
  if not callable(make_event_from_param):
    raise TypeError('make_event_from_param must be callable (parameter -> '
                    f'DpEvent); got {make_event_from_param!r}.')
  target_epsilon, target_delta = _check_targets(target_epsilon, target_delta)
  lower = _validation.check_real('lower', lower)
  upper = _validation.check_real('upper', upper, lower, min_inclusive=False)
  rounds = _validation.check_integer('rounds', rounds, 1)
  relative_tolerance = _validation.check_real(
      'relative_tolerance', relative_tolerance, 0.0, 0.5,
      min_inclusive=False)
  search = _Search(make_event_from_param, target_epsilon, target_delta,
                   lower, upper, more_private_at_lower, rounds, discrete,
                   relative_tolerance, name)
  return search.run(make_fresh_accountant)[0]


class _Search:
  """One calibration problem (arguments as in `calibrate_parameter`)."""

  def __init__(self, make_event, target_epsilon, target_delta, lower, upper,
               more_private_at_lower, rounds, discrete, relative_tolerance,
               name):
    self.make_event, self.target = make_event, target_epsilon
    self.target_delta, self.lower, self.upper = target_delta, lower, upper
    self.more_private_at_lower, self.rounds = more_private_at_lower, rounds
    self.discrete, self.tolerance, self.name = (discrete, relative_tolerance,
                                                name)
    self.private, self.open_end = ((lower, upper) if more_private_at_lower
                                   else (upper, lower))
    self.log_space = lower > 0

  def _coarse_guess(self, make_fresh_accountant: MakeAccountant
                    ) -> Optional[Tuple[float, Dict[float, float]]]:
    """(value, epsilons seen) of the search with the accountant's settings at
    SEARCH_GROUPING and a quarter of the tolerance; None when the ledger is
    one round (grouping cannot shrink it), the accountant has no finer
    grouping to coarsen, or nothing meets the target there."""
    if self.discrete or len(_ledger.leaves(self.make_event(self.private))) < 2:
      return None
    accountant = make_fresh_accountant()
    if not isinstance(accountant, _ledger.ShuffleAccountant):
      return None
    settings = dict(accountant.configuration())
    if not settings.get('relative_grouping',
                        SEARCH_GROUPING) < SEARCH_GROUPING:
      return None
    settings['relative_grouping'] = SEARCH_GROUPING
    coarse = _Search(self.make_event, self.target, self.target_delta,
                     self.lower, self.upper, self.more_private_at_lower,
                     self.rounds, False, self.tolerance / 4, self.name)
    try:
      return coarse.run(
          lambda: type(accountant).from_configuration(settings))
    except UnreachableTargetError:
      return None

  def _secant(self, coarse_seen: Dict[float, float], value: float,
              epsilon: float, aim: float) -> float:
    """Where epsilon would reach `aim` from (value, epsilon) with the slope
    of the coarse epsilons at their nearest other value (in log space when
    the search is); `value` when that slope says nothing."""
    scale = math.log if self.log_space else (lambda x: x)
    others = [v for v in coarse_seen if v != value]
    if not others or value not in coarse_seen:
      return value
    other = min(others, key=lambda v: abs(v - value))
    with np.errstate(all='ignore'):
      slope = ((coarse_seen[other] - coarse_seen[value])
               / (scale(other) - scale(value)))
      if not (slope > 0 if self.more_private_at_lower else slope < 0):
        return value
      step = scale(value) + (aim - epsilon) / slope
    moved = math.exp(step) if self.log_space else step
    return min(max(moved, self.lower), self.upper)

  def _bracket(self, seen: Dict[float, float]):
    """(least private value seen meeting the target or None, the most
    private one beyond it that fails or None)."""
    meets = [v for v, e in seen.items() if e <= self.target]
    pick = max if self.more_private_at_lower else min
    good = pick(meets) if meets else None
    beyond = [v for v, e in seen.items() if e > self.target and (
        good is None or (v > good) == self.more_private_at_lower)]
    other = min if self.more_private_at_lower else max
    return good, (other(beyond) if beyond else None)

  def run(self, make_fresh_accountant: MakeAccountant
          ) -> Tuple[float, Dict[float, float]]:
    """(the parameter value, every certified epsilon computed)."""
    target, private, open_end = self.target, self.private, self.open_end
    seen: Dict[float, float] = {}

    def epsilon_at(value: float) -> float:
      if self.discrete:
        value = (math.floor(value) if self.more_private_at_lower
                 else math.ceil(value))
      if value not in seen:
        seen[value] = certified_epsilon(self.make_event(value), self.rounds,
                                        self.target_delta,
                                        make_fresh_accountant)
      return seen[value]

    guess = self._coarse_guess(make_fresh_accountant)
    step = abs(open_end - private) / 16
    if guess is not None:
      # Certified with the accountant asked for: the coarse value, then one
      # secant step aimed inside the tolerance; the bracket search below
      # goes on from the nearest values seen.
      value, coarse_seen = guess
      epsilon = epsilon_at(value)
      if (1 - self.tolerance) * target <= epsilon <= target:
        return value, seen
      moved = self._secant(coarse_seen, value, epsilon,
                           (1 - self.tolerance / 2) * target)
      if (1 - self.tolerance) * target <= epsilon_at(moved) <= target:
        return moved, seen
      if moved != value:
        step = 2 * abs(moved - value)
    good, bad = self._bracket(seen)
    if good is None:
      if epsilon_at(private) > target:
        raise UnreachableTargetError(
            f'target_epsilon={target:g} is unreachable: even {self.name}='
            f'{private:g}, the most private end of its range '
            f'[{self.lower:g}, {self.upper:g}], certifies epsilon '
            f'{epsilon_at(private):.6g} at target_delta='
            f'{self.target_delta:g}.')
      good, bad = self._bracket(seen)
    # Steps toward the open end (x10 in log space, doubling otherwise), so
    # that the costly far end (tiny noise, 1e9 rounds) is evaluated only
    # when the target is that loose.
    toward = 1 if open_end > private else -1
    while bad is None:
      bad = (good * (10 if open_end > good else 0.1) if self.log_space
             else good + toward * step)
      bad = min(bad, open_end) if open_end > private else max(bad, open_end)
      if epsilon_at(bad) > target:
        break
      if bad == open_end:
        return open_end, seen
      good, bad, step = bad, None, 2 * step
    to_value = math.exp if self.log_space else (lambda u: u)
    ends = ([math.log(good), math.log(bad)] if self.log_space
            else [good, bad])

    def gap(u: float) -> float:
      # The bracket's ends exactly (exp(log x) may miss x by a rounding).
      value = {ends[0]: good, ends[1]: bad}.get(
          u, min(max(to_value(u), self.lower), self.upper))
      ratio = epsilon_at(value) / target
      if not self.discrete and 1 - self.tolerance <= ratio <= 1:
        raise _Met
      return ratio - 1

    try:
      optimize.brentq(gap, *ends, xtol=1e-12 if self.log_space else 1e-9,
                      rtol=1e-12, maxiter=100)
    except (_Met, RuntimeError):
      pass  # RuntimeError: not converged; the values seen still bracket
    best, worst = self._bracket(seen)
    if not self.discrete:
      return float(best), seen
    # Whole numbers: bisect to neighbours, the last meeting, the next failing.
    if worst is None:  # epsilon not monotone here: keep the best value seen
      return int(best), seen
    best, _ = _search.whole_bisected(
        lambda middle: epsilon_at(middle) <= target, best, worst)
    return int(best), seen


def _round_factory(make_event: Optional[Callable[[float], dp_event.DpEvent]],
                   num_users, build) -> Callable[[float], dp_event.DpEvent]:
  if (make_event is None) == (num_users is None):
    raise ValueError('give num_users (the default event) or make_event (any '
                     'event built from the parameter), exactly one; got '
                     f'num_users={num_users!r}, make_event={make_event!r}.')
  if make_event is not None:
    return make_event
  num_users = _validation.check_integer('num_users', num_users, 1)
  return lambda value: build(num_users, value)


def release_event(num_users: int, randomizer: Optional[randomizers.Randomizer],
                  release: str = 'shuffle',
                  local_epsilon: Optional[float] = None) -> dp_event.DpEvent:
  """One round of `num_users` reports of `randomizer` as the server sees it.

  release 'shuffle': `ShuffleEvent` (randomizer None: a generic
  `local_epsilon`-LDP randomizer); 'sum': `SumOfReportsEvent` (unary
  encodings or k-RR; the empty reference input under deletion).
  """
  if release not in RELEASES:
    raise ValueError(f'release must be one of {", ".join(RELEASES)}; got '
                     f'{release!r}.')
  if release == 'sum':
    if randomizer is None:
      raise ValueError("release='sum' needs a randomizer (a unary "
                       'encoding or k-RR); got None.')
    # The event's validator refuses any randomizer but its kinds.
    return events.SumOfReportsEvent(num_users, cast(Any, randomizer))
  return events.ShuffleEvent(num_users, local_epsilon, randomizer=randomizer)


def _check_relation(accountant: MakeAccountant, event: dp_event.DpEvent,
                    relation: privacy_accountant.NeighboringRelation) -> None:
  """Refuses at once a relation under which the release has no bound."""
  if not accountant().supports(event):
    kind = type(event).__name__
    raise ValueError(
        f'relation={relation} does not apply to this release ({kind}): '
        'its accountants certify it under '
        + ' or '.join(f'NeighboringRelation.{other.name}' for other
                      in privacy_accountant.NeighboringRelation
                      if ShufflePldAccountant(other).supports(event))
        + '.')


def _with_relation(make_fresh_accountant, relation) -> MakeAccountant:
  """An accountant factory under `relation` (ours get it passed)."""
  if make_fresh_accountant is None:
    return lambda: ShufflePldAccountant(relation)
  if isinstance(make_fresh_accountant, type) and issubclass(
      make_fresh_accountant, _ledger.ShuffleAccountant):
    # Both accountants take the relation by this keyword.
    kind: Any = make_fresh_accountant
    return lambda: kind(neighboring_relation=relation)

  def checked():
    accountant = make_fresh_accountant()
    used = getattr(accountant, 'neighboring_relation', None)
    if used is not relation:
      raise ValueError(f'make_fresh_accountant builds an accountant under '
                       f'{used}, but relation={relation}; make them equal.')
    return accountant
  return checked


def calibrate_num_users(
    target_epsilon: float, target_delta: float,
    randomizer: Optional[randomizers.Randomizer] = None, rounds: int = 1, *,
    release: str = 'shuffle',
    relation: privacy_accountant.NeighboringRelation = (
        privacy_accountant.NeighboringRelation.REPLACE_ONE),
    local_epsilon: Optional[float] = None,
    make_event: Optional[Callable[[int], dp_event.DpEvent]] = None,
    make_fresh_accountant: Optional[MakeAccountant] = None,
    max_num_users: int = MAX_NUM_USERS) -> int:
  """The smallest batch n in [1, max_num_users] meeting the target.

  BATCH-MONOTONE: the release of n users is a post-processing of that of
  n' < n (the n - n' other users' reports, independent and of known
  values, are added to the sum or to the shuffle), in every relation here,
  so the true epsilon never grows with n, and every batch of at least the
  returned n meets the target (its certified epsilon bounds theirs). The
  certificate itself is searched (ceil in log space, then bisection) and
  both ends are certified: n meets the target and n - 1 does not.

  Args:
    target_epsilon: epsilon > 0 to meet after all rounds.
    target_delta: delta in (0, 1).
    randomizer: every user's randomizer (None: a generic `local_epsilon`-
      LDP randomizer, shuffle release only).
    rounds: how many rounds are composed (>= 1).
    release: 'shuffle' (`ShuffleEvent`) or 'sum' (`SumOfReportsEvent`).
    relation: the accountant's `NeighboringRelation`: REPLACE_ONE, or
      REPLACE_SPECIAL (deletion; the sum's reference the empty input).
    local_epsilon: eps0 of the generic randomizer (randomizer None).
    make_event: instead, any round built from n (then randomizer, release
      and local_epsilon are not used).
    make_fresh_accountant: `ShufflePldAccountant` (default) or
      `ShuffleRdpAccountant` (given the relation), or any callable returning
      an empty accountant under `relation`.
    max_num_users: the largest batch searched (>= 2).

  Returns:
    n whose certified epsilon is at most the target, n - 1 certifying more
    (or 1, if one user meets it).

  Raises:
    UnreachableTargetError: (a ValueError) naming the target and the
      smallest epsilon certified in the range (at max_num_users).
  """
  max_num_users = _validation.check_integer('max_num_users', max_num_users,
                                            2, MAX_NUM_USERS)
  if not isinstance(relation, privacy_accountant.NeighboringRelation):
    raise TypeError(f'relation must be a NeighboringRelation; got '
                    f'{relation!r}.')
  if make_event is None:
    release_event(1, randomizer, release, local_epsilon)  # validates
    make = lambda n: release_event(int(n), randomizer, release, local_epsilon)
  elif callable(make_event):
    make = lambda n: make_event(int(n))
  else:
    raise TypeError(f'make_event must be callable (n -> DpEvent); got '
                    f'{make_event!r}.')
  target_epsilon, target_delta = _check_targets(target_epsilon, target_delta)
  rounds = _validation.check_integer('rounds', rounds, 1)
  accountant = _with_relation(make_fresh_accountant, relation)
  if make_event is None:
    _check_relation(accountant, make(1), relation)
  seen: Dict[int, float] = {}

  def epsilon_at(num_users: int) -> float:
    if num_users not in seen:
      seen[num_users] = certified_epsilon(make(num_users), rounds,
                                          target_delta, accountant)
    return seen[num_users]

  return _smallest_batch(epsilon_at, target_epsilon, target_delta,
                         max_num_users)


# The first batch tried, and the factor of the steps to a bracket.
_FIRST_BATCH = 1024
_BATCH_STEP = 8


def _smallest_batch(epsilon_at: Callable[[int], float], target: float,
                    target_delta: float, max_num_users: int) -> int:
  """The n in [1, max_num_users] with epsilon_at(n) <= target <
  epsilon_at(n - 1), found from a bracket by Illinois steps on log epsilon
  against log n (epsilon falls about as a power of n) with bisection as the
  fallback; large batches, the costly ones, are tried only when needed."""
  meets = lambda n: epsilon_at(n) <= target
  good, bad = None, None
  start = min(_FIRST_BATCH, max_num_users)
  if meets(start):
    good = start
    while good > 1 and bad is None:
      smaller = max(1, good // _BATCH_STEP)
      if meets(smaller):
        good = smaller
      else:
        bad = smaller
    if bad is None:
      return 1
  else:
    bad = start
    while good is None:
      if bad == max_num_users:
        raise UnreachableTargetError(
            f'target_epsilon={target:g} is unreachable: even num_users='
            f'{max_num_users} (max_num_users) certifies epsilon '
            f'{epsilon_at(max_num_users):.6g} at target_delta='
            f'{target_delta:g}, the smallest epsilon in [1, '
            f'{max_num_users}] (it falls with n, BATCH-MONOTONE).')
      larger = min(max_num_users, bad * _BATCH_STEP)
      if meets(larger):
        good = larger
      else:
        bad = larger
  weights = [1.0, 1.0]  # Illinois: the retained end's gap is halved
  kept, slow = None, 0
  while good - bad > 1:
    gaps = [math.log(epsilon_at(n) / target) if 0 < epsilon_at(n) < math.inf
            else math.nan for n in (bad, good)]
    ends = (math.log(bad), math.log(good))
    middle = (bad + good) // 2
    guess = middle
    if all(math.isfinite(g) for g in gaps) and gaps[0] > gaps[1]:
      low, high = gaps[0] * weights[0], gaps[1] * weights[1]
      guess = round(math.exp(ends[0] + low * (ends[1] - ends[0])
                             / (low - high)))
    guess = min(max(guess, bad + 1), good - 1)
    width = good - bad
    if meets(guess):
      good, moved = guess, 'good'
    else:
      bad, moved = guess, 'bad'
    weights = ([0.5 * weights[0], 1.0] if moved == kept == 'good' else
               [1.0, 0.5 * weights[1]] if moved == kept == 'bad' else
               [1.0, 1.0])
    kept = moved
    slow = slow + 1 if good - bad > width / 2 else 0
    if slow >= 2 and good - bad > 1:
      # Two slow steps: bisect once, so the bracket keeps shrinking.
      slow = 0
      middle = (bad + good) // 2
      if meets(middle):
        good = middle
      else:
        bad = middle
  return good


def calibrate_local_epsilon(
    target_epsilon: float, target_delta: float,
    num_users: Optional[int] = None, rounds: int = 1, *,
    make_event: Optional[Callable[[float], dp_event.DpEvent]] = None,
    make_fresh_accountant: MakeAccountant = ShufflePldAccountant,
    max_local_epsilon: float = MAX_LOCAL_EPSILON,
    relative_tolerance: float = DEFAULT_RELATIVE_TOLERANCE,
    release: str = 'shuffle',
    randomizer: Optional[randomizers.Randomizer] = None,
    relation: Optional[privacy_accountant.NeighboringRelation] = None
    ) -> float:
  """The largest eps0 in [0, max_local_epsilon] meeting the target.

  Args:
    target_epsilon: epsilon > 0 to meet after all rounds.
    target_delta: delta in (0, 1).
    num_users: n for the default round, `release_event(num_users,
      randomizer with eps0, release)`: `ShuffleEvent(num_users, eps0)` when
      randomizer is None.
    rounds: how many rounds are composed (>= 1).
    make_event: instead of num_users, any round built from eps0, e.g.
      `lambda eps0: CheckInEvent(10**5, 0.01, local_epsilon=eps0)`.
    make_fresh_accountant: `ShufflePldAccountant` (default, tightest) or
      `ShuffleRdpAccountant`.
    max_local_epsilon: largest eps0 searched, in (0, 700].
    relative_tolerance: see `calibrate_parameter`.
    release: of the default round: 'shuffle' or 'sum' (`SumOfReportsEvent`,
      which needs `randomizer`).
    randomizer: of the default round, a catalogue randomizer whose
      local_epsilon is the value searched (e.g.
      `SymmetricUnaryEncoding(16, 1.0)`: basic RAPPOR over 16 values).
    relation: the accountant's relation (None: the accountant's default);
      REPLACE_SPECIAL is deletion.

  Returns:
    eps0 whose certified epsilon is in [(1 - relative_tolerance) target,
    target] (or max_local_epsilon, if even that meets the target).
  """
  if randomizer is not None and not isinstance(randomizer,
                                               randomizers.Randomizer):
    raise TypeError(f'randomizer must be a catalogue randomizer (e.g. '
                    f'SymmetricUnaryEncoding(16, 1.0)); got {randomizer!r}.')
  if randomizer is not None and 'local_epsilon' not in attr.fields_dict(
      cast(Any, type(randomizer))):
    raise ValueError(f'randomizer={randomizer!r} has no local_epsilon '
                     'parameter to search (its eps0 follows from its other '
                     'parameters); give a randomizer with one, e.g. '
                     'SymmetricUnaryEncoding(16, 1.0).')
  release_event(1, randomizer, release, 1.0)  # validates
  if relation is not None:
    make_fresh_accountant = _with_relation(make_fresh_accountant, relation)
  make = _round_factory(make_event, num_users, lambda n, eps0: release_event(
      n, None if randomizer is None else attr.evolve(
          cast(Any, randomizer), local_epsilon=eps0), release, eps0))
  if relation is not None and make_event is None:
    _check_relation(make_fresh_accountant, make(1.0), relation)
  maximum = _validation.check_real('max_local_epsilon', max_local_epsilon,
                                   0.0, _validation.MAX_LOCAL_EPSILON,
                                   min_inclusive=False)
  return calibrate_parameter(
      make, target_epsilon, target_delta, 0.0, maximum,
      more_private_at_lower=True, rounds=rounds,
      make_fresh_accountant=make_fresh_accountant,
      relative_tolerance=relative_tolerance, name='local_epsilon')


def calibrate_noise_multiplier(
    target_epsilon: float, target_delta: float,
    num_users: Optional[int] = None, rounds: int = 1, *,
    checkin_rate: float = 1.0,
    make_event: Optional[Callable[[float], dp_event.DpEvent]] = None,
    make_fresh_accountant: MakeAccountant = ShufflePldAccountant,
    noise_multiplier_range: Tuple[float, float] = NOISE_MULTIPLIER_RANGE,
    relative_tolerance: float = DEFAULT_RELATIVE_TOLERANCE) -> float:
  """The smallest sigma in `noise_multiplier_range` meeting the target.

  Args:
    target_epsilon: epsilon > 0 to meet after all rounds.
    target_delta: delta in (0, 1).
    num_users: n for the default round, `CheckInEvent(num_users,
      checkin_rate, noise_multiplier=sigma)` (local Gaussian noise).
    rounds: how many rounds are composed (>= 1).
    checkin_rate: gamma in (0, 1] of the default round.
    make_event: instead of num_users, any round built from sigma, e.g.
      `lambda sigma: SubsampledShuffleGaussianEvent(60_000, 60, sigma)`.
    make_fresh_accountant: `ShufflePldAccountant` or `ShuffleRdpAccountant`.
    noise_multiplier_range: (smallest, largest) sigma searched, > 0.
    relative_tolerance: see `calibrate_parameter`.

  Returns:
    sigma whose certified epsilon is in [(1 - relative_tolerance) target,
    target] (or the smallest sigma searched, if even that meets the target).
  """
  _validation.check_real('checkin_rate', checkin_rate, 0.0, 1.0,
                         min_inclusive=False)
  make = _round_factory(make_event, num_users, lambda n, sigma: (
      events.CheckInEvent(n, checkin_rate, noise_multiplier=sigma)))
  try:
    smallest, largest = noise_multiplier_range
  except (TypeError, ValueError):
    raise TypeError('noise_multiplier_range must be a pair (smallest, '
                    f'largest); got {noise_multiplier_range!r}.') from None
  smallest = _validation.check_real('noise_multiplier_range[0]', smallest,
                                    0.0, min_inclusive=False)
  return calibrate_parameter(
      make, target_epsilon, target_delta, smallest, largest,
      more_private_at_lower=False, rounds=rounds,
      make_fresh_accountant=make_fresh_accountant,
      relative_tolerance=relative_tolerance, name='noise_multiplier')


def calibrate_rounds(
    event: dp_event.DpEvent, target_epsilon: float, target_delta: float, *,
    make_fresh_accountant: MakeAccountant = ShufflePldAccountant,
    max_rounds: int = MAX_ROUNDS) -> int:
  """The most rounds of `event`, up to `max_rounds`, meeting the target.

  Returns:
    T such that T rounds certify epsilon <= target_epsilon and T + 1 rounds
    do not (or max_rounds, if that many meet the target).

  Raises:
    UnreachableTargetError: if even one round exceeds the target.
  """
  if not isinstance(event, dp_event.DpEvent):
    raise TypeError(f'event must be a dp_accounting DpEvent (e.g. '
                    f'ShuffleEvent); got {event!r}.')
  max_rounds = _validation.check_integer('max_rounds', max_rounds, 2)
  return int(calibrate_parameter(
      lambda count: dp_event.SelfComposedDpEvent(event, int(count)),
      target_epsilon, target_delta, 1, max_rounds,
      more_private_at_lower=True, discrete=True,
      make_fresh_accountant=make_fresh_accountant, name='rounds'))


def calibrate_num_trials(
    target_epsilon: float, target_delta: float, sensitivity: int = 1,
    rounds: int = 1, *,
    make_fresh_accountant: MakeAccountant = ShufflePldAccountant) -> int:
  """The fewest coin flips N whose `BinomialSecureSumEvent` meets the target.

  `rounds` compositions (a d-coordinate sum with independent noise per
  coordinate is d rounds; T releases of it, T d).

  More flips are post-processing (BINOMIAL-SUM (iv): Bin(N + 1, 1/2) =
  Bin(N, 1/2) + Bern(1/2), an independent coin added to the release), so
  the true epsilon falls with N and every N' >= the N returned meets the
  target too. The N returned is itself certified (its epsilon, by the
  accountant, is at most the target) and N - 1 is not certified.

  Raises:
    UnreachableTargetError: if even 10^10 flips exceed the target.
  """
  sensitivity = _validation.check_integer('sensitivity', sensitivity, 1,
                                          events.MAX_NOISE_SENSITIVITY)
  return int(calibrate_parameter(
      lambda trials: events.BinomialSecureSumEvent(int(trials), sensitivity),
      target_epsilon, target_delta, 1, events.MAX_NUM_TRIALS,
      more_private_at_lower=False, rounds=rounds, discrete=True,
      make_fresh_accountant=make_fresh_accountant, name='num_trials'))


def calibrate_discrete_sigma(
    target_epsilon: float, target_delta: float, sensitivity: int = 1,
    num_aggregators: int = 1, trust: str = 'one-honest', rounds: int = 1, *,
    make_fresh_accountant: MakeAccountant = ShufflePldAccountant,
    relative_tolerance: float = DEFAULT_RELATIVE_TOLERANCE) -> float:
  """The smallest sigma whose `DiscreteGaussianSumEvent` meets the target.

  Larger sigma is more private (DISCRETE-GAUSSIAN-SUM: the search assumes
  it; the sigma returned is certified whatever the shape). `rounds` as in
  `calibrate_num_trials`.
  """
  def make_event(sigma: float) -> events.DiscreteGaussianSumEvent:
    return events.DiscreteGaussianSumEvent(sigma, sensitivity,
                                           num_aggregators, trust)
  make_event(1.0)  # checks the other fields at once
  return calibrate_parameter(
      make_event, target_epsilon, target_delta, events.MIN_DISCRETE_SIGMA,
      events.MAX_DISCRETE_SIGMA, more_private_at_lower=False, rounds=rounds,
      make_fresh_accountant=make_fresh_accountant,
      relative_tolerance=relative_tolerance, name='sigma')
