"""`EvalResult`: what `toolsight.evaluate(...)` returns — the run directory, its records, and the
report's tables as pandas DataFrames (pandas is imported only when a table is asked for).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsight.engine.options import RunOptions
from toolsight.engine.summary import RunSummary
from toolsight.errors import ToolsightError
from toolsight.log.files import latest_records
from toolsight.log.record import Record
from toolsight.metrics.cost import PriceTable, builtin_table, cost_of

if TYPE_CHECKING:
    import pandas as pd

    from toolsight.metrics.compute import RunMetrics
    from toolsight.report.tables import Table


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ToolsightError("the result tables need pandas: pip install 'toolsight[api]'") from None
    return pandas


def table_frame(t: Table) -> pd.DataFrame:
    """A report table as a DataFrame: one row per run, numbers (percent columns in %), and a
    `lo`/`hi` column beside each column that has a 95% interval."""
    rows: list[dict[str, Any]] = []
    for keys, cells in t.rows:
        row: dict[str, Any] = dict(zip(t.key_columns, keys, strict=True))
        for col, c in zip(t.columns, cells, strict=True):
            name = col.name.replace(" [95% CI]", "")
            scale = 100.0 if col.percent else 1.0
            row[name] = c.value * scale if c.value is not None else (c.text if c.text not in ("", "–") else None)
            if c.lo is not None or c.hi is not None:
                row[f"{name} lo"] = c.lo * scale if c.lo is not None else None
                row[f"{name} hi"] = c.hi * scale if c.hi is not None else None
        rows.append(row)
    for col in t.columns:  # counts (N, Errors, …) are ints, not 6.0: a column of whole numbers that is no percentage
        name = col.name.replace(" [95% CI]", "")
        values = [r.get(name) for r in rows]
        if not col.percent and values and all(isinstance(v, int | float) and float(v).is_integer() for v in values):
            for r in rows:
                r[name] = int(r[name])
    frame: pd.DataFrame = _pandas().DataFrame(rows)
    return frame


def sample_row(r: Record, prices: PriceTable | None = None) -> dict[str, Any]:
    """One record as a row: task id, epoch, score value, passed, answer, error, tool calls, tokens,
    cost (USD, its model and judge calls at `prices`; None without a price), seconds, and a `tag:KEY`
    column per task tag (the breakdowns)."""
    from toolsight.metrics.billing import billed

    cost = cost_of(billed(r), prices) if prices else None
    s = r.score
    usage = r.trajectory.usage
    scored = s is not None and s.error is None and r.error is None
    return {
        "task_id": r.task_id, "epoch": r.epoch,
        "score": s.value if scored and s is not None else None,
        "passed": s.passed if scored and s is not None else None,
        "answer": s.answer if s is not None else None, "error": r.error or (s.error if s else None),
        "tool_calls": len(r.trajectory.tool_calls), "tokens": usage.input_tokens + usage.output_tokens,
        "cost_usd": round(cost.cost_usd, 6) if cost is not None and cost.priced_calls else None,
        "duration_s": r.duration_s, **{f"tag:{k}": v for k, v in r.tags.items()},
    }


@dataclass
class EvalResult:
    """One finished (or stopped) run. `records`, `scores`, `samples` and `tables` are read from
    the run directory on first use, so a result stays small until you look."""

    run_dir: Path
    summary: RunSummary
    options: RunOptions
    notes: list[str] = field(default_factory=list)

    # ---- the run ------------------------------------------------------------------------------
    @property
    def exit_code(self) -> int:
        """What the CLI would exit with: 0 ok, 3 some tasks ended in error, 4 stopped (docs/cli.md)."""
        return self.summary.exit_code

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def stopped(self) -> str | None:
        """Why the run stopped early (endpoint down, credentials rejected, disk full), or None."""
        return self.summary.stopped

    @property
    def accuracy(self) -> float | None:
        """The headline score (0-1) of the records' scores; with epochs, over tasks reduced by the reducer."""
        return self.metrics.overall.score.value

    # ---- what the run directory holds -----------------------------------------------------------
    @functools.cached_property
    def records(self) -> list[Record]:
        """The last record of each task (and epoch)."""
        return latest_records(self.run_dir)

    @functools.cached_property
    def metrics(self) -> RunMetrics:
        from toolsight.benchmarks.registry import vocabularies
        from toolsight.log.files import read_manifest
        from toolsight.metrics.compute import compute_run_metrics

        return compute_run_metrics(self.run_dir, vocabularies=vocabularies(read_manifest(self.run_dir).benchmark),
                                   prices=builtin_table())

    @functools.cached_property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table of the report (Score, Epochs, by-tag tables, Tool use, shares…) by title."""
        from toolsight.report.build import declared_tables, report_tables

        layout = declared_tables([self.metrics.benchmark])
        return {t.title: table_frame(t) for t in report_tables([self.metrics], [], None, "score", layout)}

    @property
    def scores(self) -> pd.DataFrame:
        """The score table: Model, Setting, N, Errors, Score % (with lo/hi), APR % (with lo/hi)."""
        return self.tables["Score"]

    @functools.cached_property
    def samples(self) -> pd.DataFrame:
        """One row per record: task id, epoch, score value, passed, answer, error, tool calls,
        tokens, cost (at toolsight's price table), seconds, and one column per task tag."""
        prices = builtin_table()
        frame: pd.DataFrame = _pandas().DataFrame([sample_row(r, prices) for r in self.records])
        return frame

    def report(self, fmt: str = "md", **kwargs: Any) -> str:
        """The report text (`toolsight report RUN --format FMT`); keywords as `build_report`'s."""
        from toolsight.report.build import build_report

        text: str = build_report([self.run_dir], fmt=fmt, **kwargs)
        return text

    def __repr__(self) -> str:
        return f"EvalResult(run_dir={str(self.run_dir)!r}, exit_code={self.exit_code}, summary={self.summary.line()!r})"

    def _repr_html_(self) -> str:  # what Jupyter shows for a result
        import html

        return (f"<p><b>{html.escape(str(self.run_dir))}</b> — {html.escape(self.summary.line())}</p>"
                + self.scores.to_html(index=False, na_rep="–"))
