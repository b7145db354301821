"""Where a run's tasks execute: `local` (the runner's own event loop, the default) or `ray` (actors
on a Ray cluster, `pip install 'toolsight[ray]'`). The runner always opens, locks and plans the run
directory itself; an executor only decides where the plan's tasks run, and writes what comes back
(docs/scale.md).
"""

from __future__ import annotations

from toolsight.engine.options import RunOptions
from toolsight.engine.rundir import RunError
from toolsight.engine.runner import TaskExecutor

EXECUTORS = ("local", "ray")


def make_executor(opts: RunOptions) -> TaskExecutor | None:
    """The executor `opts.control.executor` names; None for local (the runner runs its tasks itself)."""
    if opts.control.executor == "local":
        if opts.control.ray_address or opts.control.ray_workers:
            raise RunError("--ray-address / --ray-workers need --executor ray")
        return None
    if opts.control.executor == "ray":
        from toolsight.engine.executors.ray_executor import RayExecutor

        ex = RayExecutor(address=opts.control.ray_address, workers=opts.control.ray_workers)
        ex.preflight()
        return ex
    raise RunError(f"--executor {opts.control.executor!r}: use one of {', '.join(EXECUTORS)}")
