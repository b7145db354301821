"""Fixtures for report/viewer/rescore tests: realistic run directories with real PNG artifacts."""

from __future__ import annotations

from pathlib import Path

import pytest

from runfixture import make_fixture_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """12 tasks, setting 'code': every task shape, one run error (task-00010)."""
    return make_fixture_run(tmp_path, name="code-run", setting="code", n_tasks=12, seed=0)


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    """The same model in a no-tool 'base' setting and a 'code' setting (for deltas)."""
    base = make_fixture_run(tmp_path, name="base-run", setting="base", n_tasks=16, seed=1, tools=False)
    code = make_fixture_run(tmp_path, name="code-run", setting="code", n_tasks=16, seed=2)
    return base, code
