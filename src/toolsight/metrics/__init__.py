"""Layer 4: metrics computed from records only — accuracy, tool use, effective chain, agreement, cost.

The names below load their module on first use: pricing a record (`metrics.cost`, `metrics.billing`,
which a run's summary does for every task) must not import numpy and the tool vocabularies that the
other metrics need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolsight.metrics.agreement import Agreement, load_human_grades
    from toolsight.metrics.chain import TaskChain, TurnChain, task_chain, turn_chain
    from toolsight.metrics.compute import (
        GroupScore,
        RunMetrics,
        ToolUse,
        UsageMetrics,
        compute_run_metrics,
        metrics_from_views,
    )
    from toolsight.metrics.cost import Price, load_prices
    from toolsight.metrics.stats import Estimate, bootstrap, bootstrap_ratio
    from toolsight.metrics.views import TaskView, iter_views, load_scores, scores_path

_WHERE = {
    "Agreement": "agreement", "load_human_grades": "agreement",
    "TaskChain": "chain", "TurnChain": "chain", "task_chain": "chain", "turn_chain": "chain",
    "GroupScore": "compute", "RunMetrics": "compute", "ToolUse": "compute", "UsageMetrics": "compute",
    "compute_run_metrics": "compute", "metrics_from_views": "compute",
    "Price": "cost", "load_prices": "cost",
    "Estimate": "stats", "bootstrap": "stats", "bootstrap_ratio": "stats",
    "TaskView": "views", "iter_views": "views", "load_scores": "views", "scores_path": "views",
}

__all__ = [
    "Agreement", "Estimate", "GroupScore", "Price", "RunMetrics", "TaskChain", "TaskView", "ToolUse",
    "TurnChain", "UsageMetrics", "bootstrap", "bootstrap_ratio", "compute_run_metrics", "iter_views",
    "load_human_grades", "load_prices", "load_scores", "metrics_from_views", "scores_path", "task_chain",
    "turn_chain",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'toolsight.metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"toolsight.metrics.{module}"), name)
    globals()[name] = value
    return value
