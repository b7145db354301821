"""Fixtures for the sandbox tests: the backend a test runs on, the fork-server pool and its isolation report.

Every test here runs on the fork server (the attack tests are about its confinement, whatever
TOOLSIGHT_SANDBOX_BACKEND says) unless it takes the `backend` fixture: then it runs once per backend
name, chosen through the registry (`sandbox.use_backend`), as a user would choose it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolsight import sandbox


@pytest.fixture(autouse=True)
def forkserver_unless_asked() -> Iterator[None]:
    sandbox.use_backend("forkserver")
    yield
    sandbox.set_backend(None)  # back to the process default for the other test folders


@pytest.fixture(params=sandbox.backend_names())
def backend(request: pytest.FixtureRequest, forkserver_unless_asked: None) -> str:
    name = str(request.param)
    sandbox.use_backend(name)
    return name


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
