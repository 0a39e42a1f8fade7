"""Opacus' own accountant tests, run with our accountants registered.

Registering "shuffle_checkin" must not change Opacus' registry behaviour or
its accountants' numbers. The hypothesis overshoot property and the PRV
calibrations (a minute together) are left out; they touch no code of ours.
"""

import pytest

upstream = pytest.importorskip('opacus.tests.accountants_test')

# ruff: noqa: E402
from shuffle_accountants.adapters import opacus as adapter


class TestOpacusRegistry(upstream.AccountantRegistryTest):
  """Opacus' registry tests, unchanged."""


class TestOpacusAccounting(upstream.AccountingTest):
  """Opacus' RDP/GDP numbers and state-dict checks, unchanged."""
  test_get_noise_multiplier_overshoot = None
  test_get_noise_multiplier_prv_epochs = None
  test_get_noise_multiplier_prv_steps = None


def test_our_accountants_stay_registered():
  assert adapter.MECHANISM in upstream.registry._ACCOUNTANTS
