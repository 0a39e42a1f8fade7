"""The closed-form epsilon(delta) of composed PLDs
(pld.composition.DirectProfile)."""

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting.pld import pld_privacy_accountant
import numpy as np
import pytest

from shuffle_accountants import events
from shuffle_accountants.pld import accountant as pld_accountant
from shuffle_accountants.pld import composition
from shuffle_accountants.pld import discrete


def _composed(event, count, grid=1e-3):
  accountant = pld_privacy_accountant.PLDAccountant(
      privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE, grid)
  accountant.compose(event, count)
  return accountant


@pytest.mark.parametrize('event,count', [
    (dp_event.GaussianDpEvent(2.0), 10),
    (dp_event.LaplaceDpEvent(3.0), 5),
    # Not symmetric: both orders are read.
    (dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.0)), 20),
])
@pytest.mark.parametrize('delta', [1e-12, 1e-6, 1e-2, 0.3])
def test_closed_form_matches_dp_accounting_search(event, count, delta):
  accountant = _composed(event, count)
  profile = composition.DirectProfile(accountant._pld)
  epsilon = profile.epsilon(delta)
  searched = accountant.get_epsilon(delta)
  assert epsilon == pytest.approx(searched, rel=1e-6, abs=1e-9)
  # The smallest epsilon meeting delta, up to the rounding up.
  assert profile.delta(epsilon) <= delta * (1 + 1e-9)
  if epsilon > 1e-9:
    assert profile.delta(epsilon * (1 - 1e-6) - 1e-12) > delta


def test_edge_deltas():
  accountant = _composed(dp_event.GaussianDpEvent(1.0), 1)
  profile = composition.DirectProfile(accountant._pld)
  assert profile.epsilon(1.0) == 0.0
  assert np.isinf(profile.epsilon(0.0))  # the Gaussian's truncated tail


def test_accountant_runs_no_pure_python_search(monkeypatch):
  """get_epsilon answers from the closed form, not dp_accounting's loop."""
  def forbidden(*args, **kwargs):
    raise AssertionError('dp_accounting epsilon search called')
  monkeypatch.setattr(pld_privacy_accountant.PLDAccountant, 'get_epsilon',
                      forbidden)
  accountant = pld_accountant.ShufflePldAccountant()
  accountant.compose(events.ShuffleEvent(num_users=10**4, local_epsilon=1.0),
                     100)
  epsilon = accountant.get_epsilon(1e-6)
  assert 0 < epsilon < 100 and (accountant.get_delta(epsilon)
                                <= 1e-6 * (1 + 1e-9))


def test_an_asymmetric_pld_keeps_both_relations_in_a_batch():
  """compose_all batches one PMF per PLD; an asymmetric PLD whose add
  relation is the worse one must not lose it (it is composed by
  dp_accounting, both PMFs)."""
  from dp_accounting.pld import pld_pmf
  from dp_accounting.pld import privacy_loss_distribution

  from shuffle_accountants.pld import discrete
  d = 0.01
  mild = pld_pmf.DensePLDPmf(d, 0, np.array([0.5, 0.5]), 0.0, True)
  harsh = pld_pmf.DensePLDPmf(d, 0, np.array([0.5, 0.0, 0.0, 0.0, 0.5]),
                              1e-3, True)
  asymmetric = privacy_loss_distribution.PrivacyLossDistribution(mild, harsh)
  round_ = composition.to_privacy_loss_distribution(discrete.GridPmf(
      d, -1, np.array([0.25, 0.5, 0.25]), 0.0))
  batched = composition.DirectProfile(composition.compose_all(
      [(asymmetric, 2), (round_, 3)]))
  expected = asymmetric.self_compose(2).compose(round_.self_compose(3))
  for epsilon in (0.0, 0.01, 0.03, 0.05):
    assert batched.delta(epsilon) >= expected.get_delta_for_epsilon(
        epsilon) * (1 - 1e-9)


def test_profile_read_in_pieces_from_the_top_is_the_whole_one():
  """`discrete.profile_below` carried down piece by piece gives the whole
  profile bit for bit, and both match the sums written out directly."""
  rng = np.random.default_rng(3)
  probs = rng.random(1500)**8 * (rng.random(1500) < 0.7)
  d = 0.01
  tail, decaying = discrete.finite_profile(probs, d)
  index = np.arange(probs.size)
  gaps = index[None, :] - index[:, None]  # j - i
  terms = np.where(gaps > 0, probs[None, :] * -np.expm1(-gaps * d), 0.0)
  np.testing.assert_allclose(tail, terms.sum(axis=1), rtol=1e-12)
  carried, pieces = (0.0, 0.0), []
  for start, stop in ((1000, 1500), (999, 1000), (0, 999)):
    piece_tail, piece_decaying, carried = discrete.profile_below(
        probs[start:stop], d, carried)
    pieces.append((piece_tail, piece_decaying))
  assert np.concatenate([t for t, _ in pieces[::-1]]).tobytes() == (
      tail.tobytes())
  assert np.concatenate([u for _, u in pieces[::-1]]).tobytes() == (
      decaying.tobytes())


@pytest.mark.parametrize('delta', [0.5, 1e-3, 1e-9, 1e-30])
def test_epsilon_read_from_the_top_is_the_grid_search(delta):
  """The inverse reads only the top of a long PMF (2^16 points and up):
  its answer is the smallest grid epsilon with delta at most the target, up
  to the closed form between grid points, checked by brute force."""
  rng = np.random.default_rng(5)
  size, d = 300_000, 1e-4
  losses = (-150_000 + np.arange(size)) * d
  probs = np.exp(-0.5 * (losses / 2)**2) * (1 + 0.1 * rng.random(size))
  probs /= probs.sum()
  profile = composition._PmfProfile(d, -150_000, probs, 0.0)
  epsilon = profile.epsilon(delta)
  def exact_delta(x):
    above = losses > x
    return np.sum(probs[above] * -np.expm1(x - losses[above]))
  assert exact_delta(epsilon) <= delta * (1 + 1e-9)
  if epsilon > 0:
    assert exact_delta(epsilon - 1e-9 - 1e-9 * epsilon) > delta
  assert profile.delta(epsilon) == pytest.approx(exact_delta(epsilon),
                                                 rel=1e-9)
