"""Dominating pairs shared by both routes.

IDs: FMT21-CLONES, KHH-KRR-STRONG, KHH-KRR-WEAK, BLANKET-TWO-LEVEL, FMT21-CLOSED

`privacy_loss` (a pair's PLD atoms and the KHH-SUBSAMPLED orders),
`binomial` (Chernoff windows and groups of binomial labels, LABEL-MIXTURE,
TAILS-TO-INFINITY), `clone_pairs` (the conditional clone pair and its mixtures:
FMT21-CLONES, KHH-KRR-STRONG/WEAK), `blanket` (BLANKET-TWO-LEVEL, the blanket
pair of a named randomizer), `fmt21` (FMT21-CLOSED, FMT-EQ10-11). The RDP route
(`rdp/`) and the PLD route (`pld/`) both import this package; it imports neither
(tests/test_layout.py checks it).
"""
