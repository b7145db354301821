"""Top-level test configuration: puts `tests/` on the import path for the shared helpers
(`sharedfiles`, `fidelitykit`) that test files in every folder use, and turns the provider route
store (models/_routes.py) off unless a test turns it on, so which path a model's first request takes
never depends on what an earlier run left in the user's cache."""

from __future__ import annotations

import os

os.environ.setdefault("TOOLSIGHT_ROUTE_CACHE", "0")
