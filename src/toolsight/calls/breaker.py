"""The circuit breaker that pauses a whole run while a model endpoint is down.

One breaker is shared by every call to one endpoint (the evaluated model; each judge has its own).

- **Closed** (normal): calls go through. A transient failure (connection refused or reset, a
  timeout, 5xx, 429) is reported here only when nothing was served since the failing call last
  failed (`ModelCaller` decides) — a failure while others are being served is that request's own
  problem, not an outage; `success()` resets the count.
- **Open**: `threshold` such failures in a row. Every call waits in `wait()` instead of failing
  its task. One health probe (a request that costs nothing, e.g. the models listing; never a
  completion) is sent after a backoff delay that doubles up to
  `probe_max`; the first probe that gets any answer other than a transient failure closes the
  breaker and every waiting call goes on. The newest Retry-After the server sent — on a call's
  failure or on a probe's (`StillDown.retry_after`) — stretches the next delay, capped at `max_retry_after`.
- **Given up**: open for `outage_timeout` seconds since the first failure of the outage (or a
  fatal answer such as HTTP 401). Every waiting and later call raises `RunAborted`; the runner
  keeps the finished records and exits non-zero.

State changes are reported through `on_event` ("model endpoint unreachable …, retrying in N s"; "rate-limited
(HTTP 429)" or "failing (HTTP 503)" when the endpoint answers with such a status)
so the CLI can show them; `status` is the current line (empty when closed). Adaptive concurrency
(a later limiter) can read `is_open` and `successes` and needs nothing else from here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from toolsight.errors import RunAborted

log = logging.getLogger(__name__)


class StillDown(Exception):
    """Raised by a probe whose request failed transiently (any other outcome closes the breaker),
    with the server's Retry-After on that failure, if it sent one (the breaker caps it)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


Probe = Callable[[], Awaitable[None]]


class CircuitBreaker:
    """Shared by all calls to one endpoint; see the module docstring for the states."""

    def __init__(
        self,
        probe: Probe,
        *,
        label: str = "model endpoint",
        threshold: int = 3,
        backoff_base: float = 1.0,
        probe_max: float = 15.0,
        outage_timeout: float = 600.0,
        max_retry_after: float = 120.0,
        on_event: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.probe = probe
        self.label = label
        self.threshold = max(1, threshold)
        self.backoff_base = max(0.01, backoff_base)
        self.probe_max = max(self.backoff_base, probe_max)
        self.outage_timeout = outage_timeout
        self.max_retry_after = max_retry_after
        self.on_event = on_event
        self.clock = clock
        #: successful calls so far; a call notes the value when it starts (see `failure`)
        self.successes = 0
        self.failures = 0
        self.first_failure_at: float | None = None
        self.opened_at: float | None = None
        self.last_error = ""
        self.last_status: int | None = None  # the HTTP status of the last failure (None: no answer at all)
        self.retry_after: float | None = None
        self.status = ""
        self._last_status_at: float | None = None
        self.outages = 0
        self.outage_s = 0.0
        self.probes = 0
        self.aborted: RunAborted | None = None
        self._closed: asyncio.Event | None = None
        self._prober: asyncio.Task[None] | None = None

    # ---- what calls report ----------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return self.opened_at is not None

    def down_seconds(self) -> float:
        """Seconds the endpoint has been considered down so far in this run (outages added up)."""
        return self.outage_s + (self.clock() - self.opened_at if self.opened_at is not None else 0.0)

    def success(self) -> None:
        self.successes += 1
        self.failures = 0
        self.first_failure_at = None
        if self.is_open:
            self._close()

    def failure(self, message: str, retry_after: float | None = None, status: int | None = None) -> bool:
        """A transient failure with nothing served since the failing call last failed (the caller
        decides that). Returns True when the endpoint is (now) considered down: the caller then
        waits in `wait()`."""
        self.raise_if_aborted()
        self.last_error = message
        self.last_status = status
        if retry_after is not None:
            self.retry_after = retry_after
        if self.failures == 0:
            self.first_failure_at = self.clock()
        self.failures += 1
        if not self.is_open and self.failures >= self.threshold:
            self._open()
        return self.is_open

    def abort(self, exc: RunAborted) -> None:
        """Give up (a fatal answer, or the outage lasted too long): wake every waiting call."""
        if self.aborted is None:
            self.aborted = exc
        self.status = ""
        self._event().set()

    async def wait(self) -> float:
        """Wait while the breaker is open; returns the seconds waited. Raises RunAborted once given up."""
        self.raise_if_aborted()
        if not self.is_open:
            return 0.0
        t0 = self.clock()
        while self.is_open and self.aborted is None:
            await self._event().wait()
        self.raise_if_aborted()
        return self.clock() - t0

    def raise_if_aborted(self) -> None:
        if self.aborted is not None:  # a fresh exception per caller: one shared object would pile up tracebacks
            raise RunAborted(str(self.aborted), exit_code=self.aborted.exit_code)

    async def aclose(self) -> None:
        if self._prober is not None and not self._prober.done():
            self._prober.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._prober
        self._prober = None

    def state(self) -> str:
        """What the outage looks like: `rate-limited` (HTTP 429), `failing` (another status, e.g. 503) or
        `unreachable` (no answer: connection refused or reset, a timeout)."""
        if self.last_status == 429:
            return "rate-limited (HTTP 429)"
        if self.last_status is not None:
            return f"failing (HTTP {self.last_status})"
        return "unreachable"

    # ---- states ---------------------------------------------------------------------------------
    def _event(self) -> asyncio.Event:
        if self._closed is None:
            self._closed = asyncio.Event()
            self._closed.set()
        return self._closed

    def _open(self) -> None:
        self.opened_at = self.first_failure_at if self.first_failure_at is not None else self.clock()
        self.outages += 1
        self._event().clear()
        self._emit(f"{self.label} {self.state()} ({self.last_error}); pausing the run")
        self._prober = asyncio.get_running_loop().create_task(self._probe_loop(), name="toolsight-probe")

    def _close(self) -> None:
        assert self.opened_at is not None
        self._last_status_at = None
        down = self.clock() - self.opened_at
        self.outage_s += down
        self.opened_at = None
        self.failures = 0
        self.first_failure_at = None
        self.retry_after = None
        self.status = ""
        self._event().set()
        self._emit(f"{self.label} back after {down:.0f} s; resuming")

    def _emit(self, text: str) -> None:
        log.info(text)
        if self.on_event is not None:
            self.on_event(text)

    def _give_up(self) -> None:
        down = self.clock() - (self.opened_at or self.clock())
        self.abort(RunAborted(
            f"{self.label} {self.state()} for {down:.0f} s (last error: {self.last_error}); gave up after "
            f"--outage-timeout {self.outage_timeout:g} s"
        ))

    async def _probe_loop(self) -> None:
        delay = self.backoff_base
        while self.is_open and self.aborted is None:
            assert self.opened_at is not None
            left = self.outage_timeout - (self.clock() - self.opened_at)
            if left <= 0:
                self._give_up()
                return
            wait = min(delay, self.probe_max)
            if self.retry_after is not None:
                wait = max(wait, min(self.retry_after, self.max_retry_after))
            wait = min(wait, left)
            down = self.clock() - self.opened_at
            self.status = f"{self.label} {self.state()} for {down:.0f} s, retrying in {_secs(wait)} s"
            now = self.clock()
            if self._last_status_at is None or now - self._last_status_at >= 10.0:
                self._last_status_at = now  # one line per 10 s at most; `status` is always current
                self._emit(self.status)
            await asyncio.sleep(wait)
            if not self.is_open:
                return  # an in-flight call succeeded meanwhile
            self.probes += 1
            try:
                await self.probe()
            except StillDown as exc:
                self.last_error = str(exc)
                if exc.retry_after is not None:  # as `failure`: the newest Retry-After the server sent
                    self.retry_after = exc.retry_after
                delay *= 2
                continue
            except RunAborted as exc:
                self.abort(exc)
                return
            if self.is_open:
                self.successes += 1
                self._close()
            return


def _secs(x: float) -> str:
    return f"{x:.1f}" if x < 10 else f"{x:.0f}"
