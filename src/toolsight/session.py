"""Glue for the CLI: build the model, benchmark and runner for `run` and `retry`; re-score for `score`.

Shows a rich progress bar (done/total, errors, retries in progress, tokens, an outage status),
turns Ctrl-C and a stopped run (outage, credentials, full disk) into a clean stop with a one-line
resume hint, and prints the summary line and report tables. The summary's `exit_code` is the
process exit code (README: exit codes).
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from toolsight.benchmarks.registry import get_benchmark
from toolsight.models.base import Model
from toolsight.retry import CallStats
from toolsight.runner import RunError, Runner, RunOptions, RunStopped, RunSummary, load_for_run

err = Console(stderr=True)


def make_model(spec: str, base_url: str | None = None) -> Model:
    from toolsight.models.registry import get_model

    return get_model(spec, base_url=base_url)


def _resume_hint(opts: RunOptions, run_dir: Path) -> str:
    argv = [a for a in sys.argv[1:] if a not in ("--resume",)]
    if argv[:1] == ["retry"]:
        return "toolsight " + " ".join(shlex.quote(a) for a in argv)
    if "--out" not in argv:
        argv += ["--out", str(run_dir)]
    return "toolsight " + " ".join(shlex.quote(a) for a in argv) + " --resume"


def load_demo_prompts(path: str | None) -> None:
    """TIR-Bench's few-shot extraction demos from the user's copy of `demo_prompts.py` (`--demo-prompts`)."""
    if path is None:
        return
    from toolsight.runner import RunError
    from toolsight.scoring.tir import load_demo_prompts as load

    try:
        load(path)
    except ValueError as exc:
        raise RunError(f"--demo-prompts: {exc}") from None
def retry_options(run_dir: Path, overrides: dict[str, Any]) -> RunOptions:
    """The options a run was made with (from its manifest), to resume it and re-run its errors."""
    from toolsight.benchmarks.registry import benchmark_names
    from toolsight.log.files import read_manifest

    manifest = read_manifest(run_dir)
    base = dict(manifest.options)
    if not base:
        raise RunError(f"{run_dir}/manifest.json holds no run options; resume with `toolsight run ... --resume`")
    # the run may have been started from another folder: where a recorded relative path does not
    # resolve from here, use the absolute dataset path the manifest recorded
    data_path = manifest.dataset.path
    if data_path and Path(data_path).is_dir():
        if base.get("data") and not Path(str(base["data"])).exists():
            base["data"] = data_path
        elif not base.get("data") and base.get("benchmark") not in benchmark_names() \
                and not Path(str(base.get("benchmark"))).is_dir():
            base["benchmark"] = data_path
    base.update({"out": str(run_dir), "resume": True, "force": False, "retry_errors": True})
    base.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return RunOptions.model_validate(base)
    except ValueError as exc:
        raise RunError(f"{run_dir}/manifest.json: its options cannot be used by this toolsight ({exc})") from None


def execute_run(opts: RunOptions, show_report: bool = True) -> RunSummary:
    load_demo_prompts(opts.demo_prompts)
    bench = get_benchmark(opts.benchmark)
    bench.setting(opts.setting, opts.loop)  # an unknown setting or loop is reported before anything else is built
    loaded = load_for_run(bench, opts.data)
    model = make_model(opts.model, opts.base_url)
    judge = make_model(opts.judge, opts.judge_base_url) if opts.judge else None
    summarizer = make_model(opts.summary_model, opts.base_url) if opts.summary_model else None
    for note in loaded.notes:
        err.print(f"note: {note}", highlight=False)

    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.fields[status]}"), console=err, transient=False, disable=not err.is_terminal,
    )
    tid = progress.add_task(f"{bench.name}/{opts.setting or bench.default_setting}", total=None, status="")

    def on_progress(s: RunSummary, st: CallStats) -> None:
        errs = sum(s.errors.values())
        progress.update(tid, completed=s.done + s.skipped, total=s.total,
                        status=f"errors {errs} · retrying {st.retrying_now} · tokens {s.tokens}")

    def on_event(text: str) -> None:
        # the periodic "unreachable for N s, retrying in M s" line is a status on a terminal, a log line elsewhere
        progress.update(tid, status=text)
        if not err.is_terminal or ", retrying in " not in text:
            err.print(text, highlight=False, soft_wrap=True)

    runner = Runner(opts, bench, loaded, model, judge=judge, on_progress=on_progress, on_event=on_event,
                    summarizer=summarizer)
    err.print(f"run directory: {runner.run_dir}", highlight=False)
    summary: RunSummary | None = None
    try:
        with progress:
            summary = asyncio.run(runner.run())
    except KeyboardInterrupt:
        err.print(
            f"[yellow]interrupted[/]: finished records are kept in {runner.run_dir}; "
            f"resume with: {_resume_hint(opts, runner.run_dir)}",
            highlight=False,
        )
        s = RunSummary(run_dir=runner.run_dir, total=len(loaded.tasks), interrupted=True)
        return s
    except RunStopped as exc:
        err.print(exc.summary.line(), highlight=False, soft_wrap=True)
        err.print(
            f"[bold red]stopped[/]: {exc}. Finished records are kept in {runner.run_dir}; "
            f"resume with: {_resume_hint(opts, runner.run_dir)}",
            highlight=False, soft_wrap=True,
        )
        exc.summary.stopped = str(exc)
        return exc.summary
    finally:
        _shutdown_tools()
    err.print(summary.line(), highlight=False, soft_wrap=True)
    if show_report:
        _print_report(runner.run_dir)
    return summary


def _shutdown_tools() -> None:
    from toolsight.tools import sandbox

    sandbox.shutdown()


def _print_report(run_dir: Path) -> None:
    from toolsight.report import build_report
    from toolsight.report.viewer import build_viewer

    try:
        text: str = build_report([run_dir], by=[], fmt="md")
        print(text)
        index = build_viewer(run_dir, None)
        print(f"trace viewer: {index}")
    except Exception as exc:  # the run is saved; a report problem must not hide that
        err.print(f"(report not available: {type(exc).__name__}: {exc})")


def rescore(run_dir: Path, judge: str | None, scorer: str | None, mode: str, name: str | None,
            judge_base_url: str | None = None, demo_prompts: str | None = None) -> Path:
    from toolsight.log.files import read_manifest
    from toolsight.rescore import rescore_run

    load_demo_prompts(demo_prompts)
    manifest = read_manifest(run_dir)
    bench = get_benchmark(manifest.target or manifest.benchmark)
    kwargs: dict[str, Any] = {}
    if scorer:
        from toolsight.scoring.registry import get_scorer

        sc = get_scorer(scorer, mode=mode)
    else:
        sc = bench.scorer(manifest.setting, mode)
    data = manifest.dataset.path or None
    loaded = load_for_run(bench, data)
    kwargs["tasks"] = {t.id: t for t in bench.tasks_for(manifest.setting, loaded.tasks)}
    judge_model = make_model(judge, judge_base_url) if judge else None
    label = name or "-".join(x for x in [scorer or bench.name, mode, (judge or "").replace("/", "_")] if x)
    path: Path = rescore_run(run_dir, sc, judge_model=judge_model, name=label, **kwargs)
    return path
