"""dp_accounting's accountant contract with the sampler events composed, nested
and round-tripped like built-in events."""

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting import privacy_accountant_test
import pytest

from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.samplers import RandomAllocationDpEvent
from shuffle_accountants.samplers import ShuffledBatchesDpEvent

ADD_OR_REMOVE = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE

SHUFFLED = ShuffledBatchesDpEvent(noise_multiplier=2.0, steps_per_epoch=10,
                                  num_epochs=2)
ALLOCATED = RandomAllocationDpEvent(dp_event.GaussianDpEvent(2.0), 1, 10)


def _nested(event):
  return (event, dp_event.ComposedDpEvent([event]),
          dp_event.SelfComposedDpEvent(event, 3))


class SamplerPldContractTest(privacy_accountant_test.PrivacyAccountantTest):
  """The abstract contract, then both sampler events nested."""

  def _make_test_accountants(self):
    return [ShufflePldAccountant(ADD_OR_REMOVE), ShufflePldAccountant(),
            ShufflePldAccountant(ADD_OR_REMOVE, 1e-3)]

  def test_sampler_events_nested_in_standard_wrappers(self):
    events = [SHUFFLED]
    try:
      import PLD_accounting  # noqa: F401
      events.append(ALLOCATED)
    except ImportError:
      pass
    for event in events:
      for wrapped in _nested(event):
        for accountant in self._make_test_accountants():
          self.assertTrue(accountant.supports(wrapped))
          accountant.compose(wrapped)
          self.assertGreater(accountant.get_epsilon(1e-6), 0)


class SamplerRdpContractTest(privacy_accountant_test.PrivacyAccountantTest):

  def _make_test_accountants(self):
    return [ShuffleRdpAccountant(neighboring_relation=ADD_OR_REMOVE),
            ShuffleRdpAccountant(orders=[1.5, 2.0, 10.0])]

  def test_shuffled_batches_nested_in_standard_wrappers(self):
    for wrapped in _nested(SHUFFLED):
      for accountant in self._make_test_accountants():
        self.assertTrue(accountant.supports(wrapped))
        accountant.compose(wrapped)
        self.assertGreater(accountant.get_epsilon(1e-6), 0)
      self.assertFalse(ShuffleRdpAccountant().supports(
          dp_event.ComposedDpEvent([ALLOCATED])))


@pytest.mark.parametrize('event', [SHUFFLED, ALLOCATED])
def test_named_tuple_round_trip(event):
  assert dp_event.DpEvent.from_named_tuple(event.to_named_tuple()) == event


def test_self_composition_equals_epochs():
  one = ShufflePldAccountant(ADD_OR_REMOVE).compose(SHUFFLED, 3)
  other = ShufflePldAccountant(ADD_OR_REMOVE).compose(
      ShuffledBatchesDpEvent(2.0, 10, 6))
  assert one.get_epsilon(1e-6) == pytest.approx(other.get_epsilon(1e-6),
                                                rel=1e-6)
