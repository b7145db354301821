"""Running one snippet in a prepared namespace, and naming how a call ended (stdlib only; no toolsight).

Shared by the two child-side programs: the fork server's children (`_server.py`, `_session.py`)
and the plain child of the subprocess backend (`_child.py`), so both run code the same way (the
VisualToolBench globals, tracebacks that start in the model's code, SystemExit handled) and both
report the same `limit` for the same cause. The harness side of the subprocess backend uses
`status_fields` too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
import traceback
from typing import Any


def namespace(workspace: str, preloaded: dict[str, Any]) -> dict[str, Any]:
    """The globals model code runs with: the preloaded packages and the save path VisualToolBench gives."""
    ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__,
                          "PROCESSED_IMAGE_SAVE_PATH": workspace}
    ns.update(preloaded)
    return ns


def run(code: str, ns: dict[str, Any]) -> dict[str, Any]:
    """Execute `code` in `ns`; the report: ok, the exception (type: message) and the time inside the code."""
    t0 = time.monotonic()
    rep = _run(code, ns)
    rep["code_s"] = round(time.monotonic() - t0, 6)
    return rep


def _run(code: str, ns: dict[str, Any]) -> dict[str, Any]:
    try:
        compiled = compile(code, "<code>", "exec")
        exec(compiled, ns)
        rep: dict[str, Any] = {"ok": True}
    except SystemExit as exc:
        ok = exc.code in (None, 0)
        rep = {"ok": ok, "error": None if ok else f"SystemExit: {exc.code}"}
    except BaseException as exc:
        tb = traceback.TracebackException.from_exception(exc)
        # drop this function's own frame so the trace starts in the model's code
        if tb.stack and tb.stack[0].filename != "<code>":
            tb.stack = traceback.StackSummary.from_list([f for f in tb.stack if f.filename != __file__])
        with contextlib.suppress(Exception):
            sys.stderr.write("".join(tb.format()))
        rep = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000], "exc_type": type(exc).__name__}
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    return rep


def status_fields(status: int | None, limits: dict[str, Any], timed_out: bool, report: dict[str, Any] | None,
                  outs: dict[str, Any], oom: bool) -> dict[str, Any]:
    """exit_code, signal and the limit that ended a call, from its wait status, its report and its output."""
    res: dict[str, Any] = {"exit_code": None, "signal": None, "limit": None}
    if status is not None:
        if os.WIFEXITED(status):
            res["exit_code"] = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            res["signal"] = signal.Signals(os.WTERMSIG(status)).name
    limit = None
    if timed_out:
        limit = "wall_time"
    elif oom:
        limit = "memory"
    elif res["signal"] in ("SIGXCPU",) or (res["signal"] == "SIGKILL" and report is None):
        limit = "cpu_time" if res["signal"] == "SIGXCPU" else "killed"
    elif report is not None:
        et = report.get("exc_type")
        err = str(report.get("error") or "")
        if et == "MemoryError":
            limit = "memory"
        elif "File too large" in err or "[Errno 27]" in err:
            limit = "file_size"
        elif "No space left" in err or "[Errno 28]" in err:
            limit = "disk"
        elif "Too many open files" in err or "[Errno 24]" in err:
            limit = "open_files"
    if limit is None and max(outs.get("stdout_bytes", 0), outs.get("stderr_bytes", 0)) >= (
            int(limits.get("file_mb", 64)) << 20):
        limit = "file_size"
    res["limit"] = limit
    return res
