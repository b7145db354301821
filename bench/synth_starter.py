"""Starter-suite cost: generation time and reference-solution time on 2 workers.

Baseline (same run): one subprocess per task that only imports numpy, PIL and cv2 — the fixed cost
every solution pays. Prints absolute times, the ratio solutions / baseline, and the batched mode
(one interpreter per worker) against one process per task.

    .venv/bin/python bench/synth_starter.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from toolsight.benchmarks.tir_bench.generate import starter_suite
from toolsight.benchmarks.tir_bench.generate.verify import run_solutions


def _baseline(n: int, workers: int) -> float:
    def one(_: int) -> None:
        subprocess.run([sys.executable, "-c", "import numpy, PIL.Image, cv2"], check=True)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(n)))
    return time.perf_counter() - t0


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "starter"
        t0 = time.perf_counter()
        tasks = starter_suite(root)
        gen = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        t1 = time.perf_counter()
        runs = run_solutions(tasks, root, workers=2, batch=False)
        solve = time.perf_counter() - t1
        t2 = time.perf_counter()
        batch_runs = run_solutions(tasks, root, workers=2, batch=True)
        solve_batch = time.perf_counter() - t2
        base = _baseline(len(tasks), 2)
    solved = sum(r.solved for r in runs)
    print(f"starter suite: {len(tasks)} tasks, {size / 1e6:.1f} MB, generated in {gen:.2f} s")
    print(f"reference solutions (2 workers): {solve:.1f} s, solved {solved}/{len(tasks)}")
    print(f"baseline (import numpy+PIL+cv2 per task, 2 workers): {base:.1f} s")
    print(f"ratio solutions / baseline: {solve / base:.2f}x")
    print(f"batched (one interpreter per worker): {solve_batch:.1f} s, solved {sum(r.solved for r in batch_runs)}"
          f"/{len(tasks)}; ratio batched / one-process-per-task: {solve_batch / solve:.2f}x")


if __name__ == "__main__":
    main()
