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

_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


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
    m = _TITLE.search(body)
    title = " ".join(htmllib.unescape(m.group(1).decode("utf-8", "replace")).split()) if m else ""
    if not main.strip():
        import lxml.html

        try:
            main = " ".join(lxml.html.fromstring(text).text_content().split())
        except (ValueError, lxml.etree.ParserError):
            main = ""
    return PageText(url=url, title=title, text=jina_layout(title, url, main), reader=reader)
