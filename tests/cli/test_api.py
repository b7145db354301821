"""The Python API: `toolsight.evaluate` in plain code and inside a running event loop (a notebook),
`evaluate_async` on the caller's loop, the result's tables, task filters, and one engine with the CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import toolsight
from clikit import dataset, env, records, ts
from toolsight.api import RunHooks
from toolsight.errors import ToolsightError
from toolsight.log.files import read_manifest
from toolsight.metrics.compute import compute_run_metrics
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(Script(steps=[Step(text="<answer>A</answer>")])) as srv:  # right for even task ids
        yield srv


def _threads() -> tuple[RunHooks, list[str]]:
    seen: list[str] = []
    return RunHooks(note=lambda _: None, started=lambda _: seen.append(threading.current_thread().name)), seen


def test_evaluate_in_plain_code_and_inside_a_running_loop(tmp_path: Path, server: ScriptedServer) -> None:
    ds = dataset(tmp_path / "ds", 6)
    hooks, seen = _threads()
    plain = toolsight.evaluate(str(ds), "openai/x", base_url=server.openai_base_url, setting="direct",
                               out=str(tmp_path / "plain"), hooks=hooks)

    async def notebook_cell() -> toolsight.EvalResult:
        # a cell's code runs while the notebook's loop is running: asyncio.run would fail here
        return toolsight.evaluate(str(ds), "openai/x", base_url=server.openai_base_url, setting="direct",
                                  out=str(tmp_path / "cell"), hooks=hooks)

    cell = asyncio.run(notebook_cell())
    assert seen[0] == "MainThread" and seen[1].startswith("toolsight-evaluate")  # the worker thread took it
    for res in (plain, cell):
        assert res.exit_code == 0 and res.ok and res.stopped is None
        assert res.run_dir.is_dir() and (res.run_dir / "records.jsonl").is_file()
        assert sorted(r.task_id for r in res.records) == [f"t{i}" for i in range(6)]
        assert res.accuracy == pytest.approx(0.5)
        row = res.scores.iloc[0]
        assert row["Model"] == "openai/x" and row["Setting"] == "direct" and row["N"] == 6 and row["Errors"] == 0
        assert row["Score %"] == pytest.approx(50.0) and row["APR %"] == pytest.approx(50.0)
        m = compute_run_metrics(res.run_dir)
        assert row["Score % lo"] == pytest.approx(100 * (m.overall.score.lo or 0))
        assert row["Score % hi"] == pytest.approx(100 * (m.overall.score.hi or 0))
        s = res.samples.set_index("task_id")
        assert list(s.loc[["t0", "t1"], "passed"]) == [True, False] and set(s["epoch"]) == {1}
        assert "tag:category" in s.columns and "Score" in res.tables
        assert "Tool use" not in res.tables  # `direct` offers no tools: no tool table (issue 26 item 14)
        assert "| openai/x | direct | 6 | 0 | 50.0" in res.report("md")


def test_evaluate_async_runs_on_the_callers_loop(tmp_path: Path, server: ScriptedServer) -> None:
    ds = dataset(tmp_path / "ds", 4)
    hooks, seen = _threads()

    async def main() -> toolsight.EvalResult:
        res = await toolsight.evaluate_async(str(ds), "openai/x", base_url=server.openai_base_url, setting="direct",
                                             out=str(tmp_path / "run"), hooks=hooks, tags={"category": "even"})
        return res

    res = asyncio.run(main())
    assert seen == ["MainThread"]
    assert sorted(r.task_id for r in res.records) == ["t0", "t2"] and res.accuracy == 1.0


def test_filters_select_tasks_and_a_resume_widens_them(tmp_path: Path, server: ScriptedServer) -> None:
    ds = dataset(tmp_path / "ds", 6)  # levels: t0 1, t1 2, t2 3, t3 1, t4 2, t5 3

    def ids(**kw: Any) -> list[str]:
        out = tmp_path / f"r{len(list(tmp_path.iterdir()))}"
        res = toolsight.evaluate(str(ds), "openai/x", base_url=server.openai_base_url, setting="direct", out=str(out),
                                 progress=False, **kw)
        return sorted(r.task_id for r in res.records)

    assert ids(task_ids=["t1", "t4"]) == ["t1", "t4"]
    assert ids(tags={"category": "even"}) == ["t0", "t2", "t4"]
    assert ids(tags={"category": "even", "level": ["1", "2"]}) == ["t0", "t4"]
    assert ids(tags={"category": "odd"}, limit=2) == ["t1", "t3"]  # the filter first, then --limit
    run = tmp_path / "widen"
    first = toolsight.evaluate(str(ds), "openai/x", base_url=server.openai_base_url, setting="direct", out=str(run),
                               task_ids="t0", progress=False)
    assert first.summary.done == 1
    wider = toolsight.evaluate(str(ds), "openai/x", base_url=server.openai_base_url, setting="direct", out=str(run),
                               tags={"category": "even"}, resume=True, progress=False)
    assert wider.summary.done == 2 and wider.summary.skipped == 1  # t2, t4 run; t0 kept
    assert sorted(r["task_id"] for r in records(run)) == ["t0", "t2", "t4"]


@pytest.mark.parametrize(("kw", "needles"), [
    ({"task_ids": ["t9"]}, ["--task-id t9: no such task", "task ids: t0, t1"]),
    ({"tags": {"categry": "even"}}, ["no task has the tag 'categry'", "did you mean 'category'?"]),
    ({"tags": {"category": "prime"}}, ["no task has category=prime", "values: even, odd"]),
    ({"caps": {"max_tool_cals": 3}}, ["caps max_tool_cals: unknown cap", "max_tool_calls"]),
    ({"temprature": 0}, ["unknown option 'temprature'", "did you mean temperature"]),
    ({"top_p": "high"}, ["top_p", "valid number"]),
    ({"epochs_reducer": "best"}, ["--epochs-reducer", "pass_at_k"]),
])
def test_mistakes_are_one_line_errors_before_any_run(kw: dict[str, Any], needles: list[str], tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    out = tmp_path / "run"
    with pytest.raises(ToolsightError) as info:
        toolsight.evaluate(str(ds), "openai/x", base_url="http://127.0.0.1:9/v1", setting="direct", out=str(out),
                           progress=False, **kw)
    text = str(info.value)
    assert "\n" not in text
    for n in needles:
        assert n in text, text
    assert not out.exists()  # nothing was started


def test_the_cli_and_the_api_make_the_same_run(tmp_path: Path, server: ScriptedServer) -> None:
    ds = dataset(tmp_path / "ds", 4)
    flags = ["--setting", "direct", "--tag", "category=even", "-M", "top_p=0.9", "--cap", "max_rounds=3",
             "--epochs", "2", "--concurrency", "1"]
    r = ts("run", str(ds), "-m", "openai/x", "--base-url", server.openai_base_url, "--out", str(tmp_path / "cli"),
           "--no-report", *flags)
    assert r.returncode == 0, r.stderr
    api = toolsight.evaluate(str(ds), "openai/x", base_url=server.openai_base_url, out=str(tmp_path / "api"),
                             setting="direct", tags={"category": "even"}, top_p=0.9, caps={"max_rounds": 3}, epochs=2,
                             concurrency=1, progress=False)
    a, b = read_manifest(tmp_path / "cli"), read_manifest(api.run_dir)
    assert a.config_hash == b.config_hash and a.identity == b.identity
    assert a.agent_settings == b.agent_settings
    drop = {"out", "resume"}
    assert {k: v for k, v in a.options.items() if k not in drop} == {k: v for k, v in b.options.items() if k not in drop}
    answers = [sorted((x["task_id"], x["epoch"], x["score"]["passed"]) for x in records(d))
               for d in (tmp_path / "cli", api.run_dir)]
    assert answers[0] == answers[1] and len(answers[0]) == 4


def test_ctrl_c_inside_a_running_loop_keeps_records_and_resumes(tmp_path: Path) -> None:
    """A notebook interrupt while `evaluate` waits for its worker thread: the run stops cleanly
    (finished records kept, nothing half-written), KeyboardInterrupt reaches the caller, and the
    same call with resume=True finishes the rest."""
    ds = dataset(tmp_path / "ds", 12)
    run = tmp_path / "run"
    with ScriptedServer(Script(steps=[Step(text="<answer>A</answer>", seconds=0.2)]), record=False) as srv:
        code = textwrap.dedent(f"""
            import asyncio, json, os, signal, threading, time
            from pathlib import Path
            import toolsight

            def interrupt():
                rec = Path({str(run)!r}) / "records.jsonl"
                while not (rec.exists() and rec.read_text().count("\\n") >= 2):
                    time.sleep(0.02)
                os.kill(os.getpid(), signal.SIGINT)

            async def cell():
                # as in Jupyter: the kernel turns SIGINT into KeyboardInterrupt in the cell's (main) thread
                # (asyncio.run's own handler would only cancel this coroutine)
                signal.signal(signal.SIGINT, signal.default_int_handler)
                threading.Thread(target=interrupt, daemon=True).start()
                try:
                    toolsight.evaluate({str(ds)!r}, "openai/x", base_url={srv.openai_base_url!r}, setting="direct",
                                       out={str(run)!r}, concurrency=1, progress=False)
                except KeyboardInterrupt:
                    return "interrupted"
                return "finished"

            print(json.dumps(asyncio.run(cell())))
        """)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout.strip().splitlines()[-1]) == "interrupted"
        kept = records(run)
        assert 2 <= len(kept) < 12 and not any(r["error"] for r in kept)
        done = toolsight.evaluate(str(ds), "openai/x", base_url=srv.openai_base_url, setting="direct", out=str(run),
                                  resume=True, progress=False)
    assert done.ok and done.summary.skipped == len(kept) and done.summary.done == 12 - len(kept)
    assert sorted(r["task_id"] for r in records(run)) == sorted(f"t{i}" for i in range(12))


def test_sandboxed_tools_work_across_evaluations_and_threads(tmp_path: Path) -> None:
    """Two evaluations in one process, the second from inside a running loop (its worker thread):
    the sandbox shut down after the first starts again for the second."""
    from toolsight.benchmarks.tir_bench.generate import generate

    generate("jigsaw", 2, 3, tmp_path / "ds", difficulty=3)
    first = toolsight.evaluate(str(tmp_path / "ds"), "reference", setting="code", out=str(tmp_path / "a"), progress=False)

    async def cell() -> toolsight.EvalResult:
        return toolsight.evaluate(str(tmp_path / "ds"), "reference", setting="code", out=str(tmp_path / "b"),
                                  progress=False)

    second = asyncio.run(cell())
    for res in (first, second):
        assert res.ok and res.accuracy == 1.0, res.summary.line()
        assert all(r.trajectory.tool_calls and r.trajectory.tool_calls[0].name == "python_interpreter"
                   for r in res.records)
