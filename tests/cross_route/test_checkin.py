"""Shuffled check-in and shuffled Gaussian (Liew et al.; MATH.md 2.4, 6.5)."""

import math

import dp_accounting
from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np
import pytest
from scipy import integrate
from scipy import optimize
from scipy import stats

import brute_force
from shuffle_accountants import CheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants import SubsampledShuffleGaussianEvent
from shuffle_accountants.pld import checkin as checkin_pld
from shuffle_accountants.pld import discrete
from shuffle_accountants.rdp import checkin as checkin_rdp
from shuffle_accountants.rdp import shuffle_round

NeighboringRelation = privacy_accountant.NeighboringRelation
EPSILONS = [0.0, 0.1, 0.3, 0.6, 1.0]
ORDERS = [1.5, 2.0, 3.0, 5.0, 8.0]


def _pld(event, count=1, **options):
  accountant = ShufflePldAccountant(**options)
  accountant.compose(event, count)
  return accountant


def _rdp(event, count=1, orders=None):
  accountant = ShuffleRdpAccountant(orders)
  accountant.compose(event, count)
  return accountant


# ---------------------------------------------------------------- brute force

@pytest.mark.parametrize('num_users', [2, 4])
@pytest.mark.parametrize('checkin_rate', [0.3, 0.8])
@pytest.mark.parametrize('local_epsilon', [0.5, 2.0])
def test_pld_dominates_every_binary_rr_pair(num_users, checkin_rate,
                                            local_epsilon):
  worst = np.zeros(len(EPSILONS))
  for law_p, law_q in brute_force.checkin_binary_rr_pairs(
      num_users, checkin_rate, local_epsilon):
    worst = np.maximum(worst, [brute_force.hockey_stick(law_p, law_q, e)
                               for e in EPSILONS])
  accountant = _pld(CheckInEvent(num_users, checkin_rate,
                                 local_epsilon=local_epsilon))
  reported = np.array([accountant.get_delta(e) for e in EPSILONS])
  assert np.all(reported >= worst - 1e-12)


@pytest.mark.parametrize('num_users', [2, 4, 5])
@pytest.mark.parametrize('checkin_rate', [0.2, 0.9])
@pytest.mark.parametrize('local_epsilon', [0.5, 2.0])
def test_rdp_dominates_every_binary_rr_pair(num_users, checkin_rate,
                                            local_epsilon):
  worst = np.zeros(len(ORDERS))
  for law_p, law_q in brute_force.checkin_binary_rr_pairs(
      num_users, checkin_rate, local_epsilon):
    p, q = brute_force.aligned(law_p, law_q)
    worst = np.maximum(worst, [brute_force.renyi(p, q, o) for o in ORDERS])
  bound = checkin_rdp.checkin_rdp_upper_bound(num_users, checkin_rate, ORDERS,
                                       local_epsilon=local_epsilon)
  assert np.all(bound.rdp >= worst * (1 - 1e-9))


@pytest.mark.parametrize('checkin_rate,local_epsilon',
                         [(0.1, 1.0), (0.5, 0.5), (0.5, 3.0), (0.9, 2.0)])
def test_all_equal_pair_n8_exact_lower_bound_and_accountant(checkin_rate,
                                                            local_epsilon):
  n = 8
  data = (0,) * n
  law_d = brute_force.checkin_binary_rr_law(data, checkin_rate, local_epsilon)
  law_d_prime = brute_force.checkin_binary_rr_law((1,) + data[1:],
                                                  checkin_rate, local_epsilon)
  exact = np.array([max(brute_force.hockey_stick(law_d_prime, law_d, e),
                        brute_force.hockey_stick(law_d, law_d_prime, e))
                    for e in EPSILONS])
  lower = checkin_pld.binary_rr_checkin_delta_lower_bound(
      n, checkin_rate, local_epsilon, EPSILONS)
  np.testing.assert_allclose(lower, exact, rtol=1e-9, atol=1e-15)
  accountant = _pld(CheckInEvent(n, checkin_rate, local_epsilon=local_epsilon))
  # The enumeration's own rounding: at eps = eps0 the exact delta is 0 (the
  # round is eps0-DP) but the sum leaves ~1e-25.
  assert all(accountant.get_delta(e) >= d - 1e-20
             for e, d in zip(EPSILONS, exact))


def test_lower_bound_is_below_the_accountant_at_scale():
  event = CheckInEvent(10**4, 0.05, local_epsilon=1.0)
  accountant = _pld(event)
  epsilons = [0.005, 0.01, 0.02]
  lower = checkin_pld.binary_rr_checkin_delta_lower_bound(
      10**4, 0.05, 1.0, epsilons)
  upper = [accountant.get_delta(e) for e in epsilons]
  assert np.all(lower <= upper)
  assert lower[0] > 0.05 * upper[0]  # clone pair vs binary RR: a known gap


def test_subsampled_gaussian_profile_matches_numerical_integration():
  """The analytic profile of both subsampled orders, against quadrature."""
  sigma, ratio = 1.5, 0.2
  mu = 2 / sigma
  p = stats.norm(mu, 1).pdf
  q = stats.norm(0, 1).pdf
  m = lambda x: ratio * p(x) + (1 - ratio) * q(x)
  for epsilon in [-0.3, 0.0, 0.1, 0.5, 1.5]:
    a = math.exp(epsilon)
    forward = integrate.quad(lambda x: max(m(x) - a * q(x), 0.0), -30, 30,
                             points=[0, mu], limit=200)[0]
    backward = integrate.quad(lambda x: max(q(x) - a * m(x), 0.0), -30, 30,
                              points=[0, mu], limit=200)[0]
    analytic = checkin_pld.subsampled_profile(
        lambda e: checkin_pld.gaussian_profile(mu, e), ratio,
        np.array([epsilon]))[0]
    assert analytic >= max(forward, backward) - 1e-12
    assert analytic == pytest.approx(max(forward, backward), rel=1e-6,
                                     abs=1e-12)


# -------------------------------------------------- reductions and conformance

@pytest.mark.parametrize('num_users,local_epsilon', [(50, 1.0), (10**4, 2.0)])
def test_full_checkin_is_a_shuffle_round(num_users, local_epsilon):
  checkin = CheckInEvent(num_users, 1.0, local_epsilon=local_epsilon)
  shuffle = ShuffleEvent(num_users, local_epsilon)
  assert _pld(checkin, 10).get_epsilon(1e-6) == pytest.approx(
      _pld(shuffle, 10).get_epsilon(1e-6), rel=2e-3)


@pytest.mark.parametrize('num_users,local_epsilon', [(6, 1.0), (8, 3.0)])
def test_full_checkin_rdp_is_above_the_shuffled_krr_truth(num_users,
                                                          local_epsilon):
  # Both brute-force laws (check-in at rate 1, and the plain shuffle of
  # 3-RR) are the same mechanism; its exact worst-pair RDP is a lower bound
  # on the worst case over eps0-LDP randomizers, which the RDP route
  # certifies for the check-in event (its code path at rate 1 is the
  # shuffle round's, so comparing the two events could not fail).
  matrix = brute_force.krr_matrix(3, local_epsilon)
  truth, _, _ = brute_force.worst_case(num_users, matrix, ORDERS, [],
                                       checkin_rate=1.0)
  np.testing.assert_allclose(truth, brute_force.worst_case_shuffled_krr_rdp(
      num_users, 3, local_epsilon, ORDERS), rtol=1e-9)
  checkin = CheckInEvent(num_users, 1.0, local_epsilon=local_epsilon)
  certified = _rdp(checkin, orders=ORDERS)._rdp
  assert np.all(certified >= truth)
  # The shuffle bound answered, not the pure-DP cap, at these n.
  assert np.all(certified < local_epsilon)


@pytest.mark.parametrize('sigma', [0.8, 2.0])
def test_full_gaussian_checkin_is_the_gaussian_mechanism(sigma):
  """gamma = 1: the Gaussian mechanism, replace-one sensitivity 2.

  GAUSS-NO-GAIN.
  """
  event = CheckInEvent(1000, 1.0, noise_multiplier=sigma)
  parent = privacy_accountant.NeighboringRelation.REPLACE_ONE
  # dp_accounting's PLD takes replace-one sensitivity 2 for GaussianDpEvent.
  reference = dp_accounting.pld.PLDAccountant(parent, 1e-4)
  reference.compose(dp_event.GaussianDpEvent(sigma), 5)
  ours = _pld(event, 5).get_epsilon(1e-6)
  assert ours >= reference.get_epsilon(1e-6) * (1 - 1e-3)
  assert ours == pytest.approx(reference.get_epsilon(1e-6), rel=5e-3)
  # Its RDP accountant takes sensitivity 1: sigma / 2 is the same mechanism.
  rdp_reference = rdp_privacy_accountant.RdpAccountant(
      list(ShuffleRdpAccountant()._orders), parent)
  rdp_reference.compose(dp_event.GaussianDpEvent(sigma / 2), 5)
  np.testing.assert_allclose(_rdp(event, 5)._rdp, rdp_reference._rdp,
                             rtol=1e-9)


def test_checkin_composes_with_dp_accounting_events():
  accountant = ShufflePldAccountant()
  accountant.compose(CheckInEvent(10**4, 0.01, local_epsilon=1.0), 50)
  accountant.compose(dp_event.GaussianDpEvent(20.0), 10)
  accountant.compose(SubsampledShuffleGaussianEvent(10**4, 100, 4.0), 10)
  combined = accountant.get_epsilon(1e-6)
  alone = _pld(CheckInEvent(10**4, 0.01, local_epsilon=1.0), 50)
  assert combined > alone.get_epsilon(1e-6)
  assert [c.event for c in accountant.contributions] == [
      CheckInEvent(10**4, 0.01, local_epsilon=1.0),
      SubsampledShuffleGaussianEvent(10**4, 100, 4.0)]


def test_vanishing_checkin_rate_gives_vanishing_epsilon():
  tiny = CheckInEvent(1000, 1e-7, local_epsilon=2.0)
  assert _pld(tiny, 10).get_epsilon(1e-6) < 1e-4
  assert _rdp(tiny, 10).get_epsilon(1e-6) < _rdp(
      CheckInEvent(1000, 1e-2, local_epsilon=2.0), 10).get_epsilon(1e-6)
  gaussian = CheckInEvent(1000, 1e-7, noise_multiplier=1.0)
  assert _pld(gaussian, 10).get_epsilon(1e-6) < 1e-3


def test_checkin_beats_no_subsampling_but_is_not_pure_amplified():
  n, gamma, eps0 = 10**4, 0.01, 1.0
  checkin = _pld(CheckInEvent(n, gamma, local_epsilon=eps0), 100)
  shuffled = _pld(ShuffleEvent(int(n * gamma), eps0), 100)
  assert checkin.get_epsilon(1e-6) < shuffled.get_epsilon(1e-6)
  # k = n reveals that the differing user took part: with n = 1 the round
  # is not log(1 + gamma (e^eps0 - 1))-DP (exact delta there: 0.00457).
  single = _pld(CheckInEvent(1, gamma, local_epsilon=eps0))
  exact = gamma * (math.exp(eps0) - 1 - gamma * math.expm1(eps0)) / (
      math.exp(eps0) + 1)
  assert single.get_delta(math.log1p(gamma * math.expm1(eps0))) >= exact


# ---------------------------------------------------------------- properties

@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(st.integers(2, 2000), st.floats(0.001, 1.0), st.floats(0.3, 3.0),
       st.floats(1.05, 2.0))
def test_pld_epsilon_decreases_with_noise(num_users, checkin_rate, sigma,
                                          factor):
  noisy = _pld(CheckInEvent(num_users, checkin_rate,
                            noise_multiplier=sigma * factor), 10,
               value_discretization_interval=1e-3)
  plain = _pld(CheckInEvent(num_users, checkin_rate, noise_multiplier=sigma),
               10, value_discretization_interval=1e-3)
  assert noisy.get_epsilon(1e-5) <= plain.get_epsilon(1e-5) + 1e-9


@settings(max_examples=10, deadline=None)
@given(st.integers(2, 300), st.floats(0.01, 0.99), st.floats(0.1, 4.0),
       st.floats(1.05, 2.0))
def test_rdp_increases_with_local_epsilon(num_users, checkin_rate, eps0,
                                          factor):
  low = checkin_rdp.checkin_rdp_upper_bound(num_users, checkin_rate, ORDERS,
                                     local_epsilon=eps0)
  high = checkin_rdp.checkin_rdp_upper_bound(num_users, checkin_rate, ORDERS,
                                      local_epsilon=eps0 * factor)
  assert np.all(high.rdp >= low.rdp * (1 - 1e-3))


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 10**6), st.integers(1, 10**6), st.floats(0.3, 5.0))
def test_subsampled_gaussian_rdp_monotone_in_sample_size(num_users, size,
                                                         sigma):
  size = min(size, num_users)
  larger = min(num_users, 2 * size)
  small = checkin_rdp.subsampled_shuffle_gaussian_rdp_upper_bound(
      num_users, size, sigma, ORDERS)
  big = checkin_rdp.subsampled_shuffle_gaussian_rdp_upper_bound(
      num_users, larger, sigma, ORDERS)
  assert np.all(small.rdp <= big.rdp * (1 + 1e-9))
  assert np.all(big.rdp <= checkin_rdp.gaussian_rdp(sigma, ORDERS))


# ----------------------------------------------------- eq. (8), heuristics

@pytest.mark.parametrize('num_users,order,noise_ratio,expected', [
    (3, 4, 1.0, 1.0557656), (5, 6, 0.8, 3.0800795), (10, 8, 2.0, 0.11381291),
    (1000, 12, 1.0, 0.010413843), (10**4, 32, 1.0, 6.7896596),
    (10**5, 64, 2.0, 9.088952e-5), (10**6, 64, 0.86, 29.451120)])
def test_eq8_matches_math_md_4_7(num_users, order, noise_ratio, expected):
  value = checkin_rdp.liew_eq8_rdp(num_users, noise_ratio, [order])[0]
  assert value == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize('num_users,order,noise_ratio',
                         [(2, 2, 1.0), (3, 4, 1.0), (4, 5, 0.7), (2, 7, 1.5),
                          (5, 3, 0.9)])
def test_eq8_matches_direct_enumeration(num_users, order, noise_ratio):
  direct = brute_force.shuffled_gaussian_eq8_by_compositions(
      num_users, noise_ratio, order)
  assert checkin_rdp.liew_eq8_rdp(num_users, noise_ratio, [order])[0] == (
      pytest.approx(direct, rel=1e-10))


def test_eq8_is_fast_and_below_the_upper_bound():
  orders = np.arange(2, 257)
  lower = checkin_rdp.shuffled_gaussian_rdp_lower_bound(10**6, 0.86, orders)
  upper = checkin_rdp.checkin_rdp_upper_bound(10**6, 1.0, orders,
                                       noise_multiplier=0.86).rdp
  assert np.all(lower <= upper)
  assert np.all(np.diff(lower) >= -1e-9)  # RDP grows with the order


def test_thm5_heuristic_is_never_composed():
  orders = [2.0, 8.0, 32.0]
  heuristic = checkin_rdp.liew_thm5_heuristic_rdp(10**4, 100, 1.0, orders)
  bound = checkin_rdp.subsampled_shuffle_gaussian_rdp_upper_bound(
      10**4, 100, 1.0, orders).rdp
  assert np.all(heuristic < bound)  # so composing it would show, everywhere
  accountant = _rdp(SubsampledShuffleGaussianEvent(10**4, 100, 1.0), 100,
                    orders)
  assert np.all(accountant._rdp > 100 * heuristic)


# ----------------------------------------------- LIEW-LEMMA1 (MATH.md 4.9)

def _lemma1(epsilon, delta, order):
  """Liew et al.'s Lemma 1, false (APPROX-LDP-NO-RDP): for the test only."""
  def objective(r):
    return (r**order * (r - delta)**(1 - order)
            + (1 - r)**order * (math.exp(epsilon) - r + delta)**(1 - order))
  best = optimize.minimize_scalar(objective, bounds=(delta + 1e-12, 1 - 1e-12),
                                  method='bounded',
                                  options=dict(xatol=1e-12))
  return epsilon + math.log(best.fun) / (order - 1)


def test_lemma1_counterexample_values():
  assert _lemma1(0.0, 0.1, 2) == pytest.approx(0.0392207, rel=1e-4)
  assert _lemma1(0.5, 0.287649, 2) == pytest.approx(0.731110, rel=1e-4)
  assert _lemma1(0.5, 0.287649, 4) == pytest.approx(0.839185, rel=1e-4)


def test_library_never_reports_lemma1_values_as_upper_bounds():
  # One user, binary RR with eps1 = 1: the true RDP is 0.735326 at order 2
  # and 0.895883 at order 4; Lemma 1 would claim 0.731110 and 0.839185.
  true_values = [0.735326, 0.895883]
  shuffle = shuffle_round.shuffle_rdp_upper_bound(1, 1.0, [2, 4]).rdp
  checkin = checkin_rdp.checkin_rdp_upper_bound(1, 1.0, [2, 4],
                                         local_epsilon=1.0).rdp
  for bound in (shuffle, checkin):
    assert np.all(bound >= np.array(true_values) * (1 - 1e-6))
  # No (eps, delta) statement is ever converted to RDP.
  with pytest.raises(dp_accounting.UnsupportedEventError,
                     match='APPROX-LDP-NO-RDP'):
    ShuffleRdpAccountant().compose(ShuffleEvent(100, 1.0, local_delta=1e-6))


# --------------------------------------------------------------------- errors

@pytest.mark.parametrize('kwargs,words', [
    (dict(num_users=10, checkin_rate=0.0, local_epsilon=1.0),
     ['checkin_rate', '0.0', '(0.0, 1.0]']),
    (dict(num_users=10, checkin_rate=1.5, local_epsilon=1.0),
     ['checkin_rate', '1.5']),
    (dict(num_users=10, checkin_rate=0.5), ['exactly one', 'local_epsilon']),
    (dict(num_users=10, checkin_rate=0.5, local_epsilon=1.0,
          noise_multiplier=1.0), ['exactly one']),
    (dict(num_users=10, checkin_rate=0.5, noise_multiplier=0.0),
     ['noise_multiplier', '0.0']),
    (dict(num_users=10, checkin_rate=0.5, noise_multiplier=-1.0),
     ['noise_multiplier', '-1.0']),
    (dict(num_users=10, checkin_rate=0.5, noise_multiplier=1.0,
          num_categories=3), ['num_categories', 'noise_multiplier']),
    (dict(num_users=0, checkin_rate=0.5, local_epsilon=1.0), ['num_users']),
])
def test_checkin_event_errors(kwargs, words):
  with pytest.raises(ValueError) as error:
    CheckInEvent(**kwargs)
  for word in words:
    assert word in str(error.value)


@pytest.mark.parametrize('args,words', [
    ((10, 11, 1.0), ['sample_size', '11', '[1, 10]']),
    ((10, 0, 1.0), ['sample_size', '0']),
    ((10, 5, 0.0), ['noise_multiplier', '0.0']),
])
def test_subsampled_gaussian_event_errors(args, words):
  with pytest.raises(ValueError) as error:
    SubsampledShuffleGaussianEvent(*args)
  for word in words:
    assert word in str(error.value)


def test_events_round_trip():
  for event in (CheckInEvent(100, 0.1, noise_multiplier=1.0),
                CheckInEvent(100, 0.1, local_epsilon=1.0, num_categories=4),
                SubsampledShuffleGaussianEvent(100, 10, 2.0)):
    assert dp_accounting.DpEvent.from_named_tuple(
        event.to_named_tuple()) == event


@pytest.mark.parametrize('accountant_type',
                         [ShufflePldAccountant, ShuffleRdpAccountant])
def test_accountants_refuse_unsupported_set_ups(accountant_type):
  event = CheckInEvent(100, 0.1, local_epsilon=1.0)
  add_remove = accountant_type(
      neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE)
  with pytest.raises(dp_accounting.UnsupportedEventError,
                     match='REPLACE_ONE'):
    add_remove.compose(event)
  with pytest.raises(dp_accounting.UnsupportedEventError,
                     match='POISSON-UNSOUND'):
    accountant_type().compose(dp_event.PoissonSampledDpEvent(0.5, event))
  with pytest.raises(dp_accounting.UnsupportedEventError,
                     match='already include'):
    accountant_type().compose(
        dp_event.SampledWithoutReplacementDpEvent(1000, 100, event))


def test_tiny_gaussian_noise_gives_a_finite_pmf():
  # Losses above 709 once overflowed e^eps and turned the profile NaN.
  pmf = checkin_pld.checkin_pmf(60000, 0.01, 0.1, discrete.connect_the_dots,
                                noise_multiplier=0.05)
  assert np.all(np.isfinite(pmf.probs)) and np.isfinite(pmf.infinity_mass)
  assert abs(pmf.probs.sum() + pmf.infinity_mass - 1) < 1e-6


@pytest.mark.parametrize('model', [dict(local_epsilon=1.0),
                                   dict(noise_multiplier=1.0)])
def test_a_rate_whose_window_is_no_check_in_gets_a_bound(model):
  # At gamma = 1e-25 the Chernoff window of the check-in count is {0}: the
  # per-label checks once raised 'num_users ... got 0' for this valid input.
  orders = [2.0, 3.0, 8.0]
  tiny = checkin_rdp.checkin_rdp_upper_bound(10, 1e-25, orders, **model).rdp
  larger = checkin_rdp.checkin_rdp_upper_bound(10, 1e-3, orders, **model).rdp
  assert np.all(np.isfinite(tiny)) and np.all(tiny >= 0)
  assert np.all(tiny <= larger)
