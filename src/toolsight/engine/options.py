"""Everything that defines a run (`RunOptions`), in a few typed groups, and the identity that guards
`--resume`.

The groups: what runs (benchmark, setting, loop, data, agent, caps, the benchmark's own options) at
the top; `model` (the model spec, its endpoint and generation settings); `control` (run control:
output, resume, concurrency, selection, epochs, retries, timeouts, cache, executor); `scoring`
(scorer mode, judge, epoch reducer); `web` (backend, budget, summary model); `sandbox` (backend).

Users name options flat, as the command line does (`concurrency=4`, `judge="openai/gpt-4o"`,
`web="offline"`): `toolsight.evaluate(...)` keywords, sweep plans, `retry` overrides, and the
`options` a run's manifest records (`RunOptions.flat()`). `RunOptions` accepts that flat form and
files each key in its group; `FLAT_KEYS` is the one map from a flat name to its place.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolsight.log.modes import LoopMode, ScorerMode
from toolsight.models.base import GenerateConfig

DEFAULT_TASK_TIMEOUT_S = 1200.0
#: where runs (and sweeps, under sweeps/) go when no --out is given; default `runs` in the current folder
RUNS_DIR_ENV = "TOOLSIGHT_RUNS_DIR"


def runs_root() -> Path:
    """The folder runs are written under by default: $TOOLSIGHT_RUNS_DIR, else `runs`."""
    return Path(os.environ.get(RUNS_DIR_ENV) or "runs").expanduser()


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelOptions(_Group):
    """The model under evaluation, its endpoint and generation settings."""

    spec: str = Field(description="e.g. openai/gpt-4o, anthropic/NAME, reference")
    base_url: str | None = None
    generate: GenerateConfig = Field(default_factory=GenerateConfig)
    max_connections: int = 32
    adaptive: bool = Field(default=True, description="adapt the endpoint's connection limit (AIMD) under "
                           "max_connections")
    endpoint: str | None = Field(default=None, description="limiter group of the model's endpoint (default: its "
                                 "base URL, else the spec); runs naming the same endpoint share one limit")


class RunControl(_Group):
    """How the run is carried out: where it writes, what it selects, how it retries and waits."""

    @field_validator("limit", mode="before")
    @classmethod
    def _limit(cls, value: Any) -> Any:
        from toolsight.tasks.select import parse_limit

        return parse_limit(value)

    @field_validator("fail_on_error")
    @classmethod
    def _fail_on_error(cls, value: float | None) -> float | None:
        if value is not None and value > 1 and not float(value).is_integer():
            raise ValueError("a count of errors (N >= 1) is a whole number; a share is below 1, e.g. 0.1")
        return value

    out: str | None = None
    resume: bool = False
    force: bool = False
    retry_errors: bool = True
    concurrency: int = 8
    # selections (not in the identity: a resume may widen them, as it may a larger --limit)
    limit: int | tuple[int, int] | None = Field(
        default=None, description="the first N selected tasks, or (A, B): the A-th to the B-th (from 1); "
        "`--limit 10-20`")
    fail_on_error: float | None = Field(
        default=None, gt=0, description="stop the run once this many tasks ended in error (N >= 1), or this "
        "share of the selected task-epochs (0 < F < 1); the others stay unrun for --resume / retry")
    task_ids: list[str] | None = Field(default=None, description="run only these task ids (--task-id)")
    tags: dict[str, list[str]] = Field(
        default_factory=dict, description="run only tasks whose tag KEY is one of the values (--tag KEY=VALUE); "
        "keys are ANDed, values of one key ORed")
    epochs: int = Field(default=1, ge=1, description="times each task runs; records carry `epoch` (1..N)")
    retries: int = 5
    backoff_base: float = 1.0
    task_timeout: float | None = Field(default=None, description="seconds per task; None: the setting's "
                                       "task_timeout_s, else DEFAULT_TASK_TIMEOUT_S")
    outage_timeout: float = 600.0
    max_retry_after: float = 120.0
    cache: bool = True
    executor: str = Field(default="local", description="where tasks run: local | ray (toolsight.engine.executors)")
    ray_address: str | None = Field(default=None, description="Ray cluster address (host:port); None: a local instance")
    ray_workers: int | None = Field(default=None, ge=1, description="Ray workers; None: one per cluster CPU")
    batch: Literal["calls", "rounds"] | None = Field(
        default=None, description="send the model's calls through its provider's batch API (docs/batch.md): "
        "calls (settings of one call per task) | rounds (also tool loops, each round one batch)")
    batch_size: int = Field(default=100, ge=1, description="batch mode: submit when this many requests wait")
    batch_idle: float = Field(default=5.0, gt=0, description="batch mode: ... or when no new request came for this "
                              "many seconds")
    batch_poll: float = Field(default=5.0, gt=0, description="batch mode: first wait between polls (doubles, up "
                              "to 60 s)")
    batch_retry: Literal["batch", "online"] = Field(
        default="batch", description="batch mode: an expired item, or one that failed with a retryable error, is "
        "asked once more in a new batch (batch) or sent on-line at once (online)")
    prices: str | None = Field(default=None, description="price table (JSON or TOML) merged over the built-in one "
                               "for the run summary's cost (docs/cost.md); None: the built-in table")


class ScoringOptions(_Group):
    """How answers are scored as the run goes."""

    score: bool = True
    scorer_mode: ScorerMode = "official"
    judge: str | None = None
    judge_base_url: str | None = None
    judge_concurrency: int = 8
    judge_batch: bool = Field(default=False, description="send judge calls through the judge provider's batch API")
    epochs_reducer: str | None = Field(
        default=None, description="how a task's epochs reduce to one score (metrics/epochs.py); None = the scorer's")


class WebOptions(_Group):
    """The web tools' backend."""

    backend: str | None = Field(default=None, description="live | offline[=CORPUS] | replay=RUN_DIR (toolsight.web)")
    budget: int | None = Field(default=None, description="web requests allowed per run")
    summary_model: str | None = Field(default=None, description="model that summarises pages for `visit`")


class SandboxOptions(_Group):
    """Where model-written code runs."""

    backend: str | None = Field(default=None, description="sandbox backend by name (toolsight.sandbox); None: "
                                "the default")


#: flat option name (as the CLI, sweep plans and `toolsight.evaluate` spell it) -> (group, field)
FLAT_KEYS: dict[str, tuple[str, str]] = {
    **{k: ("model", k) for k in ("base_url", "generate", "max_connections", "adaptive", "endpoint")},
    **{k: ("control", k) for k in RunControl.model_fields},
    **{k: ("scoring", k) for k in ScoringOptions.model_fields},
    "web": ("web", "backend"), "web_budget": ("web", "budget"), "summary_model": ("web", "summary_model"),
    "sandbox": ("sandbox", "backend"),
}


class RunOptions(BaseModel):
    """Everything that defines a run. `identity()` of the defining fields guards --resume."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str = Field(description="a benchmark name or a dataset folder")
    setting: str | None = None
    loop: LoopMode | None = Field(default=None, description="official | toolsight; None = the setting's own mode")
    data: str | None = None
    agent: str | None = Field(default=None, description="agent override (toolsight.agents.registry), e.g. vcr")
    caps: dict[str, Any] = Field(default_factory=dict, description="overrides for AgentSettings caps")
    benchmark_options: dict[str, Any] = Field(
        default_factory=dict, description="the benchmark's own options (-B KEY=VALUE; `toolsight list options BENCH`)")
    model: ModelOptions
    control: RunControl = Field(default_factory=RunControl)
    scoring: ScoringOptions = Field(default_factory=ScoringOptions)
    web: WebOptions = Field(default_factory=WebOptions)
    sandbox: SandboxOptions = Field(default_factory=SandboxOptions)

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, data: Any) -> Any:
        """File flat option names in their groups (user input, and manifests of older runs)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "demo_prompts" in data:  # older runs: now the benchmark's own option
            path = data.pop("demo_prompts")
            if path is not None:
                data["benchmark_options"] = {**dict(data.get("benchmark_options") or {}), "demo_prompts": path}
        groups: dict[str, dict[str, Any]] = {}
        if isinstance(data.get("model"), str):
            groups["model"] = {"spec": data.pop("model")}
        for name in ("web", "sandbox"):  # flat: the backend's name (or None)
            if name in data and (data[name] is None or isinstance(data[name], str)):
                groups[name] = {"backend": data.pop(name)}
        for key in [k for k in data if k in FLAT_KEYS and k not in ("web", "sandbox")]:
            group, field = FLAT_KEYS[key]
            groups.setdefault(group, {})[field] = data.pop(key)
        for group, fields in groups.items():
            given = data.get(group)
            data[group] = {**(given.model_dump() if isinstance(given, BaseModel) else dict(given or {})), **fields}
        return data

    @classmethod
    def of(cls, **flat: Any) -> RunOptions:
        """Options from flat names, as `toolsight run` spells them: `RunOptions.of(benchmark="starter",
        model="reference", concurrency=4, judge="openai/gpt-4o")`."""
        return cls.model_validate(flat)

    def flat(self) -> dict[str, Any]:
        """The options by their flat names, as JSON values (what a manifest stores, and what
        `RunOptions.model_validate` takes back)."""
        data = self.model_dump(mode="json")
        out: dict[str, Any] = {k: data[k] for k in
                               ("benchmark", "setting", "loop", "data", "agent", "caps", "benchmark_options")}
        out["model"] = data["model"]["spec"]
        for key, (group, field) in FLAT_KEYS.items():
            out[key] = data[group][field]
        return out

    def replace(self, **flat: Any) -> RunOptions:
        """A copy with some options changed, named flat (`opts.replace(out=..., concurrency=2)`), validated."""
        data = self.model_dump()
        for key, value in flat.items():
            if key == "model" and isinstance(value, str):
                data["model"]["spec"] = value
            elif key in FLAT_KEYS:
                group, field = FLAT_KEYS[key]
                data[group][field] = value
            else:
                data[key] = value
        return RunOptions.model_validate(data)

    def identity(self, benchmark: str, setting: str, data_hash: str) -> dict[str, Any]:
        """What a resumed run must share with the run it continues. Paths, URLs, concurrency,
        retries and timeouts are not in it: they change how a run goes, not what its records mean."""
        out: dict[str, Any] = {
            "benchmark": benchmark, "setting": setting, "model": self.model.spec,
            "generate": self.model.generate.model_dump(mode="json", exclude={"timeout"}), "caps": self.caps,
            "score": self.scoring.score, "scorer_mode": self.scoring.scorer_mode, "judge": self.scoring.judge,
            "dataset": data_hash,
            "loop": self.loop,  # the Runner fills in the effective mode, so --loop X and "X by default" match
        }
        # only when set, so runs made before these options existed keep their identity
        for key, value in (("agent", self.agent), ("web", self.web.backend), ("summary_model", self.web.summary_model)):
            if value is not None:
                out[key] = value
        if self.benchmark_options:
            out["benchmark_options"] = self.benchmark_options
        return out


def config_hash(identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]
