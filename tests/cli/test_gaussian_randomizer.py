"""CLI `--randomizer gaussian --noise-multiplier s --dimension d` (issue 51)."""

import pytest

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import events
from shuffle_accountants import randomizers
from shuffle_accountants.cli import protocols


def test_gaussian_randomizer_is_the_shuffle_of_its_reports():
  protocol = protocols.Protocol(num_users=10**4, randomizer='gaussian',
                                noise_multiplier=5.0, dimension=10)
  assert protocol.round_event() == events.ShuffleEvent(
      10**4, randomizer=randomizers.GaussianRandomizer(5.0, dimension=10))
  sampled = protocol.replace(sample_size=10**3).round_event()
  assert sampled == events.SubsampledShuffleGaussianEvent(
      10**4, 10**3, 5.0, dimension=10)
  # Without --randomizer gaussian the dimension stays unknown (as before).
  assert protocols.Protocol(
      num_users=10**4, noise_multiplier=5.0,
      sample_size=10**3).round_event().dimension is None


def test_gaussian_certificate_and_lower_bound():
  protocol = protocols.Protocol(num_users=10**3, randomizer='gaussian',
                                noise_multiplier=5.0, dimension=10)
  results = {method: protocols.evaluate(protocol, method)
             for method in ('pld', 'randomizer-pairs', 'pld-generic')}
  certified = ShufflePldAccountant().compose(
      protocol.round_event()).get_epsilon(protocol.delta)
  assert results['pld'].epsilon == certified
  assert 0 < results['randomizer-pairs'].epsilon <= certified
  assert 'NUM-LB' in results['randomizer-pairs'].detail
  assert results['pld-generic'].epsilon is None


@pytest.mark.parametrize('fields, message', [
    (dict(randomizer='gaussian', local_epsilon=1.0), 'needs noise_multiplier'),
    (dict(randomizer='gaussian', noise_multiplier=1.0, domain_size=4),
     'not domain_size'),
    (dict(local_epsilon=1.0, dimension=3), 'needs randomizer gaussian')])
def test_bad_combinations_name_the_fields(fields, message):
  with pytest.raises(ValueError, match=message):
    protocols.Protocol(num_users=100, **fields)
