"""Adapters for Opacus, TF-Privacy and Flower over the accountants.

They sit on top of the accountants:

* `shuffle_accountants.adapters.opacus` (extra ``[opacus]``, a package):
  the Opacus accountants ``"shuffle_checkin"``, ``"distributed_checkin"``,
  ``"random_allocation"``, ... (their base `OpacusAccountant` in
  ``opacus/base.py``), the local-noise optimizers and `ShufflePrivacyEngine`.
* `shuffle_accountants.adapters.tf_privacy` (no extra dependency):
  `compute_shuffle_privacy_statement` and `shuffle_dp_sgd_event` for
  TF-Privacy / dp_accounting users.
* `shuffle_accountants.adapters.flower` (extra ``[flower]``, a package):
  `PldAccountant`, a certified backend of Flower's privacy-accounting
  protocol, and distributed noise under secure aggregation
  (`DistributedNoiseFixedClipping`, `distributed_noise_mod`) and secret
  client sampling (`SampledServerSideFixedClipping`).

Submodules are imported on demand, so the core never needs torch; importing
`shuffle_accountants.adapters.opacus` is what registers the Opacus accountants
(and all it changes in Opacus). `shuffle_accountants.adapters.opacus_samplers`
keeps the sampler names at their former path.
"""
