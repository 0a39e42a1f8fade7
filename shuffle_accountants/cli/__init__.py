"""The `shuffle-accountant` command (`main`) and the method table behind it (`protocols`)."""
