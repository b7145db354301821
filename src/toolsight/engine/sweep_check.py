"""Checking a sweep plan before anything is written (`toolsight sweep` exits 2 and makes no folder).

What a run would otherwise find only when it starts — a generator request it cannot make, a data
path or scripted-server script that is not there, an unknown benchmark or setting, a misspelt cap or
a cap value of the wrong type, a model spec no provider takes (or whose key is missing), the same for
the judge — is one `PlanError` naming the plan file, the field and the fix. Settings of a generated
dataset folder are checked once the set exists (`expand` after `generate_data`).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.generation import check_request
from toolsight.engine.sweep import Plan, PlanError, SweepRun, check_settings, expand, sweep_folder
from toolsight.errors import ToolsightError, one_line
from toolsight.models.base import Model

#: stands in for the plan's scripted server while checking (nothing is sent to it)
_PLACEHOLDER_URL = "http://127.0.0.1:9/v1"


def _path(base: Path, p: str) -> Path:
    q = Path(p).expanduser()
    return q if q.is_absolute() else base / q


def _check_inputs(plan: Plan, plan_path: Path) -> None:
    """Generator requests, data paths and the scripted server's script."""
    base = plan_path.resolve().parent
    for bi, b in enumerate(plan.benchmarks):
        if b.generate is not None:
            g = b.generate
            try:
                check_request(g.kind, g.n, g.difficulty)
            except ToolsightError as exc:
                raise PlanError(f"{plan_path}: benchmarks[{bi}].generate: {exc}") from None
        elif b.data is not None and not _path(base, b.data).exists():
            raise PlanError(f"{plan_path}: benchmarks[{bi}].data: {_path(base, b.data)} does not exist (a relative "
                            "path is relative to the plan file); fix the path or download the data there")
    if plan.scripted_server is not None and not _path(base, plan.scripted_server.script).is_file():
        raise PlanError(f"{plan_path}: scripted_server.script: {_path(base, plan.scripted_server.script)} does not "
                        "exist (a relative path is relative to the plan file)")


def _check_caps(plan_path: Path, run: SweepRun) -> None:
    fields = AgentSettings.model_fields
    for name, value in run.opts.caps.items():
        if name not in fields:
            close = difflib.get_close_matches(name, list(fields), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}? " if close else ""
            raise PlanError(f"{plan_path}: caps.{name} (run {run.id}): unknown cap; {hint}`toolsight list caps` "
                            "lists them")
        try:
            AgentSettings.model_validate({name: value})
        except ValidationError as exc:
            raise PlanError(f"{plan_path}: caps.{name}={json.dumps(value, default=str)} (run {run.id}): "
                            f"{one_line(exc)}") from None


def _check_models(plan_path: Path, plan: Plan, runs: list[SweepRun],
                  make_model: Callable[[str, str | None], Model]) -> None:
    checked: set[tuple[str, str, str | None]] = set()
    for run in runs:
        mi = next((i for i, m in enumerate(plan.models) if m.spec == run.model), 0)
        wanted: list[tuple[str, str, str | None]] = [(f"models[{mi}].spec", run.opts.model.spec, run.opts.model.base_url)]
        if run.opts.scoring.judge:
            wanted.append(("judge", run.opts.scoring.judge, run.opts.scoring.judge_base_url))
        for where, spec, url in wanted:
            if (where, spec, url) in checked:
                continue
            checked.add((where, spec, url))
            try:
                make_model(spec, url)
            except ToolsightError as exc:
                raise PlanError(f"{plan_path}: {where}: {exc}") from None


def check_plan(plan: Plan, plan_path: Path, out: Path | None,
               make_model: Callable[[str, str | None], Model]) -> None:
    """Every check of the module docstring, in plan order; the first problem raises PlanError."""
    _check_inputs(plan, plan_path)
    sweep_out = sweep_folder(plan, plan_path, out)

    named = [s for b in plan.benchmarks for s in b.settings]

    def settings_of(target: str) -> tuple[list[str], str]:
        if Path(target).is_relative_to(sweep_out) and not Path(target).exists():
            return named, ""  # a generated set not made yet: its settings are checked once it exists
        return check_settings(target)

    url = _PLACEHOLDER_URL if plan.scripted_server is not None else None
    sweep = expand(plan, plan_path, sweep_out, url, settings_of=settings_of)
    for run in sweep.runs:
        _check_caps(plan_path, run)
    _check_models(plan_path, plan, sweep.runs, make_model)


__all__ = ["check_plan"]
