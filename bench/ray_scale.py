"""The Ray executor's figures for bench/scale.py (section 4; docs/scale.md), on a real two-node Ray
cluster on 127.0.0.1 (tests/scale/raycluster.py: a network namespace with only `lo`; needs root).

a. Per-task overhead on tiny tasks: `--tiny` single-call tasks (the scripted server answers at once,
   no tools) at concurrency 32, `toolsight run` with the local executor (the baseline) and with
   `--executor ray` (2 workers, one per node), each its own process in the namespace. Wall time, the
   task phase alone (first task start to last task end, from the records: Ray's start-up aside) and
   the driver process's CPU per task (`wait4` rusage; the workers' CPU is not the driver's).
b. Driver ingest: what `RayExecutor`'s driver does per outcome — check and write its artifacts,
   write its record line — on synthetic outcomes of real PNGs: outcomes/s and artifact MB/s.
c. A CPU-bound tool on 1 vs 2 workers: `--grabcut` tasks, each 2 GrabCut calls on a 512x512
   image, one task at a time per worker: `--ray-workers 1` vs `--ray-workers 2` (efficiency
   = T1 / (2 T2)), and the local executor at concurrency 1 and 2 for reference (its tools run in
   threads, and OpenCV releases the GIL, so one local process can use both cores too).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from _tasks import write_tasks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "scale"))
from raycluster import LoopbackCluster, loopback_cluster, missing

TOOLSIGHT = str(Path(sys.executable).parent / "toolsight")


def _dataset(root: Path, n: int, size: int, seed: int = 0) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    img = cv2.GaussianBlur(rng.integers(0, 255, (size, size, 3), dtype=np.uint8), (9, 9), 0)
    cv2.circle(img, (size // 2, size // 2), size // 4, (0, 0, 255), -1)
    cv2.imwrite(str(root / "img.png"), img)
    return write_tasks(root, n)


def _server(c: LoopbackCluster, folder: Path, script: dict[str, Any]) -> tuple[subprocess.Popen[str], str]:
    path = folder / f"script-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(script))
    proc = c.popen([sys.executable, "-m", "toolsight.models.scripted.server", "--script", str(path), "--port", "0"])
    assert proc.stdout is not None
    m = re.search(r"OpenAI base URL: (\S+)\)", proc.stdout.readline())
    assert m, "the scripted server did not start"
    return proc, m.group(1)


def _timed(c: LoopbackCluster, argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds of the process (user + system), and its stderr."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([*c.prefix(), *argv], env=c.env(OPENAI_API_KEY="k"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}): {' '.join(argv)}\n{err[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime, err


def _phase(run: Path) -> float:
    recs = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    return max(r["started_at"] + r["duration_s"] for r in recs) - min(r["started_at"] for r in recs)


def _run_argv(data: Path, out: Path, url: str, setting: str, conc: int, *extra: str) -> list[str]:
    return [TOOLSIGHT, "run", str(data), "--setting", setting, "--model", "openai/bench", "--base-url", url,
            "--out", str(out), "--no-report", "--no-cache", "--retries", "0", "--concurrency", str(conc), *extra]


def tiny(c: LoopbackCluster, tmp: Path, n: int, repeat: int) -> None:
    data = _dataset(tmp / "tiny", n, 32)
    proc, url = _server(c, tmp, {"steps": [{"text": "<answer>A</answer>"}]})
    print(f"\n4a. per-task overhead: {n} single-call tasks, concurrency 32, 2 Ray workers (one per node)")
    best: dict[str, tuple[float, float, float]] = {}
    try:
        for r in range(repeat):
            for name, extra in (("local", ()), ("ray", ("--executor", "ray", "--ray-address", c.address))):
                out = tmp / f"tiny-{name}-{r}"
                wall, cpu, _ = _timed(c, _run_argv(data, out, url, "direct", 32, *extra))
                got = (wall, _phase(out), cpu)
                if name not in best or got[1] < best[name][1]:
                    best[name] = got
    finally:
        proc.kill()
    (lw, lp, lc), (rw, rp, rc) = best["local"], best["ray"]
    print(f"   local  wall {lw:6.2f} s  task phase {lp:6.2f} s  driver CPU {1000 * lc / n:5.2f} ms/task")
    print(f"   ray    wall {rw:6.2f} s  task phase {rp:6.2f} s  driver CPU {1000 * rc / n:5.2f} ms/task")
    print(f"   ray overhead per task: {1000 * (rp - lp) / n:5.2f} ms in the task phase (target <= 5), "
          f"{1000 * (rw - lw) / n:5.2f} ms with start-up ({rw - lw:.1f} s in all); ratio ray/local task phase "
          f"{rp / lp:4.2f}")


def ingest(tmp: Path, n: int = 2000) -> None:
    import hashlib

    from toolsight.engine.executors.ray_executor import write_artifacts
    from toolsight.engine.store import RecordWriter

    rng = np.random.default_rng(1)
    pngs = []
    for i in range(3):  # three 128x128 PNGs per task (an input copy and two tool outputs), ~50 KB each
        ok, buf = cv2.imencode(".png", rng.integers(0, 255, (128, 128, 3), dtype=np.uint8))
        assert ok
        data = buf.tobytes() + bytes([i])
        pngs.append((f"img-{hashlib.sha256(data).hexdigest()[:12]}.png", data))
    line = json.dumps({"task_id": "t", "trajectory": {"messages": ["x" * 6000]}})
    per = sum(len(d) for _, d in pngs)
    print(f"\n4b. driver ingest: {n} outcomes, each a {len(line) // 1024} KB record and 3 PNGs ({per // 1024} KB)")
    run = tmp / "ingest"
    w = RecordWriter(run)
    t0 = time.perf_counter()
    for i in range(n):
        write_artifacts(run, f"t{i}", 1, dict(pngs))
        w.write_line(line)
    w.close()
    secs = time.perf_counter() - t0
    print(f"   {n / secs:8.0f} outcomes/s, {n * per / 1e6 / secs:6.1f} MB/s of artifacts "
          f"({1000 * secs / n:5.2f} ms per outcome)")


def grabcut(c: LoopbackCluster, tmp: Path, n: int) -> None:
    data = _dataset(tmp / "gc", n, 512, seed=2)
    script = {"rule": {"tool": "opencv_grabcut", "arguments": {"image": "img.png", "param": {"preset": "center"}},
                       "calls": 2, "answer": "<answer>A</answer>"}}
    proc, url = _server(c, tmp, script)
    print(f"\n4c. CPU-bound tool: {n} tasks x 2 GrabCut calls on 512x512, one task at a time per worker; "
          "1 vs 2 Ray workers (one node each, 1 CPU each: the machine's 2 cores)")
    ray = ("--executor", "ray", "--ray-address", c.address)
    cases = (("local, 1 at a time", 1, ()), ("local, 2 at a time", 2, ()),
             ("ray, 1 worker", 1, (*ray, "--ray-workers", "1")), ("ray, 2 workers", 2, (*ray, "--ray-workers", "2")))
    rows: dict[str, tuple[float, float]] = {}
    try:
        for name, conc, extra in cases:
            out = tmp / f"gc-{len(rows)}"
            wall, _cpu, _ = _timed(c, _run_argv(data, out, url, "opencv", conc, *extra))
            rows[name] = (wall, _phase(out))
    finally:
        proc.kill()
    for name, (wall, phase) in rows.items():
        print(f"   {name:19s} wall {wall:6.2f} s  task phase {phase:6.2f} s")
    t1, t2 = rows["ray, 1 worker"][1], rows["ray, 2 workers"][1]
    l1, l2 = rows["local, 1 at a time"][1], rows["local, 2 at a time"][1]
    print(f"   ray 2 workers vs 1: speed-up {t1 / t2:4.2f}, efficiency {t1 / (2 * t2):4.2f}; "
          f"local 2 at a time vs 1: speed-up {l1 / l2:4.2f}; ray 1 worker vs local 1 at a time: {t1 / l1:4.2f}")


def run_all(tmp: Path, tiny_tasks: int, grabcut_tasks: int, repeat: int) -> None:
    why = missing()
    if why is not None:
        print(f"\n4. Ray executor: skipped ({why})")
        return
    ingest(tmp)
    with loopback_cluster() as c:
        tiny(c, tmp, tiny_tasks, repeat)
        grabcut(c, tmp, grabcut_tasks)
