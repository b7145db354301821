"""Reading and writing the run log's files: manifest.json, records.jsonl, scores-*.jsonl.

Readers upgrade older schema versions on the fly, skip a torn last line (a killed run's), and,
because a resumed run appends a new record for a task it re-ran (e.g. after an error), give the
last record of each task (`latest_records`). Nothing here is rewritten in place. "Each task" means
each (task, epoch) of a run made with `--epochs`: such records are keyed by `record_key`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

import orjson

from toolsight.errors import ToolsightError
from toolsight.log.manifest import MANIFEST_SCHEMA_VERSION, Manifest
from toolsight.log.record import RECORD_SCHEMA_VERSION, Record, record_key

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"


class RunLogError(ToolsightError):
    """A run directory or run-log file that cannot be read (names the file and the fix)."""


def _refuse_newer(kind: str, version: int, current: int) -> None:
    """A run written by a newer toolsight cannot be read as if it were this version's."""
    if version > current:
        raise RunLogError(f"{kind} schema version {version} is newer than this toolsight understands "
                          f"({current}); upgrade toolsight to read this run")


def upgrade_manifest(data: dict[str, Any]) -> dict[str, Any]:
    """Bring a manifest dict of any known version to the current layout."""
    _refuse_newer("manifest", int(data.get("schema_version", 1)), MANIFEST_SCHEMA_VERSION)
    out = dict(data)
    # v1 -> v2: only the version field was added
    out["schema_version"] = MANIFEST_SCHEMA_VERSION
    return out


def upgrade_record(data: dict[str, Any]) -> dict[str, Any]:
    """Bring a record dict of any known version to the current layout."""
    raw = data.get("schema_version", 1)
    _refuse_newer("record", raw if isinstance(raw, int) else 1, RECORD_SCHEMA_VERSION)
    out = dict(data)
    # v2 -> v3: `epoch` added; every earlier record is the run's only epoch (the field default)
    out["schema_version"] = RECORD_SCHEMA_VERSION
    return out


def dict_key(data: dict[str, Any]) -> str:
    """`record_key` of a record dict (an unreadable epoch counts as epoch 1)."""
    ep = data.get("epoch", 1)
    return record_key(str(data.get("task_id")), ep if isinstance(ep, int) and not isinstance(ep, bool) else 1)


def read_manifest(run_dir: Path) -> Manifest:
    p = run_dir / MANIFEST
    if not p.is_file():
        raise RunLogError(f"{run_dir} is not a toolsight run directory (no {MANIFEST})")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunLogError(f"{p}: cannot be read ({exc}); it is not a valid manifest") from None
    if not isinstance(data, dict):
        raise RunLogError(f"{p}: expected a JSON object")
    return Manifest.model_validate(upgrade_manifest(data))


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    """Write atomically (temp file + rename): a reader sees the old or the new manifest, never half."""
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / MANIFEST, manifest.model_dump_json(indent=2))


@contextlib.contextmanager
def atomic_writer(path: Path, *, newline: str | None = None) -> Iterator[IO[str]]:
    """Write a text file so that it appears whole or not at all: a temp file in the same folder,
    fsynced, then renamed over `path`. A kill or an error mid-way leaves the old file (or none)
    and no truncated file that looks complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """`path.write_text(text)`, but atomic (see `atomic_writer`)."""
    with atomic_writer(path) as fh:
        fh.write(text)


def complete_lines(path: Path) -> Iterator[str]:
    """Non-empty lines of a JSONL file, stopping at a torn last line (a killed run's)."""
    if not path.is_file():
        return
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.endswith("\n"):
                break
            if line.strip():
                yield line


def iter_record_dicts(run_dir: Path, file: str = RECORDS) -> Iterator[dict[str, Any]]:
    """Every complete record line as an upgraded dict, in file order (lines that are not JSON skipped)."""
    for line in complete_lines(run_dir / file):
        data = _parse_line(line)
        if data is not None:
            yield upgrade_record(data)


def _parse_line(line: str) -> dict[str, Any] | None:
    try:  # orjson: ~4x faster on record lines; what it refuses (NaN, integers beyond 64 bits,
        data = orjson.loads(line)  # nesting past 255 levels) goes through `json`, as before
    except orjson.JSONDecodeError:
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            return None
    return data if isinstance(data, dict) else None


def iter_records(run_dir: Path, file: str = RECORDS) -> Iterator[Record]:
    """Stream every record in file order (one at a time, so 10,000 records never sit in memory together).

    A task re-run on resume has more than one record; use `latest_records` for one per task.
    """
    for data in iter_record_dicts(run_dir, file):
        try:
            yield Record.model_validate(data)
        except ValueError:
            continue


def latest_records(run_dir: Path, file: str = RECORDS) -> list[Record]:
    """The last record of each task (and epoch), in the order they first appear (superseded records dropped)."""
    latest: dict[str, Record] = {}
    for rec in iter_records(run_dir, file):
        latest[rec.key] = rec  # a dict keeps the first insertion's position
    return list(latest.values())


_TASK_ID = '"task_id":'
_EPOCH = '"epoch":'
_EPOCH_AFTER = re.compile(r'\s*,\s*"epoch"\s*:\s*(\d+)')


def _line_task_id(line: str, dec: json.JSONDecoder) -> str | None:
    """The record's key (task id, `ID#N` for epoch N > 1), read without parsing the whole line:
    records put the task id first or second and the epoch right after it."""
    at = line.find(_TASK_ID)
    if at >= 0:
        rest = at + len(_TASK_ID)
        while rest < len(line) and line[rest] == " ":
            rest += 1
        try:
            value, end = dec.raw_decode(line, rest)
        except ValueError:
            value = None
        if isinstance(value, str):
            # only an `"epoch":` key that directly follows the task id is the record's (a nested
            # dict in the trajectory may hold one too); a record without it is epoch 1
            m = _EPOCH_AFTER.match(line, end)
            if m:
                return record_key(value, int(m.group(1)))
            if _EPOCH not in line:
                return value
    try:  # an unusual key order: parse the line
        data = json.loads(line)
    except json.JSONDecodeError:
        return None
    return dict_key(data) if isinstance(data, dict) and "task_id" in data else None


def latest_offsets(run_dir: Path, file: str = RECORDS) -> dict[str, int]:
    """Record key (task id; `ID#N` for epoch N > 1) -> byte offset of its last complete record line,
    in order of first appearance.

    Cheap (the task id is read without parsing the record), so a reader can stream one record per
    task (`iter_latest_records`) or fetch one task's record (`read_record_at`) without holding the run.
    """
    path = run_dir / file
    out: dict[str, int] = {}
    if not path.is_file():
        return out
    dec = json.JSONDecoder()
    offset = 0
    with path.open("rb") as fh:
        for raw in fh:
            start, offset = offset, offset + len(raw)
            if not raw.endswith(b"\n"):
                break  # a torn last line (a killed run's)
            line = raw.decode("utf-8", errors="replace")
            if not line.strip():
                continue
            tid = _line_task_id(line, dec)
            if tid is not None:
                out[tid] = start
    return out


def read_record_at(run_dir: Path, offset: int, file: str = RECORDS) -> Record | None:
    """The record on the line starting at `offset` (from `latest_offsets`), or None if unreadable."""
    with (run_dir / file).open("rb") as fh:
        fh.seek(offset)
        line = fh.readline().decode("utf-8", errors="replace")
    try:
        data = json.loads(line)
        return Record.model_validate(upgrade_record(data)) if isinstance(data, dict) else None
    except ValueError:
        return None


def iter_latest_records(run_dir: Path, file: str = RECORDS) -> Iterator[Record]:
    """Stream the last record of each task (as `latest_records`, but one record in memory at a time).

    Records come in file order of their last line; a superseded record (a task re-run on resume)
    is skipped without being parsed.
    """
    keep = set(latest_offsets(run_dir, file).values())
    if not keep:
        return
    offset = 0
    with (run_dir / file).open("rb") as fh:
        for raw in fh:
            start, offset = offset, offset + len(raw)
            if start not in keep:
                continue
            try:
                data = json.loads(raw.decode("utf-8", errors="replace"))
                if isinstance(data, dict):
                    yield Record.model_validate(upgrade_record(data))
            except ValueError:
                continue


def finished_ids(run_dir: Path, file: str = RECORDS) -> set[str]:
    """Ids of tasks with at least one complete record."""
    return {str(d.get("task_id")) for d in iter_record_dicts(run_dir, file)}


class RecordStatus(NamedTuple):
    """What --resume needs of a task's last record."""

    error: str | None
    task_hash: str | None
    score_pending: bool = False


def latest_status(run_dir: Path, file: str = RECORDS) -> dict[str, RecordStatus]:
    """Record key (task id; `ID#N` for epoch N > 1) -> the status of its last complete record: what
    --resume needs to decide which tasks are done, which ended in error, which still wait for their
    score and which ran on a task that has changed since."""
    out: dict[str, RecordStatus] = {}
    for d in iter_record_dicts(run_dir, file):
        if "task_id" not in d:
            continue
        err, th = d.get("error"), d.get("task_hash")
        out[dict_key(d)] = RecordStatus(str(err) if err is not None else None, str(th) if th is not None else None,
                                        bool(d.get("score_pending")))
    return out
