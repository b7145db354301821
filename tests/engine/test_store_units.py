"""The run directory's store, function by function: task folder names, record lines, the torn-tail
repair, the writer's group commit and failure reporting, and disk-full detection. Written against
the mutants `make mutation MUTATE="toolsight.engine.store*"` left alive (docs/testing.md)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path

import pytest

from toolsight.engine.store import (
    ARTIFACTS,
    RecordWriter,
    artifact_dir,
    artifact_path,
    disk_has_room,
    is_disk_full,
    mentions_disk_full,
    record_line,
    safe_name,
)
from toolsight.log.record import Record


def rec(task_id: str, **kw: object) -> Record:
    return Record(task_id=task_id, benchmark="b", setting="s", model="m", **kw)  # type: ignore[arg-type]


# ---- task folder names ----------------------------------------------------------------------------

def test_a_safe_task_id_is_its_own_folder_name() -> None:
    for tid in ("t0", "maze-d41", "A.b_c-9"):
        assert safe_name(tid) == tid


def test_an_unsafe_task_id_gets_underscores_and_a_hash_of_the_original() -> None:
    tid = "a/b c"
    digest = hashlib.sha1(tid.encode()).hexdigest()[:8]
    assert safe_name(tid) == f"a_b_c-{digest}"
    # two ids that clean to the same text still get different folders
    assert safe_name("a b") != safe_name("a/b")
    assert safe_name("a b").startswith("a_b-")


def test_leading_and_trailing_dots_never_make_a_hidden_or_parent_folder() -> None:
    assert not safe_name("..").startswith(".")
    assert safe_name("..").startswith("task-")  # nothing left after stripping: "task" + hash
    assert safe_name(".hidden.").startswith("hidden-")
    assert safe_name("/") .startswith("task-")


def test_a_long_unsafe_id_is_cut_to_80_characters_plus_the_hash() -> None:
    name = safe_name("x" * 200 + "!")
    assert name == "x" * 80 + "-" + hashlib.sha1(("x" * 200 + "!").encode()).hexdigest()[:8]


def test_artifact_paths_sit_under_the_runs_artifacts_folder(tmp_path: Path) -> None:
    assert artifact_dir(tmp_path, "a b") == tmp_path / ARTIFACTS / safe_name("a b")
    assert artifact_path(tmp_path, "t0", "out.png") == tmp_path / "artifacts" / "t0" / "out.png"


def test_each_epoch_after_the_first_has_its_own_folder(tmp_path: Path) -> None:
    assert artifact_dir(tmp_path, "t0", epoch=1) == tmp_path / "artifacts" / "t0"
    assert artifact_dir(tmp_path, "t0", epoch=2) == tmp_path / "artifacts" / "t0@epoch2"
    assert artifact_dir(tmp_path, "t0", epoch=3) == tmp_path / "artifacts" / "t0@epoch3"
    assert artifact_path(tmp_path, "t0", "a.png", epoch=2) == tmp_path / "artifacts" / "t0@epoch2" / "a.png"


# ---- record lines ---------------------------------------------------------------------------------

def test_a_plain_record_is_its_pydantic_json() -> None:
    r = rec("t0", error=None, tags={"k": "v"})
    assert record_line(r) == r.model_dump_json()


def test_lone_surrogates_anywhere_become_replacement_characters() -> None:
    r = rec("t\ud800", tags={"k\udcff": "v\ud801"}, extra={"list": ["x\udc00", ("y\ud9ff",)]})
    line = record_line(r)
    line.encode("utf-8")  # strict
    back = json.loads(line)
    assert back["task_id"] == "t\ufffd"
    (key, value), = back["tags"].items()  # pydantic's key serialiser may replace one surrogate by three
    assert key.startswith("k\ufffd") and set(key[1:]) == {"\ufffd"} and value == "v\ufffd"
    assert back["extra"]["list"] == ["x\ufffd", ["y\ufffd"]]


def test_a_record_that_cannot_be_encoded_becomes_an_error_record_that_keeps_the_task() -> None:
    r = rec("t\ud800", epoch=3, tags={"epoch": "1"}, started_at=5.0, duration_s=2.5, task_hash="h",
            extra={"bad": float("nan"), "obj": object()})
    back = Record.model_validate_json(record_line(r))
    assert back.task_id == "t\ufffd" and back.tags == {"epoch": "1"} and back.epoch == 3
    assert (back.benchmark, back.setting, back.model) == ("b", "s", "m")
    assert back.started_at == 5.0 and back.duration_s == 2.5 and back.task_hash == "h"
    assert back.error is not None and back.error.startswith("harness error: the record could not be stored (")
    assert "Error" in back.error  # names the exception type
    assert back.extra == {}


def test_text_stays_readable_in_a_repaired_line() -> None:
    line = record_line(rec("t\ud800", tags={"city": "Zürich"}))
    assert "Zürich" in line and "\\u" not in line  # not ASCII-escaped


# ---- the torn tail --------------------------------------------------------------------------------

def test_a_torn_last_line_is_cut_and_complete_lines_kept(tmp_path: Path) -> None:
    (tmp_path / "records.jsonl").write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": ')
    RecordWriter(tmp_path).close()
    assert (tmp_path / "records.jsonl").read_bytes() == b'{"a": 1}\n{"b": 2}\n'


def test_a_file_with_only_a_torn_line_is_emptied(tmp_path: Path) -> None:
    (tmp_path / "records.jsonl").write_bytes(b'{"half')
    w = RecordWriter(tmp_path)
    w.write(rec("t0"))
    w.close()
    lines = (tmp_path / "records.jsonl").read_bytes().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["task_id"] == "t0"


def test_a_clean_or_empty_file_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "records.jsonl").write_bytes(b'{"a": 1}\n')
    RecordWriter(tmp_path).close()
    assert (tmp_path / "records.jsonl").read_bytes() == b'{"a": 1}\n'
    (tmp_path / "other.jsonl").write_bytes(b"")
    RecordWriter(tmp_path, file="other.jsonl").close()
    assert (tmp_path / "other.jsonl").read_bytes() == b""


def test_the_writer_creates_the_run_directory(tmp_path: Path) -> None:
    w = RecordWriter(tmp_path / "new" / "run")
    w.write(rec("t0"))
    w.close()
    assert w.path == tmp_path / "new" / "run" / "records.jsonl" and w.path.read_bytes().endswith(b"\n")


# ---- writing --------------------------------------------------------------------------------------

def test_lines_are_appended_in_order_each_ending_in_a_newline(tmp_path: Path) -> None:
    (tmp_path / "records.jsonl").write_bytes(b'{"old": 1}\n')
    w = RecordWriter(tmp_path)
    for i in range(50):
        w.write(rec(f"t{i}"))
    w.write_line('{"raw": "\udcff"}')  # not encodable: replaced, never an exception in the writer
    w.close()
    raw = (tmp_path / "records.jsonl").read_bytes()
    assert raw.endswith(b"\n") and raw.startswith(b'{"old": 1}\n')
    lines = raw.decode("utf-8").splitlines()
    assert [json.loads(x)["task_id"] for x in lines[1:51]] == [f"t{i}" for i in range(50)]
    assert lines[51] == '{"raw": "?"}'


def test_a_failed_write_is_reported_with_the_path_and_errno(tmp_path: Path) -> None:
    w = RecordWriter(tmp_path)
    real = w._fh

    class Full:
        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        def flush(self) -> None: ...

        def fileno(self) -> int:
            return real.fileno()

        def close(self) -> None:
            real.close()

    w._fh = Full()  # type: ignore[assignment]
    w.write(rec("t0"))
    with pytest.raises(OSError) as closed:
        w.close()
    assert closed.value.errno == errno.ENOSPC
    assert str(closed.value) == f"[Errno {errno.ENOSPC}] cannot write {w.path}: No space left on device"
    with pytest.raises(OSError) as later:
        w.write(rec("t1"))  # after a failure every write says so
    assert later.value.errno == errno.ENOSPC and is_disk_full(later.value)


def test_a_failing_close_is_reported(tmp_path: Path) -> None:
    w = RecordWriter(tmp_path)
    w.write(rec("t0"))
    real = w._fh

    class BadClose:
        def __getattr__(self, name: str) -> object:
            return getattr(real, name)

        def close(self) -> None:
            real.close()
            raise OSError(errno.EIO, "Input/output error")

    w._fh = BadClose()  # type: ignore[assignment]
    with pytest.raises(OSError, match="Input/output error") as closed:
        w.close()
    assert closed.value.errno == errno.EIO and w.error is not None


def test_a_single_torn_byte_is_cut(tmp_path: Path) -> None:
    (tmp_path / "records.jsonl").write_bytes(b"{")
    RecordWriter(tmp_path).close()
    assert (tmp_path / "records.jsonl").read_bytes() == b""


def test_a_failure_that_is_not_an_oserror_is_still_reported_as_one(tmp_path: Path) -> None:
    w = RecordWriter(tmp_path)
    w.close()
    w.error = RuntimeError("boom")
    with pytest.raises(OSError, match=r"cannot write .*records\.jsonl: boom"):
        w.write(rec("t0"))


# ---- disk full ------------------------------------------------------------------------------------

@pytest.mark.parametrize("exc", [
    OSError(errno.ENOSPC, "x"),
    OSError(errno.EDQUOT, "x"),
    RuntimeError("sqlite3.OperationalError: database or disk is full"),
    ValueError("[Errno 28] while writing"),
    RuntimeError("Disk quota exceeded"),
])
def test_disk_full_is_recognised_by_errno_or_text(exc: BaseException) -> None:
    assert is_disk_full(exc)


def test_disk_full_is_found_through_causes_and_contexts() -> None:
    try:
        try:
            raise OSError(errno.ENOSPC, "full")
        except OSError as inner:
            raise RuntimeError("saving failed") from inner
    except RuntimeError as outer:
        assert is_disk_full(outer)
    try:
        try:
            raise OSError(errno.ENOSPC, "full")
        except OSError:
            raise KeyError("while handling")  # noqa: B904 - an implicit context on purpose
    except KeyError as outer2:
        assert is_disk_full(outer2)


def test_other_errors_are_not_disk_full_and_cycles_end() -> None:
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not is_disk_full(RuntimeError("no space for this argument"))
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__cause__, b.__cause__ = b, a
    assert not is_disk_full(a)


def test_mentions_disk_full_reads_any_case() -> None:
    assert mentions_disk_full("OSError: NO SPACE LEFT ON DEVICE")
    assert mentions_disk_full("model error: [Errno 28]")
    assert not mentions_disk_full("model error: 500")


def test_disk_has_room_writes_a_probe_and_removes_it(tmp_path: Path) -> None:
    assert disk_has_room(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_disk_has_room_is_false_only_when_the_disk_is_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = Path.open
    failure: list[int] = [errno.ENOSPC]

    created: list[bool] = [True]

    def full_open(self: Path, *a: object, **kw: object):  # type: ignore[no-untyped-def]
        if self.name.startswith(".space-probe-"):
            if created[0]:
                real_open(self, "wb").close()
            raise OSError(failure[0], os.strerror(failure[0]))
        return real_open(self, *a, **kw)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", full_open)
    assert disk_has_room(tmp_path) is False
    assert list(tmp_path.iterdir()) == []  # the probe is removed even when writing it failed
    failure[0] = errno.EACCES
    assert disk_has_room(tmp_path) is True  # not a full disk: someone else's problem
    created[0], failure[0] = False, errno.EDQUOT  # the probe was never made: nothing to remove, no error
    assert disk_has_room(tmp_path) is False


def test_a_repaired_line_is_strict_json_without_nan_tokens() -> None:
    def no_constants(name: str) -> float:
        raise AssertionError(f"non-standard JSON token {name}")

    line = record_line(rec("t\ud800", extra={"x": float("nan")}))
    back = json.loads(line, parse_constant=no_constants)
    assert back["task_id"] == "t\ufffd"
