"""Before a run with web tools starts: is the live web usable? A run on `--web live` (or on no
`--web` with no corpus known, which means live) without a search key would fall back to keyless
`ddgs` scraping (unreproducible, no reverse image search), and on a machine without network every
search would fail inside the tasks and reach the model as an error. `check_live` stops such a run
with one line naming what to set or which `--web` to use instead, before the run directory exists."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from toolsight.web.live import SERPER_URL
from toolsight.web.session import parse_web_spec
from toolsight.web.types import WebError

#: set to 1 to accept the keyless ddgs search on --web live (its results are not reproducible)
KEYLESS_VAR = "TOOLSIGHT_WEB_KEYLESS"
INSTEAD = "or run without the live web: --web offline=CORPUS_DIR (e.g. from `toolsight generate browse`) or " \
          "--web replay=RUN_DIR"


def resolved_mode(spec: str | None, default_corpus: Path | None) -> str:
    """The web mode a run will use: `live`, `offline` or `replay` (no `--web`: offline with a corpus)."""
    mode, _ = parse_web_spec(spec)
    return mode or ("offline" if default_corpus is not None else "live")


def check_live(env: Mapping[str, str] | None = None, timeout: float = 5.0) -> None:
    """Raise WebError unless live search is keyed (or keyless search was accepted) and reachable."""
    e = env if env is not None else os.environ
    if not e.get("SERPER_API_KEY"):
        if e.get(KEYLESS_VAR) == "1":
            return
        raise WebError(f"--web live: SERPER_API_KEY is not set, so search would fall back to keyless ddgs scraping "
                       f"(not reproducible, no reverse image search); set SERPER_API_KEY, or {KEYLESS_VAR}=1 to "
                       f"accept ddgs, {INSTEAD}")
    url = (e.get("SERPER_BASE_URL") or SERPER_URL).rstrip("/")
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise WebError(f"--web live: the search API at {url} is not reachable ({why}); check the network, "
                       f"{INSTEAD}") from None
