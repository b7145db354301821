"""`build_report`: the papers' tables (and plots) for one or more runs, as md, html, json or csv."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, select_autoescape

from toolsight.errors import ToolsightError
from toolsight.log.files import atomic_write_text, read_manifest
from toolsight.metrics.compute import RunMetrics, compute_run_metrics
from toolsight.metrics.cost import PriceTable
from toolsight.metrics.views import TaskView
from toolsight.report import tables as T
from toolsight.report.export import BASE_COLUMNS, CsvSink, tag_columns
from toolsight.report.plots import PLOTS, write_plots
from toolsight.report.safe import csv_cell
from toolsight.tools.operations import Vocabulary

FORMATS = ("md", "html", "json", "csv")


class ReportError(ToolsightError, ValueError):
    """A report request that cannot be built (bad format, base setting, ...): one clear message."""


def _env() -> Environment:
    return Environment(loader=PackageLoader("toolsight.report", "templates"),
                       autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)


def declared_tables(benchmarks: Sequence[str]) -> list[tuple[str, str]]:
    """The (tag, metric) tables the runs' benchmarks show by default (their papers' tables), in order."""
    from toolsight.benchmarks.registry import report_tables as declared

    out: list[tuple[str, str]] = []
    for name in dict.fromkeys(benchmarks):
        out.extend(p for p in declared(name) if p not in out)
    return out


def declared_vocabularies(benchmarks: Sequence[str]) -> list[Vocabulary]:
    """The image-operation vocabularies the benchmarks declare, each once (by name), in order."""
    from toolsight.benchmarks.registry import vocabularies

    out: dict[str, Vocabulary] = {}
    for name in dict.fromkeys(benchmarks):
        for v in vocabularies(name):
            out.setdefault(v.name, v)
    return list(out.values())


def report_tables(metrics: Sequence[RunMetrics], by: Sequence[str], base_setting: str | None,
                  metric: str = "score", layout: Sequence[tuple[str, str]] = ()) -> list[T.Table]:
    """The tables: by the user's --by tags, or (without --by) the benchmarks' declared `layout`.

    Tool tables (tool use, shares, operations, chain lengths, tool use by group) show only the runs
    whose setting offered tools, and are left out when no run did."""
    out = [T.score_table(metrics, base_setting)]
    epochs = T.epochs_table(metrics)
    if epochs is not None:
        out.append(epochs)
    tooled = [i for i, m in enumerate(metrics) if m.has_tools]
    with_tools = [metrics[i] for i in tooled]

    def tool_tables(*tables: T.Table | None) -> None:
        for t in tables:
            if t is None:
                continue
            _only_runs(t, metrics, tooled)
            out.append(t)

    if by or not layout:
        out += [T.group_table(metrics, tag, base_setting, metric) for tag in by]
        if with_tools:
            tool_tables(*(T.chain_table(with_tools, tag) for tag in by))
    else:
        for tag, kind in layout:
            if kind != "tool_use":
                out.append(T.group_table(metrics, tag, base_setting, kind))
            elif with_tools:
                tool_tables(T.tool_group_table(with_tools, tag))
    if with_tools:
        tool_tables(T.tool_table(with_tools, base_setting), T.share_table(with_tools))
        for vocabulary in declared_vocabularies([m.benchmark for m in with_tools]):
            tool_tables(T.operation_table(with_tools, vocabulary))
    agree = T.agreement_table(metrics)
    if agree is not None:
        out.append(agree)
    cost = T.cost_table(metrics)
    if cost is not None:
        out.append(cost)
    errs = T.error_category_table(metrics)
    if errs is not None:
        out.append(errs)
    return out


def _only_runs(t: T.Table, metrics: Sequence[RunMetrics], kept: list[int]) -> None:
    """Mark a table built over some of the runs: which rows they are, and a note naming the others."""
    if len(kept) == len(metrics):
        return
    t.run_rows = list(kept)
    left = [metrics[i].label for i in range(len(metrics)) if i not in kept]
    t.note = (t.note + " " if t.note else "") + f"Not shown (no tools offered): {', '.join(left)}."


def _viewer_url(run_dir: str, out_dir: Path | None) -> str:
    """Where `toolsight view RUN` writes the run's index: relative to the report when it is
    written to a folder, else an absolute file URL."""
    index = Path(run_dir).resolve() / "viewer" / "index.html"
    if out_dir is not None:
        return Path(os.path.relpath(index, out_dir.resolve())).as_posix()
    return index.as_uri()


def _link_rows(tabs: list[T.Table], metrics: Sequence[RunMetrics], out_dir: Path | None) -> None:
    """Link each run row to its trace viewer; a group column to the list filtered by that group,
    the Errors column to the run's errors (the viewer keeps filters in the URL hash)."""
    for t in tabs:
        runs = t.run_rows if t.run_rows is not None else range(len(metrics))
        for r, i in enumerate(runs):
            m = metrics[i]
            base = _viewer_url(m.run_dir, out_dir)
            t.links[(r, -1)] = base
            for ci, col in enumerate(t.columns):
                query: dict[str, str] = {}
                if t.title == "Score" and col.name == "Errors":
                    query = {"status": "error"}
                elif t.group_key is not None and col.name != "Overall":
                    keys = [k.strip() for k in t.group_key.split("+")]
                    vals = col.name.split(" / ") if len(keys) > 1 else [col.name]
                    if len(vals) == len(keys):
                        query = dict(zip(keys, vals, strict=True))
                if query:
                    t.links[(r, ci)] = base + "#" + urlencode(query, quote_via=quote)


def unknown_key(metrics: Sequence[RunMetrics], by: Sequence[str]) -> str | None:
    """Why a --by key groups nothing: no task of any run carries it (naming the closest key and the
    keys the runs have), or None. Runs without records say nothing about their keys: never refused."""
    import difflib

    from toolsight.metrics.views import BUILTIN_KEYS

    if not any(m.n_records for m in metrics):
        return None
    have = sorted({k for m in metrics for k in m.tag_keys})
    known = {*have, *BUILTIN_KEYS, "turns"}
    for key in by:
        if key in known:
            continue
        for part in (k.strip() for k in key.split("+")):
            if part in known:
                continue
            close = difflib.get_close_matches(part, [*have, *BUILTIN_KEYS], n=1, cutoff=0.5)
            hint = f"did you mean {close[0]!r}? " if close else ""
            return (f"--by {key}: no task of the run(s) has the key {part!r}; {hint}the runs' keys: "
                    f"{', '.join(have) or 'none'} (built in: {', '.join(BUILTIN_KEYS)})")
    return None


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


def _code(text: str) -> str:
    """A markdown code span that survives backticks in the text (a fence longer than any run in it)."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _run_line(m: RunMetrics, md: bool = True) -> str:
    kinds = ", ".join(f"{k}: {v}" for k, v in m.error_kinds.items())
    errs = f"{m.n_errors} run error(s)" + (f" ({kinds})" if kinds else "")
    e = T.md_escape if md else str  # HTML is escaped by the template
    return (f"{_code(m.run_dir) if md else m.run_dir} — {e(m.model)} · {e(m.setting)} · {e(m.benchmark)}: {m.n_records} records, "
            f"{m.n_scored} scored, {errs}, {m.n_score_errors} score error(s); scores from {e(m.scores_source)}")


def _markdown(metrics: Sequence[RunMetrics], tabs: list[T.Table], warnings: list[str],
              plots: list[Path], out_dir: Path | None) -> str:
    lines = ["# toolsight report", "", "Runs:", ""] + [f"- {_run_line(m)}" for m in metrics] + [""]
    lines += [f"> warning: {T.md_escape(w)}" for w in warnings]
    if warnings:
        lines.append("")
    for t in tabs:
        lines.append(T.to_markdown(t))
    if plots and out_dir is not None:
        lines += ["### Plots", ""]
        lines += [f"![{p.stem.replace('_', ' ')}]({p.name})" for p in plots]
        lines.append("")
    lines.append("**bold** = best, <u>underlined</u> = second best per column (a tie is not marked); "
                 "(±x) = points vs the base setting.")
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
        w.writerow({c: csv_cell(r.get(c)) for c in cols})
    return buf.getvalue()


def _json(metrics: Sequence[RunMetrics], tabs: list[T.Table], warnings: list[str], plots: list[Path]) -> str:
    doc: dict[str, Any] = {
        "runs": [m.model_dump(mode="json") for m in metrics],
        "tables": {t.title: T.to_rows(t) for t in tabs},
        "warnings": warnings,
        "plots": [p.name for p in plots],
    }
    return json.dumps(doc, indent=2)


def _default_tags(dirs: Sequence[Path]) -> list[str]:
    from toolsight.benchmarks.registry import report_tags

    tags: list[str] = []
    for d in dirs:
        for t in report_tags(read_manifest(d).benchmark):
            if t not in tags:
                tags.append(t)
    return tags


def _split_rows(m: RunMetrics, d: Path, by: Sequence[str], scores: str | None,
                human_grades: Path | str | None, prices: PriceTable | None,
                vocabularies: Sequence[Vocabulary]) -> list[RunMetrics]:
    """One row per value of the benchmark's row tag (e.g. PhysToolBench `both`: cot / no-cot), else `m`."""
    from toolsight.benchmarks.registry import row_tag

    tag = row_tag(m.benchmark)
    if not tag:
        return [m]
    values = sorted(compute_run_metrics(d, [tag], scores, resamples=1).groups.get(tag, {}))
    if len(values) < 2:
        return [m]
    rows: list[RunMetrics] = []
    for v in values:
        def keep(x: TaskView, value: str = v) -> bool:
            return x.tags.get(str(tag)) == value

        part = compute_run_metrics(d, by, scores, human_grades, prices, where=keep, vocabularies=vocabularies)
        part.setting = f"{m.setting}:{v}"
        rows.append(part)
    return rows


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
    lead_tables: Sequence[T.Table] = (),
) -> str:
    """The report text. With `out_dir`: also writes report.<fmt>, the plots (PNG) and records.csv.

    Without `by`, the tables group by the tags the runs' benchmarks declare (`Benchmark.report_tags`);
    a benchmark's `row_tag` splits one run into one row per value (e.g. PhysToolBench `both`).

    Without `out_dir`, an HTML report embeds its plots; a markdown report has none.
    `metric` picks the grouped tables' number: 'score' (mean value) or 'pass_rate' (APR).
    `lead_tables` come first (a sweep's models × settings tables, toolsight.report.sweep).
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
    asked = list(by)  # the user's --by keys (checked against the runs' keys below)
    layout: list[tuple[str, str]] = []
    if not by:  # no --by: the benchmarks' own tables (e.g. VisualToolBench's APR by turn type x domain)
        layout = declared_tables([read_manifest(d).benchmark for d in dirs])
        by = list(dict.fromkeys(tag for tag, _ in layout))
    sink: CsvSink | None = None
    if out is not None:  # records.csv is written in the same single pass as the metrics
        sink = CsvSink(out / "records.csv", BASE_COLUMNS + tag_columns(dirs))
    metrics: list[RunMetrics] = []
    if not by:  # the benchmarks' own table layout (their papers' groupings)
        by = _default_tags(dirs)
    try:
        for d in dirs:
            if sink is not None:
                sink.run_dir = d
            vocabularies = declared_vocabularies([read_manifest(d).benchmark])
            m = compute_run_metrics(d, by, scores, human_grades, prices, sink=sink, vocabularies=vocabularies)
            metrics.extend(_split_rows(m, d, by, scores, human_grades, prices, vocabularies))
        problem = unknown_key(metrics, asked)
        if problem is not None:  # a typo in --by: say so, not an empty table
            raise ReportError(problem)
    except BaseException:
        if sink is not None:
            sink.discard()  # never a truncated records.csv that looks complete
        raise
    if sink is not None:
        sink.close()
    tabs = report_tables(metrics, [] if layout else by, base_setting, metric, layout)
    if fmt == "html":
        _link_rows(tabs, metrics, out)
    tabs = [*lead_tables, *tabs]
    warnings = _warnings(metrics, [] if layout else by, base_setting)
    made: list[Path] = []
    tmp_dir: Path | None = None
    # with --out every format gets its plots (docs/reports.md); without, only HTML can embed them
    if plots and (out is not None or fmt == "html"):
        import tempfile

        target = out if out is not None else Path(tempfile.mkdtemp(prefix="toolsight-plots-"))
        tmp_dir = None if out is not None else target
        made = write_plots([m for m in metrics if m.has_tools], target)
    try:
        if fmt == "md":
            text = _markdown(metrics, tabs, warnings, made, out)
        elif fmt == "html":
            text = _html(metrics, tabs, warnings, made, out)
        elif fmt == "json":
            text = _json(metrics, tabs, warnings, made)
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
