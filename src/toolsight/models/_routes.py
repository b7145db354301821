"""Routes the provider SDKs produced, kept across runs, so a later run sends its first request
without importing the SDK at all.

Why: importing the openai SDK costs ~0.7 s of CPU and ~20 MB, anthropic ~1.4 s and ~30 MB,
google-genai ~0.8 s and ~25 MB (measured, docs/speed.md) — more than the rest of `toolsight run`
before its first request. The direct path (models/_direct.py) only needs from the SDK the URL and
headers of a request, which depend on nothing but the SDK's version, the base URL, the key, the
timeout and the platform; a route learned once is reused by every later run with the same ones.

What is stored, in `$TOOLSIGHT_CACHE/routes.json` (default `~/.cache/toolsight`), readable by the
user only: the URL and the headers, with the API key replaced by a placeholder; the entry's name
is a hash that includes a hash of the key. Routes are kept only when nothing else can shape the
SDK's headers: no provider environment variables besides the key and base-URL ones (they may hold
custom headers or other credentials) and no extra default headers. `TOOLSIGHT_ROUTE_CACHE=0`
turns the store off; the newest 64 routes are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ENV = "TOOLSIGHT_ROUTE_CACHE"
_PLACEHOLDER = "\x00api-key\x00"
_lock = threading.Lock()


def _root() -> Path:
    env = os.environ.get("TOOLSIGHT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "toolsight"


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def plain_env(prefixes: tuple[str, ...], allowed: tuple[str, ...]) -> bool:
    """True when no environment variable with one of `prefixes` is set except the `allowed` ones."""
    return not any(k.startswith(prefixes) and k not in allowed and v for k, v in os.environ.items())


def sdk_version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


class RouteStore:
    """The routes one model may reuse: `key_parts` name everything its SDK's headers depend on."""

    def __init__(self, key_parts: dict[str, Any], api_key: str, path: Path | None = None,
                 max_entries: int = 64) -> None:
        parts = {**key_parts, "key": hashlib.sha256(api_key.encode()).hexdigest(),
                 "python": sys.version, "platform": [platform.system(), platform.machine()]}
        self._base = json.dumps(parts, sort_keys=True, default=str)
        self._api_key = api_key
        self.path = path or _root() / "routes.json"
        self.max_entries = max_entries

    def _name(self, timeout: float) -> str:
        return hashlib.sha256(f"{self._base}|{timeout!r}".encode()).hexdigest()[:32]

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, timeout: float) -> tuple[str, list[tuple[str, str]]] | None:
        entry = self._read().get(self._name(timeout))
        if not isinstance(entry, dict):
            return None
        try:
            url = str(entry["url"])
            headers = [(str(k), str(v).replace(_PLACEHOLDER, self._api_key)) for k, v in entry["headers"]]
        except (KeyError, TypeError, ValueError):
            return None
        return url, headers

    def put(self, timeout: float, url: str, headers: list[tuple[str, str]]) -> None:
        """Keep a route (a failure to write is not an error: the next run learns it again)."""
        key = self._api_key
        entry = {"url": url, "headers": [[k, v.replace(key, _PLACEHOLDER) if key else v] for k, v in headers]}
        with _lock, contextlib.suppress(OSError):
            data = self._read()
            data.pop(self._name(timeout), None)
            data[self._name(timeout)] = entry  # newest last
            while len(data) > self.max_entries:
                data.pop(next(iter(data)))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".routes-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(data, fh)
                os.chmod(tmp, 0o600)
                os.replace(tmp, self.path)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise


def store_for(provider: str, dist: str, base_url: str | None, api_key: str, env_prefixes: tuple[str, ...],
              env_allowed: tuple[str, ...], extra: dict[str, Any] | None = None) -> RouteStore | None:
    """The route store for a model, or None when routes must not be kept (see the module doc)."""
    if not enabled() or extra or not plain_env(env_prefixes, env_allowed):
        return None
    version = sdk_version(dist)
    if version is None:
        return None
    from toolsight.version import __version__

    return RouteStore({"provider": provider, "sdk": [dist, version], "base_url": base_url,
                       "toolsight": __version__}, api_key)
