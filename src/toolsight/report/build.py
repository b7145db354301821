"""`build_report`: the papers' tables (and plots) for one or more runs, as md, html, json or csv."""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from toolsight.errors import ToolsightError
from toolsight.log.files import atomic_write_text
from toolsight.metrics.compute import RunMetrics, compute_run_metrics
from toolsight.metrics.cost import PriceTable
from toolsight.report import tables as T
from toolsight.report.export import BASE_COLUMNS, CsvSink, tag_columns
from toolsight.report.plots import PLOTS, write_plots

FORMATS = ("md", "html", "json", "csv")


class ReportError(ToolsightError, ValueError):
    """A report request that cannot be built (bad format, base setting, ...): one clear message."""


def _env() -> Environment:
    return Environment(loader=PackageLoader("toolsight.report", "templates"),
                       autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)


def report_tables(metrics: Sequence[RunMetrics], by: Sequence[str], base_setting: str | None,
                  metric: str = "score") -> list[T.Table]:
    out = [T.score_table(metrics, base_setting)]
    out += [T.group_table(metrics, tag, base_setting, metric) for tag in by]
    out += [c for c in (T.chain_table(metrics, tag) for tag in by) if c is not None]
    out.append(T.tool_table(metrics, base_setting))
    out.append(T.share_table(metrics, "tool"))
    if any(m.tool_use.category_counts != m.tool_use.tool_counts for m in metrics):
        out.append(T.share_table(metrics, "category"))
    if any(m.tool_use.group_counts for m in metrics):
        out.append(T.share_table(metrics, "group"))
    agree = T.agreement_table(metrics)
    if agree is not None:
        out.append(agree)
    return out


def _warnings(metrics: Sequence[RunMetrics], by: Sequence[str], base_setting: str | None) -> list[str]:
    w: list[str] = []
    for tag in by:
        if not any(m.groups.get(tag) for m in metrics):
            w.append(f"no scored task has the tag '{tag}' (or it is not a built-in key such as turn_type)")
    for m in metrics:
        if m.n_records == 0:
            w.append(f"{m.run_dir} has no records")
        if m.n_unscored:
            w.append(f"{m.run_dir}: {m.n_unscored} record(s) carry no score (a task without a gold answer, or a "
                     "run with --no-score); they are left out of accuracy. To score them: `toolsight score` "
                     "and --scores NAME")
    if base_setting and not any(m.setting == base_setting for m in metrics):
        w.append(f"base setting '{base_setting}' is not among the runs' settings "
                 f"({', '.join(sorted({m.setting for m in metrics}))}); no deltas shown")
    return w


def _run_line(m: RunMetrics, md: bool = True) -> str:
    kinds = ", ".join(f"{k}: {v}" for k, v in m.error_kinds.items())
    errs = f"{m.n_errors} run error(s)" + (f" ({kinds})" if kinds else "")
    q = "`" if md else ""
    return (f"{q}{m.run_dir}{q} — {m.model} · {m.setting} · {m.benchmark}: {m.n_records} records, "
            f"{m.n_scored} scored, {errs}, {m.n_score_errors} score error(s); scores from {m.scores_source}")


def _markdown(metrics: Sequence[RunMetrics], tabs: list[T.Table], warnings: list[str],
              plots: list[Path], out_dir: Path | None) -> str:
    lines = ["# toolsight report", "", "Runs:", ""] + [f"- {_run_line(m)}" for m in metrics] + [""]
    lines += [f"> warning: {w}" for w in warnings]
    if warnings:
        lines.append("")
    for t in tabs:
        lines.append(T.to_markdown(t))
    if plots and out_dir is not None:
        lines += ["### Plots", ""]
        lines += [f"![{p.stem.replace('_', ' ')}]({p.name})" for p in plots]
        lines.append("")
    lines.append("**bold** = best, <u>underlined</u> = second best per column; (±x) = points vs the base setting.")
    return "\n".join(lines) + "\n"


def _html(metrics: Sequence[RunMetrics], tabs: list[T.Table], warnings: list[str],
          plots: list[Path], out_dir: Path | None) -> str:
    imgs: list[dict[str, str]] = []
    for p in plots:
        src = p.name if out_dir is not None else "data:image/png;base64," + base64.b64encode(p.read_bytes()).decode()
        imgs.append({"src": src, "alt": p.stem.replace("_", " ")})
    return _env().get_template("report.html.j2").render(
        runs=[_run_line(m, md=False) for m in metrics], warnings=warnings, tables=[T.to_html(t) for t in tabs], plots=imgs,
    )


def _csv(tabs: list[T.Table]) -> str:
    rows = [r for t in tabs for r in T.to_rows(t)]
    buf = io.StringIO()
    cols = ["table", "Model", "Setting", "column", "value", "lo", "hi", "delta", "mark"]
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: ("" if r.get(c) is None else r.get(c)) for c in cols})
    return buf.getvalue()


def _json(metrics: Sequence[RunMetrics], tabs: list[T.Table], warnings: list[str]) -> str:
    doc: dict[str, Any] = {
        "runs": [m.model_dump(mode="json") for m in metrics],
        "tables": {t.title: T.to_rows(t) for t in tabs},
        "warnings": warnings,
    }
    return json.dumps(doc, indent=2)


def build_report(
    run_dirs: Sequence[Path | str],
    by: Sequence[str] = (),
    fmt: str = "md",
    base_setting: str | None = None,
    out_dir: Path | str | None = None,
    scores: str | None = None,
    human_grades: Path | str | None = None,
    prices: PriceTable | None = None,
    metric: str = "score",
    plots: bool = True,
) -> str:
    """The report text. With `out_dir`: also writes report.<fmt>, the plots (PNG) and records.csv.

    Without `out_dir`, an HTML report embeds its plots; a markdown report has none.
    `metric` picks the grouped tables' number: 'score' (mean value) or 'pass_rate' (APR).
    """
    if fmt not in FORMATS:
        raise ReportError(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    if metric not in ("score", "pass_rate"):
        raise ReportError(f"metric {metric!r}: use 'score' or 'pass_rate'")
    if not run_dirs:
        raise ReportError("give at least one run directory")
    dirs = [Path(d) for d in run_dirs]
    for d in dirs:
        if not (d / "manifest.json").is_file():
            raise ReportError(f"{d} is not a run directory (no manifest.json)")
    out = Path(out_dir) if out_dir is not None else None
    sink: CsvSink | None = None
    if out is not None:  # records.csv is written in the same single pass as the metrics
        sink = CsvSink(out / "records.csv", BASE_COLUMNS + tag_columns(dirs))
    metrics: list[RunMetrics] = []
    try:
        for d in dirs:
            if sink is not None:
                sink.run_dir = d
            metrics.append(compute_run_metrics(d, by, scores, human_grades, prices, sink=sink))
    except BaseException:
        if sink is not None:
            sink.discard()  # never a truncated records.csv that looks complete
        raise
    if sink is not None:
        sink.close()
    tabs = report_tables(metrics, by, base_setting, metric)
    warnings = _warnings(metrics, by, base_setting)
    made: list[Path] = []
    tmp_dir: Path | None = None
    if plots and fmt in ("md", "html") and (out is not None or fmt == "html"):
        import tempfile

        target = out if out is not None else Path(tempfile.mkdtemp(prefix="toolsight-plots-"))
        tmp_dir = None if out is not None else target
        made = write_plots(metrics, target)
    try:
        if fmt == "md":
            text = _markdown(metrics, tabs, warnings, made, out)
        elif fmt == "html":
            text = _html(metrics, tabs, warnings, made, out)
        elif fmt == "json":
            text = _json(metrics, tabs, warnings)
        else:
            text = _csv(tabs)
    finally:
        if tmp_dir is not None:
            import shutil

            shutil.rmtree(tmp_dir, ignore_errors=True)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / f"report.{fmt}", text)
    return text


__all__ = ["FORMATS", "PLOTS", "ReportError", "build_report", "report_tables"]
