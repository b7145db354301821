"""`toolsight runs [DIR]` (issue 28): the runs under a folder — a sweep's and single ones — with their
benchmark, setting, model, loop, tasks, errors, score, status (finished / interrupted / running) and
date; filters; `--json`; a bad folder or filter is one line."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from clikit import TOOLSIGHT, assert_one_error_line, dataset, env, lines, ts
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer

PLAN = """name = "s"
out = "{out}"
[[models]]
spec = "reference"
[[models]]
spec = "random"
[[benchmarks]]
name = "{data}"
settings = ["direct"]
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/: a sweep of two runs, one finished single run, one stopped by --fail-on-error."""
    root = tmp_path_factory.mktemp("runs")
    ds = dataset(tmp_path_factory.mktemp("data") / "ds", 4)
    plan = ds.parent / "plan.toml"
    plan.write_text(PLAN.format(out=root / "sweeps" / "s", data=ds), encoding="utf-8")
    assert ts("sweep", str(plan), "--no-report").returncode == 0
    assert ts("run", str(ds), "-m", "reference", "--out", str(root / "single"), "--no-report").returncode == 0
    with ScriptedServer(Script.model_validate({"steps": [{"fault": "status", "status": 400}]}), record=False) as srv:
        r = ts("run", str(ds), "-m", "openai/x", "--base-url", srv.openai_base_url, "--concurrency", "1",
               "--fail-on-error", "1", "--out", str(root / "failing"), "--no-report")
    assert r.returncode == 3, r.stderr
    return root


def _json(root: Path, *args: str) -> list[dict[str, Any]]:
    r = ts("runs", str(root), "--json", *args)
    assert r.returncode == 0, r.stderr
    rows: list[dict[str, Any]] = json.loads(r.stdout)
    return rows


def test_the_table_lists_every_run_with_its_status_and_score(folder: Path) -> None:
    r = ts("runs", str(folder))
    assert r.returncode == 0, r.stderr
    table = lines(r.stdout)
    assert table[0].split() == ["run", "benchmark", "setting", "model", "loop", "tasks", "errors", "score", "status",
                                "date"]
    rows = {ln.split()[0]: ln.split() for ln in table[1:]}
    assert set(rows) == {"single", "failing", "sweeps/s/runs/ds__direct__reference", "sweeps/s/runs/ds__direct__random"}
    single = rows["single"]
    assert single[1:8] == ["ds", "direct", "reference", "toolsight", "4", "0", "0.0%"]  # the reference answers nothing without tools: scored 0, no error
    assert single[8] == "finished"
    failing = rows["failing"]
    assert failing[5] == "1/4" and failing[6] == "1" and failing[8] == "interrupted", failing


def test_json_rows_and_filters(folder: Path) -> None:
    rows = _json(folder)
    assert len(rows) == 4
    by_path = {Path(r["path"]).name: r for r in rows}
    assert by_path["failing"]["reason"] == "1 task(s) ended in error (--fail-on-error 1)"
    assert by_path["ds__direct__random"]["sweep"] == str(folder / "sweeps" / "s")
    assert by_path["single"]["sweep"] is None and by_path["single"]["selected"] == 4
    assert [r["model"] for r in _json(folder, "--model", "rand*")] == ["random"]
    assert {Path(r["path"]).name for r in _json(folder, "--status", "interrupted")} == {"failing"}
    assert len(_json(folder, "--setting", "direct")) == 4 and _json(folder, "--benchmark", "vtc-*") == []


def test_a_running_run_and_a_killed_one(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    run = tmp_path / "runs" / "slow"
    stall = Script.model_validate({"steps": [{"fault": "stall", "seconds": 60, "text": "<answer>A</answer>"}]})
    with ScriptedServer(stall, record=False) as srv:
        proc = subprocess.Popen([*TOOLSIGHT, "run", str(ds), "-m", "openai/x", "--base-url", srv.openai_base_url,
                                 "--out", str(run), "--no-report"], env=env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not (run / "run.lock").exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(0.5)
            rows = _json(tmp_path / "runs")
            assert [r["status"] for r in rows] == ["running"], rows
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
    (row,) = _json(tmp_path / "runs")
    assert row["status"] == "interrupted" and "no status.json" in row["reason"], row


def test_a_folder_that_is_not_there_and_a_bad_status(tmp_path: Path) -> None:
    assert_one_error_line(ts("runs", str(tmp_path / "nope")), 2, f"{tmp_path / 'nope'}: no such folder")
    assert_one_error_line(ts("runs", str(tmp_path), "--status", "done"), 2, "--status 'done'", "finished, interrupted")
    empty = ts("runs", str(tmp_path))
    assert empty.returncode == 0 and lines(empty.stderr) == [f"no runs under {tmp_path}"]


def test_runs_defaults_to_the_runs_folder(folder: Path, tmp_path: Path) -> None:
    r = ts("runs", "--json", cwd=tmp_path, TOOLSIGHT_RUNS_DIR=str(folder))
    assert r.returncode == 0 and len(json.loads(r.stdout)) == 4, r.stderr
