"""How many requests may be in flight to one model endpoint: one limiter per endpoint, adaptive (AIMD).

Every `ModelCaller` that talks to the same endpoint — the runs of a sweep, a judge shared by
several runs — takes its slots from the same `EndpointLimiter` (`LimiterPool.get(key)`), so the
endpoint sees one client, not one per run. `endpoint_key` names the endpoint: the base URL of a
self-hosted server (vLLM, SGLang, Ollama: one machine, whatever model names it serves), else the
provider and model (hosted APIs rate-limit per model).

**Adaptive concurrency** (additive increase, multiplicative decrease, as TCP does for its window):

- the limit starts at `--max-connections` and never exceeds it (the user's hard cap) nor drops
  below `min_limit`;
- **increase**: each successful request that found the limit in full use adds `1/limit`, i.e. +1
  per limit's worth of successes — a limit nobody fills does not grow;
- **decrease** (× `backoff`, default 0.7) on an overload answer (HTTP 429, 503, 529) and on rising
  latency: the median latency of a window of requests exceeds `latency_tolerance` × the baseline
  (the fastest reply seen: the unloaded latency, as TCP Vegas takes its BaseRTT) and by at least
  `min_latency_rise_s` (0.25 s: milliseconds of jitter on an idle local server are no load). One decrease per
  *epoch*: requests that started before the last decrease cannot cause another one — a burst of
  429s from one overload cuts once;
- when, after a latency cut, we sent clearly less (mean in-flight down 20 %) yet latency did not
  fall (by 5 %), the rise was not caused by our load (longer answers, a slower model): the
  baseline is raised to the new level instead of cutting again.

Every change is reported to subscribers (`subscribe`) as a `LimitChange`; the runner writes them
to `RUN/limits.jsonl` and the progress display shows `current/max`.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

#: HTTP statuses that mean "too many requests right now" (429; 503 and Anthropic's 529 overloaded)
OVERLOAD_STATUSES = frozenset({429, 503, 529})


def endpoint_key(model_spec: str, base_url: str | None = None, explicit: str | None = None) -> str:
    """The name of the endpoint a model's requests go to (see the module docstring)."""
    if explicit:
        return explicit
    if base_url:
        parts = urlsplit(base_url.strip())
        if parts.scheme and parts.netloc:
            return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"
        return base_url.strip().rstrip("/")
    return model_spec


class LimitView(Protocol):
    """What the progress display and the summary line read of a limit: an `EndpointLimiter`, or the
    sum of the Ray workers' limits on one endpoint (`executors.ray_executor.WorkerLimits`)."""

    @property
    def key(self) -> str: ...
    @property
    def adaptive(self) -> bool: ...
    @property
    def max_limit(self) -> int: ...
    @property
    def cuts(self) -> int: ...
    @property
    def overloads(self) -> int: ...
    @property
    def current(self) -> int: ...

    def status(self) -> str: ...


@dataclass
class LimitChange:
    """One change of an endpoint's limit (a line of RUN/limits.jsonl)."""

    endpoint: str
    limit: int
    previous: int
    reason: str  # "start" | "increase" | "overload" | "latency" | "rebaseline"
    inflight: int
    at: float = field(default_factory=time.time)
    latency_s: float | None = None
    baseline_s: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


class Slot:
    """One request's place under the limit. `ok()` after a reply, `overloaded()` on an overload answer."""

    __slots__ = ("_outcome", "clean", "epoch", "limiter", "load", "saturated", "started")

    def __init__(self, limiter: EndpointLimiter, epoch: int, saturated: bool, started: float, clean: bool) -> None:
        self.limiter = limiter
        self.load = limiter.inflight  # requests in flight (this one included) when it started
        self.epoch = epoch
        self.saturated = saturated
        self.started = started
        self.clean = clean  # no request from before the last cut was in flight when this one started
        self._outcome: str | None = None

    def ok(self) -> None:
        self._outcome = "ok"

    def overloaded(self) -> None:
        self._outcome = "overload"


class EndpointLimiter:
    """A counting limit whose size adapts (module docstring). Use from one event loop."""

    def __init__(
        self,
        key: str,
        initial: int,
        *,
        adaptive: bool = True,
        max_limit: int | None = None,
        min_limit: int = 1,
        backoff: float = 0.7,
        latency_tolerance: float = 2.0,
        min_latency_rise_s: float = 0.25,
        min_window: int = 8,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.key = key
        self.adaptive = adaptive
        self.max_limit = max(1, max_limit if max_limit is not None else initial)
        self.min_limit = max(1, min(min_limit, self.max_limit))
        self.limit = float(min(max(initial, self.min_limit), self.max_limit))
        self.backoff = backoff
        self.latency_tolerance = latency_tolerance
        self.min_latency_rise_s = min_latency_rise_s
        self.min_window = min_window
        self.clock = clock
        self.inflight = 0
        self.epoch = 0
        self.cuts = 0
        self.overloads = 0
        self.peak_inflight = 0
        self._fastest: float | None = None
        self._floor: float | None = None
        self._samples: list[float] = []
        self._loads: list[int] = []
        self._draining = 0
        self._cut_at: tuple[float, float] | None = None  # (median latency, mean load) of the window that cut
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._subscribers: list[Callable[[LimitChange], None]] = []
        self.history: list[LimitChange] = [LimitChange(key, self.current, self.current, "start", 0)]

    # ---- reading -----------------------------------------------------------------------------------
    @property
    def current(self) -> int:
        """The number of requests allowed in flight now."""
        return max(self.min_limit, int(self.limit))

    def status(self) -> str:
        return f"{self.current}/{self.max_limit}" if self.adaptive else str(self.current)

    def subscribe(self, fn: Callable[[LimitChange], None]) -> Callable[[], None]:
        """Call `fn` on every change from now on; returns the function that unsubscribes."""
        self._subscribers.append(fn)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.remove(fn)

        return unsubscribe

    # ---- slots -------------------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        """Wait for room under the limit, hold it while the request runs, then learn from its outcome."""
        await self._acquire()
        saturated = self.inflight >= self.current or bool(self._waiters)
        slot = Slot(self, self.epoch, saturated, self.clock(), clean=self._draining == 0)
        try:
            yield slot
        finally:
            self.inflight -= 1
            if slot.epoch != self.epoch and self._draining > 0:
                self._draining -= 1
            if slot._outcome == "ok":
                self._on_ok(slot)
            elif slot._outcome == "overload":
                self._on_overload(slot)
            self._wake()

    async def _acquire(self) -> None:
        if self.inflight < self.current and not self._waiters:
            self._take()
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except BaseException:
            if fut.done() and not fut.cancelled():
                self.inflight -= 1  # woken (room was taken for us) and cancelled at once: give it back
                self._wake()
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(fut)
            raise

    def _take(self) -> None:
        self.inflight += 1
        self.peak_inflight = max(self.peak_inflight, self.inflight)

    def _wake(self) -> None:
        while self._waiters and self.inflight < self.current:
            fut = self._waiters.popleft()
            if fut.done():
                continue
            self._take()
            fut.set_result(None)

    # ---- learning ----------------------------------------------------------------------------------
    def _on_ok(self, slot: Slot) -> None:
        if not self.adaptive:
            return
        before = self.current
        if slot.saturated and self.limit < self.max_limit:
            self.limit = min(float(self.max_limit), self.limit + 1.0 / max(self.limit, 1.0))
            if self.current > before:
                self._changed(before, "increase")
        took = self.clock() - slot.started
        self._fastest = took if self._fastest is None else min(self._fastest, took)
        if slot.epoch == self.epoch and slot.clean:  # latency under the current limit only
            self._samples.append(took)
            self._loads.append(slot.load)
            if len(self._samples) >= max(self.min_window, self.current):
                self._latency_window()

    @property
    def baseline(self) -> float | None:
        """The latency taken as unloaded: the fastest reply seen (as TCP Vegas takes its BaseRTT),
        raised to the floor that a cut that did not help set."""
        if self._fastest is None:
            return None
        return max(self._fastest, self._floor or 0.0)

    def _latency_window(self) -> None:
        med = statistics.median(self._samples)
        load = statistics.fmean(self._loads)
        self._samples.clear()
        self._loads.clear()
        base = self.baseline
        if base is None:
            return
        if self._floor is not None and med < self._floor:
            self._floor = med
        if med <= self.latency_tolerance * base or med - base < self.min_latency_rise_s:
            self._cut_at = None  # not slower, or only by a few milliseconds (an idle local server's jitter)
            return
        if self._cut_at is not None and med >= 0.95 * self._cut_at[0] and load <= 0.8 * self._cut_at[1]:
            # we sent clearly less since the last cut, yet latency did not fall: not our load
            # (longer answers, a slower model)
            self._cut_at = None
            self._floor = med
            self._record(LimitChange(self.key, self.current, self.current, "rebaseline", self.inflight,
                                     latency_s=round(med, 4), baseline_s=round(base, 4)))
            return
        self._cut_at = (med, load)
        self._cut("latency", latency=med)

    def _on_overload(self, slot: Slot) -> None:
        self.overloads += 1
        if self.adaptive and slot.epoch == self.epoch:
            self._cut("overload")

    def _cut(self, reason: str, latency: float | None = None) -> None:
        before = self.current
        self.limit = max(float(self.min_limit), self.limit * self.backoff)
        self.epoch += 1
        self.cuts += 1
        # latency samples count again once the requests sent under the old limit are all back
        self._draining = self.inflight
        self._samples.clear()
        if self.current != before:  # already at the floor: nothing changed worth a line
            self._changed(before, reason, latency)

    def _changed(self, before: int, reason: str, latency: float | None = None) -> None:
        self._record(LimitChange(
            self.key, self.current, before, reason, self.inflight,
            latency_s=None if latency is None else round(latency, 4),
            baseline_s=None if latency is None or self.baseline is None else round(self.baseline, 4),
        ))

    def _record(self, change: LimitChange) -> None:
        self.history.append(change)
        if len(self.history) > 10_000:  # a long run keeps its first and its recent changes
            del self.history[1:5_000]
        for fn in list(self._subscribers):
            fn(change)

    def summary(self) -> dict[str, Any]:
        return {"endpoint": self.key, "limit": self.current, "max": self.max_limit, "adaptive": self.adaptive,
                "cuts": self.cuts, "overloads": self.overloads, "peak_inflight": self.peak_inflight}


class LimiterPool:
    """The limiters of one process, one per endpoint key; a sweep shares one pool across its runs."""

    def __init__(self) -> None:
        self._by_key: dict[str, EndpointLimiter] = {}

    def get(self, key: str, initial: int, *, adaptive: bool = True) -> EndpointLimiter:
        """The endpoint's limiter, made on first use. A later, different `initial` does not resize
        it: the first run that names an endpoint sets its cap (the sweep plan says so)."""
        lim = self._by_key.get(key)
        if lim is None:
            lim = self._by_key[key] = EndpointLimiter(key, initial, adaptive=adaptive)
        return lim

    def all(self) -> list[EndpointLimiter]:
        return list(self._by_key.values())

    def status(self) -> str:
        return " · ".join(f"{lim.key} {lim.status()}" for lim in self._by_key.values())
