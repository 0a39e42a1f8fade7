"""Three ways to train DP-SGD with Opacus on scikit-learn's digits, side by side.

* central DP-SGD (Opacus' own accountant): the server sees the clipped
  gradients and adds N(0, sigma^2 C^2) once to their sum;
* "shuffle_checkin" (local noise): every participant adds its own
  N(0, s^2 C^2) and a shuffler hands the server the reports, so the sum of k
  participants carries s C sqrt(k);
* "distributed_checkin" (secure aggregation): every participant adds
  N(0, sigma^2 C^2 / (q n)) and secure aggregation reveals the sum, so the
  update carries sigma C sqrt(k / (q n)), sigma C at the expected cohort
  q n, like central DP-SGD. The protocol is simulated by the optimizer's
  sum. Two rows, one training: the server sees who took part (standard
  secure aggregation, the default participation="revealed"), or only the
  count (participation="hidden", an anonymous check-in channel).

The table puts them at equal noise in the update (sigma for central and
distributed, s = sigma / sqrt(q n) for local noise) and adds local noise at
s = sigma, the setting a user switching accountants gets. It prints what is
trusted, the noise in the update, the certified epsilon and the test accuracy.
The check-in modes certify replace-one epsilon; central DP-SGD is shown under
both relations (add/remove by Opacus' PRV accountant, as Opacus prints it;
replace-one by dp_accounting's PLD).

Needs: pip install ".[opacus,examples]" (from a checkout)
Run:   python examples/training_modes.py [--quick]
       (about half a minute; quick: 1 epoch)
"""  # noqa: E501

import math
import time
import warnings

import dp_accounting
from dp_accounting import pld
from opacus import PrivacyEngine

import _digits
from shuffle_accountants.adapters.opacus import ShufflePrivacyEngine

DELTA = 1e-5
DISTRIBUTED = '"distributed_checkin" (participants revealed, default)'
DISTRIBUTED_HIDDEN = '"distributed_checkin", participation="hidden"'


def _parse_args():
  parser = _digits.parser(__doc__.splitlines()[0], noise_multiplier=1.5,
                          noise_help='sigma: aggregate noise multiplier of '
                          'the update')
  parser.add_argument('--quick', action='store_true',
                      help='1 epoch (for smoke tests)')
  args = parser.parse_args()
  if args.quick:
    args.epochs = 1
  return args


def _train(engine, noise_multiplier, args):
  """Trains; returns (test accuracy, epsilon, n, q, steps)."""
  model, optimizer, train_loader, test = _digits.private_model(
      engine, batch_size=args.batch_size, noise_multiplier=noise_multiplier,
      max_grad_norm=args.max_grad_norm, learning_rate=args.learning_rate,
      seed=args.seed)
  for _ in range(args.epochs):
    _digits.train_epoch(model, optimizer, train_loader)
  return (_digits.accuracy(model, test), engine.get_epsilon(DELTA),
          len(train_loader.dataset), train_loader.sample_rate,
          sum(steps for _, _, steps in engine.accountant.history))


def _central_replace_one(noise_multiplier, sample_rate, steps):
  """Central DP-SGD's epsilon under replace-one (dp_accounting's PLD)."""
  accountant = pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
  accountant.compose(dp_accounting.PoissonSampledDpEvent(
      sample_rate, dp_accounting.GaussianDpEvent(noise_multiplier)), steps)
  return accountant.get_epsilon(DELTA)


def main():
  args = _parse_args()
  warnings.filterwarnings('ignore', message='Secure RNG turned off')
  warnings.filterwarnings('ignore', message='Full backward hook')
  # The table states the local-noise factor that this warning names.
  warnings.filterwarnings('ignore', message="accountant='shuffle_checkin'")
  start = time.perf_counter()
  sigma = args.noise_multiplier
  accuracy, add_remove, num_users, rate, steps = _train(
      PrivacyEngine(accountant='prv'), sigma, args)
  cohort = rate * num_users
  local_sigma = sigma / math.sqrt(cohort)
  rows = [
      ('central DP-SGD', 'the server (sees every clipped gradient)',
       'none', 'σC', sigma, accuracy,
       _central_replace_one(sigma, rate, steps), add_remove),
  ]
  for label, accountant, participant_sigma, trusted in (
      ('"shuffle_checkin", s = σ', 'shuffle_checkin', sigma,
       'the shuffler (server sees every report)'),
      ('"shuffle_checkin", s = σ/√(qn)', 'shuffle_checkin', local_sigma,
       'the shuffler (server sees every report)'),
      (DISTRIBUTED, 'distributed_checkin', sigma,
       'secure aggregation (server sees sum and participants)')):
    engine = ShufflePrivacyEngine(accountant=accountant)
    accuracy, epsilon, _, _, _ = _train(engine, participant_sigma, args)
    if accountant == 'distributed_checkin':
      per_participant, update = local_sigma, 'σC√(k/(qn))'
    else:
      per_participant, update = participant_sigma, 's·C√k'
    at_cohort = per_participant * math.sqrt(cohort)
    rows.append((label, trusted, f'{per_participant:.3g}·C', update,
                 at_cohort, accuracy, epsilon, None))
  # The same training, accounted for a server that sees only the count.
  rows.append((DISTRIBUTED_HIDDEN, 'secure aggregation and an anonymous '
               'check-in channel (server sees sum and count)', *rows[-1][2:6],
               engine.accountant.get_epsilon(DELTA, participation='hidden'),
               None))
  print(f'digits: n = {num_users}, q = 1/{round(1 / rate)}, '
        f'q·n = {cohort:.2f}, σ = {sigma:g}, C = {args.max_grad_norm:g}, '
        f'{args.epochs} epochs = {steps} steps, δ = {DELTA:g}\n')
  print('| mode | trusted | noise per participant | noise in the update '
        '(std, k participants) | at k = q·n | certified ε, replace-one | '
        'ε, add/remove (Opacus PRV) | test accuracy |')
  print('|---|---|---|---|---|---|---|---|')
  for (label, trusted, per_participant, update, at_cohort, accuracy,
       replace_one, add_remove) in rows:
    add_remove = '—' if add_remove is None else f'{add_remove:.3g}'
    print(f'| {label} | {trusted} | {per_participant} | {update} | '
          f'{at_cohort:.3g}·C | {replace_one:.3g} | {add_remove} | '
          f'{accuracy:.3f} |')
  print(f'\nfinished in {time.perf_counter() - start:.0f} s')


if __name__ == '__main__':
  main()
