"""toolsight's own local web server: the offline corpus's files and the image host.

It listens on 127.0.0.1 (or the address `TOOLSIGHT_IMAGE_HOST` names, so a model server on another
machine can fetch hosted images) and runs an aiohttp app in a background thread with its own event loop, so
it keeps serving while the run's loop is busy. Routes: `/c/<file>` — a file of the offline corpus
folder (paths are checked to stay inside it); `/h/<name>` — an image the run hosts (crops, task
inputs), kept in memory. Nothing here decides what a model may fetch: the web session maps the
URLs a model sees onto these routes.
"""

from __future__ import annotations

import asyncio
import mimetypes
import threading
from pathlib import Path

from aiohttp import web


def _reachable(host: str) -> str:
    return "127.0.0.1" if host in ("", "0.0.0.0", "::", "localhost") else host


class LocalServer:
    """Start with `start()` (or as a context manager); `base_url` is `http://127.0.0.1:PORT`.

    `bind` (`HOST[:PORT]`, default 127.0.0.1 on an ephemeral port) is where it listens; `public_url`
    is how a model server on another machine reaches it (default `http://HOST:PORT` of the bind address).
    """

    def __init__(self, corpus_root: Path | None = None, bind: str | None = None, public_url: str | None = None) -> None:
        self.corpus_root = corpus_root.resolve() if corpus_root is not None else None
        self.hosted: dict[str, tuple[bytes, str]] = {}
        host, _, port = (bind or "127.0.0.1").rpartition(":") if ":" in (bind or "") else (bind or "127.0.0.1", "", "")
        self.bind_host = host or "127.0.0.1"
        self.bind_port = int(port) if port.isdigit() else 0
        self._public_url = public_url.rstrip("/") if public_url else None
        self.port = 0
        self.requests = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def base_url(self) -> str:
        """Where toolsight itself reaches the server (loopback unless it listens on one address only)."""
        return f"http://{_reachable(self.bind_host)}:{self.port}"

    @property
    def public_url(self) -> str:
        """The base URL a model server fetches hosted images from (`/h/<name>`)."""
        return self._public_url or self.base_url

    def host(self, name: str, data: bytes, content_type: str | None = None) -> str:
        """Serve `data` at `/h/<name>`; returns the local URL."""
        ctype = content_type or mimetypes.guess_type(name)[0] or "application/octet-stream"
        self.hosted[name] = (data, ctype)
        return f"{self.base_url}/h/{name}"

    async def _hosted(self, request: web.Request) -> web.Response:
        self.requests += 1
        item = self.hosted.get(request.match_info["name"])
        if item is None:
            return web.Response(status=404, text="not hosted")
        return web.Response(body=item[0], content_type=item[1])

    async def _corpus(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        if self.corpus_root is None:
            return web.Response(status=404, text="no corpus")
        path = (self.corpus_root / request.match_info["path"]).resolve()
        if self.corpus_root not in path.parents or not path.is_file():
            return web.Response(status=404, text="not in the corpus")
        ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if ctype == "text/html":
            ctype = "text/html; charset=utf-8"
        # streamed from the file with its length declared (never read whole: a corpus file may be GBs);
        # the client stops at its cap
        return web.FileResponse(path, headers={"Content-Type": ctype})

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        app = web.Application()
        app.router.add_get("/h/{name}", self._hosted)
        app.router.add_get("/c/{path:.+}", self._corpus)

        async def start() -> None:
            self._runner = web.AppRunner(app, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.bind_host, self.bind_port)
            await site.start()
            server = site._server
            assert server is not None
            self.port = int(server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]

        try:
            loop.run_until_complete(start())
        except BaseException as exc:  # reported to the starting thread
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        if self._runner is not None:
            loop.run_until_complete(self._runner.cleanup())
        loop.close()

    def start(self) -> LocalServer:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._serve, name="toolsight-web-local", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise RuntimeError(f"could not start the local web server: {self._error}")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
