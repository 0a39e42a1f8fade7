"""The computed numbers of docs/federated.md."""

import math

from .core import sig
from .core import table
from .core import value

# n clients, expected cohort q n, update noise σ_agg C at that cohort,
# T rounds, δ.
FEDERATED = dict(num_users=1000, checkin_rate=0.1, noise_multiplier=5.0,
                 rounds=100, delta=1e-5)


def _federated_central(sampling: str, relation: str, sample_size: int
                       ) -> float:
  """ε of Flower's central release through our PldAccountant."""
  from flwr.supercore import privacy_accounting as flower

  from shuffle_accountants.adapters.flower import PldAccountant
  setting = FEDERATED
  accountant = PldAccountant(flower.PrivacyConfig(
      target_delta=setting['delta'], population_size=setting['num_users'],
      neighboring_relation=flower.NeighboringRelation(relation),
      sampling_method=flower.SamplingMethod(sampling)))
  accountant.compose(flower.GaussianPrivacyEvent(
      setting['noise_multiplier'], sample_size, setting['num_users']),
                     setting['rounds'])
  return accountant.get_epsilon(setting['delta'])


def _federated_secure_aggregation(participation: str) -> float:
  """ε of `DistributedNoiseFixedClipping` with `participation`."""
  from shuffle_accountants import DistributedCheckInEvent
  from shuffle_accountants import ShufflePldAccountant
  setting = FEDERATED
  cohort = setting['num_users'] * setting['checkin_rate']
  event = DistributedCheckInEvent(
      setting['num_users'], setting['checkin_rate'],
      setting['noise_multiplier'] / math.sqrt(cohort),
      participation=participation)
  return ShufflePldAccountant().compose(event, setting['rounds']).get_epsilon(
      setting['delta'])


@table('federated.threat_models')
def _federated_threat_models():
  cohort = int(FEDERATED['num_users'] * FEDERATED['checkin_rate'])
  population = FEDERATED['num_users']
  rows = [
      ('central DP, trusted server', 'no-amplification, add-or-remove-one',
       '`DifferentialPrivacyServerSideFixedClipping(..., accountant='
       'PldAccountant(config))`',
       _federated_central('no-amplification', 'add-or-remove-one', cohort)),
      ('central DP, trusted server', 'the same release, replace-one',
       '`PldAccountant` with `without-replacement`, sample_size = n',
       _federated_central('without-replacement', 'replace-one', population)),
      ('central DP, secret Poisson sample (not against the server)',
       'poisson, add-or-remove-one',
       ('`SampledServerSideFixedClipping(..., '
        'accountant=PldAccountant(config))`'),
       _federated_central('poisson', 'add-or-remove-one', cohort)),
      ('secure aggregation, participants revealed', 'check-in, replace-one',
       '`DistributedNoiseFixedClipping(..., participation="revealed")`',
       _federated_secure_aggregation('revealed')),
      ('anonymous check-in, participants hidden', 'check-in, replace-one',
       '`DistributedNoiseFixedClipping(..., participation="hidden")`',
       _federated_secure_aggregation('hidden')),
  ]
  return (('threat model', 'accounting model', 'from Flower', 'ε'),
          [(model, accounting, api, sig(epsilon, 4))
           for model, accounting, api, epsilon in rows])


@value('federated.server_view')
def _federated_server_view():
  """ε of what the simulated-aggregation server sees (revealed), after one
  round and after all rounds of the setting."""
  from flwr.serverapp.strategy import FedAvg

  from shuffle_accountants.adapters.flower import DistributedNoiseFixedClipping
  setting = FEDERATED
  strategy = DistributedNoiseFixedClipping(
      FedAvg(fraction_evaluate=0.0), setting['noise_multiplier'], 1.0,
      num_users=setting['num_users'], checkin_rate=setting['checkin_rate'],
      target_delta=setting['delta'])
  seen = []
  for rounds in (1, setting['rounds']):
    strategy.num_rounds = rounds
    seen.append(sig(strategy.server_view_epsilon(), 3))
  return f'{seen[0]} after one round, {seen[1]} after {setting["rounds"]}'
