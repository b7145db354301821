"""Batch mode for a run and for `toolsight score` (docs/batch.md): which calls may batch, checked
before anything runs, and the routes that send them (`toolsight.calls.batching`) opened on the run
directory's journal (`batches.jsonl`).

`--batch` (`calls`) batches the model's calls of settings that make one call per task (no tools, or
a tool the provider runs inside the one call: `Benchmark.one_call_per_task`);
a setting that offers tools is a loop whose every round would wait for a batch, so it is refused
unless `--batch rounds` says that latency is accepted. `--judge-batch` batches judge calls. A model
without a batch API is refused with one message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsight.calls.batch_journal import BATCHES, BatchJournal
from toolsight.calls.batching import BatchRoute, BatchStats, BatchTuning, Guard, open_route
from toolsight.calls.retry import ModelCaller
from toolsight.engine.rundir import RunError
from toolsight.models.base import Model

#: the per-task time limit under batch mode when none is given: a batch may take up to 24 h
BATCH_TASK_TIMEOUT_S = 2 * 24 * 3600.0


def tuning(size: int, idle: float, poll: float, retry: str = "batch") -> BatchTuning:
    """The collector's tuning from the flags; `retry` (`--batch-retry`): `batch` asks an expired or
    retryable failed item once more in a new batch, `online` sends it on-line at once."""
    return BatchTuning(max_size=size, idle_s=idle, poll_s=poll, poll_max_s=max(poll, 60.0), rebatch=retry == "batch")


def check_batch_model(model: Model, flag: str) -> None:
    """Refuse batch mode on a model with no batch API (a baseline, a scripted or compatible server)."""
    api = model.batch_api()
    if api is None:
        raise RunError(f"{flag}: {model.name} has no batch API (batch mode needs openai/, anthropic/ or google/ "
                       f"models on their own endpoints); leave {flag} out")


def check_batch_setting(mode: str | None, setting: str, tools: list[str], one_call: bool = False) -> None:
    """`--batch` batches one-call settings; a tool loop needs `--batch rounds` (each round waits).
    `one_call`: the benchmark says the setting asks the model once per task all the same
    (`Benchmark.one_call_per_task`: a tool the provider runs inside that call)."""
    if mode == "calls" and tools and not one_call:
        raise RunError(
            f"--batch: setting {setting!r} offers tools ({', '.join(tools)}), so each task makes several model calls "
            "and every round would wait for its own batch (minutes to hours per round); pass --batch rounds to "
            "accept that, or leave --batch out")


@dataclass
class BatchRoutes:
    """The batch routes of one invocation, over one journal; `stats` by role (model, judge)."""

    journal: BatchJournal | None = None
    routes: dict[str, BatchRoute] = field(default_factory=dict)

    @property
    def stats(self) -> dict[str, BatchStats]:
        return {role: r.stats for role, r in self.routes.items()}

    def attach(self, role: str, caller: ModelCaller, tune: BatchTuning, run_dir: Path, replay: bool = True) -> None:
        """Send `caller`'s task calls through its model's batch API (label `m` model, `j` judge);
        `replay=False`: earlier invocations' results are not used again (asked again)."""
        if self.journal is None:
            self.journal = BatchJournal(run_dir / BATCHES)
        route = open_route(caller.model, self.journal, tune, label=role[0], guard=_guard(caller), replay=replay)
        if route is None:
            raise RunError(f"{caller.model.name} has no batch API")
        caller.batch = route
        self.routes[role] = route

    async def aclose(self) -> None:
        for r in self.routes.values():
            await r.aclose()
        if self.journal is not None:
            with contextlib.suppress(OSError):
                self.journal.close()


def _guard(caller: ModelCaller) -> Guard:
    """Batch API calls under the caller's connection limit, retries and outage breaker."""

    async def guard(fn: Callable[[], Awaitable[Any]]) -> Any:
        out, _ = await caller.call_raw(fn)
        return out

    return guard


def open_submissions(run_dir: Path) -> int:
    """Submissions in the run's journal whose results were never collected (0 without a journal)."""
    path = run_dir / BATCHES
    if not path.is_file():
        return 0
    journal = BatchJournal(path)
    try:
        return sum(1 for sub in journal.submissions.values() if not sub.closed)
    finally:
        journal.close()
