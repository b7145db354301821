"""The combined report of a sweep: the paper-style table (models × settings, per benchmark) first,
then the usual report over all of the sweep's runs (score with CIs, groups, tool use).

Per benchmark two pivot tables: the score of every model (rows) in every setting (columns), with
its 95% CI — over several epochs, the mean of the epochs' scores ± their standard deviation — and
the tool use in the same layout (TCR, calls per task, success rate). Runs that have not started
yet are listed as missing, so the report can be asked for while the sweep is still running.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolsight.engine.sweep import sweep_run_dirs
from toolsight.metrics.compute import RunMetrics, compute_run_metrics
from toolsight.report import tables as T
from toolsight.report.build import build_report


def _cell(ms: list[RunMetrics], pick: str) -> T.Cell:
    """One pivot cell from the runs of one (model, setting): one run, or the epochs of it."""
    if not ms:
        return T.Cell(None, "–")
    if pick == "score":
        if len(ms) == 1:
            e = ms[0].overall.score
            if e.value is None:
                return T.Cell(None, "–")
            text = T.pct(e.value)
            if e.lo is not None and e.hi is not None and e.n > 1:
                text += f" [{T.pct(e.lo)}–{T.pct(e.hi)}]"
            return T.Cell(e.value, text, lo=e.lo, hi=e.hi)
        vals = [m.overall.score.value for m in ms if m.overall.score.value is not None]
        if not vals:
            return T.Cell(None, "–")
        mean = statistics.fmean(vals)
        sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
        return T.Cell(mean, f"{T.pct(mean)} ± {T.pct(sd)} ({len(vals)} epochs)")
    if pick == "tcr":
        vals = [m.tool_use.proactivity.value for m in ms if m.tool_use.proactivity.value is not None]
        return T.Cell(statistics.fmean(vals), T.pct(statistics.fmean(vals))) if vals else T.Cell(None, "–")
    if pick == "volume":
        vals = [m.tool_use.volume.value for m in ms if m.tool_use.volume.value is not None]
        return T.Cell(statistics.fmean(vals), T.num(statistics.fmean(vals))) if vals else T.Cell(None, "–")
    vals = [m.tool_use.success_rate.value for m in ms if m.tool_use.success_rate.value is not None]
    return T.Cell(statistics.fmean(vals), T.pct(statistics.fmean(vals))) if vals else T.Cell(None, "–")


def pivot_tables(runs: Sequence[tuple[dict[str, Any], RunMetrics]]) -> list[T.Table]:
    """Per benchmark: score and tool use, models × settings (in plan order)."""
    out: list[T.Table] = []
    benches = list(dict.fromkeys(info["benchmark"] for info, _ in runs))
    for b in benches:
        mine = [(i, m) for i, m in runs if i["benchmark"] == b]
        models = list(dict.fromkeys(i["model"] for i, _ in mine))
        settings = list(dict.fromkeys(i["setting"] for i, _ in mine))

        def group(model: str, setting: str, rows: list[tuple[dict[str, Any], RunMetrics]] = mine) -> list[RunMetrics]:
            return [m for i, m in rows if i["model"] == model and i["setting"] == setting]

        score = T.Table(f"{b}: score by model × setting", ["Model"],
                        [T.Column(f"{s} · score % [95% CI]", 1, True) for s in settings],
                        note="One run per cell (the mean ± SD over epochs when the plan repeats runs); errors are "
                             "left out of the score, as in the Score table below.")
        tools = T.Table(f"{b}: tool use by model × setting", ["Model"],
                        [c for s in settings for c in (T.Column(f"{s} · TCR %", 0, True),
                                                        T.Column(f"{s} · calls/task"),
                                                        T.Column(f"{s} · success %", 1, True))],
                        note="TCR = tasks with ≥1 tool call; success = calls that did not fail.")
        for model in models:
            score.rows.append(([model], [_cell(group(model, s), "score") for s in settings]))
            tools.rows.append(([model], [_cell(group(model, s), k) for s in settings
                                         for k in ("tcr", "volume", "success")]))
        T._rank(score)
        T._rank(tools)
        out += [score, tools]
    return out


def build_sweep_report(sweep_dir: Path, fmt: str = "md", out_dir: Path | None = None) -> str:
    """The combined report of the sweep in `sweep_dir` (see the module docstring)."""
    entries = sweep_run_dirs(sweep_dir)
    present = [(info, d) for info, d in entries if (d / "manifest.json").is_file()]
    missing = [info["id"] for info, d in entries if not (d / "manifest.json").is_file()]
    if not present:
        from toolsight.report.build import ReportError

        raise ReportError(f"{sweep_dir}: no run of the sweep has started yet")
    metrics = [(info, compute_run_metrics(d)) for info, d in present]
    lead = pivot_tables(metrics)
    text = build_report([d for _, d in present], fmt=fmt, out_dir=out_dir, lead_tables=lead)
    if missing and fmt == "md":
        text = (f"> {len(missing)} run(s) of the sweep have not started: {', '.join(missing[:8])}"
                + (" …" if len(missing) > 8 else "") + "\n\n" + text)
    return text
