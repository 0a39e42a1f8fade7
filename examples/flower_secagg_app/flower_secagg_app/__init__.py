"""A Flower App: SecAgg+ with Skellam noise on the digits task (README.md)."""
