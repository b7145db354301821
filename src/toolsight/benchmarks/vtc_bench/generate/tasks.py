"""Turn drawn VTC-style items into Tasks, verify them by replay, and write dataset folders."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy as np

from toolsight.benchmarks.vtc_bench.generate.kinds import KINDS, TOOL_GROUPS, Drawn, options_for
from toolsight.benchmarks.vtc_bench.generate.replay import replay
from toolsight.benchmarks.vtc_bench.taxonomy import CATEGORIES, question_with_options
from toolsight.errors import ToolsightError
from toolsight.tasks.dataset import write_dataset
from toolsight.tasks.schema import ImageRef, Task, ToolStep, Turn

BENCHMARK = "vtc-synth"
IMAGES_DIR = "images"
KIND_NAMES: tuple[str, ...] = tuple(KINDS)
MAX_REDRAWS = 6
T = TypeVar("T")


class VTCSynthError(ToolsightError, ValueError):
    """Bad generator arguments, or a kind whose reference calls keep failing (a generator bug)."""


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also when an event loop is already running in this thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def make_task(drawn: Drawn, task_id: str, kind: str, rng: np.random.Generator, root: Path, seed: int) -> Task:
    """Save the image under `root/images/` and build the Task (answer, options, toolchain, calls)."""
    rel = f"{IMAGES_DIR}/{task_id}.png"
    (root / IMAGES_DIR).mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(root / rel), drawn.image):
        raise VTCSynthError(f"could not write {root / rel}")
    options, letter = options_for(rng, drawn.count)
    groups = [TOOL_GROUPS.get(c["tool"], c["tool"]) for c in drawn.calls]
    h, w = drawn.image.shape[:2]
    name, tier, tier_name = CATEGORIES[drawn.category]
    chain = json.dumps(groups)
    turn = Turn(
        prompt=question_with_options(drawn.question, options),
        images=[ImageRef(path=rel)],
        answer=letter,
        options=options,
        answer_type="choice",
        reference_steps=[ToolStep(tool=g, note=c["tool"]) for g, c in zip(groups, drawn.calls, strict=True)],
        meta={
            "question": drawn.question,
            "reference_calls": drawn.calls,
            "answer_from": {"field": "total_components", "map": {v: k for k, v in options.items()}},
            "count": drawn.count,
            "image_size": f"{w}x{h}",
            "width": w,
            "height": h,
            "model_tools_gt": chain,
            "reference_trajectory": chain,
        },
    )
    tags = {
        "category": drawn.category, "task": name, "tier": str(tier), "tier_name": tier_name,
        "kind": kind, "degradation": drawn.degradation,
    }
    return Task(id=task_id, benchmark=BENCHMARK, turns=[turn], tags=tags, meta={"seed": seed})


def _one(kind: str, task_id: str, rng: np.random.Generator, root: Path, seed: int, verify: bool) -> Task:
    last = ""
    for _ in range(MAX_REDRAWS):
        task = make_task(KINDS[kind](rng), task_id, kind, rng, root, seed)
        if not verify:
            return task
        res = _run(replay(task, root))
        if res.ok and res.answer == task.turns[0].answer:
            return task
        last = res.error or f"replay answered {res.answer!r}, expected {task.turns[0].answer!r}"
    raise VTCSynthError(f"{kind}: reference calls failed {MAX_REDRAWS} times for {task_id}: {last}")


def generate_vtc(kind: str, n: int, seed: int, out_dir: Path | str, verify: bool = True,
                 progress: Callable[[int], None] | None = None) -> list[Task]:
    """`n` tasks of `kind` (see KIND_NAMES) from `seed`, written to `out_dir` as a dataset folder;
    `progress(done)` is called after each task."""
    if kind not in KINDS:
        raise VTCSynthError(f"unknown VTC-style kind {kind!r}; choose one of: {', '.join(KINDS)}")
    if n < 1:
        raise VTCSynthError(f"n must be at least 1 (got {n})")
    root = Path(out_dir)
    rng = np.random.default_rng([seed, KIND_NAMES.index(kind)])
    tasks: list[Task] = []
    for i in range(n):
        tasks.append(_one(kind, f"vtc_{kind}_{seed}_{i:03d}", rng, root, seed, verify))
        if progress is not None:
            progress(len(tasks))
    write_dataset(root, tasks)
    return tasks


def vtc_starter(out_dir: Path | str, seed: int = 0, verify: bool = True) -> list[Task]:
    """The starter set: two tasks of each kind (8), written to `out_dir`."""
    root = Path(out_dir)
    tasks: list[Task] = []
    for k, kind in enumerate(KIND_NAMES):
        rng = np.random.default_rng([seed, 1000 + k])
        tasks += [_one(kind, f"vtc_{kind}_{i}", rng, root, seed, verify) for i in range(2)]
    write_dataset(root, tasks)
    return tasks
