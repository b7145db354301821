"""The web session: the one object tools use for search, pages, bytes, summaries and hosted images.

A run opens one session (`open_session`) in one of three modes and every call goes through it:

- **live**: a `LiveBackend` (real APIs, URL policy); every call is recorded in the run directory;
- **offline**: a `CorpusBackend` over a corpus folder on the local server; also recorded;
- **replay**: answers only from a recorded cassette; a call it does not hold ends the task with
  `ReplayMiss` — never a live call.

The session also hosts images (crops, a task's input images) on the local server under stable,
content-addressed URLs (`https://img.toolsight.test/<sha>.jpg`) that every tool accepts, counts
the run's request budget, and lets later tools add recorded operations of their own (`custom`).
Tools find the session of the running task with `current_session()`.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx
from pydantic import BaseModel

from toolsight import imaging
from toolsight.web.base import Backend
from toolsight.web.cassette import CASSETTE, Cassette, call_key, find_cassette
from toolsight.web.corpus import norm_url
from toolsight.web.policy import Budget, Limits, check_syntax
from toolsight.web.server import LocalServer
from toolsight.web.summarise import Complete
from toolsight.web.types import (
    Fetched,
    ImageHit,
    NotPublic,
    PageText,
    ReplayMiss,
    SearchHit,
    WebCallError,
    WebError,
)
from toolsight.web.uploads import Uploader, uploader_from_env
from toolsight.web.weather import CorpusWeather, OpenMeteoWeather, WeatherSource

Mode = Literal["live", "offline", "replay"]
MODES: tuple[Mode, ...] = ("live", "offline", "replay")
HOSTED_PREFIX = "https://img.toolsight.test/"
#: where the image host listens (`HOST[:PORT]`) and the base URL a model server reaches it by
IMAGE_HOST_VAR = "TOOLSIGHT_IMAGE_HOST"
IMAGE_HOST_URL_VAR = "TOOLSIGHT_IMAGE_HOST_URL"
NOT_PUBLIC = ("{url} is an image toolsight hosts on this machine (a crop), so the live reverse image search "
              "cannot fetch it: no upload backend is configured, and the reference pipeline (crop, upload, "
              "search the upload) cannot be followed. Set TOOLSIGHT_UPLOAD=hf:OWNER/REPO or s3://BUCKET to "
              "upload crops, or search the original image's URL.")

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

_CURRENT: contextvars.ContextVar[WebSession | None] = contextvars.ContextVar("toolsight_web_session", default=None)


def current_session() -> WebSession:
    """The web session of the running task; a clear error when a web tool runs without one."""
    s = _CURRENT.get()
    if s is None:
        raise WebCallError("no web session is open: web tools run inside `toolsight run` (or `use_session`)")
    return s


def maybe_session() -> WebSession | None:
    return _CURRENT.get()


@contextlib.contextmanager
def use_session(session: WebSession) -> Iterator[WebSession]:
    """Make `session` the current one for the code (and the asyncio tasks it starts) inside."""
    token = _CURRENT.set(session)
    try:
        yield session
    finally:
        _CURRENT.reset(token)


def _sniff_suffix(data: bytes) -> str:
    try:
        fmt = imaging.check(data).format.lower()  # the header only, through the guarded decoder
    except imaging.ImageRejected:
        return ".bin"
    return {"jpeg": ".jpg", "png": ".png", "gif": ".gif", "webp": ".webp", "bmp": ".bmp"}.get(fmt, f".{fmt or 'bin'}")


class WebSession:
    """See the module docstring. Use `async with` (or `start()` / `aclose()`)."""

    def __init__(self, mode: Mode, backend: Backend | None, *, record: Cassette | None = None,
                 replay: Cassette | None = None, limits: Limits | None = None,
                 summarizer: Complete | None = None, summarizer_name: str | None = None,
                 server: LocalServer | None = None, weather: WeatherSource | None = None,
                 uploader: Uploader | None = None) -> None:
        if mode == "replay" and replay is None:
            raise WebError("web replay needs a cassette")
        if mode != "replay" and backend is None:
            raise WebError(f"web mode {mode!r} needs a backend")
        self.mode = mode
        self.backend = backend
        self.record = record
        self.replay = replay
        self.limits = limits or Limits()
        self.budget = Budget(self.limits.max_requests)
        self.summarizer = summarizer
        self.summarizer_name = summarizer_name
        self.server = server or LocalServer()
        #: where `web.weather.lookup_weather` gets historical weather (None in replay: the cassette answers)
        self.weather = weather
        #: gives an image toolsight made a public URL (live mode; `web/uploads.py`, `TOOLSIGHT_UPLOAD`)
        self.uploader = uploader
        self._hosted: dict[str, str] = {}  # normalised URL -> hosted name
        self._local: httpx.AsyncClient | None = None
        self.calls: dict[str, int] = {}

    # ---- lifecycle ---------------------------------------------------------------------------
    def start(self) -> WebSession:
        self.server.start()
        return self

    async def aclose(self) -> None:
        if self._local is not None:
            await self._local.aclose()
            self._local = None
        if self.backend is not None:
            await self.backend.aclose()
        if self.weather is not None:
            await self.weather.aclose()
        for c in (self.record, self.replay):
            if c is not None:
                c.close()
        self.server.stop()

    async def __aenter__(self) -> WebSession:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def describe(self) -> dict[str, Any]:
        """Which backend ran, for the run manifest."""
        return {
            "mode": self.mode,
            "backend": self.backend.describe() if self.backend is not None else {"name": "replay"},
            "cassette": str(self.record.path) if self.record is not None else None,
            "replayed_from": str(self.replay.path) if self.replay is not None else None,
            "budget": self.limits.max_requests,
            "timeout_s": self.limits.timeout_s,
            "max_page_bytes": self.limits.max_page_bytes,
            "max_image_bytes": self.limits.max_image_bytes,
            "summarizer": self.summarizer_name,
            "image_host": HOSTED_PREFIX,
            "image_host_url": self.server.public_url + "/h/",
            "upload": self.uploader.describe() if self.uploader is not None else None,
            "weather": self.weather.describe() if self.weather is not None else None,
        }

    # ---- recording ---------------------------------------------------------------------------
    async def _recorded(self, op: str, request: dict[str, Any], run: Callable[[], Awaitable[T]],
                        encode: Callable[[T], tuple[Any, bytes | None]],
                        decode: Callable[[Any, bytes | None], T], budget: bool = True) -> T:
        key = call_key(op, request)
        self.calls[op] = self.calls.get(op, 0) + 1
        if budget:
            self.budget.take(op)
        if self.mode == "replay":
            assert self.replay is not None
            entry = self.replay.get(key)
            if entry is None:
                raise ReplayMiss(
                    f"web replay: {self.replay.path} has no recorded {op} call for {json.dumps(request)[:300]}; "
                    "the recorded run never made this call. Re-record with --web live (or offline), or replay "
                    "the run with the same model replies."
                )
            if self.record is not None:
                self.record.put(op, key, request, entry.response, entry.error, entry.blob, "replay")
            if entry.error is not None:
                raise WebCallError(entry.error)
            return decode(entry.response, entry.blob)
        backend = self.backend.name if self.backend is not None else ""
        try:
            result = await run()
        except WebCallError as exc:
            if self.record is not None:
                self.record.put(op, key, request, error=str(exc), backend=backend)
            raise
        if self.record is not None:
            payload, blob = encode(result)
            self.record.put(op, key, request, payload, blob=blob, backend=backend)
        return result

    @staticmethod
    def _models(kind: type[M], n: int) -> tuple[Callable[[list[M]], tuple[Any, None]],
                                                Callable[[Any, bytes | None], list[M]]]:
        def enc(items: list[M]) -> tuple[Any, None]:
            return [i.model_dump(mode="json") for i in items], None

        def dec(data: Any, _: bytes | None) -> list[M]:  # a replay: at most the n hits a live call returns
            return [kind.model_validate(x) for x in (data or [])[:n]]

        return enc, dec

    def _need_backend(self) -> Backend:
        assert self.backend is not None
        return self.backend

    # ---- the interface -------------------------------------------------------------------------
    async def text_search(self, query: str, n: int = 5) -> list[SearchHit]:
        enc, dec = self._models(SearchHit, n)
        return await self._recorded("text_search", {"query": query, "n": n},
                                    lambda: self._need_backend().text_search(query, n), enc, dec)

    async def image_search(self, query: str, n: int = 3) -> list[ImageHit]:
        enc, dec = self._models(ImageHit, n)
        return await self._recorded("image_search", {"query": query, "n": n},
                                    lambda: self._need_backend().image_search(query, n), enc, dec)

    async def reverse_image_search(self, image_url: str, n: int = 3) -> list[ImageHit]:
        enc, dec = self._models(ImageHit, n)

        async def run() -> list[ImageHit]:
            backend = self._need_backend()
            data: bytes | None = None
            url = image_url
            if backend.needs_image_bytes:
                got = await self.fetch(image_url, kind="image")
                if not got.ok:
                    raise WebCallError(f"could not load the image at {image_url} (HTTP {got.status})")
                data = got.body
            elif self.is_toolsight_hosted(image_url):
                if self.uploader is None:
                    raise NotPublic(NOT_PUBLIC.format(url=image_url))
                url = await self.publish((await self.fetch(image_url, kind="image")).body)
            return await backend.reverse_image_search(url, n, data)

        return await self._recorded("reverse_image_search", {"image_url": image_url, "n": n}, run, enc, dec)

    async def fetch(self, url: str, kind: Literal["page", "image"] = "page") -> Fetched:
        """The bytes behind `url`: hosted images from the local host, anything else via the backend."""
        name = self._hosted.get(norm_url(url)) if isinstance(url, str) else None
        if name is not None:
            return await self._fetch_hosted(url, name)
        check_syntax(url)
        cap = self.limits.max_image_bytes if kind == "image" else self.limits.max_page_bytes

        def enc(f: Fetched) -> tuple[Any, bytes | None]:
            return f.model_dump(mode="json", exclude={"body"}), f.body

        def dec(data: Any, blob: bytes | None) -> Fetched:
            # a replay re-applies the live path's byte cap (a cassette can be edited)
            if blob is not None and len(blob) > cap:
                raise WebCallError(f"{url} is over the {cap:,}-byte cap")
            return Fetched.model_validate({**data, "body": blob or b""})

        def run() -> Awaitable[Fetched]:
            backend = self._need_backend()  # a page is fetched under the backend's page rules (robots.txt)
            return backend.fetch_page(url, cap) if kind == "page" else backend.fetch(url, cap)

        return await self._recorded("fetch", {"url": url, "kind": kind}, run, enc, dec)

    async def read_page(self, url: str) -> PageText:
        """The page's readable text (Jina Reader, or fetch + trafilatura), recorded."""
        def enc(p: PageText) -> tuple[Any, None]:
            return p.model_dump(mode="json"), None

        def dec(data: Any, _: bytes | None) -> PageText:
            page = PageText.model_validate(data)  # a replay: no more text than a live read can give
            if len(page.text) > self.limits.max_page_bytes:
                page = page.model_copy(update={"text": page.text[: self.limits.max_page_bytes]})
            return page

        return await self._recorded("read_page", {"url": url}, lambda: self._need_backend().read_page(url), enc, dec)

    async def complete(self, prompt: str, attempt: int = 1, parts: bool = False) -> str:
        """One summariser call (recorded by prompt hash and attempt number; `parts`: the prompt as a
        one-part content list, see `summarise.Complete`)."""
        if self.summarizer is None and self.mode != "replay":
            raise WebCallError("no summary model is configured")
        request = {"model": self.summarizer_name or "", "attempt": attempt,
                   "prompt_sha256": hashlib.sha256(prompt.encode()).hexdigest(), "prompt_chars": len(prompt)}

        async def run() -> str:
            assert self.summarizer is not None
            return await self.summarizer(prompt, attempt, parts)

        return await self._recorded("summarise", request, run, lambda s: (s, None),
                                    lambda d, _: str(d or ""), budget=False)

    @property
    def has_summarizer(self) -> bool:
        return self.summarizer is not None or (self.mode == "replay" and bool(self.summarizer_name))

    async def custom(self, op: str, request: dict[str, Any], run: Callable[[], Awaitable[Any]]) -> Any:
        """A recorded call of a tool's own (e.g. a weather lookup): `run()` returns JSON-able data.

        In replay mode `run` is never called. `run` must raise `WebCallError` for a failure the
        model should see; live network access inside `run` should use `fetch` (policy, caps).
        """
        return await self._recorded(f"custom:{op}", request, run, lambda d: (d, None), lambda d, _: d)

    # ---- public URLs ---------------------------------------------------------------------------
    async def publish(self, data: bytes, suffix: str = ".jpg") -> str:
        """The URL an image toolsight made (a crop) goes by: uploaded to the run's upload backend in
        live mode (a public URL, as the reference uploads its crops), the one the recording got in
        replay, else toolsight's own hosted URL. The image is served locally under it either way,
        so every tool reads it without the network."""
        name = hashlib.sha256(data).hexdigest()
        request = {"sha256": name, "bytes": len(data), "suffix": suffix}
        url: str | None = None
        if self.mode == "live" and self.uploader is not None:
            uploader = self.uploader
            url = str(await self.custom("upload", request, lambda: uploader.upload(data, suffix)))
        elif self.mode == "replay" and self.replay is not None and self.replay.get(call_key("custom:upload", request)):
            url = str(await self.custom("upload", request, _never))  # the recorded run uploaded it
        if url is None:
            return self.host_image(data, suffix)
        self.alias(url, data)
        return url

    def fetchable(self, url: str) -> str:
        """The URL a model server fetches the image at `url` from: toolsight's own hosted URLs, and
        off the live web (offline, replay: a local dataset, a generated set) a task's aliased dataset
        URLs too, become the image host's address (`/h/<name>`); a live dataset URL is sent as it is,
        as the reference sends it."""
        local = self.is_toolsight_hosted(url) or (self.mode != "live" and self.is_hosted(url))
        name = self._hosted.get(norm_url(url)) if local else None
        return f"{self.server.public_url}/h/{name}" if name is not None else url

    # ---- the image host -----------------------------------------------------------------------
    def host_image(self, data: bytes, suffix: str | None = None) -> str:
        """Serve `data` on the local host; returns its stable URL (same bytes → same URL)."""
        sfx = suffix or _sniff_suffix(data)
        name = hashlib.sha256(data).hexdigest()[:16] + sfx
        url = HOSTED_PREFIX + name
        self.server.host(name, data)
        self._hosted[norm_url(url)] = name
        return url

    def alias(self, url: str, data: bytes) -> None:
        """Serve `data` for `url` too (a task's input image under its dataset URL): no network needed."""
        canonical = self.host_image(data)
        self._hosted[norm_url(url)] = self._hosted[norm_url(canonical)]

    def is_hosted(self, url: str) -> bool:
        """True for a URL the local image host serves (its own URLs and aliased dataset URLs)."""
        return isinstance(url, str) and norm_url(url) in self._hosted

    def is_toolsight_hosted(self, url: str) -> bool:
        """True for toolsight's own image URLs (crops): nothing outside this machine can fetch them."""
        return self.is_hosted(url) and norm_url(url).startswith(norm_url(HOSTED_PREFIX))

    async def _fetch_hosted(self, url: str, name: str) -> Fetched:
        if self._local is None:
            self._local = httpx.AsyncClient(timeout=self.limits.timeout_s, trust_env=False)
        resp = await self._local.get(f"{self.server.base_url}/h/{name}")
        return Fetched(url=url, final_url=url, status=resp.status_code,
                       content_type=resp.headers.get("content-type", ""), body=resp.content)


async def _never() -> Any:
    raise AssertionError("a replayed call is answered from the cassette")


def parse_web_spec(spec: str | None) -> tuple[Mode | None, Path | None]:
    """`live`, `offline[=CORPUS]`, `replay=RUN_DIR|CASSETTE` → (mode, path); None → (None, None)."""
    if spec is None or not spec.strip():
        return None, None
    raw_mode, _, path = spec.strip().partition("=")
    mode = raw_mode.strip().lower()
    if mode not in MODES:
        import difflib

        close = difflib.get_close_matches(mode, list(MODES), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise WebError(f"--web {spec!r}: {hint}use live, offline[=CORPUS_DIR] or replay=RUN_DIR")
    if mode == "live" and path:
        raise WebError(f"--web {spec!r}: live takes no path")
    if mode == "replay" and not path:
        raise WebError("--web replay needs the recorded run: --web replay=RUN_DIR (or the path of its "
                       f"{CASSETTE})")
    checked: Mode = "live" if mode == "live" else "offline" if mode == "offline" else "replay"
    return checked, (Path(path).expanduser() if path else None)


def open_session(spec: str | None, run_dir: Path, *, default_corpus: Path | None = None,
                 summarizer: Complete | None = None, summarizer_name: str | None = None,
                 limits: Limits | None = None, env: dict[str, str] | None = None) -> WebSession:
    """The session a run asked for (not yet started). Every mode records into `run_dir`.

    No `--web`: offline when a corpus is known (`default_corpus`, from the dataset), else live.
    """
    from toolsight.web.live import LiveBackend
    from toolsight.web.offline import CorpusBackend

    mode, path = parse_web_spec(spec)
    if mode is None:
        mode = "offline" if default_corpus is not None else "live"
    lim = limits or Limits()
    e = env if env is not None else dict(os.environ)
    bind, public = e.get(IMAGE_HOST_VAR) or None, e.get(IMAGE_HOST_URL_VAR) or None
    if bind is not None and not re.fullmatch(r"[\w.\-:\[\]]+?(:\d{1,5})?", bind):
        raise WebError(f"{IMAGE_HOST_VAR}={bind!r}: give the address the image host listens on as HOST or HOST:PORT")
    server = LocalServer(bind=bind, public_url=public)
    record_path = run_dir / CASSETTE
    if mode == "replay":
        assert path is not None
        src = find_cassette(path)
        if src.resolve() == record_path.resolve():
            raise WebError(f"--web replay={path}: replay into a new --out directory, not the recorded run itself")
        replay = Cassette(src, readonly=True)
        recorded = replay.first_request("summarise")  # the recorded run's summary model, if it had one
        name = summarizer_name or (str(recorded.get("model")) if recorded else None)
        return WebSession("replay", None, record=Cassette(record_path), replay=replay, limits=lim,
                          summarizer=None, summarizer_name=name, server=server)
    backend: Backend
    weather: WeatherSource
    if mode == "offline":
        corpus = path or default_corpus
        if corpus is None:
            raise WebError("--web offline needs a corpus: --web offline=CORPUS_DIR (a folder with manifest.json, "
                           "e.g. from `toolsight generate browse`)")
        if not corpus.is_dir():
            raise WebError(f"offline corpus {corpus} is not a folder")
        server = LocalServer(corpus, bind=bind, public_url=public)
        backend = CorpusBackend(corpus, server, lim)
        weather = CorpusWeather.open(corpus)
        uploader = None  # offline: nothing leaves the machine
    else:
        backend = LiveBackend(lim, env=env)
        weather = OpenMeteoWeather(lim, env=env)
        uploader = uploader_from_env(e)
    return WebSession(mode, backend, record=Cassette(record_path), limits=lim, summarizer=summarizer,
                      summarizer_name=summarizer_name, server=server, weather=weather, uploader=uploader)
