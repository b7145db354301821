"""Fixtures for the sandbox tests: the shared pool, its isolation report, and a layer check that skips loudly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolsight import sandbox


@pytest.fixture(scope="session")
def pool() -> Iterator[sandbox.SandboxPool]:
    p = sandbox.get_pool()
    yield p


@pytest.fixture(scope="session")
def iso(pool: sandbox.SandboxPool) -> dict[str, Any]:
    report = pool.isolation()
    print("sandbox isolation:", report)
    return report


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d
