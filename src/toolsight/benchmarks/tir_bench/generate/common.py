"""Shared helpers for the task generators: the generator context, image saving, and reference solutions.

A reference solution is plain Python source stored in `turn.meta['reference_solution']`. It is the
kind's solver module from `toolsight/benchmarks/tir_bench/generate/solutions/` (importable; it defines `solve(PARAMS)`),
followed by the call `solve(PARAMS)`, with a short head: `PARAMS = {...}` holding only
what the task itself shows a model (image file basenames, grid sizes named in the prompt, the options),
`FILES` (basename -> sha256 of each input image) and a few lines that find each input in the current
directory by name, or by content if the workspace renamed it. It never receives the gold answer or any
other generator secret.
"""

from __future__ import annotations

import ast
import hashlib
import io
import tokenize
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from toolsight.tasks.schema import ImageRef, Task, Turn
from toolsight.tasks.synth import GenContext

BENCHMARK = "tir-bench-synth"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


# Inputs are looked up by basename; if the workspace stores them under another name (the artifact
# store names copied inputs `img-<sha256[:12]>.png`), by content hash instead.
_PRELUDE = """import hashlib as _hl
import os as _os
def _locate(name, digest):
    if _os.path.isfile(name):
        return name
    files = [f for f in sorted(_os.listdir(".")) if _os.path.isfile(f)]
    for f in files:
        if f.startswith("img-" + digest[:12]):
            return f
    for f in files:
        if _hl.sha256(open(f, "rb").read()).hexdigest() == digest:
            return f
    raise SystemExit(f"input image {name} is not in {_os.getcwd()}")
PARAMS.update({k: _locate(v, FILES[v]) for k, v in PARAMS.items() if isinstance(v, str) and v in FILES})
"""


def _task_code(module_source: str) -> str:
    """The solver module as a task's code, kept short: the code tool takes at most 5,000 characters
    and the largest mazes' options already use about half of them. The module's docstring, its
    comments (the `# mypy:` header too) and blank lines are left out; the module keeps them."""
    tree = ast.parse(module_source)
    first = tree.body[0] if tree.body else None
    lines = module_source.splitlines()
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines = lines[first.end_lineno or 0:]
    code = "\n".join(lines) + "\n"
    # drop every comment (whole-line and trailing) by token, so '#' inside a string is kept
    comments = [t for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.COMMENT]
    out = code.splitlines()
    for t in reversed(comments):
        row, col = t.start
        out[row - 1] = out[row - 1][:col].rstrip()
    return "\n".join(ln for ln in out if ln.strip()) + "\n"


def solution_source(kind: str, params: dict[str, Any], files: dict[str, str] | None = None) -> str:
    """The reference solution for one task: `PARAMS`/`FILES` lines, the input locator, the solver file.

    `files` maps each input image basename to its sha256 (what the model sees, not a secret).
    """
    body = _task_code(resources.files("toolsight.benchmarks.tir_bench.generate.solutions").joinpath(f"{kind}.py").read_text(encoding="utf-8"))
    head = f"PARAMS = {params!r}\nFILES = {dict(files or {})!r}\n"
    # the solver file is an importable module defining `solve(PARAMS)`; the task's script calls it
    return head + _PRELUDE + body + "solve(PARAMS)\n"


def make_task(
    ctx: GenContext,
    *,
    kind: str,
    task_key: str,
    task_name: str,
    prompt: str,
    images: list[ImageRef],
    answer: str,
    answer_type: str,
    params: dict[str, Any],
    options: dict[str, str] | None = None,
    meta: dict[str, Any] | None = None,
) -> Task:
    """Assemble a Task with the standard tags and the reference solution in `turn.meta`."""
    turn_meta: dict[str, Any] = {"difficulty": ctx.difficulty, "generator": kind}
    turn_meta.update(meta or {})
    digests = {
        Path(i.path).name: hashlib.sha256((ctx.root / i.path).read_bytes()).hexdigest() for i in images
    }
    turn_meta["reference_solution"] = solution_source(kind, params, digests)
    turn = Turn.model_validate(
        {
            "prompt": prompt,
            "images": [i.model_dump() for i in images],
            "answer": answer,
            "answer_type": answer_type,
            "options": options,
            "meta": turn_meta,
        }
    )
    return Task(
        id=ctx.task_id,
        benchmark=BENCHMARK,
        turns=[turn],
        tags={"task": task_key, "task_name": task_name, "difficulty": str(ctx.difficulty), "generator": kind},
    )


def spaced_options(rng: np.random.Generator, true_value: int, step: int, count: int, lo: int, hi: int) -> list[int]:
    """`count` values `true_value + k*step` inside [lo, hi], containing `true_value`, in random order."""
    ks = [k for k in range(-count + 1, count) if lo <= true_value + k * step <= hi]
    starts = [s for s in range(len(ks) - count + 1) if ks[s] <= 0 <= ks[s + count - 1]]
    s = int(rng.choice(starts))
    vals = [true_value + k * step for k in ks[s : s + count]]
    order = rng.permutation(len(vals))
    return [vals[int(i)] for i in order]
