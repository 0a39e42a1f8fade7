"""The RDP route: per-source Renyi bounds and `ShuffleRdpAccountant`.

One module per source (IDs of docs/mathematics.md in each docstring): `clone`
(KHH-RDP-CLONE), `girgis` (GIRGIS-*), `subsampling` (WBK19-THM9), `checkin`
(LIEW-THM2, eq. (8)), `generic` (PURE-DP-RDP-CAP, RDP-INTERP), `skellam`
(SKELLAM-SUM); `shuffle_round`
takes the smallest sound bound per round and `accountant` composes.
"""
