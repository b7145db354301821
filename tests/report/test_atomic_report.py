"""`report --out` writes its files whole or not at all: a report that fails (or is killed) part-way
leaves no truncated records.csv that looks complete, and an earlier complete one stays as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsight.engine.store import RecordWriter, write_manifest
from toolsight.log.manifest import Manifest
from toolsight.log.record import Record
from toolsight.log.score import Score
from toolsight.report import build_report


def _run(d: Path, n: int) -> Path:
    write_manifest(d, Manifest(benchmark="b", setting="s", model="m"))
    w = RecordWriter(d)
    for i in range(n):
        w.write(Record(task_id=f"t{i}", benchmark="b", setting="s", model="m", score=Score(value=1.0)))
    w.close()
    return d


def test_a_failed_report_leaves_no_truncated_csv(tmp_path: Path) -> None:
    a, b = _run(tmp_path / "a", 50), _run(tmp_path / "b", 3)
    out = tmp_path / "report"
    build_report([a], out_dir=out, fmt="md", plots=False)
    good = (out / "records.csv").read_text()
    assert len(good.splitlines()) == 51
    # re-scored: other values, so rows streamed from this scores file differ from the report above
    (a / "scores-x.jsonl").write_text("".join(f'{{"task_id": "t{i}", "score": {{"value": 0}}}}\n' for i in range(50)))
    (b / "scores-x.jsonl").write_text('{"task_id": "t0", "score": {"value": 1}}\n{broken\n')
    # the first run's rows are streamed out before the second run's scores file fails to parse
    with pytest.raises(ValueError, match=r"scores-x\.jsonl:2"):
        build_report([a, b], out_dir=out, fmt="md", plots=False, scores="x")
    assert (out / "records.csv").read_text() == good
    assert sorted(p.name for p in out.iterdir()) == ["records.csv", "report.md"]  # no temp files left


def test_report_files_are_complete(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", 5)
    out = tmp_path / "report"
    text = build_report([a], out_dir=out, fmt="json", plots=False)
    assert json.loads((out / "report.json").read_text()) == json.loads(text)
