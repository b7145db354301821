"""The executor layer without a cluster: choosing an executor and its errors, the worker that runs
one task away from the driver (in this process, with the real runner, openai SDK and crop tool
against the scripted server), and what the driver does with what comes back."""

from __future__ import annotations

import asyncio
import hashlib
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from scalekit import dataset

from toolsight.benchmarks.dataset.benchmark import DatasetBenchmark
from toolsight.engine.executors import make_executor
from toolsight.engine.executors.ray_executor import RayExecutor, count_outcome, write_artifacts
from toolsight.engine.executors.worker import TaskOutcome, TaskWorker, WorkerConfig, collect_files
from toolsight.engine.options import RunOptions
from toolsight.engine.rundir import RunError
from toolsight.engine.summary import RunSummary
from toolsight.log.record import Record
from toolsight.models.scripted import Script, ScriptedServer
from toolsight.tasks.dataset import task_hashes

TOOLSIGHT = str(Path(sys.executable).parent / "toolsight")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once it is closed


def test_the_executor_options_are_checked_before_the_run(tmp_path: Path) -> None:
    assert make_executor(RunOptions.of(benchmark="b", model="m")) is None  # local: the runner's own loop
    with pytest.raises(RunError, match="need --executor ray"):
        make_executor(RunOptions.of(benchmark="b", model="m", ray_address="127.0.0.1:6379"))
    with pytest.raises(RunError, match="use one of local, ray"):
        make_executor(RunOptions.of(benchmark="b", model="m", executor="slurm"))
    port = _closed_port()
    with pytest.raises(RunError, match=f"127.0.0.1:{port}: nothing answers there"):
        make_executor(RunOptions.of(benchmark="b", model="m", executor="ray", ray_address=f"127.0.0.1:{port}"))
    with pytest.raises(RunError, match="use HOST:PORT"):
        make_executor(RunOptions.of(benchmark="b", model="m", executor="ray", ray_address="headnode"))
    ex = make_executor(RunOptions.of(benchmark="b", model="m", executor="ray", ray_workers=3))
    assert isinstance(ex, RayExecutor) and ex.workers == 3 and ex.describe()["address"] == "local"


def test_an_unreachable_cluster_is_one_line_with_exit_2_and_no_run_directory(tmp_path: Path) -> None:
    data = dataset(tmp_path / "ds", 2)
    out = tmp_path / "run"
    port = _closed_port()
    done = subprocess.run([TOOLSIGHT, "run", str(data), "--model", "reference", "--out", str(out), "--executor",
                           "ray", "--ray-address", f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"error: --ray-address 127.0.0.1:{port}: nothing answers")
    assert "Traceback" not in done.stderr
    assert not out.exists()


def test_write_artifacts_keeps_paths_inside_the_task_folder_and_checks_content_names(tmp_path: Path) -> None:
    png = b"\x89PNG not really"
    name = f"img-{hashlib.sha256(png).hexdigest()[:12]}.png"
    stale = tmp_path / "artifacts" / "t1" / "stale.png"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"from a lost attempt")
    write_artifacts(tmp_path, "t1", 1, {name: png, "work/notes.txt": b"hi"})
    folder = tmp_path / "artifacts" / "t1"
    assert (folder / name).read_bytes() == png and (folder / "work" / "notes.txt").read_bytes() == b"hi"
    assert not stale.exists()  # the lost attempt's folder was replaced, not merged
    write_artifacts(tmp_path, "t1", 2, {name: png})
    assert (tmp_path / "artifacts" / "t1@epoch2" / name).is_file()
    for bad in ("../escape.png", "/etc/x", "a/../../b", ""):
        with pytest.raises(OSError, match="bad name"):
            write_artifacts(tmp_path, "t2", 1, {bad: b"x"})
    assert not (tmp_path / "escape.png").exists()
    with pytest.raises(OSError, match="arrived damaged"):
        write_artifacts(tmp_path, "t3", 1, {name: png + b"!"})
    # a task that needed no folder (no tool): none is made; the shared input copy lands in .inputs
    write_artifacts(tmp_path, "t4", 1, {}, {name: png})
    assert not (tmp_path / "artifacts" / "t4").exists()
    assert (tmp_path / "artifacts" / ".inputs" / name).read_bytes() == png
    with pytest.raises(OSError, match="not its content hash"):
        write_artifacts(tmp_path, "t5", 1, {}, {name: png + b"!"})
    with pytest.raises(OSError, match="not its content hash"):
        write_artifacts(tmp_path, "t5", 1, {}, {"../x.png": png})


def test_collect_files_skips_symlinks(tmp_path: Path) -> None:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "a.png").write_bytes(b"a")
    (tmp_path / "d" / "sub" / "b.txt").write_bytes(b"b")
    (tmp_path / "secret").write_bytes(b"not yours")
    (tmp_path / "d" / "link").symlink_to(tmp_path / "secret")
    assert collect_files(tmp_path / "d") == {"a.png": b"a", "sub/b.txt": b"b"}
    assert collect_files(tmp_path / "missing") == {}


def _opts(data: Path, url: str, out: Path) -> RunOptions:
    return RunOptions.of(benchmark=str(data), model="openai/demo", base_url=url, setting="crop", out=str(out),
                      retries=0, cache=False)


def test_a_worker_runs_a_task_as_the_runner_does_and_names_the_driver_s_run_directory(tmp_path: Path) -> None:
    data = dataset(tmp_path / "ds", 3)
    script = Script.model_validate({"rule": {"tool": "crop", "arguments": {"image": "img.png",
                                             "bbox": [0, 0, 0.5, 0.5]}, "calls": 2, "answer": "<answer>A</answer>"}})
    driver_run = tmp_path / "driver-run"
    with ScriptedServer(script) as srv:
        opts = _opts(data, srv.openai_base_url, driver_run)
        bench = DatasetBenchmark(data)
        hashes = task_hashes(bench.load(None).tasks, data)

        async def go() -> tuple[list[TaskOutcome], Path]:
            w = TaskWorker(WorkerConfig(opts=opts.model_dump(mode="json"), run_dir=str(driver_run),
                                        concurrency=2, max_connections=2))
            await w.start()
            outs = list(await asyncio.gather(w.run("t0", 1, hashes["t0"]), w.run("t1", 2, hashes["t1"])))
            outs.append(await w.run("t2", 1, "0" * 16))  # the driver saw other content
            outs.append(await w.run("nope", 1, None))
            scratch = w.scratch
            await w.close()
            return outs, scratch

        outs, scratch = asyncio.run(go())
    first, second, changed, unknown = outs
    assert not scratch.exists()  # the worker leaves nothing behind
    assert not driver_run.exists()  # ... and never writes the driver's run directory
    rec = Record.model_validate_json(first.line)
    assert rec.task_id == "t0" and rec.epoch == 1 and rec.error is None and rec.score is not None
    assert rec.score.value == 1.0 and len(rec.trajectory.tool_calls) == 2 and rec.task_hash == hashes["t0"]
    assert str(driver_run) in first.line and str(scratch) not in first.line
    # the artifacts travel as bytes: the input copy and the two crops the record names
    assert set(first.files) == {a.file for a in rec.trajectory.artifacts}
    # ... and the run's shared copy of the input, sent once per worker (t1 has the same image)
    (inp,) = [a for a in rec.trajectory.artifacts if a.source == "input"]
    assert first.inputs == {f"{inp.id}.png": (data / "img.png").read_bytes()} and second.inputs == {}
    assert Record.model_validate_json(second.line).epoch == 2
    assert next(c["reason"] for c in first.limits + second.limits) == "run-start"  # as a local limits.jsonl starts
    assert changed.abort is not None and "different content" in changed.abort
    assert unknown.abort is not None and "has no task 'nope'" in unknown.abort
    # the driver counts the outcome as the local runner counts the record, and its model calls too
    a = RunSummary(run_dir=tmp_path, total=1)
    count_outcome(a, first.counts)
    assert (a.done, a.ran.scored, a.ran.score_sum, a.ran.passed, a.ran.tool_calls) == (1, 1, 1.0, 1, 2)
    assert a.ran.tokens == rec.trajectory.usage.total_tokens > 0 and a.stats.calls == 3 and a.stats.tokens == a.ran.tokens


def test_counts_of_an_errored_or_unscored_task(tmp_path: Path) -> None:
    s = RunSummary(run_dir=tmp_path, total=3)
    count_outcome(s, {"error": "time limit: task exceeded 5 s", "tool_calls": 1})
    count_outcome(s, {"error": None, "unscored": True})
    count_outcome(s, {"error": None, "score": 0.5, "passed": False, "score_error": None})
    assert s.done == 3 and sum(s.ran.errors.values()) == 1 and s.ran.unscored == 1
    assert s.ran.scored == 1 and s.ran.score_sum == 0.5 and s.ran.passed == 0 and s.ran.tool_calls == 1


def test_retry_runs_a_ray_run_locally_when_asked(tmp_path: Path) -> None:
    from toolsight.log.files import read_manifest, write_manifest
    from toolsight.session import retry_options

    data = dataset(tmp_path / "ds", 2)
    run = tmp_path / "run"
    done = subprocess.run([TOOLSIGHT, "run", str(data), "--model", "reference", "--out", str(run), "--no-report"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    m = read_manifest(run)
    m.options.update(executor="ray", ray_address="10.0.0.5:6379", ray_workers=4)  # as a Ray run records them
    write_manifest(run, m)
    again = retry_options(run, {})
    assert (again.control.executor, again.control.ray_address, again.control.ray_workers) == ("ray", "10.0.0.5:6379", 4)
    here = retry_options(run, {"executor": "local"})
    assert (here.control.executor, here.control.ray_address, here.control.ray_workers) == ("local", None, None)
    assert make_executor(here) is None


def test_the_progress_line_sums_the_workers_limits_on_the_model_endpoint() -> None:
    from toolsight.engine.executors.ray_executor import WorkerLimits

    view = WorkerLimits("http://gpu-1:8000/v1")
    for w in ("a", "b"):
        view.note({"endpoint": "http://gpu-1:8000/v1", "limit": 16, "previous": 16, "reason": "run-start", "worker": w})
    view.note({"endpoint": "judge", "limit": 8, "previous": 8, "reason": "run-start", "worker": "a"})  # not ours
    assert view.status() == "32/32"
    view.note({"endpoint": "http://gpu-1:8000/v1", "limit": 11, "previous": 16, "reason": "overload", "worker": "a"})
    view.note({"endpoint": "http://gpu-1:8000/v1", "limit": 12, "previous": 11, "reason": "increase", "worker": "a"})
    view.note({"endpoint": "http://gpu-1:8000/v1", "limit": 11, "previous": 16, "reason": "latency", "worker": "b"})
    assert view.status() == "23/32" and view.current == 23 and view.max_limit == 32
    assert (view.cuts, view.overloads) == (2, 1)


def test_web_tool_sets_are_refused_on_ray_before_the_run_directory_exists(tmp_path: Path) -> None:
    data = tmp_path / "web"
    made = subprocess.run([TOOLSIGHT, "generate", "browse", "--n", "1", "--out", str(data)], capture_output=True,
                          text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    out = tmp_path / "run"
    done = subprocess.run([TOOLSIGHT, "run", "visbrowse-bench", "--data", str(data), "--model", "reference",
                           "--out", str(out), "--executor", "ray"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "--executor ray does not run web tool sets yet" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()
