"""`DpEvent`s for the shuffle model.

Like `dp_accounting.dp_event`, each event documents the mechanism it stands
for completely, so that an accountant can be written from the docstring alone.
All shuffle events are defined under the *replace-one* neighbouring relation
over a public population of users (`NeighboringRelation.REPLACE_ONE`): two
datasets are neighbours when they have the same number of users and differ in
the data of exactly one of them. Under add/remove the number of shuffled
reports would reveal membership, so no amplification result applies.

Events are frozen `attrs` classes at module level, so that
`DpEvent.to_named_tuple()` / `from_named_tuple()` round-trip them. Invalid
parameters raise at construction.
"""

from typing import Optional

import attr
from dp_accounting import dp_event

from shuffle_accountants import _validation


def _num_users(instance, attribute, value):
  del instance
  _validation.check_integer(attribute.name, value, 1)


def _local_epsilon(instance, attribute, value):
  del instance
  _validation.check_real(attribute.name, value, 0.0)


def _num_categories(instance, attribute, value):
  del instance
  if value is not None:
    _validation.check_integer(attribute.name, value, 2)


def _local_delta(instance, attribute, value):
  del instance
  _validation.check_real(attribute.name, value, 0.0, 1.0, max_inclusive=False)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ShuffleEvent(dp_event.DpEvent):
  """One round of the shuffle model with local randomizers.

  Each of `num_users` users applies a local randomizer to its own record and
  sends the report to a trusted shuffler, which releases all `num_users`
  reports in a uniformly random order (only the multiset reaches the server).
  Randomizers may be chosen adaptively from earlier rounds' outputs, and may
  differ between users, as long as each satisfies the local guarantee below.

  * `num_categories` is None: each randomizer is `local_epsilon`-LDP (when
    `local_delta` is 0) for arbitrary inputs and outputs.
  * `num_categories` = k >= 2: each randomizer is k-ary randomized response
    with parameter `local_epsilon`: it reports its true category with
    probability e^eps0 / (e^eps0 + k - 1) and each other category with
    probability 1 / (e^eps0 + k - 1).
  * `local_delta` > 0: each randomizer is (`local_epsilon`, `local_delta`)-LDP
    (approximate LDP). No finite RDP bound exists for such randomizers.

  Neighbouring relation: replace-one over the `num_users` users (the number of
  users is public).

  Attributes:
    num_users: number of users n whose reports are shuffled, an integer >= 1.
    local_epsilon: the local privacy parameter eps0 >= 0.
    num_categories: None for a generic randomizer, or k >= 2 for k-RR.
    local_delta: the local delta0 in [0, 1); 0 means pure LDP.
  """
  num_users: int = attr.ib(validator=_num_users)
  local_epsilon: float = attr.ib(validator=_local_epsilon)
  num_categories: Optional[int] = attr.ib(default=None,
                                          validator=_num_categories)
  local_delta: float = attr.ib(default=0.0, validator=_local_delta)
