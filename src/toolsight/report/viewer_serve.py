"""Serving a viewer site on 127.0.0.1, with live rebuilds while a run is still writing records.

`make_site_server` binds the port (a taken port is one clear `ViewerError`, never an OSError
traceback). `RecordsWatcher` polls the runs' `records.jsonl` (size and mtime) from a background
thread and calls `rebuild()` when one changed; the site's `live.json` then changes and the open
pages, which poll it when served over HTTP, reload themselves (keeping their filters).
"""

from __future__ import annotations

import errno
import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsight.errors import ToolsightError
from toolsight.log.files import RECORDS

if TYPE_CHECKING:  # http.server is imported when a site is served: building one (`toolsight run`'s end) never pays for it
    import http.server

DEFAULT_PORT = 8780  # not 8765, which the docs give the scripted model server
LIVE = "live.json"


class ViewerError(ToolsightError):
    """A viewer that cannot be built or served (a taken port, a folder that is not a run)."""


#: a served action: the query's parameters -> the site path to redirect to (a ViewerError: 400 with its text)
Action = Callable[[dict[str, list[str]]], str]


def make_site_server(root: Path, port: int, index: str = "index.html",
                     actions: dict[str, Action] | None = None) -> http.server.ThreadingHTTPServer:
    """A quiet static-file server for `root` on 127.0.0.1:`port` (0 = any free port): `/` redirects to
    `index` (the site's page), and no folder is ever listed (a run's files are not a web page).
    `actions` maps a path (`/compare`) to work done on request, e.g. building a comparison site."""
    import http.server

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def send_head(self) -> Any:
            from urllib.parse import parse_qs, urlsplit

            parts = urlsplit(self.path)
            if parts.path in ("", "/") and index not in ("", "index.html"):
                return self._redirect("/" + index)
            action = (actions or {}).get(parts.path)
            if action is not None:
                try:
                    return self._redirect("/" + action(parse_qs(parts.query)))
                except ViewerError as exc:
                    self.send_error(400, str(exc))
                    return None
            return super().send_head()

        def _redirect(self, where: str) -> None:
            self.send_response(302)
            self.send_header("Location", where)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def list_directory(self, path: str | Any) -> Any:
            self.send_error(404, "no listing here: open the viewer's index page")
            return None

        def end_headers(self) -> None:
            if self.path.split("?")[0].endswith((".html", ".json")):
                self.send_header("Cache-Control", "no-store")  # live pages must see new builds
            super().end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ViewerError(f"port {port} on 127.0.0.1 is already in use; choose another with --port N "
                              "(--port 0 picks a free one)") from None
        if exc.errno == errno.EACCES:
            raise ViewerError(f"port {port} needs privileges; choose a port above 1023 with --port N") from None
        raise ViewerError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from None


def write_live(site: Path, run_dirs: Sequence[Path], n_records: int, finished: bool) -> None:
    """`live.json`: what the open pages poll; `version` changes whenever the site was rebuilt."""
    state = {"version": f"{time.time():.3f}", "records": n_records, "finished": finished,
             "sources": [_stamp(d) for d in run_dirs]}
    tmp = site / (LIVE + ".tmp")
    tmp.write_text(json.dumps(state), encoding="utf-8")
    tmp.replace(site / LIVE)


def _stamp(run_dir: Path) -> list[float]:
    p = run_dir / RECORDS
    try:
        st = p.stat()
    except OSError:
        return [0.0, 0.0]
    return [float(st.st_size), st.st_mtime]


class RecordsWatcher:
    """Calls `rebuild()` (at most every `interval` seconds) while any run's records.jsonl changes."""

    def __init__(self, run_dirs: Sequence[Path], rebuild: Callable[[], None], interval: float = 1.0) -> None:
        self.run_dirs = list(run_dirs)
        self.rebuild = rebuild
        self.interval = interval
        self.errors: list[str] = []
        self.rebuilds = 0
        self._stop = threading.Event()
        self._seen = [_stamp(d) for d in self.run_dirs]
        self._thread = threading.Thread(target=self._loop, name="viewer-watch", daemon=True)

    def start(self) -> RecordsWatcher:
        self._thread.start()
        return self

    def check(self) -> bool:
        """Rebuild now if a records file changed since the last look; True when it rebuilt."""
        now = [_stamp(d) for d in self.run_dirs]
        if now == self._seen:
            return False
        self._seen = now
        try:
            self.rebuild()
            self.rebuilds += 1
        except Exception as exc:  # a half-written run must not stop the server; the next change retries
            self.errors.append(f"{type(exc).__name__}: {exc}")
        return True

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.check()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
