"""Fixtures for the perception tests: generated PhysToolBench-style scenes (real pixels)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from toolsight.benchmarks.phystoolbench.generate import generate_phystool

    root = tmp_path_factory.mktemp("scenes")
    generate_phystool(4, 3, root)
    return root
