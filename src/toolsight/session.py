"""Glue for the CLI: what `toolsight run` / `retry` show while the engine (`toolsight.api.engine`,
the same one `toolsight.evaluate` uses) runs; re-scoring for `toolsight score`.

On a terminal a rich progress bar (done/total, errors, retries in progress, tokens, an outage
status); elsewhere (a pipe, a log, CI) plain progress lines. Ctrl-C and a stopped run (outage,
credentials, full disk) end with one unwrapped line holding the resume command. Then the
summary line and the report tables. The summary's `exit_code` is the process exit code
(docs/cli.md).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from toolsight.api.engine import RunHooks, model_for_flag, run_sync
from toolsight.api.progress import PlainProgress
from toolsight.benchmarks.registry import get_benchmark
from toolsight.calls.retry import CallStats
from toolsight.engine.options import RunOptions
from toolsight.engine.rundir import RunError
from toolsight.engine.runner import Runner, load_for_run
from toolsight.engine.summary import RunSummary

if TYPE_CHECKING:  # the re-scoring engine is imported only by `toolsight score`
    from toolsight.engine.rescore import JudgeCalls
    from toolsight.metrics.cost import PriceTable

# soft_wrap: never hard-wrap at 80 columns (a pasted resume command must stay one line)
err = Console(stderr=True, soft_wrap=True, highlight=False)


def _resume_hint(opts: RunOptions, run_dir: Path) -> str:
    argv = [a for a in sys.argv[1:] if a not in ("--resume",)]
    if argv[:1] == ["retry"]:
        return "toolsight " + " ".join(shlex.quote(a) for a in argv)
    if argv[:1] != ["run"]:  # not started from the command line (e.g. the Python API)
        return f"toolsight retry {shlex.quote(str(run_dir))}"
    if "--out" not in argv:
        argv += ["--out", str(run_dir)]
    return "toolsight " + " ".join(shlex.quote(a) for a in argv) + " --resume"


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
    if base.get("executor", "local") == "local":  # e.g. a Ray run retried here: its cluster settings go
        base.update(ray_address=None, ray_workers=None)
    try:
        return RunOptions.model_validate(base)
    except ValueError as exc:
        raise RunError(f"{run_dir}/manifest.json: its options cannot be used by this toolsight ({exc})") from None


class _Display:
    """The progress display: a rich bar on a terminal, plain lines elsewhere."""

    def __init__(self) -> None:
        self.runner: Runner | None = None
        self.bar: Progress | None = None
        self.plain: PlainProgress | None = None
        self.tid: Any = None

    def note(self, text: str) -> None:
        err.print(text, markup=False)  # engine text (e.g. `s3://BUCKET[/PREFIX]`), never rich markup

    def started(self, runner: Runner) -> None:
        self.runner = runner
        err.print(f"run directory: {runner.run_dir}")
        label = f"{runner.bench.name}/{runner.setting_name}"
        if err.is_terminal:
            self.bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                TextColumn("{task.fields[status]}"), console=err, transient=False,
            )
            self.tid = self.bar.add_task(label, total=None, status="")
            self.bar.start()
        else:
            self.plain = PlainProgress(label)

    def progress(self, s: RunSummary, st: CallStats) -> None:
        errs = sum(s.ran.errors.values())
        limits = "".join(f" · limit {lim.status()}" for lim in s.limiters[:1] if lim.adaptive)
        status = f"errors {errs} · retrying {st.retrying_now} · tokens {s.ran.tokens}{limits}"
        if self.bar is not None:
            self.bar.update(self.tid, completed=s.done + s.skipped, total=s.total, status=status)
        elif self.plain is not None:
            self.plain.update(s.done + s.skipped, s.total, status)

    def event(self, text: str) -> None:
        # the periodic "unreachable for N s, retrying in M s" line is a status on a terminal, a log line elsewhere
        if self.bar is not None:
            self.bar.update(self.tid, status=text)
            if ", retrying in " in text:
                return
        err.print(text, markup=False)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()

    def hooks(self) -> RunHooks:
        return RunHooks(note=self.note, started=self.started, progress=self.progress, event=self.event)


def execute_run(opts: RunOptions, show_report: bool = True) -> RunSummary:
    """Run `opts` through the engine with the CLI's display; the summary (its `exit_code` is the exit code)."""
    display = _Display()
    try:
        result = run_sync(opts, display.hooks())
    except KeyboardInterrupt:
        display.stop()
        runner = display.runner
        if runner is None:  # before the run started: nothing to resume
            raise
        err.print(f"[yellow]interrupted[/]: finished records are kept in {runner.run_dir}; "
                  f"resume with: {_resume_hint(opts, runner.run_dir)}")
        return RunSummary(run_dir=runner.run_dir, total=len(runner.selected) * runner.opts.control.epochs, interrupted=True)
    finally:
        display.stop()
    summary = result.summary
    err.print(summary.line(), markup=False)
    if result.stopped is not None:
        err.print(f"[bold red]stopped[/]: {result.stopped}. Finished records are kept in {result.run_dir}; "
                  f"resume with: {_resume_hint(opts, result.run_dir)}")
        return summary
    if show_report:
        _print_report(result.run_dir)
    return summary


def _print_report(run_dir: Path) -> None:
    from toolsight.report.release import release_memory

    release_memory()  # the run's freed buffers: the report must not grow the process past the run's peak
    from toolsight.report import build_report
    from toolsight.report.viewer import build_viewer

    try:
        text: str = build_report([run_dir], by=[], fmt="md")
        print(text)
        release_memory()
        index = build_viewer(run_dir, None)
        print(f"trace viewer: {index}")
    except Exception as exc:  # the run is saved; a report problem must not hide that
        err.print(f"(report not available: {type(exc).__name__}: {exc})", markup=False)


def rescore(run_dir: Path, judge: str | None, scorer: str | None, mode: str, name: str | None,
            judge_base_url: str | None = None, benchmark_options: dict[str, Any] | None = None,
            calls: JudgeCalls | None = None) -> Path:
    """Score a finished run again (`toolsight score`); the benchmark's own options are the run's,
    with `benchmark_options` (`-B KEY=VALUE`) on top."""
    # imported here, not at the top: a run (the common command) never pays for numpy and the metrics
    from toolsight.engine.rescore import rescore_run
    from toolsight.log.files import read_manifest
    from toolsight.log.modes import scorer_mode

    manifest = read_manifest(run_dir)
    bench = get_benchmark(manifest.target or manifest.benchmark)
    bench.configure({**dict(manifest.options.get("benchmark_options") or {}), **(benchmark_options or {})})
    kwargs: dict[str, Any] = {}
    own = bench.scorers()
    if scorer and scorer in own:  # the run's benchmark's own scorer, with its options
        sc = own[scorer](scorer_mode(mode, "--mode"))
    elif scorer:
        from toolsight.benchmarks.registry import get_scorer

        sc = get_scorer(scorer, mode=mode)
    else:
        sc = bench.scorer(manifest.setting, mode)
    data = manifest.dataset.path or None
    loaded = load_for_run(bench, data)
    kwargs["tasks"] = {t.id: t for t in bench.tasks_for(manifest.setting, loaded.tasks)}
    judge_model = model_for_flag("--judge", judge, judge_base_url) if judge else None
    label = name or "-".join(x for x in [scorer or bench.name, mode, (judge or "").replace("/", "_")] if x)
    path: Path = rescore_run(run_dir, sc, judge_model=judge_model, name=label, calls=calls, **kwargs)
    return path


def score_table(run_dir: Path, scores_file: Path, prices: PriceTable | None = None) -> str:
    """The score table of a run as `toolsight score` just re-scored it (markdown); with `prices` (the
    table of `--prices`, merged over the built-in one) it shows the cost at that table too."""
    from toolsight.metrics.compute import compute_run_metrics
    from toolsight.report.build import report_tables
    from toolsight.report.tables import cost_table, to_markdown

    name = scores_file.name.removeprefix("scores-").removesuffix(".jsonl")
    metrics = compute_run_metrics(run_dir, scores=name, prices=prices)
    text = to_markdown(report_tables([metrics], [], None)[0])
    costs = cost_table([metrics]) if prices else None
    return text + ("\n" + to_markdown(costs) if costs is not None else "")
