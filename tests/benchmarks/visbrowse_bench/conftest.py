"""Fixtures for the VisBrowse-Bench tests: a private index cache and one generated mini-web per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def miniweb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from toolsight.benchmarks.visbrowse_bench.generate import generate_browse

    os.environ.setdefault("TOOLSIGHT_CACHE", str(tmp_path_factory.mktemp("cache")))
    out = tmp_path_factory.mktemp("miniweb") / "mw"
    generate_browse(8, 5, out)
    return out
