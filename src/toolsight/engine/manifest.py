"""The manifest a new run starts with: what defines it (options by their flat names, identity and its
hash, the dataset and its hash), what it declares it sends (agent settings, the tools' schemas), and what
it runs on (model info, tool backends, the sandbox isolation in force, package versions). What the loop
really sent is added when the run ends (`sent`, `Runner.record_sent`, `toolsight.calls.sent`)."""

from __future__ import annotations

import platform
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.base import LoadedTasks
from toolsight.engine.options import RunOptions, config_hash
from toolsight.log.manifest import Manifest
from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import Model
from toolsight.tools.base import Tool
from toolsight.version import __version__

#: the packages whose versions a manifest records
VERSIONED = ("openai", "anthropic", "google-genai", "opencv-python-headless", "numpy", "pillow", "pydantic")


@dataclass(frozen=True)
class RunFacts:
    """What a run's manifest describes."""

    benchmark: str
    setting: str
    opts: RunOptions
    settings: AgentSettings
    loaded: LoadedTasks
    tools: Sequence[Tool]
    model: Model
    uses_sandbox: bool
    #: the tool schemas the setting's loop sends (`Benchmark.offered_specs`); None: the tools' own
    specs: Sequence[ToolSpec] | None = None


def dataset_info(loaded: LoadedTasks, data_hash: str) -> dict[str, Any]:
    """The manifest's `dataset` block."""
    return {
        "path": str(loaded.root.resolve()), "source": loaded.source, "hash": data_hash,
        "n_tasks": len(loaded.tasks), "notes": loaded.notes,
    }


def new_manifest(run: RunFacts, identity: dict[str, Any]) -> Manifest:
    return Manifest.model_validate({
        "run_id": uuid.uuid4().hex[:12],
        "benchmark": run.benchmark,
        "target": run.opts.benchmark,
        "setting": run.setting,
        "loop": run.settings.loop,
        "model": run.opts.model.spec,
        "judge": run.opts.scoring.judge,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "toolsight_version": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "config_hash": config_hash(identity),
        "identity": identity,
        "options": run.opts.flat(),
        "dataset": dataset_info(run.loaded, identity["dataset"]),
        "agent_settings": run.settings.model_dump(mode="json"),
        "tools": [s.model_dump() for s in (run.specs if run.specs is not None else [t.spec() for t in run.tools])],
        "backends": tool_backends(run.tools),
        "model_info": run.model.describe(),
        "isolation": isolation(run.uses_sandbox),
        "versions": versions(),
    })


def tool_backends(tools: Sequence[Tool]) -> dict[str, Any]:
    """Which backend each tool runs on (perception detectors, OCR engines)."""
    out: dict[str, Any] = {}
    for t in tools:
        info = getattr(t, "backend_info", None)
        if callable(info):
            out[t.name] = info()
    return out


def versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for pkg in VERSIONED:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            continue
    return out


def isolation(uses_sandbox: bool) -> dict[str, Any]:
    """The sandbox isolation in force (or that no sandbox is used). The sandbox package is imported
    only by runs that use it."""
    if not uses_sandbox:
        return {"sandbox": "not used"}
    from toolsight import sandbox

    return sandbox.isolation_report()
