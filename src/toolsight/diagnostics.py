"""Diagnostics: toolsight's `logging` set-up (layer 0).

Modules log what helps someone debug a run — retries, outage pauses, sandbox servers restarted,
the response cache switched off — through `logging.getLogger(__name__)`; nothing is printed
directly. The level comes from `TOOLSIGHT_LOG_LEVEL` (default WARNING, so a normal run shows only
its own progress and results); `TOOLSIGHT_LOG_FILE` sends the log to a file instead of stderr.
"""

from __future__ import annotations

import logging
import os

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class LogSetupError(ValueError):
    """TOOLSIGHT_LOG_FILE names a file that cannot be opened (the message names it and the fix)."""


def configure_logging(level: str | None = None) -> None:
    """Send the `toolsight` logger to stderr (or TOOLSIGHT_LOG_FILE) at `level` / TOOLSIGHT_LOG_LEVEL."""
    name = (level or os.environ.get("TOOLSIGHT_LOG_LEVEL") or "WARNING").upper()
    logger = logging.getLogger("toolsight")
    if not logger.handlers:
        path = os.environ.get("TOOLSIGHT_LOG_FILE")
        try:
            handler: logging.Handler = logging.FileHandler(path, encoding="utf-8") if path else logging.StreamHandler()
        except OSError as exc:
            raise LogSetupError(f"TOOLSIGHT_LOG_FILE={path}: cannot write the log there ({exc.strerror or exc}); "
                                "point it at a writable file or unset it") from None
        handler.setFormatter(logging.Formatter(_FORMAT))
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(getattr(logging, name, logging.WARNING))
