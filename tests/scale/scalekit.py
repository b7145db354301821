"""Helpers for the scale tests: a small dataset folder with a real PNG, reading records and limits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np


def write_png(path: Path, w: int = 64, h: int = 48, value: int = 0) -> None:
    img = np.full((h, w, 3), value, np.uint8)
    img[h // 4: h // 2, w // 4: w // 2] = (0, 0, 255)
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), img)


def dataset(root: Path, n: int, image: str = "img.png", size: int = 64, prefix: str = "t") -> Path:
    """`n` multiple-choice tasks (`t0`…) over one image; the gold answer is A."""
    write_png(root / image, size, size)
    with (root / "tasks.jsonl").open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"{prefix}{i}", "turns": [{
                "prompt": f"[task:{prefix}{i}] Which colour?", "images": [{"path": image}], "answer": "A",
                "options": {"A": "red", "B": "blue"}}]}) + "\n")
    return root


def jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def records(run_dir: Path) -> list[dict[str, Any]]:
    return jsonl(run_dir / "records.jsonl")
