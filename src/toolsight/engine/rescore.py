"""Re-score a finished run from its records, without calling the evaluated model again.

Each record's final responses (`trajectory.responses`) go to a scorer with the task; the results
are written to `scores-NAME.jsonl` beside `records.jsonl` (which is never touched), one line per
task (and epoch): `{"task_id": ..., "epoch": N, "score": {Score} | null, "error": null | "why there is
no score"}`, plus `scores-NAME.meta.json` saying which scorer and judge made it, the counts and the
first score error (`score_error`). Reports read either file
(`--scores NAME`). Judge calls go through the run's response cache, so re-running the same judge
costs nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from toolsight.calls.batching import batch_scope
from toolsight.calls.cache import ResponseCache
from toolsight.calls.retry import ModelCaller
from toolsight.calls.task import CallerModel
from toolsight.engine.batch_mode import BatchRoutes, check_batch_model, tuning
from toolsight.engine.store import CACHE, read_manifest
from toolsight.errors import EXIT_ABORTED, RunAborted, ToolsightError
from toolsight.log.files import iter_latest_records
from toolsight.metrics.views import ScoresFileError, scores_file_name
from toolsight.models.base import Model
from toolsight.scoring.base import Score, ScoreContext, Scorer
from toolsight.tasks.schema import Task


class RescoreError(ToolsightError, ValueError):
    """A re-scoring request that cannot run (no tasks, unknown scorer, ...): one clear message."""


class RescoreStopped(ToolsightError):
    """Re-scoring stopped: the judge endpoint stayed down past the outage timeout or rejected the key."""

    exit_code = EXIT_ABORTED


class ScoreLine(BaseModel):
    task_id: str
    epoch: int = 1
    score: Score | None = None
    error: str | None = None


def score_file_name(name: str) -> str:
    try:
        return scores_file_name(name)
    except ScoresFileError as exc:
        raise RescoreError(str(exc)) from None


def _resolve_scorer(scorer: Scorer | str, mode: str) -> Scorer:
    if not isinstance(scorer, str):
        return scorer
    from toolsight.benchmarks.registry import get_scorer

    try:
        found: Scorer = get_scorer(scorer, mode=mode)
    except (KeyError, ValueError) as exc:
        raise RescoreError(f"--scorer {scorer}: {exc}") from None
    return found


def load_run_tasks(run_dir: Path) -> dict[str, Task]:
    """The run's tasks, from the dataset folder named in its manifest."""
    from toolsight.tasks.dataset import DatasetError, load_dataset

    manifest = read_manifest(run_dir)
    path = manifest.dataset.path
    if not path:
        raise RescoreError(f"{run_dir}/manifest.json names no dataset path; pass the tasks explicitly")
    try:
        ds = load_dataset(Path(path), check_images=False)
    except DatasetError as exc:
        raise RescoreError(
            f"cannot load the tasks of {run_dir} from {path} (manifest dataset.path): {exc}. "
            "Move the dataset back or pass the tasks explicitly."
        ) from None
    return {t.id: t for t in ds.tasks}


class JudgeCalls(BaseModel):
    """How `score` calls its judge: as the runner calls any model (connection limit, retries, the
    outage breaker, the run's response cache)."""

    concurrency: int = 8
    retries: int = 5
    backoff_base: float = 1.0
    outage_timeout: float = 600.0
    max_retry_after: float = 120.0
    cache: bool = True
    #: send judge calls through the judge provider's batch API (`--judge-batch`; docs/batch.md)
    batch: bool = False
    batch_size: int = 100
    batch_idle: float = 5.0
    batch_poll: float = 5.0
    #: an expired or retryable failed item: asked again in a new batch (`batch`) or on-line at once
    batch_retry: Literal["batch", "online"] = "batch"


def _wrap_judge(judge: Model, run_dir: Path, calls: JudgeCalls) -> tuple[ModelCaller, ResponseCache | None]:
    """The judge behind a ModelCaller: connection limit, retries, the breaker, the run's cache."""
    cache = ResponseCache(run_dir / CACHE) if calls.cache else None
    caller = ModelCaller(judge, max_connections=calls.concurrency, retries=calls.retries,
                         backoff_base=calls.backoff_base, cache=cache, max_retry_after=calls.max_retry_after,
                         outage_timeout=calls.outage_timeout, label=f"judge endpoint ({judge.endpoint_id()})")
    return caller, cache


async def _score_one(scorer: Scorer, task: Task, epoch: int, responses: list[str], ctx: ScoreContext,
                     sem: asyncio.Semaphore) -> Score:
    async with sem:
        try:
            with batch_scope(f"{task.id}#{epoch}"):  # a batched judge numbers this record's calls from here
                return await scorer.score(task, responses, ctx)
        except Exception as exc:  # a scorer bug becomes a score error, counted apart from fails
            return Score(scorer=getattr(scorer, "name", ""), error=f"scoring failed: {type(exc).__name__}: {exc}")


async def _rescore(run_dir: Path, scorer: Scorer, tasks: Mapping[str, Task], ctx: ScoreContext,
                   out: Path, concurrency: int) -> dict[str, Any]:
    sem = asyncio.Semaphore(max(1, concurrency))
    batch_size = max(1, concurrency) * 4
    counts = {"scored": 0, "skipped": 0, "score_errors": 0}
    first_error: dict[str, str] = {}
    with out.open("w", encoding="utf-8") as fh:
        batch: list[tuple[tuple[str, int], asyncio.Task[Score] | ScoreLine]] = []

        async def cancel_pending() -> None:
            jobs = [item for _, item in batch if isinstance(item, asyncio.Task)]
            for job in jobs:
                job.cancel()
            await asyncio.gather(*jobs, return_exceptions=True)  # retrieved: no "never retrieved" noise

        async def flush() -> None:
            for (tid, epoch), item in batch:
                if isinstance(item, ScoreLine):
                    line = item
                else:
                    sc = await item
                    line = ScoreLine(task_id=tid, epoch=epoch, score=sc)
                    counts["score_errors" if sc.error else "scored"] += 1
                    if sc.error:
                        first_error.setdefault("score_error", sc.error)
                fh.write(line.model_dump_json() + "\n")
            batch.clear()

        for rec in iter_latest_records(run_dir):
            task = tasks.get(rec.task_id)
            key = (rec.task_id, rec.epoch)
            if rec.error is not None:
                batch.append((key, ScoreLine(task_id=rec.task_id, epoch=rec.epoch, error=f"record error: {rec.error}")))
                counts["skipped"] += 1
            elif task is None:
                batch.append((key, ScoreLine(task_id=rec.task_id, epoch=rec.epoch, error="task not found in the dataset")))
                counts["skipped"] += 1
            else:
                job = asyncio.ensure_future(_score_one(scorer, task, rec.epoch, rec.trajectory.responses, ctx, sem))
                batch.append((key, job))
            if len(batch) >= batch_size:
                try:
                    await flush()
                except BaseException:
                    await cancel_pending()
                    raise
        try:
            await flush()
        except BaseException:
            await cancel_pending()
            raise
        fh.flush()
        os.fsync(fh.fileno())
    return {**counts, **first_error}


def rescore_run(
    run_dir: Path | str,
    scorer: Scorer | str,
    judge_model: Model | None = None,
    name: str | None = None,
    tasks: Mapping[str, Task] | None = None,
    mode: str = "official",
    calls: JudgeCalls | None = None,
) -> Path:
    """Score every record of a finished run again; return the path of the new scores file.

    `scorer` is a Scorer or a registry name (with `mode`); `judge_model` is given to the scorer
    as `ScoreContext.judge` (temperature 0, seed 0), called as `calls` says. `tasks` defaults to
    the dataset named in the manifest. The file is written whole to a temporary name and then
    renamed, so an interrupted re-score never leaves a half file under the final name; a judge
    endpoint that stays down past the outage timeout (or rejects the key) ends it with
    `RescoreStopped` (exit 4), the temporary file removed.
    """
    calls = calls or JudgeCalls()
    rd = Path(run_dir)
    read_manifest(rd)  # a clear error when this is not a run directory
    sc = _resolve_scorer(scorer, mode)
    task_map = tasks if tasks is not None else load_run_tasks(rd)
    label = name or "-".join(x for x in (getattr(sc, "name", "scorer"), judge_model.name if judge_model else "") if x)
    out = rd / score_file_name(label)
    tmp = out.with_suffix(".jsonl.tmp")
    caller: ModelCaller | None = None
    cache_obj: ResponseCache | None = None
    if calls.batch:
        if judge_model is None:
            raise RescoreError("--judge-batch: no judge to batch; pass --judge MODEL too")
        check_batch_model(judge_model, "--judge-batch")
    if judge_model is not None:
        caller, cache_obj = _wrap_judge(judge_model, rd, calls)
    ctx = ScoreContext(judge=CallerModel(caller) if caller is not None else None,
                       judge_width=calls.batch_size if calls.batch else None)
    t0 = time.time()
    routes = BatchRoutes()

    async def scoring() -> dict[str, Any]:
        try:
            if calls.batch and caller is not None:
                routes.attach("judge", caller, tuning(calls.batch_size, calls.batch_idle, calls.batch_poll,
                                                     calls.batch_retry), rd,
                              replay=calls.cache)
            # batched, every record's judge calls wait together for one batch
            width = max(calls.concurrency, calls.batch_size) if routes.routes else calls.concurrency
            return await _rescore(rd, sc, task_map, ctx, tmp, width)
        finally:
            await routes.aclose()
            if caller is not None:
                await caller.aclose()

    try:
        counts = asyncio.run(scoring())
        os.replace(tmp, out)
    except RunAborted as exc:
        raise RescoreStopped(f"{exc}; nothing was written (the records are untouched): run `toolsight score` "
                             "again when the judge is back") from None
    finally:
        tmp.unlink(missing_ok=True)  # an interrupted score leaves no half file behind
        if cache_obj is not None:
            cache_obj.close()
    meta = {
        "scorer": getattr(sc, "name", ""), "mode": mode, "judge": judge_model.name if judge_model else None,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "duration_s": round(time.time() - t0, 3),
        **counts,
    }
    if routes.routes:  # what batch mode did (`toolsight score --judge-batch`)
        meta["batch"] = {role: dataclasses.asdict(s) for role, s in routes.stats.items()}
    out.with_name(out.name[: -len(".jsonl")] + ".meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return out
