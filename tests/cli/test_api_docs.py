"""docs/api.md's notebook example runs as written: every ```python block in order, once as a
script and once inside a running event loop with top-level `await`, as Jupyter runs cells."""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import re
from collections.abc import Iterator
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def _cells() -> list[CodeType]:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) >= 4, "docs/api.md lost its example"
    return [compile(b, f"docs/api.md cell {i + 1}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            for i, b in enumerate(blocks)]


@pytest.fixture
def in_tmp(tmp_path: Path) -> Iterator[Path]:
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)


def _check(ns: dict[str, Any], where: Path) -> None:
    assert (where / "runs" / "demo" / "records.jsonl").is_file()
    assert ns["result"].ok and len(ns["again"].records) == 4 and ns["first"].records


def test_the_example_runs_as_a_script(in_tmp: Path) -> None:
    ns: dict[str, Any] = {}
    for cell in _cells():
        out = eval(cell, ns)  # a cell with top-level await gives a coroutine
        if inspect.iscoroutine(out):
            asyncio.run(out)
    _check(ns, in_tmp)


def test_the_example_runs_as_notebook_cells_inside_a_running_loop(in_tmp: Path) -> None:
    ns: dict[str, Any] = {}

    async def kernel() -> None:
        for cell in _cells():
            out = eval(cell, ns)  # the sync `evaluate` calls run while this loop is running
            if inspect.iscoroutine(out):
                await out

    asyncio.run(kernel())
    _check(ns, in_tmp)
