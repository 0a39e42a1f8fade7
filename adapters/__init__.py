"""Framework adapters (Opacus, TF-Privacy), installed as `shuffle_accountants.adapters`; no formulas of their own.

* `shuffle_accountants.adapters.opacus` (extra ``[opacus]``): the Opacus
  accountants ``"shuffle_checkin"`` / ``"shuffle_checkin_rdp"``, the
  local-noise optimizers and `ShufflePrivacyEngine`.
* `shuffle_accountants.adapters.tf_privacy` (no extra dependency):
  `compute_shuffle_privacy_statement` and `shuffle_dp_sgd_event` for
  TF-Privacy / dp_accounting users.

Submodules are imported on demand, so the core never needs torch.
"""
