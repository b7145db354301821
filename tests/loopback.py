"""Serve an aiohttp application on 127.0.0.1 from a thread of its own, for tests that talk real HTTP.

Test support, not part of the package: tests import it as `loopback` (`tests/` is on their path). The
server gets its own event loop so that synchronous test code (the CLI, `asyncio.run` in the code under
test) can call it; the port is a free one the OS picks.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from aiohttp import web


class LoopbackServer:
    """`start()` serves the application `make_app()` builds (in the server's thread) and returns its port."""

    def __init__(self, make_app: Callable[[], web.Application]) -> None:
        self._make_app = make_app
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self.port = 0

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        runner = web.AppRunner(self._make_app(), access_log=None)

        async def start() -> None:
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

        loop.run_until_complete(start())
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    def start(self) -> int:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the loopback server did not start within 10 s")
        return self.port

    def stop(self) -> None:
        assert self._loop is not None and self._thread is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
