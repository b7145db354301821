"""The offline backend: a corpus folder served by toolsight's local server, searched by its index.

Text search is FTS5/BM25 over the pages, image search FTS5 over captions, alt text and titles,
reverse image search a pHash lookup with a distance threshold. Pages and images are fetched over
real HTTP from the local server on 127.0.0.1 — the URL the model sees (the corpus's own URL) is
looked up in the index and mapped to `/c/<file>`; a URL the corpus does not have is a 404.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from toolsight.web import phash
from toolsight.web.base import Backend, read_capped
from toolsight.web.corpus import CorpusIndex
from toolsight.web.policy import Limits, check_syntax
from toolsight.web.reader import extract_page
from toolsight.web.server import LocalServer
from toolsight.web.types import Fetched, ImageHit, PageText, SearchHit, WebCallError


class CorpusBackend(Backend):
    name = "corpus"
    needs_image_bytes = True

    def __init__(self, root: Path, server: LocalServer, limits: Limits | None = None,
                 threshold: int = phash.DEFAULT_THRESHOLD, index_cache: Path | None = None) -> None:
        self.root = root
        self.server = server
        self.limits = limits or Limits()
        self.threshold = threshold
        self.index = CorpusIndex.open(root, index_cache)
        self._client: httpx.AsyncClient | None = None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "corpus": str(self.root.resolve()), "index": str(self.index.path),
                "pages": self.index.n_pages, "images": self.index.n_images, "phash_threshold": self.threshold,
                "server": self.server.base_url}

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.limits.timeout_s, trust_env=False)
        return self._client

    async def text_search(self, query: str, n: int) -> list[SearchHit]:
        return self.index.text_search(query, n)

    async def image_search(self, query: str, n: int) -> list[ImageHit]:
        return self.index.image_search(query, n)

    async def reverse_image_search(self, image_url: str, n: int, image: bytes | None) -> list[ImageHit]:
        if image is None:
            raise WebCallError(f"could not load the image at {image_url}")
        try:
            return self.index.reverse_image_search(image, n, self.threshold)
        except (OSError, ValueError) as exc:
            raise WebCallError(f"{image_url} is not a readable image ({exc})") from None

    async def fetch(self, url: str, max_bytes: int) -> Fetched:
        check_syntax(url)
        found = self.index.lookup(url)
        if found is None:
            return Fetched(url=url, final_url=url, status=404, content_type="text/plain",
                           body=b"not found in the offline corpus")
        local = f"{self.server.base_url}/c/{found[1]}"
        try:  # streamed: a file over the cap is stopped at the cap, never read whole
            async with self.client().stream("GET", local) as resp:
                body = await read_capped(resp, url, max_bytes)
                return Fetched(url=url, final_url=url, status=resp.status_code,
                               content_type=resp.headers.get("content-type", ""), body=body)
        except httpx.HTTPError as exc:
            raise WebCallError(f"{url} could not be fetched from the offline corpus ({type(exc).__name__})") from None

    async def read_page(self, url: str) -> PageText:
        got = await self.fetch(url, self.limits.max_page_bytes)
        if not got.ok:
            raise WebCallError(f"{url} answered HTTP {got.status}")
        return await asyncio.to_thread(extract_page, got.body, url, got.content_type, "corpus+trafilatura")

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        self.index.close()
