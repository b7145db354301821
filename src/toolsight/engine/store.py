"""The run directory (layer 5): manifest.json, append-only records.jsonl, artifacts/, cache.sqlite.

A run can be killed at any moment: each record is one line appended and fsynced, so a resumed run
reads back exactly the tasks that finished (a torn last line is ignored and re-run). The writer
can never take the run down: a record that cannot be encoded (a lone surrogate from a child
process, a file name that is not UTF-8) is stored with those characters replaced, and if even
that fails, as that task's error record.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import queue
import re
import threading
from pathlib import Path
from typing import Any

from toolsight.log.files import (  # re-exported: the run log's readers live in toolsight.log
    MANIFEST as MANIFEST,
)
from toolsight.log.files import RECORDS as RECORDS
from toolsight.log.files import finished_ids as finished_ids
from toolsight.log.files import iter_record_dicts as iter_record_dicts
from toolsight.log.files import iter_records as iter_records
from toolsight.log.files import read_manifest as read_manifest
from toolsight.log.files import write_manifest as write_manifest
from toolsight.log.record import Record

ARTIFACTS = "artifacts"
CACHE = "cache.sqlite"

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(task_id: str) -> str:
    """A file-system-safe folder name for a task id (stable, collision-resistant)."""
    base = _SAFE.sub("_", task_id).strip("._") or "task"
    if base != task_id:
        import hashlib

        base = f"{base[:80]}-{hashlib.sha1(task_id.encode()).hexdigest()[:8]}"
    return base


def artifact_dir(run_dir: Path, task_id: str, epoch: int = 1) -> Path:
    """Where a task's artifacts (input copies and tool outputs) live; epoch N > 1 of a run with
    --epochs has its own folder beside it (`NAME@epochN`: safe_name never makes an `@`, so it cannot collide)."""
    name = safe_name(task_id)
    return run_dir / ARTIFACTS / (name if epoch <= 1 else f"{name}@epoch{epoch}")


def artifact_path(run_dir: Path, task_id: str, file: str, epoch: int = 1) -> Path:
    return artifact_dir(run_dir, task_id, epoch) / file


#: the run's one copy of each input image (`agents.inputs.SharedInputs`); safe_name never makes a
#: name that starts with a dot, so no task's folder can be called this
SHARED_INPUTS = ".inputs"


def shared_inputs_dir(run_dir: Path) -> Path:
    return run_dir / ARTIFACTS / SHARED_INPUTS


def artifact_files(run_dir: Path, rec: Record) -> dict[str, Path]:
    """Where each of a record's artifacts is, by id: an input image's copy shared by the run when
    there is one (the task's workspace is made only when the task needs it; the shared copy is also
    the one no model code ever ran beside), else the file in the task's folder (which may be gone)."""
    adir = artifact_dir(run_dir, rec.task_id, rec.epoch)
    shared = shared_inputs_dir(run_dir)
    out: dict[str, Path] = {}
    for a in rec.trajectory.artifacts:
        path = adir / a.file
        if a.source == "input":
            kept = shared / f"{a.id}{Path(a.file).suffix.lower()}"
            if kept.is_file():
                path = kept
        out[a.id] = path
    return out


_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(value: Any) -> Any:
    """`value` with every lone surrogate (not encodable as UTF-8) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def record_line(record: Record) -> str:
    """One JSON line for `record` that is always valid UTF-8 (see the module docstring)."""
    try:
        line = record.model_dump_json()
        line.encode("utf-8")
        return line
    except (ValueError, UnicodeError):  # pydantic reports unencodable text as a ValueError
        pass
    try:
        return json.dumps(_clean(record.model_dump(mode="json")), ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        why = f"{type(exc).__name__}: {exc}"
    fallback = Record(
        task_id=_clean(record.task_id), epoch=record.epoch, benchmark=record.benchmark, setting=record.setting, model=record.model,
        tags=_clean(record.tags), started_at=record.started_at, duration_s=record.duration_s,
        task_hash=record.task_hash, error=_clean(f"harness error: the record could not be stored ({why})"),
    )
    return fallback.model_dump_json()


class RecordWriter:
    """Appends records to records.jsonl from a writer thread with group commit.

    `write` hands the line to the thread and returns at once, so the event loop never waits on
    the disk (on an event loop, at the end of the current loop iteration, with the iteration's
    other lines). The thread writes every queued line and then fsyncs once: each record is durable
    within one fsync of its task finishing. A record still queued when the process is killed was
    not finished; resume runs that task again. `close` drains the queue.
    """

    def __init__(self, run_dir: Path, file: str = RECORDS) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        self.path = run_dir / file
        self._repair_tail()
        self._fh = self.path.open("ab")
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._pending: list[bytes] = []  # lines of the current event-loop iteration, not yet queued
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="toolsight-records", daemon=True)
        self._thread.start()

    def _repair_tail(self) -> None:
        """Drop a torn final line left by a killed run, so the next append starts clean."""
        if not self.path.is_file() or self.path.stat().st_size == 0:
            return
        with self.path.open("rb+") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 1))
            if fh.read(1) == b"\n":
                return
            data = self.path.read_bytes()
            cut = data.rfind(b"\n") + 1
            fh.truncate(cut)

    def _loop(self) -> None:
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            lines = [b for b in batch if b is not None]
            stop = len(lines) != len(batch)
            if not lines:
                continue
            try:
                self._fh.write(b"".join(lines))
                self._fh.flush()
                os.fsync(self._fh.fileno())
            except BaseException as exc:  # e.g. ENOSPC: the runner checks `error` and stops the run
                self.error = exc
                return

    def write(self, record: Record) -> None:
        self.write_line(record_line(record))

    def write_line(self, line: str) -> None:
        if self.error is not None:
            raise self._failure()
        data = line.encode("utf-8", "replace") + b"\n"
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on an event loop: hand the line over now
            self._flush()
            self._queue.put(data)
            return
        # on the event loop, the lines of one loop iteration go to the thread together: one wake-up
        # of the writer thread (and one GIL hand-over) per iteration rather than per record
        self._pending.append(data)
        if len(self._pending) == 1:
            loop.call_soon(self._flush)

    def _flush(self) -> None:
        if self._pending:
            lines, self._pending = self._pending, []
            self._queue.put(b"".join(lines))

    def _failure(self) -> OSError:
        err = self.error
        if isinstance(err, OSError):
            return OSError(err.errno, f"cannot write {self.path}: {err.strerror or err}")
        return OSError(f"cannot write {self.path}: {err}")

    def close(self) -> None:
        self._flush()
        self._queue.put(None)
        self._thread.join()
        try:
            self._fh.close()
        except OSError as exc:  # the buffer is empty after each batch; a failed batch is already in `error`
            self.error = self.error or exc
        if self.error is not None:
            raise self._failure()


# ---- disk full ------------------------------------------------------------------------------------

_DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_DISK_FULL_TEXT = ("no space left on device", "disk quota exceeded", "database or disk is full", "[errno 28]")


def is_disk_full(exc: BaseException) -> bool:
    """True when `exc` (or what caused it) says the disk or quota is full."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno in _DISK_FULL_ERRNOS:
            return True
        if any(t in str(cur).lower() for t in _DISK_FULL_TEXT):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def mentions_disk_full(text: str) -> bool:
    low = text.lower()
    return any(t in low for t in _DISK_FULL_TEXT)


def disk_has_room(run_dir: Path, size: int = 64 * 1024) -> bool:
    """Whether `size` bytes can still be written (and fsynced) in the run directory."""
    probe = run_dir / f".space-probe-{os.getpid()}"
    try:
        with probe.open("wb") as fh:
            fh.write(b"\0" * size)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        return exc.errno not in _DISK_FULL_ERRNOS
    finally:
        probe.unlink(missing_ok=True)
    return True
