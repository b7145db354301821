"""The fidelity vectors: what each benchmark's official scorer returned on a given input.

Vectors with constructed inputs are in the repo (`tests/fidelity/vectors/`, provenance in
PROVENANCE.md there); vectors that quote benchmark data are read from the shared folder (see
`sharedfiles`). `vectors(name)` knows which is which, so a test never guesses a path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sharedfiles import VECTORS, shared_file

# benchmark file name -> where it lives
IN_REPO = ("phystoolbench", "visualtoolbench")
IN_SHARED = ("tir-bench", "vtc-bench", "visbrowse-bench")


def vectors_path(name: str) -> Path:
    """The vector file of one benchmark (skips or, under CI, fails when a shared one is absent)."""
    if name in IN_REPO:
        return VECTORS / f"{name}.jsonl"
    if name in IN_SHARED:
        return shared_file(f"fidelity/{name}.jsonl")
    raise KeyError(f"no fidelity vectors named {name!r}; known: {IN_REPO + IN_SHARED}")


def vectors(name: str) -> list[dict[str, Any]]:
    """Every vector of one benchmark, in file order."""
    text = vectors_path(name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
