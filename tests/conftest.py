"""Top-level test configuration: puts `tests/` on the import path for the shared helpers
(`sharedfiles`, `fidelitykit`, `enginekit`, `clikit`, `goldenwirekit`) that test files in every folder
use, gives every folder the small real dataset fixtures (`dataset`, `png_bomb`), and turns the provider route
store (models/_routes.py) off unless a test turns it on, so which path a model's first request takes
never depends on what an earlier run left in the user's cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from enginekit import write_png, write_png_bomb

os.environ.setdefault("TOOLSIGHT_ROUTE_CACHE", "0")


# ---- shared fixtures: a small dataset folder with real PNG images (engine, agents, tasks, tools tests)
@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "ds"
    write_png(root / "images" / "a.png")
    write_png(root / "images" / "b.png", value=40)
    lines = []
    for i in range(6):
        lines.append({
            "id": f"t{i}", "benchmark": "custom", "tags": {"category": "even" if i % 2 == 0 else "odd"},
            "turns": [{"prompt": f"[task:t{i}] What is the answer?", "images": [{"path": "images/a.png"}],
                       "answer": "B" if i % 2 else "A", "options": {"A": "red", "B": "blue"},
                       "answer_type": "choice"}],
        })
    (root / "tasks.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return root


@pytest.fixture(scope="session")
def png_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 50000x50000 PNG of ~300 KB (made once per session: compressing 300 MB of zeros takes seconds)."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.png"
    write_png_bomb(path)
    return path
