"""Inspect conventions of issue 28: `--limit A-B` ranges, `--fail-on-error N|FRACTION` (stops, exit 3,
resumable) and the TOOLSIGHT_MODEL / TOOLSIGHT_RUNS_DIR / TOOLSIGHT_JUDGE defaults — each run as typed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import toolsight
from clikit import assert_one_error_line, dataset, lines, records, ts
from toolsight.errors import ToolsightError
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer


def _ids(run: Path) -> list[str]:
    return sorted(r["task_id"] for r in records(run))


def test_limit_a_range_runs_the_a_th_to_the_b_th_task(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 6)
    r = ts("run", str(ds), "-m", "reference", "--limit", "2-4", "--out", str(tmp_path / "run"), "--no-report")
    assert r.returncode == 0, r.stderr
    assert _ids(tmp_path / "run") == ["t1", "t2", "t3"]
    one = ts("run", str(ds), "-m", "reference", "--limit", "5-5", "--out", str(tmp_path / "one"), "--no-report")
    assert one.returncode == 0 and _ids(tmp_path / "one") == ["t4"], one.stderr
    first = ts("run", str(ds), "-m", "reference", "--limit", "2", "--out", str(tmp_path / "first"), "--no-report")
    assert first.returncode == 0 and _ids(tmp_path / "first") == ["t0", "t1"], first.stderr


@pytest.mark.parametrize(("value", "needle"), [("0", "at least 1"), ("5-3", "1 <= A <= B"), ("0-2", "1 <= A <= B"),
                                               ("ten", "use N (the first N tasks) or A-B")])
def test_a_bad_limit_is_one_line(tmp_path: Path, value: str, needle: str) -> None:
    ds = dataset(tmp_path / "ds", 3)
    r = ts("run", str(ds), "-m", "reference", "--limit", value, "--out", str(tmp_path / "run"))
    assert_one_error_line(r, 2, f"--limit {value}", needle)
    assert not (tmp_path / "run").exists()


def test_limit_range_in_the_api(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 6)
    res = toolsight.evaluate(str(ds), model="reference", limit="3-4", out=str(tmp_path / "run"), progress=False)
    assert sorted(r.task_id for r in res.records) == ["t2", "t3"]


FAILING = {"steps": [{"fault": "status", "status": 400}]}  # a request the server refuses: the task errors


def test_fail_on_error_n_stops_the_run_with_exit_3_and_retry_finishes_it(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 6)
    run = tmp_path / "run"
    with ScriptedServer(Script.model_validate(FAILING), record=False) as srv:
        r = ts("run", str(ds), "-m", "openai/x", "--base-url", srv.openai_base_url, "--concurrency", "1",
               "--fail-on-error", "2", "--out", str(run), "--no-report")
    assert r.returncode == 3, r.stderr
    assert len(records(run)) == 2  # nothing ran after the second error
    summary = lines(r.stderr)[-1]
    assert "stopped early: 2 task(s) ended in error (--fail-on-error 2)" in summary, summary
    assert f"toolsight retry {run}" in summary
    with ScriptedServer(Script.answer("<answer>A</answer>"), record=False) as srv:
        again = ts("retry", str(run), "--base-url", srv.openai_base_url, "--no-report")
    assert again.returncode == 0, again.stderr
    assert sorted({r["task_id"] for r in records(run)}) == [f"t{i}" for i in range(6)]
    latest = {rec["task_id"]: rec for rec in records(run)}
    assert all(rec["error"] is None for rec in latest.values())


def test_fail_on_error_fraction_counts_against_the_selected_tasks(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 10)
    with ScriptedServer(Script.model_validate(FAILING), record=False) as srv:
        r = ts("run", str(ds), "-m", "openai/x", "--base-url", srv.openai_base_url, "--concurrency", "1",
               "--fail-on-error", "0.25", "--out", str(tmp_path / "run"), "--no-report")
    assert r.returncode == 3, r.stderr
    assert len(records(tmp_path / "run")) == 3  # 3 of 10 is the first count over a quarter
    assert "3 of 10 task(s) ended in error, over 0.25" in r.stderr


@pytest.mark.parametrize(("value", "needle"), [("1.5", "a whole number"), ("0", "greater than 0")])
def test_a_bad_fail_on_error_is_one_line(tmp_path: Path, value: str, needle: str) -> None:
    ds = dataset(tmp_path / "ds", 2)
    r = ts("run", str(ds), "-m", "reference", "--fail-on-error", value, "--out", str(tmp_path / "run"))
    assert_one_error_line(r, 2, "--fail-on-error", needle)
    assert not (tmp_path / "run").exists()


def test_toolsight_model_and_runs_dir_from_the_environment(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    work = tmp_path / "work"
    work.mkdir()
    r = ts("run", str(ds), "--no-report", cwd=work, TOOLSIGHT_MODEL="reference",
           TOOLSIGHT_RUNS_DIR=str(tmp_path / "myruns"))
    assert r.returncode == 0, r.stderr
    assert list(work.iterdir()) == []  # nothing under ./runs
    (run,) = list((tmp_path / "myruns").iterdir())
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["options"]["model"] == "reference"
    missing = ts("run", str(ds), cwd=work)
    assert_one_error_line(missing, 2, "--model")


def test_toolsight_judge_from_the_environment(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    r = ts("run", str(ds), "-m", "reference", "--out", str(tmp_path / "run"), TOOLSIGHT_JUDGE="openai/gpt-4o")
    assert_one_error_line(r, 2, "--judge openai/gpt-4o: no API key")  # the default was taken, and named
    with ScriptedServer(Script.answer("yes"), record=False) as srv:
        ok = ts("run", str(ds), "-m", "reference", "--judge-base-url", srv.openai_base_url, "--out",
                str(tmp_path / "ok"), "--no-report", TOOLSIGHT_JUDGE="openai/judge")
    assert ok.returncode == 0, ok.stderr
    manifest = json.loads((tmp_path / "ok" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["options"]["judge"] == "openai/judge"


def test_the_api_takes_its_model_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ds = dataset(tmp_path / "ds", 2)
    monkeypatch.delenv("TOOLSIGHT_MODEL", raising=False)
    with pytest.raises(ToolsightError, match=r"no model: pass model=.* or set TOOLSIGHT_MODEL"):
        toolsight.evaluate(str(ds), out=str(tmp_path / "none"), progress=False)
    monkeypatch.setenv("TOOLSIGHT_MODEL", "reference")
    res = toolsight.evaluate(str(ds), out=str(tmp_path / "run"), progress=False)
    assert res.options.model.spec == "reference" and len(res.records) == 2
