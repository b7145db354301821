"""Where a run's tasks execute: `local` (the runner's own event loop, the default) or `ray` (actors
on a Ray cluster, `pip install 'toolsight[ray]'`). The runner always opens, locks and plans the run
directory itself; an executor only decides where the plan's tasks run, and writes what comes back
(docs/scale.md).
"""

from __future__ import annotations

from toolsight.engine.runner import RunError, RunOptions, TaskExecutor

EXECUTORS = ("local", "ray")


def make_executor(opts: RunOptions) -> TaskExecutor | None:
    """The executor `opts.executor` names; None for local (the runner runs its tasks itself)."""
    if opts.executor == "local":
        if opts.ray_address or opts.ray_workers:
            raise RunError("--ray-address / --ray-workers need --executor ray")
        return None
    if opts.executor == "ray":
        from toolsight.engine.executors.ray_executor import RayExecutor

        ex = RayExecutor(address=opts.ray_address, workers=opts.ray_workers)
        ex.preflight()
        return ex
    raise RunError(f"--executor {opts.executor!r}: use one of {', '.join(EXECUTORS)}")
