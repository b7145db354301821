"""The typed, versioned run log: old versions upgrade on read, newer ones are refused clearly,
superseded records give way to the last one, unknown manifest keys survive a round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsight.log import (
    MANIFEST_SCHEMA_VERSION,
    RECORD_SCHEMA_VERSION,
    Manifest,
    Record,
    RunLogError,
    finished_ids,
    iter_records,
    latest_records,
    read_manifest,
    write_manifest,
)


def _line(task: str, error: str | None = None, **extra: object) -> str:
    d = {"task_id": task, "benchmark": "b", "setting": "s", "model": "m", "error": error, **extra}
    return json.dumps(d) + "\n"


def test_unversioned_records_upgrade_and_newer_ones_are_refused(tmp_path: Path) -> None:
    (tmp_path / "records.jsonl").write_text(_line("a") + _line("b"), encoding="utf-8")
    recs = list(iter_records(tmp_path))
    assert [r.task_id for r in recs] == ["a", "b"]
    assert all(r.schema_version == RECORD_SCHEMA_VERSION for r in recs)
    (tmp_path / "records.jsonl").write_text(_line("a", schema_version=RECORD_SCHEMA_VERSION + 1), encoding="utf-8")
    with pytest.raises(RunLogError, match="newer than this toolsight understands"):
        list(iter_records(tmp_path))


def test_latest_record_per_task_supersedes_errors_in_first_appearance_order(tmp_path: Path) -> None:
    body = _line("a", "model error: 503") + _line("b") + _line("a") + _line("c", "x") + '{"task_id": "d"'
    (tmp_path / "records.jsonl").write_text(body, encoding="utf-8")  # torn last line: task d unfinished
    latest = latest_records(tmp_path)
    assert [r.task_id for r in latest] == ["a", "b", "c"]
    assert latest[0].error is None and latest[2].error == "x"
    assert finished_ids(tmp_path) == {"a", "b", "c"}


def test_manifest_round_trip_keeps_unknown_keys_and_upgrades_v1(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"benchmark": "x", "future_field": {"k": 1}}), encoding="utf-8")
    m = read_manifest(tmp_path)
    assert m.benchmark == "x" and m.schema_version == MANIFEST_SCHEMA_VERSION
    write_manifest(tmp_path, m)
    again = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert again["future_field"] == {"k": 1}
    assert not (tmp_path / "manifest.json.tmp").exists()
    write_manifest(tmp_path, Manifest(benchmark="y", schema_version=MANIFEST_SCHEMA_VERSION + 1))
    with pytest.raises(RunLogError, match="newer"):
        read_manifest(tmp_path)


def test_missing_or_corrupt_manifest_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RunLogError, match="not a toolsight run directory"):
        read_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(RunLogError, match=r"manifest.json: cannot be read"):
        read_manifest(tmp_path)


def test_record_defaults_are_the_current_version() -> None:
    r = Record(task_id="t", benchmark="b", setting="s", model="m")
    assert json.loads(r.model_dump_json())["schema_version"] == RECORD_SCHEMA_VERSION
