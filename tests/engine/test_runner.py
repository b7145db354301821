"""The runner and run directory: records, scoring, errors as records, retries, cache, resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from enginekit import StepModel, call, say
from toolsight.benchmarks.dataset.benchmark import DatasetBenchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.rundir import RunError
from toolsight.engine.runner import Runner
from toolsight.engine.store import artifact_files, finished_ids, iter_records, read_manifest
from toolsight.models.base import GenerateConfig, Message, ModelError
from toolsight.tools.base import ToolSpec


def _task_id(msgs: list[Message]) -> str:
    text = next(m.text for m in msgs if m.role == "user")
    return text.split("[task:")[1].split("]")[0]


def answer_by_parity(msgs: list[Message], tools: list[ToolSpec]) -> object:
    i = int(_task_id(msgs)[1:])
    return say(f"<answer>{'B' if i % 2 else 'A'}</answer>" if i != 3 else "<answer>A</answer>")


def _runner(dataset: Path, out: Path, model: StepModel, **kw: object) -> Runner:
    bench = DatasetBenchmark(dataset)
    opts = RunOptions.of(benchmark=str(dataset), model=model.name, out=str(out), backoff_base=0.01, **kw)  # type: ignore[arg-type]
    return Runner(opts, bench, bench.load(None), model)


def test_run_writes_records_and_scores(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = asyncio.run(_runner(dataset, out, StepModel(answer_by_parity)).run())
    recs = {r.task_id: r for r in iter_records(out)}
    assert set(recs) == {f"t{i}" for i in range(6)}
    assert summary.ran.scored == 6 and summary.ran.score_sum == 5.0  # t3 answers A, gold B
    assert recs["t3"].score is not None and recs["t3"].score.value == 0.0
    assert recs["t2"].score is not None and recs["t2"].score.answer == "A"
    assert recs["t0"].extra["gold"] == ["A"] and recs["t0"].tags == {"category": "even"}
    man = read_manifest(out)
    assert man.dataset.n_tasks == 6 and man.setting == "direct" and len(man.config_hash) == 16
    # the input image is copied once for the run (six tasks, one image); no tool: no task folder
    art = recs["t0"].trajectory.artifacts[0]
    shared = out / "artifacts" / ".inputs" / f"{art.id}.png"
    assert shared.read_bytes() == (dataset / "images" / "a.png").read_bytes()
    assert sorted(p.name for p in (out / "artifacts").iterdir()) == [".inputs"]
    assert artifact_files(out, recs["t5"]) == {art.id: shared}


def test_resume_skips_finished_and_refuses_changed_config(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    asyncio.run(_runner(dataset, out, StepModel(answer_by_parity), limit=3).run())
    assert finished_ids(out) == {"t0", "t1", "t2"}
    with pytest.raises(RunError, match="already exists"):
        asyncio.run(_runner(dataset, out, StepModel(answer_by_parity), limit=3).run())
    with pytest.raises(RunError, match=r"different configuration.*scorer_mode: 'official' -> 'corrected'"):
        asyncio.run(_runner(dataset, out, StepModel(answer_by_parity), resume=True, scorer_mode="corrected").run())
    seen: list[str] = []

    def tracking(msgs: list[Message], tools: list[ToolSpec]) -> object:
        seen.append(_task_id(msgs))
        return answer_by_parity(msgs, tools)

    # --limit selects tasks; it is not part of the run's identity, so a larger one extends the run
    s = asyncio.run(_runner(dataset, out, StepModel(tracking), resume=True).run())
    assert sorted(seen) == ["t3", "t4", "t5"] and s.skipped == 3
    ids = [json.loads(line)["task_id"] for line in (out / "records.jsonl").read_text().splitlines()]
    assert sorted(ids) == [f"t{i}" for i in range(6)]


def test_torn_last_line_is_rerun(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    asyncio.run(_runner(dataset, out, StepModel(answer_by_parity)).run())
    data = (out / "records.jsonl").read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    torn_id = json.loads(data[last_start:])["task_id"]
    (out / "records.jsonl").write_bytes(data[: last_start + 40])  # the last write cut by SIGKILL
    assert finished_ids(out) == {f"t{i}" for i in range(6)} - {torn_id}
    seen: list[str] = []

    def tracking(msgs: list[Message], tools: list[ToolSpec]) -> object:
        seen.append(_task_id(msgs))
        return answer_by_parity(msgs, tools)

    asyncio.run(_runner(dataset, out, StepModel(tracking), resume=True).run())
    assert seen == [torn_id]  # the torn task, and only it, ran again
    after = (out / "records.jsonl").read_bytes()
    assert after.startswith(data[:last_start])  # the finished records are untouched
    ids = [json.loads(x)["task_id"] for x in after.splitlines()]
    assert sorted(ids) == [f"t{i}" for i in range(6)]


def test_model_errors_become_records_and_retries_happen(dataset: Path, tmp_path: Path) -> None:
    attempts: dict[str, int] = {}

    class Flaky(StepModel):
        async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> object:  # type: ignore[override]
            tid = _task_id(messages)
            attempts[tid] = attempts.get(tid, 0) + 1
            if tid == "t0":
                raise ModelError("HTTP 400 bad request", retryable=False, status=400)
            if tid == "t1" and attempts[tid] < 3:
                raise ModelError("HTTP 429 rate limited", retryable=True, retry_after=0.01, status=429)
            if tid == "t2":
                raise ModelError("HTTP 500 internal", retryable=True, status=500)
            return answer_by_parity(messages, tools)

    out = tmp_path / "run"
    summary = asyncio.run(_runner(dataset, out, Flaky(answer_by_parity), retries=5, concurrency=1).run())
    recs = {r.task_id: r for r in iter_records(out)}
    assert len(recs) == 6
    assert recs["t0"].error and "400" in recs["t0"].error and attempts["t0"] == 1
    assert recs["t1"].error is None and attempts["t1"] == 3
    # the per-call log: t1's one call was retried twice and ended with the provider's finish reason
    log = recs["t1"].trajectory.model_call_log
    assert [(c.retries, c.finish_reason) for c in log] == [(2, "stop")] and recs["t1"].trajectory.retries == 2
    assert recs["t0"].trajectory.model_call_log[0].error and recs["t0"].trajectory.model_call_log[0].retries == 0
    # a 500 is transient: never stopped early for repeating itself. Nothing else runs (concurrency
    # 1), so its failures first count as an outage; each health probe that gets an answer lets one
    # failure spend a retry. After 5 retries the task fails and the run goes on.
    assert recs["t2"].error and "500" in recs["t2"].error and 6 < attempts["t2"] <= 30
    assert recs["t3"].error is None
    assert summary.ran.errors["model"] == 2 and summary.stats.retries >= 8
    assert "2 run error(s)" in summary.line() and summary.exit_code == 3


def test_task_time_limit_is_a_record(dataset: Path, tmp_path: Path) -> None:
    class Slow(StepModel):
        async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> object:  # type: ignore[override]
            if _task_id(messages) == "t1":
                await asyncio.sleep(30)
            return answer_by_parity(messages, tools)

    out = tmp_path / "run"
    asyncio.run(_runner(dataset, out, Slow(answer_by_parity), task_timeout=0.5, limit=3).run())
    recs = {r.task_id: r for r in iter_records(out)}
    assert recs["t1"].error and recs["t1"].error.startswith("time limit")
    assert recs["t1"].trajectory.stop_reason == "time_limit" and recs["t2"].error is None


def test_a_task_that_swallows_its_cancellation_still_ends_at_its_time_limit(dataset: Path, tmp_path: Path) -> None:
    class Stubborn(StepModel):
        async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> object:  # type: ignore[override]
            if _task_id(messages) == "t1":
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    pass  # ignores the cancellation and answers anyway
            return answer_by_parity(messages, tools)

    out = tmp_path / "run"
    asyncio.run(_runner(dataset, out, Stubborn(answer_by_parity), task_timeout=0.5, limit=3).run())
    recs = {r.task_id: r for r in iter_records(out)}
    assert recs["t1"].error and recs["t1"].error.startswith("time limit")
    assert recs["t2"].error is None


def test_deterministic_calls_are_cached(dataset: Path, tmp_path: Path) -> None:
    calls: list[int] = []

    def counting(msgs: list[Message], tools: list[ToolSpec]) -> object:
        calls.append(1)
        return answer_by_parity(msgs, tools)

    det = GenerateConfig(temperature=0.0)
    asyncio.run(_runner(dataset, tmp_path / "r1", StepModel(counting), generate=det, limit=2).run())
    assert len(calls) == 2
    # a resumed run with the same requests (same out dir: same cache) hits the cache
    r = _runner(dataset, tmp_path / "r1", StepModel(counting), generate=det, resume=True, limit=2)
    (tmp_path / "r1" / "records.jsonl").write_text("")
    s = asyncio.run(r.run())
    assert len(calls) == 2 and s.stats.cache_hits == 2
    recs = list(iter_records(tmp_path / "r1"))
    assert all(rec.trajectory.cache_hits == 1 for rec in recs)


def test_tool_run_with_crop(dataset: Path, tmp_path: Path) -> None:
    def policy(msgs: list[Message], tools: list[ToolSpec]) -> object:
        if not any(m.role == "tool" for m in msgs):
            return call("crop", {"image": "a.png", "bbox": [0.25, 0.25, 0.5, 0.5]})
        return answer_by_parity(msgs, tools)

    out = tmp_path / "run"
    asyncio.run(_runner(dataset, out, StepModel(policy), setting="crop", limit=2).run())
    rec = next(iter_records(out))
    tc = rec.trajectory.tool_calls[0]
    assert tc.ok and len(tc.artifacts) == 1
    produced = next(a for a in rec.trajectory.artifacts if a.id == tc.artifacts[0])
    assert (out / "artifacts" / rec.task_id / produced.file).is_file()
    assert read_manifest(out).tools[0]["name"] == "crop"


def test_each_run_copies_inputs_from_where_its_dataset_folder_points_now(dataset: Path, tmp_path: Path) -> None:
    """The dataset folder is resolved once per run, not once per process: a folder reached through a
    symlink that is pointed elsewhere between two runs of one process gives the second run the new images."""
    import shutil

    from PIL import Image

    v2 = tmp_path / "ds-v2"
    shutil.copytree(dataset, v2)
    Image.new("RGB", (9, 7), (0, 0, 255)).save(v2 / "images" / "a.png")
    link = tmp_path / "current"
    link.symlink_to(dataset)
    asyncio.run(_runner(link, tmp_path / "run1", StepModel(answer_by_parity)).run())
    link.unlink()
    link.symlink_to(v2)
    asyncio.run(_runner(link, tmp_path / "run2", StepModel(answer_by_parity)).run())
    first = {r.task_id: r for r in iter_records(tmp_path / "run1")}["t0"].trajectory.artifacts[0]
    second = {r.task_id: r for r in iter_records(tmp_path / "run2")}["t0"].trajectory.artifacts[0]
    assert (first.width, first.height) != (9, 7) and (second.width, second.height) == (9, 7)
    rec2 = {r.task_id: r for r in iter_records(tmp_path / "run2")}["t0"]
    assert artifact_files(tmp_path / "run2", rec2)[second.id].read_bytes() == (v2 / "images" / "a.png").read_bytes()
