"""Sandbox speed: in-process exec (the floor), a cold python subprocess, and the sandbox as root and as a
normal user, in one run.

Two snippets: a trivial `print(1)` and "load a 1024x1024 PNG, crop 800x800, rotate 30 degrees, save PNG".
Prints medians and the ratios against the targets, for back-to-back calls and for calls spaced
by an untimed pause (as in an agent loop, where the server forks and prepares the next child meanwhile):
  sandbox overhead on the trivial snippet <= 10 ms; sandbox <= 1.15 x the floor on the image snippet;
  sandbox >= 1.8 x faster than the cold subprocess; the normal user's sandbox within 10% of root's.
The normal-user sandbox: run as root, the bench starts a second pool whose servers run as an unprivileged
uid (`--user-uid`, default 61234; no account needed), in a private mount namespace where the interpreter
and the checkout are readable to it (as `tests/sandbox/unprivileged.py` does for the tests), so those
servers confine the code with a user namespace of their own, exactly as for a researcher's account. Not
run as root, the bench measures the normal-user path only.
Then the per-task cost of a fresh server (a task never runs where another task's code was): a server's
start (wall and CPU), and a task's first call against its later calls when tasks follow each other
after an untimed pause (`--task-gap-s`, the model's turn, in which the next fresh server starts).
Then the cost of each layer (uid switch, namespaces, tmpfs workspace, cgroups, seccomp, Landlock): the
trivial and image snippets, spaced, with all layers on and with that one layer switched off, measured
round-robin in the same run (as root; `--layer-runs 0` skips it).

    .venv/bin/python bench/sandbox.py [--runs 20] [--tasks 8] [--layer-runs 15]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
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


REPO = Path(__file__).resolve().parents[1]


def open_for_user() -> None:
    """As root: a private mount namespace of this process where the interpreter, the venv and the checkout
    are readable to other users (folders such as /root stay closed to them on the host). Called before any
    thread starts, so every server this process starts is in it."""
    spec = importlib.util.spec_from_file_location("unprivileged", REPO / "tests" / "sandbox" / "unprivileged.py")
    assert spec is not None and spec.loader is not None
    unpriv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(unpriv)
    unpriv.enter_open_namespace()


def user_dir(uid: int | None, prefix: str) -> Path:
    """A fresh folder the servers of `uid` (None: this process's own) can read and write."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    if uid is not None:
        os.chown(d, uid, uid)
    return d


def configs(uid: int) -> dict[str, dict[str, object]]:
    """The pools to measure: root's and the normal user's (only the latter when not run as root)."""
    if os.geteuid() != 0:
        return {"user": {}}
    return {"root": {}, "user": {"server_uid": uid}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--cold-runs", type=int, default=10)
    ap.add_argument("--tasks", type=int, default=8, help="tasks in the per-task fresh-server measurement")
    ap.add_argument("--task-gap-s", type=float, default=3.0,
                    help="untimed pause before each task's first call (the next fresh server starts meanwhile)")
    ap.add_argument("--layer-runs", type=int, default=15)
    ap.add_argument("--layers-only", action="store_true")
    ap.add_argument("--per-task-only", action="store_true", help="only the per-task fresh-server measurement")
    ap.add_argument("--user-uid", type=int, default=61234, help="the normal user's uid (run as root)")
    ap.add_argument("--gap-ms", type=float, default=100.0,
                    help="untimed pause before each 'spaced' sandbox call (an agent loop waits for the model)")
    args = ap.parse_args()
    cfgs = configs(args.user_uid)
    if "root" in cfgs and "user" in cfgs:
        open_for_user()
    # the floor and the cold subprocess run as the harness user: their own directory, so the files they
    # write do not become read-only inputs of the sandboxed calls (which run as another uid)
    host_ws = Path(tempfile.mkdtemp(prefix="toolsight-bench-host-"))
    wss = {name: user_dir(args.user_uid if cfg.get("server_uid") else None, f"toolsight-bench-{name}-")
           for name, cfg in cfgs.items()}
    rng = np.random.default_rng(0)
    for d in (host_ws, *wss.values()):
        Image.fromarray(rng.integers(0, 255, (1024, 1024, 3), dtype=np.uint8)).save(d / "in.png")
    if "server_uid" in cfgs.get("user", {}):
        os.chown(wss["user"] / "in.png", args.user_uid, args.user_uid)
    cv2.setNumThreads(1)  # the sandbox runs OpenCV single-threaded; compare like with like
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    gap = args.gap_ms / 1000
    if args.layers_only:
        layer_costs(wss.get("root", wss["user"]), args.layer_runs, gap)
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
        return
    if args.per_task_only:
        for name, cfg in cfgs.items():
            per_task(name, cfg, args.user_uid if cfg.get("server_uid") else None, args.tasks, args.task_gap_s, gap)
        return
    pools = {name: sandbox.SandboxPool(size=1, config={**cfg, "prewarm_servers": False}) for name, cfg in cfgs.items()}
    rows: dict[str, dict[str, float]] = {}
    try:
        for name, pool in pools.items():
            t0 = time.perf_counter()
            pool.warm(1)
            iso = pool.isolation()
            print(f"sandbox {name}: {iso['privilege']}, level={iso['level']}, server start "
                  f"{(time.perf_counter() - t0) * 1000:.0f} ms; layers in force: "
                  f"{', '.join(k for k, v in iso['layers'].items() if v is True)}")
        for label, code in (("trivial", TRIVIAL), ("image", IMAGE)):
            fns = {"floor": in_process(code, host_ws), "cold": cold(code, host_ws)}
            for name, pool in pools.items():
                fns[name] = in_sandbox(code, wss[name], pool)
            for fn in fns.values():  # warm-up
                fn()
            samples: dict[str, list[float]] = {}
            # interleaved rounds, so a change in machine load hits every method alike
            for i in range(args.runs):
                # a back-to-back call directly follows a spaced one of the same pool
                order = ["floor", *(k for name in pools for k in (f"{name} spaced", name)), "cold"]
                for key in order:
                    if key == "cold" and i >= args.cold_runs:
                        continue
                    if key.endswith(" spaced"):
                        time.sleep(gap)  # untimed: the pause in which the server prepares the next child
                    fn = fns[key.removesuffix(" spaced")]
                    t0 = time.perf_counter()
                    fn()
                    samples.setdefault(key, []).append(time.perf_counter() - t0)
            rows[label] = {k: med_ms(v) for k, v in samples.items()}
        first = next(iter(cfgs))
        full = sandbox.SandboxPool(size=1, config={**cfgs[first], "preload": "full", "prewarm_servers": False})
        try:
            full.warm(1)
            full_trivial = med_ms(timed(in_sandbox(TRIVIAL, wss[first], full), args.runs, gap_s=gap))
        finally:
            full.shutdown()
    finally:
        for pool in pools.values():
            pool.shutdown()
    report(rows, list(pools), args.gap_ms, full_trivial, first)
    for name, cfg in cfgs.items():
        per_task(name, cfg, args.user_uid if cfg.get("server_uid") else None, args.tasks, args.task_gap_s, gap)
    if args.layer_runs > 0 and "root" in cfgs:
        layer_costs(wss["root"], args.layer_runs, gap)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


def verdict(ok: bool) -> str:
    return "OK" if ok else "MISSED"


def report(rows: dict[str, dict[str, float]], names: list[str], gap_ms: float, full_trivial: float,
           first: str) -> None:
    """The medians table and each target's verdict, per privilege."""
    heads = [k for name in names for k in (name, f"{name} spaced")]
    print(f"\n{'snippet':<8} {'in-process exec':>16} {'cold subprocess':>16} "
          + " ".join(f"{h:>14}" for h in heads)
          + f"   (median ms; spaced = {gap_ms:g} ms untimed pause before each call)")
    for label, r in rows.items():
        print(f"{label:<8} {r['floor']:>16.1f} {r['cold']:>16.1f} " + " ".join(f"{r[h]:>14.1f}" for h in heads))
    t, im = rows["trivial"], rows["image"]
    print(f"\n'full' profile (python_interpreter: + pandas, scipy, sympy, matplotlib), {first}, trivial, "
          f"spaced: {full_trivial:.1f} ms")
    for name in names:
        for key, title in ((name, "back-to-back calls"), (f"{name} spaced", "spaced calls (agent-loop pattern)")):
            overhead = t[key] - t["floor"]
            ratio_floor = im[key] / im["floor"]
            speedup_i = im["cold"] / im[key]
            speedup_t = t["cold"] / t[key]
            print(f"\n{name}, {title}:")
            print(f"  trivial: sandbox overhead over exec   {overhead:6.1f} ms   target <= 10 ms    "
                  f"{verdict(overhead <= 10)}")
            print(f"  image:   sandbox / in-process floor   {ratio_floor:6.2f} x    target <= 1.15 x   "
                  f"{verdict(ratio_floor <= 1.15)}")
            print(f"  image:   cold subprocess / sandbox    {speedup_i:6.2f} x    target >= 1.8 x    "
                  f"{verdict(speedup_i >= 1.8)}")
            print(f"  trivial: cold subprocess / sandbox    {speedup_t:6.2f} x    (same target)      "
                  f"{verdict(speedup_t >= 1.8)}")
    if "root" in names and "user" in names:
        print("\nnormal user / root (target <= 1.10 x):")
        for label in ("trivial", "image"):
            for suffix in ("", " spaced"):
                ratio = rows[label]["user" + suffix] / rows[label]["root" + suffix]
                print(f"  {label:<8}{suffix or ' back-to-back':<14} {ratio:5.2f} x   {verdict(ratio <= 1.10)}")


def _cpu_s(pid: int) -> float:
    """CPU seconds of a process tree: the server, the PID namespace's init it forked, their reaped
    children (the probe) and the live ones (the spare), from /proc."""
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stats[int(entry.name)] = (entry / "stat").read_text().rsplit(")", 1)[1].split()
    tree, total = {pid}, 0.0
    for _ in range(8):  # a few generations deep
        tree |= {p for p, f in stats.items() if int(f[1]) in tree}
    for p in tree:
        if p in stats:
            total += sum(int(x) for x in stats[p][11:15])
    return total / os.sysconf("SC_CLK_TCK")


def per_task(name: str, cfg: dict[str, object], uid: int | None, tasks: int, task_gap_s: float,
             gap: float) -> None:
    """The cost of a fresh server per task: a server's start (wall, CPU), and a task's first call (a fresh
    server started ahead while the previous task ran) against its second call."""
    starts: list[tuple[float, float]] = []
    for _ in range(3):
        t0 = time.perf_counter()
        srv = sandbox.ServerProcess(dict(cfg))
        wall = time.perf_counter() - t0
        starts.append((wall, _cpu_s(srv.proc.pid)))
        srv.stop()
    pool = sandbox.SandboxPool(size=1, config=dict(cfg))  # pre-warming on, as in a run
    first: list[float] = []
    later: list[float] = []
    try:
        pool.warm(1)
        for i in range(tasks):
            ws = user_dir(uid, f"toolsight-bench-task{i}-")
            time.sleep(task_gap_s)  # untimed: the model's turn; the next task's fresh server starts meanwhile
            for out in (first, later):
                t0 = time.perf_counter()
                in_sandbox(TRIVIAL, ws, pool)()
                out.append(time.perf_counter() - t0)
                time.sleep(gap)
    finally:
        pool.shutdown()
    print(f"\nper-task fresh server, {name} ({tasks} tasks, {task_gap_s:g} s untimed between tasks; median ms):")
    print(f"  server start: {statistics.median(w for w, _ in starts) * 1000:.0f} ms wall, "
          f"{statistics.median(c for _, c in starts) * 1000:.0f} ms CPU (off the critical path when started ahead)")
    print(f"  trivial call: a task's first call {med_ms(first):.1f}, its second call {med_ms(later):.1f}")


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
            img = statistics.median(x[0] for x in samples[(name, "image")]) * 1000

            def cost(a: float, b: float, name: str = name) -> str:
                return "" if name == "all layers" else f"{a - b:+6.1f}"

            print(f"{name:<20} {t[0]:>8.1f} {cost(base['trivial'][0], t[0]):>6} {img:>8.1f} "
                  f"{cost(base['image'][0], img):>6} {t[1]:>7.2f} {cost(base['trivial'][1], t[1]):>6} "
                  f"{t[2]:>8.1f} {cost(base['trivial'][2], t[2]):>6}")
    finally:
        for srv in servers.values():
            srv.stop()

if __name__ == "__main__":
    main()
