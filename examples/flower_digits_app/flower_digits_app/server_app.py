"""The ServerApp that `flwr run` loads (pyproject.toml, components).

Its settings come from the run config ([tool.flwr.app.config], overridden
with ``flwr run --run-config``); ``num-clients`` must equal the federation's
``num-supernodes``.
"""

import logging

from flwr.app import Context
from flwr.serverapp import Grid
from flwr.serverapp import ServerApp

from flower_digits_app.task import run_modes

app = ServerApp()


@app.main()
def main(grid: Grid, context: Context) -> None:
  config = context.run_config
  logging.getLogger('flwr').setLevel(logging.WARNING)
  modes = str(config['modes'])
  if modes not in ('central', 'secagg', 'both'):
    raise ValueError(f"run config 'modes' is {modes!r}; allowed: 'central', "
                     "'secagg', 'both'")
  num_clients, rounds = int(config['num-clients']), int(config['rounds'])
  print(f'# {num_clients} clients, {rounds} rounds; columns: mode round '
        'accuracy epsilon', flush=True)
  run_modes(grid, ('central', 'secagg') if modes == 'both' else (modes,),
            num_clients, rounds, str(config['output-dir']),
            noise_multiplier=float(config['noise-multiplier']),
            clipping_norm=float(config['clipping-norm']),
            checkin_rate=float(config['checkin-rate']))
