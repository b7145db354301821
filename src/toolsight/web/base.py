"""The backend interface: what a source of search results and pages must provide.

Backends are *live* (`live.LiveBackend`: Serper or ddgs, direct fetch + trafilatura or Jina) and
*corpus* (`offline.CorpusBackend`: a local folder served on 127.0.0.1). Replay is not a backend:
the session answers from the cassette and never calls one. Tools never talk to a backend
directly; they go through `WebSession`, which adds the budget, the URL policy for hosted images,
recording and replay.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import httpx

from toolsight.web.types import Fetched, ImageHit, PageText, SearchHit, WebCallError


async def read_capped(resp: httpx.Response, url: str, max_bytes: int) -> bytes:
    """The body of a streamed response, refused (WebCallError) once it is over `max_bytes`: by its
    declared length before reading, else as it arrives — a huge body is never read whole."""
    declared = resp.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise WebCallError(f"{url} is {int(declared):,} bytes, over the {max_bytes:,}-byte cap")
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise WebCallError(f"{url} is over the {max_bytes:,}-byte cap")
        chunks.append(chunk)
    return b"".join(chunks)


class Backend(ABC):
    name: str = ""
    #: True when reverse image search needs the image's bytes (offline pHash) rather than its URL
    needs_image_bytes: bool = False

    @abstractmethod
    async def text_search(self, query: str, n: int) -> list[SearchHit]: ...

    @abstractmethod
    async def image_search(self, query: str, n: int) -> list[ImageHit]: ...

    @abstractmethod
    async def reverse_image_search(self, image_url: str, n: int, image: bytes | None) -> list[ImageHit]: ...

    @abstractmethod
    async def fetch(self, url: str, max_bytes: int) -> Fetched: ...

    @abstractmethod
    async def read_page(self, url: str) -> PageText: ...

    async def fetch_page(self, url: str, max_bytes: int) -> Fetched:
        """A page's raw bytes, for a tool that reads pages itself: `fetch` under the backend's page
        rules (the live backend asks robots.txt first, as its reader does)."""
        return await self.fetch(url, max_bytes)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release clients and servers."""
