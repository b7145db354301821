"""Sweeps: one plan file (TOML or YAML) that expands to many runs — models × benchmarks × settings × epochs.

Each run is a normal run directory under `SWEEP/runs/`, with its own manifest, so it stays
resumable (`toolsight retry`), re-scorable (`toolsight score`) and reportable on its own. The sweep
folder holds `sweep.json` (the expanded plan: which run is which) and the combined report.

    name = "demo"
    parallel = 4                       # runs at once
    epochs = 1                         # repeats of every run (separate run directories)
    [defaults]                         # any `toolsight run` option (RunOptions field) for every run
    concurrency = 8
    [[models]]
    spec = "openai/gpt-4o"             # or `model`
    base_url = "http://gpu-1:8000/v1"  # optional; `{scripted}` = the plan's scripted server
    generate = { temperature = 0 }     # generation settings
    options = { max_connections = 16 } # run options for this model's runs
    [[benchmarks]]
    name = "vtc-bench"                 # a benchmark name or a dataset folder
    data = "data/vtc"                  # optional
    settings = ["base", "code"]        # default: the benchmark's default setting
    options = { scorer_mode = "official" }
    [[benchmarks]]
    name = "vtc-synth"                 # a label: the runs use a generated set (a dataset folder),
    generate = { kind = "vtc-bars", n = 8, seed = 0 }   # made once in SWEEP/data/

Runs go on concurrently (`parallel`) in one process, and requests to one endpoint share one
adaptive limiter across all of them (`toolsight.calls.limiter`). `--resume` continues every run of the
sweep (each with the usual resume rules); a run that stops (an endpoint down past the outage
timeout, rejected credentials) stops alone and the others go on. Relative paths in a plan are
relative to the plan file. A plan problem is one `PlanError` naming the file and the field.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolsight.benchmarks.base import Benchmark, BenchmarkError, LoadedTasks
from toolsight.benchmarks.generation import generate, get_kind, read_generated
from toolsight.benchmarks.registry import get_benchmark
from toolsight.calls.limiter import LimiterPool
from toolsight.engine.executors import make_executor
from toolsight.engine.options import RunOptions, runs_root
from toolsight.engine.runner import Runner, load_for_run
from toolsight.engine.summary import RunStopped, RunSummary
from toolsight.errors import (
    EXIT_ABORTED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TASK_ERRORS,
    EXIT_USAGE,
    ToolsightError,
)
from toolsight.log.files import atomic_write_text
from toolsight.models.base import GenerateConfig, Model

SWEEP_FILE = "sweep.json"
RUNS = "runs"
#: RunOptions the plan sets itself, per run (a plan's `defaults`/`options` may not)
_PER_RUN = frozenset({"benchmark", "model", "setting", "out", "resume", "data", "base_url", "endpoint"})


class PlanError(ToolsightError):
    """A sweep plan that cannot be used (names the file and the field)."""

    exit_code = EXIT_USAGE


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    spec: str = Field(alias="model", description="model spec, e.g. openai/gpt-4o")
    base_url: str | None = None
    endpoint: str | None = Field(default=None, description="limiter group (default: base URL, else the spec)")
    generate: dict[str, Any] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)



class GeneratedSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str
    n: int = Field(default=8, ge=1)
    seed: int = 0
    difficulty: int | None = None


class BenchmarkEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    data: str | None = None
    settings: list[str] = Field(default_factory=list)
    generate: GeneratedSet | None = None
    options: dict[str, Any] = Field(default_factory=dict)


class ScriptedServerEntry(BaseModel):
    """A scripted model server the sweep starts on 127.0.0.1 (demos and tests): `{scripted}` in a
    model's base URL becomes its address."""

    model_config = ConfigDict(extra="forbid")

    script: str


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    out: str | None = None
    parallel: int = Field(default=4, ge=1)
    epochs: int = Field(default=1, ge=1)
    defaults: dict[str, Any] = Field(default_factory=dict)
    models: list[ModelEntry] = Field(min_length=1)
    benchmarks: list[BenchmarkEntry] = Field(min_length=1)
    scripted_server: ScriptedServerEntry | None = None


@dataclass
class SweepRun:
    """One run of the sweep."""

    id: str
    benchmark: str  # the entry's name (a benchmark name or a folder)
    setting: str
    model: str
    epoch: int
    opts: RunOptions
    entry: int  # index into plan.benchmarks

    @property
    def run_dir(self) -> Path:
        assert self.opts.control.out is not None
        return Path(self.opts.control.out)

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "dir": f"{RUNS}/{self.id}", "benchmark": self.benchmark, "setting": self.setting,
                "model": self.model, "epoch": self.epoch}


@dataclass
class Sweep:
    plan: Plan
    path: Path
    out: Path
    runs: list[SweepRun]
    plan_hash: str


@dataclass
class RunOutcome:
    run: SweepRun
    summary: RunSummary | None = None
    stopped: str | None = None  # why it stopped (RunStopped) or could not start (a ToolsightError)

    @property
    def exit_code(self) -> int:
        if self.summary is not None and self.stopped is None:
            return self.summary.exit_code
        return EXIT_ABORTED


@dataclass
class SweepResult:
    sweep: Sweep
    outcomes: list[RunOutcome] = field(default_factory=list)
    interrupted: bool = False

    @property
    def exit_code(self) -> int:
        """130 interrupted; 4 a run stopped or could not start; 3 some task ended in error; else 0."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        codes = {o.exit_code for o in self.outcomes}
        for code in (EXIT_ABORTED, EXIT_TASK_ERRORS):
            if code in codes:
                return code
        return EXIT_OK


# ---- reading and expanding a plan -----------------------------------------------------------------

def read_plan(path: Path) -> Plan:
    """Parse a TOML (.toml) or YAML (.yaml/.yml) plan; any problem is one PlanError naming the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlanError(f"{path}: plan file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"{path}: cannot read the plan ({exc})") from None
    data: Any
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}" if mark is not None else ""
            raise PlanError(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PlanError(f"{path}: not valid TOML: {exc} (use .yaml/.yml for a YAML plan)") from None
    if not isinstance(data, dict):
        raise PlanError(f"{path}: a plan is a table of settings (name, defaults, models, benchmarks)")
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        raise PlanError(f"{path}: " + _errors(exc)) from None


def _errors(exc: ValidationError) -> str:
    out = []
    for e in exc.errors():
        loc = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in e["loc"]).lstrip(".") or "(top)"
        msg = "unknown field" if e["type"] == "extra_forbidden" else e["msg"]
        out.append(f"{loc}: {msg}")
    return "; ".join(out)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text).strip("_.") or "x"


def _resolve(base: Path, p: str | None) -> str | None:
    """A path from the plan, relative to the plan file (`~` expanded)."""
    if p is None:
        return None
    q = Path(p).expanduser()
    return str(q if q.is_absolute() else (base / q))


def sweep_folder(plan: Plan, plan_path: Path, out: Path | None = None) -> Path:
    """`--out`, else the plan's `out` (relative to the plan file), else `RUNS_DIR/sweeps/NAME` (the runs
    folder, `runs/` or $TOOLSIGHT_RUNS_DIR: a sweep never writes next to its plan, e.g. into a repository)."""
    base = plan_path.resolve().parent
    return out or Path(_resolve(base, plan.out) or (runs_root() / "sweeps" / _slug(plan.name or plan_path.stem)))


def expand(plan: Plan, plan_path: Path, out: Path | None = None, scripted_url: str | None = None,
           settings_of: Callable[[str], tuple[list[str], str]] | None = None) -> Sweep:
    """The runs of a plan, in table order (benchmark, setting, model, epoch). `settings_of(target)`
    gives a benchmark's (name or folder) settings and its default: checked here, before anything
    runs (a generated set must exist by then, `generate_data`)."""
    base = plan_path.resolve().parent
    sweep_out = sweep_folder(plan, plan_path, out)
    for key in plan.defaults:
        if key in _PER_RUN:
            raise PlanError(f"{plan_path}: defaults.{key}: set per model or benchmark, not in defaults")
    runs: list[SweepRun] = []
    seen: set[str] = set()
    for bi, b in enumerate(plan.benchmarks):
        if b.generate is not None:  # the runs read the generated set; `name` is its label
            target, data, made_for = _generated_target(sweep_out / "data" / _data_name(bi, b), b.generate.kind)
        else:
            target = str(base / b.name) if (base / b.name).is_dir() else b.name
            data, made_for = _resolve(base, b.data), None
        try:
            names, default = settings_of(target) if settings_of is not None else (b.settings, "")
        except ToolsightError as exc:
            raise PlanError(f"{plan_path}: benchmarks[{bi}].name: {exc}") from None
        default = made_for or default  # a generated set runs under the setting its reference solutions need
        wanted = b.settings or [default]
        for s in wanted:
            if settings_of is not None and s not in names:
                raise PlanError(f"{plan_path}: benchmarks[{bi}].settings: {s!r} is not a setting of {b.name} "
                                f"(choose from: {', '.join(names)})")
        for setting in wanted:
            for mi, m in enumerate(plan.models):
                for epoch in range(1, plan.epochs + 1):
                    rid = "__".join([_slug(Path(b.name).name), _slug(setting), _slug(m.spec)])
                    if plan.epochs > 1:
                        rid += f"__e{epoch}"
                    if rid in seen:  # the same model twice (other options): keep both, apart
                        rid += f"__{mi}"
                    seen.add(rid)
                    opts = _options(plan, plan_path, bi, b, mi, m, target, data, setting, scripted_url)
                    opts = opts.replace(out=str(sweep_out / RUNS / rid))
                    runs.append(SweepRun(rid, b.name, setting, m.spec, epoch, opts, bi))
    digest = hashlib.sha256(json.dumps([r.describe() for r in runs], sort_keys=True).encode()).hexdigest()[:16]
    return Sweep(plan, plan_path, sweep_out, runs, digest)


def _data_name(bi: int, b: BenchmarkEntry) -> str:
    assert b.generate is not None
    g = b.generate
    return f"{bi}-{_slug(g.kind)}-n{g.n}-s{g.seed}" + (f"-d{g.difficulty}" if g.difficulty is not None else "")


def _options(plan: Plan, path: Path, bi: int, b: BenchmarkEntry, mi: int, m: ModelEntry, target: str,
             data: str | None, setting: str, scripted_url: str | None) -> RunOptions:
    for where, opts in ((f"benchmarks[{bi}].options", b.options), (f"models[{mi}].options", m.options)):
        for key in opts:
            if key in _PER_RUN:
                raise PlanError(f"{path}: {where}.{key}: this is set by the plan itself (model spec, base_url, "
                                "benchmark name, data, settings)")
    merged: dict[str, Any] = {**plan.defaults, **b.options, **m.options}
    gen: dict[str, Any] = {**dict(plan.defaults.get("generate") or {}), **dict(b.options.get("generate") or {}),
                           **dict(m.options.get("generate") or {}), **m.generate}
    base_url = m.base_url
    if base_url is not None and "{scripted}" in base_url:
        if scripted_url is None:
            raise PlanError(f"{path}: models[{mi}].base_url uses {{scripted}} but the plan has no scripted_server "
                            'table (script = "FILE")')
        base_url = base_url.replace("{scripted}", scripted_url)
    merged.update({"benchmark": target, "model": m.spec, "setting": setting, "data": data, "base_url": base_url,
                   "endpoint": m.endpoint, "generate": gen})
    try:
        GenerateConfig.model_validate(gen)
        return RunOptions.model_validate(merged)
    except ValidationError as exc:
        where = f"benchmarks[{bi}] × models[{mi}]"
        raise PlanError(f"{path}: {where}: " + _errors(exc) + " (any `toolsight run` option by its field name, "
                        "e.g. concurrency, max_connections, judge, scorer_mode, caps)") from None


# ---- the sweep folder ---------------------------------------------------------------------------

def check_folder(out: Path, resume: bool) -> None:
    """Refuse a sweep folder that is not ours: an existing sweep without --resume, or another folder
    with files in it (before anything is written there)."""
    if (out / SWEEP_FILE).is_file():
        if not resume:
            raise PlanError(f"sweep folder {out} already exists; pass --resume to continue it, or choose "
                            "another --out")
    elif out.is_dir() and any(p.name != "data" for p in out.iterdir()):
        raise PlanError(f"{out} exists and is not a sweep folder (no {SWEEP_FILE}); choose another --out")
    elif resume:
        raise PlanError(f"--resume: {out} holds no sweep to continue (no {SWEEP_FILE}); leave out --resume "
                        "to start it")


def write_sweep_file(sweep: Sweep, resume: bool) -> list[str]:
    """Create SWEEP/sweep.json, or check and extend it on --resume (after `check_folder`).
    Returns notes for the user."""
    check_folder(sweep.out, resume)
    path = sweep.out / SWEEP_FILE
    notes: list[str] = []
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    runs = [r.describe() for r in sweep.runs]
    if path.is_file():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise PlanError(f"{path}: cannot read it ({exc}); choose another --out") from None
        old_ids = [r.get("id") for r in old.get("runs", [])]
        new_ids = [r["id"] for r in runs]
        added = [i for i in new_ids if i not in old_ids]
        gone = [i for i in old_ids if i not in new_ids]
        if added:
            notes.append(f"the plan has {len(added)} new run(s) since the sweep started; they run now")
        if gone:
            notes.append(f"{len(gone)} run(s) of the sweep are no longer in the plan; their folders are kept and "
                         "left out of the report: " + ", ".join(str(g) for g in gone[:5]))
        history = [*old.get("history", []), {"event": "resume", "at": now, "plan_hash": sweep.plan_hash}]
        doc = {**old, "plan_hash": sweep.plan_hash, "runs": runs, "history": history}
    else:
        doc = {"name": sweep.plan.name, "plan": str(sweep.path.resolve()), "created": now,
               "plan_hash": sweep.plan_hash, "runs": runs, "history": []}
    sweep.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(doc, indent=2))
    return notes


def sweep_run_dirs(sweep_dir: Path) -> list[tuple[dict[str, Any], Path]]:
    """The runs a sweep folder lists (its sweep.json), with their directories, in plan order."""
    path = sweep_dir / SWEEP_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(f"{sweep_dir} is not a sweep folder (no {SWEEP_FILE})") from None
    except (OSError, ValueError) as exc:
        raise PlanError(f"{path}: cannot read it ({exc})") from None
    return [(r, sweep_dir / str(r["dir"])) for r in doc.get("runs", [])]


# ---- running ----------------------------------------------------------------------------------

ProgressFn = Callable[[SweepRun, RunSummary], None]
EventFn = Callable[[SweepRun, str], None]


class SweepRunner:
    """Runs the runs of a sweep, `plan.parallel` at a time, sharing one LimiterPool."""

    def __init__(
        self,
        sweep: Sweep,
        make_model: Callable[[str, str | None], Model],
        *,
        resume: bool = False,
        on_progress: ProgressFn | None = None,
        on_event: EventFn | None = None,
        on_start: Callable[[SweepRun], None] | None = None,
        on_done: Callable[[RunOutcome], None] | None = None,
    ) -> None:
        self.sweep = sweep
        self.make_model = make_model
        self.resume = resume
        self.on_progress = on_progress
        self.on_event = on_event
        self.on_start = on_start
        self.on_done = on_done
        self.limiters = LimiterPool()
        self._loaded: dict[tuple[int, str], LoadedTasks] = {}

    def _benchmark(self, run: SweepRun) -> tuple[Benchmark, LoadedTasks]:
        """A Benchmark object of the run's own (its `-B` options are this run's alone) and the entry's
        tasks, loaded once per benchmark entry and options and shared by its runs (tasks are read-only)."""
        bench = get_benchmark(run.opts.benchmark)
        bench.configure(run.opts.benchmark_options)
        key = (run.entry, json.dumps(run.opts.benchmark_options, sort_keys=True, default=str))
        if key not in self._loaded:
            self._loaded[key] = load_for_run(bench, run.opts.data)
        return bench, self._loaded[key]

    def _runner(self, run: SweepRun) -> Runner:
        bench, loaded = self._benchmark(run)
        opts = run.opts.replace(resume=self.resume or run.run_dir.exists())
        model = self.make_model(opts.model.spec, opts.model.base_url)
        judge = self.make_model(opts.scoring.judge, opts.scoring.judge_base_url) if opts.scoring.judge else None
        summarizer = self.make_model(opts.web.summary_model, opts.model.base_url) if opts.web.summary_model else None

        def progress(s: RunSummary, _stats: Any) -> None:
            if self.on_progress is not None:
                self.on_progress(run, s)

        def event(text: str) -> None:
            if self.on_event is not None:
                self.on_event(run, text)

        return Runner(opts, bench, loaded, model, judge=judge, on_progress=progress, on_event=event,
                      summarizer=summarizer, limiters=self.limiters, executor=make_executor(opts))

    async def _one(self, run: SweepRun, gate: asyncio.Semaphore) -> RunOutcome:
        async with gate:
            if self.on_start is not None:
                self.on_start(run)
            try:
                runner = self._runner(run)
                summary = await runner.run()
                out = RunOutcome(run, summary)
            except RunStopped as exc:
                out = RunOutcome(run, exc.summary, stopped=str(exc))
            except (ToolsightError, BenchmarkError) as exc:  # this run cannot start; the others go on
                out = RunOutcome(run, None, stopped=str(exc))
            if self.on_done is not None:
                self.on_done(out)
            return out

    async def run(self) -> list[RunOutcome]:
        gate = asyncio.Semaphore(self.sweep.plan.parallel)
        jobs = [asyncio.create_task(self._one(r, gate), name=f"toolsight-sweep-{r.id}") for r in self.sweep.runs]
        try:
            return list(await asyncio.gather(*jobs))
        except BaseException:
            for j in jobs:
                j.cancel()
            await asyncio.gather(*jobs, return_exceptions=True)
            raise


def generate_data(plan: Plan, plan_path: Path, out: Path) -> list[str]:
    """Make the generated sets the plan asks for in OUT/data (once: an existing set is reused). Returns notes."""
    notes: list[str] = []
    for bi, b in enumerate(plan.benchmarks):
        if b.generate is None:
            continue
        target = out / "data" / _data_name(bi, b)
        if read_generated(target) is not None:
            continue
        g = b.generate
        notes.append(f"generating {g.n} {g.kind} task(s) into {target}")
        try:
            _generate(g, target)
        except ToolsightError as exc:
            raise PlanError(f"{plan_path}: benchmarks[{bi}].generate: {exc}") from None
    return notes


def _generate(g: GeneratedSet, target: Path) -> None:
    """Write a generated set (the one generator registry: atomically, with its generated.json)."""
    generate(g.kind, g.n, g.seed, target, difficulty=g.difficulty)


def _generated_target(folder: Path, kind: str) -> tuple[str, str | None, str | None]:
    """How the runs read a generated set: as a dataset folder, or as its benchmark's `--data`; and the
    setting it runs under when the plan names none (None: the target's default)."""
    try:
        found = get_kind(kind)
    except ToolsightError:
        return str(folder), None, None  # reported by generate_data, which runs first
    if found.generator.run_with_benchmark:
        return found.benchmark, str(folder), found.generator.benchmark_setting
    return str(folder), None, None


def check_settings(target: str) -> tuple[list[str], str]:
    """A benchmark's (name or dataset folder) settings and its default; an unknown one raises."""
    bench = get_benchmark(target)
    return list(bench.settings()), bench.default_setting


__all__ = [
    "SWEEP_FILE", "Plan", "PlanError", "RunOutcome", "Sweep", "SweepResult", "SweepRun", "SweepRunner",
    "check_folder", "check_settings", "expand", "generate_data", "read_plan", "sweep_folder", "sweep_run_dirs",
    "write_sweep_file",
]
