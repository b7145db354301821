"""The Python API: `toolsight.evaluate(...)` and `await toolsight.evaluate_async(...)` (docs/api.md).

The same engine as `toolsight run` (the CLI calls it too): the same options (keywords instead of
flags), the same run directory, the same one-line errors (`ToolsightError`). `evaluate` works in
plain scripts and inside a running event loop (Jupyter); `evaluate_async` runs on the caller's
loop. Both return an `EvalResult`: the run directory, the records, the score table as a pandas
DataFrame.

    import toolsight
    result = toolsight.evaluate("starter", model="reference", setting="code", limit=8)
    result.scores        # DataFrame: Model, Setting, N, Errors, Score %, Score % lo/hi, APR % …
    result.records[0]    # toolsight.log.Record
    result.run_dir       # runs/…
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from toolsight.api.env import load_env

if TYPE_CHECKING:
    from toolsight.api.engine import RunHooks, in_any_loop
    from toolsight.api.frames import runs_df, samples_df
    from toolsight.api.options import OptionsError, run_options
    from toolsight.api.progress import PlainProgress
    from toolsight.api.result import EvalResult
    from toolsight.calls.retry import CallStats
    from toolsight.engine.options import RunOptions
    from toolsight.engine.summary import RunSummary

# the engine is imported on first use: `toolsight --help` and `toolsight.api.env` stay light
_LAZY = {
    "RunHooks": "engine", "in_any_loop": "engine", "OptionsError": "options", "run_options": "options",
    "PlainProgress": "progress", "EvalResult": "result", "runs_df": "frames", "samples_df": "frames",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module == "engine":
        from toolsight.api import engine

        return getattr(engine, name)
    if module == "options":
        from toolsight.api import options

        return getattr(options, name)
    if module == "progress":
        from toolsight.api import progress

        return getattr(progress, name)
    if module == "frames":
        from toolsight.api import frames

        return getattr(frames, name)
    if module == "result":
        from toolsight.api import result

        return getattr(result, name)
    if name == "RunOptions":
        from toolsight.engine.options import RunOptions

        return RunOptions
    raise AttributeError(f"module 'toolsight.api' has no attribute {name!r}")


def _hooks(progress: bool) -> RunHooks:
    """Notes on stderr, and (when `progress`) a line every tenth of the run or every 15 s."""
    from toolsight.api.engine import RunHooks
    from toolsight.api.progress import PlainProgress

    if not progress:
        return RunHooks(note=lambda _: None)
    state: dict[str, PlainProgress] = {}

    def started(runner: Any) -> None:
        state["p"] = PlainProgress(f"{runner.bench.name}/{runner.setting_name}")

    def update(s: RunSummary, st: CallStats) -> None:
        if "p" in state:
            errs = sum(s.ran.errors.values())
            state["p"].update(s.done + s.skipped, s.total, f"errors {errs} · tokens {s.ran.tokens}")

    return RunHooks(started=started, progress=update, event=lambda text: print(text, file=sys.stderr, flush=True))


async def evaluate_async(target: str, model: str | None = None, *, progress: bool = True,
                         hooks: RunHooks | None = None, **options: Any) -> EvalResult:
    """Run `target` (a benchmark name or a dataset folder) with `model` on the running event loop.

    `options` are `toolsight run`'s, as keywords: `setting`, `data`, `out`, `limit`, `task_ids`,
    `tags={"category": "maze"}`, `epochs`, `concurrency`, `judge`, `caps={"max_tool_calls": 5}`,
    generation settings (`temperature=0`, `top_p=0.9`, `max_tokens=…`, `stop=[…]`), `model_args={…}`
    (any other provider argument, sent in the request body), `extra_body={…}`, `resume=True`, …
    """
    from toolsight.api.engine import run_async
    from toolsight.api.options import run_options

    opts = run_options(target, model, **options)
    return await run_async(opts, hooks or _hooks(progress))


def evaluate(target: str, model: str | None = None, *, progress: bool = True, hooks: RunHooks | None = None,
             **options: Any) -> EvalResult:
    """`evaluate_async` for synchronous code; works inside a running event loop too (Jupyter). `model`
    defaults to $TOOLSIGHT_MODEL, `judge` to $TOOLSIGHT_JUDGE, the run folder to $TOOLSIGHT_RUNS_DIR."""
    from toolsight.api.engine import run_sync
    from toolsight.api.options import run_options

    opts = run_options(target, model, **options)
    return run_sync(opts, hooks or _hooks(progress))


__all__ = ["EvalResult", "OptionsError", "PlainProgress", "RunHooks", "RunOptions", "evaluate", "evaluate_async",
           "in_any_loop", "load_env", "run_options", "runs_df", "samples_df"]
