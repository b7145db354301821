"""`toolsight.runs_df(DIR)` and `toolsight.samples_df(DIR)`: DataFrames over every run under a folder
(as Inspect's `evals_df` / `samples_df` over a log folder), for a notebook.

`runs_df`: one row per run — the `toolsight runs` fields (`toolsight.report.runs_index.RunRow`) and a
`score:TAG=VALUE` column per breakdown value (the mean score of that run's scored tasks with that tag).
`samples_df`: one row per task-epoch (each run's latest records) — the run's path, benchmark, setting,
model and loop, then the record (`EvalResult.samples`' columns, with a `tag:KEY` column per task tag).
pandas is imported when called (`pip install 'toolsight[api]'`).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsight.api.result import _pandas, sample_row
from toolsight.engine.options import runs_root
from toolsight.log.files import latest_records
from toolsight.log.record import Record

if TYPE_CHECKING:
    import pandas as pd

    from toolsight.report.runs_index import RunRow


def _rows(folder: str | Path | None, filters: dict[str, str]) -> list[RunRow]:
    from toolsight.report.runs_index import list_runs

    return list_runs(Path(folder) if folder is not None else runs_root(), filters)


def _breakdown(recs: list[Record]) -> dict[str, float]:
    """`score:KEY=VALUE` -> the mean score of the scored records with that tag value."""
    sums: dict[str, list[float]] = defaultdict(list)
    for r in recs:
        if r.error is None and r.score is not None and r.score.error is None:
            for k, v in r.tags.items():
                sums[f"score:{k}={v}"].append(r.score.value)
    return {k: sum(v) / len(v) for k, v in sorted(sums.items())}


def runs_df(folder: str | Path | None = None, **filters: str) -> pd.DataFrame:
    """One row per run under `folder` (default: $TOOLSIGHT_RUNS_DIR, else runs/), newest first;
    `filters` as `toolsight runs`' (benchmark=, setting=, model=, status=; globs)."""
    rows: list[dict[str, Any]] = []
    for row in _rows(folder, filters):
        rows.append({**row.model_dump(), **_breakdown(latest_records(Path(row.path)))})
    frame: pd.DataFrame = _pandas().DataFrame(rows)
    return frame


def samples_df(folder: str | Path | None = None, **filters: str) -> pd.DataFrame:
    """One row per task-epoch of every run under `folder` (each run's latest records), its cost at
    toolsight's price table (`cost_usd`) included."""
    from toolsight.metrics.cost import builtin_table

    prices = builtin_table()
    rows: list[dict[str, Any]] = []
    for row in _rows(folder, filters):
        run = {"run": row.path, "benchmark": row.benchmark, "setting": row.setting, "model": row.model,
               "loop": row.loop}
        rows.extend({**run, **sample_row(r, prices)} for r in latest_records(Path(row.path)))
    frame: pd.DataFrame = _pandas().DataFrame(rows)
    return frame


__all__ = ["runs_df", "samples_df"]
