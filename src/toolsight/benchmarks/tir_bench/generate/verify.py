"""Run a task's reference solution in a plain subprocess (no sandbox) to check a generated dataset.

The reference agent runs the same code through the real sandboxed tool; this helper is for generator
tests, benchmarks and `toolsight generate --verify`-style checks. The solution runs with cwd = a fresh
temporary folder holding only the task's images under their basenames, as in the sandbox.
`run_solutions` can batch many solutions into one interpreter per worker (imports paid once).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from toolsight.tasks.schema import Task

ANSWER_PREFIX = "ANSWER: "


def answer_from_output(stdout: str) -> str | None:
    """The answer of the last `ANSWER: ...` line of a solution's output, if any."""
    lines = [ln for ln in stdout.splitlines() if ln.startswith(ANSWER_PREFIX)]
    return lines[-1][len(ANSWER_PREFIX) :].strip() if lines else None


@dataclass
class SolutionRun:
    task_id: str
    gold: str
    answer: str | None
    stdout: str
    stderr: str
    returncode: int

    @property
    def solved(self) -> bool:
        return self.answer is not None and self.answer == self.gold


def run_solution(task: Task, root: Path | str, timeout: float = 120.0, python: str | None = None) -> SolutionRun:
    """Run the reference solution of `task` (images from dataset folder `root`) and read its answer."""
    turn = task.turns[0]
    code = turn.meta.get("reference_solution")
    if not isinstance(code, str):
        raise ValueError(f"task {task.id} has no reference solution in turns[0].meta['reference_solution']")
    with tempfile.TemporaryDirectory(prefix="toolsight-ref-") as tmp:
        work = Path(tmp)
        for img in turn.images:
            shutil.copyfile(Path(root) / img.path, work / Path(img.path).name)
        (work / "solution.py").write_text(code, encoding="utf-8")
        try:
            p = subprocess.run(
                [python or sys.executable, "solution.py"],
                cwd=work,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            out, err, rc = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            err, rc = f"timed out after {timeout} s", -9
    return SolutionRun(task.id, str(turn.answer), answer_from_output(out), out, err, rc)


# Runs many solutions in one interpreter (numpy/PIL/cv2 imported once): each one exec'd with fresh
# globals, cwd = its own folder, stdout captured; the results go back as one JSON line per task.
_BATCH_DRIVER = r"""
import contextlib, io, json, os, sys, traceback
jobs = json.loads(sys.stdin.read())
for job in jobs:
    os.chdir(job["dir"])
    out, err, rc = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(compile(job["code"], "solution.py", "exec"), {"__name__": "__main__"})
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
            if not isinstance(exc.code, int) and exc.code is not None:
                err.write(str(exc.code) + "\n")
        except BaseException:
            rc = 1
            err.write(traceback.format_exc())
    sys.__stdout__.write(json.dumps({"stdout": out.getvalue(), "stderr": err.getvalue(), "rc": rc}) + "\n")
    sys.__stdout__.flush()
"""


def _run_batch(tasks: Sequence[Task], root: Path, timeout: float) -> list[SolutionRun]:
    with tempfile.TemporaryDirectory(prefix="toolsight-ref-") as tmp:
        jobs = []
        for i, task in enumerate(tasks):
            work = Path(tmp) / str(i)
            work.mkdir()
            for img in task.turns[0].images:
                shutil.copyfile(root / img.path, work / Path(img.path).name)
            jobs.append({"dir": str(work), "code": task.turns[0].meta.get("reference_solution", "")})
        try:
            p = subprocess.run(
                [sys.executable, "-c", _BATCH_DRIVER],
                input=json.dumps(jobs),
                capture_output=True,
                text=True,
                timeout=timeout * max(1, len(tasks)),
                cwd=tmp,
            )
            lines, crash = p.stdout.splitlines(), p.stderr
        except subprocess.TimeoutExpired:
            lines, crash = [], "batch timed out"
    runs: list[SolutionRun] = []
    for i, task in enumerate(tasks):
        if i < len(lines):
            r = json.loads(lines[i])
            out, err, rc = r["stdout"], r["stderr"], int(r["rc"])
        else:
            out, err, rc = "", crash or "the batch process ended early", -1
        runs.append(SolutionRun(task.id, str(task.turns[0].answer), answer_from_output(out), out, err, rc))
    return runs


def run_solutions(
    tasks: Sequence[Task], root: Path | str, workers: int = 2, timeout: float = 120.0, batch: bool = True
) -> list[SolutionRun]:
    """Run many reference solutions on `workers` processes; results in task order.

    `batch=True` runs each worker's share in one interpreter (fast: imports once; each solution still
    gets fresh globals and its own folder); `batch=False` starts one process per task.
    """
    workers = max(1, workers)
    if not batch:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda t: run_solution(t, root, timeout), tasks))
    shares = [tasks[i::workers] for i in range(workers)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda share: _run_batch(share, Path(root), timeout), shares))
    ordered: list[SolutionRun] = []
    for i in range(len(tasks)):  # share w holds tasks w, w + workers, w + 2*workers, ...
        ordered.append(results[i % workers][i // workers])
    return ordered
