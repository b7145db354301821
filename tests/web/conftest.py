"""Fixtures for the web tests: an index cache per test session, a tiny corpus, the generated mini-web."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="session")
def _index_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    import os

    os.environ["TOOLSIGHT_CACHE"] = str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="session")
def miniweb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from toolsight.benchmarks.visbrowse_bench.generate import generate_browse

    out = tmp_path_factory.mktemp("miniweb") / "mw"
    generate_browse(8, 3, out)
    return out
