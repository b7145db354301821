"""Sandbox speed: in-process exec (the floor), a cold python subprocess, and the sandbox, in one run.

Two snippets: a trivial `print(1)` and "load a 1024x1024 PNG, crop 800x800, rotate 30 degrees, save PNG".
Prints medians and the ratios against the targets, for back-to-back calls and for calls spaced
by an untimed pause (as in an agent loop, where the server forks and prepares the next child meanwhile):
  sandbox overhead on the trivial snippet <= 10 ms; sandbox <= 1.15 x the floor on the image snippet;
  sandbox >= 1.8 x faster than the cold subprocess.
Then the cost of each layer (uid switch, namespaces, tmpfs workspace, cgroups, seccomp, Landlock): the
trivial and image snippets, spaced, with all layers on and with that one layer switched off, measured
round-robin in the same run.

    .venv/bin/python bench/sandbox.py [--runs 20] [--layer-runs 15]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from toolsight import sandbox

TRIVIAL = "print(1)"
IMAGE = """
from PIL import Image
import numpy as np, cv2
img = np.array(Image.open('in.png').convert('RGB'))
crop = img[100:900, 100:900]
m = cv2.getRotationMatrix2D((400, 400), 30, 1.0)
rot = cv2.warpAffine(crop, m, (800, 800))
Image.fromarray(rot).save('transformed_image_0.png', 'PNG')
"""


def timed(fn: Callable[[], object], runs: int, warmup: int = 2, gap_s: float = 0.0) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(runs):
        time.sleep(gap_s)  # not timed: the pause between calls (a model generating) in an agent loop
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def in_process(code: str, ws: Path) -> Callable[[], object]:
    def go() -> None:
        import os

        cwd = os.getcwd()
        os.chdir(ws)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, "<code>", "exec"), {"__name__": "__main__"})
        finally:
            os.chdir(cwd)
    return go


def cold(code: str, ws: Path) -> Callable[[], object]:
    def go() -> None:
        subprocess.run([sys.executable, "-c", code], cwd=ws, check=True, capture_output=True)
    return go


def in_sandbox(code: str, ws: Path, pool: sandbox.SandboxPool) -> Callable[[], object]:
    def go() -> None:
        res = pool.run(code, ws)
        if not res.ok:
            raise SystemExit(f"sandbox call failed: {res.error}\n{res.stderr}")
    return go


def med_ms(xs: list[float]) -> float:
    return statistics.median(xs) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--cold-runs", type=int, default=10)
    ap.add_argument("--layer-runs", type=int, default=15)
    ap.add_argument("--layers-only", action="store_true")
    ap.add_argument("--gap-ms", type=float, default=100.0,
                    help="untimed pause before each 'spaced' sandbox call (an agent loop waits for the model)")
    args = ap.parse_args()
    ws = Path(tempfile.mkdtemp(prefix="toolsight-bench-"))
    # the floor and the cold subprocess run as the harness user: their own directory, so the files they
    # write do not become read-only inputs of the sandboxed calls (which run as another uid)
    host_ws = Path(tempfile.mkdtemp(prefix="toolsight-bench-host-"))
    rng = np.random.default_rng(0)
    for d in (ws, host_ws):
        Image.fromarray(rng.integers(0, 255, (1024, 1024, 3), dtype=np.uint8)).save(d / "in.png")
    cv2.setNumThreads(1)  # the sandbox runs OpenCV single-threaded; compare like with like
    pool = sandbox.SandboxPool(size=1)
    t0 = time.perf_counter()
    pool.warm(1)
    start_s = time.perf_counter() - t0
    iso = pool.isolation()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"sandbox: level={iso['level']} layers in force: "
          f"{', '.join(k for k, v in iso['layers'].items() if v is True)}")
    print(f"server start ('image' profile: numpy, cv2, PIL preloaded): {start_s * 1000:.0f} ms")
    rows: dict[str, dict[str, float]] = {}
    gap = args.gap_ms / 1000
    if args.layers_only:
        pool.shutdown()
        layer_costs(ws, args.layer_runs, gap)
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
        return
    try:
        for label, code in (("trivial", TRIVIAL), ("image", IMAGE)):
            fns = {"floor": in_process(code, host_ws), "cold": cold(code, host_ws),
                   "sandbox": in_sandbox(code, ws, pool)}
            for fn in fns.values():  # warm-up
                fn()
            samples: dict[str, list[float]] = {"floor": [], "cold": [], "sandbox": [], "spaced": []}
            # interleaved rounds, so a change in machine load hits every method alike
            for i in range(args.runs):
                # "sandbox" directly follows "spaced": a back-to-back pair of sandbox calls
                for key in ("floor", "spaced", "sandbox", "cold"):
                    if key == "cold" and i >= args.cold_runs:
                        continue
                    if key == "spaced":
                        time.sleep(gap)  # untimed: the pause in which the server prepares the next child
                    fn = fns["sandbox" if key == "spaced" else key]
                    t0 = time.perf_counter()
                    fn()
                    samples[key].append(time.perf_counter() - t0)
            rows[label] = {k: med_ms(v) for k, v in samples.items()}
        full = sandbox.SandboxPool(size=1, config={"preload": "full"})
        try:
            full.warm(1)
            full_trivial = med_ms(timed(in_sandbox(TRIVIAL, ws, full), args.runs, gap_s=gap))
        finally:
            full.shutdown()
    finally:
        pool.shutdown()
    print(f"\n{'snippet':<8} {'in-process exec':>16} {'cold subprocess':>16} {'sandbox':>10} "
          f"{'sandbox, spaced':>16}   (median ms; spaced = {args.gap_ms:g} ms untimed pause before each call)")
    for label, r in rows.items():
        print(f"{label:<8} {r['floor']:>16.1f} {r['cold']:>16.1f} {r['sandbox']:>10.1f} {r['spaced']:>16.1f}")
    t, im = rows["trivial"], rows["image"]

    def verdict(ok: bool) -> str:
        return "OK" if ok else "MISSED"

    print(f"\n'full' profile (python_interpreter: + pandas, scipy, sympy, matplotlib), trivial, spaced: "
          f"{full_trivial:.1f} ms")
    for key, title in (("sandbox", "back-to-back calls"), ("spaced", "spaced calls (agent-loop pattern)")):
        overhead = t[key] - t["floor"]
        ratio_floor = im[key] / im["floor"]
        speedup_i = im["cold"] / im[key]
        speedup_t = t["cold"] / t[key]
        print(f"\n{title}:")
        print(f"  trivial: sandbox overhead over exec   {overhead:6.1f} ms   target <= 10 ms    "
              f"{verdict(overhead <= 10)}")
        print(f"  image:   sandbox / in-process floor   {ratio_floor:6.2f} x    target <= 1.15 x   "
              f"{verdict(ratio_floor <= 1.15)}")
        print(f"  image:   cold subprocess / sandbox    {speedup_i:6.2f} x    target >= 1.8 x    "
              f"{verdict(speedup_i >= 1.8)}")
        print(f"  trivial: cold subprocess / sandbox    {speedup_t:6.2f} x    (same target)      "
              f"{verdict(speedup_t >= 1.8)}")
    if args.layer_runs > 0:
        layer_costs(ws, args.layer_runs, gap)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


LAYERS = {
    "all layers": {},
    "- uid switch": {"uid": False},
    "- mount ns + tmpfs": {"mountns": False},
    "- tmpfs workspace": {"tmpfs": False},
    "- net namespace": {"netns": False},
    "- ipc namespace": {"ipcns": False},
    "- memory cgroup": {"cgroup_memory": False},
    "- all cgroups": {"cgroup": False},
    "- seccomp": {"seccomp": False},
    "- Landlock": {"landlock": False},
}


def layer_costs(ws: Path, runs: int, gap: float) -> None:
    """Each layer's cost: spaced calls with every layer, and with one layer off (interleaved). Besides the
    call's wall time it shows, from the child itself, the setup after the request (on the critical path)
    and the preparation before it (namespaces, skeleton, cgroups: off the critical path), which suffer
    less from the machine's load than the wall time does."""
    servers = {name: sandbox.ServerProcess(cfg) for name, cfg in LAYERS.items()}
    dirs: dict[str, Path] = {}
    ws.chmod(0o755)  # without a mount namespace the sandbox uid must traverse the real path
    for i, name in enumerate(LAYERS):  # one workspace each: a layer's absence changes file ownership
        dirs[name] = ws / f"layer{i}"
        dirs[name].mkdir()
        (dirs[name] / "in.png").write_bytes((ws / "in.png").read_bytes())
    try:
        samples: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for _ in range(runs):
            for label, code in (("trivial", TRIVIAL), ("image", IMAGE)):
                for name, srv in servers.items():
                    time.sleep(gap)
                    t0 = time.perf_counter()
                    frame = srv.request({"op": "run", "code": code, "workspace": str(dirs[name]), "limits": {}}, 60)
                    wall = time.perf_counter() - t0
                    rep = frame.get("report") or {}
                    if not rep.get("ok"):
                        raise SystemExit(f"{name}: {frame.get('stderr')}")
                    samples.setdefault((name, label), []).append(
                        (wall, float(rep.get("setup_s", 0.0)), float(rep.get("prepare_s", 0.0))))
        print(f"\nper-layer cost ({runs} interleaved runs, spaced; median ms; 'cost' = all layers minus without it)")
        print(f"{'configuration':<20} {'trivial':>8} {'cost':>6} {'image':>8} {'cost':>6} "
              f"{'setup':>7} {'cost':>6} {'prepare':>8} {'cost':>6}")
        base = {lab: [statistics.median(x[k] for x in samples[("all layers", lab)]) * 1000 for k in range(3)]
                for lab in ("trivial", "image")}
        for name in LAYERS:
            t = [statistics.median(x[k] for x in samples[(name, "trivial")]) * 1000 for k in range(3)]
            i = statistics.median(x[0] for x in samples[(name, "image")]) * 1000

            def cost(a: float, b: float, name: str = name) -> str:
                return "" if name == "all layers" else f"{a - b:+6.1f}"

            print(f"{name:<20} {t[0]:>8.1f} {cost(base['trivial'][0], t[0]):>6} {i:>8.1f} "
                  f"{cost(base['image'][0], i):>6} {t[1]:>7.2f} {cost(base['trivial'][1], t[1]):>6} "
                  f"{t[2]:>8.1f} {cost(base['trivial'][2], t[2]):>6}")
    finally:
        for srv in servers.values():
            srv.stop()

if __name__ == "__main__":
    main()
