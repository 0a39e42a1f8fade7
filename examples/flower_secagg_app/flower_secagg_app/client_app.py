"""The ClientApp that `flwr run` loads: SecAgg+ in front of `skellam_mod`."""

from flwr.client import ClientApp
from flwr.client.mod import secaggplus_mod

from flower_secagg_app.task import client
from shuffle_accountants.adapters.flower import secagg

app = ClientApp(client_fn=lambda context: client(context).to_client(),
                mods=[secaggplus_mod, secagg.skellam_mod])
