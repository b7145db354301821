"""One worker of a remote executor: runs single tasks of a run away from the driver.

A `TaskWorker` holds what a task needs — the benchmark and its tasks, the model and judge clients
(with this worker's share of the connection limit, adaptive), the tools and the sandbox pool — and
runs a task exactly as the local runner does (`Runner._run_task`: same agent, tools, time limit and
scoring), in a scratch run directory of its own. It never writes the real run directory: it returns
a `TaskOutcome` — the record as one JSON line (paths under the scratch folder rewritten to the
driver's run directory, so the record is what a local run writes) and the task's artifact files as
bytes — and deletes its scratch copy. The driver is the run directory's only writer.

Nothing here imports Ray: the Ray actor (`ray_executor.actor_class`) is a thin shell around it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from toolsight.calls.limiter import LimitChange
from toolsight.calls.retry import ModelCaller
from toolsight.calls.task import CallerModel
from toolsight.engine.manifest import isolation
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner, _size_sandbox, load_for_run
from toolsight.engine.store import SHARED_INPUTS, artifact_dir, artifact_files, record_line
from toolsight.engine.summary import record_counts
from toolsight.errors import EXIT_ABORTED, RunAborted
from toolsight.log.record import Record
from toolsight.scoring.base import ScoreContext
from toolsight.tasks.dataset import task_hashes


class WorkerConfig(BaseModel):
    """What the driver sends a worker once, when it starts."""

    model_config = ConfigDict(extra="forbid")

    opts: dict[str, Any]  # the run's RunOptions (paths made absolute by the driver)
    run_dir: str  # the driver's run directory, as records name it
    concurrency: int = 1  # tasks this worker runs at once
    max_connections: int = 1  # this worker's share of --max-connections


@dataclass
class TaskOutcome:
    """One finished task (one epoch of it), as sent back to the driver."""

    task_id: str
    epoch: int = 1
    line: str = ""  # the record (one JSON line), or "" when the run must stop (`abort`)
    files: dict[str, bytes] = field(default_factory=dict)  # the task's artifacts: relative path -> bytes
    #: the run's shared input copies (`RUN/artifacts/.inputs/`) this worker has not sent before: name -> bytes
    inputs: dict[str, bytes] = field(default_factory=dict)
    abort: str | None = None  # a RunAborted message: nothing more can succeed (credentials, outage, disk)
    abort_code: int = EXIT_ABORTED
    counts: dict[str, Any] = field(default_factory=dict)  # what the driver's summary line counts
    limits: list[dict[str, Any]] = field(default_factory=list)  # limit changes since the last outcome
    worker: str = ""
    #: tools and prompts the worker's requests carried that it has not sent before (`SentLog.drain`)
    sent: dict[str, Any] = field(default_factory=dict)


def where() -> str:
    """host:pid — names a worker in messages and in limits.jsonl."""
    return f"{socket.gethostname()}:{os.getpid()}"


class TaskWorker:
    """See the module docstring. Build it, `await start()`, then `await run(task_id, epoch, hash)`
    many times (concurrently), then `await close()`."""

    def __init__(self, config: WorkerConfig) -> None:
        from toolsight.benchmarks.registry import get_benchmark
        from toolsight.models.registry import get_model

        self.config = config
        self.name = where()
        self.scratch = Path(tempfile.mkdtemp(prefix="toolsight-worker-"))
        self.scratch_run = self.scratch / "run"
        opts = RunOptions.model_validate(config.opts)
        # a scratch run of its own: no resume, no cache (the driver's cache stays with the driver)
        opts = opts.replace(**{
            "out": str(self.scratch_run), "resume": False, "cache": False, "executor": "local",
            "ray_address": None, "ray_workers": None, "max_connections": config.max_connections,
            "judge_concurrency": max(1, min(opts.scoring.judge_concurrency, config.max_connections))})
        bench = get_benchmark(opts.benchmark)
        loaded = load_for_run(bench, opts.data)
        model = get_model(opts.model.spec, base_url=opts.model.base_url)
        judge = get_model(opts.scoring.judge, base_url=opts.scoring.judge_base_url) if opts.scoring.judge else None
        self.runner = Runner(opts, bench, loaded, model, judge=judge)
        self._shipped: set[str] = set()  # shared input copies already sent to the driver
        self.tasks = self.runner.selected  # compact: each task is built when it runs
        self.caller: ModelCaller | None = None
        self.judge_caller: ModelCaller | None = None
        self.ctx = ScoreContext()
        self._changes: list[dict[str, Any]] = []
        self._unsubscribe: list[Any] = []

    async def start(self) -> dict[str, Any]:
        """Make the model callers (in the event loop that will use them) and size the sandbox pool."""
        r = self.runner
        o = r.opts.control
        self.caller = ModelCaller(r.model, max_connections=r.opts.model.max_connections, retries=o.retries,
                                  backoff_base=o.backoff_base, max_retry_after=o.max_retry_after,
                                  outage_timeout=o.outage_timeout, limiter=r.model_limiter())
        limiters = [self.caller.limiter]
        if r.judge_model is not None:
            self.judge_caller = ModelCaller(r.judge_model, max_connections=r.opts.scoring.judge_concurrency,
                                            retries=o.retries,
                                            backoff_base=o.backoff_base, max_retry_after=o.max_retry_after,
                                            outage_timeout=o.outage_timeout, label="judge endpoint",
                                            limiter=r.judge_limiter())
            self.ctx = ScoreContext(judge=CallerModel(self.judge_caller))
            limiters.append(self.judge_caller.limiter)
        for lim in limiters:  # as a local run's limits.jsonl starts: each limit as the worker found it
            self._note_change(LimitChange(lim.key, lim.current, lim.current, "run-start", lim.inflight))
            self._unsubscribe.append(lim.subscribe(self._note_change))
        info: dict[str, Any] = {"worker": self.name, "pid": os.getpid(), "tasks": len(self.tasks),
                                "limit": self.caller.limiter.status()}
        if r.uses_sandbox:
            _size_sandbox(self.config.concurrency)
            info["isolation"] = isolation(True)  # this node's sandbox layers, for the driver's manifest
        return info

    def _note_change(self, change: LimitChange) -> None:
        self._changes.append({**change.as_dict(), "worker": self.name})

    async def run(self, task_id: str, epoch: int, task_hash: str | None) -> TaskOutcome:
        """Run one epoch of one task; the outcome carries its record and artifacts."""
        assert self.caller is not None, "start() first"
        task = self.tasks.get(task_id)
        if task is None:
            return self._abort(task_id, epoch, f"worker {self.name} has no task {task_id!r}: it loaded different "
                                               "data than the driver (put the data at the same path on every node)")
        if task_hash is not None and self.runner.task_hashes.get(task_id) != task_hash:
            mine = task_hashes([task], self.runner.loaded.root, self.runner.loaded.remote_images).get(task_id)  # reads its images: once per task
            if mine != task_hash:
                return self._abort(task_id, epoch, f"worker {self.name} sees task {task_id!r} with different "
                                                   "content than the driver (the data differs between nodes)")
            self.runner.task_hashes[task_id] = task_hash
        try:
            rec = await self.runner.tasks.run(task, self.caller, self.ctx, epoch)
        except RunAborted as exc:
            return self._abort(task_id, epoch, str(exc), exc.exit_code)
        ws = artifact_dir(self.scratch_run, task_id, epoch)
        files = collect_files(ws)
        shutil.rmtree(ws, ignore_errors=True)
        return TaskOutcome(task_id=task_id, epoch=epoch, line=self._rewrite(record_line(rec)), files=files,
                           inputs=self._new_inputs(rec),
                           counts=record_counts(rec), limits=self._drain(), worker=self.name,
                           sent=self.runner.tasks.sent.drain())

    def _new_inputs(self, rec: Record) -> dict[str, bytes]:
        """The shared copies of the record's input images that this worker has not shipped yet (a
        task that needed no workspace of its own has its inputs only there)."""
        out: dict[str, bytes] = {}
        for p in artifact_files(self.scratch_run, rec).values():
            if p.parent.name == SHARED_INPUTS and p.name not in self._shipped and p.is_file():
                out[p.name] = p.read_bytes()
                self._shipped.add(p.name)
        return out

    def _rewrite(self, line: str) -> str:
        """Paths under the scratch run directory become the same paths under the driver's."""
        mine = json.dumps(str(self.scratch_run), ensure_ascii=False)[1:-1]
        theirs = json.dumps(self.config.run_dir, ensure_ascii=False)[1:-1]
        return line.replace(mine, theirs)

    def _drain(self) -> list[dict[str, Any]]:
        out, self._changes = self._changes, []
        return out

    def _abort(self, task_id: str, epoch: int, message: str, code: int = EXIT_ABORTED) -> TaskOutcome:
        return TaskOutcome(task_id=task_id, epoch=epoch, abort=message, abort_code=code, limits=self._drain(),
                           worker=self.name)

    async def close(self) -> None:
        for stop in self._unsubscribe:
            stop()
        for c in (self.caller, self.judge_caller):
            if c is not None:
                with contextlib.suppress(Exception):
                    await c.aclose()
        for m in (self.runner.model, self.runner.judge_model):
            if m is not None:
                with contextlib.suppress(Exception):
                    await m.aclose()
        if self.runner.uses_sandbox:
            from toolsight import sandbox
            sandbox.shutdown()
        shutil.rmtree(self.scratch, ignore_errors=True)


def collect_files(folder: Path) -> dict[str, bytes]:
    """Every regular file under `folder`, by its path relative to it (symlinks are not followed:
    model code may have left one pointing outside its workspace)."""
    if not folder.is_dir():
        return {}
    out: dict[str, bytes] = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[p.relative_to(folder).as_posix()] = p.read_bytes()
    return out
