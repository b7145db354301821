"""The multi-run viewer (`toolsight view RUN_A RUN_B …`): the same task side by side across runs.

The index has one summary card per run (score and APR with 95% CIs, errors, tokens) and one task
list over the union of the runs' tasks, with each run's status, score and answer in its own
columns; filters per run's status, "runs agree / differ", any tag and free text; sorting and
pages as in the single-run viewer. Each task's page puts every run's answer, score and whole
conversation in its own column. Records are read by offset (`latest_offsets`), so only one
task's records are in memory at a time, and a resumed run's superseded records are skipped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolsight.engine.store import read_manifest, safe_name
from toolsight.log.files import latest_offsets, read_record_at
from toolsight.metrics.compute import metrics_from_views
from toolsight.metrics.cost import PriceTable
from toolsight.metrics.views import TaskView, lite, view_of
from toolsight.report.viewer import (
    INDEX,
    _env,
    _Images,
    _load_tasks,
    _score_table,
    _task_context,
    record_score,
    run_summary,
    task_row,
)
from toolsight.report.viewer_serve import ViewerError, write_live


def _labels(manifests: Sequence[dict[str, Any]], dirs: Sequence[Path]) -> list[str]:
    """'model · setting', with the run folder's name added where two runs would read the same."""
    base = [f"{m.get('model', '')} · {m.get('setting', '')}" for m in manifests]
    return [b if base.count(b) == 1 else f"{b} ({d.name})" for b, d in zip(base, dirs, strict=True)]


def default_site(dirs: Sequence[Path]) -> Path:
    """`compare-A--B[--…]` in the folder that holds the runs (their common parent)."""
    parent = Path(os.path.commonpath([str(d.resolve().parent) for d in dirs]))
    return parent / ("compare-" + "--".join(d.resolve().name for d in dirs))


def build_compare(
    run_dirs: Sequence[Path | str],
    out: Path | str | None = None,
    scores: str | None = None,
    prices: PriceTable | None = None,
) -> Path:
    """Write the comparison site (default `PARENT/compare-A--B/` beside the runs, never inside one of
    them); return its index.html."""
    dirs = [Path(d) for d in run_dirs]
    if len(dirs) < 2:
        raise ViewerError("comparing needs at least two run directories")
    if len({d.resolve() for d in dirs}) != len(dirs):
        raise ViewerError("the same run directory is given twice; give different runs to compare")
    manifests = [read_manifest(d).model_dump(mode="json") for d in dirs]
    labels = _labels(manifests, dirs)
    site = Path(out) if out is not None else default_site(dirs)
    pages = site / "tasks"
    pages.mkdir(parents=True, exist_ok=True)
    images = [_Images(d, site, copy=not site.resolve().is_relative_to(d.resolve()), prefix=f"run{i}")
              for i, d in enumerate(dirs)]
    tables = [_score_table(d, scores) for d in dirs]
    task_maps = [_load_tasks(d) for d in dirs]
    offsets = [latest_offsets(d) for d in dirs]
    ids: list[str] = list(dict.fromkeys(tid for off in offsets for tid in off))
    env = _env()
    page_tpl = env.get_template("compare_task.html.j2")
    views: list[list[TaskView]] = [[] for _ in dirs]
    rows: list[dict[str, Any]] = []
    tag_values: dict[str, set[str]] = {}
    names = [f"{safe_name(t)}.html" for t in ids]
    for k, tid in enumerate(ids):
        columns: list[dict[str, Any] | None] = []
        row: dict[str, Any] = {"id": tid, "href": f"tasks/{names[k]}", "tags": {}, "gold": "", "text": tid.lower()}
        statuses: list[str] = []
        for i, d in enumerate(dirs):
            off = offsets[i].get(tid)
            rec = read_record_at(d, off) if off is not None else None
            if rec is None:
                columns.append(None)
                row[f"s{i}"] = "missing"
                statuses.append("missing")
                continue
            task_map = task_maps[i]
            task = task_map.get(rec.task_id) if task_map is not None else None
            score = record_score(rec, tables[i])
            ctx = _task_context(rec, score, task, images[i], pages)
            views[i].append(view_of(rec, lite(score), task))
            one = task_row(rec, score, ctx, "")
            row.update({f"s{i}": one["status"], f"v{i}": one["value"], f"a{i}": one["answer"],
                        f"c{i}": one["calls"], f"t{i}": one["tokens"]})
            row["text"] += " " + one["text"]
            if not row["tags"]:
                row["tags"], row["gold"] = one["tags"], one["gold"]
            statuses.append(one["status"])
            columns.append({"label": labels[i], **ctx})
        row["agree"] = "same" if len(set(statuses)) == 1 else "differ"
        for key, v in row["tags"].items():
            tag_values.setdefault(key, set()).add(v)
        rows.append(row)
        (pages / names[k]).write_text(page_tpl.render(
            task_id=tid, runs=columns, labels=labels, gold=row["gold"],
            prev=names[k - 1] if k > 0 else None, next=names[k + 1] if k + 1 < len(ids) else None,
        ), encoding="utf-8")
    summaries = [run_summary(metrics_from_views(v, prices=prices, run_dir=d), m)
                 for v, d, m in zip(views, dirs, manifests, strict=True)]
    index = site / INDEX
    tmp = site / (INDEX + ".tmp")
    tmp.write_text(env.get_template("compare_index.html.j2").render(
        labels=labels, dirs=[str(d) for d in dirs], summaries=summaries, rows=rows, scores=scores or "records",
        tags={k: sorted(v) for k, v in sorted(tag_values.items())},
        differ=sum(1 for r in rows if r["agree"] == "differ"),
    ), encoding="utf-8")
    tmp.replace(index)
    write_live(site, dirs, len(rows), finished=False)
    return index
