"""The runner: one benchmark setting, one model, one run directory; tasks run concurrently on one
event loop and their records go to the run directory as they finish.

The runner builds what a run needs (the setting with its caps, the tools, the scorer, the selected
tasks), opens and locks the run directory (`rundir`) with a new manifest (`manifest`), plans what is
left to do (`plan`), and runs the plan: each (task, epoch) through `TaskRunner` (`task`), with the
model behind a `ModelCaller` (per-model connection limit, retries, the outage breaker, the response
cache) and a separate caller for the judge, and each record written by the one `RecordWriter`.
A task that fails becomes a record with an error and the run goes on; what no task can survive (the
endpoint down past `--outage-timeout`, rejected credentials, a full disk) stops the run with
`RunStopped`, keeping every finished record (`summary`). An executor (`executors/`) may run the
plan's tasks elsewhere; the runner stays the run directory's only writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from toolsight import imaging
from toolsight.agents.registry import agent_toolsets
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.base import Benchmark, BenchmarkError, LoadedTasks
from toolsight.calls.cache import ResponseCache
from toolsight.calls.limiter import EndpointLimiter, LimitChange, LimiterPool, endpoint_key
from toolsight.calls.retry import CallStats, ModelCaller
from toolsight.calls.sent import SentLog
from toolsight.calls.task import CallerModel, model_completer
from toolsight.engine.batch_mode import (
    BATCH_TASK_TIMEOUT_S,
    BatchRoutes,
    check_batch_model,
    check_batch_setting,
    open_submissions,
    tuning,
)
from toolsight.engine.manifest import RunFacts, dataset_info, new_manifest
from toolsight.engine.memory import tune_malloc
from toolsight.engine.options import DEFAULT_TASK_TIMEOUT_S, RunOptions, runs_root
from toolsight.engine.plan import Plan, PlanInput, plan_run
from toolsight.engine.rundir import RunError, open_run_dir
from toolsight.engine.store import CACHE, RecordWriter, is_disk_full
from toolsight.engine.summary import RunStopped, RunSummary, record_counts
from toolsight.engine.task import TaskRunner, disk_full
from toolsight.errors import RunAborted, ToolsightError, one_line
from toolsight.log.files import (
    RECORDS,
    atomic_write_text,
    complete_lines,
    iter_latest_records,
    read_manifest,
    write_manifest,
)
from toolsight.log.record import Record, record_key
from toolsight.log.status import STATUS, RunStatus
from toolsight.models.base import GenerateConfig, Model
from toolsight.models.images import forget_image_bytes
from toolsight.scoring.base import ScoreContext, Scorer
from toolsight.scoring.judge import judge_need
from toolsight.tasks.dataset import dataset_hash, task_hashes
from toolsight.tasks.select import SelectionError, select_tasks
from toolsight.tasks.taskset import TaskSet
from toolsight.tools.registry import build_tools, needs_sandbox, needs_web

LIMITS = "limits.jsonl"  # the connection-limit changes of a run (toolsight.calls.limiter)


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


class TaskExecutor(Protocol):
    """Runs a plan's tasks somewhere other than the runner's own event loop (toolsight.engine.executors).
    The runner has opened, locked and planned the run directory; the executor writes each finished
    task's artifacts and record into it (it is the run's only writer), records itself in a new
    run's manifest (`backends.executor`) and returns the summary."""

    name: str
    runs_web: bool  # whether it can run web tool sets (their recordings must land in the run directory)

    async def execute(self, runner: Runner, plan: Plan) -> RunSummary: ...


def fail_on_error_reached(opts: RunOptions, summary: RunSummary) -> str | None:
    """Why the run stops early under `--fail-on-error` (None: it goes on). N >= 1: N tasks (this
    invocation's) ended in a run error; 0 < F < 1: more than F of the selected task-epochs did."""
    limit = opts.control.fail_on_error
    errors = sum(summary.ran.errors.values())
    if limit is None or errors == 0:
        return None
    if limit >= 1 and errors >= limit:
        return f"{errors} task(s) ended in error (--fail-on-error {limit:g})"
    if limit < 1 and errors > limit * max(1, summary.total):
        return f"{errors} of {summary.total} task(s) ended in error, over {limit:g} (--fail-on-error {limit:g})"
    return None


def default_run_dir(opts: RunOptions, setting: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    model = opts.model.spec.replace("/", "_").replace(":", "_")
    return runs_root() / f"{opts.benchmark.replace('/', '_')}-{setting}-{model}-{stamp}"


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
        if opts.control.batch and not opts.control.task_timeout:  # a task waits for its batch (up to 24 h)
            self.task_timeout = max(self.task_timeout, BATCH_TASK_TIMEOUT_S)
        self.opts = opts = opts.replace(loop=self.settings.loop, task_timeout=self.task_timeout)
        if opts.control.out is not None and not opts.control.out.strip():
            raise RunError("--out '': an empty run directory name; give a folder, or leave --out out for "
                           "runs/NAME-TIME")
        self.run_dir = Path(opts.control.out) if opts.control.out else default_run_dir(opts, self.setting_name)
        self.on_progress = on_progress
        self.on_event = on_event
        self.judge_model = judge
        bench.configure(opts.benchmark_options)  # the benchmark's own options, checked before anything runs
        bind = getattr(model, "bind_dataset", None)
        if callable(bind):
            bind(loaded.root)
        self.scorer: Scorer | None = bench.scorer(self.setting_name, opts.scoring.scorer_mode) if opts.scoring.score else None

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
        if opts.web.backend is not None:  # a bad --web is reported before anything runs, web tools or not
            from toolsight.web import WebError, parse_web_spec

            try:
                parse_web_spec(opts.web.backend)
            except WebError as exc:
                raise RunError(str(exc)) from None
        self.task_hashes: dict[str, str] = {}
        self.tasks = TaskRunner(
            bench=bench, setting_name=self.setting_name, settings=self.settings, tools=self.tools, model=model,
            model_spec=opts.model.spec, scorer=self.scorer, run_dir=self.run_dir, dataset_root=loaded.root,
            task_timeout=self.task_timeout, task_hashes=self.task_hashes)
        # the tasks this run covers, chosen now so a bad --task-id / --tag fails before the run
        # directory exists
        self.selected = self._select()
        if loaded.fetch is not None:  # the selected tasks' remote images only (not the whole dataset's)
            loaded.fetch(self.selected)
        self._preflight()
        if opts.control.epochs > 1 or opts.scoring.epochs_reducer is not None:
            from toolsight.metrics.epochs import DEFAULT_REDUCER, check_reducer

            reducer = opts.scoring.epochs_reducer or getattr(self.scorer, "reducer", None) or DEFAULT_REDUCER
            try:
                check_reducer(reducer)
            except ValueError as exc:
                raise RunError(f"--epochs-reducer: {exc}") from None
            self.opts = opts = opts.replace(epochs_reducer=reducer)

    def _preflight(self) -> None:
        """Refuse, before the run directory exists, a run that could not do what it is asked: scoring
        that needs an LLM judge with none given, web tools on a live web that is not usable, batch
        mode where it cannot work."""
        if self.opts.control.batch:
            if self.executor is not None:
                raise RunError(f"--batch runs with --executor local only (not {self.executor.name})")
            check_batch_setting(self.opts.control.batch, self.setting_name, list(self.settings.tools),
                                one_call=self.bench.one_call_per_task(self.settings, self.model))
            check_batch_model(self.model, "--batch")
        if self.opts.scoring.judge_batch:
            if self.judge_model is None:
                raise RunError("--judge-batch: no judge to batch; pass --judge MODEL too")
            check_batch_model(self.judge_model, "--judge-batch")
        if self.scorer is not None and self.judge_model is None and not getattr(self.model, "answers_with_gold", False):
            why = judge_need(self.scorer, self.selected)
            if why:
                raise RunError(f"{self.bench.name} scores with {self.scorer.name!r}, which needs an LLM judge: {why}. "
                               "Pass --judge MODEL (e.g. --judge openai/gpt-4o), or --no-score to run the model now "
                               "and score later with `toolsight score RUN --judge MODEL`")
        if self.uses_web:
            from toolsight.web import WebError
            from toolsight.web.preflight import check_live, resolved_mode

            try:
                if resolved_mode(self.opts.web.backend, self.loaded.web_corpus) == "live":
                    check_live()
            except WebError as exc:
                raise RunError(str(exc)) from None

    def _select(self) -> TaskSet:
        """--tag / --task-id, then --limit, then the setting's own expansion (`tasks_for`); held as
        a compact TaskSet (a run of 10,000 tasks does not hold 10,000 built tasks)."""

        try:
            return select_tasks(self.loaded.tasks, self.opts.control.task_ids, self.opts.control.tags, self.opts.control.limit,
                                expand=lambda ts: self.bench.tasks_for(self.setting_name, ts))
        except SelectionError as exc:
            raise RunError(f"{exc} (in {self.loaded.source})") from None

    def emit(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    # ---- the run ------------------------------------------------------------------------------
    async def run(self) -> RunSummary:
        # a benchmark's or tool's module that imported Pillow itself gets toolsight's pixel limit; a
        # run that never needs Pillow does not import it (toolsight.imaging.pil)
        imaging.guard_pil_if_loaded()
        tune_malloc()  # freed request bodies go back to the system (engine/memory.py)
        self.task_hashes.update(await asyncio.to_thread(task_hashes, self.loaded.tasks, self.loaded.root,
                                                          self.loaded.remote_images))
        identity = self.opts.identity(self.bench.name, self.setting_name, dataset_hash(self.task_hashes))
        try:
            lock, old = open_run_dir(self.run_dir, lambda: new_manifest(self._facts(), identity), self.opts.control.resume)
        except OSError as exc:
            if is_disk_full(exc):
                raise RunStopped(str(disk_full(exc)), RunSummary(self.run_dir, len(self.loaded.tasks))) from None
            raise RunError(f"cannot create the run directory {self.run_dir}: {exc}") from None
        if old is None and self.opts.control.resume:
            self.emit(f"note: {self.run_dir} held no run yet; started a new one")
        try:
            try:
                plan = plan_run(PlanInput(
                    run_dir=self.run_dir, ids=self.selected.ids, opts=self.opts, identity=identity,
                    task_hashes=self.task_hashes, dataset_info=lambda h: dataset_info(self.loaded, h),
                    emit=self.emit), old)
            except OSError as exc:
                if is_disk_full(exc):
                    raise RunStopped(str(disk_full(exc)), RunSummary(self.run_dir, len(self.loaded.tasks))) from None
                raise
            if self.executor is not None:
                summary = await self.executor.execute(self, plan)
            else:
                summary = await self._execute(plan)
            self._write_status(summary)
            return summary
        except RunStopped as exc:
            self._write_status(exc.summary, reason=str(exc))
            raise
        except (asyncio.CancelledError, KeyboardInterrupt):
            self._write_status(None, reason="interrupted (Ctrl-C)")
            raise
        finally:
            lock.release()

    def _write_status(self, summary: RunSummary | None, reason: str | None = None) -> None:
        """status.json: how this invocation ended (`toolsight runs` reads it); never fails the run."""
        why = reason or (summary.failed_early if summary is not None else None)
        if summary is not None and summary.interrupted:
            why = why or "interrupted (Ctrl-C)"
        status = RunStatus(
            state="interrupted" if why else "finished",
            selected=len(self.selected) * self.opts.control.epochs,
            done=summary.done if summary is not None else 0,
            errors=sum(summary.ran.errors.values()) if summary is not None else 0,
            exit_code=summary.exit_code if summary is not None else None, reason=why,
            ended=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        with contextlib.suppress(OSError):
            atomic_write_text(self.run_dir / STATUS, status.model_dump_json(indent=1) + "\n")

    def _facts(self) -> RunFacts:
        return RunFacts(benchmark=self.bench.name, setting=self.setting_name, opts=self.opts, settings=self.settings,
                        loaded=self.loaded, tools=self.tools, model=self.model, uses_sandbox=self.uses_sandbox,
                        specs=self.bench.offered_specs(self.settings, self.tools))

    def _open_cache(self) -> ResponseCache | None:
        if not self.opts.control.cache:
            return None
        try:
            return ResponseCache(self.run_dir / CACHE)
        except (sqlite3.Error, OSError) as exc:
            self.emit(f"warning: response cache off ({exc})")
            return None

    async def _execute(self, plan: Plan) -> RunSummary:
        summary, todo = plan.summary, plan.todo
        cache = self._open_cache()
        caller = self.caller_for(self.model, self.opts.model.max_connections, cache, limiter=self.model_limiter())
        summary.stats = caller.stats
        judge_caller: ModelCaller | None = None
        judge: Model | None = None
        if self.judge_model is not None:
            judge_caller = self.caller_for(self.judge_model, self.opts.scoring.judge_concurrency, cache,
                                           label="judge endpoint", limiter=self.judge_limiter())
            judge = CallerModel(judge_caller)
        ctx = ScoreContext(judge=judge, judge_width=self.opts.control.batch_size
                           if self.opts.scoring.judge_batch and judge is not None else None)
        batches = self._open_batches(caller, judge_caller)
        summary.batch = batches.stats
        if self.uses_sandbox:
            _size_sandbox(min(self.opts.control.concurrency, max(1, len(todo))))
        try:
            web = self._open_web(cache) if self.uses_web else None
        except RunError:
            await batches.aclose()
            await self._close(cache, caller, judge_caller)
            raise
        if web is not None and plan.new_run:
            self.record_backend("web", web.describe())
        for note in (t.startup_warning(web) for t in self.tools) if web is not None else ():
            if note:  # what a tool cannot do as its reference did with this web set-up
                self.emit(f"warning: {note}")
        try:
            writer = RecordWriter(self.run_dir)
        except OSError as exc:
            if web is not None:
                await web.aclose()
            await batches.aclose()
            await self._close(cache, caller, judge_caller)
            if is_disk_full(exc):
                raise RunStopped(str(disk_full(exc)), summary) from None
            raise
        pending = _pending_records(self.run_dir, {record_key(self.selected.ids[n], e) for n, e in plan.rescore})
        self._lines_at_start = _record_lines(self.run_dir)
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
                task = self.selected[n]
                old = pending.get(record_key(task.id, epoch)) if (n, epoch) in plan.rescore else None
                rec = (await self.tasks.score(task, old, ctx) if old is not None
                       else await self.tasks.run(task, caller, ctx, epoch))
                check_writer()
                try:
                    writer.write(rec)
                except OSError:  # the writer thread failed just now
                    check_writer()
                    raise
                self._count(summary, rec)
                if summary.failed_early is None and (why := fail_on_error_reached(self.opts, summary)):
                    summary.failed_early = why
                    self.emit(f"stopping: {why}; the tasks in flight finish, the rest are left for "
                              f"`toolsight retry {self.run_dir}`")
                    while not queue.empty():  # no new task starts; those in flight finish and are written
                        queue.get_nowait()
                if self.on_progress:
                    self.on_progress(summary, caller.stats)

        stop: RunAborted | None = None
        # under batch mode tasks mostly wait for their batch: enough in flight to fill one
        width = max(self.opts.control.concurrency, self.opts.control.batch_size if batches.routes else 0)
        n = max(1, min(width, len(todo) or 1))
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
            self.record_sent()
            await batches.aclose()
            await self._close(cache, caller, judge_caller)
        self.finalise(summary)
        forget_image_bytes()  # the run's images are sent no more: the report after it needs the memory
        if stop is not None:
            summary.stopped = str(stop)
            raise RunStopped(str(stop), summary)
        return summary

    def _open_batches(self, caller: ModelCaller, judge_caller: ModelCaller | None) -> BatchRoutes:
        """Batch mode's routes for the model (`--batch`) and the judge (`--judge-batch`), over the run
        directory's journal."""
        routes = BatchRoutes()
        c = self.opts.control
        if not c.batch and not self.opts.scoring.judge_batch and (n := open_submissions(self.run_dir)):
            self.emit(f"warning: {self.run_dir}/batches.jsonl holds {n} submitted batch(es) never collected (billed "
                      "all the same); resume with --batch (and --judge-batch if a judge's) to collect them instead "
                      "of asking again on-line")
        tune = tuning(c.batch_size, c.batch_idle, c.batch_poll, c.batch_retry)
        try:
            if c.batch:
                routes.attach("model", caller, tune, self.run_dir)
            if self.opts.scoring.judge_batch and judge_caller is not None:
                routes.attach("judge", judge_caller, tune, self.run_dir)
        except OSError as exc:
            raise RunError(f"cannot open the batch journal in {self.run_dir}: {exc}") from None
        return routes

    def finalise(self, summary: RunSummary) -> None:
        """Count the whole run's latest records into the summary (a resumed run's too), when it ends."""
        ids = self.selected.ids
        keys = [record_key(ids[n], e) for e in range(1, self.opts.control.epochs + 1) for n in range(len(ids))]
        summary.scoring = self.scorer is not None
        with contextlib.suppress(OSError):  # a full disk: the live counts stand
            start = getattr(self, "_lines_at_start", None)
            written = _record_lines(self.run_dir) - start if start is not None else None
            if start == 0 and written == summary.done and not summary.rescored:
                summary.whole = summary.ran  # the run's every record was written and counted by this invocation
            else:
                summary.finalise(keys)
            if written is not None:  # what this invocation really wrote (a full disk loses the last ones)
                summary.done = min(summary.done, written)

    @staticmethod
    def _count(summary: RunSummary, rec: Record) -> None:
        summary.count(record_counts(rec, summary.prices))

    def caller_for(self, model: Model, max_connections: int, cache: ResponseCache | None, *,
                   label: str = "model endpoint", limiter: EndpointLimiter | None = None) -> ModelCaller:
        """A ModelCaller for one of the run's models with the run's retry, back-off and outage rules."""
        c = self.opts.control
        return ModelCaller(model, max_connections=max_connections, retries=c.retries, backoff_base=c.backoff_base,
                           cache=cache, max_retry_after=c.max_retry_after, outage_timeout=c.outage_timeout,
                           label=label, on_event=self.emit, limiter=limiter)

    async def _close(self, cache: ResponseCache | None, *callers: ModelCaller | None) -> None:
        for c in callers:
            if c is not None:
                await c.aclose()
        if cache is not None:
            cache.close()
            if cache.broken:
                self.emit(f"warning: the response cache was switched off during the run ({cache.broken})")
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
            self.emit(f"warning: cannot record connection limits ({exc})")
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

    def record_sent(self) -> None:
        """Add what this invocation's requests carried (tools, prompts) to the manifest's `sent` block,
        on top of what earlier invocations of a resumed run recorded. A full disk keeps the old block."""
        if not self.tasks.sent.requests:
            return
        with contextlib.suppress(OSError):
            manifest = read_manifest(self.run_dir)
            manifest.sent = self.tasks.sent.snapshot(manifest.sent)
            write_manifest(self.run_dir, manifest)
            self.tasks.sent = SentLog()  # recorded: a second write in this process must not count it twice

    def record_backend(self, name: str, info: dict[str, Any]) -> None:
        """Add which backend an interface runs on to a new run's manifest (written atomically)."""

        manifest = read_manifest(self.run_dir)
        manifest.backends[name] = info
        write_manifest(self.run_dir, manifest)

    def _open_web(self, cache: ResponseCache | None) -> Any:
        """The run's web session (started), recording into the run directory."""
        from toolsight.web import Limits, WebError, open_session

        complete = None
        if self.summarizer is not None:
            caller = self.caller_for(self.summarizer, self.opts.scoring.judge_concurrency, cache,
                                     label="summary model endpoint")
            complete = model_completer(self.summarizer, generate=caller)
        limits = Limits(max_requests=self.opts.web.budget) if self.opts.web.budget else Limits()
        try:
            session = open_session(self.opts.web.backend, self.run_dir, default_corpus=self.loaded.web_corpus,
                                   summarizer=complete, summarizer_name=self.opts.web.summary_model, limits=limits)
            return session.start()
        except WebError as exc:
            raise RunError(str(exc)) from None


def _record_lines(run_dir: Path) -> int:
    return sum(1 for _ in complete_lines(run_dir / RECORDS))


def _pending_records(run_dir: Path, keys: set[str]) -> dict[str, Record]:
    """The latest records of the units whose score is pending (their trajectories are scored now)."""
    if not keys:
        return {}
    return {r.key: r for r in iter_latest_records(run_dir) if r.key in keys}


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


def load_for_run(bench: Benchmark, data: str | None) -> LoadedTasks:
    try:
        return bench.load(Path(data) if data else None)
    except BenchmarkError:
        raise
    except FileNotFoundError as exc:
        raise BenchmarkError(f"{exc}") from None
