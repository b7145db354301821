"""The runs under a folder, one row each (`toolsight runs DIR`, `toolsight.runs_df`, `toolsight view DIR`).

A run is any folder holding a `manifest.json`; the search goes down from DIR (into sweep folders too)
and stops at each run. A row holds what the manifest says (benchmark — for a dataset folder's run the
folder's name, or in a sweep the label its plan gave the folder —, setting, model, loop, date), what
the latest records say (tasks with a record, run errors, the mean score of the scored ones) and the
run's status:

- `running`: its `run.lock` is held now (read from /proc/locks, which does not touch the lock);
- `finished` / `interrupted`: from `status.json`, written when an invocation ends; a run without one
  that is not running was killed (interrupted) — unless it predates status files and every task of
  its dataset has its records (finished).
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from toolsight.errors import ToolsightError
from toolsight.log.files import MANIFEST, latest_records, read_manifest
from toolsight.log.manifest import Manifest
from toolsight.log.record import Record
from toolsight.log.status import read_status

Status = Literal["finished", "interrupted", "running"]
LOCK_FILE = "run.lock"  # engine.rundir.LOCK (the report layer reads run directories, it does not own them)


class RunRow(BaseModel):
    """One run directory, as `toolsight runs --json` prints it."""

    path: str
    benchmark: str
    setting: str
    model: str
    loop: str | None
    judge: str | None
    tasks: int  # task-epochs with a record
    selected: int | None  # task-epochs the last invocation covered (None: not known)
    errors: int  # of the recorded task-epochs, those whose latest record is a run error
    scored: int
    score: float | None  # mean score of the scored task-epochs, 0-1
    status: Status
    reason: str | None  # why an interrupted run did not finish, when known
    created: str
    ended: str | None
    sweep: str | None  # the sweep folder it belongs to


class RunsError(ToolsightError):
    """A folder that cannot be listed, or a filter that is not understood (one line with the fix)."""


def find_runs(root: Path) -> Iterator[Path]:
    """Run directories under `root` (itself included), in path order; hidden folders are skipped."""
    if (root / MANIFEST).is_file():
        yield root
        return
    for here, dirs, _files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for d in list(dirs):
            if (Path(here) / d / MANIFEST).is_file():
                dirs.remove(d)
                yield Path(here) / d


def _held_inodes() -> set[tuple[int, int]] | None:
    """(device, inode) of every file with a lock, from /proc/locks (None where there is none)."""
    try:
        text = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    held: set[tuple[int, int]] = set()
    for line in text.splitlines():
        parts = line.split()
        dev_ino = next((p for p in parts if p.count(":") == 2), None)
        if dev_ino is None:
            continue
        major, minor, inode = dev_ino.split(":")
        try:
            held.add((os.makedev(int(major, 16), int(minor, 16)), int(inode)))
        except ValueError:
            continue
    return held


def is_running(run_dir: Path, held: set[tuple[int, int]] | None = None) -> bool:
    """Whether a toolsight process holds the run's lock now."""
    try:
        st = (run_dir / LOCK_FILE).stat()
    except OSError:
        return False
    inodes = _held_inodes() if held is None else held
    return inodes is not None and (st.st_dev, st.st_ino) in inodes


def _sweep_of(run_dir: Path, root: Path) -> str | None:
    for parent in run_dir.parents:
        if (parent / "sweep.json").is_file():
            return str(parent)
        if parent == root:
            break
    return None


def _status(run_dir: Path, manifest: Manifest, recs: list[Record], running: bool) -> tuple[Status, str | None, int | None, str | None]:
    if running:
        return "running", None, None, None
    st = read_status(run_dir)
    if st is not None:
        return st.state, st.reason, st.selected, st.ended
    epochs = max((r.epoch for r in recs), default=1)
    whole = (manifest.dataset.n_tasks or 0) * epochs
    if whole and len(recs) >= whole:
        return "finished", None, None, None
    return "interrupted", "no status.json: killed, or made by an older toolsight", None, None


def _sweep_label(run_dir: Path, sweep: str) -> str | None:
    """The benchmark label the sweep's plan gave this run (`sweep.json`), None when not found."""
    try:
        data = json.loads((Path(sweep) / "sweep.json").read_text(encoding="utf-8"))
        here = run_dir.resolve()
        for run in data.get("runs", []):
            if (Path(sweep) / str(run["dir"])).resolve() == here:
                return str(run["benchmark"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return None


def _benchmark(manifest: Manifest, run_dir: Path, sweep: str | None) -> str:
    """The benchmark's name; a dataset folder's run: the folder's name — in a sweep, the label its plan gave
    the folder (`name = "bars"` beside `generate = ...`, not the generated folder's `0-vtc-bars-n8-s0`)."""
    if manifest.benchmark == "dataset" and manifest.target:
        label = _sweep_label(run_dir, sweep) if sweep is not None else None
        return Path(label).name if label else Path(manifest.target).name
    return manifest.benchmark


def _loop(manifest: Manifest) -> str | None:
    loop = (manifest.model_extra or {}).get("loop") or manifest.agent_settings.get("loop")
    return str(loop) if loop else None


def run_row(run_dir: Path, root: Path | None = None, held: set[tuple[int, int]] | None = None) -> RunRow:
    """The row of one run directory."""
    manifest = read_manifest(run_dir)
    recs = latest_records(run_dir)
    status, reason, selected, ended = _status(run_dir, manifest, recs, is_running(run_dir, held))
    values = [r.score.value for r in recs if r.error is None and r.score is not None and r.score.error is None]
    sweep = _sweep_of(run_dir, root or run_dir)
    return RunRow(
        path=str(run_dir), benchmark=_benchmark(manifest, run_dir, sweep), setting=manifest.setting,
        model=manifest.model,
        loop=_loop(manifest), judge=manifest.judge, tasks=len(recs), selected=selected,
        errors=sum(1 for r in recs if r.error is not None), scored=len(values),
        score=sum(values) / len(values) if values else None, status=status, reason=reason,
        created=manifest.created, ended=ended, sweep=sweep,
    )


FILTERS = ("benchmark", "setting", "model", "status")


def list_runs(root: Path, filters: dict[str, str] | None = None) -> list[RunRow]:
    """The rows of every run under `root` matching `filters` (field -> glob, e.g. model="openai/*"), newest
    first. A run directory that cannot be read is left out, not fatal (a run being created)."""
    if not root.is_dir():
        raise RunsError(f"{root}: no such folder (give the folder that holds the runs, e.g. runs/)")
    for key in filters or {}:
        if key not in FILTERS:
            raise RunsError(f"unknown filter {key!r}; filter by {', '.join(FILTERS)}")
    held = _held_inodes()
    rows: list[RunRow] = []
    for run_dir in find_runs(root):
        try:
            row = run_row(run_dir, root, held)
        except (OSError, ValueError, ToolsightError):
            continue
        if all(fnmatch.fnmatchcase(str(getattr(row, k)), pattern) for k, pattern in (filters or {}).items()):
            rows.append(row)
    rows.sort(key=lambda r: (r.created, r.path), reverse=True)
    return rows


__all__ = ["FILTERS", "RunRow", "RunsError", "find_runs", "is_running", "list_runs", "run_row"]
