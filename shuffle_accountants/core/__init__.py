"""The generic core: ledgers, event specs, grouping and the accountant base.

Route-neutral (issue 52): the ledger walker and classification, the smallest
answer over routes and basic composition (`_ledger`), one spec per shuffle
event (`_event_specs`), the rounds that dominate a round (`_dominating`),
grouping of nearby rounds (`_grouping`) and the messages about events
(`_event_checks`). It imports neither route (`rdp/`, `pld/`) nor the pairs
and samplers they use; tests/test_layout.py forbids those edges.
"""
