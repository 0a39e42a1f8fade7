"""Our Flower backend `PldAccountant` against dp_accounting's PLD and Flower's
`RdpAccountant` (prints tables; not a test).

Table 1, for each of Flower's three accounting models (no amplification,
Poisson and without replacement), population n = 1000, sample sizes m in
{10, 100} (rate m / n), noise multipliers σ in {0.7, 1, 2, 5} and rounds T
in {10, 100, 1000} at δ = 1e-5: our certified ε; dp_accounting's PLD ε of
the same release (``PLDAccountant`` under add-or-remove on
``GaussianDpEvent`` or ``PoissonSampledDpEvent``; it has no PLD of sampling
without replacement) and our ratio to it (the target is at most 1.001);
Flower's RDP ε and our ratio to it (the target is at most 1). The T rounds
are composed in one call (``compose(event, T)``) and ε is asked once.

Table 2, the accountant's time per round at round 1000 (the median of
rounds 1000 to 1004; ε after round 1000) as Flower's wrappers spend it
(``would_exceed`` of the next round, ``compose``, ε), in milliseconds and
as a ratio to dp_accounting's own PLD of 1000 Poisson-subsampled
Gaussians (q = 0.01, σ = 1) computed in the same run;
the target is at most 50 ms. For the distributed strategy, what its round
takes: one `ShufflePldAccountant` of the ledger with the round, asked ε
(the budget check; it then serves as the accountant).

Table 3, the issue-49 setting (n = 1000, q = 0.1, σ = 5, the docs'),
every mode in a process of its own: the accountant's milliseconds of
round 1000 (CPU time, the median of rounds 1000 to 1004, one call each,
after rounds 1 to 999 composed in one call: the same ledger) and the
process's peak
resident memory, each also as a ratio to Flower's own ``RdpAccountant``
in the same run (the target is at most 50 ms and memory that stays flat).
``--one-by-one`` composes rounds 1 to 999 one call each, as a run has
them, and reports their mean ms and the resident memory at rounds 500
and 1000 (flat once the library's bounded caches have filled; slow),
except for Flower's accountant, which recomputes every entry of its
ledger for each ε (about 0.2 s per entry). The modes: Flower's wrappers
with Flower's ``RdpAccountant`` and with our ``PldAccountant`` (each
sampling model), `DistributedNoiseFixedClipping` (its budget check's
projection, ``with_round``, asked ε) and the Skellam SecAgg+ strategies
(docs/federated.md's example on a 10,000-weight model,
`ShuffleRdpAccountant`: the projection asked ε, the round composed, ε).

Without replacement Flower's backend reads σ against the replace-one
sensitivity (dp_accounting's RDP convention); the release our σ describes
(noise σC on updates clipped to C, sensitivity 2C) is Flower's σ/2, so
Flower's accountant gets σ/2 there
(shuffle_accountants/adapters/flower/accountant.py).

Run: python benchmarks/flower.py [--quick] [--round-cost [--one-by-one]]
"""

import functools
import json
import math
import resource
import subprocess
import sys
import time

from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from flwr.supercore.privacy_accounting import GaussianPrivacyEvent
from flwr.supercore.privacy_accounting import NeighboringRelation
from flwr.supercore.privacy_accounting import PrivacyConfig
from flwr.supercore.privacy_accounting import SamplingMethod
from flwr.supercore.privacy_accounting.rdp_accountant import RdpAccountant
import numpy as np

# The timer and the time unit of the other benchmark tables (this folder).
from rdp_vs_pld import _reference_seconds
from rdp_vs_pld import _timed
from shuffle_accountants import ShufflePldAccountant
from shuffle_accountants import ShuffleRdpAccountant
from shuffle_accountants.adapters.flower import PldAccountant
from shuffle_accountants.adapters.flower.strategies import (
  participant_noise_multiplier,
)
from shuffle_accountants.adapters.flower.wrapper import with_round
from shuffle_accountants.events import DistributedCheckInEvent
from shuffle_accountants.events import SkellamSecureSumEvent

DELTA = 1e-5
POPULATION = 1000
MODELS = (
    (SamplingMethod.NO_AMPLIFICATION, NeighboringRelation.ADD_OR_REMOVE_ONE,
     1.0),
    (SamplingMethod.POISSON, NeighboringRelation.ADD_OR_REMOVE_ONE, 1.0),
    (SamplingMethod.WITHOUT_REPLACEMENT, NeighboringRelation.REPLACE_ONE, 0.5),
)
TIMED_ROUND = 1000


def _epsilon(accountant_class, config, sigma, sample_size, rounds):
  accountant = accountant_class(config)
  accountant.compose(GaussianPrivacyEvent(sigma, sample_size, POPULATION),
                     rounds)
  return accountant.get_epsilon(DELTA)


def _dp_accounting_pld(sampling, sigma, sample_size, rounds) -> float:
  """dp_accounting's PLD ε of the release, or nan where it has none."""
  gaussian = dp_event.GaussianDpEvent(sigma)
  if sampling == SamplingMethod.NO_AMPLIFICATION:
    return _dp_accounting_epsilon(gaussian, rounds)  # the same for every m
  if sampling == SamplingMethod.POISSON:
    return _dp_accounting_epsilon(
        dp_event.PoissonSampledDpEvent(sample_size / POPULATION, gaussian),
        rounds)
  return np.nan


@functools.lru_cache(maxsize=None)
def _dp_accounting_epsilon(event, rounds) -> float:
  accountant = pld_privacy_accountant.PLDAccountant()
  return accountant.compose(event, rounds).get_epsilon(DELTA)


def ratio_table(sigmas, sample_sizes, rounds_list):
  header = (f'{"model":>19} {"q":>5} {"σ":>4} {"T":>5} | {"our eps":>9} '
            f'{"dp PLD":>9} {"/dp PLD":>8} | {"Flwr RDP":>9} {"/RDP":>6}')
  print(header)
  print('-' * len(header))
  pld_ratios, rdp_ratios = [], []
  for sampling, relation, flower_scale in MODELS:
    config = PrivacyConfig(DELTA, POPULATION, relation, sampling)
    for sample_size in sample_sizes:
      for sigma in sigmas:
        for rounds in rounds_list:
          ours = _epsilon(PldAccountant, config, sigma, sample_size, rounds)
          reference = _dp_accounting_pld(sampling, sigma, sample_size, rounds)
          rdp = _epsilon(RdpAccountant, config, flower_scale * sigma,
                         sample_size, rounds)
          pld_ratios.append(ours / reference)
          rdp_ratios.append(ours / rdp)
          print(f'{sampling.value:>19} {sample_size / POPULATION:>5g} '
                f'{sigma:>4g} {rounds:>5} | {ours:>9.4g} {reference:>9.4g} '
                f'{pld_ratios[-1]:>8.5f} | {rdp:>9.4g} {rdp_ratios[-1]:>6.3f}')
  pld_ratios, rdp_ratios = np.array(pld_ratios), np.array(rdp_ratios)
  compared = pld_ratios[~np.isnan(pld_ratios)]
  print(f'\nours <= dp_accounting PLD x 1.001 in '
        f'{np.sum(compared <= 1.001)} of {compared.size} cells (largest '
        f'ratio {np.max(compared):.5f}); ours <= Flower RDP in '
        f'{np.sum(rdp_ratios <= 1)} of {rdp_ratios.size} cells (largest '
        f'{np.max(rdp_ratios):.3f}, smallest {np.min(rdp_ratios):.3f})')


def _flower_round(accountant, event):
  """What a Flower wrapper asks of its accountant in one round."""
  accountant.would_exceed(event)
  accountant.compose(event)
  return accountant.get_privacy_spent().epsilon


def _distributed_round(accountant, event):
  """The accounting of one round of `DistributedNoiseFixedClipping` with
  max_epsilon: the budget check's projection (`with_round`: the ledger
  replayed with the round), asked ε, which then serves as the accountant
  and reports that ε (here: the round composed on `accountant`)."""
  epsilon = with_round(accountant, event).get_epsilon(DELTA)
  accountant.compose(event)  # the ledger the next round extends
  return epsilon


def _skellam_round(accountant, event):
  """A Skellam SecAgg+ strategy's round with max_epsilon: the projection
  asked ε (the budget check), then the released sum composed and ε
  reported."""
  with_round(accountant, event).get_epsilon(DELTA)
  accountant.compose(event)
  return accountant.get_epsilon(DELTA)


def _timed_round(accountant, event, one_round):
  """(ε, seconds) of round `TIMED_ROUND` after TIMED_ROUND - 1 rounds (each
  composed as Flower composes it, one call per round): the median seconds
  of rounds TIMED_ROUND ... TIMED_ROUND + 4 (a shared machine's noise)."""
  for _ in range(TIMED_ROUND - 2):
    accountant.compose(event)
  one_round(accountant, event)  # the round before, as a run has it
  timed = [_timed(lambda: one_round(accountant, event)) for _ in range(5)]
  return timed[0][0], float(np.median([seconds for _, seconds in timed]))


def time_table(sample_sizes, reference):
  header = (f'{"mode":>31} {"q":>5} {"σ":>4} | {"eps":>9} {"ms/round":>9} '
            f'{"t/ref":>7}')
  print(header)
  print('-' * len(header))
  sigma = 1.0
  for sampling, relation, _ in MODELS:
    config = PrivacyConfig(DELTA, POPULATION, relation, sampling,
                           max_epsilon=1e9)
    for sample_size in sample_sizes:
      epsilon, seconds = _timed_round(
          PldAccountant(config),
          GaussianPrivacyEvent(sigma, sample_size, POPULATION), _flower_round)
      print(f'{"PldAccountant " + sampling.value:>31} '
            f'{sample_size / POPULATION:>5g} {sigma:>4g} | {epsilon:>9.4g} '
            f'{1000 * seconds:>9.0f} {seconds / reference:>7.3f}')
  for participation in ('revealed', 'hidden'):
    for sample_size in sample_sizes:
      rate = sample_size / POPULATION
      event = DistributedCheckInEvent(
          POPULATION, rate, participant_noise_multiplier(
              sigma, POPULATION, rate), participation=participation)
      epsilon, seconds = _timed_round(ShufflePldAccountant(), event,
                                      _distributed_round)
      print(f'{"distributed " + participation:>31} {rate:>5g} {sigma:>4g} | '
            f'{epsilon:>9.4g} {1000 * seconds:>9.0f} '
            f'{seconds / reference:>7.3f}')


COST_SETTING = {'population': POPULATION, 'sample_size': 100, 'sigma': 5.0}
COST_MODES = ('flower-rdp no-amplification', 'flower-rdp poisson',
              'no-amplification', 'poisson', 'without-replacement',
              'distributed revealed', 'distributed hidden',
              'skellam secagg')
# docs/federated.md's Skellam SecAgg+ example, a 10,000-weight model.
SKELLAM_ROUND = SkellamSecureSumEvent(10_000, 2.0, 1000.0, 3.69e7)


def _cost_accountant(mode: str):
  """(accountant, event, one round) of `mode` in the Table 3 setting."""
  n, m, sigma = (COST_SETTING[key]
                 for key in ('population', 'sample_size', 'sigma'))
  if mode == 'skellam secagg':
    return ShuffleRdpAccountant(), SKELLAM_ROUND, _skellam_round
  if mode.startswith('distributed '):
    rate = m / n
    event = DistributedCheckInEvent(
        n, rate, participant_noise_multiplier(sigma, n, rate),
        participation=mode.split()[1])
    return ShufflePldAccountant(), event, _distributed_round
  name = mode.split()[-1]
  sampling = SamplingMethod(name)
  relation = (NeighboringRelation.REPLACE_ONE
              if sampling == SamplingMethod.WITHOUT_REPLACEMENT
              else NeighboringRelation.ADD_OR_REMOVE_ONE)
  config = PrivacyConfig(DELTA, n, relation, sampling, max_epsilon=1e9)
  backend = RdpAccountant if mode.startswith('flower-rdp') else PldAccountant
  return backend(config), GaussianPrivacyEvent(sigma, m, n), _flower_round


def round_cost(mode: str, rounds: int = TIMED_ROUND,
               one_by_one: bool = False) -> dict:
  """Round `rounds` of `mode`: ε after it, its ms (median of rounds
  `rounds` ... `rounds` + 4, one call each) and the peak resident MiB.

  Rounds 1 ... `rounds` - 1 are composed in one call, the same ledger
  (every accountant here answers from its ledger of distinct events and
  counts), unless `one_by_one`: then each is a round of its own, as a run
  has them, and their mean ms is reported too (Flower's RdpAccountant
  keeps one entry per call and recomputes them all for each ε, about
  0.2 s per entry: it always gets the one call).
  """
  accountant, event, one_round = _cost_accountant(mode)
  seconds, epsilons, resident = [], [], {}
  if mode.startswith('flower-rdp') or not one_by_one:
    accountant.compose(event, rounds - 1)
    seconds, epsilons = [math.nan] * (rounds - 1), [math.nan] * (rounds - 1)
  for _ in range(rounds + 4 - len(seconds)):
    # CPU seconds of this process (single-threaded FFTs): a shared
    # machine's other load does not count.
    start = time.process_time()
    epsilons.append(one_round(accountant, event))
    seconds.append(time.process_time() - start)
    if len(seconds) in (rounds // 2, rounds):
      resident[len(seconds)] = _resident_mib()
  return {'mode': mode, 'epsilon': float(epsilons[rounds - 1]),
          'ms': 1000 * float(np.median(seconds[rounds - 1:])),
          'mean_ms': 1000 * float(np.mean(seconds[:rounds])),
          'peak_mib': resource.getrusage(
              resource.RUSAGE_SELF).ru_maxrss / 1024,
          'half_mib': resident.get(rounds // 2, math.nan),
          'end_mib': resident.get(rounds, math.nan)}


def _resident_mib() -> float:
  """This process's resident memory now (Linux), in MiB."""
  with open('/proc/self/status', encoding='ascii') as status:
    for line in status:
      if line.startswith('VmRSS:'):
        return int(line.split()[1]) / 1024
  return math.nan


def cost_table(rounds: int, one_by_one: bool) -> None:
  """Table 3: each mode in a fresh process (its own peak memory)."""
  results = [json.loads(subprocess.run(
      [sys.executable, __file__, '--one-cost', mode, str(rounds),
       str(int(one_by_one))], check=True, capture_output=True,
      text=True).stdout.splitlines()[-1]) for mode in COST_MODES]
  base = {result['mode'].split()[-1]: result for result in results[:2]}
  print(f'n={COST_SETTING["population"]}, q='
        f'{COST_SETTING["sample_size"] / COST_SETTING["population"]:g}, '
        f'σ={COST_SETTING["sigma"]:g}, round {rounds}; ratios to Flower\'s '
        'RdpAccountant (Poisson for the distributed and Skellam modes)\n')
  header = (f'{"mode":>28} | {"eps":>8} {"ms":>8} {"mean ms":>8} '
            f'{"/RDP":>7} | {"peak MiB":>8} {"/RDP":>6} '
            f'{"MiB half":>8} {"MiB end":>8}')
  print(header)
  print('-' * len(header))
  for result in results:
    reference = base.get(result['mode'].split()[-1], base['poisson'])
    print(f'{result["mode"]:>28} | {result["epsilon"]:>8.4g} '
          f'{result["ms"]:>8.1f} {result["mean_ms"]:>8.1f} '
          f'{result["ms"] / reference["ms"]:>7.3g} | '
          f'{result["peak_mib"]:>8.0f} '
          f'{result["peak_mib"] / reference["peak_mib"]:>6.2f} '
          f'{result["half_mib"]:>8.0f} {result["end_mib"]:>8.0f}')


def main(argv) -> None:
  if argv[:1] == ['--one-cost']:
    print(json.dumps(round_cost(argv[1], int(argv[2]), argv[3] == '1')))
    return
  if '--round-cost' in argv:
    cost_table(100 if '--quick' in argv else TIMED_ROUND,
               '--one-by-one' in argv)
    return
  quick = '--quick' in argv
  reference = _reference_seconds()
  print(f'reference: dp_accounting PLD of 1000 Poisson Gaussians '
        f'(rdp_vs_pld.py), {reference:.2f} s\n')
  if quick:
    ratio_table([1.0], [10], [10])
  else:
    ratio_table([0.7, 1.0, 2.0, 5.0], [10, 100], [10, 100, 1000])
  print(f'\nAccountant time of round {TIMED_ROUND} (target <= 50 ms)\n')
  time_table([10] if quick else [10, 100], reference)


if __name__ == '__main__':
  main(sys.argv[1:])
