"""Our Flower backend `PldAccountant` against Flower's `RdpAccountant` (prints a table; not a test).

For each of Flower's three accounting models (no amplification, Poisson and
without replacement), population n = 1000, sample sizes m in {10, 100}
(rate m / n), noise multipliers σ in {0.7, 1, 2, 5} and rounds T in
{10, 100, 1000} at δ = 1e-5: our certified ε, Flower's RDP ε, their ratio
PLD / RDP (the target is at most 1 everywhere), and the time of each as a
ratio to dp_accounting's own PLD of 1000 Poisson-subsampled Gaussians
(q = 0.01, σ = 1) computed in the same run. The T rounds are composed in
one call (``compose(event, T)``) and ε is asked once; Flower's wrappers
compose one call per round, where Flower's backend recomputes the RDP of
the event every call (about 0.3 s for Poisson, 1 s without replacement)
and ours only when ε is asked.

Without replacement Flower's backend reads σ against the replace-one
sensitivity (dp_accounting's RDP convention); the release our σ describes
(noise σC on updates clipped to C, sensitivity 2C) is Flower's σ/2, so
Flower's accountant gets σ/2 there
(shuffle_accountants/adapters/flower/accountant.py).

Run: python benchmarks/flower.py [--quick]
"""

import logging
import sys

from flwr.supercore.privacy_accounting import GaussianPrivacyEvent
from flwr.supercore.privacy_accounting import NeighboringRelation
from flwr.supercore.privacy_accounting import PrivacyConfig
from flwr.supercore.privacy_accounting import SamplingMethod
from flwr.supercore.privacy_accounting.rdp_accountant import RdpAccountant
import numpy as np

# The timer and the time unit of the other benchmark tables (this folder).
from rdp_vs_pld import _reference_seconds
from rdp_vs_pld import _timed
from shuffle_accountants.adapters.flower import PldAccountant

DELTA = 1e-5
POPULATION = 1000
MODELS = (
    (SamplingMethod.NO_AMPLIFICATION, NeighboringRelation.ADD_OR_REMOVE_ONE, 1.0),
    (SamplingMethod.POISSON, NeighboringRelation.ADD_OR_REMOVE_ONE, 1.0),
    (SamplingMethod.WITHOUT_REPLACEMENT, NeighboringRelation.REPLACE_ONE, 0.5),
)


def _epsilon(accountant_class, config, sigma, sample_size, rounds):
  accountant = accountant_class(config)
  accountant.compose(GaussianPrivacyEvent(sigma, sample_size, POPULATION),
                     rounds)
  return accountant.get_epsilon(DELTA)


def ratio_table(sigmas, sample_sizes, rounds_list, reference):
  header = (f'{"model":>19} {"q":>5} {"σ":>4} {"T":>5} | {"PLD eps":>9} '
            f'{"RDP eps":>9} {"PLD/RDP":>7} | {"t PLD/ref":>9} '
            f'{"t RDP/ref":>9}')
  print(header)
  print('-' * len(header))
  ratios = []
  for sampling, relation, flower_scale in MODELS:
    config = PrivacyConfig(DELTA, POPULATION, relation, sampling)
    for sample_size in sample_sizes:
      for sigma in sigmas:
        for rounds in rounds_list:
          pld, pld_time = _timed(lambda: _epsilon(
              PldAccountant, config, sigma, sample_size, rounds))
          rdp, rdp_time = _timed(lambda: _epsilon(
              RdpAccountant, config, flower_scale * sigma, sample_size,
              rounds))
          ratio = pld / rdp
          ratios.append(ratio)
          print(f'{sampling.value:>19} {sample_size / POPULATION:>5g} '
                f'{sigma:>4g} {rounds:>5} | {pld:>9.4g} {rdp:>9.4g} '
                f'{ratio:>7.3f} | {pld_time / reference:>9.2f} '
                f'{rdp_time / reference:>9.2f}')
  ratios = np.array(ratios)
  print(f'\nPLD <= RDP in {np.sum(ratios <= 1)} of {ratios.size} cells; '
        f'largest ratio {np.max(ratios):.3f}, smallest {np.min(ratios):.3f}')


def main(argv) -> None:
  # dp_accounting logs a warning for every RDP order whose series does not
  # converge (that order is then skipped, which is sound).
  logging.getLogger('absl').setLevel(logging.ERROR)
  quick = '--quick' in argv
  reference = _reference_seconds()
  print(f'reference: dp_accounting PLD of 1000 Poisson Gaussians '
        f'(rdp_vs_pld.py), {reference:.2f} s\n')
  if quick:
    ratio_table([1.0], [10], [10], reference)
  else:
    ratio_table([0.7, 1.0, 2.0, 5.0], [10, 100], [10, 100, 1000], reference)


if __name__ == '__main__':
  main(sys.argv[1:])
