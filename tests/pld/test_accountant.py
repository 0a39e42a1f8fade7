"""ShufflePldAccountant against brute force, MATH.md values and
dp_accounting."""

import math

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import pld_privacy_accountant
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np
import pytest

import brute_force
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.pairs import clone_pairs
from shuffle_accountants.pairs import fmt21
from shuffle_accountants.pairs import privacy_loss
from shuffle_accountants.pld import composition
from shuffle_accountants.pld import discrete

NeighboringRelation = privacy_accountant.NeighboringRelation
KHH_FIG4_DELTAS = [1e-4, 10**-4.75, 10**-5.5, 10**-6.25, 1e-7]


def _epsilon(event, delta, count=1, **options):
  accountant = ShufflePldAccountant(**options)
  accountant.compose(event, count)
  return accountant.get_epsilon(delta)


def _atoms_delta(atoms, epsilon):
  return atoms.infinity_mass + float(np.sum(
      atoms.masses * np.maximum(0.0, -np.expm1(epsilon - atoms.losses))))


# --- brute force -------------------------------------------------------------

@pytest.mark.parametrize('num_users,num_categories,local_epsilon', [
    (2, 2, 1.0), (4, 2, 2.0), (6, 2, 0.5), (3, 3, 1.5), (5, 3, 1.0),
    (4, 3, 3.0)])
@pytest.mark.parametrize('adversary', ['shuffled_output', 'weak', 'strong'])
def test_delta_is_at_least_worst_case_shuffled_krr(
    num_users, num_categories, local_epsilon, adversary):
  epsilons = [0.0, 0.05, 0.2, 0.5, 1.0]
  truth = brute_force.worst_case_shuffled_krr_delta(
      num_users, num_categories, local_epsilon, epsilons)
  for event in (ShuffleEvent(num_users, local_epsilon),
                ShuffleEvent(num_users, local_epsilon, num_categories)):
    accountant = ShufflePldAccountant(krr_adversary=adversary)
    accountant.compose(event)
    bound = [accountant.get_delta(e) for e in epsilons]
    assert np.all(np.array(bound) >= truth - 1e-12), (event, bound, truth)


@pytest.mark.parametrize('num_users,local_epsilon', [
    (10, 1.0), (100, 2.0), (1000, 1.0), (2000, 3.0), (5000, 0.5)])
def test_clone_pair_exact_hockey_stick_brackets_the_accountant(
    num_users, local_epsilon):
  delta = 1e-6
  clone_delta = brute_force.clone_pair_profile(num_users, local_epsilon)
  bound = _epsilon(ShuffleEvent(num_users, local_epsilon), delta)
  # Sound for the clone pair, hence for binary RR; within 1 % of the pair.
  assert clone_delta(bound) <= delta * (1 + 1e-9)
  assert brute_force.binary_rr_all_equal_delta(num_users, local_epsilon,
                                               bound) <= delta
  assert clone_delta(bound / 1.01) > delta


@pytest.mark.parametrize('num_users,num_categories,local_epsilon', [
    (5, 2, 1.0), (5, 3, 1.2), (6, 4, np.log(13))])
def test_krr_pairs_match_direct_enumeration(num_users, num_categories,
                                            local_epsilon):
  pairs = {
      'weak': (brute_force.krr_weak_pair, clone_pairs.krr_weak_pld_atoms),
      'strong': (brute_force.krr_strong_pair, clone_pairs.krr_strong_pld_atoms)}
  for reference, library in pairs.values():
    law_p, law_q = reference(num_users, num_categories, local_epsilon)
    assert math.isclose(sum(law_p.values()), 1.0, rel_tol=1e-12)
    atoms = library(num_users, local_epsilon, num_categories)
    for epsilon in (0.0, 0.1, 0.4, 1.0):
      exact = brute_force.hockey_stick(law_p, law_q, epsilon)
      assert _atoms_delta(atoms, epsilon) == pytest.approx(exact, abs=1e-12)


def test_weak_adversary_between_shuffled_output_and_strong():
  event = ShuffleEvent(1000, np.log(13), 4)
  values = [_epsilon(event, 1e-5, krr_adversary=adversary)
            for adversary in ('shuffled_output', 'weak', 'strong')]
  # Up to the certified round-off allowance (ROUNDOFF-CERTIFIED), ~1e-16
  # relative here.
  assert values[0] <= values[1] * (1 + 1e-12) <= values[2] * (1 + 2e-12)


# --- MATH.md section 4 -------------------------------------------------------

@pytest.mark.parametrize('num_users,local_epsilon,exact', [
    (10**5, 4.0, 0.169770), (10**4, 1.0, 0.053005)])
def test_fmt21_exact_values_section_4_2(num_users, local_epsilon, exact):
  bound = _epsilon(ShuffleEvent(num_users, local_epsilon), 1e-6)
  assert exact * (1 - 1e-5) <= bound <= exact * 1.003
  # Inside the official numerical bracket and below the closed form.
  if num_users == 10**5:
    assert 0.1675385583317841 <= bound <= 0.172790550755978
    assert fmt21.closed_form_epsilon(num_users, local_epsilon,
                                     1e-6) == pytest.approx(0.5378040242374512)


def test_fmt21_pair_delta_section_4_3():
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(10**4, 4.0))
  assert 0.021372 * (1 - 1e-4) <= accountant.get_delta(0.1) <= 0.021372 * 1.01


@pytest.mark.parametrize('adversary,exact,tolerance', [
    ('strong', [0.53076, 0.62638, 0.71472, 0.79783, 0.87733], 1.002),
    ('weak', [0.38906, 0.45693, 0.51854, 0.57550, 0.62889], 1.01)])
def test_krr_adversaries_section_4_5(adversary, exact, tolerance):
  accountant = ShufflePldAccountant(krr_adversary=adversary)
  accountant.compose(ShuffleEvent(1000, np.log(13), 4))
  for delta, value in zip(KHH_FIG4_DELTAS, exact):
    assert value - 1e-5 <= accountant.get_epsilon(delta) <= value * tolerance


def test_subsampled_pair_section_4_6():
  # The published value is for the FMT23 clone probability (comparison only,
  # MATH.md FMT23-UNPROVEN); the accountant uses FMT21 and must be above it.
  atoms = clone_pairs.clone_pair_pld_atoms(
      1000, 3.0, clone_probability=2 / (math.exp(3.0) + 1))
  orders = [discrete.connect_the_dots(order, 1e-6)
            for order in privacy_loss.subsampled_orders(atoms, 0.01)]
  epsilons = [composition.to_privacy_loss_distribution(o).get_epsilon_for_delta(
      1e-5) for o in orders]
  assert epsilons[0] == pytest.approx(0.0052792, abs=2e-7)
  assert epsilons[1] == pytest.approx(0.0032790, abs=2e-7)
  both = composition.to_privacy_loss_distribution(
      discrete.largest_profile(orders)).get_epsilon_for_delta(1e-5)
  assert both == pytest.approx(0.0052792, abs=2e-7)
  event = dp_event.SampledWithoutReplacementDpEvent(
      10**5, 1000, ShuffleEvent(1000, 3.0))
  assert _epsilon(event, 1e-5) >= 0.0052792


def test_subsampled_first_order_matches_bbg18_identity():
  # For eps >= 0: H_{e^eps}(g P + (1-g) Q || Q) = g H_{e^eps''}(P || Q),
  # e^eps'' = 1 + (e^eps - 1) / g (MATH.md KHH-SUBSAMPLED).
  atoms = clone_pairs.clone_pair_pld_atoms(200, 2.0)
  ratio = 0.05
  first, _ = privacy_loss.subsampled_orders(atoms, ratio)
  for epsilon in (0.0, 0.01, 0.05, 0.2):
    inner = math.log1p(math.expm1(epsilon) / ratio)
    assert _atoms_delta(first, epsilon) == pytest.approx(
        ratio * _atoms_delta(atoms, inner), rel=1e-9, abs=1e-15)


# --- discretization ----------------------------------------------------------

def test_exact_split_equals_dp_accounting_connect_the_dots():
  atoms = clone_pairs.clone_pair_pld_atoms(50, 1.5)
  d = 1e-2
  ours = discrete.connect_the_dots(atoms, d)
  grid = np.arange(ours.lower_index, ours.upper_index + 1)
  deltas = [_atoms_delta(atoms, i * d) for i in grid]
  theirs = pld_pmf.create_pmf_pessimistic_connect_dots(d, grid, deltas)
  dense = theirs.to_dense_pmf()
  start = dense._lower_loss - ours.lower_index
  np.testing.assert_allclose(
      ours.probs[start:start + dense._probs.size],
      dense._probs, atol=1e-9)


def test_profile_never_below_the_pair_between_grid_points():
  atoms = clone_pairs.clone_pair_pld_atoms(300, 2.0)
  pmf = discrete.connect_the_dots(atoms, 0.05)
  pld = composition.to_privacy_loss_distribution(pmf)
  for epsilon in np.linspace(-2.0, 2.0, 81):
    assert pld.get_delta_for_epsilon(epsilon) >= _atoms_delta(atoms,
                                                              epsilon) - 1e-15


def test_coarse_grid_is_looser_never_unsound():
  event = ShuffleEvent(10**4, 1.0)
  values = [_epsilon(event, 1e-6, 100, value_discretization_interval=d)
            for d in (1e-2, 1e-3, 1e-4)]
  assert values[0] >= values[1] >= values[2] * (1 - 1e-9)


# --- composition -------------------------------------------------------------

def test_composition_with_parent_events_equals_separate_plds():
  shuffle = ShuffleEvent(1000, 1.0)
  gaussian = dp_event.GaussianDpEvent(5.0)
  together = ShufflePldAccountant(value_discretization_interval=1e-3)
  together.compose(dp_event.ComposedDpEvent([shuffle, gaussian]))
  parent = pld_privacy_accountant.PLDAccountant(
      NeighboringRelation.REPLACE_ONE, 1e-3)
  parent.compose(gaussian)
  alone = ShufflePldAccountant(value_discretization_interval=1e-3)
  alone.compose(shuffle)
  alone_pld = alone._composition().pld
  expected = alone_pld.compose(parent._pld).get_epsilon_for_delta(1e-6)
  assert together.get_epsilon(1e-6) == pytest.approx(expected, rel=1e-9)
  assert together.get_epsilon(1e-6) > parent.get_epsilon(1e-6)


def test_self_composition_matches_repeated_composition():
  event = ShuffleEvent(500, 1.0)
  once = ShufflePldAccountant(value_discretization_interval=1e-3)
  once.compose(dp_event.SelfComposedDpEvent(event, 20))
  repeated = ShufflePldAccountant(value_discretization_interval=1e-3)
  for _ in range(20):
    repeated.compose(event)
  assert once.get_epsilon(1e-6) == pytest.approx(repeated.get_epsilon(1e-6),
                                                 rel=1e-6)
  assert [c.count for c in once.contributions] == [20]
  assert once.contributions[0].pairs == ('FMT21-CLONES',)


def test_automatic_grid_recomputes_after_new_events():
  accountant = ShufflePldAccountant()
  accountant.compose(ShuffleEvent(10**4, 1.0), 10)
  first = accountant.get_epsilon(1e-6)
  accountant.compose(ShuffleEvent(10**4, 1.0), 10)
  assert accountant.get_epsilon(1e-6) > first
  assert accountant.get_epsilon(1e-6) == pytest.approx(
      _epsilon(ShuffleEvent(10**4, 1.0), 1e-6, 20), rel=1e-3)


# --- approximate LDP ---------------------------------------------------------

def test_approximate_ldp_falls_back_to_the_local_guarantee():
  # n = 100, eps0 = 2: FMT-EQ10-11's condition fails for every delta1.
  assert fmt21.approximate_ldp_guarantee(100, 2.0, 1e-8, 1e-6) is None
  bound = _epsilon(ShuffleEvent(100, 2.0, local_delta=1e-8), 1e-6)
  assert 2.0 * 0.99 <= bound <= 2.0 * 1.01


def test_approximate_ldp_amplifies_when_the_condition_holds():
  event = ShuffleEvent(10**6, 1.0, local_delta=1e-13)
  guarantee = fmt21.approximate_ldp_guarantee(10**6, 1.0, 1e-13, 1e-7)
  bound = _epsilon(event, 2 * guarantee[1])
  assert bound <= guarantee[0] * 1.01
  # Never better than the same randomizer with delta0 = 0 can be shown to be.
  assert bound >= _epsilon(ShuffleEvent(10**6, 1.0), 2 * guarantee[1])


# --- errors ------------------------------------------------------------------

@pytest.mark.parametrize('event,match', [
    (dp_event.PoissonSampledDpEvent(0.1, ShuffleEvent(100, 1.0)),
     'POISSON-UNSOUND'),
    (ShuffleEvent(100, 1.0, num_categories=3, local_delta=1e-6),
     'pure LDP'),
    (dp_event.SampledWithoutReplacementDpEvent(1000, 10,
                                               ShuffleEvent(20, 1.0)),
     'must be equal'),
])
def test_unsupported_events_are_explained(event, match):
  accountant = ShufflePldAccountant()
  assert not accountant.supports(event)
  with pytest.raises(privacy_accountant.UnsupportedEventError, match=match):
    accountant.compose(event)


def test_add_remove_relation_is_refused_for_shuffle_events_only():
  accountant = ShufflePldAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE)
  with pytest.raises(privacy_accountant.UnsupportedEventError,
                     match='REPLACE_ONE'):
    accountant.compose(ShuffleEvent(100, 1.0))
  accountant.compose(dp_event.GaussianDpEvent(1.0))
  assert accountant.get_epsilon(1e-6) > 0


@pytest.mark.parametrize('options,match', [
    (dict(krr_adversary='server'), 'krr_adversary'),
    (dict(value_discretization_interval=0.0), 'value_discretization_interval'),
    (dict(relative_accuracy=0.5), 'relative_accuracy'),
    (dict(relative_width=-1.0), 'relative_width')])
def test_bad_options_raise_value_errors(options, match):
  with pytest.raises(ValueError, match=match):
    ShufflePldAccountant(**options)


@pytest.mark.parametrize('accountant_type', [ShufflePldAccountant,
                                             ShuffleRdpAccountant])
@pytest.mark.parametrize('relation', ['REPLACE_ONE', 'bogus', 1, None])
def test_a_relation_that_is_not_a_member_is_refused_at_once(accountant_type,
                                                            relation):
  # The parent stores anything and fails at the first event, on `.name`.
  with pytest.raises(TypeError, match=r"neighboring_relation must be one of "
                     r"NeighboringRelation\.ADD_OR_REMOVE_ONE.*got"):
    accountant_type(neighboring_relation=relation)


# --- properties --------------------------------------------------------------

@settings(max_examples=8, deadline=None)
@given(num_users=st.integers(2, 10**6), local_epsilon=st.floats(0.05, 6.0),
       rounds=st.integers(1, 100))
def test_monotone_in_users_local_epsilon_and_rounds(num_users, local_epsilon,
                                                    rounds):
  d = 1e-3
  base = _epsilon(ShuffleEvent(num_users, local_epsilon), 1e-6, rounds,
                  value_discretization_interval=d)
  # Basic composition, up to the pessimistic grid: an atom at loss eps0 that
  # is not on the grid is split onto the next grid point.
  assert base <= rounds * (local_epsilon + d) * (1 + 1e-6)
  more_users = _epsilon(ShuffleEvent(num_users * 2, local_epsilon), 1e-6,
                        rounds, value_discretization_interval=d)
  larger_local = _epsilon(ShuffleEvent(num_users, local_epsilon * 1.5), 1e-6,
                          rounds, value_discretization_interval=d)
  more_rounds = _epsilon(ShuffleEvent(num_users, local_epsilon), 1e-6,
                         rounds + 5, value_discretization_interval=d)
  slack = 2 * d
  assert more_users <= base + slack
  assert larger_local >= base - slack
  assert more_rounds >= base - slack


def _subsampled_gaussian_delta(rate: float, sigma: float, epsilon: float):
  """Exact delta(eps) of one Poisson-subsampled Gaussian, larger of both
  orders, by 40-digit quadrature (written from the mechanism, not the
  library): P = rate N(1, s^2) + (1 - rate) N(0, s^2), Q = N(0, s^2)."""
  import mpmath  # only this reference needs it
  with mpmath.workdps(40):
    shift, rate = 1 / mpmath.mpf(sigma), mpmath.mpf(rate)
    scale = mpmath.e**mpmath.mpf(epsilon)
    mixture = lambda x: (rate * mpmath.npdf(x - shift)
                         + (1 - rate) * mpmath.npdf(x))
    # P > e^eps Q above x_remove; Q > e^eps P below x_add.
    x_remove = (mpmath.log((scale - 1 + rate) / rate) + shift**2 / 2) / shift
    remove = mpmath.quad(lambda x: mixture(x) - scale * mpmath.npdf(x),
                         [x_remove, x_remove + 5, mpmath.inf])
    add = 0
    if 1 / scale > 1 - rate:
      x_add = (mpmath.log((1 / scale - 1 + rate) / rate)
               + shift**2 / 2) / shift
      add = mpmath.quad(lambda x: mpmath.npdf(x) - scale * mixture(x),
                        [-mpmath.inf, x_add - 5, x_add])
    return float(max(remove, add))


@pytest.mark.parametrize('interval', [2.0**-10, 2.0**-13])
@pytest.mark.parametrize('epsilon', [0.3, 1.5])
def test_upstream_rounds_are_not_below_the_truth_at_grid_points(
    interval, epsilon):
  """dp_accounting's connect-the-dots PMF is exact at grid points, so its
  floating-point masses alone fell 5e-14 relative below the truth there
  (sigma = 0.8, rate = 0.1, eps = 1.5); the safety margin covers them."""
  accountant = ShufflePldAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE,
                                    value_discretization_interval=interval)
  accountant.compose(dp_event.PoissonSampledDpEvent(
      0.1, dp_event.GaussianDpEvent(0.8)))
  delta = accountant.get_delta(epsilon)
  assert _subsampled_gaussian_delta(0.1, 0.8, epsilon) <= delta


def test_a_composition_too_fine_is_tried_once_not_by_every_query(
    monkeypatch):
  """ShuffleEvent(3100920785, 20.0, num_categories=3) x 1e9: a dominating
  ledger's grid was too fine, and every query squared it 40 times again
  before failing (121 s for 9 queries, now 27 s)."""
  attempts = []

  def too_fine(accountant, interval, discretize):
    attempts.append(accountant)
    raise composition.GridTooFineError('too fine')

  monkeypatch.setattr(ShufflePldAccountant, '_composed_grouped_ledger',
                      too_fine)
  accountant = ShufflePldAccountant().compose(ShuffleEvent(1000, 1.0), 10)
  first = accountant.get_epsilon(1e-6)
  tried = len(attempts)
  assert tried >= 1 and first < 10 * (1 + 1e-9)  # basic composition
  assert accountant.get_epsilon(1e-5) <= first
  assert accountant.get_delta(1.0) <= 1
  assert len(attempts) == tried
