"""dp_accounting's own test suites, run against our subclasses.

The upstream RDP and PLD tests reach the accountant through the module
attributes `rdp_privacy_accountant.RdpAccountant` and
`pld_privacy_accountant.PLDAccountant`. We give them proxy modules whose
accountant is our subclass with the *parent's* defaults (orders, grid and
ADD_OR_REMOVE_ONE), and which forward every other attribute, so the same
constructor calls exercise our classes. dp_accounting itself is not modified.
"""

import types
import unittest
from unittest import mock

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting import privacy_accountant_test
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import pld_privacy_accountant_test as upstream_pld
from dp_accounting.rdp import rdp_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant_test as upstream_rdp
import numpy as np

from shuffle_accountants import DistributedCheckInEvent
from shuffle_accountants import ShuffleEvent
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant


class _WithParentDefaults(ShuffleRdpAccountant):

  def __init__(self, orders=None, neighboring_relation=(
      privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE)):
    super().__init__(
        rdp_privacy_accountant.DEFAULT_RDP_ORDERS if orders is None else orders,
        neighboring_relation)


def _substitute(upstream_test_module, module_attribute, parent_module,
                class_name, subclass):
  """Points `upstream_test_module.<module_attribute>` at a proxy of
  `parent_module` whose `class_name` is `subclass`."""
  proxy = types.ModuleType(f'{parent_module.__name__}_proxy')
  proxy.__getattr__ = lambda name: getattr(parent_module, name)
  setattr(proxy, class_name, subclass)
  setattr(upstream_test_module, module_attribute, proxy)


def _accountants_built_by(upstream_test_case, subclass):
  """Runs one upstream test; returns the `subclass` instances it built.

  Fails if the upstream test fails, so what it checked ran on them.
  """
  built = []
  original_init = subclass.__init__

  def recording_init(accountant, *args, **kwargs):
    built.append(accountant)
    original_init(accountant, *args, **kwargs)

  result = unittest.TestResult()
  with mock.patch.object(subclass, '__init__', recording_init):
    upstream_test_case.run(result)
  assert result.wasSuccessful(), result.errors + result.failures
  return built


_substitute(upstream_rdp, 'rdp_privacy_accountant', rdp_privacy_accountant,
            'RdpAccountant', _WithParentDefaults)


class RdpPrivacyAccountantTest(upstream_rdp.RdpPrivacyAccountantTest):
  """Upstream's RDP suite; one deliberate difference."""

  def test_log_a_frac_early_termination(self):
    # Upstream logs "failed to converge" and drops the order (+inf); ours
    # drops it the same way without the log line (issue 39, row 7).
    event = dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.0))
    accountant = _WithParentDefaults()
    with self.assertNoLogs(level='WARNING'):
      accountant.compose(event)
    self.assertIn(np.inf, accountant._rdp)


class ShuffleRdpContractTest(privacy_accountant_test.PrivacyAccountantTest):
  """The abstract contract suite, plus our events nested like built-ins."""

  def _make_test_accountants(self):
    return [ShuffleRdpAccountant(),
            ShuffleRdpAccountant(orders=[1.5, 2.0, 10.0])]

  def test_shuffle_event_nested_in_standard_wrappers(self):
    for event in (ShuffleEvent(num_users=100, local_epsilon=1.0),
                  DistributedCheckInEvent(100, 0.1, 1.0)):
      for wrapped in (event, dp_event.ComposedDpEvent([event]),
                      dp_event.SelfComposedDpEvent(event, 3),
                      dp_event.RepeatAndSelectDpEvent(event, 1.0, 1.0)):
        for accountant in self._make_test_accountants():
          self.assertTrue(accountant.supports(wrapped))
          accountant.compose(wrapped)
          self.assertGreater(accountant.get_epsilon(1e-6), 0)

  def test_subclass_is_used_by_the_upstream_suite(self):
    built = _accountants_built_by(upstream_rdp.RdpPrivacyAccountantTest(
        'test_compute_rdp_poisson_sampled_gaussian'), _WithParentDefaults)
    self.assertTrue(built)
    for accountant in built:
      self.assertIsInstance(accountant, ShuffleRdpAccountant)


class _PldWithParentDefaults(ShufflePldAccountant):

  def __init__(self, neighboring_relation=(
      privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE),
               value_discretization_interval=1e-4):
    super().__init__(neighboring_relation, value_discretization_interval)


_substitute(upstream_pld, 'pld_privacy_accountant', pld_privacy_accountant,
            'PLDAccountant', _PldWithParentDefaults)

PldPrivacyAccountantTest = upstream_pld.PldPrivacyAccountantTest


class ShufflePldContractTest(privacy_accountant_test.PrivacyAccountantTest):
  """The abstract contract suite for the PLD subclass, both grid modes."""

  def _make_test_accountants(self):
    return [ShufflePldAccountant(),
            ShufflePldAccountant(value_discretization_interval=1e-3)]

  def test_shuffle_event_nested_in_standard_wrappers(self):
    for event in (ShuffleEvent(num_users=100, local_epsilon=1.0),
                  DistributedCheckInEvent(100, 0.1, 1.0)):
      for wrapped in (event, dp_event.ComposedDpEvent([event]),
                      dp_event.SelfComposedDpEvent(event, 3)):
        for accountant in self._make_test_accountants():
          self.assertTrue(accountant.supports(wrapped))
          accountant.compose(wrapped)
          self.assertGreater(accountant.get_epsilon(1e-6), 0)

  def test_subclass_is_used_by_the_upstream_suite(self):
    built = _accountants_built_by(upstream_pld.PldPrivacyAccountantTest(
        'test_gaussian_basic'), _PldWithParentDefaults)
    self.assertTrue(built)
    for accountant in built:
      self.assertIsInstance(accountant, ShufflePldAccountant)
