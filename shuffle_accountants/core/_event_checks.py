"""Checks of shuffle events shared by both accountants, with their messages.

IDs: APPROX-LDP-NO-RDP, POISSON-UNSOUND, REPLACE-ONE-ONLY,
DELETION-AS-REPLACE-ONE, SUM-OF-BITS-DELETION

Each returns None when the event is acceptable, or the
`CompositionErrorDetails` that `PrivacyAccountant.compose` turns into an
`UnsupportedEventError` naming the user's event.
"""

from typing import Optional, TypeAlias

from dp_accounting import dp_event
from dp_accounting import privacy_accountant

from shuffle_accountants import events
from shuffle_accountants.core import _event_specs

NeighboringRelation: TypeAlias = privacy_accountant.NeighboringRelation
CompositionErrorDetails: TypeAlias = (
    privacy_accountant.PrivacyAccountant.CompositionErrorDetails)


def error(event: dp_event.DpEvent, message: str) -> CompositionErrorDetails:
  return CompositionErrorDetails(invalid_event=event, error_message=message)


def check_relation(relation: NeighboringRelation, reported: dp_event.DpEvent
                   ) -> Optional[CompositionErrorDetails]:
  if relation is NeighboringRelation.REPLACE_ONE:
    return None
  spec = _event_specs.spec_of(reported)
  if spec is not None and relation.name in spec.relations:
    return None
  if relation is NeighboringRelation.REPLACE_SPECIAL:
    names = [event_type.__name__ for event_type
             in _event_specs.defined_under(relation.name)]
    return error(reported, (
        'under NeighboringRelation.REPLACE_SPECIAL (deletion: one report '
        'replaced by the randomizer\'s output on a reference input) only '
        f'{", ".join(names[:-1])} and {names[-1]} are accounted; '
        f'{type(reported).__name__} is defined under REPLACE_ONE. Construct '
        'the accountant with neighboring_relation='
        'NeighboringRelation.REPLACE_ONE.'))
  return error(reported, (
      'shuffle-model guarantees hold only under '
      'NeighboringRelation.REPLACE_ONE (the number of shuffled reports '
      f'reveals membership under add/remove); this accountant uses {relation}.'
      ' Construct it with neighboring_relation=NeighboringRelation.REPLACE_ONE.'
  ))


def check_sampled_shuffle(event: dp_event.SampledWithoutReplacementDpEvent
                          ) -> Optional[CompositionErrorDetails]:
  """A hidden sample of m of N users whose m reports are shuffled."""
  inner = event.event
  if not isinstance(inner, events.ShuffleEvent):
    return error(event, (
        'SampledWithoutReplacementDpEvent must wrap a ShuffleEvent directly; '
        f'got {type(inner).__name__}. CheckInEvent and '
        'SubsampledShuffleGaussianEvent already include their sampling.'))
  if inner.num_users != event.sample_size:
    return error(event, (
        f'the wrapped ShuffleEvent has num_users={inner.num_users} but '
        f'sample_size={event.sample_size}: the shuffled reports are those '
        'of the sampled users, so they must be equal.'))
  if not 1 <= event.sample_size <= event.source_dataset_size:
    return error(event, (
        f'sample_size={event.sample_size} must be in [1, '
        f'source_dataset_size={event.source_dataset_size}].'))
  return None


def poisson_shuffle_error(event: dp_event.PoissonSampledDpEvent
                          ) -> CompositionErrorDetails:
  return error(event, (
      'Poisson subsampling of a shuffle round is not supported: shuffle '
      'guarantees are replace-one bounds for a fixed, public number of '
      'reports, so Poisson-subsampling theorems do not apply to them '
      '(POISSON-UNSOUND, the flaw in Girgis et al. Section 4: '
      '`shuffle-accountant '
      'reference POISSON-UNSOUND`). Use '
      'SampledWithoutReplacementDpEvent(population, sample_size, '
      'ShuffleEvent(num_users=sample_size, ...)) for a hidden fixed-size '
      'sample, or CheckInEvent for Bernoulli participation with a visible '
      'number of reports.'))


def poisson_replace_one_rdp_error(event: dp_event.PoissonSampledDpEvent
                                  ) -> CompositionErrorDetails:
  """Why the RDP route refuses Poisson sampling under replace-one, and what to
  use."""
  return error(event, (
      f'{event} under REPLACE_ONE: dp_accounting has no RDP bound for '
      'Poisson sampling under replace-one. Use ShufflePldAccountant, which '
      'accounts it under replace-one (and every shuffle event), or, for a '
      'ledger without shuffle events, ShuffleRdpAccountant(neighboring_'
      'relation=NeighboringRelation.ADD_OR_REMOVE_ONE) (add/remove DP-SGD), '
      'or SampledWithoutReplacementDpEvent for a fixed-size sample.'))
