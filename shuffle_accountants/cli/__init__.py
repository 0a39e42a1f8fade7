"""The `shuffle-accountant` command and the method table behind it."""
