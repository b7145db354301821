"""The record writer never takes a run down, and readers never crash on what it (or anyone) wrote:
lone surrogates and non-UTF-8 bytes become U+FFFD, an unstorable record becomes that task's error
record, and a records file with bad lines still resumes and reports."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from enginekit import StepModel, call, say
from toolsight.benchmarks.dataset.benchmark import DatasetBenchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner
from toolsight.engine.store import RecordWriter
from toolsight.engine.summary import RunSummary
from toolsight.log.files import iter_latest_records, latest_status
from toolsight.log.record import Record
from toolsight.models.base import Message, ModelOutput
from toolsight.report import build_report
from toolsight.tools.base import ToolSpec


def _run(dataset: Path, out: Path, model: StepModel, **kw: object) -> RunSummary:
    bench = DatasetBenchmark(dataset)
    opts = RunOptions.of(benchmark=str(dataset), model="test/step", out=str(out), backoff_base=0.01, **kw)  # type: ignore[arg-type]
    return asyncio.run(Runner(opts, bench, bench.load(None), model).run())


def test_text_no_file_can_hold_is_stored_replaced_and_the_run_goes_on(dataset: Path, tmp_path: Path) -> None:
    def policy(msgs: list[Message], tools: list[ToolSpec]) -> ModelOutput:
        if not any(m.role == "tool" for m in msgs):
            # a file name with a byte that is not UTF-8, as os.listdir returns it (surrogateescape),
            # in the raw arguments string the record keeps verbatim
            return call("crop", '{"image": "shot\udcff.png", "bbox": [0, 0, 1, 1]}')
        return say("<answer>A</answer> \ud800 lone surrogate")

    out = tmp_path / "run"
    s = _run(dataset, out, StepModel(policy), setting="crop")
    assert s.done == 6 and not s.ran.errors
    raw = (out / "records.jsonl").read_bytes()
    lines = raw.decode("utf-8").splitlines()  # strict: every byte written is valid UTF-8
    assert len(lines) == 6
    rec = Record.model_validate_json(lines[0])
    assert rec.error is None and rec.trajectory.turns[0].response == "<answer>A</answer> \ufffd lone surrogate"
    assert "shot\ufffd.png" in rec.trajectory.tool_calls[0].arguments
    assert _run(dataset, out, StepModel(policy), setting="crop", resume=True).skipped == 6


def test_a_record_that_cannot_be_stored_becomes_that_tasks_error(tmp_path: Path) -> None:
    w = RecordWriter(tmp_path)
    w.write(Record(task_id="bad", benchmark="b", setting="s", model="m", extra={"handle": object()}))
    w.write(Record(task_id="next", benchmark="b", setting="s", model="m"))
    w.close()
    recs = {r.task_id: r for r in iter_latest_records(tmp_path)}
    assert recs["bad"].error and recs["bad"].error.startswith("harness error: the record could not be stored")
    assert recs["next"].error is None


def test_resume_and_report_survive_bad_lines(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _run(dataset, out, StepModel(lambda m, t: say("<answer>A</answer>")), limit=2)
    with (out / "records.jsonl").open("ab") as fh:
        fh.write(b'{"schema_version": 2, "task_id": "t2", "benchmark": "x\xff\xfe", "setting": "direct", '
                 b'"model": "test/step", "error": "model error: \\ud800"}\n')
        fh.write(b"not json at all \xc3\x28\n")
        fh.write(b'{"task_id": "t3", "schema_version": "garbage", "benchmark": "b", "setting": "s", "model": "m"}\n')
    status = latest_status(out)
    assert set(status) == {"t0", "t1", "t2", "t3"} and status["t2"][0] == "model error: \ud800"
    s = _run(dataset, out, StepModel(lambda m, t: say("<answer>A</answer>")), resume=True)
    assert s.retried == 1 and s.done == 3 and s.skipped == 3  # t2 (an error) re-run; t4, t5 new; t3 kept
    assert "records" in build_report([out])
    assert json.loads((out / "records.jsonl").read_bytes().splitlines()[-1])["task_id"] in {"t2", "t4", "t5"}


def test_records_written_on_the_event_loop_reach_the_file_in_order_without_waiting_for_close(tmp_path: Path) -> None:
    """On an event loop the writer hands an iteration's lines to its thread together: they still
    reach the file, in order, while the run goes on (not only at close), and close keeps the rest."""
    async def main() -> list[str]:
        w = RecordWriter(tmp_path)
        for i in range(5):
            w.write(Record(task_id=f"a{i}", benchmark="b", setting="s", model="m"))
        seen: list[str] = []
        for _ in range(2000):  # the loop turns; the writer thread appends (no time asserted)
            await asyncio.sleep(0.005)
            seen = (tmp_path / "records.jsonl").read_text().splitlines()
            if len(seen) == 5:
                break
        w.write(Record(task_id="last", benchmark="b", setting="s", model="m"))
        w.close()  # still on the loop: the pending line is handed over before the thread stops
        return seen

    before_close = asyncio.run(main())
    assert [json.loads(x)["task_id"] for x in before_close] == [f"a{i}" for i in range(5)]
    ids = [r.task_id for r in iter_latest_records(tmp_path)]
    assert ids == [f"a{i}" for i in range(5)] + ["last"]
