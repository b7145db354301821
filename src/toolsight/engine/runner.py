"""The runner: tasks run concurrently on one event loop, records go to the run directory.

Per-model connection limit and a separate judge limit; retries, a circuit breaker that pauses the
run while the endpoint is down, and the cache (in ModelCaller); a per-task wall-clock limit that
does not count outage pauses. The run directory is created atomically and locked (rundir).
`--resume` re-runs tasks whose last record is an error (unless `--no-retry-errors`) or whose task
content changed; it refuses a different configuration unless forced. A task that fails becomes a
record with an error and the run goes on; what no task can survive (the endpoint down past
`--outage-timeout`, rejected credentials, a full disk) stops the run with `RunStopped`, keeping
every finished record. `--task-id` / `--tag` select tasks (a selection, like `--limit`, not part of
the resume identity); `--epochs N` runs each selected task N times, one record per (task, epoch).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import platform
import shutil
import sqlite3
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import toolsight
from toolsight.agents.inputs import InputImageError, register_inputs
from toolsight.agents.loop import TaskFailed
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.base import Benchmark, BenchmarkError, LoadedTasks
from toolsight.calls.cache import ResponseCache
from toolsight.calls.limiter import EndpointLimiter, LimiterPool, LimitView, endpoint_key
from toolsight.calls.retry import CallFailed, CallInfo, CallStats, ModelCaller
from toolsight.engine.options import DEFAULT_TASK_TIMEOUT_S, RunOptions, config_hash
from toolsight.engine.rundir import RunError as RunError  # re-exported: callers catch it from here
from toolsight.engine.rundir import identity_changes, open_run_dir, record_resume
from toolsight.engine.store import (
    CACHE,
    RecordWriter,
    artifact_dir,
    disk_has_room,
    is_disk_full,
    mentions_disk_full,
)
from toolsight.errors import (
    EXIT_ABORTED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TASK_ERRORS,
    RunAborted,
    TaskAbort,
    ToolsightError,
    one_line,
)
from toolsight.log.files import latest_status
from toolsight.log.manifest import Manifest
from toolsight.log.record import Record, record_key
from toolsight.log.trajectory import ModelCallRecord, Trajectory
from toolsight.models.base import GenerateConfig, Message, Model, ModelError, ModelOutput
from toolsight.scoring.base import Score, ScoreContext, Scorer
from toolsight.tasks.dataset import dataset_hash, task_hashes
from toolsight.tasks.schema import Task
from toolsight.tasks.taskset import TaskSet
from toolsight.tools.base import ArtifactStore, Toolbox, ToolSpec
from toolsight.tools.registry import build_tools, needs_sandbox, needs_web


class RunStopped(ToolsightError):
    """The run stopped before its end (outage, rejected credentials, full disk); records are kept."""

    exit_code = EXIT_ABORTED

    def __init__(self, message: str, summary: RunSummary) -> None:
        super().__init__(message)
        self.summary = summary


@dataclass
class RunSummary:
    run_dir: Path
    total: int
    done: int = 0
    skipped: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    kept_errors: int = 0
    retried: int = 0
    changed: int = 0
    unscored: int = 0
    score_sum: float = 0.0
    scored: int = 0
    passed: int = 0
    tokens: int = 0
    tool_calls: int = 0
    interrupted: bool = False
    stopped: str | None = None
    stats: CallStats = field(default_factory=CallStats)
    outage_s: float = 0.0
    #: the endpoint limiters the run's calls go through (live: the progress display reads them)
    limiters: list[LimitView] = field(default_factory=list)

    @property
    def accuracy(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None

    def count(self, c: dict[str, Any]) -> None:
        """Count one finished task from its `record_counts` (a remote worker sends those, not the record)."""
        self.done += 1
        self.tool_calls += int(c.get("tool_calls", 0))
        self.tokens += int(c.get("tokens", 0))
        if c.get("error"):
            # lazy: the metrics module's models cost ~0.1 s of every start-up
            from toolsight.metrics.compute import error_kind

            self.errors[error_kind(str(c["error"]))] += 1
        elif "score" not in c and c.get("unscored"):
            self.unscored += 1
        elif "score" in c and c.get("score_error") is None:
            self.scored += 1
            self.score_sum += float(c["score"])
            self.passed += int(bool(c.get("passed")))

    @property
    def exit_code(self) -> int:
        """0 all tasks finished without error; 3 some ended in error; 4 stopped; 130 interrupted."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        if self.stopped is not None:
            return EXIT_ABORTED
        if self.errors or self.kept_errors:
            return EXIT_TASK_ERRORS
        return EXIT_OK

    def line(self) -> str:
        acc = f"{100 * self.accuracy:.1f}%" if self.accuracy is not None else "n/a"
        errs = sum(self.errors.values())
        kinds = ", ".join(f"{k}: {v}" for k, v in self.errors.most_common()) or "none"
        text = (
            f"{self.done} task(s) run, {self.skipped} already finished, {errs} error(s) ({kinds}); "
            f"accuracy {acc} over {self.scored} scored; {self.tool_calls} tool call(s); "
            f"{self.tokens} tokens; {self.stats.retries} retries; {self.stats.cache_hits} cache hits"
        )
        if self.unscored:
            text += f"; {self.unscored} unscored (no gold answer)"
        if self.kept_errors:
            text += f"; {self.kept_errors} earlier error record(s) kept (--no-retry-errors)"
        if self.outage_s >= 1:
            text += f"; paused {self.outage_s:.0f} s while the endpoint was unreachable"
        for lim in self.limiters:
            if lim.cuts:
                text += (f"; {lim.key}: connection limit {lim.current}/{lim.max_limit} after {lim.cuts} cut(s) "
                         f"({lim.overloads} overload answer(s))")
        if errs or self.kept_errors:
            text += f". Re-run the failed tasks with: toolsight retry {self.run_dir}"
        return text


def record_counts(rec: Record) -> dict[str, Any]:
    """What a run's summary counts of one record: `RunSummary.count` takes it; a Ray worker sends it."""
    t = rec.trajectory
    out: dict[str, Any] = {"error": rec.error, "tool_calls": len(t.tool_calls), "tokens": t.usage.total_tokens,
                           "model_calls": t.model_calls, "retries": t.retries, "cache_hits": t.cache_hits,
                           "unscored": bool(rec.extra.get("unscored"))}
    if rec.score is not None:
        out.update(score=rec.score.value, passed=bool(rec.score.passed), score_error=rec.score.error)
    return out


class CallerModel(Model):
    """A Model whose generate goes through a ModelCaller (limit, retries, cache) — for judges."""

    def __init__(self, caller: ModelCaller) -> None:
        super().__init__(caller.model.name)
        self.caller = caller

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        return await self.caller(messages, tools, config)


Generate = Callable[[list[Message], list[ToolSpec], GenerateConfig], Awaitable[ModelOutput]]


class TaskCalls:
    """The `generate` one task's agent gets: the run's ModelCaller (or a baseline's own generate),
    with every call's finish reason, retries and timing logged for the trajectory."""

    def __init__(self, caller: ModelCaller | None, generate: Generate, cache_salt: str = "") -> None:
        self.caller = caller
        self.generate = generate
        self.log: list[ModelCallRecord] = []
        # epoch N > 1 of a task must not replay epoch 1's cached replies (that would hide the variance
        # epochs measure); a resumed epoch still finds its own
        self.cache_salt = cache_salt

    async def call_raw(self, fn: Callable[[], Awaitable[Any]]) -> Any:
        """A raw provider call an official loop built itself, under the run's limit, retries and breaker."""
        if self.caller is None:
            return await fn()
        return await self.caller.call_raw(fn)

    async def __call__(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        t0 = time.monotonic()
        index = len(self.log)
        try:
            if self.caller is not None:
                out, info = (await self.caller.call(messages, tools, config, cache_salt=self.cache_salt)
                             if self.cache_salt else await self.caller.call(messages, tools, config))
            else:
                out, info = await self.generate(messages, tools, config), CallInfo()
        except ModelError as exc:
            failed = exc.info if isinstance(exc, CallFailed) else CallInfo()
            self.log.append(ModelCallRecord(index=index, retries=failed.retries, waited_s=round(failed.waited_s, 3),
                                            duration_s=round(time.monotonic() - t0, 4), error=str(exc)))
            raise
        self.log.append(ModelCallRecord(
            index=index, finish_reason=out.finish_reason, retries=info.retries, cached=out.cached or info.cached,
            duration_s=round(time.monotonic() - t0, 4), waited_s=round(info.waited_s, 3),
            input_tokens=out.usage.input_tokens, output_tokens=out.usage.output_tokens,
        ))
        return out


def apply_caps(settings: AgentSettings, opts: RunOptions) -> AgentSettings:
    upd: dict[str, Any] = dict(opts.caps)
    if opts.agent:
        upd["agent"] = opts.agent
    gen = settings.generate.model_dump()
    # a `generate` cap (--cap 'generate={"top_p": 0.9}') is applied on top of the setting's, and the
    # run's own generation flags on top of both
    cap_gen = upd.pop("generate", None)
    if cap_gen is not None and not isinstance(cap_gen, dict):
        raise RunError('--cap generate=...: expected a JSON object, e.g. --cap \'generate={"top_p": 0.9}\'')
    for layer in (cap_gen or {}, opts.model.generate.model_dump(exclude_defaults=True)):
        for k, v in layer.items():
            gen[k] = {**gen.get(k, {}), **v} if k == "extra_body" and isinstance(v, dict) else v
    try:
        upd["generate"] = GenerateConfig.model_validate(gen)
        return AgentSettings.model_validate({**settings.model_dump(), **upd})
    except ValueError as exc:
        raise RunError(f"bad cap override: {one_line(exc)} (cap names: `toolsight list caps`)") from None


def default_run_dir(opts: RunOptions, setting: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    model = opts.model.spec.replace("/", "_").replace(":", "_")
    return Path("runs") / f"{opts.benchmark.replace('/', '_')}-{setting}-{model}-{stamp}"


def has_gold(task: Task) -> bool:
    """Whether anything can say if an answer is right: a gold answer or rubrics in some turn."""
    return any(t.answer is not None or t.rubrics for t in task.turns)


def disk_full(exc: BaseException | str) -> RunAborted:
    return RunAborted(
        f"disk full ({exc}); free some space, then resume — tasks cut short were not recorded and will run again"
    )


@dataclass
class Plan:
    """What a run (or a resume) has left to do, and the summary its outcomes are counted into."""

    todo: list[tuple[int, int]]  # (position in Runner.selected, epoch): the task is built when it runs
    summary: RunSummary
    new_run: bool = True


class TaskExecutor(Protocol):
    """Runs a plan's tasks somewhere other than the runner's own event loop (toolsight.engine.executors).
    The runner has opened, locked and planned the run directory; the executor writes each finished
    task's artifacts and record into it (it is the run's only writer), records itself in a new
    run's manifest (`backends.executor`) and returns the summary."""

    name: str
    runs_web: bool  # whether it can run web tool sets (their recordings must land in the run directory)

    async def execute(self, runner: Runner, plan: Plan) -> RunSummary: ...


class Runner:
    """Runs one benchmark setting with one model into one run directory."""

    def __init__(
        self,
        opts: RunOptions,
        bench: Benchmark,
        loaded: LoadedTasks,
        model: Model,
        judge: Model | None = None,
        on_progress: Callable[[RunSummary, CallStats], None] | None = None,
        on_event: Callable[[str], None] | None = None,
        summarizer: Model | None = None,
        limiters: LimiterPool | None = None,
        executor: TaskExecutor | None = None,
    ) -> None:
        self.opts = opts
        self.executor = executor  # None: the tasks run here, in this event loop
        self.limiters = limiters if limiters is not None else LimiterPool()  # a sweep passes one shared pool
        self.bench = bench
        self.loaded = loaded
        self.model = model
        self.setting_name = opts.setting or bench.default_setting
        self.settings = apply_caps(bench.setting(self.setting_name, opts.loop), opts)
        # an explicit --task-timeout wins; else the setting's own (VTC-Bench official: the driver's 3 × 3600 s)
        self.task_timeout: float = opts.control.task_timeout or self.settings.task_timeout_s or DEFAULT_TASK_TIMEOUT_S
        self.opts = opts = opts.replace(loop=self.settings.loop, task_timeout=self.task_timeout)
        self.run_dir = Path(opts.control.out) if opts.control.out else default_run_dir(opts, self.setting_name)
        self.on_progress = on_progress
        self.on_event = on_event
        self.judge_model = judge
        bench.configure(opts.benchmark_options)  # the benchmark's own options, checked before anything runs
        bind = getattr(model, "bind_dataset", None)
        if callable(bind):
            bind(loaded.root)
        self.scorer: Scorer | None = bench.scorer(self.setting_name, opts.scoring.scorer_mode) if opts.scoring.score else None
        from toolsight.agents.registry import agent_toolsets

        own = [t for t in agent_toolsets(self.settings.agent) if t not in self.settings.tools]
        if own:  # tool sets the agent calls by itself (e.g. vcr's detection)
            self.settings = self.settings.model_copy(update={"tools": [*self.settings.tools, *own]})
        # tools are stateless (per-task state lives in the Toolbox), so one set serves every task
        self.tools = build_tools(self.settings.tools, extra=bench.toolsets())
        self.uses_sandbox = needs_sandbox(self.settings.tools, extra=bench.toolsets())
        if opts.sandbox.backend is not None:  # chosen in one place, before any code runs
            _use_sandbox_backend(opts.sandbox.backend)
        self.uses_web = needs_web(self.settings.tools, extra=bench.toolsets())
        self.summarizer = summarizer
        if self.uses_web and executor is not None and not executor.runs_web:
            raise RunError(f"--executor {executor.name} does not run web tool sets yet (this setting uses one); "
                           "use --executor local")
        if self.uses_web:
            from toolsight.web import WebError, parse_web_spec

            try:
                parse_web_spec(opts.web.backend)  # a bad --web is reported before anything runs
            except WebError as exc:
                raise RunError(str(exc)) from None
        self.task_hashes: dict[str, str] = {}
        # the tasks this run covers, chosen now so a bad --task-id / --tag fails before the run
        # directory exists
        self.selected = self._select()
        if opts.control.epochs > 1 or opts.scoring.epochs_reducer is not None:
            from toolsight.metrics.epochs import DEFAULT_REDUCER, check_reducer

            reducer = opts.scoring.epochs_reducer or getattr(self.scorer, "reducer", None) or DEFAULT_REDUCER
            try:
                check_reducer(reducer)
            except ValueError as exc:
                raise RunError(f"--epochs-reducer: {exc}") from None
            self.opts = opts = opts.replace(epochs_reducer=reducer)

    def _select(self) -> TaskSet:
        """--tag / --task-id, then --limit, then the setting's own expansion (`tasks_for`); held as
        a compact TaskSet (a run of 10,000 tasks does not hold 10,000 built tasks)."""
        from toolsight.tasks.select import SelectionError, select_tasks

        try:
            return select_tasks(self.loaded.tasks, self.opts.control.task_ids, self.opts.control.tags, self.opts.control.limit,
                                expand=lambda ts: self.bench.tasks_for(self.setting_name, ts))
        except SelectionError as exc:
            raise RunError(f"{exc} (in {self.loaded.source})") from None

    def _emit(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    # ---- run directory --------------------------------------------------------------------
    def _manifest(self, identity: dict[str, Any]) -> Manifest:
        return Manifest.model_validate({
            "run_id": uuid.uuid4().hex[:12],
            "benchmark": self.bench.name,
            "target": self.opts.benchmark,
            "setting": self.setting_name,
            "loop": self.settings.loop,
            "model": self.opts.model.spec,
            "judge": self.opts.scoring.judge,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "toolsight_version": toolsight.__version__,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "config_hash": config_hash(identity),
            "identity": identity,
            "options": self.opts.flat(),
            "dataset": self._dataset_info(identity["dataset"]),
            "agent_settings": self.settings.model_dump(mode="json"),
            "tools": [t.spec().model_dump() for t in self.tools],
            "backends": _backends(self.tools),
            "model_info": self.model.describe(),
            "isolation": isolation(self.uses_sandbox),
            "versions": _versions(),
        })

    def _dataset_info(self, data_hash: str) -> dict[str, Any]:
        return {
            "path": str(self.loaded.root.resolve()), "source": self.loaded.source, "hash": data_hash,
            "n_tasks": len(self.loaded.tasks), "notes": self.loaded.notes,
        }

    def _identity_of(self, old: Manifest) -> dict[str, Any]:
        if old.identity:
            return old.identity
        try:  # a manifest from before identities were stored: rebuild it from its options
            opts = RunOptions.model_validate(old.options)
        except ValueError:
            return {}
        return opts.identity(old.benchmark, old.setting, old.dataset.hash)

    def _plan(self, old: Manifest | None, identity: dict[str, Any]) -> Plan:
        """Which tasks to run: all on a new run; on resume, those without a record, those whose last
        record is an error (unless --no-retry-errors) and those whose task changed since."""
        ids = self.selected.ids
        units = [(n, e) for e in range(1, self.opts.control.epochs + 1) for n in range(len(ids))]  # epoch 1 of every task first
        summary = RunSummary(run_dir=self.run_dir, total=len(units))
        if old is None:
            return Plan(units, summary)
        changes = identity_changes(self._identity_of(old), identity)
        if changes and not self.opts.control.force:
            raise RunError(
                f"--resume refused: {self.run_dir} was made with a different configuration ("
                + "; ".join(changes) + "). Use a new --out, or --force to accept the change "
                "(recorded in the manifest's history)."
            )
        event: dict[str, Any] = {
            "event": "resume", "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "pid": os.getpid(),
            "toolsight_version": toolsight.__version__, "retry_errors": self.opts.control.retry_errors,
        }
        flat = self.opts.flat()
        for key in ("base_url", "judge_base_url"):
            was, now = old.options.get(key), flat[key]
            if was != now:
                event[key] = now
                self._emit(f"warning: resuming with --{key.replace('_', '-')} {now} (the run was made with {was})")
        accepted: dict[str, Any] | None = None
        if changes:
            event["accepted_changes"] = changes
            accepted = {"identity": identity, "config_hash": config_hash(identity),
                        "options": self.opts.flat(),
                        "dataset": self._dataset_info(identity["dataset"])}
            self._emit("warning: --force: accepting " + "; ".join(changes))
        record_resume(self.run_dir, old, event, accepted)
        status = latest_status(self.run_dir)
        todo: list[tuple[int, int]] = []
        for n, epoch in units:
            last = status.get(record_key(ids[n], epoch))
            if last is None:
                todo.append((n, epoch))
                continue
            error, th = last
            if th is not None and th != self.task_hashes.get(ids[n]):
                summary.changed += 1
                todo.append((n, epoch))
            elif error is None:
                summary.skipped += 1
            elif self.opts.control.retry_errors:
                summary.retried += 1
                todo.append((n, epoch))
            else:
                summary.kept_errors += 1
                summary.skipped += 1
        if summary.retried:
            self._emit(f"re-running {summary.retried} task(s) whose last record is an error "
                       "(--no-retry-errors keeps them)")
        if summary.changed:
            self._emit(f"re-running {summary.changed} task(s) whose content changed since they ran")
        return Plan(todo, summary, new_run=False)

    # ---- tasks ------------------------------------------------------------------------------
    async def _score(self, task: Task, traj: Trajectory, ctx: ScoreContext) -> tuple[Score | None, str | None]:
        if self.scorer is None:
            return None, None
        try:
            return await self.scorer.score(task, traj.responses, ctx), None
        except Exception as exc:
            return None, f"scoring failed: {type(exc).__name__}: {exc}"

    async def _within_deadline(self, work: Coroutine[Any, Any, Trajectory], caller: ModelCaller) -> Trajectory:
        """Await `work` for at most --task-timeout seconds, not counting time the run was paused
        for an unreachable endpoint (a task should not time out because the server was down).

        `work` runs in the calling task under one timer (no task and waiter per task, as
        `asyncio.wait` needs): when the timer fires, the deadline is computed again with the pauses
        since, and the timer is set again or the work is cancelled as a timeout."""
        loop = asyncio.get_running_loop()
        start, paused0 = loop.time(), caller.breaker.down_seconds()

        def due() -> float:
            return start + self.task_timeout + (caller.breaker.down_seconds() - paused0)

        timer: asyncio.TimerHandle
        async with asyncio.timeout(None) as limit:
            def check() -> None:
                nonlocal timer
                when = due()
                if when <= loop.time():
                    limit.reschedule(loop.time())  # expire now: the work is cancelled, TimeoutError raised
                else:
                    timer = loop.call_at(when, check)

            timer = loop.call_at(due(), check)
            try:
                result = await work
            finally:
                timer.cancel()
        if limit.expired():  # the work swallowed the cancellation and returned: still a timeout
            raise TimeoutError
        return result

    async def _run_task(self, task: Task, caller: ModelCaller, ctx: ScoreContext, epoch: int = 1) -> Record:
        t0 = time.time()
        ws = artifact_dir(self.run_dir, task.id, epoch)
        try:  # one system call in the common case (no exists() first: this runs for every task)
            os.mkdir(ws)
        except FileExistsError:
            shutil.rmtree(ws)  # a partial workspace from a killed run, or from an errored attempt
            os.mkdir(ws)
        except FileNotFoundError:  # the run's first task: artifacts/ is not there yet
            os.makedirs(ws, exist_ok=True)
        store = ArtifactStore(ws, created=True)
        toolbox = Toolbox(self.tools, store, task.id)
        model = self.model.for_task(task)
        calls = TaskCalls(caller if model is self.model else None, model.generate,
                          cache_salt=f"epoch {epoch}" if epoch > 1 else "")
        agent = self.bench.make_agent(self.settings, model, calls)
        error: str | None = None
        traj = Trajectory()
        try:
            inputs = register_inputs(task, self._dataset_root, toolbox, root_resolved=True)
            traj = await self._within_deadline(agent.run(task, toolbox, inputs), caller)
        except TaskFailed as exc:
            traj, error = exc.trajectory, str(exc)
        except TaskAbort as exc:  # e.g. a web replay without the recorded call: the task cannot go on
            error = str(exc)
            traj.artifacts = store.all()
        except TimeoutError:
            traj = Trajectory(stop_reason="time_limit", artifacts=store.all())
            error = f"time limit: task exceeded {self.task_timeout:.0f} s"
        except InputImageError as exc:
            error = f"input error: {exc}"
        except (asyncio.CancelledError, RunAborted):
            raise
        except Exception as exc:  # a harness or tool bug must not end the run
            if is_disk_full(exc):
                raise disk_full(exc) from None
            error = f"harness error: {type(exc).__name__}: {exc}"
            traj.artifacts = store.all()
        finally:
            await toolbox.aclose()
        traj.model_call_log = calls.log
        traj.retries = sum(c.retries for c in calls.log)
        self._check_disk(traj, error)
        score: Score | None = None
        extra = self.bench.record_extra(task)
        if error is None and self.scorer is not None and not has_gold(task):
            extra["unscored"] = "no gold answer"
        elif error is None:
            score, error = await self._score(task, traj, ctx)
        return Record(
            task_id=task.id, epoch=epoch, benchmark=self.bench.name, setting=self.setting_name, model=self.opts.model.spec,
            tags=task.tags, trajectory=traj, score=score, error=error, started_at=t0,
            duration_s=round(time.time() - t0, 4), extra=extra, task_hash=self.task_hashes.get(task.id),
        )

    @functools.cached_property
    def _dataset_root(self) -> Path:
        """The dataset folder resolved once per runner (not per task; not per process either: a
        folder behind a symlink may point elsewhere in a later run of the same process)."""
        return self.loaded.root.resolve()

    def _check_disk(self, traj: Trajectory, error: str | None) -> None:
        """A task that met a full disk (in a tool, say) did not really finish: stop, do not record it."""
        texts = [error or ""] + [c.error or "" for c in traj.tool_calls]
        if any(mentions_disk_full(t) for t in texts) and not disk_has_room(self.run_dir):
            raise disk_full(f"no space left in {self.run_dir}")

    # ---- the run ------------------------------------------------------------------------------
    async def run(self) -> RunSummary:
        self.task_hashes = await asyncio.to_thread(task_hashes, self.loaded.tasks, self.loaded.root)
        identity = self.opts.identity(self.bench.name, self.setting_name, dataset_hash(self.task_hashes))
        try:
            lock, old = open_run_dir(self.run_dir, lambda: self._manifest(identity), self.opts.control.resume)
        except OSError as exc:
            if is_disk_full(exc):
                raise RunStopped(str(disk_full(exc)), RunSummary(self.run_dir, len(self.loaded.tasks))) from None
            raise RunError(f"cannot create the run directory {self.run_dir}: {exc}") from None
        if old is None and self.opts.control.resume:
            self._emit(f"note: {self.run_dir} held no run yet; started a new one")
        try:
            try:
                plan = self._plan(old, identity)
            except OSError as exc:
                if is_disk_full(exc):
                    raise RunStopped(str(disk_full(exc)), RunSummary(self.run_dir, len(self.loaded.tasks))) from None
                raise
            if self.executor is not None:
                return await self.executor.execute(self, plan)
            return await self._execute(plan)
        finally:
            lock.release()

    def _open_cache(self) -> ResponseCache | None:
        if not self.opts.control.cache:
            return None
        try:
            return ResponseCache(self.run_dir / CACHE)
        except (sqlite3.Error, OSError) as exc:
            self._emit(f"warning: response cache off ({exc})")
            return None

    async def _execute(self, plan: Plan) -> RunSummary:
        summary, todo = plan.summary, plan.todo
        cache = self._open_cache()
        caller = ModelCaller(self.model, max_connections=self.opts.model.max_connections, retries=self.opts.control.retries,
                             backoff_base=self.opts.control.backoff_base, cache=cache,
                             max_retry_after=self.opts.control.max_retry_after, outage_timeout=self.opts.control.outage_timeout,
                             on_event=self._emit, limiter=self.model_limiter())
        summary.stats = caller.stats
        judge_caller: ModelCaller | None = None
        judge: Model | None = None
        if self.judge_model is not None:
            judge_caller = ModelCaller(self.judge_model, max_connections=self.opts.scoring.judge_concurrency,
                                       retries=self.opts.control.retries, backoff_base=self.opts.control.backoff_base, cache=cache,
                                       max_retry_after=self.opts.control.max_retry_after,
                                       outage_timeout=self.opts.control.outage_timeout, label="judge endpoint",
                                       on_event=self._emit, limiter=self.judge_limiter())
            judge = CallerModel(judge_caller)
        ctx = ScoreContext(judge=judge)
        if self.uses_sandbox:
            _size_sandbox(min(self.opts.control.concurrency, max(1, len(todo))))
        try:
            web = self._open_web(cache) if self.uses_web else None
        except RunError:
            await self._close(cache, caller, judge_caller)
            raise
        if web is not None and plan.new_run:
            self._record_backend("web", web.describe())
        try:
            writer = RecordWriter(self.run_dir)
        except OSError as exc:
            if web is not None:
                await web.aclose()
            await self._close(cache, caller, judge_caller)
            if is_disk_full(exc):
                raise RunStopped(str(disk_full(exc)), summary) from None
            raise
        queue: asyncio.Queue[tuple[int, int]] = asyncio.Queue()
        for t in todo:
            queue.put_nowait(t)

        def check_writer() -> None:
            if writer.error is not None:
                raise disk_full(writer.error) if is_disk_full(writer.error) else RunAborted(
                    f"cannot write records to {writer.path}: {writer.error}")

        async def worker() -> None:
            while True:
                check_writer()
                try:
                    n, epoch = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                rec = await self._run_task(self.selected[n], caller, ctx, epoch)
                check_writer()
                try:
                    writer.write(rec)
                except OSError:  # the writer thread failed just now
                    check_writer()
                    raise
                self._count(summary, rec)
                if self.on_progress:
                    self.on_progress(summary, caller.stats)

        stop: RunAborted | None = None
        n = max(1, min(self.opts.control.concurrency, len(todo) or 1))
        limits = [caller.limiter] + ([judge_caller.limiter] if judge_caller is not None else [])
        summary.limiters = list(limits)
        stop_logging_limits = self.log_limits(limits)
        with contextlib.ExitStack() as stack:
            if web is not None:  # the tasks' tools find the run's web session through a context variable
                from toolsight.web import use_session

                stack.enter_context(use_session(web))
            workers = [asyncio.create_task(worker(), name=f"toolsight-worker-{i}") for i in range(n)]
        try:
            stop = await _first_failure(workers)
        except asyncio.CancelledError:
            summary.interrupted = True
            raise
        finally:
            stop_logging_limits()
            if web is not None:
                await web.aclose()
            try:
                writer.close()
            except OSError as exc:
                stop = stop or (disk_full(exc) if is_disk_full(exc) else RunAborted(str(exc)))
            summary.outage_s = caller.breaker.outage_s
            await self._close(cache, caller, judge_caller)
        if stop is not None:
            summary.stopped = str(stop)
            raise RunStopped(str(stop), summary)
        return summary

    @staticmethod
    def _count(summary: RunSummary, rec: Record) -> None:
        summary.count(record_counts(rec))

    async def _close(self, cache: ResponseCache | None, *callers: ModelCaller | None) -> None:
        for c in callers:
            if c is not None:
                await c.aclose()
        if cache is not None:
            cache.close()
            if cache.broken:
                self._emit(f"warning: the response cache was switched off during the run ({cache.broken})")
        for m in (self.model, self.judge_model, self.summarizer):
            if m is not None:
                with contextlib.suppress(Exception):
                    await m.aclose()

    # ---- endpoint limits ------------------------------------------------------------------------
    def model_limiter(self) -> EndpointLimiter:
        """The evaluated model's endpoint limiter (shared with every run of the pool on that endpoint)."""
        key = endpoint_key(self.opts.model.spec, self.opts.model.base_url, self.opts.model.endpoint)
        return self.limiters.get(key, self.opts.model.max_connections, adaptive=self.opts.model.adaptive)

    def judge_limiter(self) -> EndpointLimiter:
        assert self.opts.scoring.judge is not None
        key = endpoint_key(self.opts.scoring.judge, self.opts.scoring.judge_base_url)
        return self.limiters.get(key, self.opts.scoring.judge_concurrency, adaptive=self.opts.model.adaptive)

    def log_limits(self, limiters: list[EndpointLimiter]) -> Callable[[], None]:
        """Append every limit change during the run to RUN/limits.jsonl (starting with each limit as
        the run found it); returns the function that stops it."""
        from toolsight.calls.limiter import LimitChange

        try:
            fh = (self.run_dir / LIMITS).open("a", encoding="utf-8")
        except OSError as exc:
            self._emit(f"warning: cannot record connection limits ({exc})")
            return lambda: None

        def write(change: LimitChange) -> None:
            with contextlib.suppress(OSError, ValueError):
                fh.write(json.dumps(change.as_dict()) + "\n")
                fh.flush()

        for lim in limiters:
            write(LimitChange(lim.key, lim.current, lim.current, "run-start", lim.inflight))
        stops = [lim.subscribe(write) for lim in limiters]

        def stop() -> None:
            for s in stops:
                s()
            with contextlib.suppress(OSError):
                fh.close()

        return stop

    def _record_backend(self, name: str, info: dict[str, Any]) -> None:
        """Add which backend an interface runs on to a new run's manifest (written atomically)."""
        from toolsight.log.files import read_manifest, write_manifest

        manifest = read_manifest(self.run_dir)
        manifest.backends[name] = info
        write_manifest(self.run_dir, manifest)

    def _open_web(self, cache: ResponseCache | None) -> Any:
        """The run's web session (started), recording into the run directory."""
        from toolsight.web import Limits, WebError, open_session
        from toolsight.web.summarise import model_completer

        complete = None
        if self.summarizer is not None:
            caller = ModelCaller(self.summarizer, max_connections=self.opts.scoring.judge_concurrency,
                                 retries=self.opts.control.retries, backoff_base=self.opts.control.backoff_base, cache=cache,
                                 max_retry_after=self.opts.control.max_retry_after, outage_timeout=self.opts.control.outage_timeout,
                                 label="summary model endpoint", on_event=self._emit)
            complete = model_completer(self.summarizer, generate=caller)
        limits = Limits(max_requests=self.opts.web.budget) if self.opts.web.budget else Limits()
        try:
            session = open_session(self.opts.web.backend, self.run_dir, default_corpus=self.loaded.web_corpus,
                                   summarizer=complete, summarizer_name=self.opts.web.summary_model, limits=limits)
            return session.start()
        except WebError as exc:
            raise RunError(str(exc)) from None


async def _first_failure(workers: list[asyncio.Task[None]]) -> RunAborted | None:
    """Wait for every worker; the first that fails stops the others. A RunAborted is returned (the
    run stops, records kept); any other exception is a bug and propagates."""
    try:
        done, pending = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
    except asyncio.CancelledError:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    for w in pending:
        w.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    failures = [e for e in (w.exception() for w in done) if e is not None]  # retrieve every one
    stops = [e for e in failures if isinstance(e, RunAborted)]
    for exc in failures:
        if not isinstance(exc, RunAborted):
            raise exc
    return stops[0] if stops else None


LIMITS = "limits.jsonl"  # the connection-limit changes of a run (toolsight.calls.limiter)


def _backends(tools: list[Any]) -> dict[str, Any]:
    """Which backend each tool runs on (perception detectors, OCR engines), for the manifest."""
    out: dict[str, Any] = {}
    for t in tools:
        info = getattr(t, "backend_info", None)
        if callable(info):
            out[t.name] = info()
    return out


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str] = {}
    for pkg in ("openai", "anthropic", "google-genai", "opencv-python-headless", "numpy", "pillow", "pydantic"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            continue
    return out


def _size_sandbox(concurrency: int) -> None:
    """Size the sandbox pool to the tasks in flight (capped: each server is a warm process)."""
    from toolsight import sandbox
    sandbox.configure(size=max(1, min(concurrency, 16)))


def _use_sandbox_backend(name: str) -> None:
    from toolsight import sandbox

    try:
        sandbox.use_backend(name)
    except ToolsightError as exc:
        raise RunError(f"--sandbox: {exc}") from None


def isolation(uses_sandbox: bool) -> dict[str, Any]:
    """The sandbox isolation in force, for the manifest (or that no sandbox is used)."""
    if not uses_sandbox:
        return {"sandbox": "not used"}
    from toolsight import sandbox
    return sandbox.isolation_report()


def load_for_run(bench: Benchmark, data: str | None) -> LoadedTasks:
    try:
        return bench.load(Path(data) if data else None)
    except BenchmarkError:
        raise
    except FileNotFoundError as exc:
        raise BenchmarkError(f"{exc}") from None
