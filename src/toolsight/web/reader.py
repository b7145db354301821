"""Page bytes → readable text: trafilatura's main-text extraction, shaped like Jina Reader output.

The reference `visit` tool hands Jina Reader's output (`Title: …`, `URL Source: …`,
`Markdown Content:` and the page as markdown) to its summariser. The direct reader produces the
same layout from trafilatura's markdown (links and tables kept), so a summariser sees the same
shape whichever reader ran.
"""

from __future__ import annotations

import html as htmllib
import re

from toolsight.web.types import PageText, WebCallError


def page_title(body: bytes) -> bytes | None:
    """What `re.search(rb"<title[^>]*>(.*?)</title>", body, re.I | re.S)` finds, in linear time: the
    regex tries every `<title` and scans to the end from each (quadratic on a page of 700,000 of them).
    The leftmost `<title` with a `>` and then a `</title>` after it wins, and if the leftmost has none,
    no later one has either."""
    low = body.lower()
    start = low.find(b"<title")
    if start < 0:
        return None
    gt = low.find(b">", start)
    if gt < 0:
        return None
    end = low.find(b"</title>", gt + 1)
    return body[gt + 1:end] if end >= 0 else None


def _charset(content_type: str) -> str:
    m = re.search(r"charset=([\w-]+)", content_type or "", re.IGNORECASE)
    return m.group(1) if m else "utf-8"


def jina_layout(title: str, url: str, markdown: str) -> str:
    return f"Title: {title}\n\nURL Source: {url}\n\nMarkdown Content:\n{markdown}"


def extract_page(body: bytes, url: str, content_type: str = "text/html", reader: str = "trafilatura") -> PageText:
    """The readable text of a fetched page; WebCallError for content that is not a page."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    if ctype.startswith("image/") or ctype in ("application/pdf", "application/zip", "application/octet-stream"):
        raise WebCallError(f"{url} is not a web page (content type {ctype}); it cannot be read as text")
    text = body.decode(_charset(content_type), errors="replace")
    if ctype in ("text/plain", "text/markdown", "application/json"):
        return PageText(url=url, title="", text=jina_layout("", url, text), reader=reader)
    import trafilatura

    main = trafilatura.extract(text, url=url, output_format="markdown", include_links=True, include_tables=True,
                               include_images=False, include_comments=False, favor_recall=True) or ""
    raw_title = page_title(body)
    title = " ".join(htmllib.unescape(raw_title.decode("utf-8", "replace")).split()) if raw_title is not None else ""
    if not main.strip():
        import lxml.html

        try:
            main = " ".join(lxml.html.fromstring(text).text_content().split())
        except (ValueError, lxml.etree.ParserError):
            main = ""
    return PageText(url=url, title=title, text=jina_layout(title, url, main), reader=reader)
