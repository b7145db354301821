"""The offline corpus: a folder of HTML pages and images with a manifest, and its search index.

Folder layout (`docs/web.md`):

    corpus/
      manifest.json   {"format": "toolsight-corpus/1", "name": "...",
                       "pages":  [{"url", "file", "title"?, "date"?, "text"?}],
                       "images": [{"url", "file", "page"?, "title"?, "caption"?}]}
      pages/…  images/…

Each page and image has a public-looking URL (any http(s) URL; generated corpora use `.test`
domains) and a file. The index is one SQLite file: FTS5 tables for page text (BM25, title
weighted) and for image captions + alt text + titles, and one pHash per image. It is built on
first use into the cache (`$TOOLSIGHT_CACHE/web-index/`, keyed by the manifest and the files'
sizes and times) and reused after.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import tempfile
from pathlib import Path
from urllib.parse import urljoin, urlsplit, urlunsplit

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from toolsight import imaging
from toolsight.web import phash
from toolsight.web.jsonfile import read_model
from toolsight.web.types import ImageHit, SearchHit, WebError

MANIFEST = "manifest.json"
FORMAT = "toolsight-corpus/1"
INDEX_VERSION = 3  # bump when hashing, text extraction or the schema changes: cached indexes are rebuilt


class CorpusPage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str
    file: str
    title: str | None = None
    date: str | None = None
    text: str | None = Field(default=None, description="index this text instead of the page's own")


class CorpusImage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str
    file: str
    page: str | None = Field(default=None, description="URL of the page that shows the image")
    title: str | None = None
    caption: str | None = None


class CorpusManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    name: str = "corpus"
    pages: list[CorpusPage] = Field(default_factory=list)
    images: list[CorpusImage] = Field(default_factory=list)


def norm_url(url: str) -> str:
    """A lookup form of a URL: no fragment, lower-case scheme and host, no trailing slash."""
    p = urlsplit(url.strip())
    path = p.path.rstrip("/") or ""
    return urlunsplit((p.scheme.lower(), p.netloc.lower(), path, p.query, ""))


def cache_dir() -> Path:
    env = os.environ.get("TOOLSIGHT_CACHE")
    return (Path(env) if env else Path.home() / ".cache" / "toolsight") / "web-index"


def read_manifest(root: Path) -> CorpusManifest:
    path = root / MANIFEST
    if not path.is_file():
        raise WebError(f"offline corpus {root}: no {MANIFEST}; a corpus folder holds {MANIFEST} plus its pages "
                       "and images (see docs/web.md), e.g. one written by `toolsight generate browse`")
    man = read_model(path, CorpusManifest)
    if man.format != FORMAT:
        raise WebError(f"{path}: format {man.format!r} is not {FORMAT!r}")
    root_r = root.resolve()
    files = [("pages", i, p.file) for i, p in enumerate(man.pages)] + [
        ("images", i, im.file) for i, im in enumerate(man.images)]
    for kind, i, file in files:
        f = (root / file).resolve()
        if root_r not in f.parents or not f.is_file():
            raise WebError(f"{path}: {kind}[{i}].file {file!r} is not a file inside {root}")
    return man


def corpus_fingerprint(root: Path) -> str:
    """Hash of the manifest and every file's size and mtime (what the index depends on)."""
    h = hashlib.sha256((root / MANIFEST).read_bytes())
    man = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    for kind in ("pages", "images"):
        for it in man.get(kind, []):
            st = (root / it["file"]).stat()
            h.update(f"{it['file']}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    h.update(f"v{INDEX_VERSION}".encode())
    return h.hexdigest()[:20]


_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE pages (id INTEGER PRIMARY KEY, url TEXT, nurl TEXT, file TEXT, title TEXT, date TEXT);
CREATE TABLE images (id INTEGER PRIMARY KEY, url TEXT, nurl TEXT, file TEXT, page TEXT, title TEXT,
                     phash INTEGER);
CREATE VIRTUAL TABLE pages_fts USING fts5(title, body, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE images_fts USING fts5(title, caption, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE INDEX pages_nurl ON pages(nurl);
CREATE INDEX images_nurl ON images(nurl);
"""


def _signed(h: int) -> int:
    return h - (1 << 64) if h >= (1 << 63) else h


def _page_text(html: bytes, base_url: str) -> tuple[str, str, dict[str, list[str]]]:
    """(title, visible text, {image URL: alt texts}) of an HTML page — fast, for indexing only."""
    import lxml.html

    try:
        doc = lxml.html.fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return "", "", {}
    for bad in doc.xpath("//script|//style|//noscript"):
        bad.drop_tree()
    title = " ".join((doc.findtext(".//title") or "").split())
    alts: dict[str, list[str]] = {}
    for img in doc.iter("img"):
        src, alt = img.get("src"), (img.get("alt") or "").strip()
        if src and alt:
            alts.setdefault(norm_url(urljoin(base_url, src)), []).append(alt)
    for el in doc.iter():  # a block ends a word: "<h1>Results</h1><p>Home</p>" reads "Results Home"
        if isinstance(el.tag, str) and el.tag.lower() in _BLOCKS:
            el.text = " " + (el.text or "")
            el.tail = " " + (el.tail or "")
    body = " ".join(doc.text_content().split())
    return title, body, alts


#: elements that start a new block (or line) when a browser renders them; inline ones (a, b, span, …)
#: join their text to the words around them
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "body", "br", "caption", "dd", "details", "dialog", "div", "dl",
    "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hgroup", "hr", "html", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td",
    "tfoot", "th", "thead", "title", "tr", "ul",
})


def build_index(root: Path, dest: Path) -> Path:
    """Index the corpus at `root` into the SQLite file `dest` (written atomically)."""
    man = read_manifest(root)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".index-", suffix=".sqlite", dir=dest.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        db = sqlite3.connect(tmp)
        db.executescript(_SCHEMA)
        alts: dict[str, list[str]] = {}
        page_titles: dict[str, str] = {}
        for p in man.pages:
            raw = (root / p.file).read_bytes()
            title, body, page_alts = _page_text(raw, p.url)
            for k, v in page_alts.items():
                alts.setdefault(k, []).extend(v)
            title = p.title or title
            page_titles[norm_url(p.url)] = title
            cur = db.execute("INSERT INTO pages (url, nurl, file, title, date) VALUES (?, ?, ?, ?, ?)",
                             (p.url, norm_url(p.url), p.file, title, p.date))
            db.execute("INSERT INTO pages_fts (rowid, title, body) VALUES (?, ?, ?)",
                       (cur.lastrowid, title, p.text if p.text is not None else body))
        for im in man.images:
            nurl = norm_url(im.url)
            try:  # the guarded decoder: a corpus image that is a bomb is one clear error, never decoded
                h = phash.image_hash(imaging.read_capped(root / im.file))
            except imaging.ImageRejected as exc:
                raise WebError(f"offline corpus {root}: images entry {im.file!r}: {exc}") from None
            title = im.title or (page_titles.get(norm_url(im.page)) if im.page else None) or ""
            caption = " ".join([im.caption or "", *alts.get(nurl, [])]).strip()
            cur = db.execute("INSERT INTO images (url, nurl, file, page, title, phash) VALUES (?, ?, ?, ?, ?, ?)",
                             (im.url, nurl, im.file, im.page or "", title, _signed(h)))
            db.execute("INSERT INTO images_fts (rowid, title, caption) VALUES (?, ?, ?)",
                       (cur.lastrowid, title, caption))
        db.execute("INSERT INTO meta VALUES ('version', ?), ('name', ?)", (str(INDEX_VERSION), man.name))
        db.commit()
        db.close()
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def ensure_index(root: Path, cache: Path | None = None) -> Path:
    """The index of the corpus at `root`, built if missing or stale."""
    read_manifest(root)  # clear errors before anything else
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", root.resolve().name)[:40]
    dest = (cache or cache_dir()) / f"{name}-{corpus_fingerprint(root)}.sqlite"
    if dest.is_file():
        return dest
    return build_index(root, dest)


_TOKEN = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str) -> str | None:
    """A safe FTS5 query: the text's words, each quoted, joined by OR (BM25 ranks the matches)."""
    words = list(dict.fromkeys(w.lower() for w in _TOKEN.findall(text)))
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words[:32])


class CorpusIndex:
    """Searches over one corpus index file (used from the event-loop thread; each call takes milliseconds)."""

    def __init__(self, root: Path, index: Path) -> None:
        self.root = root
        self.path = index
        self._db = sqlite3.connect(f"file:{index}?mode=ro", uri=True, check_same_thread=False)
        rows = self._db.execute("SELECT id, phash FROM images ORDER BY id").fetchall()
        self._image_ids = np.array([r[0] for r in rows], dtype=np.int64)
        self._hashes = np.array([r[1] for r in rows], dtype=np.int64).view(np.uint64)
        self.n_pages = int(self._db.execute("SELECT COUNT(*) FROM pages").fetchone()[0])
        self.n_images = len(rows)

    @classmethod
    def open(cls, root: Path, cache: Path | None = None) -> CorpusIndex:
        return cls(root, ensure_index(root, cache))

    def text_search(self, query: str, n: int = 5) -> list[SearchHit]:
        q = fts_query(query)
        if q is None:
            return []
        rows = self._db.execute(
            "SELECT p.url, p.title, p.date, snippet(pages_fts, 1, '', '', '...', 32) FROM pages_fts "
            "JOIN pages p ON p.id = pages_fts.rowid WHERE pages_fts MATCH ? "
            "ORDER BY bm25(pages_fts, 4.0, 1.0), p.id LIMIT ?", (q, n)).fetchall()
        return [SearchHit(title=r[1] or r[0], link=r[0], date=r[2] or None, snippet=r[3] or None) for r in rows]

    def image_search(self, query: str, n: int = 3) -> list[ImageHit]:
        q = fts_query(query)
        if q is None:
            return []
        rows = self._db.execute(
            "SELECT i.url, i.page, i.title FROM images_fts JOIN images i ON i.id = images_fts.rowid "
            "WHERE images_fts MATCH ? ORDER BY bm25(images_fts, 1.0, 2.0), i.id LIMIT ?", (q, n)).fetchall()
        return [ImageHit(title=r[2] or "", image_url=r[0], page_url=r[1] or "") for r in rows]

    def reverse_image_search(self, data: bytes, n: int = 3,
                             threshold: int = phash.DEFAULT_THRESHOLD) -> list[ImageHit]:
        if not self.n_images:
            return []
        d = phash.distances(self._hashes, phash.query_hashes(data))
        close = np.flatnonzero(d <= threshold)
        if close.size == 0:
            return []
        order = close[np.lexsort((self._image_ids[close], d[close]))][:n]
        out: list[ImageHit] = []
        for i in order:
            r = self._db.execute("SELECT url, page, title FROM images WHERE id = ?",
                                 (int(self._image_ids[i]),)).fetchone()
            out.append(ImageHit(title=r[2] or "", image_url=r[0], page_url=r[1] or "", distance=int(d[i])))
        return out

    def lookup(self, url: str) -> tuple[str, str] | None:
        """(kind, file) of a page or image URL of the corpus; None when the corpus has no such URL."""
        n = norm_url(url)
        for kind, table in (("page", "pages"), ("image", "images")):
            r = self._db.execute(f"SELECT file FROM {table} WHERE nurl = ? ORDER BY id LIMIT 1", (n,)).fetchone()
            if r is not None:
                return kind, str(r[0])
        return None

    def close(self) -> None:
        self._db.close()
