"""Helpers for the CLI and API tests: run `toolsight` as a real subprocess (stdout and stderr are
pipes, as in a script or CI), small dataset folders with real PNGs, and the scripted server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

TOOLSIGHT = [sys.executable, "-m", "toolsight"]


def env(**extra: str) -> dict[str, str]:
    """The test environment without API keys and without COLUMNS (a pipe's default width applies)."""
    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k not in ("COLUMNS", "OPENAI_BASE_URL")}
    e.update(extra)
    return e


def ts(*args: str, cwd: Path | None = None, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TOOLSIGHT, *args], capture_output=True, text=True, env=env(**extra), cwd=cwd,
                          timeout=timeout)


def lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.strip()]


def assert_one_error_line(r: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    """The command failed with `code`, printed exactly one (unwrapped) error line holding `needles`,
    nothing on stdout, and no traceback."""
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stdout + r.stderr, r.stderr
    err = lines(r.stderr)
    assert len(err) == 1, r.stderr
    assert err[0].startswith("error: "), err[0]
    for n in needles:
        assert n in err[0], (n, err[0])
    return err[0]


def write_png(path: Path, w: int = 96, h: int = 64, value: int = 200) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    arr = np.full((h, w, 3), value, dtype=np.uint8)
    arr[h // 4: h // 2, w // 4: w // 2] = (30, 60, 220)
    Image.fromarray(arr).save(path)
    return path


def dataset(root: Path, n: int = 6, tags: Any = None) -> Path:
    """`n` choice tasks t0..t{n-1} on one image (gold A for even ids, B for odd), tagged
    category=even|odd and level=1|2|3 (or `tags(i)`)."""
    write_png(root / "images" / "pic.png")
    with (root / "tasks.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n):
            tg = tags(i) if tags is not None else {"category": "even" if i % 2 == 0 else "odd", "level": str(1 + i % 3)}
            fh.write(json.dumps({
                "id": f"t{i}", "tags": tg,
                "turns": [{"prompt": f"Question {i}: which colour is the square?", "images": [{"path": "images/pic.png"}],
                           "answer": "A" if i % 2 == 0 else "B", "options": {"A": "blue", "B": "red"},
                           "answer_type": "choice"}],
            }) + "\n")
    return root


def records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "records.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
