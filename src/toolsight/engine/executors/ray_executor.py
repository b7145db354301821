"""The Ray executor (`--executor ray`): a run's tasks execute in Ray actors; the driver writes.

- **Workers**: `--ray-workers` actors (default: one per CPU of the cluster, at most --concurrency),
  spread over the nodes. Each is a `TaskWorker` (executors/worker.py) holding its model clients,
  tools and sandbox pool, running `ceil(concurrency / workers)` tasks at once with its share of
  `--max-connections` (its own adaptive limiter: AIMD flows share an endpoint fairly).
- **The driver stays the single writer** of the run directory: it opens, locks and plans the run
  as a local run does (the same `--resume`), sends (task id, epoch) pairs out, and writes each
  outcome that comes back — the task's artifact files (content-addressed names are checked against
  their bytes), then its record line, through the same group-commit writer.
- **Lost workers**: a task whose worker dies (process or node) never produced a record, so it goes
  back in the queue and runs on another worker; a replacement worker is started while the cluster
  has room. The driver writes one record per finished (task, epoch) and drops a second outcome for
  one it already wrote, so records are exactly-once as in local runs.
- **`--fail-on-error`**: counted by the driver as outcomes are written, as a local run counts; once
  reached, no new task is sent (those in flight finish and are written), and the run ends with exit 3
  and the rest left for `toolsight retry`/`--resume`.
- **What travels**: the run's options once per worker; a task id, epoch and content hash per task
  out; the record line and the artifact bytes back. Worker processes get the driver's provider
  variables (`*_API_KEY`, `*_BASE_URL`) and `TOOLSIGHT_*` in their runtime environment, so they can
  call the model; model-written code still never sees them (the sandbox's environment is clean).

Ray is imported on first use only: `--executor local` never needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import os
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from toolsight.calls.limiter import endpoint_key
from toolsight.engine.executors.worker import TaskOutcome, TaskWorker, WorkerConfig
from toolsight.engine.plan import Plan
from toolsight.engine.rundir import RunError
from toolsight.engine.runner import LIMITS, Runner, fail_on_error_reached
from toolsight.engine.store import RecordWriter, artifact_dir, is_disk_full, shared_inputs_dir
from toolsight.engine.summary import RunStopped, RunSummary
from toolsight.engine.task import disk_full
from toolsight.errors import RunAborted, ToolsightError

#: environment variables a worker needs to reach the model (passed in the actors' runtime env)
FORWARD_ENV = re.compile(r"^(?:[A-Z0-9_]+_API_KEY|[A-Z0-9_]+_BASE_URL|TOOLSIGHT_[A-Z0-9_]+)$")
_CONTENT_NAME = re.compile(r"^img-([0-9a-f]{12})\.[A-Za-z0-9]+$")
#: seconds to wait for a worker to start (a cluster with no free CPU would make it wait for ever)
START_TIMEOUT_ENV = "TOOLSIGHT_RAY_START_TIMEOUT"


def start_timeout() -> float:
    """TOOLSIGHT_RAY_START_TIMEOUT in seconds (default 300); a value that is not a positive number is a RunError."""
    raw = os.environ.get(START_TIMEOUT_ENV, "300")
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise RunError(f"{START_TIMEOUT_ENV}={raw!r}: not a positive number of seconds; set it to e.g. 300 or unset it")
    return value


class _Lost(Exception):
    """The worker of a call died or became unreachable: its task goes back in the queue."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RunError("--executor ray needs Ray: pip install 'toolsight[ray]'") from None
    return ray


_actor_class: Any = None
_joined: str | None = None  # the cluster this process joined: runs of one sweep share the connection
_connecting = threading.Lock()


def actor_class() -> Any:
    """The Ray actor around a TaskWorker (made on first use, so importing this module needs no Ray)."""
    global _actor_class
    if _actor_class is not None:
        return _actor_class
    ray = _ray()

    # Ray never retries or restarts it: the driver re-queues a lost worker's tasks itself (exactly once)
    @ray.remote(max_restarts=0, max_task_retries=0)
    class TaskActor:
        def __init__(self, config_json: str) -> None:
            self.error: str | None = None
            self.worker: TaskWorker | None = None
            try:
                self.worker = TaskWorker(WorkerConfig.model_validate_json(config_json))
            except Exception as exc:  # reported by start(): one line, not a Ray traceback
                self.error = str(exc) if isinstance(exc, ToolsightError) else f"{type(exc).__name__}: {exc}"

        async def start(self) -> dict[str, Any]:
            if self.worker is None:
                return {"error": self.error, "pid": os.getpid()}
            info = await self.worker.start()
            info["node"] = ray.get_runtime_context().get_node_id()
            return info

        async def run(self, task_id: str, epoch: int, task_hash: str | None) -> TaskOutcome:
            assert self.worker is not None
            return await self.worker.run(task_id, epoch, task_hash)

        async def close(self) -> None:
            if self.worker is not None:
                await self.worker.close()

    _actor_class = TaskActor
    return TaskActor


@dataclass
class _Worker:
    handle: Any
    index: int
    info: dict[str, Any] = field(default_factory=dict)
    alive: bool = True


Unit = tuple[str, int]  # (task id, epoch)


class RayExecutor:
    """See the module docstring."""

    name = "ray"
    runs_web = False  # a web session records into the run directory, which only the driver writes

    def __init__(self, address: str | None = None, workers: int | None = None, cpus_per_worker: float = 1.0,
                 max_replacements: int | None = None) -> None:
        self.address = address
        self.workers = workers
        self.cpus_per_worker = cpus_per_worker
        self.max_replacements = max_replacements
        self.nodes: set[str] = set()
        self.lost = 0

    def describe(self) -> dict[str, Any]:
        return {"name": "ray", "address": self.address or "local", "workers": self.workers,
                "cpus_per_worker": self.cpus_per_worker}

    # ---- connecting ---------------------------------------------------------------------------
    def preflight(self) -> None:
        """Before the run directory exists: Ray is installed, and the cluster answers at its address."""
        import importlib.util

        start_timeout()  # a bad TOOLSIGHT_RAY_START_TIMEOUT is reported before anything is written
        if importlib.util.find_spec("ray") is None:
            raise RunError("--executor ray needs Ray: pip install 'toolsight[ray]'")
        if self.address:
            _check_reachable(self.address)

    def connect(self) -> Any:
        """Import Ray and join the cluster (or start a single-node local instance), once per process."""
        with _connecting:
            return self._connect()

    def _connect(self) -> Any:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "error")  # Ray's C++ warnings would mix with the progress lines
        if self.address is None:
            # a local instance on 127.0.0.1 (Ray would otherwise bind the machine's outward address)
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        ray = _ray()
        env = {k: v for k, v in os.environ.items() if FORWARD_ENV.match(k)}
        global _joined
        if ray.is_initialized():
            if _joined == (self.address or "local"):
                return ray  # another run of this process (a sweep) joined it already
            ray.shutdown()
        kwargs: dict[str, Any] = {"namespace": "toolsight", "log_to_driver": False, "logging_level": "error",
                                  "runtime_env": {"env_vars": env} if env else None}
        try:
            if self.address:
                ray.init(address=self.address, **kwargs)
            else:
                # "local": always a new instance (never a cluster another process left running)
                ray.init(address="local", include_dashboard=False, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.address or "a local Ray instance"
            raise RunError(f"--executor ray: cannot connect to {where} ({_first_line(exc)}); check --ray-address "
                           "(host:port of the head node, e.g. 10.0.0.5:6379, or ray://host:10001)") from None
        _joined = self.address or "local"
        return ray

    def _worker_count(self, ray: Any, runner: Runner, n_units: int) -> int:
        if self.workers:
            return max(1, min(self.workers, n_units))
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        return max(1, min(int(cpus // self.cpus_per_worker) or 1, runner.opts.control.concurrency, n_units))

    # ---- the run ------------------------------------------------------------------------------
    async def execute(self, runner: Runner, plan: Plan) -> RunSummary:
        summary = plan.summary
        todo: deque[Unit] = deque((runner.selected.ids[n], epoch) for n, epoch in plan.todo)
        if not todo:
            runner.finalise(summary)
            return summary
        ray = await asyncio.to_thread(self.connect)
        try:
            writer = RecordWriter(runner.run_dir)
        except OSError as exc:
            if is_disk_full(exc):
                raise RunStopped(str(disk_full(exc)), summary) from None
            raise
        n = self._worker_count(ray, runner, len(todo))
        per_worker = max(1, math.ceil(runner.opts.control.concurrency / n))
        config = WorkerConfig(opts=_portable(runner), run_dir=str(runner.run_dir), concurrency=per_worker,
                              max_connections=max(1, math.ceil(runner.opts.model.max_connections / n)))
        driver = _Driver(self, runner, ray, writer, summary, todo, config, per_worker, plan.new_run)
        runner.emit(f"ray: {n} worker(s), {per_worker} task(s) at once each")
        try:
            await driver.run(n, self.max_replacements if self.max_replacements is not None else 2 * n)
        except asyncio.CancelledError:
            summary.interrupted = True
            raise
        finally:
            await driver.stop_workers()
            try:
                writer.close()
            except OSError as exc:
                driver.stop = driver.stop or (disk_full(exc) if is_disk_full(exc) else RunAborted(str(exc)))
            driver.limits_log.close()
            runner.record_sent()
        runner.finalise(summary)
        if driver.stop is not None:
            summary.stopped = str(driver.stop)
            raise RunStopped(str(driver.stop), summary)
        return summary


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """A --ray-address nobody answers at fails now, in one line (ray.init would wait for minutes)."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise RunError(f"--ray-address {address!r}: use HOST:PORT of the head node (e.g. 10.0.0.5:6379), "
                       "or ray://HOST:10001 for Ray Client")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise RunError(f"--ray-address {address}: nothing answers there ({exc}); start the cluster "
                       "(`ray start --head`) or check the address") from None


def _portable(runner: Runner) -> dict[str, Any]:
    """The run's options as a worker elsewhere needs them: paths absolute (workers have another cwd)."""
    opts = runner.opts.flat()
    for key in ("benchmark", "data"):
        val = opts.get(key)
        if val and Path(val).exists():
            opts[key] = str(Path(val).resolve())
    bench_opts = dict(opts.get("benchmark_options") or {})
    for key, val in bench_opts.items():  # a benchmark's file options (e.g. a prompts file) too
        if isinstance(val, str) and val and Path(val).exists():
            bench_opts[key] = str(Path(val).resolve())
    opts["benchmark_options"] = bench_opts
    return opts


class _Driver:
    """The driver's side of one run: feeds workers, writes outcomes, replaces lost workers."""

    def __init__(self, ex: RayExecutor, runner: Runner, ray: Any, writer: RecordWriter, summary: RunSummary,
                 todo: deque[Unit], config: WorkerConfig, per_worker: int, new_run: bool = True) -> None:
        self.ex = ex
        self.new_run = new_run
        self.isolation: dict[str, Any] = {}  # node id -> the sandbox isolation its workers found
        self.runner = runner
        self.ray = ray
        self.writer = writer
        self.summary = summary
        self.todo = todo
        self.config_json = config.model_dump_json()
        self.per_worker = per_worker
        self.workers: list[_Worker] = []
        self.inflight: dict[Unit, _Worker] = {}
        self.done: set[Unit] = set()
        self.stop: RunAborted | None = None
        self.changed = asyncio.Condition()
        m = runner.opts.model
        self.limits = WorkerLimits(endpoint_key(m.spec, m.base_url, m.endpoint))
        summary.limiters = [self.limits]
        self.limits_log = _LimitsLog(runner.run_dir / LIMITS, self.limits)
        import ray.exceptions as rex

        # the call's worker (process or node) is gone: its task goes back in the queue
        names = ("RayActorError", "WorkerCrashedError", "NodeDiedError", "ObjectLostError", "OwnerDiedError",
                 "ActorDiedError", "ActorUnavailableError")
        self.lost_errors: tuple[type[BaseException], ...] = tuple(
            t for t in (getattr(rex, n, None) for n in names) if isinstance(t, type) and issubclass(t, BaseException))

    async def run(self, n: int, replacements: int) -> None:
        # each worker is fed as soon as it has started: waiting for all of them first could deadlock
        # two runs of a sweep that each hold part of the cluster's CPUs while waiting for the rest
        drivers = {asyncio.create_task(self._life(i), name=f"toolsight-ray-{i}") for i in range(n)}
        try:
            await self._supervise(drivers, n, replacements)
        finally:  # finished, interrupted (Ctrl-C) or failed: no feeder or start may outlive the run
            for d in drivers:
                d.cancel()
            await asyncio.gather(*drivers, return_exceptions=True)
            if self.new_run and self.ex.nodes:  # where the tasks ran, and each node's sandbox isolation
                info = {**self.ex.describe(), "workers": len(self.workers), "nodes": sorted(self.ex.nodes)}
                if self.isolation:
                    info["isolation"] = self.isolation
                self.runner.record_backend("executor", info)

    async def _life(self, index: int) -> None:
        await self._drive(await self._spawn(index))

    async def _supervise(self, drivers: set[asyncio.Task[None]], n: int, replacements: int) -> None:
        """Wait for the workers; replace a lost worker while tasks remain; stop waiting for workers
        still starting once nothing is left to do. `drivers` is updated in place, so the caller can
        cancel what is still running."""
        index = n
        while drivers:
            done, _ = await asyncio.wait(drivers, return_when=asyncio.FIRST_COMPLETED)
            drivers -= done
            for d in done:
                exc = d.exception()
                if isinstance(exc, RunAborted):  # a worker could not start: the others go on
                    self.runner.emit(f"ray: {exc}")
                    await self._give_up_if_none_left(exc)
                    continue
                if exc is not None and not isinstance(exc, _Lost):
                    raise exc
                if exc is None or self.stop is not None or not (self.todo or self.inflight):
                    continue
                if replacements <= 0:
                    await self._give_up_if_none_left(RunAborted(
                        f"every Ray worker was lost ({self.ex.lost}); {len(self.todo)} task(s) not run — "
                        "resume to run them"))
                    continue
                replacements -= 1
                self.runner.emit(f"ray: starting a replacement worker ({len(self.todo)} task(s) queued)")
                drivers.add(asyncio.create_task(self._life(index), name=f"toolsight-ray-{index}"))
                index += 1
            if self.stop is not None or not (self.todo or self.inflight):
                return  # what remains are workers still waiting for a CPU: the caller cancels them

    async def _give_up_if_none_left(self, why: RunAborted) -> None:
        if not any(w.alive for w in self.workers):
            self.stop = self.stop or why
            async with self.changed:
                self.changed.notify_all()

    async def _spawn(self, index: int) -> _Worker:
        actor = actor_class().options(num_cpus=self.ex.cpus_per_worker, scheduling_strategy="SPREAD")
        handle = actor.remote(self.config_json)
        w = _Worker(handle, index)
        self.workers.append(w)
        try:
            info = await asyncio.wait_for(_await(handle.start.remote()), start_timeout())
        except TimeoutError:
            w.alive = False
            self.ray.kill(handle)
            raise RunAborted(f"no Ray worker could start within {start_timeout():.0f} s (the cluster has no free "
                             f"{self.ex.cpus_per_worker:g} CPU?); resume when it has room") from None
        except self.lost_errors as exc:
            w.alive = False
            raise RunAborted(f"a Ray worker could not start: {_first_line(exc)}") from None
        if info.get("error"):
            w.alive = False
            self.ray.kill(handle)
            raise RunAborted(f"a Ray worker could not load the run: {info['error']}")
        w.info = info
        node = str(info.get("node"))
        self.ex.nodes.add(node)
        iso = info.get("isolation")
        if isinstance(iso, dict) and node not in self.isolation:
            self.isolation[node] = iso
            for warning in iso.get("warnings") or []:
                self.runner.emit(f"ray: node {node[:12]}: sandbox: {warning}")
        self.runner.emit(f"ray: worker {info.get('worker')} (pid {info.get('pid')}) started on node "
                          f"{str(info.get('node'))[:12]}")
        return w

    async def _drive(self, w: _Worker) -> None:
        feeders = [asyncio.create_task(self._feed(w)) for _ in range(self.per_worker)]
        try:
            results = await asyncio.gather(*feeders, return_exceptions=True)
        except asyncio.CancelledError:
            for f in feeders:
                f.cancel()
            await asyncio.gather(*feeders, return_exceptions=True)
            raise
        errors = [r for r in results if isinstance(r, BaseException)]
        for e in errors:
            if not isinstance(e, _Lost):
                raise e
        if errors:
            raise errors[0]

    async def _next(self, w: _Worker) -> Unit | None:
        """The next unit for worker `w`, waiting while others may still put units back; None = finished."""
        async with self.changed:
            while True:
                if self.stop is not None or not w.alive or self.summary.failed_early is not None:
                    return None
                if self.todo:
                    unit = self.todo.popleft()
                    self.inflight[unit] = w
                    return unit
                if not self.inflight:
                    return None
                await self.changed.wait()

    async def _feed(self, w: _Worker) -> None:
        while True:
            unit = await self._next(w)
            if unit is None:
                return
            tid, epoch = unit
            try:
                out: TaskOutcome = await _await(
                    w.handle.run.remote(tid, epoch, self.runner.task_hashes.get(tid)))
            except self.lost_errors as exc:
                await self._requeue(w, unit, exc)
                raise _Lost(str(exc)) from None
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the worker failed outside the task (a bug): an error record, go on
                out = _harness_error(self.runner, tid, epoch, exc)
            try:
                self._ingest(out)
            finally:
                async with self.changed:
                    self.inflight.pop(unit, None)
                    self.changed.notify_all()

    async def _requeue(self, w: _Worker, unit: Unit, exc: BaseException) -> None:
        async with self.changed:
            if w.alive:
                w.alive = False
                self.ex.lost += 1
                self.runner.emit(f"ray: worker {w.info.get('worker', w.index)} lost ({_first_line(exc)})")
                with contextlib.suppress(Exception):
                    self.ray.kill(w.handle)
            self.inflight.pop(unit, None)
            if unit not in self.done and self.summary.failed_early is None:
                self.todo.appendleft(unit)  # never ran to a record: it runs again, once (or on resume)
            self.changed.notify_all()

    def _ingest(self, out: TaskOutcome) -> None:
        """Write one outcome: the artifacts, then the record (as the local runner does)."""
        unit = (out.task_id, out.epoch)
        self.limits_log.write(out.limits)
        self.runner.tasks.sent.absorb(out.sent)  # what its requests carried, for the manifest
        if out.abort is not None:
            if self.stop is None:
                self.stop = RunAborted(out.abort, exit_code=out.abort_code)
            return  # not recorded: it runs on resume
        if unit in self.done:  # a second outcome for a written unit: never a second record
            return
        if self.writer.error is not None:
            err = self.writer.error
            self.stop = disk_full(err) if is_disk_full(err) else RunAborted(f"cannot write records: {err}")
            return
        try:
            write_artifacts(self.runner.run_dir, out.task_id, out.epoch, out.files, out.inputs)
            self.writer.write_line(out.line)
        except OSError as exc:
            self.stop = disk_full(exc) if is_disk_full(exc) else RunAborted(f"cannot write the run: {exc}")
            return
        self.done.add(unit)
        count_outcome(self.summary, out.counts)
        if self.summary.failed_early is None and (why := fail_on_error_reached(self.runner.opts, self.summary)):
            self.summary.failed_early = why  # as a local run: no new task starts, those in flight finish
            self.runner.emit(f"stopping: {why}; the tasks in flight finish, the rest are left for "
                             f"`toolsight retry {self.runner.run_dir}`")
            self.todo.clear()
        if self.runner.on_progress is not None:
            self.runner.on_progress(self.summary, self.summary.stats)

    async def stop_workers(self) -> None:
        for w in self.workers:
            if w.alive and w.info:  # started: let it shut its sandbox down; one still starting is just killed
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(_await(w.handle.close.remote()), 30)
            with contextlib.suppress(Exception):
                self.ray.kill(w.handle)


async def _await(ref: Any) -> Any:
    return await ref


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def write_artifacts(run_dir: Path, task_id: str, epoch: int, files: dict[str, bytes],
                    inputs: dict[str, bytes] | None = None) -> None:
    """Put a task's artifacts in its folder of the run directory (a partial folder from a lost
    attempt is replaced; a task that needed no folder gets none), and the shared input copies a
    worker sent into `RUN/artifacts/.inputs/`. A path must stay inside the folder; a
    content-addressed name must match its bytes."""
    import shutil

    from toolsight.agents.inputs import SharedInputs

    shared = SharedInputs(shared_inputs_dir(run_dir))
    for name, data in (inputs or {}).items():
        m = _CONTENT_NAME.match(name)
        digest = hashlib.sha256(data).hexdigest()
        if m is None or digest[:12] != m.group(1):
            raise OSError(f"task {task_id}: a worker sent a shared input {name!r} whose name is not its content hash")
        shared.keep(data, PurePosixPath(name).suffix, digest)
    ws = artifact_dir(run_dir, task_id, epoch)
    if ws.exists():
        shutil.rmtree(ws)
    if not files:
        return
    ws.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        rel = PurePosixPath(name)
        if not name or "\0" in name or rel.is_absolute() or any(p in ("", ".", "..") for p in rel.parts):
            raise OSError(f"task {task_id}: a worker sent an artifact with a bad name {name!r}")
        m = _CONTENT_NAME.match(rel.name)
        if m is not None and hashlib.sha256(data).hexdigest()[:12] != m.group(1):
            raise OSError(f"task {task_id}: artifact {name} arrived damaged (its bytes do not match its hash)")
        dest = ws.joinpath(*rel.parts)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)


def count_outcome(summary: RunSummary, c: dict[str, Any]) -> None:
    """Count a worker's outcome as the local runner counts a record, and its calls as the local
    runner's model caller does (the driver has no caller of its own)."""
    summary.count(c)
    st = summary.stats
    st.calls += int(c.get("model_calls", 0))
    st.retries += int(c.get("retries", 0))
    st.cache_hits += int(c.get("cache_hits", 0))
    st.tokens += int(c.get("tokens", 0))


def _harness_error(runner: Runner, task_id: str, epoch: int, exc: BaseException) -> TaskOutcome:
    from toolsight.engine.store import record_line
    from toolsight.log.record import Record

    error = f"harness error: ray worker: {_first_line(exc)}"
    rec = Record(task_id=task_id, epoch=epoch, benchmark=runner.bench.name, setting=runner.setting_name,
                 model=runner.opts.model.spec, error=error, started_at=time.time(),
                 task_hash=runner.task_hashes.get(task_id))
    return TaskOutcome(task_id=task_id, epoch=epoch, line=record_line(rec), counts={"error": error})


class WorkerLimits:
    """The sum of the workers' connection limits on one endpoint, from the changes they report: what
    the progress line shows (`limit 12/16`) and the summary line's cuts. `overloads` counts the
    cuts an overload caused (a worker reports changes, not each 429)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.adaptive = True
        self.cuts = 0
        self.overloads = 0
        self._now: dict[str, int] = {}
        self._max: dict[str, int] = {}

    @property
    def current(self) -> int:
        return sum(self._now.values())

    @property
    def max_limit(self) -> int:
        return sum(self._max.values())

    def note(self, change: dict[str, Any]) -> None:
        if change.get("endpoint") != self.key:
            return
        worker, limit = str(change.get("worker")), int(change.get("limit", 0))
        self._now[worker] = limit
        if change.get("reason") == "run-start":
            self._max[worker] = limit  # a limit starts at its maximum (--max-connections' share)
        elif change.get("reason") in ("overload", "latency"):
            self.cuts += 1
            self.overloads += change.get("reason") == "overload"

    def status(self) -> str:
        return f"{self.current}/{self.max_limit}"


class _LimitsLog:
    """The workers' limit changes, appended to RUN/limits.jsonl as they arrive (and shown by `view`)."""

    def __init__(self, path: Path, view: WorkerLimits | None = None) -> None:
        self.path = path
        self.view = view
        self._fh: Any = None

    def write(self, changes: list[dict[str, Any]]) -> None:
        if not changes:
            return
        if self.view is not None:
            for c in changes:
                self.view.note(c)
        with contextlib.suppress(OSError):
            if self._fh is None:
                self._fh = self.path.open("a", encoding="utf-8")
            self._fh.write("".join(json.dumps(c) + "\n" for c in changes))
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()

