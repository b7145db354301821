"""What a run says about itself when it ends: `RunSummary` (counts, accuracy, the closing line, the
exit code), `record_counts` (what the summary counts of one record; a Ray worker sends only these)
and `RunStopped` (a run that could not go on, with its summary so far)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsight.calls.limiter import LimitView
from toolsight.calls.retry import CallStats
from toolsight.errors import EXIT_ABORTED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TASK_ERRORS, ToolsightError
from toolsight.log.record import Record


class RunStopped(ToolsightError):
    """The run stopped before its end (outage, rejected credentials, full disk); records are kept."""

    exit_code = EXIT_ABORTED

    def __init__(self, message: str, summary: RunSummary) -> None:
        super().__init__(message)
        self.summary = summary


@dataclass
class RunSummary:
    run_dir: Path
    total: int
    done: int = 0
    skipped: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    kept_errors: int = 0
    retried: int = 0
    changed: int = 0
    unscored: int = 0
    score_sum: float = 0.0
    scored: int = 0
    passed: int = 0
    tokens: int = 0
    tool_calls: int = 0
    interrupted: bool = False
    stopped: str | None = None
    stats: CallStats = field(default_factory=CallStats)
    outage_s: float = 0.0
    #: the endpoint limiters the run's calls go through (live: the progress display reads them)
    limiters: list[LimitView] = field(default_factory=list)

    @property
    def accuracy(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None

    def count(self, c: dict[str, Any]) -> None:
        """Count one finished task from its `record_counts` (a remote worker sends those, not the record)."""
        self.done += 1
        self.tool_calls += int(c.get("tool_calls", 0))
        self.tokens += int(c.get("tokens", 0))
        if c.get("error"):
            # lazy: the metrics module's models cost ~0.1 s of every start-up
            from toolsight.metrics.compute import error_kind

            self.errors[error_kind(str(c["error"]))] += 1
        elif "score" not in c and c.get("unscored"):
            self.unscored += 1
        elif "score" in c and c.get("score_error") is None:
            self.scored += 1
            self.score_sum += float(c["score"])
            self.passed += int(bool(c.get("passed")))

    @property
    def exit_code(self) -> int:
        """0 all tasks finished without error; 3 some ended in error; 4 stopped; 130 interrupted."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        if self.stopped is not None:
            return EXIT_ABORTED
        if self.errors or self.kept_errors:
            return EXIT_TASK_ERRORS
        return EXIT_OK

    def line(self) -> str:
        acc = f"{100 * self.accuracy:.1f}%" if self.accuracy is not None else "n/a"
        errs = sum(self.errors.values())
        kinds = ", ".join(f"{k}: {v}" for k, v in self.errors.most_common()) or "none"
        text = (
            f"{self.done} task(s) run, {self.skipped} already finished, {errs} error(s) ({kinds}); "
            f"accuracy {acc} over {self.scored} scored; {self.tool_calls} tool call(s); "
            f"{self.tokens} tokens; {self.stats.retries} retries; {self.stats.cache_hits} cache hits"
        )
        if self.unscored:
            text += f"; {self.unscored} unscored (no gold answer)"
        if self.kept_errors:
            text += f"; {self.kept_errors} earlier error record(s) kept (--no-retry-errors)"
        if self.outage_s >= 1:
            text += f"; paused {self.outage_s:.0f} s while the endpoint was unreachable"
        for lim in self.limiters:
            if lim.cuts:
                text += (f"; {lim.key}: connection limit {lim.current}/{lim.max_limit} after {lim.cuts} cut(s) "
                         f"({lim.overloads} overload answer(s))")
        if errs or self.kept_errors:
            text += f". Re-run the failed tasks with: toolsight retry {self.run_dir}"
        return text


def record_counts(rec: Record) -> dict[str, Any]:
    """What a run's summary counts of one record: `RunSummary.count` takes it; a Ray worker sends it."""
    t = rec.trajectory
    out: dict[str, Any] = {"error": rec.error, "tool_calls": len(t.tool_calls), "tokens": t.usage.total_tokens,
                           "model_calls": t.model_calls, "retries": t.retries, "cache_hits": t.cache_hits,
                           "unscored": bool(rec.extra.get("unscored"))}
    if rec.score is not None:
        out.update(score=rec.score.value, passed=bool(rec.score.passed), score_error=rec.score.error)
    return out
