"""The trace viewer: a static HTML site (jinja2, no server needed) for browsing one run.

`build_viewer` streams the last record of each task once: each task gets its own page (the
conversation step by step, every tool call's code or arguments and output, each tool step's
input and output images side by side with click-to-zoom, the final answer, the gold answer, the
score with the judge's explanation), and the index has a run summary (accuracy and APR with 95%
CIs, tokens, cost, configuration) above a sortable, paginated, filterable task list (status, any
tag, free text; state kept in the URL hash, so a report can link to a filtered list). Images are
linked relatively when the site lives inside the run directory, copied into the site otherwise.
`serve` serves it on 127.0.0.1 (optional — the files open fine from disk) and, with `live=True`,
rebuilds it while the run is still writing records. Several runs side by side: `viewer_compare`.
Every model- or tool-supplied string reaches the page through jinja2's autoescape or the DOM's
`textContent` (the task list is built from JSON by script), never as markup.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, Template, select_autoescape

from toolsight.engine.store import artifact_files, read_manifest, safe_name
from toolsight.log.arguments import ArgumentsError, load_arguments
from toolsight.log.files import dict_key, iter_latest_records
from toolsight.log.record import Record
from toolsight.log.trajectory import ToolCallRecord
from toolsight.metrics.chain import task_chain
from toolsight.metrics.compute import RunMetrics, metrics_from_views
from toolsight.metrics.cost import PriceTable, cost_of
from toolsight.metrics.views import ScoreLite, TaskView, lite, load_scores, scores_path, view_of
from toolsight.models.base import ImagePart, Message, TextPart
from toolsight.report.export import gold_texts
from toolsight.report.viewer_serve import (
    DEFAULT_PORT,
    RecordsWatcher,
    ViewerError,
    make_site_server,
    write_live,
)
from toolsight.scoring.base import Score
from toolsight.tasks.schema import Task

if TYPE_CHECKING:  # served sites only (viewer_serve imports it when it serves)
    import http.server

INDEX = "index.html"


def _env() -> Environment:
    env = Environment(loader=PackageLoader("toolsight.report", "templates"),
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = lambda x: "–" if x is None else f"{100 * float(x):.1f}%"
    env.filters["num"] = lambda x: "–" if x is None else f"{int(x):,}"
    return env


def _load_tasks(run_dir: Path) -> dict[str, Task] | None:
    """The run's tasks for gold answers, or None when the dataset cannot be loaded."""
    try:
        from toolsight.engine.rescore import RescoreError, load_run_tasks
    except ImportError:
        return None
    try:
        return load_run_tasks(run_dir)
    except (RescoreError, OSError, ValueError):
        return None


def status_of(rec: Record, score: Score | ScoreLite | None) -> str:
    if rec.error is not None or (score is not None and score.error is not None):
        return "error"
    if score is None:
        return "unscored"
    passed = score.passed if score.passed is not None else (score.value or 0.0) >= 1.0 - 1e-9
    return "correct" if passed else "incorrect"


@dataclass
class _Images:
    """Turns artifact ids and image paths into URLs relative to a page."""

    run_dir: Path
    site: Path
    copy: bool
    copied: set[Path] = field(default_factory=set)
    prefix: str = ""  # a sub-folder per run when several runs copy into one site

    def url(self, src: Path, page_dir: Path, task_id: str) -> str | None:
        if not src.is_file():
            return None
        if self.copy:
            dest = self.site / "img" / self.prefix / safe_name(task_id) / src.name
            if dest not in self.copied:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
                self.copied.add(dest)
            src = dest
        # strings, not Paths: each Path interns its parts, and a 10,000-image site's stream of new
        # names grew the interpreter's interned-string table (~2 MB) at the end of `toolsight run`
        return os.path.relpath(os.path.realpath(src), os.path.realpath(page_dir)).replace(os.sep, "/")


def _short(text: str, n: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else "…" + text[-(n - 1):]


def _pretty_args(arguments: str) -> tuple[str | None, str]:
    """(code, the other arguments pretty-printed) — code is shown as its own block."""
    try:
        args = load_arguments(arguments) if arguments else {}
    except ArgumentsError:
        return None, arguments
    if not isinstance(args, dict):
        return None, json.dumps(args, indent=2, ensure_ascii=False)
    code = args.get("code") if isinstance(args.get("code"), str) else None
    rest = {k: v for k, v in args.items() if k != "code"} if code is not None else args
    return code, (json.dumps(rest, indent=2, ensure_ascii=False) if rest else "")


def _task_context(rec: Record, score: Score | None, task: Task | None, images: _Images,
                  page_dir: Path) -> dict[str, Any]:
    traj = rec.trajectory
    art_files = artifact_files(images.run_dir, rec)
    calls: dict[str, ToolCallRecord] = {c.id: c for c in traj.tool_calls}
    chain = task_chain(traj)
    effective = set(chain.effective_calls)

    def img(art_id: str | None, path: str | None = None) -> dict[str, str] | None:
        src: Path | None = None
        if art_id and art_id in art_files:
            src = art_files[art_id]
        elif path:
            src = Path(path)
        url = images.url(src, page_dir, rec.key) if src is not None else None
        return {"url": url, "id": art_id or (src.name if src else "")} if url else (
            {"url": "", "id": art_id or path or "?"})

    steps: list[dict[str, Any]] = []
    shown: set[str] = set()  # tool outputs already drawn under their tool result
    for m in traj.messages:
        step = _step(m, img, calls, effective)
        if step["result"] is not None:
            shown.update(i["id"] for i in [*step["result"]["produced"], *step["images"]])
        elif m.role == "user":
            again = [i for i in step["images"] if i["id"] in shown]
            step["images"] = [i for i in step["images"] if i["id"] not in shown]
            step["resent"] = [i["id"] for i in again]
        steps.append(step)
    gold = gold_texts(rec, task, "–")
    turns = []
    per_turn = score.turns if score is not None else []
    for i, t in enumerate(traj.turns):
        ts = per_turn[i] if i < len(per_turn) else (score if len(traj.turns) == 1 else None)
        tchain = chain.turns[i] if i < len(chain.turns) else None
        turns.append({
            "index": i, "response": t.response, "answer": t.answer, "stop_reason": t.stop_reason,
            "rounds": t.rounds, "tool_calls": t.tool_calls, "gold": gold[i] if i < len(gold) else "–",
            "score": ts, "chain": [calls[c].name for c in tchain.calls if c in calls] if tchain else [],
        })
    return {
        "rec": rec, "score": score, "status": status_of(rec, score), "steps": steps, "turns": turns,
        "gold": gold, "effective": [calls[c].name for c in chain.effective_calls if c in calls],
        "details": json.dumps(score.details, indent=2, ensure_ascii=False, default=str) if score and score.details
        else "",
        "usage": traj.usage,
        "rubrics": _rubric_rows(score),
    }


def _rubric_rows(score: Score | None) -> list[dict[str, Any]]:
    """The rubric scorer's per-rubric rows (task level, else per turn), for a verdict table."""
    if score is None:
        return []
    rows: list[dict[str, Any]] = []
    sources = [(None, score.details)] + [(i, t.details) for i, t in enumerate(score.turns)]
    for turn, details in sources:
        raw = details.get("rubrics")
        if isinstance(raw, list) and raw:
            for r in raw:
                if isinstance(r, dict):
                    rows.append({"turn": r.get("turn", turn), **r})
            if turn is None:
                break
    return rows


def _step(m: Message, img: Any, calls: Mapping[str, ToolCallRecord], effective: set[str]) -> dict[str, Any]:
    texts = [p.text for p in m.content if isinstance(p, TextPart) and p.text]
    imgs = [img(p.artifact_id, p.path) for p in m.content if isinstance(p, ImagePart)]
    step: dict[str, Any] = {"role": m.role, "text": "\n".join(texts), "images": imgs, "reasoning": m.reasoning,
                            "calls": [], "result": None, "resent": []}
    for tc in m.tool_calls:
        code, args = _pretty_args(tc.arguments)
        step["calls"].append({"id": tc.id, "name": tc.name, "code": code, "args": args,
                              "effective": tc.id in effective})
    if m.role == "tool" and m.tool_call_id and m.tool_call_id in calls:
        c = calls[m.tool_call_id]
        in_msg = {i["id"] for i in imgs}
        produced = [img(a) for a in c.artifacts if a not in in_msg]
        if c.error and c.error in step["text"]:
            # a failed tool's text usually *is* its error: show it once, in the error line
            step["text"] = step["text"].replace(c.error, "", 1).strip()
        step["result"] = {"name": c.name, "ok": c.ok, "error": c.error, "duration": c.duration_s,
                          "produced": produced, "effective": c.id in effective,
                          "inputs": [img(a) for a in c.inputs]}
    return step


def _score_table(rd: Path, scores: str | None) -> dict[str, Any] | None:
    """task id -> raw score dict from a scores file (validated with a clear message), or None."""
    if not scores:
        return None
    load_scores(rd, scores)  # validates the file with a clear message
    table: dict[str, Any] = {}
    with scores_path(rd, scores).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                table[dict_key(d)] = d.get("score")  # one line per task (and epoch)
    return table


def record_score(rec: Record, table: Mapping[str, Any] | None) -> Score | None:
    """The score to show: the scores file's when one is given, else the record's own."""
    if table is None:
        return rec.score
    raw = table.get(rec.key)
    return Score.model_validate(raw) if raw is not None else None


def task_row(rec: Record, score: Score | None, ctx: Mapping[str, Any], href: str) -> dict[str, Any]:
    """One task-list row (plain JSON: the index builds its table from these with textContent)."""
    last = rec.trajectory.turns[-1] if rec.trajectory.turns else None
    answer = last.answer if last and last.answer is not None else (last.response if last else "")
    tags = dict(rec.tags)
    tags.setdefault("turn_type", "multi" if len(ctx["gold"]) > 1 else "single")
    u = rec.trajectory.usage
    error = rec.error or (score.error if score else None) or ""
    row: dict[str, Any] = {
        "id": rec.key, "href": href, "status": ctx["status"],
        "value": score.value if score is not None and score.error is None and rec.error is None else None,
        "answer": _clip(answer), "gold": _clip(" | ".join(ctx["gold"])), "calls": len(rec.trajectory.tool_calls),
        "tokens": u.input_tokens + u.output_tokens, "duration": round(rec.duration_s, 2),
        "stop": rec.trajectory.stop_reason, "error": _clip(error), "tags": tags,
    }
    row["text"] = " ".join([rec.task_id, row["answer"], row["gold"], row["error"]]).lower()
    return row


def _clip(text: str, n: int = 600) -> str:
    """A list cell's text (the task page has the full text): keeps a 10,000-task index small."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def task_cost(v: TaskView, prices: PriceTable | None) -> float | None:
    """What one task cost (its model and judge calls), None without a price for any of its calls."""
    if not prices:
        return None
    c = cost_of(v.billed, prices)
    return round(c.cost_usd, 6) if c.priced_calls else None


def run_summary(m: RunMetrics, manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The index's summary: accuracy / APR with CIs, counts, tokens, cost, and the configuration."""
    opts = manifest.get("options") or {}
    ds = manifest.get("dataset") or {}
    config = {
        "benchmark": manifest.get("benchmark"), "setting": manifest.get("setting"), "model": manifest.get("model"),
        "judge": manifest.get("judge"), "created": manifest.get("created"), "run id": manifest.get("run_id"),
        "toolsight": manifest.get("toolsight_version"),
        "dataset": f"{ds.get('path', '')} ({ds.get('n_tasks', '?')} tasks, hash {str(ds.get('hash', ''))[:12]})",
        "tools": ", ".join(str(t.get("name")) for t in manifest.get("tools") or [] if isinstance(t, dict)) or "none",
        "generate": _compact(opts.get("generate")), "caps": _compact(opts.get("caps")),
        "scorer mode": opts.get("scorer_mode"),
    }
    u = m.usage
    return {
        "score": m.overall.score, "apr": m.overall.pass_rate, "n_records": m.n_records, "n_scored": m.n_scored,
        "n_errors": m.n_errors, "n_score_errors": m.n_score_errors, "n_unscored": m.n_unscored,
        "input_tokens": u.input_tokens, "output_tokens": u.output_tokens, "tokens_per_task": u.tokens_per_task,
        "cost": u.cost_usd, "cost_per_task": u.cost_per_task_usd, "tcr": m.tool_use.proactivity.value,
        "list_cost": u.list_cost_usd, "cache_saving": u.cache_saving_usd, "batch_saving": u.batch_saving_usd,
        "judge_cost": u.judge_cost_usd, "unpriced": u.unpriced_models,
        "calls_per_task": m.tool_use.volume.value,
        "config": {k: v for k, v in config.items() if v not in (None, "", {})},
        "manifest": json.dumps(manifest, indent=2, ensure_ascii=False, default=str),
    }


def _compact(x: Any) -> str:
    if not x:
        return ""
    if isinstance(x, dict):
        return ", ".join(f"{k}={v}" for k, v in x.items() if v is not None)
    return str(x)


def build_viewer(
    run_dir: Path | str,
    out: Path | str | None = None,
    scores: str | None = None,
    copy_images: bool | None = None,
    tasks: Mapping[str, Task] | None = None,
    prices: PriceTable | None = None,
) -> Path:
    """Write the site (default `RUN_DIR/viewer/`) and return the path of its index.html.

    `scores` shows a re-scored file instead of the records' scores. `copy_images` defaults to
    False when the site is inside the run directory (relative links) and True otherwise.
    `prices` (a price table) adds cost to the summary.
    """
    rd = Path(run_dir)
    manifest = read_manifest(rd).model_dump(mode="json")
    site = Path(out) if out is not None else rd / "viewer"
    site.mkdir(parents=True, exist_ok=True)
    inside = site.resolve().is_relative_to(rd.resolve())
    images = _Images(rd, site, copy=(not inside) if copy_images is None else copy_images)
    env = _env()  # both templates compiled first, while little else is held (compiling one takes ~1 MB)
    page_tpl, index_tpl = env.get_template("task.html.j2"), env.get_template("index.html.j2")
    task_map = tasks if tasks is not None else _load_tasks(rd)
    score_table = _score_table(rd, scores)
    pages = site / "tasks"
    pages.mkdir(exist_ok=True)
    rows: list[dict[str, Any]] = []
    tag_values: dict[str, set[str]] = {}

    def views() -> Iterator[TaskView]:
        """Each record's view, for the metrics as they stream; its page and row are made on the way
        (no list of views, no whole page held: the end of `toolsight run` stays under the run's peak)."""
        nonlocal task_map, score_table
        pending: tuple[str, dict[str, Any], str | None] | None = None
        for rec in iter_latest_records(rd):  # a resumed run may hold an older record of a task: skip it
            score = record_score(rec, score_table)
            task = task_map.get(rec.task_id) if task_map is not None else None
            name = f"{safe_name(rec.key)}.html"  # one page per task (and epoch, with --epochs)
            ctx = _task_context(rec, score, task, images, pages)
            view = view_of(rec, lite(score), task)
            # pages are written one record late, so each knows its next task (one context held at a time)
            if pending is not None:
                pname, pctx, prev_name = pending
                write_page(pages / pname, page_tpl, manifest=manifest, prev=prev_name, next=name, **pctx)
                pending = (name, ctx, pname)
            else:
                pending = (name, ctx, None)
            row = task_row(rec, score, ctx, f"tasks/{name}")
            row["cost"] = task_cost(view, prices)
            for k, v in row["tags"].items():
                tag_values.setdefault(k, set()).add(v)
            rows.append(row)
            yield view
        if pending is not None:
            pname, pctx, prev_name = pending
            write_page(pages / pname, page_tpl, manifest=manifest, prev=prev_name, next=None, **pctx)
        task_map = score_table = None  # every page is written: freed before the metrics' bootstrap

    metrics = metrics_from_views(views(), prices=prices, run_dir=rd)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    index = site / INDEX
    tmp = site / (INDEX + ".tmp")
    write_page(tmp, index_tpl,
               manifest=manifest, rows=rows, counts=counts, scores=scores or "records",
               tags={k: sorted(v) for k, v in sorted(tag_values.items())}, summary=run_summary(metrics, manifest))
    tmp.replace(index)  # a live page never loads half an index
    write_live(site, [rd], len(rows), finished=bool(manifest.get("finished")))
    return index


def write_page(path: Path, template: Template, **context: Any) -> None:
    """Render `template` into `path` piece by piece (the same bytes as writing its `render`, without
    holding the whole page)."""
    with path.open("w", encoding="utf-8") as fh:
        for piece in template.generate(**context):
            fh.write(piece)


def _site_root(directory: Path) -> tuple[Path, str]:
    """The folder to serve (the run dir when the site is inside one, so linked images resolve;
    never more than that) and the index URL path."""
    d = directory.resolve()
    for parent in [d, *d.parents]:
        if (parent / "manifest.json").is_file():
            return parent, Path(os.path.relpath(d / INDEX, parent)).as_posix()
    return d, INDEX


def make_server(path: Path | str, port: int = DEFAULT_PORT) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A 127.0.0.1 HTTP server for a site folder (or a run dir: builds its viewer); returns it and the URL.

    A taken port raises `ViewerError` with one line naming the port and the fix.
    """
    p = Path(path)
    if (p / "manifest.json").is_file() and not (p / INDEX).is_file():
        p = build_viewer(p).parent
    root, index = _site_root(p)
    server = make_site_server(root, port, index)
    return server, f"http://127.0.0.1:{server.server_address[1]}/{index}"


def serve(path: Path | str, port: int = DEFAULT_PORT, background: bool = False,
          rebuild: Any = None, watch: Sequence[Path] = ()) -> http.server.ThreadingHTTPServer:
    """Serve a viewer site on 127.0.0.1:`port` (blocks unless `background`).

    With `rebuild` (a no-argument callable) and `watch` (run directories), the site is rebuilt
    whenever a watched records.jsonl changes, and open index pages reload themselves.
    """
    server, url = make_server(path, port)
    watcher = RecordsWatcher(watch, rebuild).start() if rebuild is not None and watch else None
    live = " · live: rebuilds as records arrive" if watcher is not None else ""
    print(f"serving {url} (Ctrl-C to stop){live}", flush=True)
    if background:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        if watcher is not None:
            watcher.stop()
        server.server_close()
    return server


__all__ = ["DEFAULT_PORT", "INDEX", "ViewerError", "build_viewer", "make_server", "serve"]
