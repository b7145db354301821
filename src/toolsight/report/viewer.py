"""The trace viewer: a static HTML site (jinja2, no server needed) for browsing one run.

`build_viewer` streams the records once: each task gets its own page (the conversation step by
step, every tool call's code or arguments and output, the images inline, the final answer, the
gold answer, the score with the judge's explanation), and the index lists every task with
filters (correct / incorrect / error, any tag, free text). Images are linked relatively when the
site lives inside the run directory, copied into the site otherwise. `serve` serves it on
127.0.0.1 (optional — the files open fine from disk).
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from toolsight.agents.trajectory import ToolCallRecord
from toolsight.log.files import iter_latest_records
from toolsight.metrics.chain import task_chain
from toolsight.metrics.views import ScoreLite, load_scores, scores_path
from toolsight.models.base import ImagePart, Message, TextPart
from toolsight.record import Record
from toolsight.scoring.base import Score
from toolsight.store import artifact_dir, read_manifest, safe_name
from toolsight.tasks.schema import Task

INDEX = "index.html"


def _env() -> Environment:
    env = Environment(loader=PackageLoader("toolsight.report", "templates"),
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = lambda x: "–" if x is None else f"{100 * float(x):.1f}%"
    return env


def _load_tasks(run_dir: Path) -> dict[str, Task] | None:
    """The run's tasks for gold answers, or None when the dataset cannot be loaded."""
    try:
        from toolsight.rescore import RescoreError, load_run_tasks
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

    def url(self, src: Path, page_dir: Path, task_id: str) -> str | None:
        if not src.is_file():
            return None
        if self.copy:
            dest = self.site / "img" / safe_name(task_id) / src.name
            if dest not in self.copied:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
                self.copied.add(dest)
            src = dest
        return Path(os.path.relpath(src.resolve(), page_dir.resolve())).as_posix()


def _short(text: str, n: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else "…" + text[-(n - 1):]


def _pretty_args(arguments: str) -> tuple[str | None, str]:
    """(code, the other arguments pretty-printed) — code is shown as its own block."""
    try:
        args = json.loads(arguments) if arguments else {}
    except ValueError:
        return None, arguments
    if not isinstance(args, dict):
        return None, json.dumps(args, indent=2, ensure_ascii=False)
    code = args.get("code") if isinstance(args.get("code"), str) else None
    rest = {k: v for k, v in args.items() if k != "code"} if code is not None else args
    return code, (json.dumps(rest, indent=2, ensure_ascii=False) if rest else "")


def _gold(rec: Record, task: Task | None) -> list[str]:
    raw: list[Any]
    if task is not None:
        raw = [t.answer for t in task.turns]
    else:
        g = rec.extra.get("gold")
        raw = g if isinstance(g, list) else ([] if g is None else [g])
    return ["–" if a is None else (", ".join(map(str, a)) if isinstance(a, list) else str(a)) for a in raw]


def _task_context(rec: Record, score: Score | None, task: Task | None, images: _Images,
                  page_dir: Path) -> dict[str, Any]:
    traj = rec.trajectory
    art_files = {a.id: a.file for a in traj.artifacts}
    adir = artifact_dir(images.run_dir, rec.task_id)
    calls: dict[str, ToolCallRecord] = {c.id: c for c in traj.tool_calls}
    chain = task_chain(traj)
    effective = set(chain.effective_calls)

    def img(art_id: str | None, path: str | None = None) -> dict[str, str] | None:
        src: Path | None = None
        if art_id and art_id in art_files:
            src = adir / art_files[art_id]
        elif path:
            src = Path(path)
        url = images.url(src, page_dir, rec.task_id) if src is not None else None
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
    gold = _gold(rec, task)
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
        step["result"] = {"name": c.name, "ok": c.ok, "error": c.error, "duration": c.duration_s,
                          "produced": produced, "effective": c.id in effective}
    return step


def build_viewer(
    run_dir: Path | str,
    out: Path | str | None = None,
    scores: str | None = None,
    copy_images: bool | None = None,
    tasks: Mapping[str, Task] | None = None,
) -> Path:
    """Write the site (default `RUN_DIR/viewer/`) and return the path of its index.html.

    `scores` shows a re-scored file instead of the records' scores. `copy_images` defaults to
    False when the site is inside the run directory (relative links) and True otherwise.
    """
    rd = Path(run_dir)
    manifest = read_manifest(rd).model_dump(mode="json")
    site = Path(out) if out is not None else rd / "viewer"
    site.mkdir(parents=True, exist_ok=True)
    inside = site.resolve().is_relative_to(rd.resolve())
    images = _Images(rd, site, copy=(not inside) if copy_images is None else copy_images)
    task_map = tasks if tasks is not None else _load_tasks(rd)
    score_table: dict[str, Any] | None = None
    if scores:
        load_scores(rd, scores)  # validates the file with a clear message
        score_table = {}
        with scores_path(rd, scores).open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    d = json.loads(line)
                    score_table[str(d["task_id"])] = d.get("score")
    env = _env()
    page_tpl = env.get_template("task.html.j2")
    pages = site / "tasks"
    pages.mkdir(exist_ok=True)
    rows: list[dict[str, Any]] = []
    tag_values: dict[str, set[str]] = {}
    pending: tuple[str, dict[str, Any], str | None] | None = None
    for rec in iter_latest_records(rd):
        if score_table is not None:
            raw = score_table.get(rec.task_id)
            score = Score.model_validate(raw) if raw is not None else None
        else:
            score = rec.score
        task = task_map.get(rec.task_id) if task_map is not None else None
        name = f"{safe_name(rec.task_id)}.html"
        ctx = _task_context(rec, score, task, images, pages)
        # pages are written one record late, so each knows its next task (one context held at a time)
        if pending is not None:
            pname, pctx, prev_name = pending
            (pages / pname).write_text(page_tpl.render(manifest=manifest, prev=prev_name, next=name, **pctx),
                                       encoding="utf-8")
            pending = (name, ctx, pname)
        else:
            pending = (name, ctx, None)
        for k, v in rec.tags.items():
            tag_values.setdefault(k, set()).add(v)
        last = rec.trajectory.turns[-1] if rec.trajectory.turns else None
        rows.append({
            "id": rec.task_id, "href": f"tasks/{name}", "status": ctx["status"], "tags": rec.tags,
            "value": score.value if score is not None and score.error is None and rec.error is None else None,
            "answer": _short(last.answer if last and last.answer is not None else (last.response if last else "")),
            "gold": " | ".join(ctx["gold"]), "calls": len(rec.trajectory.tool_calls),
            "stop": rec.trajectory.stop_reason, "error": rec.error or (score.error if score else None) or "",
        })
    if pending is not None:
        pname, pctx, prev_name = pending
        (pages / pname).write_text(page_tpl.render(manifest=manifest, prev=prev_name, next=None, **pctx),
                                   encoding="utf-8")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    index = site / INDEX
    index.write_text(env.get_template("index.html.j2").render(
        manifest=manifest, rows=rows, counts=counts, scores=scores or "records",
        tags={k: sorted(v) for k, v in sorted(tag_values.items())},
    ), encoding="utf-8")
    return index


def _site_root(directory: Path) -> tuple[Path, str]:
    """The folder to serve (the run dir when the site is inside one) and the index URL path."""
    d = directory.resolve()
    for parent in [d, *d.parents]:
        if (parent / "manifest.json").is_file():
            return parent, Path(os.path.relpath(d / INDEX, parent)).as_posix()
    return d, INDEX


def make_server(path: Path | str, port: int = 8765) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A 127.0.0.1 HTTP server for a site folder (or a run dir: builds its viewer); returns it and the URL."""
    p = Path(path)
    if (p / "manifest.json").is_file() and not (p / INDEX).is_file():
        p = build_viewer(p).parent
    root, index = _site_root(p)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    return server, f"http://127.0.0.1:{server.server_address[1]}/{index}"


def serve(path: Path | str, port: int = 8765, background: bool = False) -> http.server.ThreadingHTTPServer:
    """Serve a viewer site on 127.0.0.1:`port` (blocks unless `background`)."""
    server, url = make_server(path, port)
    print(f"serving {url} (Ctrl-C to stop)", flush=True)
    if background:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return server
