"""Glue for `toolsight sweep PLAN`: read and expand the plan, start its scripted server if it asks
for one, run the runs (toolsight.engine.sweep) under one progress display — a line per run, with the
run's shared endpoint limit — and print and write the combined report (toolsight.report.sweep).

Ctrl-C stops every run cleanly (finished records are kept); `--resume` continues the sweep.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from toolsight.api.engine import make_model
from toolsight.engine.summary import RunSummary
from toolsight.engine.sweep import (
    RunOutcome,
    Sweep,
    SweepResult,
    SweepRun,
    SweepRunner,
    check_folder,
    check_settings,
    expand,
    generate_data,
    read_plan,
    sweep_folder,
    write_sweep_file,
)
from toolsight.engine.sweep_check import check_plan

err = Console(stderr=True, soft_wrap=True)  # lines are never hard-wrapped (docs/cli.md)


@contextlib.contextmanager
def _scripted_server(plan_path: Path, script: str | None) -> Iterator[str | None]:
    """The plan's scripted server on 127.0.0.1 for the sweep's lifetime (its OpenAI base URL)."""
    if script is None:
        yield None
        return
    from toolsight.models.scripted import Script, ScriptedServer

    path = Path(script).expanduser()
    if not path.is_absolute():
        path = plan_path.resolve().parent / path
    with ScriptedServer(Script.load(path), record=False) as srv:
        yield srv.openai_base_url


def _resume_hint(sweep: Sweep) -> str:
    argv = [a for a in sys.argv[1:] if a != "--resume"]
    if argv[:1] != ["sweep"]:
        argv = ["sweep", str(sweep.path)]
    if "--out" not in argv:
        argv += ["--out", str(sweep.out)]
    return "toolsight " + " ".join(shlex.quote(a) for a in argv) + " --resume"


def execute_sweep(plan_path: Path, out: Path | None = None, resume: bool = False, report: bool = True) -> SweepResult:
    """Run (or continue) the sweep a plan describes; print the combined report. Plan problems raise PlanError."""
    plan = read_plan(plan_path)
    out = sweep_folder(plan, plan_path, out)
    check_folder(out, resume)  # before anything is written there
    check_plan(plan, plan_path, out, make_model)  # a plan problem: exit 2, no sweep folder
    script = plan.scripted_server.script if plan.scripted_server is not None else None
    with _scripted_server(plan_path, script) as scripted_url:
        for note in generate_data(plan, plan_path, out):
            err.print(f"note: {note}", highlight=False, markup=False)
        sweep = expand(plan, plan_path, out, scripted_url, settings_of=check_settings)
        for note in write_sweep_file(sweep, resume):
            err.print(f"note: {note}", highlight=False, markup=False)
        err.print(f"sweep folder: {sweep.out} ({len(sweep.runs)} runs, {plan.parallel} at a time)", highlight=False)
        result = SweepResult(sweep)
        result.outcomes = _run(sweep, resume, result)
    if result.interrupted:
        err.print(f"[yellow]interrupted[/]: finished records are kept in {sweep.out}; resume with: "
                  f"{_resume_hint(sweep)}", highlight=False, soft_wrap=True)
    for o in result.outcomes:
        if o.stopped is not None:
            err.print(f"[bold red]{o.run.id}[/]: stopped: {o.stopped}", highlight=False, soft_wrap=True)
    if any(o.stopped is not None for o in result.outcomes) and not result.interrupted:
        err.print(f"the other runs finished; continue the stopped ones with: {_resume_hint(sweep)}",
                  highlight=False, soft_wrap=True)
    if report:
        _print_report(sweep)
    return result


def _run(sweep: Sweep, resume: bool, result: SweepResult) -> list[RunOutcome]:
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.fields[status]}"), console=err, transient=False, disable=not err.is_terminal,
    )
    rows: dict[str, TaskID] = {r.id: progress.add_task(r.id, total=None, status="waiting") for r in sweep.runs}

    def on_progress(run: SweepRun, s: RunSummary) -> None:
        limit = "".join(f" · {lim.key} limit {lim.status()}" for lim in s.limiters[:1] if lim.adaptive)
        progress.update(rows[run.id], completed=s.done + s.skipped, total=s.total,
                        status=f"errors {sum(s.ran.errors.values())} · tokens {s.ran.tokens}{limit}")

    def on_event(run: SweepRun, text: str) -> None:
        progress.update(rows[run.id], status=text)
        if not err.is_terminal or ", retrying in " not in text:
            err.print(f"{run.id}: {text}", highlight=False, soft_wrap=True, markup=False)

    def on_done(o: RunOutcome) -> None:
        line = o.summary.line() if o.summary is not None else "did not start"
        progress.update(rows[o.run.id], status="stopped" if o.stopped else "done")
        if not err.is_terminal:
            err.print(f"{o.run.id}: {line}", highlight=False, soft_wrap=True, markup=False)

    runner = SweepRunner(sweep, make_model, resume=resume, on_progress=on_progress, on_event=on_event,
                         on_start=lambda r: progress.update(rows[r.id], status="running"), on_done=on_done)
    outcomes: list[RunOutcome] = []
    try:
        with progress:
            outcomes = asyncio.run(runner.run())
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        from toolsight import sandbox
        sandbox.shutdown()
    return outcomes


def _print_report(sweep: Sweep) -> None:
    from toolsight.report.sweep import build_sweep_report

    try:
        text = build_sweep_report(sweep.out, fmt="md", out_dir=sweep.out / "report")
    except Exception as exc:  # the runs are saved; a report problem must not hide that
        err.print(f"(report not available: {type(exc).__name__}: {exc})", markup=False)
        return
    print(text)
    err.print(f"report: {sweep.out / 'report'}", highlight=False)
