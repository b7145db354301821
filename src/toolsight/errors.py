"""The base of every error toolsight shows to a user, and the process exit codes.

A `ToolsightError` is a problem the user can fix (a bad file, flag, model name or key). The CLI
prints its message as one line — naming the file, line, field or flag and the fix — and exits with
its `exit_code`; it never prints a traceback for one. Layer 0: imports nothing from toolsight.
"""

from __future__ import annotations

#: all tasks finished without error
EXIT_OK = 0
#: the run finished but some tasks ended in error (the summary says how many and why)
EXIT_TASK_ERRORS = 3
#: a user error: bad input, flag, file or configuration; nothing (more) was run
EXIT_USAGE = 2
#: a run that could not start or was aborted (outage, authentication, disk full)
EXIT_ABORTED = 4
#: interrupted by Ctrl-C (finished records are kept; the message says how to resume)
EXIT_INTERRUPTED = 130


class ToolsightError(Exception):
    """A user-fixable problem, shown as one clear message and an exit code, never a traceback."""

    exit_code: int = EXIT_USAGE

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code

    @property
    def message(self) -> str:
        return str(self)


def one_line(exc: BaseException) -> str:
    """An error as one line: a pydantic ValidationError as `field: what is wrong; …` (no URL, no
    indented block), anything else with its whitespace collapsed."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            items = errors(include_url=False)
        except TypeError:
            items = None
        if isinstance(items, list) and items:
            parts = []
            for e in items:
                loc = ".".join(str(x) for x in e.get("loc", ()) if x != "__root__") if isinstance(e, dict) else ""
                msg = e.get("msg", "") if isinstance(e, dict) else str(e)
                parts.append(f"{loc}: {msg}" if loc else str(msg))
            return "; ".join(parts)
    return " ".join(str(exc).split())


class TaskAbort(ToolsightError):
    """Raised inside a tool when the task cannot go on (e.g. a web replay has no recorded entry).

    Tools turn every other exception into a failed call the model can read; this one passes
    through the tool and the agent loop and ends the task with its message as the record's error.
    """
class RunAborted(BaseException):
    """Stops the whole run at once: the endpoint stayed down past --outage-timeout, the provider
    rejected the credentials or the model name, or the disk is full.

    A BaseException (like KeyboardInterrupt) on purpose: tools, judges and official loops catch
    `Exception` to turn their own failures into a failed call or score, and must not swallow this.
    The runner keeps every finished record and converts it to a ToolsightError with `exit_code`.
    """

    def __init__(self, message: str, *, exit_code: int = EXIT_ABORTED) -> None:
        super().__init__(message)
        self.exit_code = exit_code

    @property
    def message(self) -> str:
        return str(self)
