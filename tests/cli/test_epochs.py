"""`--epochs N`: every task runs N times, records carry `epoch`, the report reduces each task's
epochs (mean@k / pass@k / pass^k) and shows per-epoch scores and their spread; resume and retry
work per (task, epoch); the response cache never replays one epoch for another."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from clikit import dataset, records, ts
from toolsight.engine.store import artifact_files, iter_records
from toolsight.log.record import RECORD_SCHEMA_VERSION
from toolsight.metrics.compute import compute_run_metrics
from toolsight.metrics.epochs import epoch_stats, reduce_task
from toolsight.models.scripted.script import Script, Step

A, B = Step(text="<answer>A</answer>"), Step(text="<answer>B</answer>")
# gold: t0 = A, t1 = B, t2 = A. Epoch by epoch (concurrency 1: epoch 1 of every task first):
#   t0: right, wrong, right · t1: right, right, wrong · t2: right, right, right
SCRIPT = Script(steps=[A], tasks={"t0": [A, B, A], "t1": [B, B, A], "t2": [A, A, A]})


def _run(ds: Path, out: Path, url: str, *flags: str) -> tuple[int, str]:
    r = ts("run", str(ds), "-m", "openai/x", "--base-url", url, "--out", str(out), "--setting", "direct",
           "--concurrency", "1", "--no-report", *flags)
    return r.returncode, r.stderr


def test_three_epochs_reduce_per_task_and_report_the_spread(tmp_path: Path) -> None:
    from toolsight.models.scripted.server import ScriptedServer

    ds = dataset(tmp_path / "ds", 3)
    run = tmp_path / "run"
    with ScriptedServer(SCRIPT) as srv:
        # temperature 0 makes every request cacheable: epochs 2 and 3 must still ask the model
        code, err = _run(ds, run, srv.openai_base_url, "--epochs", "3", "--temperature", "0")
        assert code == 0, err
        assert len(srv.requests) == 9
    recs = records(run)
    assert sorted((r["task_id"], r["epoch"]) for r in recs) == [(f"t{i}", e) for i in range(3) for e in (1, 2, 3)]
    assert {r["schema_version"] for r in recs} == {RECORD_SCHEMA_VERSION}
    # no tools: no epoch made a folder of its own; every epoch's input is the run's one shared copy
    assert sorted(p.name for p in (run / "artifacts").iterdir()) == [".inputs"]
    inputs = {str(p) for r in iter_records(run) for p in artifact_files(run, r).values()}
    assert len(inputs) == 1 and all(Path(p).is_file() for p in inputs)
    assert "note: 3 epochs of 3 task(s); each task's epochs reduce to one score by mean" in err

    m = compute_run_metrics(run)
    assert m.epochs is not None and m.epochs.k == 3 and m.epochs.tasks == 3 and m.epochs.complete == 3
    assert m.epochs.per_epoch == pytest.approx({1: 1.0, 2: 2 / 3, 3: 2 / 3})
    assert m.epochs.per_epoch_sd == pytest.approx(statistics.stdev([1.0, 2 / 3, 2 / 3]))
    assert m.epochs.mean_at_k == pytest.approx(7 / 9)
    assert m.epochs.pass_at_k == pytest.approx(1.0) and m.epochs.pass_all_k == pytest.approx(1 / 3)
    assert m.overall.n == 3 and m.overall.score.value == pytest.approx(7 / 9)  # over tasks, not task-epochs

    rep = ts("report", str(run))
    assert rep.returncode == 0, rep.stderr
    row = next(ln for ln in rep.stdout.splitlines() if ln.startswith("| openai/x ") and "| 3 | mean |" in ln)
    assert "| 77.8 | 100.0 | 33.3 | 100.0 | 66.7 | 66.7 | 19.2 |" in row, row
    score_row = next(ln for ln in rep.stdout.splitlines() if ln.startswith("| openai/x | direct | 3 | 0 | 77.8"))
    assert score_row

    # another reducer, chosen at run time, changes the headline only
    with ScriptedServer(SCRIPT) as srv:
        code, err = _run(ds, tmp_path / "pass", srv.openai_base_url, "--epochs", "3", "--epochs-reducer", "pass_at_k")
        assert code == 0, err
    m2 = compute_run_metrics(tmp_path / "pass")
    assert m2.overall.score.value == pytest.approx(1.0) and m2.epochs is not None and m2.epochs.reducer == "pass_at_k"
    assert m2.epochs.mean_at_k == pytest.approx(7 / 9)


def test_rescoring_keeps_every_epoch(tmp_path: Path) -> None:
    from toolsight.models.scripted.server import ScriptedServer

    ds = dataset(tmp_path / "ds", 3)
    run = tmp_path / "run"
    with ScriptedServer(SCRIPT) as srv:
        code, err = _run(ds, run, srv.openai_base_url, "--epochs", "3")
        assert code == 0, err
    r = ts("score", str(run), "--scorer", "choice", "--name", "again")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in (run / "scores-again.jsonl").read_text().splitlines()]
    assert sorted((x["task_id"], x["epoch"]) for x in lines) == [(f"t{i}", e) for i in range(3) for e in (1, 2, 3)]
    m = compute_run_metrics(run, scores="again")
    assert m.epochs is not None and m.epochs.pass_all_k == pytest.approx(1 / 3)
    assert m.epochs.per_epoch == pytest.approx({1: 1.0, 2: 2 / 3, 3: 2 / 3})


def test_resume_adds_epochs_and_retry_reruns_only_the_failed_epoch(tmp_path: Path) -> None:
    from toolsight.models.scripted.server import ScriptedServer

    ds = dataset(tmp_path / "ds", 3)
    run = tmp_path / "run"
    # t1's second request fails for good (HTTP 400): its epoch 2 ends in error
    script = Script(steps=[A], tasks={"t1": [B, Step(fault="status", status=400), B, B]})
    with ScriptedServer(script) as srv:
        code, err = _run(ds, run, srv.openai_base_url, "--epochs", "2")
        assert code == 3, err  # some tasks ended in error
        failed = [(r["task_id"], r["epoch"]) for r in records(run) if r["error"]]
        assert failed == [("t1", 2)]
        retry = ts("retry", str(run), "--no-report")
        assert retry.returncode == 0, retry.stderr
        assert "1 task(s) run, 5 already finished" in retry.stderr
        more = ts("run", str(ds), "-m", "openai/x", "--base-url", srv.openai_base_url, "--out", str(run),
                  "--setting", "direct", "--concurrency", "1", "--no-report", "--epochs", "3", "--resume")
        assert more.returncode == 0, more.stderr
        assert "3 task(s) run, 6 already finished" in more.stderr
    latest = {(r["task_id"], r["epoch"]): r for r in records(run)}
    assert len(latest) == 9 and not any(r["error"] for r in latest.values())
    m = compute_run_metrics(run)
    assert m.epochs is not None and m.epochs.k == 3 and m.epochs.complete == 3 and m.n_errors == 0


def test_reducers_and_epoch_stats() -> None:
    samples = [(1, 1.0, True), (2, 0.0, False), (3, 0.5, False)]
    assert reduce_task(samples, "mean") == pytest.approx((0.5, 1 / 3))
    assert reduce_task(samples, "pass_at_k") == (1.0, 1.0)
    assert reduce_task(samples, "pass_all_k") == (0.0, 0.0)
    assert reduce_task(samples, "median") == (0.5, 0.0)
    with pytest.raises(ValueError, match="choose one of: mean, pass_at_k"):
        reduce_task(samples, "best")
    st = epoch_stats({"a": samples, "b": [(1, 1.0, True)]}, 3, "mean")
    assert st.tasks == 2 and st.complete == 1
    assert st.per_epoch == {1: 1.0, 2: 0.0, 3: 0.5}
    assert st.pass_at_k == 1.0 and st.pass_all_k == 0.5 and st.mean_at_k == pytest.approx((0.5 + 1.0) / 2)
