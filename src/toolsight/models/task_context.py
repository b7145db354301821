"""Which task a model request belongs to, so every request can say it (`X-Toolsight-Task`).

The runner calls `Model.for_task(task, epoch)` once per task, inside that task's own asyncio context;
the base implementation records the task id here (a `ContextVar`, so concurrent tasks never see
each other's id). Providers add `task_headers()` to every request as a per-request extra header:
the scripted server keeps one script position per task from it, and a proxy or a local server's
logs can tell tasks apart. Ids are percent-encoded (headers must be ASCII).
"""

from __future__ import annotations

from contextvars import ContextVar
from urllib.parse import quote

TASK_HEADER = "X-Toolsight-Task"

_CURRENT: ContextVar[str | None] = ContextVar("toolsight_task", default=None)


def set_current_task(task_id: str | None) -> None:
    """Mark the task the current asyncio context works on (None clears it)."""
    _CURRENT.set(task_id)


def current_task() -> str | None:
    return _CURRENT.get()


def task_headers() -> dict[str, str]:
    """`{X-Toolsight-Task: <id>}` while a task is current, else `{}`."""
    tid = _CURRENT.get()
    return {TASK_HEADER: quote(tid, safe="")} if tid else {}
