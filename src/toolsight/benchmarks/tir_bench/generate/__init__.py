"""Synthetic TIR-Bench-style task generators: fresh, contamination-free tasks of any difficulty.

`generate(kind, n, seed, out_dir)` writes a toolsight dataset folder (tasks.jsonl + images/) and
returns the tasks; `starter_suite(out_dir)` writes the fixed starter set. Every task carries a
reference solution (Python source in `turn.meta['reference_solution']`) that solves it from the pixels.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from toolsight.benchmarks.tir_bench.generate import (
    color_proportion,
    jigsaw,
    maze,
    rotated_ocr,
    rotation_game,
    spot_difference,
    word_search,
)
from toolsight.errors import ToolsightError
from toolsight.tasks.dataset import validate_dataset, write_dataset
from toolsight.tasks.schema import Task
from toolsight.tasks.synth import GenContext


@dataclass(frozen=True)
class Kind:
    """One generator: its name, difficulty levels (low to high) and the function making one task."""

    name: str
    difficulties: tuple[int, ...]
    make: Callable[[GenContext], Task]
    description: str


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("jigsaw", jigsaw.DIFFICULTIES, jigsaw.generate, "n×n scrambled jigsaw; difficulty = n (3-6)"),
        Kind("maze", maze.DIFFICULTIES, maze.generate, "block maze, path options; difficulty = side in cells"),
        Kind(
            "rotation_game",
            rotation_game.DIFFICULTIES,
            rotation_game.generate,
            "rotated landscape, clockwise-angle options; difficulty = angle step (15, 10, 5 degrees)",
        ),
        Kind("ocr", rotated_ocr.DIFFICULTIES, rotated_ocr.generate, "text rotated 90/180/270; difficulty 1-3"),
        Kind(
            "word_search",
            word_search.DIFFICULTIES,
            word_search.generate,
            "grid of near-identical characters with planted ones; difficulty 1-3",
        ),
        Kind(
            "spot_difference",
            spot_difference.DIFFICULTIES,
            spot_difference.generate,
            "two images on an n×m patch grid, altered patches; difficulty 1-3",
        ),
        Kind(
            "color_proportion",
            color_proportion.DIFFICULTIES,
            color_proportion.generate,
            "share of the image a coloured object/colour covers, ±8-point options; difficulty 1-3",
        ),
    )
}


class GenerateError(ToolsightError, ValueError):
    """A bad generator request (unknown kind, bad difficulty or count), with the fix in the message."""


def _check(kind: str, n: int, difficulty: int | None) -> Kind:
    if kind not in KINDS:
        raise GenerateError(f"unknown generator kind {kind!r}; choose one of: {', '.join(KINDS)}")
    k = KINDS[kind]
    if n < 1:
        raise GenerateError(f"--n must be at least 1 (got {n})")
    if difficulty is not None and difficulty not in k.difficulties:
        levels = ", ".join(str(d) for d in k.difficulties)
        raise GenerateError(f"difficulty {difficulty} is not valid for {kind}; choose one of: {levels}")
    return k


def make_tasks(
    kind: str, n: int, seed: int, out_dir: Path | str, difficulty: int | None = None, start: int = 0,
    progress: Callable[[int], None] | None = None,
) -> list[Task]:
    """Make `n` tasks of one kind, writing their images under `out_dir/images/` (no tasks.jsonl);
    `progress(done)` is called after each task."""
    k = _check(kind, n, difficulty)
    root = Path(out_dir)
    tasks: list[Task] = []
    for i in range(start, start + n):
        level = difficulty if difficulty is not None else k.difficulties[i % len(k.difficulties)]
        rng = np.random.default_rng([seed, sorted(KINDS).index(kind), i, level])
        ctx = GenContext(root=root, task_id=f"{kind}-d{level}-s{seed}-{i:04d}", rng=rng, difficulty=level)
        tasks.append(k.make(ctx))
        if progress is not None:
            progress(len(tasks))
    return tasks


def _write(out_dir: Path, tasks: list[Task]) -> None:
    write_dataset(out_dir, tasks)
    problems = validate_dataset(out_dir)
    if problems:  # a generator bug, not a user error
        raise RuntimeError("generated dataset does not validate:\n" + "\n".join(map(str, problems[:10])))


def generate(
    kind: str, n: int, seed: int, out_dir: Path | str, difficulty: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[Task]:
    """Generate `n` tasks of `kind` into a dataset folder; difficulty None cycles through all levels."""
    tasks = make_tasks(kind, n, seed, out_dir, difficulty, progress=progress)
    _write(Path(out_dir), tasks)
    return tasks


# kind -> difficulty levels in the starter suite; 2 tasks per level unless given as (level, count)
STARTER_PLAN: dict[str, Sequence[tuple[int, int]]] = {
    "jigsaw": ((3, 3), (4, 2), (5, 2), (6, 2)),
    "maze": ((5, 2), (9, 2), (15, 2), (25, 2), (41, 1)),
    "rotation_game": ((15, 3), (10, 3), (5, 3)),
    "ocr": ((1, 3), (2, 3), (3, 3)),
    "word_search": ((1, 3), (2, 3), (3, 3)),
    "spot_difference": ((1, 3), (2, 3), (3, 3)),
    "color_proportion": ((1, 3), (2, 3), (3, 3)),
}
STARTER_SEED = 20251122


def starter_suite(out_dir: Path | str, seed: int = STARTER_SEED) -> list[Task]:
    """Write the fixed starter suite (every kind, every difficulty; 63 tasks) and return its tasks."""
    root = Path(out_dir)
    tasks: list[Task] = []
    for kind, plan in STARTER_PLAN.items():
        start = 0
        for level, count in plan:
            tasks.extend(make_tasks(kind, count, seed, root, difficulty=level, start=start))
            start += count
    _write(root, tasks)
    return tasks


# bump when generators or solutions change, so cached starter suites are regenerated
GENERATOR_VERSION = 2


def ensure_starter_suite(cache_dir: Path | str, seed: int = STARTER_SEED) -> Path:
    """The starter suite under `cache_dir`, generated on first use (atomically) and reused after."""
    cache = Path(cache_dir)
    target = cache / f"starter-v{GENERATOR_VERSION}-s{seed}"
    if (target / "tasks.jsonl").is_file() and not validate_dataset(target):
        return target
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".starter-", dir=cache))
    try:
        starter_suite(tmp, seed=seed)
        if target.exists():  # an incomplete or damaged earlier copy
            shutil.rmtree(target)
        try:
            tmp.rename(target)
        except OSError:  # another process finished first: use its copy
            if not (target / "tasks.jsonl").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


__all__ = [
    "GENERATOR_VERSION",
    "KINDS",
    "STARTER_PLAN",
    "STARTER_SEED",
    "GenerateError",
    "Kind",
    "ensure_starter_suite",
    "generate",
    "make_tasks",
    "starter_suite",
]
