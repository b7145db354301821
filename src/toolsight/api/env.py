"""`.env` files: API keys and endpoints for the CLI and the Python API without exporting them."""

from __future__ import annotations

from pathlib import Path


def load_env(start: Path | None = None) -> Path | None:
    """Load the nearest `.env` (from the current folder upwards, or only `start/.env`) into the
    environment without overriding variables already set; its path, or None when there is none."""
    from dotenv import find_dotenv, load_dotenv

    if start is not None:
        found = str(start / ".env") if (start / ".env").is_file() else ""
    else:
        found = find_dotenv(usecwd=True)
    if not found:
        return None
    load_dotenv(found, override=False)
    return Path(found)
