"""The response cache (cache.sqlite in the run directory) for deterministic model and judge calls.

A request is cached only when it is deterministic (temperature 0 or a fixed seed). The key hashes
the model and its endpoint (`Model.endpoint_id`: the spec, and the base URL when one is given), the
generation settings, the messages (images by content hash, not by path, so a new run directory
still hits) and the tool schemas. A reply its caller could not use (a judge reply that does not
parse) is deleted again (`ResponseCache.delete`), so it is never replayed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path

from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import GenerateConfig, ImagePart, Message, ModelOutput
from toolsight.models.wire import ECHO_KEY


def _image_key(part: ImagePart) -> str:
    if part.url is not None:  # sent by its URL when the wire profile says so: the URL is part of the request
        return f"{part.artifact_id or part.path}@{part.url}"
    if part.artifact_id:
        return part.artifact_id
    try:
        return hashlib.sha256(Path(part.path).read_bytes()).hexdigest()[:16]
    except OSError:
        return part.path


def request_key(model: str, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig,
                salt: str = "") -> str:
    h = hashlib.sha256()
    h.update(model.encode())
    if salt:  # only when given, so every existing key stays the same
        h.update(b"\x00salt:" + salt.encode())
    # a wire profile only when there is one, so every key made without one stays the same
    # `prompt_cache` only marks the request for the provider's prompt cache: the same reply either way
    skip = {"timeout", "prompt_cache"} if config.wire is not None else {"timeout", "wire", "prompt_cache"}
    h.update(config.model_dump_json(exclude=skip).encode())
    for m in messages:
        h.update(m.role.encode())
        for p in m.content:
            h.update(b"\x00img:" + _image_key(p).encode() if isinstance(p, ImagePart) else b"\x00txt:" + p.text.encode())
        for c in m.tool_calls:
            h.update(f"\x00call:{c.id}:{c.name}:{c.arguments}".encode())
        h.update(f"\x00{m.tool_call_id}\x00{m.name}".encode())
        echo = (m.provider_data or {}).get(ECHO_KEY)
        if echo is not None:  # a reply re-sent as its driver's client re-sends it (reasoning included)
            h.update(b"\x00echo:" + json.dumps(echo, sort_keys=True).encode())
    h.update(json.dumps([t.model_dump() for t in tools], sort_keys=True).encode())
    return h.hexdigest()


class ResponseCache:
    """A small sqlite key-value store, safe to use from one event loop (calls are short).

    The cache only saves work: when sqlite fails (a full disk, a damaged file) it is switched
    off for the rest of the run (`broken` says why) instead of failing the task that hit it.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self.broken: str | None = None

    def get(self, key: str) -> ModelOutput | None:
        if self.broken is not None:
            return None
        try:
            with self._lock:
                row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            out = ModelOutput.model_validate_json(row[0])
        except (sqlite3.Error, ValueError) as exc:
            self.broken = f"{type(exc).__name__}: {exc}"
            return None
        return out.model_copy(update={"cached": True})

    def put(self, key: str, output: ModelOutput) -> None:
        if self.broken is not None:
            return
        try:
            value = output.model_dump_json()
            with self._lock:
                self._db.execute("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)", (key, value))
        except (sqlite3.Error, ValueError) as exc:
            self.broken = f"{type(exc).__name__}: {exc}"

    def delete(self, key: str) -> None:
        if self.broken is not None:
            return
        try:
            with self._lock:
                self._db.execute("DELETE FROM responses WHERE key = ?", (key,))
        except sqlite3.Error as exc:
            self.broken = f"{type(exc).__name__}: {exc}"

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            try:
                self._db.close()
            except sqlite3.Error as exc:
                self.broken = self.broken or f"{type(exc).__name__}: {exc}"
