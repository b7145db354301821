"""The Ray executor end to end, on a real two-node Ray cluster on 127.0.0.1 (raycluster.py), with the
openai SDK talking to the scripted server and the real crop tool.

- the same tasks run with `--executor ray` and locally give records identical in content (times,
  run-directory paths and the server's call ids aside) and byte-identical artifacts, epochs included;
  workers run on both nodes; the manifest names the executor;
- a worker killed mid-run: its tasks run again elsewhere, and every task has exactly one record;
- the driver killed mid-run, then `--resume` with the Ray executor: every task recorded once.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from raycluster import LoopbackCluster, loopback_cluster, missing
from scalekit import dataset, records

TOOLSIGHT = str(Path(sys.executable).parent / "toolsight")


@pytest.fixture(scope="module")
def cluster() -> Iterator[LoopbackCluster]:
    why = missing()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{why} (CI must run the Ray executor's tests)")
        pytest.skip(why)
    with loopback_cluster() as c:
        yield c


class Server:
    """The scripted server, inside the cluster's namespace: `calls` crops, then answer A."""

    def __init__(self, cluster: LoopbackCluster, folder: Path, seconds: float, calls: int = 2,
                 script_json: dict[str, Any] | None = None) -> None:
        script = folder / "script.json"
        script.write_text(json.dumps(script_json or {"rule": {
            "tool": "crop", "arguments": {"image": "img.png", "bbox": [0, 0, 0.5, 0.5]}, "calls": calls,
            "answer": "<answer>A</answer>", "seconds": seconds}}))
        self.proc = cluster.popen([sys.executable, "-m", "toolsight.models.scripted.server", "--script", str(script),
                                   "--port", "0"])
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"OpenAI base URL: (\S+)\)", line)
        assert m, line
        self.url = m.group(1)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def _argv(data: Path, out: Path, url: str, *extra: str) -> list[str]:
    return [TOOLSIGHT, "run", str(data), "--setting", "crop", "--model", "openai/demo", "--base-url", url,
            "--out", str(out), "--no-report", "--retries", "0", *extra]


_CALL_ID = re.compile(r"call_\d+")
_TIMES = {"started_at", "duration_s", "waited_s"}


def _normal(rec: dict[str, Any], run_dir: Path) -> Any:
    """A record without what differs between two runs of the same task: times, the run directory,
    and the ids the server gave its tool calls (numbered in the order it answered)."""
    def strip(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in _TIMES}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    text = json.dumps(strip(rec), sort_keys=True).replace(str(run_dir), "RUN")
    ids: dict[str, str] = {}
    return json.loads(_CALL_ID.sub(lambda m: ids.setdefault(m.group(0), f"call#{len(ids)}"), text))


def _artifacts(run_dir: Path) -> dict[str, bytes]:
    root = run_dir / "artifacts"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _units(run_dir: Path) -> Counter[tuple[str, int]]:
    return Counter((r["task_id"], r.get("epoch", 1)) for r in records(run_dir))


def test_ray_records_match_a_local_run_of_the_same_tasks(cluster: LoopbackCluster, tmp_path: Path) -> None:
    data = dataset(tmp_path / "ds", 8)
    srv = Server(cluster, tmp_path, seconds=0.01)
    try:
        common = ("--epochs", "2", "--concurrency", "4")
        local = cluster.run(_argv(data, tmp_path / "local", srv.url, *common), OPENAI_API_KEY="k")
        ray = cluster.run(_argv(data, tmp_path / "ray", srv.url, *common, "--executor", "ray",
                                "--ray-address", cluster.address), OPENAI_API_KEY="k")
    finally:
        srv.stop()
    assert local.returncode == 0, local.stderr[-2000:]
    assert ray.returncode == 0, ray.stderr[-3000:]
    a, b = records(tmp_path / "local"), records(tmp_path / "ray")
    assert len(a) == len(b) == 16
    na = {(r["task_id"], r["epoch"]): _normal(r, tmp_path / "local") for r in a}
    nb = {(r["task_id"], r["epoch"]): _normal(r, tmp_path / "ray") for r in b}
    assert na.keys() == nb.keys()
    for k in na:
        assert na[k] == nb[k], k
    assert all(r["score"]["value"] == 1.0 and r["error"] is None for r in b)
    assert all(len(r["trajectory"]["tool_calls"]) == 2 for r in b)  # the real crop ran, twice per task
    # the artifacts (input copies and crops, epoch folders included) are the same files, byte for byte
    arts = _artifacts(tmp_path / "ray")
    assert arts == _artifacts(tmp_path / "local") and any("@epoch2/" in k for k in arts)
    # the work was spread over both nodes of the cluster, and the manifest says where it ran
    nodes = set(re.findall(r"started on node (\w+)", ray.stderr))
    assert len(nodes) == 2, ray.stderr[-2000:]
    manifest = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert manifest["backends"]["executor"]["name"] == "ray"
    assert manifest["options"]["executor"] == "ray"
    # what the requests carried, gathered from the workers: the same as the local run's
    sent = {k: manifest["sent"][k] for k in ("tools", "tool_sets", "system_prompts", "user_prompts")}
    local_sent = json.loads((tmp_path / "local" / "manifest.json").read_text())["sent"]
    assert manifest["sent"]["requests"] == local_sent["requests"] > 0 and sent["tools"]

    def same(vals: list[Any]) -> list[str]:  # the scripted server numbers its tool calls per run (call_7)
        return sorted({re.sub(r"call_\d+", "call_N", json.dumps(v)) for v in vals})

    assert {k: same(vals) for k, vals in sent.items()} == {k: same(local_sent[k]) for k in sent}
    limits = [json.loads(x) for x in (tmp_path / "ray" / "limits.jsonl").read_text().splitlines()]
    assert len({c["worker"] for c in limits if c["reason"] == "run-start"}) == 2
    assert "limit 32/32" in ray.stderr  # the progress line: the workers' limits (2 x 16 of --max-connections 32)


def _follow(proc: subprocess.Popen[str], lines: list[str]) -> threading.Thread:
    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


def _wait_for(cond: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_a_worker_killed_mid_run_loses_and_duplicates_no_task(cluster: LoopbackCluster, tmp_path: Path) -> None:
    n = 40
    data = dataset(tmp_path / "ds", n)
    srv = Server(cluster, tmp_path, seconds=0.15)  # 3 calls: ~0.45 s per task, 2 in flight per worker
    run = tmp_path / "run"
    lines: list[str] = []
    try:
        proc = cluster.popen(_argv(data, run, srv.url, "--concurrency", "4", "--executor", "ray",
                                   "--ray-address", cluster.address), OPENAI_API_KEY="k")
        reader = _follow(proc, lines)

        def pids() -> list[int]:
            return [int(p) for p in re.findall(r"\(pid (\d+)\) started", "".join(lines))]

        _wait_for(lambda: len(pids()) == 2, 120, "two workers")
        _wait_for(lambda: len(records(run)) >= 6 or proc.poll() is not None, 120, "the first records")
        assert proc.poll() is None, "the run ended before a worker could be killed"
        victim = pids()[0]
        os.kill(victim, signal.SIGKILL)
        rc = proc.wait(timeout=300)
        reader.join(10)
    finally:
        srv.stop()
    err = "".join(lines)
    assert rc == 0, err[-3000:]
    units = _units(run)
    assert len(units) == n and set(units.values()) == {1}, units  # every task once: none lost, none twice
    recs = records(run)
    assert all(r["error"] is None and r["score"]["value"] == 1.0 for r in recs)
    assert err.count(" lost (") == 1 and "starting a replacement worker" in err, err[-3000:]
    for r in recs:  # each record's artifacts are in place (a lost attempt's partial folder was replaced)
        folder = run / "artifacts" / r["task_id"]
        assert {a["file"] for a in r["trajectory"]["artifacts"]} == {p.name for p in folder.iterdir()}


def _stopped_midway(cluster: LoopbackCluster, tmp_path: Path, n: int, after: int
                    ) -> tuple[Server, subprocess.Popen[str], list[str], Path]:
    """A Ray run of `n` tasks, started and still going once `after` tasks are recorded."""
    data = dataset(tmp_path / "ds", n)
    srv = Server(cluster, tmp_path, seconds=0.1)
    run = tmp_path / "run"
    argv = _argv(data, run, srv.url, "--concurrency", "4", "--executor", "ray", "--ray-address", cluster.address)
    proc = cluster.popen(argv, OPENAI_API_KEY="k")
    try:
        _wait_for(lambda: len(records(run)) >= after or proc.poll() is not None, 120, "the first records")
        assert proc.poll() is None, "the run ended before it could be stopped"
    except BaseException:
        proc.kill()
        srv.stop()
        raise
    return srv, proc, argv, run


def test_a_killed_driver_resumes_on_ray_with_every_task_recorded_once(cluster: LoopbackCluster,
                                                                      tmp_path: Path) -> None:
    n = 30
    srv, proc, argv, run = _stopped_midway(cluster, tmp_path, n, after=5)
    try:
        proc.kill()  # SIGKILL: no clean-up; Ray ends the driver's job and its actors
        proc.wait()
        before = len(_units(run))
        assert 5 <= before < n
        resumed = cluster.run([*argv, "--resume"], OPENAI_API_KEY="k")
    finally:
        srv.stop()
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    units = _units(run)
    assert len(units) == n and set(units.values()) == {1}, units
    assert f"{before} already finished" in resumed.stderr


def test_ctrl_c_stops_a_ray_run_cleanly_and_it_resumes(cluster: LoopbackCluster, tmp_path: Path) -> None:
    n = 20
    srv, proc, argv, run = _stopped_midway(cluster, tmp_path, n, after=3)
    try:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        resumed = cluster.run([*argv, "--resume"], OPENAI_API_KEY="k")
    finally:
        srv.stop()
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err and "never retrieved" not in err, err[-3000:]  # feeders end with the run
    assert "resume with: " in err
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    units = _units(run)
    assert len(units) == n and set(units.values()) == {1}, units


def test_a_sweep_runs_its_runs_on_ray_side_by_side(cluster: LoopbackCluster, tmp_path: Path) -> None:
    data = dataset(tmp_path / "ds", 6)
    srv = Server(cluster, tmp_path, seconds=0.01, calls=1)
    plan = tmp_path / "plan.toml"
    models = "".join(f'[[models]]\nspec = "openai/m{i}"\nbase_url = "{srv.url}"\n' for i in range(2))
    plan.write_text(f'name = "rs"\nparallel = 2\n[defaults]\nexecutor = "ray"\nray_address = "{cluster.address}"\n'
                    f'concurrency = 2\ncache = false\n{models}[[benchmarks]]\nname = "{data}"\nsettings = ["crop"]\n')
    try:
        done = cluster.run([TOOLSIGHT, "sweep", str(plan), "--out", str(tmp_path / "sw")], OPENAI_API_KEY="k")
    finally:
        srv.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    runs = sorted((tmp_path / "sw" / "runs").iterdir())
    assert len(runs) == 2
    for run in runs:  # both runs went through the one Ray connection of the sweep's process
        manifest = json.loads((run / "manifest.json").read_text())
        assert manifest["backends"]["executor"]["address"] == cluster.address
        assert len(_units(run)) == 6 and all(r["score"]["value"] == 1.0 for r in records(run))


def test_sandboxed_code_runs_in_the_workers_and_each_node_s_isolation_is_recorded(cluster: LoopbackCluster,
                                                                                   tmp_path: Path) -> None:
    data = tmp_path / "jig"
    made = subprocess.run([TOOLSIGHT, "generate", "jigsaw", "--n", "4", "--out", str(data)], capture_output=True,
                          text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    run = tmp_path / "run"
    done = cluster.run([TOOLSIGHT, "run", str(data), "--setting", "code", "--model", "reference", "--out", str(run),
                        "--no-report", "--concurrency", "2", "--executor", "ray", "--ray-address", cluster.address])
    assert done.returncode == 0, done.stderr[-3000:]
    recs = records(run)
    assert len(recs) == 4
    for r in recs:  # the reference solution ran as model code in each worker's sandbox and solved the task
        calls = r["trajectory"]["tool_calls"]
        assert calls and all(c["ok"] for c in calls) and r["score"]["value"] == 1.0, r["task_id"]
    executor = json.loads((run / "manifest.json").read_text())["backends"]["executor"]
    assert executor["workers"] == 2 and len(executor["nodes"]) == 2
    assert set(executor["isolation"]) == set(executor["nodes"])
    assert all(iso["sandbox"] == "fork-server" and iso["layers"]["seccomp"] for iso in executor["isolation"].values())


def test_workers_that_cannot_start_do_not_hold_up_those_that_did(cluster: LoopbackCluster, tmp_path: Path) -> None:
    # 3 workers asked of a 2-CPU cluster: the third waits for a CPU that never frees. The two that
    # started must get on with the tasks (feeding only once all had started hung here for the
    # 300 s start timeout — and deadlocked two runs of a sweep against each other).
    data = dataset(tmp_path / "ds", 6)
    srv = Server(cluster, tmp_path, seconds=0.01, calls=1)
    run = tmp_path / "run"
    try:
        done = cluster.run(_argv(data, run, srv.url, "--concurrency", "3", "--executor", "ray", "--ray-address",
                                 cluster.address, "--ray-workers", "3"), timeout=150, OPENAI_API_KEY="k")
    finally:
        srv.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(_units(run)) == 6 and all(r["score"]["value"] == 1.0 for r in records(run))
    assert len(set(re.findall(r"started on node (\w+)", done.stderr))) == 2


def test_fail_on_error_stops_a_ray_run_with_exit_3_and_retry_finishes_it(cluster: LoopbackCluster,
                                                                         tmp_path: Path) -> None:
    # every request refused: each task ends in an error; one worker, one task at a time, so exactly
    # two records are written before the driver stops sending tasks
    data = dataset(tmp_path / "ds", 8)
    run = tmp_path / "run"
    srv = Server(cluster, tmp_path, seconds=0, script_json={"steps": [{"fault": "status", "status": 400}]})
    try:
        r = cluster.run(_argv(data, run, srv.url, "--concurrency", "1", "--executor", "ray", "--ray-address",
                              cluster.address, "--ray-workers", "1", "--fail-on-error", "2"), OPENAI_API_KEY="k")
    finally:
        srv.stop()
    assert r.returncode == 3, r.stderr[-3000:]
    assert len(records(run)) == 2 and all(rec["error"] for rec in records(run))
    summary = [x for x in r.stderr.splitlines() if x.strip()][-1]
    assert "stopped early: 2 task(s) ended in error (--fail-on-error 2)" in summary, summary
    assert f"toolsight retry {run}" in summary
    assert json.loads((run / "status.json").read_text())["state"] == "interrupted"
    good = Server(cluster, tmp_path, seconds=0.01, calls=1)
    try:
        again = cluster.run([TOOLSIGHT, "retry", str(run), "--base-url", good.url, "--no-report"], OPENAI_API_KEY="k")
    finally:
        good.stop()
    assert again.returncode == 0, again.stderr[-3000:]
    latest = {rec["task_id"]: rec for rec in records(run)}
    assert len(latest) == 8 and all(rec["error"] is None and rec["score"]["value"] == 1.0 for rec in latest.values())
