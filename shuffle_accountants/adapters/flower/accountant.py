"""Flower's privacy accounting protocol, certified: `PldAccountant`.

References: GAUSS-NO-GAIN, KHH-SUBSAMPLED, ZDW22-ONE-ORDER, ROUNDOFF-CERTIFIED,
  WBK19-THM9.

**What Flower's Gaussian release means here.** A round releases the sum of
the sampled clients' updates, each clipped to L2 norm C, plus
N(0, σ² C² I) (Flower's wrappers add σC / m to the mean of m updates, the
same release). σ is the noise standard deviation over C, whatever the
relation, so the sum's sensitivity is C under add-or-remove-one and 2C
under replace-one (one client's update replaced). Flower's own
``RdpAccountant`` under replace-one takes σ relative to the replace-one
sensitivity (dp_accounting's RDP convention): at Flower's σ that is half
the noise of the release described here.

**What is composed.** Each of Flower's three accounting models has a
dominating pair or PLD that the library already certifies:
``SubsampledShuffleGaussianEvent(n, m, s)`` is accounted with the
subsampled Gaussian pair (γ N(2/s, 1) + (1 − γ) N(0, 1), N(0, 1)),
γ = m / n, both orders through one symmetric PMF (KHH-SUBSAMPLED on the
Gaussian pair of GAUSS-NO-GAIN, which claims no gain from shuffling,
ZDW22-ONE-ORDER). So:

* no amplification, add-or-remove-one: the Gaussian pair N(1/σ, 1) vs
  N(0, 1) (exact), composed as ``SubsampledShuffleGaussianEvent(1, 1, 2σ)``;
* Poisson sampling at q = m / n, add-or-remove-one: dp_accounting's
  ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))``, whose remove and add
  halves are composed each on its own (`ShufflePldAccountant` under
  add-or-remove, ROUNDOFF-CERTIFIED (vi)), on a grid of spacing about the
  RDP route's ε / 8192 (`_poisson_grid`; every grid gives an upper bound,
  this one ε within 0.1 % of dp_accounting's PLD in every cell of
  benchmarks/flower.py);
* m of n without replacement, replace-one: Balle et al.'s bound (advanced
  joint convexity over the coupled samples) of the Gaussian of
  sensitivity 2C, the same pair at shift 2/σ and ratio m / n, composed as
  ``SubsampledShuffleGaussianEvent(n, m, σ)``.

These are composed in `ShufflePldAccountant` (FFT composition with its
round-off certified, ROUNDOFF-CERTIFIED), and ε is the
smaller of that and the RDP of the same releases (`ShuffleRdpAccountant`:
Mironov's RDP of the Poisson-subsampled Gaussian, WBK19-THM9 for sampling
without replacement at sensitivity 2C), both upper bounds. The RDP route is
taken at every order dp_accounting's default uses, and more, so ε never exceeds
what dp_accounting's RDP gives for the same release.

**Work per round.** Flower asks `would_exceed` for the next round, composes
it and asks ε: the routes are built once per ledger (the projection of
`would_exceed` is kept for the round it projects), each from the ledger's
distinct events and their counts, so that ε depends on the ledger alone
(a restored `state_dict` gives it bit for bit); the RDP of a sampled
release is computed once per event (`shuffle_accountants._upstream`).

Amplification by sampling holds only against parties that do not see who
was sampled (e.g. users of the released model); a server that samples the
clients itself sees that, and Flower's wrappers accept only
``sampling_method='no-amplification'`` for it.
"""

import math
from typing import Any, Dict, List, Optional, Tuple, TypeAlias

from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant
from flwr.supercore import privacy_accounting as flower_privacy

from shuffle_accountants import _validation
from shuffle_accountants import checkpoints
from shuffle_accountants.events import SubsampledShuffleGaussianEvent
from shuffle_accountants.pld.accountant import ShufflePldAccountant
from shuffle_accountants.rdp import accountant as rdp_accountant

PrivacyConfig = flower_privacy.PrivacyConfig
GaussianPrivacyEvent = flower_privacy.GaussianPrivacyEvent
SamplingMethod = flower_privacy.SamplingMethod
NeighboringRelation = flower_privacy.NeighboringRelation
PrivacySpent = flower_privacy.PrivacySpent

ACCOUNTING_METHOD = 'shuffle-accountants-pld'
# Version 2: sealed with the ledger files' digest (`checkpoints.seal_state`).
STATE_SCHEMA_VERSION = 2
READABLE_SCHEMA_VERSIONS = (1, 2)

_DpRelation: TypeAlias = rdp_privacy_accountant.NeighborRel
# Every model Flower's PrivacyConfig accepts, with the relation of the RDP
# route and the library event's noise multiplier in units of Flower's σ.
_MODELS = {
    (SamplingMethod.NO_AMPLIFICATION, NeighboringRelation.ADD_OR_REMOVE_ONE):
        (_DpRelation.ADD_OR_REMOVE_ONE, 2.0),
    (SamplingMethod.POISSON, NeighboringRelation.ADD_OR_REMOVE_ONE):
        (_DpRelation.ADD_OR_REMOVE_ONE, 2.0),
    (SamplingMethod.WITHOUT_REPLACEMENT, NeighboringRelation.REPLACE_ONE):
        (_DpRelation.REPLACE_ONE, 1.0),
}
# dp_accounting's default orders and the library's, so the RDP route is
# never above dp_accounting's RDP accountant at its defaults.
_RDP_ORDERS = tuple(sorted(set(rdp_accountant.DEFAULT_ORDERS) | set(
    float(order) for order in rdp_privacy_accountant.DEFAULT_RDP_ORDERS)))
# Poisson's PLD grid: the RDP route's ε over this many steps, rounded down
# to a power of two (a few grids over a run) within these spacings.
_POISSON_GRID_STEPS = 2**13
_POISSON_GRIDS = (2.0**-14, 2.0**-7)
# Ledgers whose routes are kept: the current one and `would_exceed`'s next.
_KEPT_LEDGERS = 2
_Ledger: TypeAlias = Tuple[Tuple[GaussianPrivacyEvent, int], ...]


def _model(config) -> Tuple[_DpRelation, float]:
  if not isinstance(config, PrivacyConfig):
    raise TypeError('config must be a flwr.supercore.privacy_accounting.'
                    f'PrivacyConfig; got {config!r} of type '
                    f'{type(config).__name__}.')
  key = (config.sampling_method, config.neighboring_relation)
  if key not in _MODELS:
    allowed = ', '.join(f'{s.value!r} with {r.value!r}' for s, r in _MODELS)
    raise ValueError(
        f'sampling_method={config.sampling_method!r} with neighboring_'
        f'relation={config.neighboring_relation!r} cannot be certified; '
        f'the supported models are {allowed}.')
  return _MODELS[key]


def _check_event(event, config: PrivacyConfig) -> GaussianPrivacyEvent:
  if not isinstance(event, GaussianPrivacyEvent):
    raise TypeError('event must be a flwr.supercore.privacy_accounting.'
                    f'GaussianPrivacyEvent; got {event!r} of type '
                    f'{type(event).__name__}.')
  if event.population_size != config.population_size:
    raise ValueError(
        f'event.population_size={event.population_size} differs from the '
        f'config\'s population_size={config.population_size}; the accountant '
        'certifies one population.')
  return event


def _check_count(count) -> int:
  if isinstance(count, bool) or not isinstance(count, int):
    raise TypeError(f'count must be an integer >= 1; got {count!r} of type '
                    f'{type(count).__name__}.')
  return _validation.check_integer('count', count, 1)


class PldAccountant:
  """Flower ``PrivacyAccountant`` backend with certified PLD accounting.

  Example::

      from flwr.supercore.privacy_accounting import (
          NeighboringRelation, PrivacyConfig, SamplingMethod)
      from shuffle_accountants.adapters.flower import PldAccountant

      accountant = PldAccountant(PrivacyConfig(
          target_delta=1e-5, population_size=100,
          neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE,
          sampling_method=SamplingMethod.NO_AMPLIFICATION))
      strategy = DifferentialPrivacyServerSideFixedClipping(
          FedAvg(), noise_multiplier=1.0, clipping_norm=1.0,
          num_sampled_clients=10, accountant=accountant)

  Every ε and δ is a certified upper bound for the releases described in
  the module docstring (the smaller of the PLD and RDP routes). The state
  (`state_dict`) is the configuration and the ledger of composed events,
  JSON-serializable and sealed with the ledger files' digest
  (`shuffle_accountants.checkpoints.seal_state`); restoring it checks the
  digest (an edited count or noise is refused) and rebuilds the same
  ledger, so ε is the same bit for bit.
  """

  def __init__(self, config: PrivacyConfig) -> None:
    self._relation, self._scale = _model(config)
    self._config = config
    self._compositions: List[Tuple[GaussianPrivacyEvent, int]] = []
    # The releases per distinct event, in order of first appearance.
    self._counts: Dict[GaussianPrivacyEvent, int] = {}
    # Both routes' accountants of the last ledgers asked about.
    self._built: Dict[_Ledger, tuple] = {}

  @property
  def config(self) -> PrivacyConfig:
    """The privacy configuration."""
    return self._config

  @property
  def num_releases(self) -> int:
    """The number of composed private releases."""
    return sum(self._counts.values())

  def _rdp_event(self, event: GaussianPrivacyEvent) -> dp_event.DpEvent:
    """dp_accounting's event of the release (the RDP route)."""
    gaussian = dp_event.GaussianDpEvent(event.noise_multiplier)
    method = self._config.sampling_method
    if method == SamplingMethod.NO_AMPLIFICATION:
      return gaussian
    if method == SamplingMethod.POISSON:
      return dp_event.PoissonSampledDpEvent(
          event.sample_size / event.population_size, gaussian)
    return dp_event.SampledWithoutReplacementDpEvent(
        event.population_size, event.sample_size, gaussian)

  def _pld_event(self, event: GaussianPrivacyEvent) -> dp_event.DpEvent:
    """The event the PLD route composes (module docstring)."""
    method = self._config.sampling_method
    if method == SamplingMethod.POISSON:
      return self._rdp_event(event)
    if method == SamplingMethod.NO_AMPLIFICATION:
      return SubsampledShuffleGaussianEvent(
          1, 1, self._scale * event.noise_multiplier)
    return SubsampledShuffleGaussianEvent(
        event.population_size, event.sample_size,
        self._scale * event.noise_multiplier)

  def _poisson_grid(self, rdp: rdp_accountant.ShuffleRdpAccountant) -> float:
    """The PLD grid of a Poisson ledger, from its RDP ε at target_delta.

    Sound on any grid (dp_accounting's pessimistic PMFs); this one resolves
    ε to about 1 / 8192 of itself at a cost that hardly grows with ε.
    """
    epsilon = rdp.get_epsilon(self._config.target_delta)
    finest, coarsest = _POISSON_GRIDS
    if not 0 < epsilon < math.inf:
      return finest if epsilon == 0 else coarsest
    step = 2.0**math.floor(math.log2(epsilon / _POISSON_GRID_STEPS))
    return min(max(step, finest), coarsest)

  def _replayed(self, ledger: _Ledger) -> tuple:
    """Both routes' accountants holding `ledger`, each distinct event
    composed once with its count."""
    rdp = rdp_accountant.ShuffleRdpAccountant(
        orders=_RDP_ORDERS, neighboring_relation=self._relation)
    for event, count in ledger:
      rdp.compose(self._rdp_event(event), count)
    if self._config.sampling_method == SamplingMethod.POISSON:
      try:
        return self._composed(ShufflePldAccountant(
            _DpRelation.ADD_OR_REMOVE_ONE, self._poisson_grid(rdp)),
                              ledger), rdp
      except ValueError:  # GridTooFineError: beyond the grid point budget
        # The automatic grid answers with the RDP route there.
        return self._composed(ShufflePldAccountant(
            _DpRelation.ADD_OR_REMOVE_ONE), ledger), rdp
    return self._composed(ShufflePldAccountant(), ledger), rdp

  def _composed(self, pld: ShufflePldAccountant, ledger: _Ledger
                ) -> ShufflePldAccountant:
    for event, count in ledger:
      pld.compose(self._pld_event(event), count)
    return pld

  def _accountants_of(self, ledger: _Ledger) -> tuple:
    """Both routes of `ledger`, built on its first request and kept while
    it is among the last `_KEPT_LEDGERS` asked about."""
    if ledger not in self._built:
      while len(self._built) >= _KEPT_LEDGERS:
        del self._built[next(iter(self._built))]
      self._built[ledger] = self._replayed(ledger)
    return self._built[ledger]

  @property
  def _accountants(self):
    return self._accountants_of(tuple(self._counts.items()))

  def _with(self, event: GaussianPrivacyEvent, count: int) -> _Ledger:
    """The ledger after `count` more releases `event`."""
    counts = dict(self._counts)
    counts[event] = counts.get(event, 0) + count
    return tuple(counts.items())

  def compose(self, event: GaussianPrivacyEvent, count: int = 1) -> None:
    """Composes `count` identical releases `event`."""
    event = _check_event(event, self._config)
    count = _check_count(count)
    self._compositions.append((event, count))
    self._counts = dict(self._with(event, count))

  @staticmethod
  def _epsilon(accountants, delta: float) -> float:
    return float(min(accountant.get_epsilon(delta)
                     for accountant in accountants))

  def get_epsilon(self, delta: float) -> float:
    """Certified ε (upper bound) after every release so far, at `delta`."""
    delta = _validation.check_real('delta', delta, 0.0, 1.0,
                                   min_inclusive=False, max_inclusive=False)
    return self._epsilon(self._accountants, delta)

  def get_delta(self, epsilon: float) -> float:
    """Certified δ (upper bound) after every release so far, at `epsilon`."""
    epsilon = _validation.check_real('epsilon', epsilon, 0.0)
    return float(min(accountant.get_delta(epsilon)
                     for accountant in self._accountants))

  def get_privacy_spent(self, delta: Optional[float] = None) -> PrivacySpent:
    """Certified (ε, δ) at `delta` (default: the config's target_delta)."""
    delta = self._config.target_delta if delta is None else delta
    return PrivacySpent(epsilon=self.get_epsilon(delta), delta=delta,
                        num_releases=self.num_releases,
                        accounting_method=ACCOUNTING_METHOD)

  def would_exceed(self, event: GaussianPrivacyEvent,
                   max_epsilon: Optional[float] = None,
                   count: int = 1) -> bool:
    """Whether `count` more releases `event` would take the certified ε at
    the config's target_delta above `max_epsilon` (default: the config's).

    Leaves this accountant unchanged.
    """
    event = _check_event(event, self._config)
    count = _check_count(count)
    limit = self._config.max_epsilon if max_epsilon is None else max_epsilon
    if limit is None:
      raise ValueError('max_epsilon must be given, to would_exceed or in '
                       'PrivacyConfig(max_epsilon=...); got None for both.')
    limit = _validation.check_real('max_epsilon', limit, 0.0,
                                   min_inclusive=False)
    projected = self._accountants_of(self._with(event, count))
    return self._epsilon(projected, self._config.target_delta) > limit

  def state_dict(self, *, key: Optional[bytes] = None) -> Dict[str, Any]:
    """JSON-serializable state: the configuration, the composed events and
    their digest ('integrity'; with `key` an HMAC-SHA256)."""
    config = self._config
    return checkpoints.seal_state({
        'schema_version': STATE_SCHEMA_VERSION,
        'backend': ACCOUNTING_METHOD,
        'config': {
            'target_delta': config.target_delta,
            'population_size': config.population_size,
            'neighboring_relation': NeighboringRelation(
                config.neighboring_relation).value,
            'sampling_method': SamplingMethod(config.sampling_method).value,
            'max_epsilon': config.max_epsilon,
        },
        'compositions': [{
            'event': {'noise_multiplier': event.noise_multiplier,
                      'sample_size': event.sample_size,
                      'population_size': event.population_size},
            'count': count,
        } for event, count in self._compositions],
    }, key)

  def load_state_dict(self, state: Dict[str, Any], *,
                      key: Optional[bytes] = None,
                      allow_unverified: bool = False) -> None:
    """Restores a `state_dict` of an accountant with the same config, after
    checking its digest (`key`: the one it was sealed with); a state
    without one (schema 1) only with `allow_unverified=True`."""
    if not isinstance(state, dict):
      raise TypeError(f'state must be a dict from state_dict(); got '
                      f'{type(state).__name__}.')
    if state.get('backend') != ACCOUNTING_METHOD:
      raise ValueError(f'state backend={state.get("backend")!r} was not '
                       f'written by this accountant ({ACCOUNTING_METHOD!r}).')
    state = checkpoints.verified_state(
        state, key=key, allow_unverified=allow_unverified,
        source="the PldAccountant's state")
    if state.get('schema_version') not in READABLE_SCHEMA_VERSIONS:
      raise ValueError(
          f'state schema_version={state.get("schema_version")!r}; this '
          f'accountant reads versions {list(READABLE_SCHEMA_VERSIONS)}.')
    try:
      saved = state['config']
      config = PrivacyConfig(
          target_delta=saved['target_delta'],
          population_size=saved['population_size'],
          neighboring_relation=NeighboringRelation(
              saved['neighboring_relation']),
          sampling_method=SamplingMethod(saved['sampling_method']),
          max_epsilon=saved['max_epsilon'])
      compositions = [
          (GaussianPrivacyEvent(**entry['event']), _check_count(entry['count']))
          for entry in state['compositions']]
    except (KeyError, TypeError, ValueError) as error:
      raise ValueError(f'state is not a valid state_dict(): {error}') from None
    if config != self._config:
      raise ValueError(f'state config {config} differs from this '
                       f'accountant\'s {self._config}.')
    counts: Dict[GaussianPrivacyEvent, int] = {}
    for event, count in compositions:
      _check_event(event, config)
      counts[event] = counts.get(event, 0) + count
    self._compositions = compositions
    self._counts = counts
