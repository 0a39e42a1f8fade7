"""Puts this folder on sys.path so tests can import the brute-force helpers.

pytest runs with --import-mode=importlib (so the repository root, whose
`adapters/` folder would shadow a PyPI package, is never on sys.path).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
