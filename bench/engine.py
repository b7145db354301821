"""toolsight's agent loop against the floor: bare HTTP clients driving the same conversations.

Setup (issue 19): a scripted server in its own process (aiohttp on 127.0.0.1) answers every task
with 5 `crop` tool calls, then `<answer>A</answer>`; each task is one user turn with one 64x64 PNG.
toolsight runs the dataset as `toolsight run DIR --setting crop --retries 0 --no-cache
--concurrency 32` does (`session.execute_run`: the provider adapter, records, artifacts, scoring).
The floors (`wire_floor.py`) send the same requests — same bodies and headers, checked on one task
before anything is measured — with no harness around them:
  sdk   a bare client on the SDKs' own stack: httpx2 (the transport inside the openai and anthropic
        SDKs) and `json` encoding, as the SDK encodes. The issue's floor; the targets use it.
  lean  the leanest bare client Python offers: aiohttp and orjson (what toolsight's direct path uses).
Each run is its own child process, so CPU time (getrusage, all threads) and peak RSS (VmHWM) are
its own; imports are outside the timed region (start-up is measured on its own). The sides run
interleaved `--repeat` times, round after round; the table shows each side's median run and the
targets use the median over rounds of toolsight's rate over the floor's in the same round (the
machine is shared: a burst of load elsewhere hits one round, not one side).

toolsight keeps the route (URL + headers) its SDK produced across runs (models/_routes.py); the
bench runs one 1-task warm-up per server first, so the measured runs are warm — they never import
the SDK — and prints the cold figures (first run, route learned through the SDK) next to them.

Printed per adapter (openai, anthropic, google): wall time and calls/s at 0 ms model latency, CPU
ms per model call, wall time at 50 ms latency against the ideal (waves x rounds x latency), peak
RSS, the same for 10,000 single-call tasks; then memory flatness (1,000 vs 10,000 tasks) and
start-up (`toolsight --help`; `toolsight run` until the server sees the first request).
`--cli-rss` adds the peak RSS of the crop workload run as a user runs it, through `toolsight run`
(its imports, progress display and report included); `--only-cli-rss` measures only that.

Targets (issue 19): calls/s >= 0.8 x the sdk floor at 0 ms; >= 0.7 of ideal at 50 ms; <= 1.5 ms
CPU per call; peak RSS <= 100 MB for 500 tasks; 10,000 tasks within 1.2x the RSS of 1,000;
`--help` < 0.3 s; first request < 0.6 s.

Usage: python bench/engine.py [--wires openai,anthropic,google] [--tasks 500] [--rounds 5]
       [--concurrency 32] [--single 10000] [--repeat 3] [--quick] [--profile DIR] [--cli-rss | --only-cli-rss]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import wire_floor

HERE = Path(__file__).resolve()
TOOLSIGHT = Path(sys.executable).parent / "toolsight"
ANSWER = "<answer>A</answer>"
#: the floors: name -> (transport, encoder)
FLOORS = {"sdk": ("httpx2", "sdk"), "lean": ("aiohttp", "orjson")}
LABELS = {"sdk": "bare client, the SDKs' stack (httpx2 + json)", "lean": "bare client, lean (aiohttp + orjson)",
          "toolsight": "**toolsight**"}


# --- data and server ----------------------------------------------------------------------------

def make_dataset(root: Path, n: int) -> Path:
    """n tasks, each one user turn with the same 64x64 noise PNG (~12 KB) and gold answer A."""
    import numpy as np
    from PIL import Image

    root.mkdir(parents=True, exist_ok=True)
    img = np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)
    Image.fromarray(img).save(root / "img.png")
    line = '{"id": "t%d", "turns": [{"prompt": "Which letter? q%d", "images": [{"path": "img.png"}], "answer": "A"}]}\n'
    (root / "tasks.jsonl").write_text("".join(line % (i, i) for i in range(n)))
    return root


def prompts(root: Path) -> list[str]:
    """The user texts toolsight sends: a tool setting's template adds the note naming the input image."""
    from toolsight.agents.loop import INPUT_IMAGE_NOTE

    note = INPUT_IMAGE_NOTE.format(names="img.png")
    return [json.loads(x)["turns"][0]["prompt"] + note for x in (root / "tasks.jsonl").read_text().splitlines()]


def script(rounds: int, latency_ms: float) -> Any:
    from toolsight.models.scripted import Rule, Script

    return Script(rule=Rule(tool="crop", arguments=wire_floor.CROP_ARGS, calls=rounds, answer=ANSWER,
                            seconds=latency_ms / 1000))


def base_url(wire: str, url: str) -> str:
    return url + "/v1" if wire == "openai" else url


# --- the children ---------------------------------------------------------------------------------

def _usage() -> tuple[float, float]:
    """(CPU seconds of this process, all threads; peak RSS in MB). The peak is VmHWM, not ru_maxrss:
    Linux carries the forking parent's RSS over exec into ru_maxrss, which would charge the bench
    driver's memory to the child."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    hwm = 0.0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) / 1024
    return ru.ru_utime + ru.ru_stime, hwm or ru.ru_maxrss / 1024


def child_bare(a: argparse.Namespace) -> dict[str, Any]:
    root = Path(a.data)
    conv = wire_floor.Conversation.load(root / f"floor-{a.wire}.json")
    ps = prompts(root)
    if a.transport == "aiohttp":  # imported before the clock starts, as toolsight's are
        import aiohttp  # noqa: F401
    else:
        import httpx2  # noqa: F401
    c0, _ = _usage()
    t0 = time.perf_counter()
    calls = asyncio.run(wire_floor.run_tasks(a.wire, a.url, conv, ps, a.concurrency, a.transport,
                                             encoder=a.encoder))
    wall = time.perf_counter() - t0
    c1, rss = _usage()
    return {"wall": wall, "cpu": c1 - c0, "calls": calls, "rss": rss, "tasks": len(ps)}


def child_toolsight(a: argparse.Namespace) -> dict[str, Any]:
    # imported before the clock starts, as the floors' transports are: the HTTP client and OpenCV,
    # which toolsight imports only when the first direct request / the first tool call needs them
    import aiohttp  # noqa: F401
    import cv2  # noqa: F401

    from toolsight.engine.options import RunOptions
    from toolsight.models.base import GenerateConfig
    from toolsight.session import execute_run

    out = Path(tempfile.mkdtemp(prefix="toolsight-bench-run-"))
    opts = RunOptions.of(benchmark=a.data, model=f"{a.wire}/m", base_url=base_url(a.wire, a.url), setting="crop",
                      out=str(out / "run"), concurrency=a.concurrency, max_connections=a.concurrency, retries=0,
                      cache=False, generate=GenerateConfig())
    prof = None
    if a.profile:
        import cProfile

        # the main thread's CPU time, not wall time: on a shared machine, wall time charges a function
        # for the moments another process had the core
        prof = cProfile.Profile(time.thread_time)
        prof.enable()
    c0, rss0 = _usage()
    t0 = time.perf_counter()
    s = execute_run(opts, show_report=False)
    wall = time.perf_counter() - t0
    c1, rss = _usage()
    if prof is not None:
        prof.disable()
        prof.dump_stats(a.profile)
    assert s.done == s.total and not s.ran.errors and s.ran.scored == s.total and s.ran.passed == s.total, s.line()
    sdk = any(m in sys.modules for m in ("openai", "anthropic", "google.genai"))
    shutil.rmtree(out, ignore_errors=True)
    return {"wall": wall, "cpu": c1 - c0, "calls": s.stats.calls, "rss": rss, "tasks": s.total, "sdk": sdk,
            "rss_start": rss0}


def child_cli(a: argparse.Namespace) -> dict[str, Any]:
    """The crop workload as a user runs it: `toolsight run DATA --setting crop --retries 0 --no-cache
    --concurrency 32` through the command line (its imports, progress display and report included);
    the peak RSS of the whole process, start to end."""
    import toolsight.cli

    out = Path(tempfile.mkdtemp(prefix="toolsight-bench-cli-"))
    sys.argv = ["toolsight", "run", a.data, "--model", f"{a.wire}/m", "--base-url", base_url(a.wire, a.url),
                "--setting", "crop", "--retries", "0", "--no-cache", "--concurrency", str(a.concurrency),
                "--out", str(out / "run")] + (["--no-report"] if a.cli_no_report else [])
    t0 = time.perf_counter()
    code: Any = 0
    with contextlib.redirect_stdout(sys.stderr):  # the run's own output; the result is the last stdout line
        try:
            toolsight.cli.main()
        except SystemExit as exc:
            code = exc.code
    wall = time.perf_counter() - t0
    cpu, rss = _usage()
    shutil.rmtree(out, ignore_errors=True)
    if code not in (0, None):
        raise SystemExit(f"toolsight run exited with {code}")
    sdk = any(m in sys.modules for m in ("openai", "anthropic", "google.genai"))
    pixels = sorted(m for m in ("numpy", "cv2", "PIL") if m in sys.modules)
    return {"wall": wall, "cpu": cpu, "rss": rss, "sdk": sdk, "pixels": pixels}


def cli_rss(wire: str, a: argparse.Namespace, tmp: Path) -> list[dict[str, Any]]:
    """`--repeat` runs of the crop workload through `toolsight run` (`child_cli`), route kept."""
    from toolsight.models.scripted import ScriptedServer

    extra = ["--cli-no-report"] if a.cli_no_report else []
    with ScriptedServer(script(a.rounds, 0), subprocess=True) as srv:
        run_child("toolsight", wire, srv.base_url, tmp / f"check-{wire}", 1, tmp / "cache")  # learns the route
        return [run_child("cli", wire, srv.base_url, tmp / "data", a.concurrency, tmp / "cache", extra=extra)
                for _ in range(a.repeat)]


def run_child(side: str, wire: str, url: str, data: Path, conc: int, cache: Path, profile: str | None = None,
              env: dict[str, str] | None = None, extra: list[str] | None = None) -> dict[str, Any]:
    """One measured run in its own process. `side`: "toolsight" or a floor's name. `cache` is the
    toolsight cache folder the child uses (its route store)."""
    transport, encoder = FLOORS.get(side, ("httpx2", "sdk"))
    child = side if side in ("toolsight", "cli") else "bare"
    cmd = [sys.executable, str(HERE), "--child", child, "--wire", wire,
           "--url", url, "--data", str(data), "--concurrency", str(conc), "--transport", transport,
           "--encoder", encoder]
    if profile:
        cmd += ["--profile", profile]
    cmd += extra or []
    full = {**os.environ, "TOOLSIGHT_CACHE": str(cache), "TOOLSIGHT_ROUTE_CACHE": "1", **(env or {})}
    r = subprocess.run(cmd, capture_output=True, text=True, env=full)
    if r.returncode != 0:
        raise SystemExit(f"{side} child failed:\n{r.stderr[-4000:]}")
    out: dict[str, Any] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


# --- the same-requests check ----------------------------------------------------------------------

#: set by the HTTP client itself (httpx2 adds `connection: keep-alive`, aiohttp keeps alive without it)
_OWN = {"host", "content-length", "connection"}


def check_same_requests(wire: str, tmp: Path, rounds: int, data_dirs: list[Path]) -> str:
    """One task through toolsight, then through the sdk floor with the headers toolsight sent, each
    against its own recording server: every request must have the same body and headers (call ids
    come from the server, so they match too). Writes the floors' conversation into `data_dirs`."""
    from toolsight.engine.options import RunOptions
    from toolsight.models.scripted import ScriptedServer
    from toolsight.session import execute_run

    data = make_dataset(tmp / f"check-{wire}", 1)
    with ScriptedServer(script(rounds, 0)) as srv:
        opts = RunOptions.of(benchmark=str(data), model=f"{wire}/m", base_url=base_url(wire, srv.base_url),
                          setting="crop", out=str(tmp / f"check-{wire}-run"), concurrency=1, retries=0, cache=False)
        execute_run(opts, show_report=False)
        ours = srv.requests
    headers = [(k, v) for k, v in ours[-1].headers.items() if k.lower() not in _OWN]
    conv = dataclasses.replace(wire_floor.Conversation.for_image(data / "img.png"), headers=headers)
    for d in [data, *data_dirs]:
        conv.save(d / f"floor-{wire}.json")
    with ScriptedServer(script(rounds, 0)) as srv:
        asyncio.run(wire_floor.run_tasks(wire, srv.base_url, conv, prompts(data), 1))
        floor = srv.requests
    if len(ours) != len(floor):
        raise SystemExit(f"{wire}: toolsight sent {len(ours)} requests, the floor {len(floor)}")
    for i, (x, y) in enumerate(zip(ours, floor, strict=True)):
        hx = {k.lower(): v for k, v in x.headers.items() if k.lower() not in _OWN}
        hy = {k.lower(): v for k, v in y.headers.items() if k.lower() not in _OWN}
        if x.body != y.body or x.path != y.path or hx != hy:
            raise SystemExit(f"{wire}: request {i} differs between toolsight and the floor:\n"
                             f"toolsight: {x.path} {hx} {json.dumps(x.body)[:3000]}\n"
                             f"floor:     {y.path} {hy} {json.dumps(y.body)[:3000]}")
    return f"{len(ours)} requests, same bodies and headers"


# --- start-up -----------------------------------------------------------------------------------

def startup_env(**extra: str) -> dict[str, str]:
    """The environment of the start-up runs: with bytecode caching on, as a user has it (`pip install`
    compiles the package; an editable install writes the cache on the first import). A shell with
    PYTHONDONTWRITEBYTECODE=1 (this machine's) would charge every start for compiling all of
    toolsight's modules from source (~60 ms)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}


def startup_help(n: int = 5) -> float:
    best_s = math.inf
    subprocess.run([str(TOOLSIGHT), "--help"], capture_output=True, check=True, env=startup_env())  # fills the cache
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([str(TOOLSIGHT), "--help"], capture_output=True, check=True, env=startup_env())
        best_s = min(best_s, time.perf_counter() - t0)
    return best_s


def startup_first_request(tmp: Path, wire: str, warm: bool, n: int = 3) -> float:
    """Seconds from launching `toolsight run` until the scripted server (a thread here) receives the
    first request; best of n. `warm`: the route is already kept from an earlier run (which happens
    first, against the same server); else the route store is off and the SDK must be imported."""
    from toolsight.models.scripted import ScriptedServer

    data = make_dataset(tmp / "startup", 2)
    env = startup_env(TOOLSIGHT_CACHE=str(tmp / "startup-cache"), TOOLSIGHT_ROUTE_CACHE="1" if warm else "0")
    best_s = math.inf
    with ScriptedServer(script(1, 0)) as srv:
        for i in range(n + (1 if warm else 0)):
            cmd = [str(TOOLSIGHT), "run", str(data), "--model", f"{wire}/m", "--base-url",
                   base_url(wire, srv.base_url), "--setting", "crop", "--retries", "0", "--no-cache", "--no-report",
                   "--out", str(tmp / f"startup-run-{wire}-{warm}-{i}")]
            before = len(srv.requests)
            t0 = time.time()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            _, err = proc.communicate(timeout=120)
            if proc.returncode != 0 or len(srv.requests) <= before:
                raise SystemExit(f"startup run failed: {err.decode()[-2000:]}")
            if warm and i == 0:
                continue  # the run that learns the route (and fills the bytecode cache)
            best_s = min(best_s, srv.requests[before].received - t0)
    return best_s


# --- the table ----------------------------------------------------------------------------------

def median(values: list[float]) -> float:
    return float(statistics.median(values))


def typical(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median wall time, with the highest peak RSS of all (the machine is shared:
    a burst of load elsewhere slows a run; the median run is what a side typically does)."""
    ordered = sorted(rows, key=lambda r: r["wall"])
    return {**ordered[(len(ordered) - 1) // 2], "rss": max(r["rss"] for r in rows)}


def measure_wire(wire: str, a: argparse.Namespace, tmp: Path) -> dict[str, list[dict[str, Any]]]:
    """Every run of every side, by "side@latency" (latency 0, 50 or "single"); the sides run
    interleaved, round after round, so each round's runs met the same load."""
    from toolsight.models.scripted import ScriptedServer

    data, single, warmup = tmp / "data", tmp / "single", tmp / f"check-{wire}"
    cache = tmp / "cache"
    res: dict[str, list[dict[str, Any]]] = {}
    sides = [*FLOORS, "toolsight"]
    for latency, rounds, ds in ((0, a.rounds, data), (50, a.rounds, data), ("single", 0, single)):
        with ScriptedServer(script(rounds, 0 if latency == "single" else float(latency)), subprocess=True) as srv:
            res[f"cold@{latency}"] = [run_child("toolsight", wire, srv.base_url, warmup, 1, cache)]  # learns the route
            for side in sides:
                res[f"{side}@{latency}"] = []
            for _ in range(a.repeat):
                for side in sides:
                    prof = None
                    if side == "toolsight" and a.profile and latency in (0, "single"):
                        prof = str(Path(a.profile) / f"{wire}-{latency}ms.prof")
                    res[f"{side}@{latency}"].append(run_child(side, wire, srv.base_url, ds, a.concurrency, cache,
                                                              profile=prof))
    return res


def print_table(wire: str, runs: dict[str, list[dict[str, Any]]], a: argparse.Namespace, check: str) -> list[str]:
    waves = math.ceil(a.tasks / a.concurrency)
    ideal = waves * (a.rounds + 1) * 0.050
    res = {k: typical(v) for k, v in runs.items()}
    print(f"\n## {wire}: {a.tasks} tasks x ({a.rounds} crop calls + answer), concurrency {a.concurrency}"
          f"  [{check}]")
    print(f"| | wall s, 0 ms | calls/s | CPU ms/call | wall s, 50 ms (ideal {ideal:.1f}) | of ideal | peak RSS MB "
          f"| {a.single:,} x 1: calls/s | CPU ms/call | peak RSS MB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for side in (*FLOORS, "toolsight"):
        z, f, s = res[f"{side}@0"], res[f"{side}@50"], res[f"{side}@single"]
        print(f"| {LABELS[side]} | {z['wall']:.2f} | {z['calls'] / z['wall']:,.0f} | {1000 * z['cpu'] / z['calls']:.2f} "
              f"| {f['wall']:.2f} | {ideal / f['wall']:.2f} | {z['rss']:.0f} | {s['calls'] / s['wall']:,.0f} "
              f"| {1000 * s['cpu'] / s['calls']:.2f} | {s['rss']:.0f} |")
    measured = [r for k in ("toolsight@0", "toolsight@50", "toolsight@single") for r in runs[k]]
    print(f"(the median of {a.repeat} interleaved runs per side; toolsight runs that imported an SDK: "
          f"{sum(1 for r in measured if r.get('sdk'))} of {len(measured)}; a first run, which learns the route "
          f"through the SDK, peaks at {runs['cold@0'][0]['rss']:.0f} MB)")

    def ratio(latency: str | int, floor: str) -> float:
        """The median over rounds of toolsight's calls/s over the floor's in the same round."""
        return median([(t["calls"] / t["wall"]) / (b["calls"] / b["wall"])
                       for t, b in zip(runs[f"toolsight@{latency}"], runs[f"{floor}@{latency}"], strict=True)])

    t = res["toolsight@0"]
    cpu = median([1000 * r["cpu"] / r["calls"] for r in runs["toolsight@0"]])
    of_ideal = median([ideal / r["wall"] for r in runs["toolsight@50"]])
    checks = [
        (f"{wire}: calls/s vs the sdk floor, 0 ms", ratio(0, "sdk"), ">= 0.80", 0.8, True),
        (f"{wire}: calls/s vs the sdk floor, {a.single:,} x 1", ratio("single", "sdk"), ">= 0.80", 0.8, True),
        (f"{wire}: calls/s vs the lean bare client, 0 ms", ratio(0, "lean"), "for information", 0.0, True),
        (f"{wire}: of ideal at 50 ms", of_ideal, ">= 0.70", 0.7, True),
        (f"{wire}: CPU ms per model call", cpu, "<= 1.5", 1.5, False),
        (f"{wire}: peak RSS MB, {a.tasks} tasks", t["rss"], "<= 100", 100.0, False),
    ]
    return [_line(name, val, (val >= bound) if higher else (val <= bound), target)
            for name, val, target, bound, higher in checks]


def _line(name: str, val: float, ok: bool, target: str) -> str:
    verdict = "" if target == "for information" else ("OK" if ok else "MISS")
    return f"  {name:50s} {val:8.2f}  ({'' if not verdict else 'target '}{target})  {verdict}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wires", default="openai,anthropic,google")
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--single", type=int, default=10000, help="tasks of the single-call run")
    ap.add_argument("--rss-small", type=int, default=1000, help="tasks of the small run of the memory check")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of interleaved runs; medians are reported")
    ap.add_argument("--quick", action="store_true", help="100 tasks, 2,000 single, 1 repeat: a smoke run")
    ap.add_argument("--profile", help="write cProfile stats of toolsight's 0 ms and single-call runs into this folder")
    ap.add_argument("--no-startup", action="store_true")
    # child mode
    ap.add_argument("--cli-rss", action="store_true",
                    help="also the peak RSS of the crop workload run through `toolsight run` (the command line)")
    ap.add_argument("--only-cli-rss", action="store_true", help="only that (no floors, no start-up)")
    ap.add_argument("--cli-no-report", action="store_true",
                    help="the command-line run with --no-report: the run's own peak, without the report and viewer")
    ap.add_argument("--child", choices=["bare", "toolsight", "cli"], help=argparse.SUPPRESS)
    ap.add_argument("--wire", default="openai", help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--transport", default="httpx2", choices=["httpx2", "aiohttp"], help=argparse.SUPPRESS)
    ap.add_argument("--encoder", default="sdk", choices=["sdk", "orjson"], help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        out = {"bare": child_bare, "toolsight": child_toolsight, "cli": child_cli}[a.child](a)
        print(json.dumps(out))
        return
    if a.quick:
        a.tasks, a.single, a.rss_small, a.repeat = 100, 2000, 200, 1
    if a.profile:
        Path(a.profile).mkdir(parents=True, exist_ok=True)
    summary: list[str] = []
    with tempfile.TemporaryDirectory(prefix="toolsight-bench-") as t:
        tmp = Path(t)
        os.environ["TOOLSIGHT_CACHE"] = str(tmp / "cache")  # the bench's routes stay out of the user's cache
        print(f"toolsight engine bench: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} "
              f"(the machine is shared: compare ratios, not absolute figures); median of {a.repeat} interleaved rounds")
        make_dataset(tmp / "data", a.tasks)
        make_dataset(tmp / "single", a.single)
        for wire in a.wires.split(","):
            if a.cli_rss or a.only_cli_rss:
                make_dataset(tmp / f"check-{wire}", 1)
                runs = cli_rss(wire, a, tmp)
                peak = max(r["rss"] for r in runs)
                per_run = ", ".join(f"{r['rss']:.1f}" for r in runs)
                pixels = ", ".join(runs[0]["pixels"]) or "none"
                how = " --no-report" if a.cli_no_report else ""
                print(f"\n{wire}: `toolsight run{how}` of {a.tasks} tasks x ({a.rounds} crop calls + answer), concurrency "
                      f"{a.concurrency}: peak RSS {peak:.1f} MB (highest of {len(runs)}; per run {per_run}; "
                      f"pixel libraries imported: {pixels}; SDK imported: {any(r['sdk'] for r in runs)})")
                summary.append(_line(f"{wire}: peak RSS MB, `toolsight run{how}`, {a.tasks} tasks", peak, peak <= 100, "<= 100"))
                if a.only_cli_rss:
                    continue
            check = check_same_requests(wire, tmp, a.rounds, [tmp / "data", tmp / "single"])
            res = measure_wire(wire, a, tmp)
            summary += print_table(wire, res, a, check)
            if wire == a.wires.split(",")[0]:
                from toolsight.models.scripted import ScriptedServer

                small = make_dataset(tmp / "small", a.rss_small)
                with ScriptedServer(script(0, 0), subprocess=True) as srv:
                    run_child("toolsight", wire, srv.base_url, tmp / f"check-{wire}", 1, tmp / "cache")
                    r_small = typical([run_child("toolsight", wire, srv.base_url, small, a.concurrency, tmp / "cache")
                                       for _ in range(a.repeat)])
                big = typical(res["toolsight@single"])["rss"]
                flat = big / r_small["rss"]
                print(f"\nmemory ({wire}): peak RSS {r_small['rss']:.0f} MB for {a.rss_small:,} single-call tasks, "
                      f"{big:.0f} MB for {a.single:,}")
                summary.append(_line(f"memory: RSS {a.single:,} / {a.rss_small:,} tasks", flat, flat <= 1.2, "<= 1.2"))
        if not a.no_startup and not a.only_cli_rss:
            h = startup_help()
            print(f"\nstart-up: `toolsight --help` {h:.2f} s")
            summary.append(_line("start-up: toolsight --help, s", h, h < 0.3, "< 0.3"))
            for wire in a.wires.split(","):
                warm = startup_first_request(tmp, wire, warm=True)
                cold = startup_first_request(tmp, wire, warm=False)
                print(f"start-up ({wire}): `toolsight run` to the first request {warm:.2f} s with the route kept "
                      f"from an earlier run, {cold:.2f} s without (the SDK is imported)")
                summary.append(_line(f"start-up: {wire} run to first request, s", warm, warm < 0.6, "< 0.6"))
                summary.append(_line(f"start-up: {wire} ... first run ever (no route kept)", cold, True,
                                     "for information"))
    print("\ntargets:")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
