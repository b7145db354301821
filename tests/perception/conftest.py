"""Fixtures for the perception tests: generated PhysToolBench-style scenes (real pixels)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from toolsight.synth.phystool import generate_phystool

    root = tmp_path_factory.mktemp("scenes")
    generate_phystool(4, 3, root)
    return root


def scene_tasks(root: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (root / "tasks.jsonl").read_text().splitlines()]
