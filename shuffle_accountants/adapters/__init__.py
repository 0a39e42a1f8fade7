"""Framework adapters (Opacus, TF-Privacy, Flower) on top of the accountants; no formulas of their own.

* `shuffle_accountants.adapters.opacus` (extra ``[opacus]``): the Opacus
  accountants ``"shuffle_checkin"`` / ``"shuffle_checkin_rdp"``, the
  local-noise optimizers and `ShufflePrivacyEngine`.
* `shuffle_accountants.adapters.tf_privacy` (no extra dependency):
  `compute_shuffle_privacy_statement` and `shuffle_dp_sgd_event` for
  TF-Privacy / dp_accounting users.
* `shuffle_accountants.adapters.flower` (extra ``[flower]``): `PldAccountant`,
  a certified backend of Flower's privacy-accounting protocol, and
  distributed noise under secure aggregation
  (`DistributedNoiseFixedClipping`, `distributed_noise_mod`) and secret
  client sampling (`SampledServerSideFixedClipping`).

Submodules are imported on demand, so the core never needs torch; importing
`shuffle_accountants.adapters.opacus` is what registers the Opacus accountants.
"""
