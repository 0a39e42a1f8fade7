"""The proven FFT round-off bound (pld/roundoff.py, pld/radix2.py,
docs/mathematics.md ROUNDOFF-CERTIFIED), against transforms and compositions
computed directly in extended precision (np.longdouble, sums of non-negative
products: relative error ~1e-19 per operation) and exactly (fractions)."""

import fractions
import itertools
import math

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting.pld import pld_privacy_accountant
import hypothesis
from hypothesis import strategies as st
import numpy as np
import pytest

from shuffle_accountants import events
from shuffle_accountants.pld import accountant as pld_accountant
from shuffle_accountants.pld import composition
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld import radix2
from shuffle_accountants.pld import roundoff


def _binary_power(values, count, convolve, one):
  """count-fold convolution of `values` by squaring."""
  result, power = one, values
  while count:
    if count & 1:
      result = convolve(result, power)
    count >>= 1
    if count:
      power = convolve(power, power)
  return result


def _exact_power(values, count):
  """count-fold convolution in long double (direct sums)."""
  return _binary_power(values.astype(np.longdouble), count, np.convolve,
                       np.ones(1, np.longdouble))


def _adversarial_pmf(rng, size):
  """A PMF whose masses span 1 down to 1e-280 (the tails delta reads)."""
  probs = 10.0 ** -rng.uniform(0, 280, size)
  probs[rng.integers(size)] = 1.0
  return probs / probs.sum()


@pytest.mark.parametrize('seed', range(6))
def test_fft_error_bounds_exceed_the_true_error(seed):
  rng = np.random.default_rng(seed)
  first = _adversarial_pmf(rng, int(rng.integers(2, 40)))
  second = rng.random(int(rng.integers(2, 300))) ** 8
  count = int(rng.integers(2, 300))
  computed, length = roundoff._fft_power(first, count, 1 << 30)
  error = np.linalg.norm(computed - _exact_power(first, count)
                         .astype(np.float64))
  assert 0 < error <= roundoff.fft_power_error(first, count, length)
  computed, length = roundoff._fft_convolve(first, second, 1 << 30)
  exact = np.convolve(first.astype(np.longdouble), second.astype(np.longdouble))
  error = np.linalg.norm(computed - exact.astype(np.float64))
  assert error <= roundoff.fft_convolution_error(first, second, length)


def test_fft_constant_is_higham_theorem_24_2():
  """eta = mu + gamma_4 (sqrt 2 + mu), no allowance on top (abs=0: pytest's
  default absolute tolerance would accept any constant this small)."""
  u = 2.0**-53
  mu = radix2.twiddle_error()
  assert 4.8 * u < mu < 4.9 * u
  eta = mu + 4 * u / (1 - 4 * u) * (math.sqrt(2) + mu)
  assert roundoff.fft_relative_error(2**20) == pytest.approx(
      20 * eta / (1 - 20 * eta), rel=1e-12, abs=0)
  with pytest.raises(ValueError, match='power of two'):
    roundoff.fft_relative_error(3 * 2**10)


def _long_double_dft(real, imag, inverse=False):
  """Direct DFT in long double (twiddles to ~1e-19, sums of n terms)."""
  n = real.size
  angle = 2 * np.longdouble(np.pi) * (np.outer(np.arange(n), np.arange(n))
                                      % n).astype(np.longdouble) / n
  sign = 1 if inverse else -1
  c, s = np.cos(angle), sign * np.sin(angle)
  x, y = real.astype(np.longdouble), imag.astype(np.longdouble)
  out_real, out_imag = c @ x - s @ y, s @ x + c @ y
  if inverse:
    out_real, out_imag = out_real / n, out_imag / n
  return out_real, out_imag


def test_twiddles_are_within_mu():
  mu = radix2.twiddle_error()
  for length in [2, 8, 2**10, 2**13]:
    real, imag = radix2._twiddles(length)
    angle = 2 * np.longdouble(np.pi) * np.arange(length // 2) / length
    error = np.hypot(real - np.cos(angle), imag + np.sin(angle))
    assert np.max(error) <= mu - 1e-18
    if length >= 8:  # (length 2: w = 1, exact)
      assert np.max(error) > 0.1 * 2.0**-53  # the reference sees rounding


@pytest.mark.parametrize('length', [1, 2, 4, 8, 64, 512])
@pytest.mark.parametrize('inverse', [False, True])
def test_radix2_transform_within_higham_bound(length, inverse):
  rng = np.random.default_rng(length + inverse)
  real = rng.normal(size=length) * 10.0 ** rng.uniform(-30, 0, length)
  imag = rng.normal(size=length)
  got_real, got_imag = radix2.transform(real, imag, inverse)
  want_real, want_imag = _long_double_dft(real, imag, inverse)
  error = math.sqrt(float(np.sum((got_real - want_real)**2
                                 + (got_imag - want_imag)**2)))
  norm = math.sqrt(float(np.sum(want_real**2 + want_imag**2)))
  assert error <= (roundoff.fft_relative_error(length) * norm
                   if length > 1 else 0.0)
  if length >= 8:
    assert error > 0  # compared with a reference that sees the round-off


def _exact_composition(rounds):
  """(lowest index, long-double finite masses) of a `roundoff.Rounds`."""
  total, lower = np.ones(1, np.longdouble), 0
  for first, probs, _, count in rounds.rounds:
    total = np.convolve(total, _exact_power(probs, count))
    lower += count * first
  return lower, total


def _ledger(seed):
  rng = np.random.default_rng(seed)
  rounds = []
  for _ in range(int(rng.integers(1, 4))):
    size = int(rng.integers(2, 30))
    probs = _adversarial_pmf(rng, size) * (1 - 1e-6)
    rounds.append((int(rng.integers(-size, 2)), probs, 1e-6,
                   int(rng.integers(1, 40))))
  return roundoff.Rounds(float(rng.uniform(0.01, 0.5)), rounds)


@pytest.mark.parametrize('seed', range(8))
@pytest.mark.parametrize('window', [None, 64, 16])
def test_certified_masses_bound_the_exact_composition(seed, window,
                                                      monkeypatch):
  """Entry by entry, at every tilt, on full and on wrapped-around windows."""
  if window is not None:  # force the cyclic window and the Chernoff tail
    monkeypatch.setattr(roundoff, 'MAX_CERTIFIED_BUCKETS', window)
  rounds = _ledger(seed)
  lowest, exact = _exact_composition(rounds)
  d = rounds.discretization
  top = (lowest + exact.size - 1) * d
  for epsilon in np.linspace(0.0, top, 5):
    tilt = rounds.saddle_point(epsilon)
    first, length = rounds.window(tilt, epsilon)
    lower, masses, infinity = rounds.certified_masses(tilt, first, length)
    assert lower == first and masses.size == length
    index = np.arange(first, first + length) - lowest
    inside = (index >= 0) & (index < exact.size)
    truth = np.zeros(length, np.longdouble)
    truth[inside] = exact[index[inside]]
    assert np.all(masses >= truth.astype(np.float64) * (1 - 1e-15))
    above = np.sum(exact[max(0, first + length - lowest):])
    finite = np.prod([(1 - np.longdouble(1e-6)) ** c
                      for *_, c in rounds.rounds])
    assert infinity >= float((1 - finite) + above) * (1 - 1e-15)


@pytest.mark.parametrize('num_users,rounds_count', [(20, 30), (300, 200)])
def test_accountant_stays_above_the_exact_composition(num_users,
                                                      rounds_count):
  accountant = pld_accountant.ShufflePldAccountant(
      value_discretization_interval=0.02)
  accountant.compose(events.ShuffleEvent(num_users=num_users,
                                         local_epsilon=2.0), rounds_count)
  profile = composition.DirectProfile(accountant._composition().pld)
  assert profile.certified
  rounds = accountant._composition().pld.rounds
  lowest, exact = _exact_composition(rounds)
  losses = (lowest + np.arange(exact.size)).astype(np.longdouble) * 0.02
  infinity = rounds.infinity_mass()

  def exact_delta(epsilon):
    terms = exact * -np.expm1(np.longdouble(epsilon) - losses)
    return float(np.sum(terms[losses > epsilon])) + infinity * (1 - 1e-12)

  for delta in [1e-3, 1e-8, 1e-12, 1e-15]:
    epsilon = accountant.get_epsilon(delta)
    assert exact_delta(epsilon) <= delta
    assert accountant.get_delta(epsilon) <= delta * (1 + 1e-9)
  for epsilon in np.linspace(0, float(losses[-1]), 9):
    # The certificate bounds the exact composition of the PLD's rounds; the
    # accountant may answer lower where its RDP route certifies less.
    assert profile.delta(epsilon) >= exact_delta(epsilon) * (1 - 1e-12)
    assert accountant.get_delta(epsilon) <= profile.delta(epsilon)


def _fraction_convolve(first, second):
  out = [fractions.Fraction(0)] * (len(first) + len(second) - 1)
  for i, a in enumerate(first):
    if a:
      for j, b in enumerate(second):
        out[i + j] += a * b
  return out


def _check_against_fractions(rounds):
  """Every certified mass >= the exact rational composition's, entrywise.

  Fails if the error bound is subtracted instead of added, or if masses
  that underflow are not rounded up to a subnormal (both seen once)."""
  exact, lowest = [fractions.Fraction(1)], 0
  for first, probs, _, count in rounds.rounds:
    exact = _fraction_convolve(exact, _binary_power(
        [fractions.Fraction(float(p)) for p in probs], count,
        _fraction_convolve, [fractions.Fraction(1)]))
    lowest += count * first
  d = rounds.discretization
  top = (lowest + len(exact) - 1) * d
  for epsilon in np.linspace(0.0, top, 4):
    tilt = rounds.saddle_point(epsilon)
    first, length = rounds.window(tilt, epsilon)
    lower, masses, _ = rounds.certified_masses(tilt, first, length)
    for offset, mass in enumerate(masses):
      index = lower + offset - lowest
      if 0 <= index < len(exact):
        assert fractions.Fraction(float(mass)) >= exact[index], (
            epsilon, index, float(exact[index]), mass)


def _spanning_pmf(rng, size):
  """Masses from 1 down to 1e-300 (exact binary fractions: the reference
  convolves the very floats the library reads)."""
  probs = 10.0 ** -rng.uniform(0, 300, size)
  probs[rng.integers(size)] = 1.0
  return probs / probs.sum()


@pytest.mark.parametrize('seed', range(6))
def test_certified_masses_bound_exact_rationals(seed):
  rng = np.random.default_rng(100 + seed)
  rounds = roundoff.Rounds(float(rng.uniform(0.05, 0.5)), [
      (int(rng.integers(-3, 2)), _spanning_pmf(rng, int(rng.integers(2, 7))),
       0.0, int(rng.integers(1, 9)))
      for _ in range(int(rng.integers(1, 4)))])
  _check_against_fractions(rounds)


@hypothesis.settings(max_examples=25, deadline=None)
@hypothesis.given(
    probs=st.lists(st.floats(1e-300, 1.0), min_size=2, max_size=6),
    count=st.integers(1, 12), lower=st.integers(-4, 2),
    discretization=st.floats(0.01, 1.0))
def test_certified_masses_bound_exact_rationals_property(
    probs, count, lower, discretization):
  probs = np.array(probs) / np.sum(probs)
  second = probs[::-1].copy()
  _check_against_fractions(roundoff.Rounds(discretization, [
      (lower, probs, 0.0, count), (0, second, 0.0, 1)]))


def _certified(accountant) -> bool:
  return composition.DirectProfile(accountant._composition().pld).certified


def test_dp_accounting_gaussian_and_randomized_response_are_certified():
  """Built without FFT, they enter the certified composition.

  ROUNDOFF-CERTIFIED.
  """
  accountant = pld_accountant.ShufflePldAccountant()
  accountant.compose(events.ShuffleEvent(num_users=10**4, local_epsilon=1.0),
                     50)
  accountant.compose(dp_event.GaussianDpEvent(4.0), 20)
  accountant.compose(dp_event.RandomizedResponseDpEvent(0.5, 3), 5)
  assert _certified(accountant)

@pytest.mark.parametrize('event', [
    dp_event.LaplaceDpEvent(2.0), dp_event.DiscreteLaplaceDpEvent(0.5, 2),
    dp_event.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0], [0.5, 0.5]),
    dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)),
    dp_event.PoissonSampledDpEvent(0.1, dp_event.LaplaceDpEvent(1.0)),
    dp_event.TruncatedSubsampledGaussianDpEvent(10**4, 0.01, 150, 1.0)])
def test_dp_accounting_events_are_certified(event):
  """Built without the parent's FFT self-composition (ROUNDOFF-CERTIFIED);
  asymmetric ones as two halves. Their delta is the parent's, never below
  it."""
  relation = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE
  accountant = pld_accountant.ShufflePldAccountant(
      relation, value_discretization_interval=1e-4)
  accountant.compose(dp_event.GaussianDpEvent(4.0), 5)
  accountant.compose(event, 30)
  assert _certified(accountant)
  parent = pld_privacy_accountant.PLDAccountant(
      relation, value_discretization_interval=1e-4)
  parent.compose(dp_event.GaussianDpEvent(4.0), 5).compose(event, 30)
  for epsilon in (0.0, 0.5, 2.0):
    ours, theirs = accountant.get_delta(epsilon), parent.get_delta(epsilon)
    assert theirs * (1 - 1e-8) - 1e-14 <= ours <= theirs * (1 + 1e-6) + 1e-12


def test_two_sided_ledger_takes_the_worse_half():
  """A ledger with an asymmetric round is certified half by half and
  answers the larger delta (the add half's at some epsilons, the remove
  half's at others)."""
  interval = 0.5
  remove = composition.to_privacy_loss_distribution(
      discrete.GridPmf(interval, 0, np.array([0.8, 0.2]), 0.0))
  add = composition.to_privacy_loss_distribution(
      discrete.GridPmf(interval, -1, np.array([0.7, 0.0, 0.0, 0.3]), 0.0))
  both = composition.to_privacy_loss_distribution(
      discrete.GridPmf(interval, 0, np.array([0.5, 0.5]), 0.0))
  ledger = composition.compose_all([(composition.TwoSidedPld(remove, add), 3),
                                    (both, 2)])
  profile = composition.DirectProfile(ledger)
  assert profile.certified

  def exact(half, epsilon):
    atoms = [half] * 3 + [{0: 0.5, 1: 0.5}] * 2
    total = 0.0
    for draw in itertools.product(*[list(a.items()) for a in atoms]):
      loss = sum(index for index, _ in draw) * interval
      mass = math.prod(probability for _, probability in draw)
      total += mass * max(0.0, 1 - math.exp(epsilon - loss))
    return total

  add_worse = []
  for epsilon in (0.1, 1.0, 2.5, 4.0):
    removed, added = (exact({0: 0.8, 1: 0.2}, epsilon),
                      exact({-1: 0.7, 2: 0.3}, epsilon))
    add_worse.append(added > removed)
    truth = max(removed, added)
    assert truth <= profile.delta(epsilon) <= truth * (1 + 1e-6) + 1e-12
  assert any(add_worse) and not all(add_worse)


@pytest.mark.parametrize('count', [1, 3, 20])
def test_discrete_laplace_against_its_exact_loss_law(count):
  """DLap(a) noise on a count of sensitivity 2 (P(x) = tanh(a/2) e^{-a|x|}):
  the loss a(|x - 2| - |x|) is 2a at x <= 0, 0 at x = 1, -2a at x >= 2, with
  masses 1/(1 + e^-a), tanh(a/2) e^-a, e^-2a/(1 + e^-a); `count` rounds
  compose as a trinomial law."""
  a = 0.5
  top, middle = 1 / (1 + math.exp(-a)), math.tanh(a / 2) * math.exp(-a)
  bottom = 1 - top - middle
  accountant = pld_accountant.ShufflePldAccountant(
      privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE,
      value_discretization_interval=1e-3)
  accountant.compose(dp_event.DiscreteLaplaceDpEvent(a, 2), count)
  assert _certified(accountant)
  for epsilon in [0.0, 0.5, 1.0, 0.9 * count]:
    exact = sum(
        math.comb(count, i) * math.comb(count - i, j) * top**i * middle**j
        * bottom**(count - i - j)
        * max(0.0, 1 - math.exp(epsilon - 2 * a * (2 * i + j - count)))
        for i in range(count + 1) for j in range(count - i + 1))
    delta = accountant.get_delta(epsilon)
    assert exact <= delta <= exact + 1e-2


@pytest.mark.parametrize('count', [1, 10])
def test_randomized_response_composes_count_times(count):
  """k-RR with noise 1/2 over 2 buckets: P-masses 3/4 at loss log 3, 1/4 at
  -log 3; `count` rounds: Bin(count, 3/4) of them at +log 3. (dp_accounting
  0.6's PLD accountant composes it once whatever the count.)"""
  accountant = pld_accountant.ShufflePldAccountant(
      value_discretization_interval=1e-3)
  accountant.compose(dp_event.RandomizedResponseDpEvent(0.5, 2), count)
  assert composition.DirectProfile(accountant._composition().pld).certified
  step = math.log(3)
  for epsilon in [0.0, 0.5, 2.0, 5.0, 9.0]:
    exact = sum(math.comb(count, j) * 0.75**j * 0.25**(count - j)
                * max(0.0, 1 - math.exp(epsilon - (2 * j - count) * step))
                for j in range(count + 1))
    delta = accountant.get_delta(epsilon)
    assert exact <= delta <= exact + 1e-3


def test_pure_ledger_has_a_finite_epsilon_at_delta_zero():
  """Finitely supported rounds without mass at +infinity: delta is 0 from
  the largest loss on (3 rounds of 2-RR with noise 1/2: 3 log 3, rounded up
  to the grid), not merely below the certificate's tail allowance."""
  accountant = pld_accountant.ShufflePldAccountant(
      value_discretization_interval=1e-3)
  accountant.compose(dp_event.RandomizedResponseDpEvent(0.5, 2), 3)
  assert _certified(accountant)
  epsilon = accountant.get_epsilon(0.0)
  assert 3 * math.log(3) <= epsilon <= 3 * math.log(3) + 3e-3 + 1e-9
  assert accountant.get_delta(epsilon) == 0.0
  assert accountant.get_delta(epsilon - 2e-3) > 0.0


def test_kept_powers_extended_to_more_levels_are_the_computed_ones():
  """A count past a power of two extends the kept squarings: bit for bit
  the powers computed afresh, so the same certified masses."""
  values = np.random.default_rng(2).random(300)
  roundoff._POWERS.clear()
  fresh = roundoff._fft_power(values, 7, 4096)[0]
  roundoff._POWERS.clear()
  roundoff._fft_power(values, 3, 4096)  # two levels kept
  extended = roundoff._fft_power(values, 7, 4096)[0]
  assert extended.tobytes() == fresh.tobytes()
  assert len(roundoff._kept_powers(values, 4096, 3)) == 3
