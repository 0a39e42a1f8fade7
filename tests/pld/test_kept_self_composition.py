"""`composition.self_compose` of a round PMF: dp_accounting's, to round-off.

It keeps the count-free parts of dp_accounting's FFT self-composition (the
Chernoff orders' log-MGFs, the PMF's transform and its squares) across
counts; the PMF it returns must be the one dp_accounting computes from
scratch (the same grid, the same truncation, masses within FFT round-off),
and the same bits for a count whatever was kept before.
"""

from dp_accounting import dp_event
from dp_accounting.pld import privacy_loss_distribution
import numpy as np
import pytest

import shuffle_accountants
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import _upstream
from shuffle_accountants import cache_bytes
from shuffle_accountants import clear_caches
from shuffle_accountants.pld import composition
from shuffle_accountants.pld import discrete
from shuffle_accountants.pld.accountant import NeighboringRelation


def poisson_halves():
  """The two halves of a Poisson-subsampled Gaussian (asymmetric)."""
  pld = privacy_loss_distribution.from_gaussian_mechanism(
      1.0, sampling_prob=0.05, value_discretization_interval=1e-3)
  return [composition._half(composition.exact_input(pld), index)
          for index in (0, 1)]


def random_round():
  probs = np.random.default_rng(3).random(300)
  return composition.to_privacy_loss_distribution(discrete.GridPmf(
      0.01, -120, probs / probs.sum() * (1 - 1e-6), 1e-6))


def fields(pld):
  discretization, lower, probs, infinity = _upstream.dense_pmf_fields(
      _upstream.pld_pmfs(pld)[0])
  return discretization, lower, probs.tolist(), infinity


@pytest.mark.parametrize('make', [poisson_halves, lambda: [random_round()]])
def test_equals_dp_accountings_self_composition_at_every_count(make):
  clear_caches()
  for pld in make():
    assert isinstance(pld, composition.GridPld)
    answers = {}
    # Counts that share a transform size and counts that change it, twice.
    for count in (2, 40, 41, 42, 400, 41):
      ours = fields(composition.self_compose(pld, count))
      theirs = fields(pld.self_compose(count,
                                       composition._TAIL_MASS_TRUNCATION))
      assert ours[:2] == theirs[:2] and ours[3] == theirs[3]
      # Products of squares against numpy's complex power: round-off of
      # about count ulps of the total mass, far below any mass read.
      np.testing.assert_allclose(ours[2], theirs[2], rtol=0, atol=1e-12)
      assert answers.setdefault(count, ours) == ours
    clear_caches()
    assert fields(composition.self_compose(pld, 41)) == answers[41]


def test_counts_past_the_kept_squares_square_on(monkeypatch):
  """Above 2^_KEPT_SQUARES the squares go on past the kept ones (counts of
  more than 2^24 once raised IndexError: ShuffleEvent(10, 0.0) x 1e9)."""
  monkeypatch.setattr(composition, '_KEPT_SQUARES', 2)
  pld = random_round()
  for count in (13, 29, 13):
    clear_caches()
    ours = fields(composition.self_compose(pld, count))
    theirs = fields(pld.self_compose(count, composition._TAIL_MASS_TRUNCATION))
    assert ours[:2] == theirs[:2] and ours[3] == theirs[3]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=0, atol=1e-12)


def test_a_ledger_one_round_longer_answers_as_with_every_cache_cleared():
  """Flower's accountant rebuilds the ledger with one round more every
  round; with the kept transforms its answers are those of a cold start."""
  event = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0))

  def epsilon(rounds):
    return ShufflePldAccountant(
        NeighboringRelation.ADD_OR_REMOVE_ONE, 2.0**-13).compose(
            event, rounds).get_epsilon(1e-5)

  clear_caches()
  warm = [epsilon(rounds) for rounds in (150, 151, 152)]
  kept = cache_bytes()
  assert kept['pld.composition.mgfs'] and kept['pld.roundoff.powers']
  for rounds, answer in zip((150, 151, 152), warm):
    clear_caches()
    assert epsilon(rounds) == answer


def test_a_long_one_round_ledger_answers_as_located_on_its_whole_support(
    monkeypatch):
  """Flower's ledger (one round, 1,000 times) is located on the truncated
  grid (`_truncation_pays`) instead of its whole support; the certified
  answer is the certificate's either way, and its nodes are not kept (one
  round more is another count: kept, they filled the cache)."""
  event = shuffle_accountants.SubsampledShuffleGaussianEvent(1000, 100, 5.0)

  def answers():
    clear_caches()
    accountant = ShufflePldAccountant().compose(event, 400)
    return [accountant.get_epsilon(delta) for delta in (1e-5, 1e-9)]

  accountant = ShufflePldAccountant().compose(event, 400)
  pld = composition._half(accountant._composition().pld, 0)
  round_pld = composition.to_privacy_loss_distribution(discrete.GridPmf(
      pld.rounds.discretization, *pld.rounds.rounds[0][:3]))
  assert composition._truncation_pays(round_pld, 400)
  truncated = answers()
  assert cache_bytes()['pld.roundoff.nodes'] == 0
  monkeypatch.setattr(composition, '_truncation_pays', lambda *_: False)
  whole = answers()
  np.testing.assert_allclose(truncated, whole, rtol=1e-12)
