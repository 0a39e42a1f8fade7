"""The PLD route: dominating pairs per source and `ShufflePldAccountant`.

The pairs both routes use live in `shuffle_accountants.pairs`. Here:
`checkin` (the D8 check-in mixture of KHH-SUBSAMPLED pairs), `distributed`
(D17, D30), `random_allocation` (D21 on the grid), `lower_bounds` (a pair's
exact epsilon, [LB]); `discrete` discretizes pessimistically
(connect-the-dots, D9), `candidates` lists the valid pairs per event, `grid`
chooses the grid, and `accountant` composes.
"""
