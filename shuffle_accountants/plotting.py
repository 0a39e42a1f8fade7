"""Epsilon per epoch or round of a training run, as numbers or a figure.

`epsilon_history` reads what a run recorded: an Opacus accountant (ours,
such as ``"shuffle_checkin"``, or Opacus' own) or a `PrivacyEngine` holding
one, whose run-length ``history`` of (noise_multiplier, sample_rate, steps)
it re-accounts after every epoch (each point is the accountant's own
certified ε of the steps so far); or Flower's ``Result`` of a strategy of
`shuffle_accountants.adapters.flower`, whose training metrics carry each
round's certified ``dp-epsilon``. `plot_history` draws it (needs the `plot`
extra). Neither imports Opacus or Flower: they read the objects given.
"""

import copy
import math
from typing import List, Optional, Tuple

import attr

from shuffle_accountants import _validation
from shuffle_accountants import figure_style

__all__ = ['EpsilonHistory', 'epsilon_history', 'plot_history']


@attr.s(frozen=True, auto_attribs=True)
class EpsilonHistory:
  """ε (certified upper bounds) after each epoch or round of a run, at δ."""
  unit: str  # 'epoch', 'step' or 'round'
  points: Tuple[float, ...]  # epochs (possibly fractional), steps or rounds
  epsilons: Tuple[float, ...]
  delta: float


def _truncated(history, steps: int) -> List[tuple]:
  """The first `steps` steps of a run-length history."""
  kept, left = [], steps
  for noise_multiplier, sample_rate, count in history:
    if left <= 0:
      break
    kept.append((noise_multiplier, sample_rate, min(count, left)))
    left -= count
  return kept


def _opacus_history(accountant, delta: Optional[float]) -> EpsilonHistory:
  if delta is None:
    raise ValueError('delta is required for an Opacus accountant (the '
                     'target delta of get_epsilon); got None.')
  delta = _validation.check_real('delta', delta, 0.0, 1.0,
                                 min_inclusive=False, max_inclusive=False)
  history = [tuple(entry) for entry in accountant.history if entry[2] > 0]
  if not history:
    raise ValueError('the accountant has no steps yet: train first (its '
                     'history is empty).')
  total = sum(count for _, _, count in history)
  rates = {sample_rate for _, sample_rate, _ in history}
  if len(rates) == 1:
    # One sample rate: an epoch is 1/q steps (Opacus' Poisson loader).
    per_epoch = max(1, round(1 / rates.pop()))
    unit = 'epoch'
  else:
    per_epoch, unit = 1, 'step'
  ends = list(range(per_epoch, total, per_epoch)) + [total]
  points, epsilons = [], []
  for end in ends:
    # A copy holding the first `end` steps answers as the run did then.
    prefix = copy.copy(accountant)
    prefix.history = _truncated(history, end)
    points.append(end / per_epoch)
    epsilons.append(float(prefix.get_epsilon(delta)))
  return EpsilonHistory(unit, tuple(points), tuple(epsilons), delta)


def _flower_history(result) -> EpsilonHistory:
  rounds, epsilons, deltas = [], [], set()
  for server_round, metrics in sorted(result.train_metrics_clientapp.items()):
    if 'dp-epsilon' in metrics:
      rounds.append(float(server_round))
      epsilons.append(float(metrics['dp-epsilon']))
      deltas.add(float(metrics['dp-delta']))
  if not rounds:
    raise ValueError('the Result has no round with a dp-epsilon training '
                     'metric: train with a strategy of shuffle_accountants.'
                     'adapters.flower, which records it.')
  if len(deltas) != 1:
    raise ValueError(f'the rounds report different dp-delta values '
                     f'{sorted(deltas)}: their epsilons are not one curve.')
  return EpsilonHistory('round', tuple(rounds), tuple(epsilons), deltas.pop())


def epsilon_history(source, delta: Optional[float] = None) -> EpsilonHistory:
  """ε after each epoch (Opacus) or round (Flower) of a run.

  Args:
    source: an Opacus accountant with a ``history`` (this package's or
      Opacus' own), a ``PrivacyEngine`` (its ``accountant`` is read), or the
      ``Result`` a Flower strategy's ``start`` returned.
    delta: the target δ (Opacus; required). A Flower ``Result`` carries its
      own (``dp-delta``); giving another raises ValueError.

  Returns:
    `EpsilonHistory`: with one sample rate, one point per epoch (1/q steps;
    the last point is the run's end, possibly mid-epoch), else per step.
  """
  if hasattr(source, 'train_metrics_clientapp'):
    found = _flower_history(source)
    if delta is not None and delta != found.delta:
      raise ValueError(f'delta={delta} differs from the dp-delta '
                       f'{found.delta} the rounds were accounted at.')
    return found
  accountant = getattr(source, 'accountant', source)
  if not (hasattr(accountant, 'history')
          and hasattr(accountant, 'get_epsilon')):
    raise TypeError(f'source must be an Opacus accountant or PrivacyEngine, '
                    f'or a Flower Result; got {type(source).__name__}.')
  return _opacus_history(accountant, delta)


def plot_history(source, delta: Optional[float] = None, axes=None,
                 label: Optional[str] = None):
  """Draws `epsilon_history(source, delta)` on `axes` (a new figure if None).

  Returns the matplotlib Axes. Needs the `plot` extra (matplotlib).
  """
  history = epsilon_history(source, delta)
  if axes is None:
    try:
      from matplotlib import pyplot
    except ImportError as missing:
      raise _validation.missing_extra(missing, 'plot',
                                      'plot_history') from missing
    _, axes = pyplot.subplots(figsize=(6, 3.5))
  finite = [(x, y) for x, y in zip(history.points, history.epsilons)
            if math.isfinite(y)]
  label = label or 'certified epsilon'
  if len(finite) < len(history.points):
    # A step without noise: epsilon is infinite from there on, said so.
    label += f' (infinite from {history.unit} {history.points[len(finite)]:g})'
  axes.plot(*(zip(*finite) if finite else ([], [])), label=label,
            **figure_style.series_style(len(axes.lines)))
  axes.set_xlabel(history.unit)
  axes.set_ylabel(f'epsilon at delta = {history.delta:g}')
  axes.grid(True, alpha=0.3)
  axes.legend()
  return axes
