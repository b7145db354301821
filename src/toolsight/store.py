"""The run directory (layer 5): manifest.json, append-only records.jsonl, artifacts/, cache.sqlite.

A run can be killed at any moment: each record is one line appended and fsynced, so a resumed run
reads back exactly the tasks that finished (a torn last line is ignored and re-run).
"""

from __future__ import annotations

import os
import queue
import re
import threading
from pathlib import Path

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


def artifact_dir(run_dir: Path, task_id: str) -> Path:
    """Where a task's artifacts (input copies and tool outputs) live."""
    return run_dir / ARTIFACTS / safe_name(task_id)


def artifact_path(run_dir: Path, task_id: str, file: str) -> Path:
    return artifact_dir(run_dir, task_id) / file


class RecordWriter:
    """Appends records to records.jsonl from a writer thread with group commit.

    `write` hands the line to the thread and returns at once, so the event loop never waits on
    the disk. The thread writes every queued line and then fsyncs once: each record is durable
    within one fsync of its task finishing. A record still queued when the process is killed was
    not finished; resume runs that task again. `close` drains the queue.
    """

    def __init__(self, run_dir: Path, file: str = RECORDS) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        self.path = run_dir / file
        self._repair_tail()
        self._fh = self.path.open("a", encoding="utf-8")
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
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
                self._fh.write("".join(line + "\n" for line in lines))
                self._fh.flush()
                os.fsync(self._fh.fileno())
            except BaseException as exc:  # surfaced by close()
                self._error = exc
                return

    def write(self, record: Record) -> None:
        self.write_line(record.model_dump_json())

    def write_line(self, line: str) -> None:
        if self._error is not None:
            raise OSError(f"cannot write {self.path}: {self._error}")
        self._queue.put(line)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        self._fh.close()
        if self._error is not None:
            raise OSError(f"cannot write {self.path}: {self._error}")
