"""Model calls with a connection limit, finite retries, a shared circuit breaker and the cache.

`ModelCaller` wraps one `Model` (the evaluated model, or a judge) for a whole run:

- the endpoint's connection limit: an `EndpointLimiter` (`toolsight.calls.limiter`; shared with every
  other caller of the same endpoint when given, adaptive AIMD), else a fixed one of `max_connections`;
- the response cache for deterministic requests;
- batch mode (`batch`, a `toolsight.calls.batching.BatchRoute`): a call the cache does not answer
  goes to the provider's batch API first, and on-line only when its batch item failed or expired;
- errors sorted by `classify`:
  - **fatal** (HTTP 401/403: credentials; 404: model or URL unknown): nothing else can succeed,
    so the run stops at once (`RunAborted`);
  - **transient** (connection, timeout, 408, 429, 5xx): retried with exponential backoff and
    jitter (a Retry-After is honoured up to `max_retry_after`), never stopped early for repeating
    itself; when they show the endpoint is down the shared `CircuitBreaker` pauses every call
    until a probe gets through (the model's free health check, `Model.probe`: its models listing, never
    a completion that a paid API would bill). A failed attempt spends one of the call's `retries` only if the
    endpoint served something (another call or a probe) since the call last failed — so an
    outage, bounded by `outage_timeout`, never fails a task, while a request the server keeps
    failing does, after its retries;
  - **retryable** (a malformed reply, 409, 425): retried, but an error that repeats identically
    `max_identical` times fails the task instead of burning every retry;
  - **permanent** (any other 4xx): fails the task at once.

`call()` returns the output and a `CallInfo` (retries, time paused, duration) that the runner
stores per model call in the trajectory. Everything the runner shows about calls is in `stats`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from toolsight.calls.batching import BatchRoute
from toolsight.calls.breaker import CircuitBreaker, StillDown
from toolsight.calls.cache import ResponseCache, request_key
from toolsight.calls.limiter import OVERLOAD_STATUSES, EndpointLimiter
from toolsight.errors import RunAborted
from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import GenerateConfig, Message, Model, ModelError, ModelOutput

log = logging.getLogger(__name__)

T = TypeVar("T")
ErrorClass = Literal["fatal", "transient", "retryable", "permanent"]


def classify(exc: ModelError) -> ErrorClass:
    """How the runner treats a provider error (see the module docstring)."""
    if exc.status in (401, 403, 404):
        return "fatal"
    if exc.kind in ("connection", "timeout"):
        return "transient"
    if exc.status is not None and (exc.status >= 500 or exc.status in (408, 429)):
        return "transient"
    return "retryable" if exc.retryable else "permanent"


def fatal_message(label: str, exc: ModelError) -> str:
    why = {401: "the credentials were rejected", 403: "access was refused",
           404: "the model or the base URL was not found"}.get(exc.status or 0, "the request was refused")
    return f"{label}: {why} ({exc}); stopping the run — fix it, then resume"


@dataclass
class CallStats:
    calls: int = 0
    retries: int = 0
    retrying_now: int = 0
    cache_hits: int = 0
    tokens: int = 0
    errors: int = 0
    waiting_now: int = 0


@dataclass
class CallInfo:
    """What happened to one call: failed attempts before its outcome, seconds paused for an outage."""

    retries: int = 0
    waited_s: float = 0.0
    duration_s: float = 0.0
    cached: bool = False


@dataclass
class _Attempts:
    seen: int  # the breaker's success count at the call's start or its last failure
    retries_spent: int = 0
    unserved: int = 0  # failures in a row with nothing served in between (signs of an outage)
    last: str | None = None
    identical: int = 0
    info: CallInfo = field(default_factory=CallInfo)


class CallFailed(ModelError):
    """The ModelError a call ended with, plus what happened before it (for the trajectory)."""

    def __init__(self, exc: ModelError, info: CallInfo) -> None:
        super().__init__(str(exc), retryable=exc.retryable, retry_after=exc.retry_after, status=exc.status,
                         kind=exc.kind)
        self.info = info


class ModelCaller:
    """Wraps a Model: `await caller(messages, tools, config)` with limit, retries, breaker and cache."""

    def __init__(
        self,
        model: Model,
        max_connections: int = 32,
        retries: int = 5,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        max_identical: int = 3,
        cache: ResponseCache | None = None,
        stats: CallStats | None = None,
        *,
        max_retry_after: float = 120.0,
        outage_timeout: float = 600.0,
        breaker_threshold: int = 3,
        label: str = "model endpoint",
        on_event: Callable[[str], None] | None = None,
        limiter: EndpointLimiter | None = None,
    ) -> None:
        self.model = model
        self.max_connections = max_connections
        self.retries = retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_identical = max_identical
        self.cache = cache
        self.stats = stats or CallStats()
        self.max_retry_after = max_retry_after
        self.label = label
        self.limiter = limiter or EndpointLimiter(model.name, max_connections, adaptive=False)
        self._last_timeout = 30.0  # the probe's timeout: the last call's, at most 30 s
        #: batch mode (`toolsight.calls.batching`): calls the cache does not answer go to a batch first
        self.batch: BatchRoute | None = None
        self.breaker = CircuitBreaker(
            self._probe, label=label, threshold=breaker_threshold, backoff_base=backoff_base,
            # probe often enough to notice the end of a short outage, rarely enough to be cheap
            probe_max=min(15.0, max(backoff_base, outage_timeout / 20)),
            outage_timeout=outage_timeout, max_retry_after=max_retry_after, on_event=on_event,
        )

    async def __call__(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        out, _ = await self.call(messages, tools, config)
        return out

    async def call(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig, cache_salt: str = ""
    ) -> tuple[ModelOutput, CallInfo]:
        """One model call with everything above; raises `CallFailed` (a ModelError) or RunAborted.
        `cache_salt` separates cache entries of identical requests (the epochs of one task)."""
        t0 = time.monotonic()
        key = None
        if self.cache is not None and config.is_deterministic():
            key = request_key(self.model.endpoint_id(), messages, tools, config, salt=cache_salt)
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return hit, CallInfo(cached=True)
        batched = await self.batch.generate(messages, tools, config) if self.batch is not None else None
        if batched is not None:
            out, info = batched, CallInfo()
        else:  # on-line (also a batch item that failed or expired)
            self._last_timeout = config.timeout
            out, info = await self._attempts(lambda: self.model.generate(messages, tools, config))
        info.duration_s = round(time.monotonic() - t0, 4)
        self.stats.tokens += out.usage.total_tokens
        if key is not None and self.cache is not None and out.finish_reason != "error":
            self.cache.put(key, out)
        return out, info

    def forget(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig,
               cache_salt: str = "") -> None:
        """Drop the cached reply to this request (its caller could not use it)."""
        if self.batch is not None:
            self.batch.forget(messages, tools, config)
        if self.cache is not None and config.is_deterministic():
            self.cache.delete(request_key(self.model.endpoint_id(), messages, tools, config, salt=cache_salt))

    async def call_raw(self, fn: Callable[[], Awaitable[T]]) -> tuple[T, CallInfo]:
        """Run a raw provider call (one an official loop built itself, for an exact protocol replay)
        under the same connection limit, retries and outage breaker as `call`; never cached. Returns
        the reply and what it took (retries, time waited for the endpoint)."""
        return await self._attempts(fn)

    async def _attempts(self, fn: Callable[[], Awaitable[T]]) -> tuple[T, CallInfo]:
        """Call `fn` until it succeeds, a failure is final (CallFailed) or the run is aborted."""
        st = _Attempts(seen=self.breaker.successes)
        while True:
            st.info.waited_s += await self._wait_for_endpoint()
            try:
                async with self.limiter.slot() as slot:
                    self.stats.calls += 1
                    try:
                        out = await fn()
                    except ModelError as exc:
                        if exc.status in OVERLOAD_STATUSES:
                            slot.overloaded()
                        raise
                    slot.ok()
                self.breaker.success()
                return out, st.info
            except ModelError as exc:
                delay = self._after_failure(exc, st)
                if delay is None:
                    continue  # the endpoint is down: wait for the breaker, no retry spent
                self.stats.retrying_now += 1
                try:
                    await asyncio.sleep(delay)
                finally:
                    self.stats.retrying_now -= 1

    async def _wait_for_endpoint(self) -> float:
        if not self.breaker.is_open:
            self.breaker.raise_if_aborted()
            return 0.0
        self.stats.waiting_now += 1
        try:
            return await self.breaker.wait()
        finally:
            self.stats.waiting_now -= 1

    def _after_failure(self, exc: ModelError, st: _Attempts) -> float | None:
        """Decide what a failed attempt leads to: raise, wait for the breaker (None), or back off (seconds).

        A transient failure spends one of the call's retries only if the endpoint served something
        (another call, or a health probe) since this call last failed: then the endpoint is up and
        the failure is this request's own. Otherwise it is a sign of an outage: it counts towards
        opening the breaker and spends nothing, so an outage never fails a task.
        """
        kind = classify(exc)
        if kind == "fatal":
            self.stats.errors += 1
            abort = RunAborted(fatal_message(self.label, exc))
            self.breaker.abort(abort)
            raise abort
        if kind == "permanent":
            self.stats.errors += 1
            raise CallFailed(exc, st.info) from exc
        st.info.retries += 1
        log.info("%s: %s error, attempt %d: %s", self.label, kind, st.info.retries, exc)
        self.stats.retries += 1
        retry_after = None if exc.retry_after is None else min(exc.retry_after, self.max_retry_after)
        if kind == "transient":
            served = self.breaker.successes > st.seen
            st.seen = self.breaker.successes
            if not served:
                st.unserved += 1
                if self.breaker.failure(str(exc), retry_after, status=getattr(exc, "status", None)):
                    return None  # the endpoint is down: wait for the breaker
                return retry_after if retry_after is not None else self._backoff(st.unserved)
            st.unserved = 0
        else:
            msg = str(exc)
            st.identical = st.identical + 1 if msg == st.last else 1
            st.last = msg
            if st.identical >= self.max_identical:
                self.stats.errors += 1
                raise CallFailed(exc, st.info) from exc
        if st.retries_spent >= self.retries:
            self.stats.errors += 1
            raise CallFailed(exc, st.info) from exc
        st.retries_spent += 1
        return retry_after if retry_after is not None else self._backoff(st.retries_spent)

    def _backoff(self, n: int) -> float:
        """Exponential backoff with jitter for the n-th retry (n >= 1)."""
        delay: float = min(self.backoff_max, self.backoff_base * 2.0 ** (n - 1))
        return delay * (1 + random.uniform(0, 0.25))

    async def _probe(self) -> None:
        """The model's free health check (`Model.probe`: its models listing, never a completion): any
        answer but a transient failure means the endpoint is reachable again; refused credentials
        stop the run. A 404 is an answer (a compatible server without a models listing)."""
        try:
            await self.model.probe(min(self._last_timeout, 30.0))
        except ModelError as exc:
            if exc.status in (401, 403):
                raise RunAborted(fatal_message(self.label, exc)) from None
            if classify(exc) == "transient":
                raise StillDown(str(exc), exc.retry_after) from None  # uncapped: the breaker caps it
        except Exception:  # an adapter failing on the listing still means the endpoint answered
            return

    async def aclose(self) -> None:
        await self.breaker.aclose()
