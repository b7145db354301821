"""The live backend: real search APIs and real pages, behind the URL policy and the size caps.

Search: Serper (`/search`, `/images`, `/lens` — what the VisBrowse-Bench reference calls) when
`SERPER_API_KEY` is set, else the keyless `ddgs` metasearch for text and image search (it has no
reverse image search). Pages: Jina Reader (`r.jina.ai/<url>`) when `JINA_API_KEY` is set, else a
direct fetch (robots.txt honoured) read with trafilatura. `SERPER_BASE_URL` and `JINA_BASE_URL`
point the API calls elsewhere (an on-premise proxy, or a test server) — they are configuration,
so the model's URL policy does not apply to them; every URL a model chooses is checked.
"""

from __future__ import annotations

import asyncio
import os
import time
import urllib.robotparser
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from toolsight.version import __version__
from toolsight.web.base import Backend, read_capped
from toolsight.web.pinned import PinnedNetwork, Resolver, pinned_client
from toolsight.web.policy import Limits, check_live_url
from toolsight.web.reader import extract_page
from toolsight.web.types import Fetched, ImageHit, PageText, SearchHit, UrlRefused, WebCallError, WebError

SERPER_URL = "https://google.serper.dev"
JINA_URL = "https://r.jina.ai"
USER_AGENT = f"toolsight/{__version__} (research evaluation harness)"
_RETRY_STATUS = (429, 502, 503, 504)


def _retry_after(resp: httpx.Response, attempt: int) -> float:
    raw = resp.headers.get("retry-after")
    backoff = min(8.0, 0.5 * float(2 ** attempt))
    try:
        return min(30.0, max(0.0, float(raw))) if raw is not None else backoff
    except ValueError:
        return backoff


class LiveBackend(Backend):
    name = "live"

    def __init__(self, limits: Limits | None = None, env: dict[str, str] | None = None,
                 resolve_dns: bool = True, min_interval_s: float = 0.0,
                 allowed_origins: tuple[str, ...] = (), resolver: Resolver | None = None) -> None:
        """`allowed_origins` (`scheme://host:port`) skip the address check — for a trusted proxy or a test
        server set in code; the model can never add one. `resolver` (host -> addresses) replaces the
        system's for model-chosen URLs; their connections go only to the addresses it gave, checked."""
        e = env if env is not None else dict(os.environ)
        self.limits = limits or Limits()
        self.serper_key = e.get("SERPER_API_KEY") or None
        self.serper_url = (e.get("SERPER_BASE_URL") or SERPER_URL).rstrip("/")
        self.jina_key = e.get("JINA_API_KEY") or None
        self.jina_url = (e.get("JINA_BASE_URL") or JINA_URL).rstrip("/")
        self.resolve_dns = resolve_dns
        self.min_interval_s = min_interval_s
        self._last_api = 0.0
        self._api_lock = asyncio.Lock()
        self._robots: dict[str, urllib.robotparser.RobotFileParser | None] = {}
        self.allowed_origins = tuple(o.rstrip("/").lower() for o in allowed_origins)
        if self.serper_key is None:
            try:
                import ddgs  # noqa: F401
            except ImportError:
                raise WebError("live web search needs SERPER_API_KEY, or the `ddgs` package for keyless search "
                               "(pip install ddgs)") from None
        self._client: httpx.AsyncClient | None = None
        self.resolver = resolver
        self._pages: httpx.AsyncClient | None = None
        self.network: PinnedNetwork | None = None

    @property
    def search_provider(self) -> str:
        return "serper" if self.serper_key else "ddgs"

    @property
    def reader(self) -> str:
        return "jina" if self.jina_key else "direct+trafilatura"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "search": self.search_provider, "reader": self.reader,
                "serper_url": self.serper_url if self.serper_key else None,
                "jina_url": self.jina_url if self.jina_key else None}

    def page_client(self) -> httpx.AsyncClient:
        """The client for model-chosen URLs: connections pinned to checked addresses (`web/pinned.py`)."""
        if self._pages is None:
            self._pages, self.network = pinned_client(
                self.limits.timeout_s, {"User-Agent": USER_AGENT},
                self.resolver if self.resolve_dns else _no_lookup, self.allowed_origins)
        return self._pages

    def client(self) -> httpx.AsyncClient:
        """The client for the configured APIs (Serper, Jina): their base URLs are configuration."""
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.limits.timeout_s, follow_redirects=False,
                                             headers={"User-Agent": USER_AGENT})
        return self._client

    # ---- search APIs ---------------------------------------------------------------------
    async def _pace(self) -> None:
        if self.min_interval_s <= 0:
            return
        async with self._api_lock:
            wait = self._last_api + self.min_interval_s - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._last_api = time.monotonic()

    async def _serper(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        assert self.serper_key is not None
        headers = {"X-API-KEY": self.serper_key, "Content-Type": "application/json"}
        for attempt in range(4):
            await self._pace()
            try:
                resp = await self.client().post(f"{self.serper_url}{path}", json=body, headers=headers)
            except httpx.TimeoutException:
                raise WebCallError(f"the search API timed out after {self.limits.timeout_s:.0f} s") from None
            except httpx.HTTPError as exc:
                raise WebCallError(f"the search API could not be reached ({type(exc).__name__})") from None
            if resp.status_code in _RETRY_STATUS and attempt < 3:
                await asyncio.sleep(_retry_after(resp, attempt))  # the API asked us to slow down
                continue
            if resp.status_code in (401, 403):
                raise WebError(f"the Serper API refused the key (HTTP {resp.status_code}); check SERPER_API_KEY")
            if resp.status_code != 200:
                raise WebCallError(f"the search API answered HTTP {resp.status_code}")
            try:
                data = resp.json()
            except ValueError:
                raise WebCallError("the search API sent a reply that is not JSON") from None
            if not isinstance(data, dict):
                raise WebCallError("the search API sent an unexpected reply")
            return data
        raise WebCallError("the search API kept asking to slow down")

    async def _ddgs(self, kind: str, query: str, n: int) -> list[dict[str, Any]]:
        from ddgs import DDGS

        def run() -> list[dict[str, Any]]:
            with DDGS(timeout=int(self.limits.timeout_s)) as d:
                res = d.text(query, max_results=n) if kind == "text" else d.images(query, max_results=n)
                return list(res or [])

        try:
            return await asyncio.to_thread(run)
        except Exception as exc:  # ddgs raises its own exception types for no results and rate limits
            name = type(exc).__name__
            if "NoResults" in name or "no results" in str(exc).lower():
                return []
            raise WebCallError(f"keyless web search failed ({name}: {exc})") from None

    async def text_search(self, query: str, n: int) -> list[SearchHit]:
        if self.serper_key:
            data = await self._serper("/search", {"q": query, "num": n,
                                                  "extendParams": {"country": "en", "page": 1}})
            return [SearchHit(title=str(o.get("title", "")), link=str(o.get("link", "")),
                              snippet=o.get("snippet"), date=o.get("date"), source=o.get("source"))
                    for o in data.get("organic", []) if isinstance(o, dict)]
        rows = await self._ddgs("text", query, n)
        return [SearchHit(title=str(r.get("title", "")), link=str(r.get("href", "")), snippet=r.get("body"))
                for r in rows]

    async def image_search(self, query: str, n: int) -> list[ImageHit]:
        if self.serper_key:
            data = await self._serper("/images", {"q": query})
            return [ImageHit(title=str(o.get("title", "")), image_url=str(o.get("imageUrl", "")),
                             page_url=str(o.get("link", ""))) for o in data.get("images", []) if isinstance(o, dict)][:n]
        rows = await self._ddgs("images", query, n)
        return [ImageHit(title=str(r.get("title", "")), image_url=str(r.get("image", "")),
                         page_url=str(r.get("url", ""))) for r in rows][:n]

    async def reverse_image_search(self, image_url: str, n: int, image: bytes | None) -> list[ImageHit]:
        await check_live_url(image_url, resolve=False)
        if not self.serper_key:
            raise WebCallError("reverse image search is not available: it needs SERPER_API_KEY (the keyless "
                               "search has no reverse image search)")
        data = await self._serper("/lens", {"url": image_url})
        return [ImageHit(title=str(o.get("title", "")), image_url=str(o.get("imageUrl", "")),
                         page_url=str(o.get("link", ""))) for o in data.get("organic", []) if isinstance(o, dict)][:n]

    # ---- pages and bytes ---------------------------------------------------------------------
    async def fetch(self, url: str, max_bytes: int) -> Fetched:
        """GET with the policy checked on every hop and the body capped at `max_bytes`."""
        current = url
        for _ in range(self.limits.max_redirects + 1):
            await self._check(current)  # scheme and literal host; the addresses are checked at connect
            try:
                async with self.page_client().stream("GET", current) as resp:
                    if resp.is_redirect and "location" in resp.headers:
                        current = urljoin(current, resp.headers["location"])
                        continue
                    body = await read_capped(resp, url, max_bytes)
                    return Fetched(url=url, final_url=current, status=resp.status_code,
                                   content_type=resp.headers.get("content-type", ""), body=body)
            except httpx.TimeoutException:
                raise WebCallError(f"{url} timed out after {self.limits.timeout_s:.0f} s") from None
            except httpx.HTTPError as exc:
                raise WebCallError(f"{url} could not be fetched ({type(exc).__name__})") from None
        raise WebCallError(f"{url}: more than {self.limits.max_redirects} redirects")

    async def _check(self, url: str) -> None:
        """Scheme and literal host, before any request; a name's addresses are resolved and checked once,
        when the pinned client connects (so the connection uses exactly the checked addresses)."""
        p = urlsplit(url)
        if f"{p.scheme}://{p.netloc}".lower() in self.allowed_origins:
            return
        await check_live_url(url, resolve=False)

    async def _robots_ok(self, url: str) -> bool:
        p = urlsplit(url)
        origin = f"{p.scheme}://{p.netloc}"
        if origin not in self._robots:
            parser: urllib.robotparser.RobotFileParser | None = urllib.robotparser.RobotFileParser()
            try:
                got = await self.fetch(origin + "/robots.txt", 500_000)
                if got.status >= 500:
                    parser = None  # RFC 9309: a server error means "disallow all" for now
                elif got.ok:
                    assert parser is not None
                    parser.parse(got.body.decode("utf-8", "replace").splitlines())
                else:
                    assert parser is not None
                    parser.parse([])  # 4xx: no rules
            except UrlRefused:
                raise  # the site itself may not be fetched (its name does not resolve, a private address)
            except WebCallError:
                parser = None
            self._robots[origin] = parser
        rp = self._robots[origin]
        return rp is not None and rp.can_fetch("toolsight", url)

    async def fetch_page(self, url: str, max_bytes: int) -> Fetched:
        await self._check(url)
        if not await self._robots_ok(url):
            raise UrlRefused(f"{url} is disallowed by the site's robots.txt")
        return await self.fetch(url, max_bytes)

    async def read_page(self, url: str) -> PageText:
        if self.jina_key:
            await check_live_url(url, resolve=False)
        else:
            await self._check(url)
        if self.jina_key:
            headers = {"Authorization": f"Bearer {self.jina_key}", "X-With-Generated-Alt": "true"}
            for attempt in range(3):
                try:
                    resp = await self.client().get(f"{self.jina_url}/{url}", headers=headers)
                except httpx.HTTPError as exc:
                    if attempt == 2:
                        raise WebCallError(f"the page reader could not read {url} ({type(exc).__name__})") from None
                    continue
                if resp.status_code in _RETRY_STATUS and attempt < 2:
                    await asyncio.sleep(_retry_after(resp, attempt))
                    continue
                if resp.status_code != 200:
                    raise WebCallError(f"the page reader could not read {url} (HTTP {resp.status_code})")
                text = resp.text[: self.limits.max_page_chars * 2]
                return PageText(url=url, title="", text=text, reader="jina")
            raise WebCallError(f"the page reader could not read {url}")
        if not await self._robots_ok(url):
            raise UrlRefused(f"{url} is disallowed by the site's robots.txt")
        got = await self.fetch(url, self.limits.max_page_bytes)
        if not got.ok:
            raise WebCallError(f"{url} answered HTTP {got.status}")
        # off the event loop: trafilatura on a page of megabytes takes seconds
        return await asyncio.to_thread(extract_page, got.body, got.final_url, got.content_type, "direct+trafilatura")

    async def aclose(self) -> None:
        for c in (self._client, self._pages):
            if c is not None:
                await c.aclose()
        self._client = self._pages = None


async def _no_lookup(host: str) -> list[str]:
    """`resolve_dns=False`: names are not looked up at all, so no connection to a name is made."""
    raise UrlRefused(f"{host!r}: name lookups are switched off for this backend (resolve_dns=False)")
