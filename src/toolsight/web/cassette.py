"""Record/replay storage: every web call of a run (request, response, fetched bytes) in one SQLite file.

A call is keyed by its operation and its canonical JSON request (`call_key`). The response is
stored as JSON, a failure as its message (a replay fails the same way), and fetched bodies as
content-addressed blobs. Writes are committed one by one so a killed run keeps what it fetched.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from toolsight.web.types import ReplayMiss, WebError

CASSETTE = "web-cassette.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, op TEXT NOT NULL, request TEXT NOT NULL,
    response TEXT, error TEXT, blob TEXT, backend TEXT, created REAL
);
CREATE TABLE IF NOT EXISTS blobs (sha TEXT PRIMARY KEY, data BLOB NOT NULL);
"""


def call_key(op: str, request: dict[str, Any]) -> str:
    """The canonical key of one call: operation + request with sorted keys, compact."""
    return op + " " + json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Entry:
    """One recorded call as read back."""

    __slots__ = ("blob", "error", "response")

    def __init__(self, response: Any, error: str | None, blob: bytes | None) -> None:
        self.response = response
        self.error = error
        self.blob = blob


class Cassette:
    """The web calls of one run. `readonly=True` opens an existing file for replay."""

    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly
        if readonly and not path.is_file():
            raise WebError(f"web cassette not found: {path}; pass --web replay=RUN_DIR (a run recorded with "
                           f"--web live or offline) or the path of its {CASSETTE}")
        if not readonly:
            path.parent.mkdir(parents=True, exist_ok=True)
        uri = f"file:{path}?mode=ro" if readonly else str(path)
        try:
            self._db = sqlite3.connect(uri, uri=readonly, check_same_thread=False, isolation_level=None)
            if not readonly:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(_SCHEMA)
            else:
                self._db.execute("SELECT 1 FROM calls LIMIT 1")
        except sqlite3.DatabaseError as exc:
            raise WebError(f"{path}: not a toolsight web cassette ({exc})") from None
        self._lock = threading.Lock()

    def get(self, key: str) -> Entry | None:
        with self._lock:
            row = self._db.execute("SELECT response, error, blob FROM calls WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            blob: bytes | None = None
            if row[2]:
                b = self._db.execute("SELECT data FROM blobs WHERE sha = ?", (row[2],)).fetchone()
                if b is None:  # ends the task; the message is the user's (it names the file), never the model's
                    raise ReplayMiss(f"web replay: {self.path}: blob {row[2]} of a recorded call is missing "
                                     "(damaged cassette); re-record the run")
                blob = bytes(b[0])
        return Entry(json.loads(row[0]) if row[0] is not None else None, row[1], blob)

    def put(self, op: str, key: str, request: dict[str, Any], response: Any = None, error: str | None = None,
            blob: bytes | None = None, backend: str = "") -> None:
        if self.readonly:
            return
        sha = hashlib.sha256(blob).hexdigest() if blob is not None else None
        with self._lock:
            if sha is not None:
                self._db.execute("INSERT OR IGNORE INTO blobs (sha, data) VALUES (?, ?)", (sha, blob))
            # first answer wins: a resumed or repeated call keeps what the run first saw
            self._db.execute(
                "INSERT OR IGNORE INTO calls (key, op, request, response, error, blob, backend, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, op, json.dumps(request, sort_keys=True, ensure_ascii=False),
                 json.dumps(response, ensure_ascii=False) if response is not None else None, error, sha, backend,
                 time.time()),
            )

    def count(self) -> int:
        with self._lock:
            n: int = self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
        return n

    def ops(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT op, COUNT(*) FROM calls GROUP BY op ORDER BY op").fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def first_request(self, op: str) -> dict[str, Any] | None:
        """The request of the first recorded call of `op` (e.g. which summary model a run used)."""
        with self._lock:
            row = self._db.execute("SELECT request FROM calls WHERE op = ? ORDER BY created LIMIT 1", (op,)).fetchone()
        if row is None:
            return None
        got: dict[str, Any] = json.loads(row[0])
        return got

    def close(self) -> None:
        with self._lock:
            self._db.close()


def find_cassette(path: Path) -> Path:
    """A cassette file given itself or the run directory that holds it."""
    if path.is_dir():
        return path / CASSETTE
    return path
