"""Resume: errored tasks re-run (superseding their records), identity checks field by field, the
manifest kept as it was (history appended), changed tasks re-run under --force, the lock, and
run directories that are absent or resumable at every instant."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from enginekit import StepModel, say, write_png
from toolsight.benchmarks.dataset.benchmark import DatasetBenchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.rundir import RunDirBusy, RunError, RunLock
from toolsight.engine.runner import Runner
from toolsight.engine.store import iter_records
from toolsight.engine.summary import RunSummary
from toolsight.log.files import iter_latest_records, latest_records, read_manifest
from toolsight.metrics import compute_run_metrics
from toolsight.models.base import GenerateConfig, Message, ModelError, ModelOutput
from toolsight.report import build_report
from toolsight.tools.base import ToolSpec


def _tid(msgs: list[Message]) -> str:
    text = next(m.text for m in msgs if m.role == "user")
    return text.split("[task:")[1].split("]")[0]


def _gold(msgs: list[Message], tools: list[ToolSpec]) -> ModelOutput:
    return say("<answer>B</answer>" if int(_tid(msgs)[1:]) % 2 else "<answer>A</answer>")


class Tracking(StepModel):
    """Answers the gold letter; raises `fail` for the tasks in `failing`; records which tasks ran."""

    def __init__(self, failing: set[str] | None = None, fail: ModelError | None = None) -> None:
        super().__init__(_gold)
        self.failing = failing or set()
        self.fail = fail or ModelError("HTTP 400: bad request", status=400)
        self.ran: list[str] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        tid = _tid(messages)
        self.ran.append(tid)
        if tid in self.failing:
            raise self.fail
        return _gold(messages, tools)


def run(dataset: Path, out: Path, model: StepModel, **kw: Any) -> RunSummary:
    bench = DatasetBenchmark(dataset)
    opts = RunOptions.of(benchmark=str(dataset), model="test/step", out=str(out), backoff_base=0.01, **kw)
    return asyncio.run(Runner(opts, bench, bench.load(None), model).run())


def test_errored_tasks_rerun_on_resume_and_supersede_their_records(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    s1 = run(dataset, out, Tracking(failing={"t1", "t4"}))
    assert s1.ran.errors["model"] == 2 and s1.exit_code == 3 and "toolsight retry" in s1.line()
    # --no-retry-errors keeps the error records: nothing runs, the exit code still says "errors"
    kept = Tracking()
    s2 = run(dataset, out, kept, resume=True, retry_errors=False)
    assert kept.ran == [] and s2.kept_errors == 2 and s2.exit_code == 3
    healthy = Tracking()
    s3 = run(dataset, out, healthy, resume=True)
    assert sorted(healthy.ran) == ["t1", "t4"] and s3.retried == 2 and s3.skipped == 4 and s3.exit_code == 0
    lines = (out / "records.jsonl").read_text().splitlines()
    assert len(lines) == 8  # appended, never rewritten: the two error records stay in the file
    latest = {r.task_id: r for r in latest_records(out)}
    assert len(latest) == 6 and all(r.error is None for r in latest.values())
    assert [r.task_id for r in iter_latest_records(out)] == ["t0", "t2", "t3", "t5", "t1", "t4"]
    m = compute_run_metrics(out)
    assert m.n_records == 6 and m.n_errors == 0 and m.overall.score.value == 1.0
    # a healthy run again: every task finished, nothing to do
    again = Tracking()
    assert run(dataset, out, again, resume=True).skipped == 6 and again.ran == []


def _manifest_dict(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "manifest.json").read_text())
    return data


def test_resume_keeps_the_manifest_and_appends_history(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(dataset, out, Tracking(), limit=2)
    before = _manifest_dict(out)
    assert before["history"] == [] and before["identity"]["scorer_mode"] == "official"
    events: list[str] = []
    bench = DatasetBenchmark(dataset)
    opts = RunOptions.of(benchmark=str(dataset), model="test/step", out=str(out), resume=True, limit=4,
                      concurrency=3, base_url="http://127.0.0.1:1/v1")
    asyncio.run(Runner(opts, bench, bench.load(None), Tracking(), on_event=events.append).run())
    after = _manifest_dict(out)
    hist = after.pop("history")
    before.pop("history")
    sent_after, sent_before = after.pop("sent"), before.pop("sent")
    assert after == before  # run id, creation time, options, identity: all as they were
    # what the requests carried is added to: 2 more tasks, one request each, the same prompts
    assert (sent_before["requests"], sent_after["requests"]) == (2, 4)
    assert sent_after["system_prompts"] == sent_before["system_prompts"]
    assert len(hist) == 1 and hist[0]["event"] == "resume" and hist[0]["base_url"] == "http://127.0.0.1:1/v1"
    assert any("--base-url" in e and "warning" in e for e in events)
    run(dataset, out, Tracking(), resume=True)
    assert len(read_manifest(out).history) == 2


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"scorer_mode": "corrected"}, "scorer_mode"),
        ({"score": False}, "score"),
        ({"judge": "openai/judge"}, "judge"),
        ({"caps": {"max_rounds": 2}}, "caps"),
        ({"generate": GenerateConfig(temperature=0.7)}, "generate"),
        ({"setting": "crop"}, "setting"),
        # identity keys a run made without them does not have: set now, they still count
        ({"agent": "vcr"}, "agent"),
        ({"web": "offline"}, "web"),
        ({"summary_model": "openai/summary"}, "summary_model"),
    ],
)
def test_resume_refuses_a_changed_identity_field(change: dict[str, Any], field: str, dataset: Path,
                                                  tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(dataset, out, Tracking(), limit=1)
    with pytest.raises(RunError, match=rf"different configuration \({field}: "):
        run(dataset, out, Tracking(), resume=True, **change)
    assert read_manifest(out).history == []  # a refused resume changes nothing


def test_resume_after_editing_the_dataset(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(dataset, out, Tracking())
    lines = [json.loads(x) for x in (dataset / "tasks.jsonl").read_text().splitlines()]
    for rec in lines[:2]:  # flip the gold answers of t0 and t1
        rec["turns"][0]["answer"] = "B" if rec["turns"][0]["answer"] == "A" else "A"
    for i in range(6, 11):  # and add five tasks
        lines.append({"id": f"t{i}", "turns": [{"prompt": f"[task:t{i}] ?", "images": [{"path": "images/b.png"}],
                                                "answer": "B" if i % 2 else "A"}]})
    (dataset / "tasks.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    with pytest.raises(RunError, match=r"different configuration \(dataset: "):
        run(dataset, out, Tracking(), resume=True)
    forced = Tracking()
    s = run(dataset, out, forced, resume=True, force=True)
    # the two edited tasks run again (their records are stale), the five new ones run, the rest not
    assert sorted(forced.ran) == ["t0", "t1", "t10", "t6", "t7", "t8", "t9"] and s.changed == 2 and s.skipped == 4
    man = read_manifest(out)
    assert man.history[-1]["accepted_changes"][0].startswith("dataset: ")
    assert man.dataset.n_tasks == 11 and man.identity["dataset"] == man.dataset.hash
    latest = {r.task_id: r for r in latest_records(out)}
    assert latest["t0"].extra["gold"] == ["B"] and latest["t0"].score is not None and latest["t0"].score.value == 0
    # the change was accepted once; the next resume compares against the new identity
    assert run(dataset, out, Tracking(), resume=True).skipped == 11
    # an image replaced by other pixels changes every task that shows it
    write_png(dataset / "images" / "b.png", value=200)
    with pytest.raises(RunError, match="dataset: "):
        run(dataset, out, Tracking(), resume=True)


def test_the_same_dataset_by_relative_or_absolute_path_resumes(dataset: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(dataset.parent)
    out = tmp_path / "run"
    run(Path(dataset.name), out, Tracking(), limit=3)
    model = Tracking()
    s = run(dataset.resolve(), out, model, resume=True)
    assert sorted(model.ran) == ["t3", "t4", "t5"] and s.skipped == 3


def _input_id(out: Path, task_id: str) -> str:
    rec = next(r for r in iter_records(out) if r.task_id == task_id)
    return rec.trajectory.artifacts[0].id


def test_a_killed_tasks_partial_workspace_is_removed(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(dataset, out, Tracking(), limit=2)
    partial = out / "artifacts" / "t2"
    partial.mkdir(parents=True)
    (partial / "half-written.png").write_bytes(b"\x89PNG partial")
    run(dataset, out, Tracking(), resume=True, limit=3)
    # removed; a task that uses no tool gets no folder of its own (its input is the run's shared copy)
    assert not partial.exists()
    assert [p.name for p in (out / "artifacts" / ".inputs").iterdir()] == [f"{_input_id(out, 't2')}.png"]


def test_a_second_runner_on_a_locked_directory_is_refused(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(dataset, out, Tracking(), limit=1)
    lock = RunLock.acquire(out)  # as a running process would hold it
    try:
        with pytest.raises(RunDirBusy, match=rf"in use by another toolsight process \(pid {os.getpid()}\)"):
            run(dataset, out, Tracking(), resume=True)
    finally:
        lock.release()
    assert run(dataset, out, Tracking(), resume=True).done == 5


def test_leftovers_of_a_killed_start_up_are_accepted(dataset: Path, tmp_path: Path) -> None:
    # an older toolsight killed after opening cache.sqlite and before writing manifest.json
    out = tmp_path / "old"
    out.mkdir()
    (out / "cache.sqlite").write_bytes(b"")
    assert run(dataset, out, Tracking(), resume=True).done == 6
    # this toolsight killed while creating: a hidden half-made sibling, swept once it is stale
    half = tmp_path / ".new.creating-abc123"
    half.mkdir()
    (half / "manifest.json").write_text("{")
    old = time.time() - 3600
    os.utime(half, (old, old))
    assert run(dataset, tmp_path / "new", Tracking()).done == 6
    assert not half.exists()
    # a folder with other content is not taken over
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(RunError, match="not a toolsight run directory"):
        run(dataset, other, Tracking())


def test_a_task_without_gold_is_unscored_not_wrong(dataset: Path, tmp_path: Path) -> None:
    lines = [json.loads(x) for x in (dataset / "tasks.jsonl").read_text().splitlines()]
    del lines[2]["turns"][0]["answer"]
    (dataset / "tasks.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    out = tmp_path / "run"
    s = run(dataset, out, Tracking())
    recs = {r.task_id: r for r in iter_records(out)}
    assert recs["t2"].score is None and recs["t2"].error is None and recs["t2"].extra["unscored"] == "no gold answer"
    assert s.ran.unscored == 1 and s.ran.scored == 5 and s.exit_code == 0 and "1 unscored (no gold answer)" in s.line()
    m = compute_run_metrics(out)
    assert m.n_unscored == 1 and m.n_scored == 5 and m.overall.score.value == 1.0
    assert "without a gold answer" in build_report([out])


def test_finish_reasons_are_kept_per_call(dataset: Path, tmp_path: Path) -> None:
    def cut(msgs: list[Message], tools: list[ToolSpec]) -> ModelOutput:
        out = say("<answer>A")
        return out.model_copy(update={"finish_reason": "length"})

    out = tmp_path / "run"
    run(dataset, out, StepModel(cut), limit=1)
    rec = next(iter_records(out))
    assert [c.finish_reason for c in rec.trajectory.model_call_log] == ["length"]
    assert rec.trajectory.model_call_log[0].output_tokens == 5
