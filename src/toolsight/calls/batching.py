"""Batch mode: a model's calls sent through its provider's batch API, crash-safe (docs/batch.md).

`BatchRoute` sits inside a `ModelCaller` (`ModelCaller.batch`): a call that is not answered by the
response cache is turned into the batch body the on-line call would send (`Model.batch_body`) and
queued under a deterministic custom id — the asking task and epoch (`batch_scope`), the call's index
within it and a hash of the body — so a resumed run asks for the same ids. `BatchCollector` submits
the queue as one batch when `max_size` requests (or `max_bytes` of bodies) wait, or when no new
request came for `idle_s` seconds (every running task is waiting); it polls with backoff (`poll_s`
doubling to `poll_max_s`) and answers each waiting call with `Model.batch_parse(reply)`.

An item that expired, or failed with an error worth asking again (a 5xx, a 429, an overload), is
asked once more in a new batch (`BatchTuning.rebatch`, `--batch-retry batch`) under its custom id
with `RETRY` appended — journaled like any other item, so a resumed run polls that second batch and
never submits it again; if it fails or expires again it is sent on-line. Any other failed item, a
second failure, and every item of a batch that could not be submitted or failed as a whole, is sent
on-line, through the caller's usual retries (counted in `BatchStats`); a partly failed batch keeps
every good result.

Crash safety rests on the journal (`batch_journal`): a submission's tag and custom ids are written
(fsynced) before it is submitted, its batch id when submit returns, each result once collected. A
request whose custom id has a journaled result is answered from it; one whose id belongs to a
submission still open is answered by polling that batch (its id from the journal, or `find(tag)`
when the process died between submitting and writing the id) — never submitted again.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from toolsight.calls.batch_journal import (
    Accepted,
    BatchJournal,
    Closed,
    Collected,
    Forgotten,
    JournalItem,
    Submitted,
)
from toolsight.errors import RunAborted
from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import ConfigurationError, GenerateConfig, Message, Model, ModelError, ModelOutput
from toolsight.models.batch.base import BatchAPI, BatchItem, BatchResult

log = logging.getLogger(__name__)
T = TypeVar("T")


class BatchTuning(BaseModel):
    """When a batch is submitted and how often it is polled."""

    model_config = ConfigDict(extra="forbid")

    max_size: int = Field(default=100, ge=1, description="submit when this many requests wait")
    max_bytes: int = Field(default=100_000_000, ge=1, description="... or when their bodies reach this size")
    idle_s: float = Field(default=5.0, gt=0, description="... or when no new request came for this long")
    poll_s: float = Field(default=5.0, gt=0, description="first wait between polls (doubles)")
    poll_max_s: float = Field(default=60.0, gt=0, description="longest wait between polls")
    rebatch: bool = Field(default=True, description="ask an expired item, or one that failed with a retryable "
                          "error, once more in a new batch before sending it on-line (--batch-retry batch)")


@dataclass
class BatchStats:
    """What batch mode did in one invocation, per model (the run summary shows it)."""

    batched: int = 0  # calls answered by a batch (or the journal of an earlier invocation)
    fallbacks: int = 0  # calls sent on-line because their batch item failed, expired or was never submitted
    expired: int = 0  # of the fallbacks: items the batch did not run in time
    rebatched: int = 0  # items asked once more in a new batch (expired, or failed with a retryable error)
    submitted: int = 0  # batches submitted
    resumed: int = 0  # batches of an earlier invocation polled again (not re-submitted)
    unbatchable: int = 0  # raw calls an official loop built itself without a batch form (`RawBatch`): on-line


def describe_batches(stats: dict[str, BatchStats]) -> str:
    """The run summary's part about batch mode ('' when nothing was batched)."""
    parts = []
    for role, s in stats.items():
        if not (s.batched or s.fallbacks or s.submitted or s.resumed or s.unbatchable):
            continue
        text = f"{role}: {s.batched} call(s) batched in {s.submitted} new batch(es)"
        if s.resumed:
            text += f" and {s.resumed} resumed"
        if s.rebatched:
            text += f", {s.rebatched} asked again in a new batch after their item failed or expired"
        if s.fallbacks:
            text += f", {s.fallbacks} sent on-line after their batch item failed"
            if s.expired:
                text += f" ({s.expired} expired)"
        if s.unbatchable:
            text += f", {s.unbatchable} raw call(s) of the official loop sent on-line (not batchable)"
        parts.append(text)
    return "; ".join(parts)


# ---- which task asks ------------------------------------------------------------------------------

@dataclass
class _Scope:
    key: str
    counters: dict[str, int] = field(default_factory=dict)

    def next(self, label: str) -> int:
        n = self.counters.get(label, 0)
        self.counters[label] = n + 1
        return n


_scope: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("toolsight_batch_scope", default=None)


@contextlib.contextmanager
def batch_scope(key: str) -> Iterator[None]:
    """Mark the calls made inside as those of `key` (a task id and epoch): batch mode numbers them and
    derives their custom ids from it. Calls made outside any scope are never batched."""
    token = _scope.set(_Scope(key))
    try:
        yield
    finally:
        _scope.reset(token)


def _digest(text: str, n: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def body_hash(body: dict[str, Any]) -> str:
    return _digest(json.dumps(body, sort_keys=True, default=str), 16)


# ---- the collector --------------------------------------------------------------------------------

#: appended to an item's custom id when it is asked again in a new batch
RETRY = "-r"


class _NoResult(Exception):
    """This call gets no answer from a batch: send it on-line (or, `expired` or `retryable`, ask again)."""

    def __init__(self, why: str, expired: bool = False, retryable: bool = False) -> None:
        super().__init__(why)
        self.expired = expired
        self.retryable = retryable


@dataclass
class _Waiting:
    body: dict[str, Any]
    scope: str
    future: asyncio.Future[dict[str, Any]]


Guard = Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]


async def _plain(fn: Callable[[], Awaitable[Any]]) -> Any:
    return await fn()


class BatchCollector:
    """Queues batch bodies, submits them, polls, and resolves each waiting call (module docstring).

    `guard` runs each provider call (submit, find, poll, results) — the caller's retries, limit and
    outage breaker (`ModelCaller.call_raw`) in a run."""

    def __init__(self, api: BatchAPI, journal: BatchJournal, tuning: BatchTuning | None = None, *,
                 label: str = "m", guard: Guard | None = None, replay: bool = True) -> None:
        self.api = api
        #: results an earlier invocation collected answer again (False: asked again, in a new batch)
        self.replay = replay
        self._stale: set[str] = set() if replay else set(journal.results)
        self.journal = journal
        self.tuning = tuning or BatchTuning()
        self.label = label
        self.guard: Guard = guard or _plain
        self.stats = BatchStats()
        self._queue: dict[str, _Waiting] = {}
        self._queued_bytes = 0
        self._waiting: dict[str, _Waiting] = {}  # submitted (or resumed), result not yet in
        self._timer: asyncio.TimerHandle | None = None
        self._jobs: set[asyncio.Task[None]] = set()
        self._polled: set[str] = set()  # tags with a poller running

    async def request(self, custom_id: str, body: dict[str, Any], scope: str = "") -> dict[str, Any]:
        """The reply body for `body`; raises `_NoResult` when it must be sent on-line instead. An item
        that expired or failed with a retryable error is asked once more, as `custom_id + RETRY`."""
        try:
            return await self._ask(custom_id, body, scope)
        except _NoResult as exc:
            if not (self.tuning.rebatch and (exc.expired or exc.retryable)):
                raise
            log.info("batch item %s not answered (%s): asking again in a new batch", custom_id, exc)
        self.stats.rebatched += 1
        return await self._ask(custom_id + RETRY, body, scope)

    async def _ask(self, custom_id: str, body: dict[str, Any], scope: str) -> dict[str, Any]:
        done = self.journal.results.get(custom_id)
        if done is not None and custom_id not in self._stale:
            return self._answer(done)
        if custom_id in self._waiting:
            return await asyncio.shield(self._waiting[custom_id].future)
        if custom_id in self._queue:
            return await asyncio.shield(self._queue[custom_id].future)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        wait = _Waiting(body, scope, future)
        sub = self.journal.open_submission(custom_id)
        if sub is not None:  # an earlier invocation submitted it: poll that batch, never submit again
            self._waiting[custom_id] = wait
            if sub.tag not in self._polled:
                self._polled.add(sub.tag)
                self.stats.resumed += 1
                self._spawn(self._poll(sub.tag, sub.batch_id))
        else:
            self._queue[custom_id] = wait
            self._queued_bytes += len(json.dumps(body, default=str))
            if len(self._queue) >= self.tuning.max_size or self._queued_bytes >= self.tuning.max_bytes:
                self.flush()
            else:
                self._arm()
        return await asyncio.shield(future)

    def _answer(self, done: Collected) -> dict[str, Any]:
        if done.reply is None:
            raise _NoResult(done.error or "no result", expired=done.expired, retryable=done.retryable)
        return done.reply

    def _arm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self.tuning.idle_s, self.flush)

    def _spawn(self, coro: Awaitable[None]) -> None:
        job: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._jobs.add(job)
        job.add_done_callback(self._done)

    def _done(self, job: asyncio.Task[None]) -> None:
        self._jobs.discard(job)
        if not job.cancelled() and job.exception() is not None:  # its calls were told (`_fail`)
            log.warning("batch mode: %s", job.exception())

    def flush(self) -> None:
        """Submit what waits now (the idle timer and a full queue call it)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._queue:
            return
        items, self._queue, self._queued_bytes = self._queue, {}, 0
        self._spawn(self._submit(items))

    async def _submit(self, items: dict[str, _Waiting]) -> None:
        tag = f"toolsight-{uuid.uuid4().hex[:20]}"
        self._waiting.update(items)
        self._polled.add(tag)
        try:
            self.journal.write(Submitted(tag=tag, provider=self.api.provider, label=self.label, items=[
                JournalItem(custom_id=cid, hash=body_hash(w.body), scope=w.scope) for cid, w in items.items()]))
            batch = [BatchItem(custom_id=cid, body=w.body) for cid, w in items.items()]
            try:
                batch_id: str | None = await self.guard(lambda: self.api.submit(batch, tag=tag))
            except (RunAborted, asyncio.CancelledError):
                raise
            except Exception as exc:  # did it land all the same (a timeout after the upload)?
                batch_id = await self._find(tag)
                if batch_id is None:
                    log.warning("batch of %d request(s) could not be submitted (%s): sending them on-line",
                                len(items), exc)
                    self._close(tag, "not_submitted", f"not submitted: {exc}", list(items))
                    return
            assert batch_id is not None
            self.stats.submitted += 1
            self.journal.write(Accepted(tag=tag, batch_id=batch_id))
            await self._collect(tag, batch_id)
        except BaseException as exc:
            self._fail(list(items), exc)
            if isinstance(exc, asyncio.CancelledError | RunAborted):
                raise

    async def _find(self, tag: str) -> str | None:
        """The provider's id of the batch tagged `tag`, or None: it never reached the provider. Asks
        until it gets one of those two answers — a lookup that fails (or a provider that cannot tell
        yet) must not lead to paying for the same requests twice."""
        known = {sub.batch_id for sub in self.journal.submissions.values() if sub.batch_id}
        delay = self.tuning.poll_s
        while True:
            try:
                found: str | None = await self.guard(lambda: self.api.find(tag, known=known))
                return found
            except (RunAborted, asyncio.CancelledError):
                raise
            except Exception as exc:
                log.warning("cannot tell yet whether batch %s was submitted (%s); asking again in %.0f s",
                            tag, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.tuning.poll_max_s)

    async def _poll(self, tag: str, batch_id: str | None) -> None:
        """Collect a submission of an earlier invocation (found by its tag when no id was written)."""
        ids = [cid for cid in self.journal.submissions[tag].items]
        try:
            if batch_id is None:
                batch_id = await self._find(tag)
                if batch_id is None:  # it never reached the provider: nothing was billed, ask again
                    self.journal.write(Closed(tag=tag, status="not_submitted"))
                    for cid in ids:
                        wait = self._waiting.pop(cid, None)
                        if wait is not None:
                            self._queue[cid] = wait
                    self.flush()
                    return
                self.journal.write(Accepted(tag=tag, batch_id=batch_id))
            await self._collect(tag, batch_id)
        except BaseException as exc:
            self._fail(ids, exc)
            if isinstance(exc, asyncio.CancelledError | RunAborted):
                raise

    async def _collect(self, tag: str, batch_id: str) -> None:
        delay = self.tuning.poll_s
        while True:
            state = await self.guard(lambda: self.api.poll(batch_id))
            if state.status != "in_progress":
                break
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.tuning.poll_max_s)
        results: list[BatchResult] = []
        if state.status != "failed":
            results = await self.guard(lambda: self.api.results(batch_id))
        sub = self.journal.submissions[tag]
        entries: list[Collected | Closed] = []
        seen: set[str] = set()
        for r in results:
            if r.custom_id not in sub.items or r.custom_id in seen:
                continue
            seen.add(r.custom_id)
            ok = r.reply is not None and r.error is None
            entries.append(Collected(tag=tag, custom_id=r.custom_id, reply=r.reply if ok else None,
                                     error=None if ok else (r.error or "no reply"), expired=r.expired,
                                     retryable=not ok and r.retryable))
        why = state.error or f"batch {state.status}"
        for cid in sub.items:
            if cid not in seen:  # the batch gave no outcome for it
                entries.append(Collected(tag=tag, custom_id=cid, error=f"no result ({why})",
                                         expired=state.status == "expired"))
        entries.append(Closed(tag=tag, status=state.status))
        self.journal.write(*entries)  # every result once, before any call is answered
        for e in entries:
            if isinstance(e, Collected):
                self._resolve(e)

    def _close(self, tag: str, status: str, error: str, ids: list[str]) -> None:
        entries: list[Collected | Closed] = [Collected(tag=tag, custom_id=cid, error=error) for cid in ids]
        self.journal.write(*entries, Closed(tag=tag, status=status))
        for e in entries:
            if isinstance(e, Collected):
                self._resolve(e)

    def forget(self, custom_ids: list[str]) -> None:
        """Results their caller could not use: journaled as such, never answered again."""
        known = [c for cid in custom_ids for c in (cid, cid + RETRY) if c in self.journal.results]
        if known:
            self.journal.write(*(Forgotten(custom_id=cid) for cid in known))

    def _resolve(self, done: Collected) -> None:
        wait = self._waiting.pop(done.custom_id, None)
        if wait is None or wait.future.done():
            return
        if done.reply is not None:
            wait.future.set_result(done.reply)
        else:
            wait.future.set_exception(_NoResult(done.error or "no result", expired=done.expired,
                                                retryable=done.retryable))

    def _fail(self, ids: list[str], exc: BaseException) -> None:
        """A submitter or poller ended without results (the run stops, or a bug): its calls learn why.
        A run stopped or interrupted keeps the submission open in the journal for a resume."""
        for cid in ids:
            wait = self._waiting.pop(cid, None)
            if wait is not None and not wait.future.done():
                if isinstance(exc, asyncio.CancelledError):
                    wait.future.cancel()
                elif isinstance(exc, RunAborted):
                    wait.future.set_exception(exc)
                else:
                    wait.future.set_exception(_NoResult(f"batch mode failed: {type(exc).__name__}: {exc}"))

    async def aclose(self) -> None:
        """Stop submitting and polling (what is open stays in the journal for a resume); close the API."""
        if self._timer is not None:
            self._timer.cancel()
        for job in list(self._jobs):
            job.cancel()
        await asyncio.gather(*self._jobs, return_exceptions=True)
        for w in [*self._queue.values(), *self._waiting.values()]:
            if not w.future.done():
                w.future.cancel()
        with contextlib.suppress(Exception):
            await self.api.aclose()


# ---- one model's calls through the collector -------------------------------------------------------

class BatchRoute:
    """How a `ModelCaller` sends its calls in batch mode: `model`'s batch body to `collector`, the
    reply read by `model.batch_parse`; `None` from `generate` means "send it on-line" (counted).

    A raw call sent to another endpoint than the model's own (`raw(body, endpoint=…)`, e.g. OpenAI's
    `/v1/responses`) goes to a collector of its own for that endpoint — a provider batch holds one
    endpoint's items — made on first use from `collector`'s API (`BatchAPI.for_endpoint`), journal,
    tuning and guard, its custom ids under the label `<label>_<endpoint>` and its counts in the same
    `stats`. A resumed run asks the same ids, so it polls that endpoint's open submissions."""

    def __init__(self, model: Model, collector: BatchCollector) -> None:
        self.model = model
        self.collector = collector
        self._asked: dict[str, list[str]] = {}  # body hash -> custom ids answered by a batch
        self._by_endpoint: dict[str, BatchCollector] = {}

    def forget(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> None:
        """The reply to this request could not be used: the journal must not answer it again."""
        try:
            body = self.model.batch_body(messages, tools, config)
        except ConfigurationError:
            return
        self.collector.forget(self._asked.pop(body_hash(body), []))

    @property
    def stats(self) -> BatchStats:
        return self.collector.stats

    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> ModelOutput | None:
        scope = _scope.get()
        if scope is None:  # not a task's call (e.g. a web page summary): on-line
            return None
        try:
            body = self.model.batch_body(messages, tools, config)
        except ConfigurationError as exc:  # e.g. a streamed request: no task of this run could batch
            raise RunAborted(f"batch mode: {exc}") from None
        got = await self._ask(scope, body)
        if got is None:
            return None
        reply, custom_id = got
        self._asked.setdefault(body_hash(body), []).append(custom_id)
        out = self.model.batch_parse(reply)
        return out.model_copy(update={"batch": True}) if not out.batch else out

    async def raw(self, body: dict[str, Any], parse: Callable[[dict[str, Any]], T],
                  endpoint: str | None = None) -> tuple[T] | None:
        """A raw call's reply (one an official loop built itself, `body`), read by `parse` from its batch
        reply, under the same custom ids, journal and fallback as `generate`; None: send it on-line
        (counted when its batch item failed or `parse` refused the reply with a ModelError — what the
        on-line call would have refused too; a call outside any task scope is never batched).
        `endpoint`: where the body goes when not the model's own (e.g. `/v1/responses`; see the class
        docstring)."""
        scope = _scope.get()
        if scope is None:
            return None
        got = await self._ask(scope, body, self._collector(endpoint), parse)
        return (got[0],) if got is not None else None

    def _collector(self, endpoint: str | None) -> BatchCollector:
        """The collector for `endpoint` (None: the model's own), made on first use."""
        if endpoint is None:
            return self.collector
        found = self._by_endpoint.get(endpoint)
        if found is None:
            base = self.collector
            try:
                api = base.api.for_endpoint(endpoint)
            except ValueError as exc:
                raise RunAborted(f"batch mode: {exc}") from None
            slug = "".join(c if c.isalnum() else "_" for c in endpoint.removeprefix("/v1/")).strip("_")
            found = BatchCollector(api, base.journal, base.tuning, label=f"{base.label}_{slug}", guard=base.guard,
                                   replay=base.replay)
            found.stats = base.stats  # one model's counts, whichever endpoint
            self._by_endpoint[endpoint] = found
        return found

    async def aclose(self) -> None:
        """Close every collector (what is open stays in the journal for a resume)."""
        for c in [self.collector, *self._by_endpoint.values()]:
            await c.aclose()

    async def _ask(self, scope: _Scope, body: dict[str, Any], collector: BatchCollector | None = None,
                   parse: Callable[[dict[str, Any]], Any] | None = None) -> tuple[Any, str] | None:
        """(the reply body, or what `parse` makes of it; its custom id) — the task's next id for this
        collector (the model's own unless given) — or None when the item was not answered, or `parse`
        refused it with a ModelError, and the call goes on-line (counted)."""
        collector = collector or self.collector
        n = scope.next(collector.label)
        custom_id = f"{collector.label}-{_digest(scope.key, 16)}-{n}-{body_hash(body)[:12]}"
        try:
            reply = await collector.request(custom_id, body, scope.key)
            out = parse(reply) if parse is not None else reply
        except (_NoResult, ModelError) as exc:
            self.stats.fallbacks += 1
            self.stats.expired += isinstance(exc, _NoResult) and exc.expired
            log.info("%s: batch item %s not answered (%s): sending it on-line", self.model.name, custom_id, exc)
            return None
        self.stats.batched += 1
        return out, custom_id


def open_route(model: Model, journal: BatchJournal, tuning: BatchTuning, label: str,
               guard: Guard | None = None, replay: bool = True) -> BatchRoute | None:
    """The batch route for `model`, or None when it has no batch API. `replay`: results an earlier
    invocation collected answer the same requests again (off: `toolsight score --no-cache`)."""
    api = model.batch_api()
    if api is None:
        return None
    return BatchRoute(model, BatchCollector(api, journal, tuning, label=label, guard=guard, replay=replay))
