"""Loads a script of benchmarks/ as a module (tests rerun their numbers)."""

import importlib.util
import pathlib
from types import ModuleType


def load(name: str) -> ModuleType:
  """benchmarks/<name>.py, imported under the name `<name>_benchmark`."""
  path = (pathlib.Path(__file__).resolve().parents[1] / 'benchmarks'
          / f'{name}.py')
  spec = importlib.util.spec_from_file_location(f'{name}_benchmark', path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module
