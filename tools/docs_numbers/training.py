"""The computed numbers of docs/training.md."""

import functools
import math
import subprocess
import sys

from .core import ROOT
from .core import sig
from .core import table
from .core import table_cells
from .core import value


@table('training.modes', slow=True)
def _training_modes():
  """The table examples/training_modes.py prints."""
  result = subprocess.run(
      [sys.executable, str(ROOT / 'examples' / 'training_modes.py')],
      capture_output=True, text=True, check=True, cwd=ROOT / 'examples')
  cells = table_cells('\n'.join(line for line in result.stdout.splitlines()
                           if line.startswith('|')))
  return cells[0], cells[2:]


@functools.lru_cache(maxsize=None)
def _threat_models():
  """epsilon(1e-5) on training.md's setting per threat model (PLD)."""
  import dp_accounting

  from shuffle_accountants import DistributedCheckInEvent
  from shuffle_accountants import ShufflePldAccountant
  num_users, rate, sigma, steps = 1437, 1 / 12, 1.5, 180
  per_participant = sigma / math.sqrt(rate * num_users)
  central = dp_accounting.pld.PLDAccountant(
      dp_accounting.NeighboringRelation.REPLACE_ONE)
  central.compose(dp_accounting.PoissonSampledDpEvent(
      rate, dp_accounting.GaussianDpEvent(sigma)), steps)

  def distributed(participation):
    return ShufflePldAccountant().compose(DistributedCheckInEvent(
        num_users, rate, per_participant, participation=participation),
        steps).get_epsilon(1e-5)

  return dict(
      central=central.get_epsilon(1e-5), hidden=distributed('hidden'),
      revealed=distributed('revealed'),
      unamplified=ShufflePldAccountant().compose(
          dp_accounting.GaussianDpEvent(sigma), steps).get_epsilon(1e-5))


@table('training.threat_models', slow=True)
def _training_threat_models():
  epsilons = _threat_models()
  rows = [
      ('central DP-SGD, Poisson sampling', 'every clipped gradient (trusted)',
       'dp_accounting `PoissonSampledDpEvent(q, GaussianDpEvent(σ))`',
       epsilons['central']),
      ('secure aggregation, count only (`participation="hidden"`)',
       'the sum and the count k', '`DistributedCheckInEvent(n, q, σ/√(qn), '
       'participation="hidden")` (SECAGG-HIDDEN)', epsilons['hidden']),
      ('secure aggregation, participants revealed (default)',
       'the sum and who took part',
       '`DistributedCheckInEvent(n, q, σ/√(qn))` (SECAGG-REVEALED, exact)',
       epsilons['revealed']),
      ('no amplification', 'the sum, every round counted as one the user '
       'joins', '`GaussianDpEvent(σ)` per step', epsilons['unamplified']),
  ]
  return (['threat model', 'the server sees', 'accounted as',
           'certified ε, replace-one'],
          [[model, sees, event, sig(epsilon, 3)]
           for model, sees, event, epsilon in rows])


value('training.revealed_over_hidden', slow=True)(lambda: sig(
    _threat_models()['revealed'] / _threat_models()['hidden'], 2))
