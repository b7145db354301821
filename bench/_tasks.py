"""The bench scripts' dataset folders: `n` multiple-choice tasks over one image (gold answer A)."""

from __future__ import annotations

import json
from pathlib import Path


def write_tasks(root: Path, n: int, image: str = "img.png") -> Path:
    """`root/tasks.jsonl` with tasks t0..t{n-1}, each naming its id for the scripted server."""
    with (root / "tasks.jsonl").open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"t{i}", "turns": [{"prompt": f"[task:t{i}] Which?", "images": [{"path": image}],
                                                           "answer": "A", "options": {"A": "x", "B": "y"}}]}) + "\n")
    return root
