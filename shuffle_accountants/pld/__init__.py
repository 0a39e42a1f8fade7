"""The PLD route: dominating pairs per source and `ShufflePldAccountant`.

The pairs both routes use live in `shuffle_accountants.pairs`. Here:
`checkin` (the LABEL-MIXTURE check-in mixture of KHH-SUBSAMPLED pairs),
`distributed` (SECAGG-HIDDEN, SECAGG-REVEALED), `skellam` (SKELLAM-SUM: the
pair of the Skellam RDP profile), `random_allocation`
(RANDOM-ALLOCATION-GRID on the grid), `lower_bounds` (a pair's exact epsilon,
[LB]); `discrete` discretizes pessimistically (connect-the-dots,
TAILS-TO-INFINITY), `candidates` lists the valid pairs per event, `grid` chooses
the grid, and `accountant` composes.
"""
