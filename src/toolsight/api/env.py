"""`.env` files: API keys and endpoints for the CLI and the Python API without exporting them.

A line python-dotenv cannot parse is reported once, as `warning: PATH:LINE: …` on stderr, and skipped;
python-dotenv's own unnamed warning is silenced.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path

_reported: set[str] = set()


def _warn(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def env_problems(path: Path) -> list[str]:
    """One line per line of the `.env` at `path` that python-dotenv cannot parse (it skips them)."""
    from dotenv.parser import parse_stream

    with path.open(encoding="utf-8", errors="replace") as fh:
        return [f"warning: {path}:{b.original.line}: not a KEY=VALUE line ({b.original.string.strip()[:40]!r}); "
                "it is ignored — fix or remove it" for b in parse_stream(fh) if b.error]


def load_env(start: Path | None = None, warn: Callable[[str], None] = _warn) -> Path | None:
    """Load the nearest `.env` (from the current folder upwards, or only `start/.env`) into the
    environment without overriding variables already set; its path, or None when there is none."""
    from dotenv import find_dotenv, load_dotenv

    if start is not None:
        found = str(start / ".env") if (start / ".env").is_file() else ""
    else:
        found = find_dotenv(usecwd=True)
    if not found:
        return None
    path = Path(found)
    if found not in _reported:  # once per process, however often the CLI and the API load it
        _reported.add(found)
        for line in env_problems(path):
            warn(line)
    quiet = logging.getLogger("dotenv.main")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # its "could not parse statement" names no file; ours above does
    try:
        load_dotenv(found, override=False)
    finally:
        quiet.setLevel(level)
    return path
