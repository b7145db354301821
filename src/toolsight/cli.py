"""The command line: run, retry, validate, generate, score, report, view, runs, export, list (docs/cli.md).

`run` and `retry` go through the same engine as the Python API (`toolsight.api`). User errors (bad
folder, flag, model prefix, missing key) end in one unwrapped line naming the flag and the fix —
never a traceback; output is never hard-wrapped, so a pasted command works. A `.env` in the
current folder (or above) is loaded first (variables already set win). Exit codes
(toolsight.errors): 0 every task finished without error; 3 the run finished but some tasks (or
re-scored tasks) ended in error; 2 bad input or configuration (nothing run); 4 the run could not
start or was stopped (endpoint down past --outage-timeout, credentials rejected, run directory in
use, disk full); 130 interrupted. `validate` exits 1 when it finds problems.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from toolsight.cli_export import export as export_cmd
from toolsight.cli_runs import runs as runs_cmd
from toolsight.errors import EXIT_ABORTED, EXIT_TASK_ERRORS, EXIT_USAGE, RunAborted, ToolsightError
from toolsight.version import __version__

if TYPE_CHECKING:
    from toolsight.metrics.cost import Price

EXIT_CODES = ("Exit codes: 0 every task finished without error; 3 the run finished but some tasks ended in "
              "error (`toolsight retry RUN`); 2 bad input or configuration, nothing run; 4 could not start or "
              "stopped (endpoint down, credentials rejected, run directory in use, disk full); 130 Ctrl-C.")
# plain click help (rich_markup_mode=None): it never truncates option names and reads the same in a
# pipe and on a terminal; -h works as well as --help
# in a pipe (no terminal size) help is laid out 200 columns wide, not click's 80
_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 200,
            "terminal_width": shutil.get_terminal_size((200, 24)).columns}
app = typer.Typer(
    name="toolsight",
    help="Evaluate multimodal models as agents that think with images.",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=_CONTEXT,
)
list_app = typer.Typer(help="List benchmarks, settings, caps, models, agents, tools and generators.", no_args_is_help=True,
                       rich_markup_mode=None, context_settings=_CONTEXT)
app.add_typer(list_app, name="list")
app.command("runs")(runs_cmd)  # toolsight.cli_runs: the runs under a folder
app.command("export")(export_cmd)  # toolsight.cli_export: Inspect logs, CSV, Parquet
# soft_wrap: output is never hard-wrapped at 80 columns (one-line errors, pasteable commands)
err = Console(stderr=True, soft_wrap=True, highlight=False)
out = Console(soft_wrap=True, highlight=False)


def _fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[bold red]error:[/] {_one_line(message)}", highlight=False)
    return typer.Exit(code)


def _one_line(message: str) -> str:
    """Messages are single lines; a multi-line one (a wrapped library error) is joined."""
    from rich.markup import escape

    return escape(" ".join(message.split()))


def _version(value: bool) -> None:
    if value:
        out.print(f"toolsight {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_version, is_eager=True,
                                          help="print the version and exit")] = False,
) -> None:
    """Evaluate multimodal models as agents that think with images."""


@app.command()
def validate(
    folder: Annotated[Path, typer.Argument(help="dataset folder with tasks.jsonl and images")],
) -> None:
    """Check every line and image of a dataset folder.

    Prints every problem as tasks.jsonl:LINE: field: what is wrong; exits 1 when there are any."""
    from toolsight.tasks.dataset import count_tasks, validate_dataset

    problems = validate_dataset(folder)
    for p in problems:
        out.print(str(p), highlight=False, soft_wrap=True)
    if problems:
        raise _fail(f"{len(problems)} problem(s) in {folder}")
    out.print(f"{folder}: {count_tasks(folder)} task(s), no problems")


def _parse_caps(caps: list[str]) -> dict[str, Any]:
    """--cap NAME=VALUE (VALUE as JSON when it parses), each name and value checked against the caps."""
    from toolsight.api.options import check_caps, parse_assignments

    return check_caps(parse_assignments(caps, "--cap", "max_tool_calls=10", form="NAME=VALUE"))


# the batch-mode options `run`, `retry` and `score` share (docs/batch.md), defined once
BatchMode = Annotated[str | None, typer.Option(metavar="[rounds]", help="send the model's calls through its provider's batch API (about half the price, results within 24 h; docs/batch.md): --batch for settings of one call per task, --batch rounds also for tool loops (each round waits for a batch)")]
JudgeBatch = Annotated[bool, typer.Option("--judge-batch", help="send judge calls through the judge provider's batch API (docs/batch.md)")]
BatchSize = Annotated[int, typer.Option(min=1, metavar="N", help="batch mode: submit a batch when N requests wait")]
BatchIdle = Annotated[float, typer.Option(min=0.001, metavar="SECONDS", help="batch mode: ... or when no new request came for this long")]
BatchPoll = Annotated[float, typer.Option(min=0.001, metavar="SECONDS", help="batch mode: first wait between polls (doubles, up to 60 s)")]
BatchRetry = Annotated[str, typer.Option(metavar="batch|online", help="batch mode: an expired item, or one that failed with a retryable error (5xx, 429), is asked once more in a new batch (batch) or sent on-line at once (online)")]
Prices = Annotated[Path | None, typer.Option(metavar="FILE", help="price table (JSON or TOML) merged over toolsight's built-in one, model by model (docs/cost.md)")]


def _check_batch_flags(batch: str | None, batch_retry: str) -> None:
    if batch not in (None, "calls", "rounds"):
        raise _fail(f"--batch {batch!r}: use --batch (one-call settings) or --batch rounds (tool loops too)", EXIT_USAGE)
    if batch_retry not in ("batch", "online"):
        raise _fail(f"--batch-retry {batch_retry!r}: use 'batch' (ask again in a new batch, once) or 'online'",
                    EXIT_USAGE)


def _load_prices(prices: Path | None) -> dict[str, Price] | None:
    """The price table of `--prices FILE` merged over the built-in one (a bad file ends here, before
    anything runs); None without the flag."""
    if prices is None:
        return None
    from toolsight.metrics.cost import load_prices

    try:
        return load_prices(prices)
    except ToolsightError as exc:
        raise _fail(f"--prices: {exc}", EXIT_USAGE) from None


def _check_prices(prices: Path | None) -> str | None:
    """The price file's path for a run's options (it is read again where the run prices), after
    checking that it reads."""
    _load_prices(prices)
    return str(prices) if prices is not None else None


@app.command()
def run(
    target: Annotated[str, typer.Argument(metavar="TARGET", help="a benchmark name (see `toolsight list benchmarks`) or a dataset folder")],
    model: Annotated[str, typer.Option("--model", "-m", metavar="MODEL", envvar="TOOLSIGHT_MODEL", help="e.g. openai/gpt-4o, anthropic/NAME, google/NAME, reference (default: $TOOLSIGHT_MODEL)")],
    setting: Annotated[str | None, typer.Option(metavar="NAME", help="setting name (see `toolsight list settings BENCH`)")] = None,
    loop: Annotated[str | None, typer.Option(help="official (the benchmark driver's requests) | toolsight (improved loop); default: the setting's")] = None,
    data: Annotated[str | None, typer.Option(metavar="PATH", help="path to the benchmark's data (official format)")] = None,
    base_url: Annotated[str | None, typer.Option(metavar="URL", help="OpenAI-compatible server URL (vLLM, SGLang, Ollama)")] = None,
    out_dir: Annotated[str | None, typer.Option("--out", metavar="DIR", help="run directory (default runs/NAME-TIME)")] = None,
    resume: Annotated[bool, typer.Option(help="continue the run in --out: unfinished and errored tasks run again")] = False,
    force: Annotated[bool, typer.Option(help="with --resume: accept a changed configuration (recorded)")] = False,
    retry_errors: Annotated[bool, typer.Option(help="with --resume: re-run tasks whose last record is an error")] = True,
    concurrency: Annotated[int, typer.Option(min=1, help="tasks in flight")] = 8,
    max_connections: Annotated[int, typer.Option(min=1, help="concurrent requests to the model")] = 32,
    limit: Annotated[str | None, typer.Option(metavar="N|A-B", help="run only the first N tasks, or the A-th to the B-th (from 1)")] = None,
    fail_on_error: Annotated[float | None, typer.Option(metavar="N|FRACTION", help="stop once N tasks (or this share of them) ended in error; exit 3, resumable")] = None,
    judge: Annotated[str | None, typer.Option(envvar="TOOLSIGHT_JUDGE", help="judge model for LLM-judged scoring (default: $TOOLSIGHT_JUDGE)")] = None,
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
    task_timeout: Annotated[float | None, typer.Option(min=0.1, help="seconds per task [default: the setting's (toolsight list settings), else 1200]")] = None,
    request_timeout: Annotated[float, typer.Option(min=0.1, help="seconds per model request")] = 120.0,
    backoff_base: Annotated[float, typer.Option(min=0.0, help="first retry delay in seconds (doubles)")] = 1.0,
    outage_timeout: Annotated[float, typer.Option(min=0.0, help="give up when the endpoint stays unreachable this long (s)")] = 600.0,
    max_retry_after: Annotated[float, typer.Option(min=0.0, help="longest Retry-After honoured (s)")] = 120.0,
    cap: Annotated[list[str] | None, typer.Option(metavar="NAME=VALUE", help="agent cap NAME=VALUE (repeatable; names: `toolsight list caps`)")] = None,
    model_args: Annotated[list[str] | None, typer.Option(
        "--model-args", "-M", metavar="KEY=VALUE", help="provider argument KEY=VALUE (repeatable; VALUE as JSON when it parses): top_p, "
        "stop, top_k, chat_template_kwargs=... (docs/models.md)")] = None,
    extra_body: Annotated[str | None, typer.Option(metavar="JSON", help="JSON object (or a .json file) merged into every request body")] = None,
    task_id: Annotated[list[str] | None, typer.Option("--task-id", metavar="ID", help="run only this task (repeatable)")] = None,
    tag: Annotated[list[str] | None, typer.Option(metavar="KEY=VALUE", help="run only tasks with tag KEY=VALUE (repeatable; KEY=V1,V2 = either)")] = None,
    epochs: Annotated[int, typer.Option(min=1, metavar="N", help="run every task N times (pass@k, mean@k, per-epoch spread)")] = 1,
    epochs_reducer: Annotated[str | None, typer.Option(metavar="NAME", help="mean | pass_at_k | pass_all_k | median (default: the scorer's, else mean)")] = None,
    bench_option: Annotated[list[str] | None, typer.Option(
        "--bench-option", "-B", metavar="KEY=VALUE", help="the benchmark's own option (repeatable; `toolsight list options BENCH`)")] = None,
    agent: Annotated[str | None, typer.Option(help="agent to run the setting with, e.g. vcr (see docs)")] = None,
    history: Annotated[str | None, typer.Option(help="multi-turn history: gold (gold answers) | model")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="do not use the response cache")] = False,
    report: Annotated[bool, typer.Option(help="print the report tables at the end")] = True,
    web: Annotated[str | None, typer.Option(help="web tools' backend: live | offline[=CORPUS_DIR] | replay=RUN_DIR")] = None,
    web_budget: Annotated[int | None, typer.Option(min=1, help="web requests allowed in this run")] = None,
    summary_model: Annotated[str | None, typer.Option(help="model that summarises pages for `visit`")] = None,
    sandbox: Annotated[str | None, typer.Option(metavar="BACKEND", help="where model-written code runs: forkserver (confined; default) | subprocess (NOT isolated; docs/sandbox.md)")] = None,
    adaptive: Annotated[bool, typer.Option(help="adapt the connection limit to the endpoint (AIMD, under --max-connections)")] = True,
    executor: Annotated[str, typer.Option(help="where tasks run: local | ray (docs/scale.md)")] = "local",
    ray_address: Annotated[str | None, typer.Option(metavar="HOST:PORT", help="Ray cluster to join (default: start a local one)")] = None,
    ray_workers: Annotated[int | None, typer.Option(min=1, help="Ray workers (default: one per cluster CPU, at most --concurrency)")] = None,
    batch: BatchMode = None,
    judge_batch: JudgeBatch = False,
    batch_size: BatchSize = 100,
    batch_idle: BatchIdle = 5.0,
    batch_poll: BatchPoll = 5.0,
    batch_retry: BatchRetry = "batch",
    prices: Prices = None,
) -> None:
    """Run a benchmark or a dataset folder with a model.

    Writes a run directory (manifest, records, artifacts); Ctrl-C keeps finished records and prints the
    command that resumes."""
    from toolsight.engine.options import (
        ModelOptions,
        RunControl,
        RunOptions,
        SandboxOptions,
        ScoringOptions,
        WebOptions,
    )
    from toolsight.log.modes import loop_mode
    from toolsight.log.modes import scorer_mode as scorer_mode_of
    from toolsight.models.base import GenerateConfig

    if scorer_mode not in ("official", "corrected"):
        raise _fail(f"--scorer-mode {scorer_mode!r}: use 'official' or 'corrected'", EXIT_USAGE)
    if loop not in (None, "official", "toolsight"):
        raise _fail(f"--loop {loop!r}: use 'official' or 'toolsight'", EXIT_USAGE)
    _check_batch_flags(batch, batch_retry)
    price_file = _check_prices(prices)
    if history not in (None, "gold", "model"):
        raise _fail(f"--history {history!r}: use 'gold' (earlier turns' gold answers) or 'model'", EXIT_USAGE)
    if reasoning_effort not in (None, "minimal", "low", "medium", "high"):
        raise _fail(f"--reasoning-effort {reasoning_effort!r}: use minimal, low, medium or high", EXIT_USAGE)
    from toolsight.api.options import generation, parse_assignments, parse_json_object, parse_run_limits
    from toolsight.tasks.select import parse_tag_filters

    try:
        gen = generation(
            GenerateConfig(temperature=temperature, max_tokens=max_tokens, seed=seed, reasoning_effort=reasoning_effort,
                           thinking_budget=thinking_budget, timeout=request_timeout),
            parse_assignments(model_args or [], "-M", "top_p=0.9"),
            parse_json_object(extra_body, "--extra-body") if extra_body is not None else None,
        )
        caps = {**_parse_caps(cap or []), **({"history": history} if history else {})}
        tags = parse_tag_filters(tag or [])
        limits = parse_run_limits(limit, fail_on_error)
        bench_opts = parse_assignments(bench_option or [], "-B", "NAME=VALUE")
    except ToolsightError as exc:
        raise _fail(str(exc), EXIT_USAGE) from None
    if epochs_reducer is not None:
        from toolsight.metrics.epochs import REDUCERS

        if epochs_reducer not in REDUCERS:
            raise _fail(f"--epochs-reducer {epochs_reducer!r}: use one of {', '.join(REDUCERS)}", EXIT_USAGE)
    opts = RunOptions(
        benchmark=target, setting=setting, loop=loop_mode(loop) if loop else None, data=data, agent=agent, caps=caps,
        benchmark_options=bench_opts,
        model=ModelOptions(spec=model, base_url=base_url, generate=gen, max_connections=max_connections,
                           adaptive=adaptive),
        control=RunControl(
            out=out_dir, resume=resume, force=force, retry_errors=retry_errors, concurrency=concurrency, **limits,
            task_ids=[i for item in task_id or [] for i in item.split(",") if i] or None, tags=tags, epochs=epochs,
            retries=retries, backoff_base=backoff_base, task_timeout=task_timeout, outage_timeout=outage_timeout,
            max_retry_after=max_retry_after, cache=not no_cache, executor=executor, ray_address=ray_address,
            ray_workers=ray_workers, batch=batch, batch_size=batch_size, batch_idle=batch_idle, batch_poll=batch_poll,
            batch_retry=batch_retry, prices=price_file),
        scoring=ScoringOptions(score=not no_score, scorer_mode=scorer_mode_of(scorer_mode), judge=judge,
                               judge_base_url=judge_base_url, judge_concurrency=judge_concurrency,
                               epochs_reducer=epochs_reducer, judge_batch=judge_batch),
        web=WebOptions(backend=web, budget=web_budget, summary_model=summary_model),
        sandbox=SandboxOptions(backend=sandbox),
    )
    from toolsight.agents.registry import agent_names

    if agent is not None and agent not in agent_names():
        raise _fail(f"--agent {agent!r}: unknown agent; choose one of: {', '.join(agent_names())}", EXIT_USAGE)
    _execute(opts, report)


def _execute(opts: Any, report: bool) -> None:
    from toolsight.session import execute_run

    _exit_with(lambda: execute_run(opts, show_report=report).exit_code)


def _exit_with(work: Callable[[], int]) -> None:
    """Run `work`; a ToolsightError becomes its one-line message and exit code, a non-zero result the exit code."""
    try:
        code = work()
    except ToolsightError as exc:
        raise _fail(str(exc), exc.exit_code) from None
    if code:
        raise typer.Exit(code)


@app.command()
def sweep(
    plan: Annotated[Path, typer.Argument(help="a sweep plan (.toml, .yaml): models × benchmarks × settings")],
    out: Annotated[Path | None, typer.Option(help="the sweep folder (default: the plan's `out`, else sweeps/NAME)")] = None,
    resume: Annotated[bool, typer.Option(help="continue the sweep in --out: finish every run of the plan")] = False,
    report: Annotated[bool, typer.Option(help="print the combined report at the end")] = True,
) -> None:
    """Run many runs from one plan into one sweep folder, sharing each endpoint's limit (docs/scale.md)."""
    from toolsight.sweep_session import execute_sweep

    _exit_with(lambda: execute_sweep(plan, out, resume=resume, report=report).exit_code)


@app.command()
def retry(
    ctx: typer.Context,
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    base_url: Annotated[str | None, typer.Option(help="model URL, if it moved since the run started")] = None,
    judge_base_url: Annotated[str | None, typer.Option(help="judge URL, if it moved")] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="tasks in flight")] = None,
    retries: Annotated[int | None, typer.Option(min=0)] = None,
    backoff_base: Annotated[float | None, typer.Option(min=0.0)] = None,
    outage_timeout: Annotated[float | None, typer.Option(min=0.0)] = None,
    executor: Annotated[str | None, typer.Option(help="local | ray (default: as the run was made)")] = None,
    ray_address: Annotated[str | None, typer.Option(metavar="HOST:PORT", help="Ray cluster to join")] = None,
    report: Annotated[bool, typer.Option(help="print the report tables at the end")] = True,
    batch: BatchMode = None,
    judge_batch: JudgeBatch = False,
    batch_size: BatchSize = 100,
    batch_idle: BatchIdle = 5.0,
    batch_poll: BatchPoll = 5.0,
    batch_retry: BatchRetry = "batch",
    prices: Prices = None,
) -> None:
    """Re-run a run's errored and unfinished tasks.

    Uses the options the run was made with; those given here (a moved --base-url, say, or --batch)
    replace them."""
    from toolsight.session import retry_options

    _check_batch_flags(batch, batch_retry)
    price_file = _check_prices(prices)
    if not (run_dir / "manifest.json").is_file():
        raise _fail(f"{run_dir} is not a run directory (no manifest.json)", EXIT_USAGE)
    # the batch options replace the run's only when given here (their defaults are the run's defaults)
    given = {name: value for name, value in (("batch", batch), ("judge_batch", judge_batch), ("batch_size", batch_size),
                                             ("batch_idle", batch_idle), ("batch_poll", batch_poll),
                                             ("batch_retry", batch_retry))
             if getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"}
    try:
        opts = retry_options(run_dir, {"base_url": base_url, "judge_base_url": judge_base_url,
                                       "concurrency": concurrency, "retries": retries,
                                       "backoff_base": backoff_base, "outage_timeout": outage_timeout,
                                       "executor": executor, "ray_address": ray_address, "prices": price_file,
                                       **given})
    except ToolsightError as exc:
        raise _fail(str(exc), exc.exit_code) from None
    _execute(opts, report)


@app.command()
def generate(
    kind: Annotated[str, typer.Argument(help="generator kind (see `toolsight list generators`)")],
    n: Annotated[int, typer.Option("--n", min=1, help="number of tasks")] = 10,
    seed: Annotated[int, typer.Option(help="random seed")] = 0,
    out_dir: Annotated[Path, typer.Option("--out", help="folder to write (made; an earlier generated set there is replaced)")] = Path("generated"),
    difficulty: Annotated[int | None, typer.Option(help="difficulty level (generator-specific; `toolsight list generators`)")] = None,
) -> None:
    """Generate a synthetic task set (deterministic for a seed)."""
    from toolsight.api.progress import PlainProgress
    from toolsight.benchmarks.generation import check_request
    from toolsight.benchmarks.generation import generate as write_set

    try:
        check_request(kind, n, difficulty, out_dir)  # before a progress bar is drawn
    except ToolsightError as exc:
        raise _fail(str(exc), EXIT_USAGE) from None
    what = f"{n} {kind} task(s) into {out_dir}"
    if err.is_terminal:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(TextColumn(f"[bold]generating {kind}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                       console=err, transient=True)
        tid = bar.add_task(kind, total=n)
        bar.start()

        def tick(done: int) -> None:
            bar.update(tid, completed=done)
    else:
        plain = PlainProgress(f"generate {kind}", n)
        plain.start(f"generating {what}")

        def tick(done: int) -> None:
            plain.update(done, n)
    try:
        info = write_set(kind, n, seed, out_dir, difficulty, tick)
    except ToolsightError as exc:
        raise _fail(str(exc), exc.exit_code) from None
    finally:
        if err.is_terminal:
            bar.stop()
    out.print(f"wrote {n} {kind} task(s) to {out_dir}; run them with `{info.run_hint(out_dir)}`", markup=False)


@app.command()
def score(
    run_dir: Annotated[Path, typer.Argument(help="a finished run directory")],
    judge: Annotated[str | None, typer.Option(envvar="TOOLSIGHT_JUDGE", help="judge model spec (default: $TOOLSIGHT_JUDGE)")] = None,
    judge_base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible URL for the judge")] = None,
    scorer: Annotated[str | None, typer.Option(help="scorer name (default: the benchmark's own)")] = None,
    mode: Annotated[str, typer.Option(help="official | corrected")] = "official",
    name: Annotated[str | None, typer.Option(help="name of the scores file (scores-NAME.jsonl)")] = None,
    bench_option: Annotated[list[str] | None, typer.Option(
        "--bench-option", "-B", metavar="KEY=VALUE", help="the benchmark's own option, over the run's (repeatable; `toolsight list options BENCH`)")] = None,
    judge_concurrency: Annotated[int, typer.Option(min=1, help="concurrent requests to the judge")] = 8,
    retries: Annotated[int, typer.Option(min=0, help="retries of a failed judge call")] = 5,
    backoff_base: Annotated[float, typer.Option(min=0.0, help="first retry delay in seconds (doubles)")] = 1.0,
    outage_timeout: Annotated[float, typer.Option(min=0.0, help="give up when the judge endpoint stays unreachable this long (s)")] = 600.0,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="ask the judge again instead of replaying the run's cached replies")] = False,
    judge_batch: JudgeBatch = False,
    batch_size: BatchSize = 100,
    batch_idle: BatchIdle = 5.0,
    batch_poll: BatchPoll = 5.0,
    batch_retry: BatchRetry = "batch",
    prices: Prices = None,
) -> None:
    """Re-score a finished run without calling the model again.

    Writes scores-NAME.jsonl beside the records and prints the score table; exits 3 when some tasks
    could not be scored, 4 when the judge endpoint stayed down past --outage-timeout."""
    from toolsight.engine.rescore import JudgeCalls
    from toolsight.session import rescore, score_table

    if mode not in ("official", "corrected"):
        raise _fail(f"--mode {mode!r}: use 'official' or 'corrected'", EXIT_USAGE)
    _check_batch_flags(None, batch_retry)
    price_table = _load_prices(prices)
    if not (run_dir / "manifest.json").is_file():
        raise _fail(f"{run_dir} is not a run directory (no manifest.json)", EXIT_USAGE)
    _warn_missing_artifacts([run_dir], "score")
    from toolsight.api.options import parse_assignments

    try:
        bench_opts = parse_assignments(bench_option or [], "-B", "NAME=VALUE")
        calls = JudgeCalls(concurrency=judge_concurrency, retries=retries, backoff_base=backoff_base,
                           outage_timeout=outage_timeout, cache=not no_cache, batch=judge_batch,
                           batch_size=batch_size, batch_idle=batch_idle, batch_poll=batch_poll,
                           batch_retry=batch_retry)
        path = rescore(run_dir, judge=judge, scorer=scorer, mode=mode, name=name, judge_base_url=judge_base_url,
                       benchmark_options=bench_opts, calls=calls)
    except ToolsightError as exc:
        raise _fail(str(exc), exc.exit_code) from None
    except FileNotFoundError as exc:
        raise _fail(str(exc), EXIT_USAGE) from None
    counts = _score_counts(path)
    line = (f"wrote {path}: {counts.get('scored', 0)} scored, {counts.get('score_errors', 0)} score error(s), "
            f"{counts.get('skipped', 0)} not scored (run errors or unknown tasks)")
    if isinstance(counts.get("batch"), dict):
        from toolsight.calls.batching import BatchStats, describe_batches

        line += f"; batch mode ({describe_batches({k: BatchStats(**v) for k, v in counts['batch'].items()})})"
    out.print(line, markup=False)
    try:
        out.print(score_table(run_dir, path, price_table), markup=False, highlight=False)
    except (ToolsightError, ValueError, OSError) as exc:  # the scores are written; a table problem must not hide that
        err.print(f"(score table not available: {_one_line(str(exc))})")
    if counts.get("score_errors"):
        first = str(counts.get("score_error") or "")
        raise _fail(f"{counts['score_errors']} task(s) could not be scored; first: {first}", EXIT_TASK_ERRORS)


def _warn_missing_artifacts(run_dirs: list[Path], command: str) -> None:
    """One warning line per run whose `artifacts/` folder is gone (the command goes on without it)."""
    from toolsight.report.missing import missing_artifacts

    for d in run_dirs:
        note = missing_artifacts(d, command)
        if note:
            err.print(f"warning: {note}", markup=False, highlight=False)


def _score_counts(path: Path) -> dict[str, Any]:
    """The counts `toolsight score` wrote beside its scores file (scores-NAME.meta.json)."""
    meta = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@app.command("report")
def report_cmd(
    run_dirs: Annotated[list[Path], typer.Argument(help="one or more run directories, or a sweep folder")],
    by: Annotated[list[str] | None, typer.Option(help="group by this task tag (repeatable)")] = None,
    fmt: Annotated[str, typer.Option("--format", help="md | html | json | csv")] = "md",
    base: Annotated[str | None, typer.Option(help="base setting for deltas")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="write the report (and plots) here")] = None,
    scores: Annotated[str | None, typer.Option(help="use scores-NAME.jsonl instead of the records' scores")] = None,
    metric: Annotated[str, typer.Option(help="headline number: score | pass_rate")] = "score",
    human_grades: Annotated[Path | None, typer.Option(help="JSONL of human rubric verdicts (judge agreement)")] = None,
    prices: Annotated[Path | None, typer.Option(
        help="price table (JSON or TOML) merged over toolsight's built-in one, model by model (docs/cost.md)")] = None,
) -> None:
    """Print the papers' tables for one or more runs."""
    if fmt not in ("md", "html", "json", "csv"):
        raise _fail(f"--format {fmt!r}: use md, html, json or csv", 2)
    if len(run_dirs) == 1 and (run_dirs[0] / "sweep.json").is_file():  # a sweep folder: its combined report
        from toolsight.report.sweep import build_sweep_report

        try:
            text = build_sweep_report(run_dirs[0], fmt=fmt, out_dir=out_dir)
        except (ToolsightError, ValueError, OSError) as exc:
            raise _fail(str(exc)) from None
        _print_report(text, fmt, out_dir)
        return
    for d in run_dirs:
        if not (d / "manifest.json").is_file():
            raise _fail(f"{d} is not a run directory (no manifest.json)")
    _warn_missing_artifacts(run_dirs, "report")
    from toolsight.report import build_report
    kwargs: dict[str, Any] = {"by": by or [], "fmt": fmt, "base_setting": base, "out_dir": out_dir,
                              "scores": scores, "metric": metric, "human_grades": human_grades}
    try:
        from toolsight.metrics.cost import load_prices

        kwargs["prices"] = load_prices(prices)
        text = build_report(run_dirs, **kwargs)
    except ToolsightError as exc:  # e.g. a --by key no task has: bad input, exit 2
        raise _fail(str(exc), exc.exit_code) from None
    except (ValueError, OSError) as exc:
        raise _fail(str(exc)) from None
    _print_report(text, fmt, out_dir)


def _print_report(text: str, fmt: str, out_dir: Path | None) -> None:
    """The report on stdout; an HTML report written to --out is only named (the page is in the folder)."""
    if fmt == "html" and out_dir is not None:
        out.print(f"wrote {out_dir / 'report.html'}", markup=False, highlight=False)
        return
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


@app.command()
def view(
    run_dirs: Annotated[list[Path], typer.Argument(help="a run directory; two or more: compare them side by side")],
    out_dir: Annotated[Path | None, typer.Option("--out", help="where to write the site (default RUN/viewer)")] = None,
    serve: Annotated[bool, typer.Option(help="serve on 127.0.0.1 and rebuild live while records arrive")] = False,
    port: Annotated[int, typer.Option(min=0, max=65535, help="port for --serve (0 = any free port)")] = 8780,
    scores: Annotated[str | None, typer.Option(help="show scores-NAME.jsonl instead of the records' scores")] = None,
    prices: Annotated[Path | None, typer.Option(
        help="price table (JSON or TOML) merged over toolsight's built-in one, model by model (docs/cost.md)")] = None,
) -> None:
    """Build the HTML trace viewer for a run.

    Two or more runs: the same tasks side by side. A folder of runs (and sweeps): an index of them, each
    run's viewer, and (served) any two compared."""
    if len(run_dirs) == 1 and run_dirs[0].is_dir() and not (run_dirs[0] / "manifest.json").is_file():
        from toolsight.report.viewer_folder import build_folder_viewer, serve_folder

        try:
            if serve:
                serve_folder(run_dirs[0], port, lambda line: out.print(line, markup=False))
            else:
                out.print(f"viewer: {build_folder_viewer(run_dirs[0])}", markup=False)
        except (ToolsightError, OSError) as exc:
            raise _fail(str(exc)) from None
        return
    for d in run_dirs:
        if not (d / "manifest.json").is_file():
            raise _fail(f"{d} is not a run directory (no manifest.json)")
    _warn_missing_artifacts(run_dirs, "view")
    from toolsight.report import viewer
    from toolsight.report.viewer_serve import ViewerError

    def build() -> Path:
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

    names = benchmark_names()
    width = max((len(n) for n in names), default=0)
    for name in names:
        try:
            desc = get_benchmark(name).description
        except ToolsightError as exc:  # a plugin that does not load: say so, list the others
            desc = f"(unavailable: {exc})"
        out.print(f"{name:{width}s}  {desc}", highlight=False, markup=False)
    out.print("(any folder with tasks.jsonl can be run too: `toolsight run DIR --model M`)")


@list_app.command("settings")
def list_settings(benchmark: Annotated[str, typer.Argument(help="benchmark name or dataset folder")]) -> None:
    """Settings of a benchmark."""
    from toolsight.agents.registry import agent_toolsets
    from toolsight.benchmarks.registry import get_benchmark

    try:
        b = get_benchmark(benchmark)
    except ToolsightError as exc:
        raise _fail(str(exc)) from None
    for name, s in b.settings().items():
        mark = " (default)" if name == b.default_setting else ""
        own = [t for t in agent_toolsets(s.agent) if t not in s.tools]  # an agent's own, e.g. pyvision's
        # as the setting's loop offers them, then the agent's own
        tools = ", ".join([*b.offered_tools(s), *own]) or "no tools"
        agent = f"; agent {s.agent}" if s.agent != "default" else ""
        clock = f"; task timeout {s.task_timeout_s:g} s" if s.task_timeout_s else ""
        out.print(f"{name}{mark}: loop {s.loop}{agent}; tools: {tools}; max tool calls {s.max_tool_calls}, "
                  f"max rounds {s.max_rounds}{clock}", highlight=False)


@list_app.command("options")
def list_options(benchmark: Annotated[str, typer.Argument(help="benchmark name or dataset folder")]) -> None:
    """A benchmark's own options (`toolsight run BENCH -B KEY=VALUE`)."""
    from toolsight.benchmarks.registry import get_benchmark

    try:
        b = get_benchmark(benchmark)
    except ToolsightError as exc:
        raise _fail(str(exc)) from None
    fields = b.Options.model_fields
    if not fields:
        out.print(f"{b.target_name()} has no options of its own", highlight=False, markup=False)
    for name, f in fields.items():
        out.print(f"{name:22s} {f.description or ''} (default: {f.default!r})", highlight=False, markup=False)


@list_app.command("caps")
def list_caps() -> None:
    """Agent caps that --cap NAME=VALUE can set."""
    from toolsight.api.options import cap_names

    for name, desc in cap_names().items():
        out.print(f"{name:22s} {desc}", markup=False)
    out.print('values are JSON when they parse: --cap max_tool_calls=10 --cap \'generate={"top_p": 0.9}\'', markup=False)


@list_app.command("models")
def list_models() -> None:
    """Model providers (prefixes) and built-in baselines."""
    from toolsight.models.registry import list_providers

    for name, desc in list_providers():
        out.print(f"{name:14s} {desc}", highlight=False)


@list_app.command("agents")
def list_agents() -> None:
    """Agents `--agent NAME` can run (any benchmark's tasks), and the tool sets each calls by itself."""
    from toolsight.agents.registry import agent_toolsets, describe_agents

    agents = describe_agents()
    width = max((len(n) for n in agents), default=0)
    for name, desc in agents.items():
        own = agent_toolsets(name)
        tools = f" [tool sets: {', '.join(own)}]" if own else ""
        out.print(f"{name:{width}s}  {desc}{tools}", highlight=False, markup=False)


@list_app.command("tools")
def list_tools() -> None:
    """Tool sets (the generic ones, agents' own, then each benchmark's own), their tools, and the sandbox
    isolation in force."""
    from toolsight.agents.registry import agent_names
    from toolsight.benchmarks.registry import loadable
    from toolsight.tools.registry import UnknownToolSet, build_tools, describe_toolsets

    agent_names()  # registers the tool sets agents bring with them
    owners: dict[str, str] = {n: "" for n in describe_toolsets()}
    extra: dict[str, Any] = {}
    for bench in loadable():  # the tool sets settings name that only their benchmark offers
        for name, ts in bench.toolsets().items():
            owners.setdefault(name, bench.name)
            extra.setdefault(name, ts)
    descriptions = describe_toolsets(extra)
    for name, owner in owners.items():
        where = f" ({owner} only)" if owner else ""
        try:
            names = ", ".join(t.name for t in build_tools([name], extra=extra))
            out.print(f"[bold]{name}[/]{where}: {descriptions[name]}\n    {names}", highlight=False)
        except UnknownToolSet as exc:
            out.print(f"[bold]{name}[/]{where}: unavailable ({exc})", highlight=False)
    from toolsight.engine.manifest import isolation

    iso = isolation(True)
    out.print("sandbox isolation: " + json.dumps(iso), highlight=False)


@list_app.command("generators")
def list_generators() -> None:
    """Synthetic task generators (`toolsight generate KIND`), by the benchmark that offers them."""
    from toolsight.benchmarks.generation import generator_kinds

    for name, k in generator_kinds().items():
        levels = f" [--difficulty {k.generator.difficulty_help}]" if k.generator.difficulties else ""
        out.print(f"{name:18s} {k.benchmark}: {k.generator.description}{levels}", highlight=False, markup=False)


def _click_exceptions() -> Any:
    """Click's exception classes: typer >= 0.2x vendors click as `typer._click`, older typer uses click."""
    try:
        from typer._click import exceptions as vendored

        return vendored
    except ImportError:  # pragma: no cover - older typer
        import click.exceptions

        return click.exceptions


def batch_flag(args: list[str]) -> list[str]:
    """`--batch` takes an optional value: alone (or before anything but `calls`/`rounds`) it means
    `--batch calls`."""
    out = list(args)
    for i, a in enumerate(out):
        if a == "--":
            break
        if a == "--batch" and (i + 1 == len(out) or out[i + 1] not in ("calls", "rounds")):
            out[i] = "--batch=calls"
    return out


def main() -> None:
    from toolsight.api.env import load_env
    from toolsight.diagnostics import LogSetupError, configure_logging

    try:
        load_env(warn=lambda line: err.print(line, markup=False))  # API keys without exporting them (set ones win)
    except Exception as exc:  # a broken .env must not hide the command's own error
        err.print(f"warning: .env not loaded: {_one_line(str(exc))}")
    try:
        configure_logging()  # after .env, so TOOLSIGHT_LOG_LEVEL / _LOG_FILE may be set there
    except LogSetupError as exc:
        err.print(f"[bold red]error:[/] {_one_line(str(exc))}")
        sys.exit(EXIT_USAGE)
    ce = _click_exceptions()
    try:
        code = app(args=batch_flag(sys.argv[1:]), standalone_mode=False, prog_name="toolsight")
    except ce.NoArgsIsHelpError as exc:  # bare `toolsight` / `toolsight list`: the help
        sys.stderr.write(exc.format_message().rstrip() + "\n")
        sys.exit(EXIT_USAGE)
    except ce.UsageError as exc:  # a bad flag or value: one line, the fix, exit 2
        where = f"`{exc.ctx.command_path} --help`" if exc.ctx is not None else "`toolsight --help`"
        err.print(f"[bold red]error:[/] {_one_line(exc.format_message())} (see {where})")
        sys.exit(exc.exit_code)
    except ce.ClickException as exc:
        err.print(f"[bold red]error:[/] {_one_line(exc.format_message())}")
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except ToolsightError as exc:  # any command: one line and the error's code, never a traceback
        err.print(f"[bold red]error:[/] {_one_line(str(exc))}")
        sys.exit(exc.exit_code)
    except RunAborted as exc:  # e.g. a judge's credentials rejected while re-scoring
        err.print(f"[bold red]stopped:[/] {_one_line(str(exc))}")
        sys.exit(exc.exit_code)
    except OSError as exc:
        from toolsight.engine.store import is_disk_full

        if not is_disk_full(exc):
            raise
        err.print(f"[bold red]error:[/] disk full: {_one_line(str(exc))}")
        sys.exit(EXIT_ABORTED)
    sys.exit(code if isinstance(code, int) else 0)
