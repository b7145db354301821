"""Epochs: a run with `--epochs K` runs every task K times; these reduce a task's K scores to one.

The headline score of such a run is computed over tasks, each reduced by the run's reducer, so
its confidence interval resamples tasks, not task-epochs (epochs of one task are not independent
samples). Reducers (`--epochs-reducer`; default: the scorer's `reducer` attribute, else `mean`):

- `mean` (mean@k): the mean of the K values; the pass share is the share of passing epochs.
- `pass_at_k` (pass@k): passed when any epoch passed; the value is the best epoch's.
- `pass_all_k` (pass^k): passed only when every epoch passed; the value is the worst epoch's.
- `median`: the median value; passed when most epochs passed.

`epoch_stats` adds what every epochs run reports whatever its reducer: mean@k, pass@k, pass^k
and the per-epoch scores with their standard deviation across epochs (run-to-run variance).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, Field

#: (epoch, value, passed) of one task's scored epochs
Sample = tuple[int, float, bool]

REDUCERS: dict[str, str] = {
    "mean": "mean@k: mean of the epochs' values; pass share = share of passing epochs",
    "pass_at_k": "pass@k: passed when any epoch passed (value: the best epoch's)",
    "pass_all_k": "pass^k: passed only when every epoch passed (value: the worst epoch's)",
    "median": "median of the epochs' values; passed when most epochs passed",
}
DEFAULT_REDUCER = "mean"


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


_REDUCE: dict[str, Callable[[Sequence[float], Sequence[bool]], tuple[float, float]]] = {
    "mean": lambda v, p: (_mean(v), _mean([float(x) for x in p])),
    "pass_at_k": lambda v, p: (max(v), float(any(p))),
    "pass_all_k": lambda v, p: (min(v), float(all(p))),
    "median": lambda v, p: (float(statistics.median(v)), float(sum(p) * 2 > len(p))),
}


def check_reducer(name: str) -> str:
    """`name` if it is a reducer, else a ValueError listing them."""
    if name not in _REDUCE:
        raise ValueError(f"unknown epochs reducer {name!r}; choose one of: {', '.join(REDUCERS)}")
    return name


def reduce_task(samples: Sequence[Sample], reducer: str) -> tuple[float, float]:
    """One task's (value, pass share) from its scored epochs."""
    return _REDUCE[check_reducer(reducer)]([s[1] for s in samples], [s[2] for s in samples])


class EpochStats(BaseModel):
    """What a run with several epochs reports beside its reduced headline score."""

    k: int = Field(description="epochs (the highest epoch number among the records)")
    reducer: str = DEFAULT_REDUCER
    tasks: int = Field(default=0, description="tasks with at least one scored epoch")
    complete: int = Field(default=0, description="tasks with all k epochs scored")
    per_epoch: dict[int, float] = Field(default_factory=dict, description="mean score value of each epoch")
    per_epoch_sd: float | None = Field(default=None, description="standard deviation of the per-epoch means")
    mean_at_k: float | None = None
    pass_at_k: float | None = Field(default=None, description="share of tasks where any epoch passed")
    pass_all_k: float | None = Field(default=None, description="share of tasks where every epoch passed")


def epoch_stats(by_task: Mapping[str, Sequence[Sample]], k: int, reducer: str) -> EpochStats:
    """EpochStats over every task's scored epochs."""
    per: dict[int, list[float]] = {}
    for samples in by_task.values():
        for ep, value, _ in samples:
            per.setdefault(ep, []).append(value)
    per_epoch = {ep: _mean(v) for ep, v in sorted(per.items())}
    tasks = [s for s in by_task.values() if s]
    n = len(tasks)
    return EpochStats(
        k=k, reducer=reducer, tasks=n, complete=sum(1 for s in tasks if len({e for e, _, _ in s}) >= k),
        per_epoch=per_epoch,
        per_epoch_sd=statistics.stdev(per_epoch.values()) if len(per_epoch) > 1 else None,
        mean_at_k=_mean([reduce_task(s, "mean")[0] for s in tasks]) if n else None,
        pass_at_k=_mean([reduce_task(s, "pass_at_k")[1] for s in tasks]) if n else None,
        pass_all_k=_mean([reduce_task(s, "pass_all_k")[1] for s in tasks]) if n else None,
    )
