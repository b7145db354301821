"""The direct path of the provider adapters: requests go out as JSON bytes the adapter encoded
itself, over one pooled aiohttp session per model, with the URL and headers the SDK uses.

Why: per model call the SDKs transform typed parameters, build and validate options, headers and
URLs, and construct pydantic response models, and httpx2's own client and pool cost twice what
aiohttp does for the same request — together ~2 ms of CPU per call, more than everything else
the harness does (bench/engine.py, docs/speed.md). What reaches the server does not change: the
URL and headers are the ones the SDK produced (for the openai and anthropic SDKs, taken from the
first request the SDK itself sent with that timeout, seen by an httpx event hook; for google-genai,
from the SDK's request builder; either way kept for later runs by models/_routes.py), the body is
the one the SDK path sends, and an error status becomes the SDK's own exception message.
tests/models/test_direct_path.py sends the same conversations both ways and compares what the
server received, request by request.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from toolsight.models._common import connection_error, status_error, timeout_error
from toolsight.models.base import ModelError
from toolsight.models.task_context import TASK_HEADER, task_headers

if TYPE_CHECKING:  # aiohttp is imported with the first direct request, after the SDK's first one
    import aiohttp

    from toolsight.models._routes import RouteStore

#: headers the HTTP client derives from the request itself, recomputed for every request
_OWN = frozenset({"host", "content-length", "transfer-encoding"})
#: headers that must differ per request: a route that carries one is not reused
_PER_REQUEST = frozenset({"idempotency-key", "x-stainless-idempotency-key", "x-stainless-raw-response"})
#: the header naming the request's task: never part of a route (nor kept across runs); `post` adds
#: the current task's, last, where the SDKs put a per-request extra header
_TASK = TASK_HEADER.lower()


def dumps(obj: Any) -> bytes:
    """A request body as compact UTF-8 JSON — the bytes the Stainless SDKs (openai, anthropic) send,
    made by orjson, which is ~40x faster than `json.dumps` on bodies full of base64 images (~15 µs
    instead of ~600 µs for six 16 KB images). orjson writes a float below 1e-4 without an exponent
    (0.00001, not 1e-05): the same number. What orjson refuses (integers beyond 64 bits) goes
    through `json`."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


@dataclass(frozen=True)
class Route:
    """Where, with which headers and under which timeout a request goes."""

    url: str
    headers: tuple[tuple[str, str], ...]
    timeout: float

    @classmethod
    def make(cls, url: str, headers: Any, timeout: float) -> Route | None:
        """From the URL and headers the SDK used (a mapping or (name, value) pairs, str or bytes);
        None when a header must change from one request to the next."""
        pairs = headers.items() if isinstance(headers, Mapping) else headers
        kept: list[tuple[str, str]] = []
        for k, v in pairs:
            name = k.decode("latin-1") if isinstance(k, bytes) else str(k)
            value = v.decode("latin-1") if isinstance(v, bytes) else str(v)
            low = name.lower()
            if low in _PER_REQUEST:
                return None
            if low not in _OWN and low != _TASK:
                kept.append((name, value))
        return cls(url, tuple(kept), timeout)


@dataclass
class Reply:
    status: int
    headers: Mapping[str, str]
    body: bytes
    reason: str = ""

    def json(self) -> Any:
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError:  # what only `json` reads (NaN, integers beyond 64 bits)
            return json.loads(self.body)


@dataclass
class Capture:
    """The request the SDK is about to send from the current task (filled by `capture_hook`)."""

    url: str | None = None
    headers: Any = None


_capturing: contextvars.ContextVar[Capture | None] = contextvars.ContextVar("toolsight_capture", default=None)


async def capture_hook(request: Any) -> None:
    """httpx request event hook on an SDK's client: hands the request to the capture in progress."""
    cap = _capturing.get()
    if cap is not None and cap.url is None:
        cap.url = str(request.url)
        cap.headers = list(request.headers.raw)


@dataclass
class DirectPath:
    """One model's aiohttp session and the routes learned from its SDK, by request timeout."""

    #: routes kept across runs (models/_routes.py); None: learned anew by every run
    store: RouteStore | None = None
    limit: int = 256  # a safety cap: the runner's connection limit is what bounds requests in flight
    routes: dict[float, Route] = field(default_factory=dict)
    sent: int = 0  # requests that took this path (tests check the path is really used)
    _session: aiohttp.ClientSession | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _timeouts: dict[float, aiohttp.ClientTimeout] = field(default_factory=dict)
    _proxies: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    def route(self, timeout: float) -> Route | None:
        route = self.routes.get(timeout)
        if route is None and self.store is not None:
            kept = self.store.get(timeout)
            if kept is not None:
                route = Route.make(kept[0], kept[1], timeout)
                if route is not None:
                    self.routes[timeout] = route
        return route

    def learn(self, timeout: float, url: str, headers: Any) -> None:
        route = Route.make(url, headers, timeout)
        if route is not None:
            self.routes[timeout] = route
            if self.store is not None:
                self.store.put(timeout, route.url, list(route.headers))

    @contextlib.contextmanager
    def capture(self, timeout: float, on: bool = True) -> Iterator[None]:
        """Learn the route of `timeout` from the SDK request sent inside the block, when the block
        succeeds (`on` False: learn nothing)."""
        if not on:
            yield
            return
        cap = Capture()
        _capturing.set(cap)
        ok = False
        try:
            yield
            ok = True
        finally:
            _capturing.set(None)
            if ok and cap.url is not None:
                self.learn(timeout, cap.url, cap.headers)

    async def send(self, spec: str, route: Route, body: dict[str, Any], client: Callable[[], Any],
                   key_var: str) -> Any:
        """POST a Stainless SDK's (openai, anthropic) request body; the reply's JSON, or for an error
        status the ModelError with the message the SDK (`client()`) gives it."""
        reply = await self.post(spec, route, dumps(body))
        if reply.status >= 400:
            raise stainless_status_error(spec, client(), reply, route.url, key_var)
        return decode(spec, reply)

    def session(self) -> aiohttp.ClientSession:
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            self._drop()  # a session belongs to one event loop; one left on another loop goes with it
            conn = aiohttp.TCPConnector(limit=self.limit, ttl_dns_cache=300)
            # not trust_env: aiohttp would re-read the proxy variables and ~/.netrc for every request
            # (~0.2 ms each); `_proxy` reads the proxy variables once per URL, as httpx does per client
            self._session = aiohttp.ClientSession(connector=conn, auto_decompress=True)
            self._loop = loop
            # a model nobody closed (a judge in a script) must not leave aiohttp complaining at exit
            weakref.finalize(self, _close_quietly, self._session)
        return self._session

    async def post(self, spec: str, route: Route, body: bytes) -> Reply:
        """POST `body`; the status, headers and body of the reply. Timeouts and connection failures
        become the retryable ModelErrors the SDK paths give."""
        import aiohttp

        session = self.session()
        timeout = self._timeouts.get(route.timeout)
        if timeout is None:
            # httpx's semantics for one number: connect, read and pool each get `timeout`
            t = route.timeout
            timeout = self._timeouts[t] = aiohttp.ClientTimeout(total=None, connect=t, sock_connect=t, sock_read=t)
        proxy, proxy_auth = self._proxy(route.url)
        headers = route.headers
        if task := task_headers():
            headers = headers + tuple(task.items())
        self.sent += 1
        try:
            async with session.post(route.url, data=body, headers=headers, timeout=timeout, proxy=proxy,
                                    proxy_auth=proxy_auth) as resp:
                return Reply(resp.status, resp.headers, await resp.read(), resp.reason or "")
        except TimeoutError:
            raise timeout_error(spec, route.timeout) from None
        except aiohttp.ClientError as exc:
            raise connection_error(spec, f"{type(exc).__name__}: {exc}") from None

    def _proxy(self, url: str) -> tuple[Any, Any]:
        """The proxy the environment names for `url` (HTTP(S)_PROXY, NO_PROXY), as the SDKs' httpx
        clients use it; (None, None) for none."""
        found = self._proxies.get(url)
        if found is None:
            from aiohttp.helpers import get_env_proxy_for_url
            from yarl import URL

            try:
                found = get_env_proxy_for_url(URL(url))
            except LookupError:
                found = (None, None)
            self._proxies[url] = found
        return found

    def _drop(self) -> None:
        """Forget a session that cannot be awaited any more (its loop is gone)."""
        old, self._session = self._session, None
        if old is not None:
            _close_quietly(old)

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed and self._loop is asyncio.get_running_loop():
            await self._session.close()
        self._drop()


def _close_quietly(session: aiohttp.ClientSession) -> None:
    """Close a session without awaiting (its loop may be gone): its connections are closed, and
    both it and its connector are marked closed, so aiohttp does not report them as leaked."""
    if session.closed:
        return
    conn = session.connector
    session.detach()
    if conn is not None:
        conn._close()


def stainless_status_error(spec: str, client: Any, reply: Reply, url: str, key_var: str) -> Exception:
    """The ModelError for an error reply, with the message the openai/anthropic SDK gives it."""
    import httpx2

    resp = httpx2.Response(reply.status, headers=list(reply.headers.items()), content=reply.body,
                           request=httpx2.Request("POST", url))
    err = client._make_status_error_from_response(resp)
    return status_error(spec, reply.status, str(getattr(err, "message", err)), reply.headers, key_var)


def decode(spec: str, reply: Reply) -> Any:
    """The JSON of a successful reply; anything else is a retryable malformed response."""
    try:
        return reply.json()
    except ValueError as exc:
        raise ModelError(f"{spec}: malformed response: {exc}", retryable=True) from None
