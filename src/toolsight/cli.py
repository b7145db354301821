"""The command line: run, retry, validate, generate, score, report, view, list.

User errors (bad folder, flag, model prefix, missing key) end in one clear message — never a
traceback. Exit codes (toolsight.errors, README): 0 every task finished without error; 3 the run
finished but some tasks ended in error; 2 bad input or configuration (nothing run); 4 the run
could not start or was stopped (endpoint down past --outage-timeout, credentials rejected, run
directory in use, disk full); 130 interrupted. `validate` exits 1 when it finds problems.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from toolsight.errors import EXIT_ABORTED, EXIT_USAGE, RunAborted, ToolsightError

app = typer.Typer(
    name="toolsight",
    help="Evaluate multimodal models as agents that think with images.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
list_app = typer.Typer(help="List benchmarks, settings, models and tools.", no_args_is_help=True)
app.add_typer(list_app, name="list")
err = Console(stderr=True)
out = Console()


def _fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(code)


@app.command()
def validate(
    folder: Annotated[Path, typer.Argument(help="dataset folder with tasks.jsonl and images")],
) -> None:
    """Check every line and image of a dataset folder; print every problem."""
    from toolsight.tasks.dataset import count_tasks, validate_dataset

    problems = validate_dataset(folder)
    for p in problems:
        out.print(str(p), highlight=False, soft_wrap=True)
    if problems:
        raise _fail(f"{len(problems)} problem(s) in {folder}")
    out.print(f"{folder}: {count_tasks(folder)} task(s), no problems")


def _parse_caps(caps: list[str]) -> dict[str, Any]:
    outd: dict[str, Any] = {}
    for c in caps:
        if "=" not in c:
            raise _fail(f"--cap {c!r}: expected NAME=VALUE, e.g. --cap max_tool_calls=10")
        k, v = c.split("=", 1)
        try:
            outd[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            outd[k.strip()] = v
    return outd


@app.command()
def run(
    target: Annotated[str, typer.Argument(help="a benchmark name (see `toolsight list benchmarks`) or a dataset folder")],
    model: Annotated[str, typer.Option("--model", "-m", help="e.g. openai/gpt-4o, anthropic/NAME, google/NAME, reference")],
    setting: Annotated[str | None, typer.Option(help="setting name (see `toolsight list settings BENCH`)")] = None,
    loop: Annotated[str | None, typer.Option(help="official (the benchmark driver's requests) | toolsight (improved loop); default: the setting's")] = None,
    data: Annotated[str | None, typer.Option(help="path to the benchmark's data (official format)")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible server URL (vLLM, SGLang, Ollama)")] = None,
    out_dir: Annotated[str | None, typer.Option("--out", help="run directory (default runs/NAME-TIME)")] = None,
    resume: Annotated[bool, typer.Option(help="continue the run in --out: unfinished and errored tasks run again")] = False,
    force: Annotated[bool, typer.Option(help="with --resume: accept a changed configuration (recorded)")] = False,
    retry_errors: Annotated[bool, typer.Option(help="with --resume: re-run tasks whose last record is an error")] = True,
    concurrency: Annotated[int, typer.Option(min=1, help="tasks in flight")] = 8,
    max_connections: Annotated[int, typer.Option(min=1, help="concurrent requests to the model")] = 32,
    limit: Annotated[int | None, typer.Option(min=1, help="run only the first N tasks")] = None,
    judge: Annotated[str | None, typer.Option(help="judge model for LLM-judged scoring")] = None,
    judge_base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible URL for the judge")] = None,
    judge_concurrency: Annotated[int, typer.Option(min=1)] = 8,
    no_score: Annotated[bool, typer.Option("--no-score", help="do not score as the run goes")] = False,
    scorer_mode: Annotated[str, typer.Option(help="official | corrected")] = "official",
    temperature: Annotated[float | None, typer.Option(min=0.0)] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1)] = None,
    seed: Annotated[int | None, typer.Option()] = None,
    reasoning_effort: Annotated[str | None, typer.Option(help="minimal | low | medium | high")] = None,
    thinking_budget: Annotated[int | None, typer.Option(min=0)] = None,
    retries: Annotated[int, typer.Option(min=0)] = 5,
    task_timeout: Annotated[float, typer.Option(min=0.1, help="seconds per task")] = 1200.0,
    request_timeout: Annotated[float, typer.Option(min=0.1, help="seconds per model request")] = 120.0,
    backoff_base: Annotated[float, typer.Option(min=0.0, help="first retry delay in seconds (doubles)")] = 1.0,
    outage_timeout: Annotated[float, typer.Option(min=0.0, help="give up when the endpoint stays unreachable this long (s)")] = 600.0,
    max_retry_after: Annotated[float, typer.Option(min=0.0, help="longest Retry-After honoured (s)")] = 120.0,
    cap: Annotated[list[str] | None, typer.Option(help="agent cap override NAME=VALUE (repeatable)")] = None,
    demo_prompts: Annotated[str | None, typer.Option(help="TIR-Bench demo_prompts.py: few-shot demos for tir-bench-llm extraction")] = None,
    agent: Annotated[str | None, typer.Option(help="agent to run the setting with, e.g. vcr (see docs)")] = None,
    history: Annotated[str | None, typer.Option(help="multi-turn history: gold (gold answers) | model")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="do not use the response cache")] = False,
    report: Annotated[bool, typer.Option(help="print the report tables at the end")] = True,
    web: Annotated[str | None, typer.Option(help="web tools' backend: live | offline[=CORPUS_DIR] | replay=RUN_DIR")] = None,
    web_budget: Annotated[int | None, typer.Option(min=1, help="web requests allowed in this run")] = None,
    summary_model: Annotated[str | None, typer.Option(help="model that summarises pages for `visit`")] = None,
) -> None:
    """Run a benchmark (or a dataset folder) with a model; write a run directory."""
    from toolsight.models.base import GenerateConfig
    from toolsight.runner import RunOptions

    if scorer_mode not in ("official", "corrected"):
        raise _fail(f"--scorer-mode {scorer_mode!r}: use 'official' or 'corrected'", EXIT_USAGE)
    if loop not in (None, "official", "toolsight"):
        raise _fail(f"--loop {loop!r}: use 'official' or 'toolsight'", EXIT_USAGE)
    if history not in (None, "gold", "model"):
        raise _fail(f"--history {history!r}: use 'gold' (earlier turns' gold answers) or 'model'", EXIT_USAGE)
    if reasoning_effort not in (None, "minimal", "low", "medium", "high"):
        raise _fail(f"--reasoning-effort {reasoning_effort!r}: use minimal, low, medium or high", EXIT_USAGE)
    gen = GenerateConfig(
        temperature=temperature, max_tokens=max_tokens, seed=seed,
        reasoning_effort=reasoning_effort,
        thinking_budget=thinking_budget, timeout=request_timeout,
    )
    opts = RunOptions(
        benchmark=target, model=model, setting=setting, loop=loop, data=data, base_url=base_url, out=out_dir, resume=resume,
        force=force, concurrency=concurrency, max_connections=max_connections, limit=limit, judge=judge, judge_base_url=judge_base_url,
        judge_concurrency=judge_concurrency, score=not no_score, scorer_mode=scorer_mode, retries=retries,
        task_timeout=task_timeout, backoff_base=backoff_base, generate=gen,
        caps={**_parse_caps(cap or []), **({"history": history} if history else {})}, cache=not no_cache,
        demo_prompts=demo_prompts,
        agent=agent,
        web=web, web_budget=web_budget, summary_model=summary_model,
        retry_errors=retry_errors, outage_timeout=outage_timeout, max_retry_after=max_retry_after,
    )
    from toolsight.agents.registry import agent_names

    if agent is not None and agent not in agent_names():
        raise _fail(f"--agent {agent!r}: unknown agent; choose one of: {', '.join(agent_names())}", EXIT_USAGE)
    _execute(opts, report)


def _execute(opts: Any, report: bool) -> None:
    from toolsight.session import execute_run

    try:
        summary = execute_run(opts, show_report=report)
    except ToolsightError as exc:
        raise _fail(str(exc), exc.exit_code) from None
    if summary.exit_code:
        raise typer.Exit(summary.exit_code)


@app.command()
def retry(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    base_url: Annotated[str | None, typer.Option(help="model URL, if it moved since the run started")] = None,
    judge_base_url: Annotated[str | None, typer.Option(help="judge URL, if it moved")] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="tasks in flight")] = None,
    retries: Annotated[int | None, typer.Option(min=0)] = None,
    backoff_base: Annotated[float | None, typer.Option(min=0.0)] = None,
    outage_timeout: Annotated[float | None, typer.Option(min=0.0)] = None,
    report: Annotated[bool, typer.Option(help="print the report tables at the end")] = True,
) -> None:
    """Resume a run with the options it was made with: re-run its errored and unfinished tasks."""
    from toolsight.session import retry_options

    if not (run_dir / "manifest.json").is_file():
        raise _fail(f"{run_dir} is not a run directory (no manifest.json)", EXIT_USAGE)
    try:
        opts = retry_options(run_dir, {"base_url": base_url, "judge_base_url": judge_base_url,
                                       "concurrency": concurrency, "retries": retries,
                                       "backoff_base": backoff_base, "outage_timeout": outage_timeout})
    except ToolsightError as exc:
        raise _fail(str(exc), exc.exit_code) from None
    _execute(opts, report)


@app.command()
def generate(
    kind: Annotated[str, typer.Argument(help="generator kind (see `toolsight list generators`)")],
    n: Annotated[int, typer.Option("--n", min=1, help="number of tasks")] = 10,
    seed: Annotated[int, typer.Option(help="random seed")] = 0,
    out_dir: Annotated[Path, typer.Option("--out", help="dataset folder to write")] = Path("generated"),
    difficulty: Annotated[int | None, typer.Option(help="difficulty knob (generator-specific)")] = None,
) -> None:
    """Generate a synthetic dataset folder (deterministic for a seed)."""
    kinds = _generator_kinds()
    if kind not in kinds:
        raise _fail(f"unknown generator {kind!r}; choose one of: {', '.join(kinds)}", 2)
    try:
        if kind == "phystool":
            from toolsight.synth.phystool import LEVELS, generate_phystool

            level = LEVELS[difficulty] if difficulty is not None and 0 <= difficulty < len(LEVELS) else None
            if difficulty is not None and level is None:
                raise ValueError(f"--difficulty {difficulty}: use 0-{len(LEVELS) - 1} ({', '.join(LEVELS)})")
            generate_phystool(n, seed, out_dir, level=level)
        elif kind == "vtb":
            from toolsight.benchmarks.vtb_generate import generate_vtb

            generate_vtb(n, seed, out_dir)
        elif kind.startswith("vtc-"):
            from toolsight.synth.vtc import generate_vtc

            generate_vtc(kind.removeprefix("vtc-"), n, seed, out_dir)
        elif kind == "browse":
            from toolsight.synth.browse import generate_browse

            generate_browse(n, seed, out_dir)
        else:
            from toolsight.synth import generate as generate_tir

            generate_tir(kind, n, seed, out_dir, difficulty=difficulty)
    except ValueError as exc:
        raise _fail(f"{kind}: {exc}", 2) from None
    if kind == "vtb":
        out.print(f"wrote {n} VisualToolBench-style task(s) to {out_dir} (official converted layout; run with "
                  f"`toolsight run visualtoolbench --data {out_dir} --model reference`)")
        return
    out.print(f"wrote {n} {kind} task(s) to {out_dir} (check with `toolsight validate {out_dir}`)")


@app.command()
def score(
    run_dir: Annotated[Path, typer.Argument(help="a finished run directory")],
    judge: Annotated[str | None, typer.Option(help="judge model spec")] = None,
    judge_base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible URL for the judge")] = None,
    scorer: Annotated[str | None, typer.Option(help="scorer name (default: the benchmark's own)")] = None,
    mode: Annotated[str, typer.Option(help="official | corrected")] = "official",
    name: Annotated[str | None, typer.Option(help="name of the scores file (scores-NAME.jsonl)")] = None,
    demo_prompts: Annotated[str | None, typer.Option(help="TIR-Bench demo_prompts.py: few-shot demos for tir-bench-llm extraction")] = None,
) -> None:
    """Re-score a finished run without calling the evaluated model again."""
    from toolsight.session import rescore

    try:
        path = rescore(run_dir, judge=judge, scorer=scorer, mode=mode, name=name, judge_base_url=judge_base_url,
                       demo_prompts=demo_prompts)
    except (ToolsightError, FileNotFoundError) as exc:
        raise _fail(str(exc)) from None
    out.print(f"wrote {path}")


@app.command("report")
def report_cmd(
    run_dirs: Annotated[list[Path], typer.Argument(help="one or more run directories")],
    by: Annotated[list[str] | None, typer.Option(help="group by this task tag (repeatable)")] = None,
    fmt: Annotated[str, typer.Option("--format", help="md | html | json | csv")] = "md",
    base: Annotated[str | None, typer.Option(help="base setting for deltas")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="write the report (and plots) here")] = None,
    scores: Annotated[str | None, typer.Option(help="use scores-NAME.jsonl instead of the records' scores")] = None,
    metric: Annotated[str, typer.Option(help="headline number: score | pass_rate")] = "score",
    human_grades: Annotated[Path | None, typer.Option(help="JSONL of human rubric verdicts (judge agreement)")] = None,
    prices: Annotated[Path | None, typer.Option(help="JSON price table for cost per task")] = None,
) -> None:
    """Print the papers' tables for one or more runs."""
    if fmt not in ("md", "html", "json", "csv"):
        raise _fail(f"--format {fmt!r}: use md, html, json or csv", 2)
    for d in run_dirs:
        if not (d / "manifest.json").is_file():
            raise _fail(f"{d} is not a run directory (no manifest.json)")
    from toolsight.report import build_report
    kwargs: dict[str, Any] = {"by": by or [], "fmt": fmt, "base_setting": base, "out_dir": out_dir,
                              "scores": scores, "metric": metric, "human_grades": human_grades}
    try:
        if prices is not None:
            from toolsight.metrics.cost import load_prices

            kwargs["prices"] = load_prices(prices)
        text = build_report(run_dirs, **kwargs)
    except (ValueError, OSError) as exc:
        raise _fail(str(exc)) from None
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


@app.command()
def view(
    run_dirs: Annotated[list[Path], typer.Argument(help="a run directory; two or more: compare them side by side")],
    out_dir: Annotated[Path | None, typer.Option("--out", help="where to write the site (default RUN/viewer)")] = None,
    serve: Annotated[bool, typer.Option(help="serve on 127.0.0.1 and rebuild live while records arrive")] = False,
    port: Annotated[int, typer.Option(help="port for --serve (0 = any free port)")] = 8780,
    scores: Annotated[str | None, typer.Option(help="show scores-NAME.jsonl instead of the records' scores")] = None,
    prices: Annotated[Path | None, typer.Option(help="JSON price table: cost in the summary")] = None,
) -> None:
    """Build an HTML trace viewer for a run (or a side-by-side comparison of several runs)."""
    for d in run_dirs:
        if not (d / "manifest.json").is_file():
            raise _fail(f"{d} is not a run directory (no manifest.json)")
    from toolsight.report import viewer
    from toolsight.report.viewer_serve import ViewerError

    def build() -> Path:
        price_table = None
        if prices is not None:
            from toolsight.metrics.cost import load_prices

            price_table = load_prices(prices)
        if len(run_dirs) > 1:
            from toolsight.report.viewer_compare import build_compare

            return build_compare(run_dirs, out_dir, scores=scores, prices=price_table)
        return viewer.build_viewer(run_dirs[0], out_dir, scores=scores, prices=price_table)

    try:
        index = build()
        out.print(f"viewer: {index}", highlight=False, soft_wrap=True)
        if serve:
            viewer.serve(index.parent, port, rebuild=build, watch=run_dirs)
    except (ValueError, OSError, ToolsightError, ViewerError) as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)  # one line, even in a pipe
        raise typer.Exit(1) from None


@list_app.command("benchmarks")
def list_benchmarks() -> None:
    """Benchmarks toolsight can run."""
    from toolsight.benchmarks.registry import benchmark_names, get_benchmark

    for name in benchmark_names():
        b = get_benchmark(name)
        out.print(f"{name:12s} {b.description}", highlight=False)
    out.print("(any folder with tasks.jsonl can be run too: `toolsight run DIR --model M`)")


@list_app.command("settings")
def list_settings(benchmark: Annotated[str, typer.Argument(help="benchmark name or dataset folder")]) -> None:
    """Settings of a benchmark."""
    from toolsight.benchmarks.registry import get_benchmark

    try:
        b = get_benchmark(benchmark)
    except ToolsightError as exc:
        raise _fail(str(exc)) from None
    for name, s in b.settings().items():
        mark = " (default)" if name == b.default_setting else ""
        tools = ", ".join(s.tools) or "no tools"
        out.print(f"{name}{mark}: loop {s.loop}; tools: {tools}; max tool calls {s.max_tool_calls}, "
                  f"max rounds {s.max_rounds}", highlight=False)


@list_app.command("models")
def list_models() -> None:
    """Model providers (prefixes) and built-in baselines."""
    from toolsight.models.registry import list_providers

    for name, desc in list_providers():
        out.print(f"{name:14s} {desc}", highlight=False)


@list_app.command("tools")
def list_tools() -> None:
    """Tool sets, their tools, and the sandbox isolation in force."""
    from toolsight.tools.registry import UnknownToolSet, build_tools, describe_toolsets

    for name, desc in describe_toolsets().items():
        try:
            tools = build_tools([name])
            names = ", ".join(t.name for t in tools)
            out.print(f"[bold]{name}[/]: {desc}\n    {names}", highlight=False)
        except UnknownToolSet as exc:
            out.print(f"[bold]{name}[/]: unavailable ({exc})", highlight=False)
    from toolsight.runner import isolation

    iso = isolation(True)
    out.print("sandbox isolation: " + json.dumps(iso), highlight=False)


def _generator_kinds() -> dict[str, str]:
    """TIR-style kinds by name, VTC-style kinds as `vtc-NAME`."""
    from toolsight.synth import KINDS
    from toolsight.synth.vtc import KIND_NAMES

    kinds: dict[str, str] = {}
    for name, k in KINDS.items():
        kinds[name] = f"TIR-Bench style: {k.description}"
    for name in KIND_NAMES:
        kinds[f"vtc-{name}"] = "VTC-Bench style: MC question, degraded image, reference OpenCV tool chain"
    kinds["phystool"] = ("PhysToolBench style: numbered toy tools, a job, answer = object numbers or None; "
                         "difficulty 0-3 = Easy, Medium-M1/M2/M3")
    kinds["vtb"] = "VisualToolBench style: single/multi-turn, rubrics with checks, official layout"
    kinds["browse"] = ("VisBrowse-Bench style: a generated mini-web (pages, pictures, links; offline corpus in "
                       "corpus/) and multi-hop browsing tasks with reference tool-call programs")
    return kinds


@list_app.command("generators")
def list_generators() -> None:
    """Synthetic task generators (`toolsight generate KIND`)."""
    for name, desc in _generator_kinds().items():
        out.print(f"{name:18s} {desc}", highlight=False)


def main() -> None:
    from toolsight.diagnostics import configure_logging

    configure_logging()
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except ToolsightError as exc:  # any command: one line and the error's code, never a traceback
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(exc.exit_code)
    except RunAborted as exc:  # e.g. a judge's credentials rejected while re-scoring
        err.print(f"[bold red]stopped:[/] {exc}", highlight=False)
        sys.exit(exc.exit_code)
    except OSError as exc:
        from toolsight.store import is_disk_full

        if not is_disk_full(exc):
            raise
        err.print(f"[bold red]error:[/] disk full: {exc}", highlight=False)
        sys.exit(EXIT_ABORTED)
