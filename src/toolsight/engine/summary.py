"""What a run says about itself when it ends: `RunSummary` (counts, accuracy, the closing line, the
exit code), `record_counts` (what the summary counts of one record; a Ray worker sends only these)
and `RunStopped` (a run that could not go on, with its summary so far)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsight.calls.batching import BatchStats, describe_batches
from toolsight.calls.limiter import LimitView
from toolsight.calls.retry import CallStats
from toolsight.errors import EXIT_ABORTED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TASK_ERRORS, ToolsightError
from toolsight.log.record import Record
from toolsight.log.trajectory import LOOP_CRASH

if TYPE_CHECKING:
    from toolsight.metrics.cost import PriceTable


class RunStopped(ToolsightError):
    """The run stopped before its end (outage, rejected credentials, full disk); records are kept."""

    exit_code = EXIT_ABORTED

    def __init__(self, message: str, summary: RunSummary) -> None:
        super().__init__(message)
        self.summary = summary


@dataclass
class Tally:
    """What a set of records says: run errors by kind, score errors, scores pending (the judge could
    not be reached), tasks without gold (unscored), and the scores of the rest. `add` takes one
    record's `record_counts`."""

    records: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    score_errors: int = 0
    score_pending: int = 0
    unscored: int = 0
    scored: int = 0
    passed: int = 0
    score_sum: float = 0.0
    tokens: int = 0
    #: input tokens read from providers' prompt caches (part of `tokens`)
    cache_read: int = 0
    #: the cost of the records' priced calls at toolsight's price table (metrics/cost.py), and how many
    #: records had one
    cost: float = 0.0
    priced: int = 0
    #: model calls whose reply reported no token usage (their tokens are unknown, not in `tokens`)
    no_usage: int = 0
    tool_calls: int = 0
    first_score_error: str | None = None

    def add(self, c: dict[str, Any]) -> None:
        self.records += 1
        self.tool_calls += int(c.get("tool_calls", 0))
        self.tokens += int(c.get("tokens", 0))
        self.cache_read += int(c.get("cache_read", 0))
        if c.get("cost") is not None:
            self.cost += float(c["cost"])
            self.priced += 1
        self.no_usage += int(c.get("no_usage", 0))
        if c.get("error"):
            # lazy: the metrics module's models cost ~0.1 s of every start-up
            from toolsight.metrics.compute import error_kind

            self.errors[error_kind(str(c["error"]))] += 1
            return
        if c.get("loop_error"):  # the official loop ended the task where its driver crashes: an error,
            self.errors[LOOP_CRASH] += 1  # and still scored below as the driver scores what it wrote
        if c.get("score_pending"):
            self.score_pending += 1
        elif "score" not in c:
            self.unscored += int(bool(c.get("unscored")))
        elif c.get("score_error") is not None:
            self.score_errors += 1
            self.first_score_error = self.first_score_error or str(c["score_error"])
        else:
            self.scored += 1
            self.score_sum += float(c["score"])
            self.passed += int(bool(c.get("passed")))

    @property
    def accuracy(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None


@dataclass
class RunSummary:
    """A run's outcome. While it runs, the counts are this invocation's tasks (what progress shows);
    when it ends, `whole` holds the counts of the whole run directory's latest records — a resumed
    run's summary, accuracy and exit code cover every task, not only those it ran now."""

    run_dir: Path
    total: int
    done: int = 0
    skipped: int = 0
    #: the counts of the tasks this invocation ran (what progress shows)
    ran: Tally = field(default_factory=Tally)
    kept_errors: int = 0
    retried: int = 0
    changed: int = 0
    rescored: int = 0
    interrupted: bool = False
    stopped: str | None = None
    #: why the run stopped starting tasks under --fail-on-error (exit 3: the rest are left for a resume)
    failed_early: str | None = None
    #: whether the run scores its tasks (`--no-score` does not): then a run that scored nothing failed
    scoring: bool = True
    stats: CallStats = field(default_factory=CallStats)
    #: what batch mode did, by role (model, judge); empty without batch mode
    batch: dict[str, BatchStats] = field(default_factory=dict)
    outage_s: float = 0.0
    #: the endpoint limiters the run's calls go through (live: the progress display reads them)
    limiters: list[LimitView] = field(default_factory=list)
    #: the whole run's latest records, counted when the run ends (`finalise`)
    whole: Tally | None = None
    #: the price table `finalise` prices records with (`--prices`), and its file's name; None: the built-in one
    prices: PriceTable | None = None
    price_file: str | None = None

    @property
    def accuracy(self) -> float | None:
        t = self._tally()
        return t.accuracy

    def count(self, c: dict[str, Any]) -> None:
        """Count one finished task from its `record_counts` (a remote worker sends those, not the record)."""
        self.done += 1
        self.ran.add(c)

    def finalise(self, keys: Iterable[str]) -> None:
        """Count the latest record of every unit of the run (`keys`) from the run directory."""
        from toolsight.log.files import dict_key, iter_record_dicts

        wanted = set(keys)
        # the counts of each unit's latest record, not the record: a run of 10,000 tasks would
        # otherwise hold every record it wrote (~10 KB each) at its end, its peak memory
        latest: dict[str, dict[str, Any]] = {}
        for d in iter_record_dicts(self.run_dir):
            key = dict_key(d)
            if key in wanted:
                latest[key] = dict_counts(d, self.prices)
        tally = Tally()
        for c in latest.values():
            tally.add(c)
        self.whole = tally

    def _tally(self) -> Tally:
        return self.whole if self.whole is not None else self.ran

    @property
    def exit_code(self) -> int:
        """0 every task finished and was scored (or had no gold); 3 some task ended in a run error, a
        score error or a pending score, or nothing could be scored; 4 stopped; 130 interrupted."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        if self.stopped is not None:
            return EXIT_ABORTED
        t = self._tally()
        if t.errors or self.kept_errors or t.score_errors or t.score_pending or self.failed_early:
            return EXIT_TASK_ERRORS
        if self.scoring and t.records and not t.scored and t.unscored < t.records:
            return EXIT_TASK_ERRORS  # tasks with gold, none scored: nothing is known about the model
        return EXIT_OK

    def line(self) -> str:
        t = self._tally()
        acc = f"{100 * t.accuracy:.1f}%" if t.accuracy is not None else "n/a"
        errs = sum(t.errors.values())
        kinds = ", ".join(f"{k}: {v}" for k, v in t.errors.most_common()) or "none"
        whole = " (the whole run)" if self.whole is not None and (self.skipped or self.rescored) else ""
        text = (
            f"{self.done} task(s) run, {self.skipped} already finished; {errs} run error(s) ({kinds}); "
            f"{t.score_errors} score error(s); accuracy {acc} over {t.scored} scored{whole}; "
            f"{t.tool_calls} tool call(s); {t.tokens} tokens; {_cost_text(t, self.price_file)}{self.stats.retries} retries; "
            f"{self.stats.cache_hits} cache hits"
        )
        if t.no_usage:
            text += (f"; {t.no_usage} model call(s) reported no token usage (not in the token count: the endpoint "
                     "sent none, e.g. a stream without usage)")
        if batched := describe_batches(self.batch):
            text += f"; batch mode ({batched})"
        if self.rescored:
            text += f"; {self.rescored} pending score(s) completed"
        if t.score_pending:
            text += (f"; {t.score_pending} score(s) pending (the judge could not be reached: complete them with "
                     f"`toolsight score {self.run_dir} --judge MODEL` or by resuming the run)")
        if t.unscored:
            text += f"; {t.unscored} unscored (no gold answer)"
        if self.scoring and t.records and not t.scored and t.unscored < t.records and not errs:
            text += "; nothing could be scored"
        if t.first_score_error:
            text += f"; first score error: {_clip(t.first_score_error)}"
        if self.kept_errors:
            text += f"; {self.kept_errors} earlier error record(s) kept (--no-retry-errors)"
        if self.outage_s >= 1:
            text += f"; paused {self.outage_s:.0f} s while the endpoint was unreachable"
        for lim in self.limiters:
            if lim.cuts:
                why = (f"{lim.overloads} overload answer(s) (HTTP 429/503/529)" if lim.overloads
                       else "rising latency, no overload answer")
                text += f"; {lim.key}: connection limit {lim.current}/{lim.max_limit} after {lim.cuts} cut(s) ({why})"
        if t.errors[LOOP_CRASH]:
            text += (f"; {t.errors[LOOP_CRASH]} task(s) ended where the official driver crashes (scored as it "
                     "scores them; see each record's trajectory.loop_error)")
        if self.failed_early:
            text += f"; stopped early: {self.failed_early}"
        if errs - t.errors[LOOP_CRASH] or self.kept_errors:  # a driver's crash happens again on a retry
            text += f". Re-run the failed tasks with: toolsight retry {self.run_dir}"
        return text


def _cost_text(t: Tally, price_file: str | None = None) -> str:
    """The tokens read from prompt caches and the cost, when there is any (docs/cost.md)."""
    text = f"{t.cache_read} input tokens read from prompt caches; " if t.cache_read else ""
    if t.priced:
        table = f"the prices in {price_file} (over the built-in table)" if price_file else "toolsight's price table"
        text += f"${t.cost:.4f} at {table} ({t.priced} task(s) priced); "
    return text


def _priced(calls: list[Any], prices: PriceTable | None = None) -> float | None:
    """The cost of a record's calls at `prices` (None: the built-in price table), None when none of
    them has a price."""
    from toolsight.metrics.cost import builtin_table, cost_of  # lazy: start-up

    c = cost_of(calls, builtin_table() if prices is None else prices)
    return c.cost_usd if c.priced_calls else None


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _billed(rec: Record) -> list[Any]:
    from toolsight.metrics.billing import billed

    return billed(rec)


def _billed_dict(d: dict[str, Any]) -> list[Any]:
    from toolsight.metrics.billing import billed_dict

    return billed_dict(d)


def record_counts(rec: Record, prices: PriceTable | None = None) -> dict[str, Any]:
    """What a run's summary counts of one record: `RunSummary.count` takes it; a Ray worker sends it."""
    t = rec.trajectory
    out: dict[str, Any] = {"error": rec.error, "loop_error": t.loop_error, "tool_calls": len(t.tool_calls),
                           "tokens": t.usage.total_tokens,
                           "model_calls": t.model_calls, "retries": t.retries, "cache_hits": t.cache_hits,
                           "unscored": bool(rec.extra.get("unscored")), "score_pending": rec.score_pending,
                           "no_usage": sum(c.usage_missing for c in t.model_call_log),
                           "cache_read": t.usage.cache_read_tokens, "cost": _priced(_billed(rec), prices)}
    if rec.score is not None:
        out.update(score=rec.score.value, passed=bool(rec.score.passed), score_error=rec.score.error)
    return out


def dict_counts(d: dict[str, Any], prices: PriceTable | None = None) -> dict[str, Any]:
    """`record_counts` of a record as read from records.jsonl (a dict; no model built)."""
    traj = d.get("trajectory") or {}
    usage = traj.get("usage") or {}
    tokens = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
    out: dict[str, Any] = {"error": d.get("error"), "loop_error": traj.get("loop_error"),
                           "tool_calls": len(traj.get("tool_calls") or []),
                           "tokens": tokens, "unscored": bool((d.get("extra") or {}).get("unscored")),
                           "score_pending": d.get("score_pending"),
                           "no_usage": sum(bool(c.get("usage_missing")) for c in traj.get("model_call_log") or []),
                           "cache_read": int(usage.get("cache_read_tokens") or 0), "cost": _priced(_billed_dict(d), prices)}
    score = d.get("score")
    if isinstance(score, dict):
        out.update(score=score.get("value", 0.0), passed=bool(score.get("passed")), score_error=score.get("error"))
    return out
