"""Random allocation of Gaussian steps: Feldman and Shenfeld's PLD.

IDs: FS26-RANDOM-ALLOCATION, RANDOM-ALLOCATION-GRID

The PLD of one epoch under add/remove comes from the `PLD_accounting`
package (the authors' maintained implementation, MIT; extra `samplers`) in
its dominating mode (`BoundType.DOMINATES`: losses rounded up, truncated
tails moved to +infinity); `pld.random_allocation` moves it to the PLD
accountant's grid. Its dominated mode gives a lower bound
(`epsilon_lower_bound`).
"""

from concurrent import futures
from importlib import metadata
from importlib import util
import threading
from typing import Dict, Tuple

import numpy as np

from shuffle_accountants import _cache
from shuffle_accountants import _disk_cache
from shuffle_accountants import _upstream
from shuffle_accountants import _validation

__all__ = [
    'LOSS_DISCRETIZATION_PER_ACCURACY', 'LOSS_DISCRETIZATION', 'INSTALL_HINT',
    'SMALLEST_NOISE_MULTIPLIER', 'LARGEST_NOISE_MULTIPLIER',
    'is_available', 'dominating_epoch_fields_unchecked', 'prefetch_epoch',
    'epsilon_lower_bound',
]

# PLD_accounting's loss discretization per unit of the accountant's
# relative_accuracy (default 1e-3 -> 0.015). The reported epsilon falls with
# it (sigma = 1, 1 of 1000 steps, delta = 1e-6: 0.187 at 0.05, 0.1764 at
# 0.015; sigma = 2: 0.0640 at 0.015, 0.0608 at 0.005) and the time rises as
# about its inverse square (docs/performance.md).
LOSS_DISCRETIZATION_PER_ACCURACY = 15.0
LOSS_DISCRETIZATION = LOSS_DISCRETIZATION_PER_ACCURACY * 1e-3

# Outside [0.1, 1000] PLD_accounting 2.0 fails (sigma = 0.03 at 79 steps: its
# loss grid leaves the range where exp is representable; sigma = 10^4: too
# few grid points) or overflows in its geometric convolution (sigma = 0.05:
# numpy warns of inf cast to bin indices, so its result is not trusted);
# from 0.1 to 1000 it runs without a warning at 1 to 10^4 steps. Epsilon is
# about 85 at 0.1 and 0.004 at 1000 (79 steps, delta = 1e-5), so nothing
# of use is refused.
SMALLEST_NOISE_MULTIPLIER = 0.1
LARGEST_NOISE_MULTIPLIER = 1000.0

INSTALL_HINT = ('random allocation needs the PLD_accounting package: '
                f'{_validation.install_hint("samplers")}.')


def _package():
  try:
    import PLD_accounting
  except ImportError as error:
    raise ImportError(INSTALL_HINT) from error
  return PLD_accounting


def is_available() -> bool:
  """Whether PLD_accounting is installed, found without importing it (the
  import, numba's included, takes about half a second; a broken install
  raises the install hint when an epoch is computed)."""
  return util.find_spec('PLD_accounting') is not None


def _pmfs_bytes(pmfs) -> int:
  """About the bytes of dp_accounting PMFs (8 per loss kept)."""
  return sum(8 * pmf.size for pmf in pmfs)


DenseFields = Tuple[float, int, np.ndarray, float]


def _fields_bytes(directions) -> int:
  return sum(8 * probs.size for _, _, probs, _ in directions)


@_cache.cached(16 * 2**20, _fields_bytes)
def dominating_epoch_fields_unchecked(
    noise_multiplier: float, num_selected: int, num_steps: int,
    loss_discretization: float) -> Tuple[DenseFields, DenseFields]:
  """PLD_accounting's dominating PMFs (remove, add) of one epoch, each as
  its dense fields (discretization, lower index, probabilities, mass at
  +infinity); the callers convert the arguments, nothing is checked here.

  They take seconds to compute (docs/performance.md), so they are also kept
  on disk (`_disk_cache`), under the exact arguments and the versions of
  the packages that compute them: a fresh process reads them bit for bit.
  An epoch `prefetch_epoch` started is taken from its thread (the same
  computation).
  """
  arguments = (noise_multiplier, num_selected, num_steps, loss_discretization)
  with _PREFETCH_LOCK:
    started = _PREFETCHED.pop(_epoch_key(*arguments), None)
  stored = None
  if started is not None:
    try:
      stored = started.result()
    except Exception:  # any error: recomputed below
      pass  # computed again below, so the error is raised here
  if stored is None:
    stored = _stored_epoch(*arguments)
  return _dense_fields(stored[:4]), _dense_fields(stored[4:])


def _epoch_key(noise_multiplier: float, num_selected: int, num_steps: int,
               loss_discretization: float) -> str:
  # The name says what is computed; change it with `_epoch_pld`'s settings.
  return repr(('random_allocation.dominating_epoch.geom.v1', _versions(),
               float(noise_multiplier).hex(), int(num_selected),
               int(num_steps), float(loss_discretization).hex()))


def _stored_epoch(noise_multiplier: float, num_selected: int,
                  num_steps: int, loss_discretization: float
                  ) -> Tuple[np.ndarray, ...]:
  """The arrays of both PMFs' dense fields, from disk or computed."""
  def compute():
    pld = _epoch_pld(noise_multiplier, num_selected, num_steps,
                     loss_discretization, 'DOMINATES')
    return tuple(
        np.asarray(value) for pmf in _upstream.pld_pmfs(pld)
        for value in _upstream.dense_pmf_fields(pmf.to_dense_pmf()))

  return _disk_cache.arrays(
      _epoch_key(noise_multiplier, num_selected, num_steps,
                 loss_discretization), compute)


# Epochs whose computation `prefetch_epoch` started, by key (at most
# _MAX_PREFETCHED waiting to be taken; speed only).
_PREFETCHED: Dict[str, futures.Future] = {}
_PREFETCH_LOCK = threading.Lock()
_MAX_PREFETCHED = 4


def prefetch_epoch(noise_multiplier: float, num_selected: int,
                   num_steps: int, loss_discretization: float) -> None:
  """Starts computing `dominating_epoch_fields_unchecked(...)` (the same
  arguments) in a background thread, so that a training loop's first
  query finds it done: importing PLD_accounting and its convolutions take
  seconds the first time on a machine (docs/performance.md). Does nothing
  if PLD_accounting is missing, the epoch is kept or already started, or
  _MAX_PREFETCHED wait to be taken; any error is left to the query.
  """
  arguments = (float(noise_multiplier), int(num_selected), int(num_steps),
               float(loss_discretization))
  if not is_available() or dominating_epoch_fields_unchecked.holds(*arguments):
    return
  key = _epoch_key(*arguments)
  with _PREFETCH_LOCK:
    if key in _PREFETCHED or len(_PREFETCHED) >= _MAX_PREFETCHED:
      return
    started: futures.Future = futures.Future()
    _PREFETCHED[key] = started

  def compute():
    try:
      started.set_result(_stored_epoch(*arguments))
    except BaseException as error:  # any error is the query's
      started.set_exception(error)

  threading.Thread(target=compute, name='random allocation epoch',
                   daemon=True).start()


def _dense_fields(arrays) -> DenseFields:
  discretization, lower, probs, infinity = arrays
  return float(discretization), int(lower), probs, float(infinity)


def _versions() -> Tuple[str, ...]:
  """The versions of the packages an epoch PMF depends on (numba is
  optional to PLD_accounting); without PLD_accounting, its install hint.
  Found without importing them (importing takes about a second)."""
  if not is_available():
    raise ImportError(INSTALL_HINT)
  return tuple(_version(name) for name in (
      'PLD_accounting', 'dp-accounting', 'numpy', 'numba'))


def _version(distribution: str) -> str:
  try:
    return metadata.version(distribution)
  except metadata.PackageNotFoundError:
    return 'absent'


def _epoch_pld(noise_multiplier: float, num_selected: int, num_steps: int,
               loss_discretization: float, bound_type: str):
  """PLD_accounting's PLD of one epoch (geometric convolution)."""
  if not (SMALLEST_NOISE_MULTIPLIER <= noise_multiplier
          <= LARGEST_NOISE_MULTIPLIER):
    raise ValueError(
        f'random allocation: noise_multiplier={noise_multiplier:g} is '
        f'outside [{SMALLEST_NOISE_MULTIPLIER:g}, '
        f"{LARGEST_NOISE_MULTIPLIER:g}], where PLD_accounting's epoch PLD "
        'is computed without overflow (outside, its loss grid leaves the '
        'range of exp or holds too few points). Use a noise multiplier in '
        'that range, or '
        "ShuffledBatchesDpEvent (the 'shuffled_batches' Opacus accountant), "
        'which claims no amplification.')
  package = _package()
  config = package.AllocationSchemeConfig(
      loss_discretization=loss_discretization,
      convolution_method=package.ConvolutionMethod.GEOM)
  params = package.PrivacyParams(sigma=noise_multiplier, num_steps=num_steps,
                                 num_selected=num_selected, num_epochs=1)
  return package.gaussian_allocation_pld(
      params=params, config=config,
      bound_type=getattr(package.BoundType, bound_type))


def epsilon_lower_bound(noise_multiplier: float, num_selected: int,
                        num_steps: int, num_epochs: int, delta: float) -> float:
  """A lower bound on epsilon: PLD_accounting's dominated PLD. [LB]

  `BoundType.IS_DOMINATED` with the geometric convolution rounds every
  step down (FS26-RANDOM-ALLOCATION), so its epsilon is at most the true
  one. Epochs are composed by dp_accounting with no tail truncation (its
  default, 1e-15, would go to +infinity even in this optimistic PMF and
  put the value above the truth below delta = 1e-15, issue 48); below
  `_COMPOSED_DELTA_FLOOR`, where the FFT's round-off could reach delta,
  one epoch's epsilon is returned, which more epochs only raise. For
  tables and tests; never composed into an accountant.
  """
  pld = _dominated_epoch(float(noise_multiplier), int(num_selected),
                         int(num_steps))
  if num_epochs > 1 and delta >= _COMPOSED_DELTA_FLOOR:
    pld = pld.self_compose(num_epochs, tail_mass_truncation=0.0)
  return float(pld.get_epsilon_for_delta(delta))


# Below this delta the epochs' FFT composition (round-off about 1e-16 per
# grid point) cannot be read from below: `epsilon_lower_bound` keeps one
# epoch.
_COMPOSED_DELTA_FLOOR = 1e-9


@_cache.cached(8 * 2**20,
               lambda pld: _pmfs_bytes(_upstream.pld_pmfs(pld)))
def _dominated_epoch(noise_multiplier: float, num_selected: int,
                     num_steps: int):
  pld = _epoch_pld(noise_multiplier, num_selected, num_steps,
                   LOSS_DISCRETIZATION, 'IS_DOMINATED')
  if any(map(_upstream.is_pessimistic, _upstream.pld_pmfs(pld))):
    raise ValueError('internal error: PLD_accounting returned a pessimistic '
                     'PMF for IS_DOMINATED; it cannot serve as a lower bound.')
  return pld
