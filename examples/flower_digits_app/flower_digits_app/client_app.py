"""The ClientApp that `flwr run` loads (pyproject.toml, components)."""

from flower_digits_app.task import client_app

app = client_app()
