"""The engine behind `toolsight run`, `toolsight retry` and `toolsight.evaluate`: one path for all.

`prepare` checks the options and builds the benchmark, the data, the models and the runner (every
user mistake is one `ToolsightError` line, raised before a run directory exists) and collects the
notes a user should see first (which setting a dataset folder defaulted to, a baseline that cannot
score under the chosen setting). `run_async` runs it; `run_sync` does the same from plain code —
and from inside a running event loop (Jupyter), where it runs the engine on a worker thread with
its own loop, since `asyncio.run` cannot be nested.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import sys
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from toolsight.agents.settings import AgentSettings
from toolsight.api.env import load_env
from toolsight.api.result import EvalResult
from toolsight.benchmarks.base import Benchmark
from toolsight.benchmarks.registry import benchmark_names, get_benchmark
from toolsight.calls.retry import CallStats
from toolsight.engine.options import RunOptions
from toolsight.engine.rundir import RunError
from toolsight.engine.runner import Runner, load_for_run
from toolsight.engine.summary import RunStopped, RunSummary
from toolsight.errors import ToolsightError
from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import Model
from toolsight.tools.base import Tool

T = TypeVar("T")


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@dataclass
class RunHooks:
    """What a front end shows while a run goes: notes before it starts (one line each), the runner
    once it exists (its run directory), progress after each task, and events (retries, outages)."""

    note: Callable[[str], None] = _stderr
    started: Callable[[Runner], None] | None = None
    progress: Callable[[RunSummary, CallStats], None] | None = None
    event: Callable[[str], None] | None = None


def make_model(spec: str, base_url: str | None = None) -> Model:
    from toolsight.models.registry import get_model

    return get_model(spec, base_url=base_url)


def model_for_flag(flag: str, spec: str, base_url: str | None) -> Model:
    """`make_model`, its configuration error naming the flag (`--judge openai/gpt-4o: no API key …`)."""
    from toolsight.models.base import ConfigurationError

    try:
        return make_model(spec, base_url)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{flag} {spec}: {str(exc).removeprefix(f'{spec}: ')}") from None


def _check_data(opts: RunOptions) -> None:
    """`--data` belongs to a named benchmark; a dataset folder target is its own data."""
    if opts.data is None or opts.benchmark in benchmark_names() or not Path(opts.benchmark).is_dir():
        return
    raise RunError(
        f"--data {opts.data}: the target {opts.benchmark} is already a dataset folder, and --data would be "
        f"ignored; run `toolsight run {opts.data} ...`, or name a benchmark: `toolsight run BENCHMARK --data {opts.data}`")


def _settings_advice(bench: Benchmark, model: Model, runner: Runner) -> str:
    """Which other settings of the benchmark the model's warning would not apply to (what to pick instead)."""
    from toolsight.tools.registry import build_tools

    fine: list[str] = []
    tasks = runner.selected[:SETTINGS_SAMPLE]
    for name, st in bench.settings().items():
        if name == runner.setting_name:
            continue
        try:
            tools = build_tools(st.tools, extra=bench.toolsets())
        except ToolsightError:
            continue
        names = [n for t in tools for n in (t.name, *t.aliases)]
        if model.setting_warning(names, tasks, _function_specs(bench, st, tools)) is None:
            fine.append(name)
    if fine:
        return f"pick a setting that offers them: --setting {' / '.join(fine)}"
    return f"no setting of {bench.target_name()} offers them"


def _function_specs(bench: Benchmark, settings: AgentSettings, tools: list[Tool]) -> list[ToolSpec]:
    """The tool schemas a setting sends as function tools; none for an agent that speaks its own text
    protocol (PyVision's code blocks, DeepEyes' tags), where a model's function call is no action."""
    return bench.offered_specs(settings, tools) if settings.agent == "default" else []


#: tasks the settings advice checks per setting (the warning itself samples as many)
SETTINGS_SAMPLE = 20


def prepare(opts: RunOptions, hooks: RunHooks | None = None) -> tuple[Runner, list[str]]:
    """The runner for `opts` and the notes to show before it runs (already passed to `hooks.note`)."""
    hooks = hooks or RunHooks()
    bench = get_benchmark(opts.benchmark)
    bench.configure(opts.benchmark_options)  # its own options, checked before anything is built
    settings = bench.setting(opts.setting, opts.loop)  # an unknown setting or loop before anything is built
    _check_data(opts)
    loaded = load_for_run(bench, opts.data)
    model = model_for_flag("--model", opts.model.spec, opts.model.base_url)
    judge = model_for_flag("--judge", opts.scoring.judge, opts.scoring.judge_base_url) if opts.scoring.judge else None
    summarizer = (model_for_flag("--summary-model", opts.web.summary_model, opts.model.base_url)
                  if opts.web.summary_model else None)
    notes = [f"note: {n}" for n in loaded.notes]
    if opts.setting is None:
        others = [n for n in bench.settings() if n != bench.default_setting]
        settings = bench.setting(None, opts.loop)  # loading may choose the default (e.g. for a generated set)
        tools = ", ".join(settings.tools) or "no tools"
        notes.append(f"note: no --setting given: using {bench.default_setting!r} ({tools}), the default for "
                     f"{bench.target_name()}; others: {', '.join(others) or 'none'}")
    from toolsight.engine.executors import make_executor

    runner = Runner(opts, bench, loaded, model, judge=judge, on_progress=hooks.progress, on_event=hooks.event,
                    summarizer=summarizer, executor=make_executor(opts))
    # every name the toolbox accepts: a tool's aliases (a paper's names for it) are offered too
    warn = model.setting_warning([n for t in runner.tools for n in (t.name, *t.aliases)], runner.selected,
                                 _function_specs(bench, runner.settings, runner.tools))
    if warn:
        notes.append(f"warning: {warn}; {_settings_advice(bench, model, runner)} "
                     f"(`toolsight list settings {bench.target_name()}`)")
    if opts.web.backend is not None and not runner.uses_web:
        notes.append(f"note: --web {opts.web.backend} has no effect: setting {runner.setting_name!r} offers no web tools")
    if opts.control.epochs > 1:
        notes.append(f"note: {opts.control.epochs} epochs of {len(runner.selected)} task(s); each task's epochs reduce to "
                     f"one score by {runner.opts.scoring.epochs_reducer}")
    for n in notes:
        hooks.note(n)
    return runner, notes


def shutdown_tools() -> None:
    # only a run that used the sandbox has one to shut down: importing it just to find nothing
    # running costs every other run ~35 ms and a few MB at its end
    sandbox = sys.modules.get("toolsight.sandbox")
    if sandbox is not None:
        sandbox.shutdown()


async def run_async(opts: RunOptions, hooks: RunHooks | None = None) -> EvalResult:
    """Run `opts` to the end on the running loop; a run stopped early (endpoint down past
    --outage-timeout, credentials rejected, disk full) returns a result whose `stopped` says why."""
    hooks = hooks or RunHooks()
    load_env()
    # loading (a benchmark may build its data with asyncio.run, read big files) runs off the loop
    runner, notes = await asyncio.to_thread(prepare, opts, hooks)
    if hooks.started is not None:
        hooks.started(runner)
    try:
        summary = await runner.run()
    except RunStopped as exc:
        exc.summary.stopped = str(exc)
        summary = exc.summary
    finally:
        shutdown_tools()
    return EvalResult(run_dir=runner.run_dir, summary=summary, options=runner.opts, notes=notes)


def in_any_loop(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """`asyncio.run(factory())`, also when called from inside a running event loop (a notebook):
    then on a worker thread with its own loop. Ctrl-C while waiting cancels the work there cleanly
    (finished records are kept) and is raised here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    box: dict[str, Any] = {}
    ready = threading.Event()

    async def main() -> T:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        ready.set()
        return await factory()

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="toolsight-evaluate") as pool:
        future = pool.submit(asyncio.run, main())
        try:
            return future.result()
        except KeyboardInterrupt:
            if ready.wait(5):
                with contextlib.suppress(RuntimeError):  # the loop may have finished meanwhile
                    box["loop"].call_soon_threadsafe(box["task"].cancel)
            with contextlib.suppress(BaseException):
                future.result()
            raise


def run_sync(opts: RunOptions, hooks: RunHooks | None = None) -> EvalResult:
    """`run_async` from synchronous code, inside a running event loop or not."""
    return in_any_loop(lambda: run_async(opts, hooks))


__all__ = ["RunHooks", "ToolsightError", "in_any_loop", "load_env", "make_model", "prepare", "run_async",
           "run_sync", "shutdown_tools"]
