"""The ServerApp that `flwr run` loads: Flower's SecAgg+ workflow.

SecAgg+ runs only in Flower's legacy API (`LegacyContext`,
`DefaultWorkflow`). Its settings come from the run config
([tool.flwr.app.config], overridden with ``flwr run --run-config``);
``num-clients`` must equal the federation's ``num-supernodes``.
"""

import logging

from flwr.app import Context
from flwr.server import LegacyContext
from flwr.server import ServerApp
from flwr.server import ServerConfig
from flwr.server.workflow import DefaultWorkflow
from flwr.serverapp import Grid

from flower_secagg_app.task import report
from flower_secagg_app.task import settings_from
from flower_secagg_app.task import skellam_strategy
from shuffle_accountants.adapters.flower import secagg

app = ServerApp()


@app.main()
def main(grid: Grid, context: Context) -> None:
  logging.getLogger('flwr').setLevel(logging.WARNING)
  settings = settings_from(context.run_config)
  accuracies: list = []
  strategy = skellam_strategy(settings, accuracies)
  legacy = LegacyContext(context, config=ServerConfig(settings.rounds),
                         strategy=strategy)
  # SecAgg+ tolerates a fifth of the cohort dropping out (the default).
  DefaultWorkflow(fit_workflow=secagg.skellam_secaggplus_workflow(
      settings.bits))(grid, legacy)
  report(settings, accuracies, strategy)
