"""The web layer's data: search hits, fetched bytes, page text, and its errors.

These are what every backend returns (live, offline corpus, replay) and what the cassette
stores, so they are pydantic models with plain JSON fields.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from toolsight.errors import TaskAbort, ToolsightError

Op = Literal["text_search", "image_search", "reverse_image_search", "fetch", "read_page", "summarise", "custom"]


class WebError(ToolsightError):
    """A user-fixable web set-up problem (bad --web value, missing corpus or cassette, bad key)."""


class WebCallError(Exception):
    """One web call failed (HTTP error, refused URL, too large, budget used up).

    The message is meant for the model: a tool shows it as the result of the call, and the task
    goes on. Replays reproduce a recorded failure with the same message.
    """


class UrlRefused(WebCallError):
    """The URL policy refused a URL (scheme, private or loopback address, robots.txt)."""


class BudgetExceeded(WebCallError):
    """The run's web request budget is used up."""


class NotPublic(WebCallError):
    """An image only toolsight serves was given to a live service that must fetch it (no upload backend)."""


class ReplayMiss(TaskAbort):
    """`--web replay` met a call the cassette does not hold: the task ends, nothing goes live."""


class SearchHit(BaseModel):
    """One web search result (Serper `organic` item / ddgs text hit / corpus page)."""

    title: str
    link: str
    snippet: str | None = None
    date: str | None = None
    source: str | None = None


class ImageHit(BaseModel):
    """One image search or reverse image search result."""

    title: str = ""
    image_url: str = ""
    page_url: str = ""
    distance: int | None = Field(default=None, description="perceptual-hash distance (offline reverse search)")


class Fetched(BaseModel):
    """The bytes behind a URL (status, final URL after redirects, content type)."""

    url: str
    final_url: str
    status: int
    content_type: str = ""
    body: bytes = b""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class PageText(BaseModel):
    """A page's readable content: what the reader (Jina, or direct fetch + trafilatura) returned."""

    url: str
    title: str = ""
    text: str = Field(description="the reader's full output (Jina-style header + markdown main text)")
    reader: str = ""
