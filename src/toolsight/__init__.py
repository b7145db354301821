"""toolsight: evaluate multimodal models as agents that think with images.

`toolsight.evaluate(...)` / `await toolsight.evaluate_async(...)` are the Python API
(`toolsight.api`, docs/api.md), with `toolsight.runs_df(DIR)` / `toolsight.samples_df(DIR)` over a
folder of runs; they are imported on first use, so `import toolsight` stays light
and the lower layers never load the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolsight.version import __version__

if TYPE_CHECKING:
    from toolsight.api import EvalResult, evaluate, evaluate_async, runs_df, samples_df

__all__ = ["EvalResult", "__version__", "evaluate", "evaluate_async", "runs_df", "samples_df"]


def __getattr__(name: str) -> Any:
    if name in ("evaluate", "evaluate_async", "EvalResult", "runs_df", "samples_df"):
        from toolsight import api

        return getattr(api, name)
    raise AttributeError(f"module 'toolsight' has no attribute {name!r}")
