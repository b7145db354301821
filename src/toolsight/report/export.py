"""Per-task export of one or more runs to CSV (and Parquet when pyarrow is installed), for pandas."""

from __future__ import annotations

import contextlib
import csv
import importlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolsight.log.files import RECORDS, atomic_writer
from toolsight.log.record import Record
from toolsight.metrics.views import TaskView, iter_views
from toolsight.report.safe import csv_cell
from toolsight.tasks.schema import Task

BASE_COLUMNS = [
    "run_dir", "benchmark", "model", "setting", "task_id", "turn_type", "n_turns", "error", "score_error",
    "score", "passed", "tool_calls", "ok_calls", "effective_calls", "reference_length", "rounds", "model_calls",
    "input_tokens", "output_tokens", "reasoning_tokens", "stop_reason", "tools", "effective_tools",
]


def view_row(run_dir: Path, v: TaskView) -> dict[str, Any]:
    s = v.score
    row: dict[str, Any] = {
        "run_dir": str(run_dir), "benchmark": v.benchmark, "model": v.model, "setting": v.setting,
        "task_id": v.task_id, "turn_type": v.turn_type, "n_turns": v.n_turns, "error": v.error,
        "score_error": s.error if s else None, "score": s.value if s and v.scorable else None,
        "passed": v.passed if v.scorable else None, "tool_calls": v.calls, "ok_calls": v.ok_calls,
        "effective_calls": v.effective_calls, "reference_length": v.ref_len, "rounds": v.rounds,
        "model_calls": v.model_calls, "input_tokens": v.input_tokens, "output_tokens": v.output_tokens,
        "reasoning_tokens": v.reasoning_tokens, "stop_reason": v.stop_reason, "tools": ";".join(v.tool_names),
        "effective_tools": ";".join(v.effective_tools),
    }
    for k, val in v.tags.items():
        row[f"tag_{k}"] = val
    return row


_TAGS = '"tags":'


def tag_columns(run_dirs: Iterable[Path]) -> list[str]:
    """`tag_KEY` for every tag key in the runs, found without parsing whole records (fast pre-scan)."""
    keys: set[str] = set()
    dec = json.JSONDecoder()
    for rd in run_dirs:
        p = rd / RECORDS
        if not p.is_file():
            continue
        with p.open("r", encoding="utf-8") as fh:
            for line in fh:
                at = line.find(_TAGS)
                if at < 0:
                    continue
                try:
                    tags, _ = dec.raw_decode(line, at + len(_TAGS))
                except ValueError:
                    continue
                if isinstance(tags, dict):
                    keys.update(str(k) for k in tags)
    return [f"tag_{k}" for k in sorted(keys)]


class CsvSink:
    """Writes TaskView rows to a CSV as they stream by (one row per task, all runs in one file).

    Rows go to a temp file renamed over `path` by `close()`; `discard()` (after an error) drops
    it, so a killed or failed export never leaves a truncated CSV that looks complete."""

    def __init__(self, path: Path, columns: list[str]) -> None:
        self.columns = columns
        self._ctx = atomic_writer(path, newline="")
        self._fh = self._ctx.__enter__()
        self._w = csv.DictWriter(self._fh, fieldnames=columns, extrasaction="ignore")
        self._w.writeheader()
        self.run_dir = Path(".")

    def __call__(self, v: TaskView) -> None:
        r = view_row(self.run_dir, v)
        self._w.writerow({c: csv_cell(r.get(c)) for c in self.columns})

    def close(self) -> None:
        self._ctx.__exit__(None, None, None)

    def discard(self) -> None:
        err = RuntimeError("export abandoned")
        with contextlib.suppress(RuntimeError):
            self._ctx.__exit__(type(err), err, None)


def export_records(run_dirs: Iterable[Path | str], out: Path | str, scores: str | None = None) -> Path:
    """Write one row per task (all runs) to `out`: `.csv` (streamed), or `.parquet` (needs pyarrow)."""
    dirs = [Path(d) for d in run_dirs]
    path = Path(out)
    columns = BASE_COLUMNS + tag_columns(dirs)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        try:
            pa = importlib.import_module("pyarrow")
            pq = importlib.import_module("pyarrow.parquet")
        except ImportError:
            raise ValueError(f"{path}: Parquet export needs pyarrow (`pip install pyarrow`); or use a .csv name") \
                from None
        rows = [view_row(rd, v) for rd in dirs for v in iter_views(rd, scores)]
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows]), str(path))
        return path
    if suffix != ".csv":
        raise ValueError(f"{path}: export to .csv or .parquet")
    sink = CsvSink(path, columns)
    try:
        for rd in dirs:
            sink.run_dir = rd
            for v in iter_views(rd, scores):
                sink(v)
    except BaseException:
        sink.discard()
        raise
    sink.close()
    return path


def gold_texts(rec: Record, task: Task | None, missing: str = "") -> list[str]:
    """Each turn's gold answer as text (a list joined with ", "): from the task, else from what the
    record kept (`extra["gold"]`); `missing` for a turn without one."""
    raw: list[Any]
    if task is not None:
        raw = [t.answer for t in task.turns]
    else:
        g = rec.extra.get("gold")
        raw = g if isinstance(g, list) else ([] if g is None else [g])
    return [missing if a is None else (", ".join(map(str, a)) if isinstance(a, list) else str(a)) for a in raw]
