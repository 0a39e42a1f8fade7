"""The one seam to dp_accounting's private internals (checked on 0.6.0).

dp_accounting 0.6 has no public way to read a PLD's two PMFs, a dense
PMF's arrays, an accountant's grid or RDP sum, nor to build one event's PLD
or RDP as its accountants do. Every such access of the library is a small
function here, each pinned by a test of
`tests/upstream/test_upstream_accessors.py`, so an
upgrade of dp_accounting fails there first and is ported here alone.
(PLD_accounting, the `samplers` extra, is used through its public API; the
PLDs it returns are dp_accounting's and read through this module.)
"""

import contextlib
import logging
import threading
from typing import Iterator, Optional, Tuple, TypeAlias, Union

from dp_accounting import dp_event
from dp_accounting import privacy_accountant
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution
from dp_accounting.rdp import rdp_privacy_accountant
import numpy as np

from shuffle_accountants import _cache

__all__ = [
    'CHECKED_VERSION', 'ParentPldBuilder', 'add_rdp',
    'compose_parent_pld_event', 'compose_parent_rdp_event',
    'dense_pmf_fields', 'effective_gaussian_noise_multiplier',
    'forget_parent_pld', 'is_pessimistic', 'is_symmetric', 'pld_pmfs',
    'value_discretization_interval',
]

# The dp_accounting version every accessor was checked against.
CHECKED_VERSION = '0.6.0'

_Pld: TypeAlias = privacy_loss_distribution.PrivacyLossDistribution
CompositionErrorDetails: TypeAlias = (
    privacy_accountant.PrivacyAccountant.CompositionErrorDetails)


# ---- PrivacyLossDistribution and its PMFs

def pld_pmfs(pld: _Pld) -> Tuple[pld_pmf.PLDPmf, pld_pmf.PLDPmf]:
  """(remove, add): the PMFs of a PLD under each relation.

  Relies on `PrivacyLossDistribution._pmf_remove` / `._pmf_add` (a
  symmetric PLD holds the same object in both).
  """
  return pld._pmf_remove, pld._pmf_add


def is_symmetric(pld: _Pld) -> bool:
  """Whether a PLD has one PMF for both relations (`._symmetric`)."""
  return pld._symmetric


def is_pessimistic(pmf: pld_pmf.PLDPmf) -> bool:
  """Whether a PMF over-estimates delta (`._pessimistic_estimate`)."""
  return pmf._pessimistic_estimate


def dense_pmf_fields(pmf: pld_pmf.DensePLDPmf
                     ) -> Tuple[float, int, np.ndarray, float]:
  """(discretization, lower index, probabilities, mass at +infinity).

  Relies on `DensePLDPmf._discretization`, `._lower_loss` (the index of
  `._probs[0]`: its loss is `lower * discretization`), `._probs` and
  `._infinity_mass`.
  """
  return (pmf._discretization, int(pmf._lower_loss), pmf._probs,
          float(pmf._infinity_mass))


# ---- PLDAccountant

def value_discretization_interval(
    accountant: pld_privacy_accountant.PLDAccountant) -> float:
  """The grid spacing an accountant was built with
  (`PLDAccountant._value_discretization_interval`)."""
  return accountant._value_discretization_interval


def forget_parent_pld(
    accountant: pld_privacy_accountant.PLDAccountant) -> None:
  """Deletes the composed PLD the parent keeps (`PLDAccountant._pld`), so
  that a subclass composing elsewhere fails loudly if the parent reads it."""
  del accountant._pld


def compose_parent_pld_event(
    accountant: pld_privacy_accountant.PLDAccountant,
    event: dp_event.DpEvent, count: int, do_compose: bool
) -> Optional[CompositionErrorDetails]:
  """`PLDAccountant._maybe_compose` on `accountant` (its check of `event`,
  and with `do_compose` its composition into the parent's `_pld`)."""
  return pld_privacy_accountant.PLDAccountant._maybe_compose(
      accountant, event, count, do_compose)


class _EventPld:
  """Stands for the composed PLD while the parent builds one event's: its
  `self._pld.compose(event_pld)` then returns the event's PLD itself."""

  def compose(self, other, *unused_args, **unused_kwargs):
    return other


class ParentPldBuilder(pld_privacy_accountant.PLDAccountant):
  """dp_accounting's PLD of one of its own events, as its accountant builds it.

  dp_accounting has no public constructor from an event to its PLD: its
  accountant builds one inside `_maybe_compose` and composes it into its
  own `_pld` (recording a non-DP event in `_contains_non_dp_event`); this
  subclass lets its own `_pld` stand for the identity of composition
  (`_EventPld`) and hands the built PLD over.
  """

  def build(self, event: dp_event.DpEvent, count: int
            ) -> Tuple[Optional[_Pld], bool]:
    """(the PLD of `event` composed `count` times or None if it has none,
    whether it is not DP)."""
    self._pld = _EventPld()
    self._contains_non_dp_event = False
    self._maybe_compose(event, count, True)
    built = None if isinstance(self._pld, _EventPld) else self._pld
    return built, self._contains_non_dp_event


# ---- RdpAccountant

def add_rdp(accountant: rdp_privacy_accountant.RdpAccountant,
            rdp: np.ndarray) -> None:
  """Adds `rdp` (one value per order of `accountant.orders`) to the RDP the
  accountant has composed (`RdpAccountant._rdp`, which its epsilon and
  delta read; the public `rdp` property is a copy)."""
  accountant._rdp += rdp


def compose_parent_rdp_event(
    accountant: rdp_privacy_accountant.RdpAccountant,
    event: dp_event.DpEvent, count: int, do_compose: bool
) -> Optional[CompositionErrorDetails]:
  """`RdpAccountant._maybe_compose` on `accountant` (its check of `event`,
  and with `do_compose` its RDP added to the accountant's).

  A sampled Gaussian's RDP (a series per order: about a second without
  replacement) is computed once per event, orders and relation
  (`_sampled_rdp`) and added as the parent adds it, `count` times the
  one-round RDP: the same floats.
  """
  maybe_compose = rdp_privacy_accountant.RdpAccountant._maybe_compose
  with quiet_upstream():
    if not (do_compose and isinstance(event, _SAMPLED_EVENTS)):
      return maybe_compose(accountant, event, count, do_compose)
    try:
      hash(event)
    except TypeError:  # e.g. a ComposedDpEvent's list: nothing to key on
      return maybe_compose(accountant, event, count, do_compose)
    error = maybe_compose(accountant, event, count, False)
    if error is None:
      accountant._rdp += count * _sampled_rdp(
          event, tuple(accountant._orders), accountant.neighboring_relation)
    return error


_SAMPLED_EVENTS = (dp_event.PoissonSampledDpEvent,
                   dp_event.SampledWithoutReplacementDpEvent)


@_cache.cached(64 * 2**20, lambda rdp: rdp.nbytes)
def _sampled_rdp(event: dp_event.DpEvent, orders: Tuple[float, ...],
                 relation: privacy_accountant.NeighboringRelation
                 ) -> np.ndarray:
  """One round's RDP of a checked sampled event, as the parent computes it
  (read-only: the cache shares it)."""
  scratch = rdp_privacy_accountant.RdpAccountant(orders, relation)
  rdp_privacy_accountant.RdpAccountant._maybe_compose(scratch, event, 1, True)
  rdp = scratch._rdp
  rdp.setflags(write=False)
  return rdp


# ---- dp_accounting's log

# What dp_accounting logs (through absl) when a series stops before it
# converges: it then returns +inf for that order, which leaves the order out
# of the conversion to (epsilon, delta), so the answer stays an upper bound
# and the notice tells the user nothing to act on.
_ORDER_LEFT_OUT = '_compute_log_a_frac failed to converge'


def _not_order_left_out(record: logging.LogRecord) -> bool:
  return not str(record.msg).startswith(_ORDER_LEFT_OUT)


_quiet_blocks = [0]  # blocks running, over every thread
_quiet_lock = threading.Lock()


@contextlib.contextmanager
def quiet_upstream() -> Iterator[None]:
  """Drops dp_accounting's notices of RDP orders left out while the block
  runs (only those: every other record of its logger passes)."""
  logger = logging.getLogger('absl')
  with _quiet_lock:
    _quiet_blocks[0] += 1
    logger.addFilter(_not_order_left_out)
  try:
    yield
  finally:
    with _quiet_lock:
      _quiet_blocks[0] -= 1
      if not _quiet_blocks[0]:
        logger.removeFilter(_not_order_left_out)


def effective_gaussian_noise_multiplier(
    event: dp_event.DpEvent) -> Union[float, dp_event.DpEvent]:
  """The noise multiplier of the one Gaussian equivalent to a composition
  of Gaussians (sum of sigma^-2, each times its count), or the first
  sub-event that is not one
  (`rdp_privacy_accountant._effective_gaussian_noise_multiplier`)."""
  return rdp_privacy_accountant._effective_gaussian_noise_multiplier(
      event)
