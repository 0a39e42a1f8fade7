"""The PLD route: dominating pairs per source and `ShufflePldAccountant`.

`clone_pairs` (FMT21-CLONES, KHH-KRR-STRONG/WEAK), `checkin` (the D8 check-in
mixture of KHH-SUBSAMPLED pairs), `fmt21` (FMT21-CLOSED, FMT-EQ10-11),
`lower_bounds` (a pair's exact epsilon, [LB]); `discrete` discretizes
pessimistically (connect-the-dots, D9), `candidates` lists the valid pairs
per event, `grid` chooses the grid, and `accountant` composes.
"""
