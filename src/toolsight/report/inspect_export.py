"""`toolsight export RUN --format inspect`: a run as an Inspect AI `.eval` log (docs/reports.md).

The log is built from Inspect's own types and written by its own writer (`inspect_ai.log.write_eval_log`),
so `inspect_ai.log.read_eval_log` reads it and `inspect view` opens it: the run's benchmark, setting and
model as the eval spec, one `EvalSample` per task-epoch (each run's latest records) with the whole
conversation as the model was sent it — system and user messages with their images (embedded; Inspect
stores each image once, as an attachment), assistant messages with their tool calls, tool results with their
errors (and images, where the loop sent them inside the tool message) — the final answer as the sample's output, the toolsight score as the sample's score, token usage per sample and in total, and
the run's mean score (with its standard error) as the eval's result.

`inspect_ai` is optional (`pip install 'toolsight[inspect]'`) and imported only here, when called.
"""

from __future__ import annotations

import base64
import datetime as dt
import importlib
import math
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from toolsight.engine.rescore import RescoreError, load_run_tasks
from toolsight.engine.store import artifact_files
from toolsight.errors import ToolsightError
from toolsight.log.files import MANIFEST, latest_records, read_manifest
from toolsight.log.manifest import Manifest
from toolsight.log.messages import ImagePart, Message, TextPart, Usage
from toolsight.log.record import Record
from toolsight.log.score import Score
from toolsight.metrics.views import load_full_scores
from toolsight.report.export import gold_texts
from toolsight.report.runs_index import run_row
from toolsight.tasks.schema import Task

INSTALL_HINT = "the Inspect export needs inspect_ai: pip install 'toolsight[inspect]'"
SUFFIX = ".eval"


class ExportError(ToolsightError):
    """An export that cannot be made (inspect_ai missing, a bad --out, a folder without runs)."""


def _inspect() -> Any:
    """The inspect_ai modules this export uses, as one namespace (ExportError when not installed)."""
    try:
        return SimpleNamespace(**{name: importlib.import_module(f"inspect_ai.{name}")
                                  for name in ("log", "model", "scorer", "tool")})
    except ImportError:
        raise ExportError(INSTALL_HINT) from None


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, tz=dt.UTC).isoformat()


def _usage(ia: Any, u: Usage) -> Any:
    return ia.model.ModelUsage(
        input_tokens=u.input_tokens, output_tokens=u.output_tokens, total_tokens=u.total_tokens,
        input_tokens_cache_read=u.cache_read_tokens or None, input_tokens_cache_write=u.cache_write_tokens or None,
        reasoning_tokens=u.reasoning_tokens or None)


class _Images:
    """Image parts to `ContentImage`s with the bytes embedded as data URIs (a missing file: a text stub)."""

    def __init__(self, ia: Any, run_dir: Path, rec: Record) -> None:
        self.ia = ia
        self.files = artifact_files(run_dir, rec)
        self.missing: list[str] = []

    def source(self, art_id: str | None, path: str | None) -> Path | None:
        if art_id and art_id in self.files and self.files[art_id].is_file():
            return self.files[art_id]
        if path and Path(path).is_file():
            return Path(path)
        return None

    def content(self, art_id: str | None, path: str | None = None, mime: str | None = None) -> Any:
        src = self.source(art_id, path)
        name = art_id or (Path(path).name if path else "?")
        if src is None:
            self.missing.append(name)
            return self.ia.model.ContentText(text=f"[image {name}: file missing from the run directory]")
        raw = src.read_bytes()
        media = _sniff(raw) or mime or ImagePart(path=str(src)).media_type()
        return self.ia.model.ContentImage(image=f"data:{media};base64,{base64.b64encode(raw).decode('ascii')}")


def _sniff(raw: bytes) -> str | None:
    """The image type the bytes say (a dataset's PNG named `.jpg` is still a PNG), None when unknown."""
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None


def _content(m: Message, images: _Images) -> list[Any]:
    parts: list[Any] = []
    for p in m.content:
        if isinstance(p, TextPart):
            if p.text:
                parts.append(images.ia.model.ContentText(text=p.text))
        else:
            parts.append(images.content(p.artifact_id, p.path, p.mime))
    return parts


def _arguments(raw: str) -> dict[str, Any]:
    from toolsight.log.arguments import ArgumentsError, load_arguments

    try:
        args = load_arguments(raw) if raw else {}
    except ArgumentsError:
        return {"_raw": raw}
    return args if isinstance(args, dict) else {"_value": args}


def _messages(ia: Any, rec: Record, images: _Images) -> list[Any]:
    """The trajectory's messages as Inspect chat messages, images where the model was sent them."""
    calls = {c.id: c for c in rec.trajectory.tool_calls}
    out: list[Any] = []
    for m in rec.trajectory.messages:
        content = _content(m, images)
        if m.role == "system":
            out.append(ia.model.ChatMessageSystem(content=content or ""))
        elif m.role == "user":
            out.append(ia.model.ChatMessageUser(content=content or ""))
        elif m.role == "assistant":
            if m.reasoning:
                content.insert(0, ia.model.ContentReasoning(reasoning=m.reasoning))
            tool_calls = [ia.tool.ToolCall(id=tc.id, function=tc.name, arguments=_arguments(tc.arguments))
                          for tc in m.tool_calls]
            out.append(ia.model.ChatMessageAssistant(content=content or "", tool_calls=tool_calls or None,
                                                     model=rec.model))
        else:
            call = calls.get(m.tool_call_id or "")
            error = ia.tool.ToolCallError(type="unknown", message=call.error) if call is not None and call.error \
                else None
            out.append(ia.model.ChatMessageTool(content=content or "", tool_call_id=m.tool_call_id,
                                                function=m.name or (call.name if call else None), error=error))
    return out


def _score(ia: Any, s: Score) -> Any:
    meta: dict[str, Any] = {"passed": s.passed, "scorer": s.scorer}
    if s.details:
        meta["details"] = s.details
    if s.turns:
        meta["turns"] = [{"value": t.value, "passed": t.passed, "answer": t.answer} for t in s.turns]
    if s.judge_calls:
        meta["judges"] = sorted({c.model for c in s.judge_calls})
    return ia.scorer.Score(value=s.value, answer=s.answer, explanation=s.explanation or None, metadata=meta)


_STOP = {"max_tokens": "max_tokens", "answered": "stop"}


def _sample(ia: Any, run_dir: Path, rec: Record, score: Score | None, task: Task | None) -> Any:
    images = _Images(ia, run_dir, rec)
    messages = _messages(ia, rec, images)
    traj = rec.trajectory
    first_user = next((m for m in traj.messages if m.role == "user"), None)
    if task is not None and task.turns:
        prompt = task.turns[0].prompt
    else:
        prompt = first_user.text if first_user is not None else ""
    final = traj.turns[-1].response if traj.turns else ""
    output = ia.model.ModelOutput.from_content(rec.model, final, stop_reason=_STOP.get(traj.stop_reason, "unknown"))
    output.usage = _usage(ia, traj.usage)
    gold = gold_texts(rec, task)
    choices = None
    if task is not None and task.turns and task.turns[0].options:
        choices = [f"{k}. {v}" for k, v in task.turns[0].options.items()]
    metadata: dict[str, Any] = {**rec.tags, "setting": rec.setting, "stop_reason": traj.stop_reason,
                                "tool_calls": len(traj.tool_calls), "model_calls": traj.model_calls}
    if score is not None and score.error is not None:
        metadata["score_error"] = score.error
    if rec.score_pending:
        metadata["score_pending"] = rec.score_pending
    if images.missing:
        metadata["images_missing"] = images.missing
    scored = rec.error is None and score is not None and score.error is None
    return ia.log.EvalSample(
        id=rec.task_id, epoch=rec.epoch, input=prompt, choices=choices,
        target=gold[0] if len(gold) == 1 else gold, messages=messages, output=output,
        scores={score.scorer or "toolsight": _score(ia, score)} if scored and score is not None else None,
        metadata=metadata, model_usage={rec.model: _usage(ia, traj.usage)},
        started_at=_iso(rec.started_at) if rec.started_at else None,
        completed_at=_iso(rec.started_at + rec.duration_s) if rec.started_at else None,
        total_time=round(rec.duration_s, 3), working_time=round(traj.duration_s or rec.duration_s, 3),
        error=ia.log.EvalError(message=rec.error, traceback=rec.error, traceback_ansi=rec.error)
        if rec.error is not None else None,
    )


def _results(ia: Any, recs: list[Record], scores: dict[str, Score | None], scorer: str) -> Any:
    values = [s.value for r in recs if r.error is None and (s := scores.get(r.key)) is not None and s.error is None]
    metrics = {}
    if values:
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / (len(values) - 1) if len(values) > 1 else 0.0
        metrics = {"mean": ia.log.EvalMetric(name="mean", value=mean),
                   "stderr": ia.log.EvalMetric(name="stderr", value=math.sqrt(var / len(values)))}
    eval_score = ia.log.EvalScore(name=scorer, scorer=scorer, scored_samples=len(values),
                                  unscored_samples=len(recs) - len(values), metrics=metrics)
    return ia.log.EvalResults(total_samples=len(recs), completed_samples=sum(1 for r in recs if r.error is None),
                              scores=[eval_score])


_STATUS = {"finished": "success", "interrupted": "cancelled", "running": "started"}


def _generate_config(ia: Any, manifest: Manifest) -> Any:
    gen = manifest.identity.get("generate") or (manifest.options.get("generate") or {})
    keys = ("temperature", "top_p", "max_tokens", "seed", "reasoning_effort", "stop")
    kwargs = {k: gen.get(k) for k in keys if gen.get(k) is not None}
    if "stop" in kwargs:
        kwargs["stop_seqs"] = kwargs.pop("stop")
        if isinstance(kwargs["stop_seqs"], str):
            kwargs["stop_seqs"] = [kwargs["stop_seqs"]]
    if gen.get("thinking_budget") is not None:
        kwargs["reasoning_tokens"] = gen["thinking_budget"]
    try:
        return ia.model.GenerateConfig(**kwargs)
    except ValueError:  # a value Inspect does not take (e.g. a provider-specific effort): keep it in metadata
        return ia.model.GenerateConfig()


def _name(manifest: Manifest, benchmark: str) -> str:
    task = re.sub(r"[^A-Za-z0-9_.+-]+", "-", f"{benchmark}-{manifest.setting}").strip("-") or "run"
    created = re.sub(r"[:]", "-", manifest.created.split(".")[0].rstrip("Z")) or "run"
    return f"{created}_{task}_{manifest.run_id or 'run'}{SUFFIX}"


def build_eval_log(run_dir: Path, scores: str | None = None) -> Any:
    """The run as an `inspect_ai.log.EvalLog` (samples included), not written."""
    ia = _inspect()
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    row = run_row(run_dir)
    recs = latest_records(run_dir)
    try:
        tasks: dict[str, Task] = load_run_tasks(run_dir)
    except (RescoreError, OSError, ValueError):
        tasks = {}  # gold answers then come from the records
    score_of: dict[str, Score | None] = load_full_scores(run_dir, scores) if scores else {r.key: r.score for r in recs}
    scorer = scores or next((s.scorer for s in score_of.values() if s is not None and s.scorer), "toolsight")
    samples = [_sample(ia, run_dir, r, score_of.get(r.key), tasks.get(r.task_id)) for r in recs]
    total = sum((r.trajectory.usage for r in recs), Usage())
    started = min((r.started_at for r in recs if r.started_at), default=0.0)
    ended = max((r.started_at + r.duration_s for r in recs if r.started_at), default=0.0)
    ep = max((r.epoch for r in recs), default=1)
    caps = {k: v for k, v in manifest.agent_settings.items() if k not in ("system_prompt",)}
    spec = ia.log.EvalSpec(
        eval_id=manifest.run_id or run_dir.name, run_id=manifest.run_id or run_dir.name,
        created=manifest.created or _iso(started), task=f"{row.benchmark}/{manifest.setting}",
        task_id=f"{row.benchmark}/{manifest.setting}", task_version=0, task_display_name=
        f"{row.benchmark} · {manifest.setting}", task_args={"setting": manifest.setting, "loop": row.loop},
        solver=str(manifest.agent_settings.get("agent") or "default"),
        dataset=ia.log.EvalDataset(name=row.benchmark, location=manifest.dataset.path or None,
                                   samples=manifest.dataset.n_tasks or len({r.task_id for r in recs}),
                                   sample_ids=sorted({r.task_id for r in recs})),
        model=manifest.model, model_generate_config=_generate_config(ia, manifest),
        model_base_url=manifest.options.get("base_url"),
        config=ia.log.EvalConfig(epochs=ep, epochs_reducer=[manifest.options["epochs_reducer"]]
                                 if manifest.options.get("epochs_reducer") else None),
        packages={"toolsight": manifest.toolsight_version},
        metadata={"toolsight_run_dir": str(run_dir), "benchmark": manifest.benchmark, "target": manifest.target,
                  "setting": manifest.setting, "loop": row.loop, "judge": manifest.judge,
                  "dataset_hash": manifest.dataset.hash, "scores": scores},
    )
    plan = ia.log.EvalPlan(name=str(manifest.agent_settings.get("name") or manifest.setting),
                           steps=[ia.log.EvalPlanStep(solver=spec.solver or "default", params=caps)],
                           config=spec.model_generate_config)
    stats = ia.log.EvalStats(started_at=_iso(started) if started else "", completed_at=_iso(ended) if ended else "",
                             model_usage={manifest.model: _usage(ia, total)} if recs else {})
    return ia.log.EvalLog(status=_STATUS[row.status], eval=spec, plan=plan,
                          results=_results(ia, recs, score_of, scorer), stats=stats, samples=samples)


def export_inspect(run_dir: Path | str, out: Path | str | None = None, scores: str | None = None) -> Path:
    """Write one run as an Inspect `.eval` log; `out` is a `.eval` file or a folder (default `RUN/inspect/`,
    named as Inspect names its logs). Returns the path written."""
    run_dir = Path(run_dir)
    if not (run_dir / MANIFEST).is_file():
        raise ExportError(f"{run_dir} is not a run directory (no {MANIFEST})")
    log = build_eval_log(run_dir, scores)
    target = Path(out) if out is not None else run_dir / "inspect"
    if target.suffix != SUFFIX:
        target = target / _name(read_manifest(run_dir), log.eval.dataset.name or "run")
    if target.exists() and target.is_dir():
        raise ExportError(f"--out {target}: a folder is in the way of the log file")
    target.parent.mkdir(parents=True, exist_ok=True)
    ia = _inspect()
    ia.log.write_eval_log(log, str(target), format="eval")
    return target


def export_inspect_many(run_dirs: Iterable[Path], out: Path, scores: str | None = None,
                        on_written: Callable[[Path], None] | None = None) -> list[Path]:
    """Write each run's log into the folder `out` (an Inspect log folder: `inspect view --log-dir OUT`)."""
    written = []
    for rd in run_dirs:
        path = export_inspect(rd, out, scores)
        written.append(path)
        if on_written is not None:
            on_written(path)
    return written


__all__ = ["INSTALL_HINT", "ExportError", "build_eval_log", "export_inspect", "export_inspect_many"]
