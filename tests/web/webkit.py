"""Helpers for the web tests: a scripted Serper/Jina/page server on 127.0.0.1, a tiny corpus, a session."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from aiohttp import web

from toolsight.tools.base import ArtifactStore, Toolbox, ToolResult
from toolsight.tools.web_tools import browse_tools
from toolsight.web import WebSession, use_session


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any = None


@dataclass
class FakeWeb:
    """A Serper-compatible API (/search, /images, /lens), a Jina-compatible reader (/r/<url>) and pages.

    `organic`, `images`, `lens` are the JSON lists it answers with; `pages` maps a path to
    (status, content type, body, extra headers). Every request is kept in `seen`.
    """

    organic: list[dict[str, Any]] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)
    lens: list[dict[str, Any]] = field(default_factory=list)
    pages: dict[str, tuple[int, str, bytes, dict[str, str]]] = field(default_factory=dict)
    jina_text: Callable[[str], str] = lambda url: f"Title: T\n\nURL Source: {url}\n\nMarkdown Content:\nbody of {url}"
    throttle_first: int = 0
    seen: list[Seen] = field(default_factory=list)
    port: int = 0

    def __post_init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._runner: web.AppRunner | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _api(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.seen.append(Seen("POST", request.path, dict(request.headers), body))
        if self.throttle_first > 0:
            self.throttle_first -= 1
            return web.Response(status=429, headers={"Retry-After": "0"}, text="slow down")
        if request.headers.get("X-API-KEY") != "test-key":
            return web.Response(status=403, text="bad key")
        key = request.path.strip("/")
        data = {"search": {"organic": self.organic}, "images": {"images": self.images},
                "lens": {"organic": self.lens}}[key]
        return web.json_response(data)

    async def _jina(self, request: web.Request) -> web.Response:
        self.seen.append(Seen("GET", request.path_qs, dict(request.headers)))
        target = request.path_qs.removeprefix("/r/")
        return web.Response(text=self.jina_text(target))

    async def _page(self, request: web.Request) -> web.Response:
        self.seen.append(Seen("GET", request.path, dict(request.headers)))
        got = self.pages.get(request.path)
        if got is None:
            return web.Response(status=404, text="no page")
        status, ctype, body, headers = got
        return web.Response(status=status, body=body, headers={"Content-Type": ctype, **headers})

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        app = web.Application()
        for p in ("/search", "/images", "/lens"):
            app.router.add_post(p, self._api)
        app.router.add_get("/r/{tail:.*}", self._jina)
        app.router.add_get("/{tail:.*}", self._page)

        async def start() -> None:
            self._runner = web.AppRunner(app, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

        loop.run_until_complete(start())
        self._ready.set()
        loop.run_forever()
        assert self._runner is not None
        loop.run_until_complete(self._runner.cleanup())
        loop.close()

    def __enter__(self) -> FakeWeb:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._thread is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def env(self) -> dict[str, str]:
        return {"SERPER_API_KEY": "test-key", "SERPER_BASE_URL": self.base, "JINA_API_KEY": "jina-key",
                "JINA_BASE_URL": self.base + "/r"}


def picture(seed: int, w: int = 200, h: int = 160) -> np.ndarray:
    """A distinctive random picture (shapes on a gradient), BGR."""
    rng = np.random.default_rng(seed)
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = rng.integers(0, 255, 3)
    for _ in range(8):
        c = tuple(int(x) for x in rng.integers(0, 255, 3))
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        if rng.integers(0, 2):
            cv2.circle(img, (x, y), int(rng.integers(10, 50)), c, -1)
        else:
            cv2.rectangle(img, (x, y), (x + int(rng.integers(15, 80)), y + int(rng.integers(15, 60))), c, -1)
    return img


def png(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", img)
    assert ok
    return buf.tobytes()


PAGE = """<!doctype html><html><head><title>{title}</title></head><body>
<nav><a href="/">Home</a></nav><article><h1>{title}</h1>
<img src="{img}" alt="{alt}">
<p>{text}</p>
<ul><li>Height: {height} m</li><li>Keeper: <a href="https://people.example.test/{keeper}">{keeper}</a></li></ul>
<p>The entry was written from the harbour records and the notes of the people who kept the light.</p>
<p>Visitors may climb the stairs in summer; the lamp room is closed to the public all year round.</p>
</article></body></html>"""


def write_corpus(root: Path, n: int = 6) -> list[dict[str, Any]]:
    """A corpus of `n` lighthouse pages, each with its own picture; returns the entries."""
    (root / "pages").mkdir(parents=True)
    (root / "images").mkdir(parents=True)
    names = ["North Cape", "Gull Rock", "Saltmere Point", "Heron Isle", "Brannock Head", "Vell Harbor",
             "Kestrel Bay", "Amber Shoal"][:n]
    entries = []
    pages, images = [], []
    for i, name in enumerate(names):
        slug = name.lower().replace(" ", "-")
        url = f"https://lights.example.test/{slug}"
        img_url = f"https://img.lights.example.test/{slug}.png"
        (root / "images" / f"{slug}.png").write_bytes(png(picture(100 + i)))
        html = PAGE.format(title=f"{name} Lighthouse", img=img_url, alt=f"{name} lighthouse at dusk with a red lamp",
                           text=f"{name} Lighthouse stands on the east shore. It was lit in {1850 + 7 * i}.",
                           height=20 + i, keeper=f"Keeper{i}")
        (root / "pages" / f"{slug}.html").write_text(html, encoding="utf-8")
        pages.append({"url": url, "file": f"pages/{slug}.html", "date": f"2020-01-{i + 1:02d}"})
        images.append({"url": img_url, "file": f"images/{slug}.png", "page": url})
        entries.append({"name": name, "url": url, "image_url": img_url, "image": root / "images" / f"{slug}.png",
                        "year": 1850 + 7 * i})
    (root / "manifest.json").write_text(json.dumps({"format": "toolsight-corpus/1", "name": "lights",
                                                    "pages": pages, "images": images}), encoding="utf-8")
    return entries


def toolbox(tmp: Path, task_id: str = "t") -> Toolbox:
    return Toolbox(browse_tools(), ArtifactStore(tmp / task_id), task_id)


async def call(box: Toolbox, name: str, **args: Any) -> ToolResult:
    return await box.call(name, json.dumps(args))


@contextlib.asynccontextmanager
async def opened(session: WebSession) -> AsyncIterator[WebSession]:
    """Start `session`, make it current, close it afterwards."""
    async with session:
        with use_session(session):
            yield session
