"""Framework adapters, installed as `shuffle_accountants.adapters`.

The Opacus and TF-Privacy adapters build on the check-in events and are not
part of this release yet.
"""
