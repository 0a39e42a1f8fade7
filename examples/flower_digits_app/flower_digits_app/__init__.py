"""A Flower App: federated digits with certified ε per round (README.md)."""
