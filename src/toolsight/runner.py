"""The runner: tasks run concurrently on one event loop, records go to the run directory.

Per-model connection limit and a separate judge limit; finite retries with backoff (in
ModelCaller); a per-task wall-clock limit; resume that skips finished tasks and refuses a changed
configuration unless forced. A task that fails becomes a record with an error — the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import platform
import shutil
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

import toolsight
from toolsight.agents.loop import TaskFailed, register_inputs
from toolsight.agents.settings import AgentSettings
from toolsight.agents.trajectory import Trajectory
from toolsight.benchmarks.base import Benchmark, BenchmarkError, LoadedTasks
from toolsight.cache import ResponseCache
from toolsight.errors import ToolsightError
from toolsight.log.manifest import Manifest
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput
from toolsight.record import Record
from toolsight.retry import CallStats, ModelCaller
from toolsight.scoring.base import Score, ScoreContext, Scorer
from toolsight.store import (
    CACHE,
    MANIFEST,
    RecordWriter,
    artifact_dir,
    finished_ids,
    read_manifest,
    write_manifest,
)
from toolsight.tasks.schema import Task
from toolsight.tools.base import ArtifactStore, Toolbox, ToolSpec
from toolsight.tools.registry import build_tools, needs_sandbox


class RunError(ToolsightError):
    """A user-fixable problem starting a run (one clear message)."""


class RunOptions(BaseModel):
    """Everything that defines a run. The `config_hash` of the defining fields guards --resume."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    model: str
    setting: str | None = None
    loop: str | None = Field(default=None, description="official | toolsight; None = the setting's own mode")
    data: str | None = None
    base_url: str | None = None
    out: str | None = None
    concurrency: int = 8
    max_connections: int = 32
    judge: str | None = None
    judge_base_url: str | None = None
    judge_concurrency: int = 8
    retries: int = 5
    backoff_base: float = 1.0
    task_timeout: float = 1200.0
    limit: int | None = None
    resume: bool = False
    force: bool = False
    score: bool = True
    scorer_mode: str = "official"
    cache: bool = True
    generate: GenerateConfig = Field(default_factory=GenerateConfig)
    caps: dict[str, Any] = Field(default_factory=dict, description="overrides for AgentSettings caps")
    demo_prompts: str | None = Field(default=None, description="TIR-Bench demo_prompts.py for LLM answer extraction")
    agent: str | None = Field(default=None, description="agent override (toolsight.agents.registry), e.g. vcr")

    def defining(self) -> dict[str, Any]:
        keep = ("benchmark", "model", "setting", "data", "base_url", "limit", "scorer_mode", "caps")
        d = {k: getattr(self, k) for k in keep}
        d["loop"] = self.loop  # the Runner fills in the effective mode, so --loop X and "X by default" match
        if self.agent:  # only when given, so runs made before the flag existed keep their hash
            d["agent"] = self.agent
        d["generate"] = self.generate.model_dump(exclude={"timeout"})
        return d

    def config_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.defining(), sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class RunSummary:
    run_dir: Path
    total: int
    done: int = 0
    skipped: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    score_sum: float = 0.0
    scored: int = 0
    passed: int = 0
    tokens: int = 0
    tool_calls: int = 0
    interrupted: bool = False
    stats: CallStats = field(default_factory=CallStats)

    @property
    def accuracy(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None

    def line(self) -> str:
        acc = f"{100 * self.accuracy:.1f}%" if self.accuracy is not None else "n/a"
        errs = sum(self.errors.values())
        kinds = ", ".join(f"{k}: {v}" for k, v in self.errors.most_common()) or "none"
        return (
            f"{self.done} task(s) run, {self.skipped} already finished, {errs} error(s) ({kinds}); "
            f"accuracy {acc} over {self.scored} scored; {self.tool_calls} tool call(s); "
            f"{self.tokens} tokens; {self.stats.retries} retries; {self.stats.cache_hits} cache hits"
        )


class CallerModel(Model):
    """A Model whose generate goes through a ModelCaller (limit, retries, cache) — for judges."""

    def __init__(self, caller: ModelCaller) -> None:
        super().__init__(caller.model.name)
        self.caller = caller

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        return await self.caller(messages, tools, config)


def apply_caps(settings: AgentSettings, opts: RunOptions) -> AgentSettings:
    upd: dict[str, Any] = dict(opts.caps)
    if opts.agent:
        upd["agent"] = opts.agent
    gen = settings.generate.model_dump()
    for k, v in opts.generate.model_dump(exclude_defaults=True).items():
        gen[k] = v
    upd["generate"] = GenerateConfig.model_validate(gen)
    try:
        return AgentSettings.model_validate({**settings.model_dump(), **upd})
    except ValueError as exc:
        raise RunError(f"bad cap override: {exc}") from None


def default_run_dir(opts: RunOptions, setting: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    model = opts.model.replace("/", "_").replace(":", "_")
    return Path("runs") / f"{opts.benchmark.replace('/', '_')}-{setting}-{model}-{stamp}"


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
    ) -> None:
        self.opts = opts
        self.bench = bench
        self.loaded = loaded
        self.model = model
        self.setting_name = opts.setting or bench.default_setting
        self.settings = apply_caps(bench.setting(self.setting_name, opts.loop), opts)
        self.opts = opts = opts.model_copy(update={"loop": self.settings.loop})
        self.run_dir = Path(opts.out) if opts.out else default_run_dir(opts, self.setting_name)
        self.on_progress = on_progress
        self.judge_model = judge
        bind = getattr(model, "bind_dataset", None)
        if callable(bind):
            bind(loaded.root)
        self.scorer: Scorer | None = bench.scorer(self.setting_name, opts.scorer_mode) if opts.score else None
        from toolsight.agents.registry import agent_toolsets

        own = [t for t in agent_toolsets(self.settings.agent) if t not in self.settings.tools]
        if own:  # tool sets the agent calls by itself (e.g. vcr's detection)
            self.settings = self.settings.model_copy(update={"tools": [*self.settings.tools, *own]})
        # tools are stateless (per-task state lives in the Toolbox), so one set serves every task
        self.tools = build_tools(self.settings.tools, extra=bench.toolsets())
        self.uses_sandbox = needs_sandbox(self.settings.tools, extra=bench.toolsets())

    # ---- run directory --------------------------------------------------------------------
    def _manifest(self, tools: list[ToolSpec], isolation: dict[str, Any]) -> Manifest:
        return Manifest.model_validate({
            "run_id": uuid.uuid4().hex[:12],
            "benchmark": self.bench.name,
            "target": self.opts.benchmark,
            "setting": self.setting_name,
            "loop": self.settings.loop,
            "model": self.opts.model,
            "judge": self.opts.judge,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "toolsight_version": toolsight.__version__,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "config_hash": self.opts.config_hash(),
            "options": self.opts.model_dump(mode="json"),
            "dataset": {
                "path": str(self.loaded.root.resolve()),
                "source": self.loaded.source,
                "hash": self.loaded.fingerprint,
                "n_tasks": len(self.loaded.tasks),
                "notes": self.loaded.notes,
            },
            "agent_settings": self.settings.model_dump(mode="json"),
            "tools": [t.model_dump() for t in tools],
            "backends": _backends(self.tools),
            "model_info": self.model.describe(),
            "isolation": isolation,
            "versions": _versions(),
        })

    def _prepare_dir(self) -> set[str]:
        d = self.run_dir
        if (d / MANIFEST).is_file():
            if not self.opts.resume:
                raise RunError(
                    f"run directory {d} already exists; pass --resume to continue it, or choose another --out"
                )
            old = read_manifest(d)
            if old.config_hash != self.opts.config_hash() and not self.opts.force:
                raise RunError(
                    f"--resume refused: {d} was made with a different configuration "
                    f"(model/setting/data/generation/caps differ). Use a new --out, or --force to mix them."
                )
            return finished_ids(d)
        if d.exists() and any(d.iterdir()):
            raise RunError(f"{d} exists and is not a toolsight run directory; choose another --out")
        return set()

    # ---- tasks ------------------------------------------------------------------------------
    async def _score(self, task: Task, traj: Trajectory, ctx: ScoreContext) -> tuple[Score | None, str | None]:
        if self.scorer is None:
            return None, None
        try:
            return await self.scorer.score(task, traj.responses, ctx), None
        except Exception as exc:
            return None, f"scoring failed: {type(exc).__name__}: {exc}"

    async def _run_task(self, task: Task, caller: ModelCaller, ctx: ScoreContext) -> Record:
        t0 = time.time()
        ws = artifact_dir(self.run_dir, task.id)
        if self.opts.resume and ws.exists():  # only a resumed run can meet a workspace already there
            shutil.rmtree(ws)  # a partial workspace from a killed run
        store = ArtifactStore(ws)
        toolbox = Toolbox(self.tools, store, task.id)
        model = self.model.for_task(task)
        agent = self.bench.make_agent(self.settings, model, caller if model is self.model else model.generate)
        error: str | None = None
        traj = Trajectory()
        try:
            inputs = register_inputs(task, self.loaded.root, toolbox)
            traj = await asyncio.wait_for(agent.run(task, toolbox, inputs), self.opts.task_timeout)
        except TaskFailed as exc:
            traj, error = exc.trajectory, str(exc)
        except TimeoutError:
            traj = Trajectory(stop_reason="time_limit", artifacts=store.all())
            error = f"time limit: task exceeded {self.opts.task_timeout:.0f} s"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a harness or tool bug must not end the run
            error = f"harness error: {type(exc).__name__}: {exc}"
            traj.artifacts = store.all()
        finally:
            await toolbox.aclose()
        score: Score | None = None
        if error is None:
            score, serr = await self._score(task, traj, ctx)
            error = serr
        return Record(
            task_id=task.id, benchmark=self.bench.name, setting=self.setting_name, model=self.opts.model,
            tags=task.tags, trajectory=traj, score=score, error=error, started_at=t0,
            duration_s=round(time.time() - t0, 4), extra=self.bench.record_extra(task),
        )

    async def run(self) -> RunSummary:
        done_ids = self._prepare_dir()
        tasks = self.loaded.tasks[: self.opts.limit] if self.opts.limit else self.loaded.tasks
        tasks = self.bench.tasks_for(self.setting_name, tasks)
        todo = [t for t in tasks if t.id not in done_ids]
        summary = RunSummary(run_dir=self.run_dir, total=len(tasks), skipped=len(tasks) - len(todo))
        cache = ResponseCache(self.run_dir / CACHE) if self.opts.cache else None
        caller = ModelCaller(self.model, max_connections=self.opts.max_connections, retries=self.opts.retries,
                             backoff_base=self.opts.backoff_base, cache=cache)
        summary.stats = caller.stats
        judge: Model | None = None
        if self.judge_model is not None:
            judge = CallerModel(ModelCaller(self.judge_model, max_connections=self.opts.judge_concurrency,
                                            retries=self.opts.retries, backoff_base=self.opts.backoff_base,
                                            cache=cache))
        ctx = ScoreContext(judge=judge)
        if self.uses_sandbox:
            _size_sandbox(min(self.opts.concurrency, max(1, len(todo))))
        if not done_ids:
            specs = [t.spec() for t in self.tools]
            write_manifest(self.run_dir, self._manifest(specs, isolation(self.uses_sandbox)))
        writer = RecordWriter(self.run_dir)
        queue: asyncio.Queue[Task] = asyncio.Queue()
        for t in todo:
            queue.put_nowait(t)

        async def worker() -> None:
            while True:
                try:
                    task = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                rec = await self._run_task(task, caller, ctx)
                writer.write(rec)
                summary.done += 1
                summary.tool_calls += len(rec.trajectory.tool_calls)
                summary.tokens += rec.trajectory.usage.total_tokens
                if rec.error:
                    # lazy: the metrics module's models cost ~0.1 s of every start-up
                    from toolsight.metrics.compute import error_kind

                    summary.errors[error_kind(rec.error)] += 1
                elif rec.score is not None and rec.score.error is None:
                    summary.scored += 1
                    summary.score_sum += rec.score.value
                    summary.passed += int(bool(rec.score.passed))
                if self.on_progress:
                    self.on_progress(summary, caller.stats)

        try:
            n = max(1, min(self.opts.concurrency, len(todo) or 1))
            await asyncio.gather(*(worker() for _ in range(n)))
        except asyncio.CancelledError:
            summary.interrupted = True
            raise
        finally:
            writer.close()
            if cache is not None:
                cache.close()
            for m in (self.model, self.judge_model):
                if m is not None:
                    with contextlib.suppress(Exception):
                        await m.aclose()
        return summary


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
    from toolsight.tools import sandbox

    sandbox.configure(size=max(1, min(concurrency, 16)))


def isolation(uses_sandbox: bool) -> dict[str, Any]:
    """The sandbox isolation in force, for the manifest (or that no sandbox is used)."""
    if not uses_sandbox:
        return {"sandbox": "not used"}
    from toolsight.tools import sandbox

    return sandbox.isolation_report()


def load_for_run(bench: Benchmark, data: str | None) -> LoadedTasks:
    try:
        return bench.load(Path(data) if data else None)
    except BenchmarkError:
        raise
    except FileNotFoundError as exc:
        raise BenchmarkError(f"{exc}") from None
