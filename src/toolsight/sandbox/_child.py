"""The child of the `subprocess` backend: a plain Python process that runs model code (stdlib + the
science packages only; this file must not import toolsight).

Started by `toolsight.sandbox.subprocess_backend` as `python -I _child.py <config-json>` with a
scrubbed environment (no API keys), the task workspace as its working folder, stdin on /dev/null,
stdout and stderr on files of the harness, and two pipes: requests in, reports out. It imports its
profile's packages (`_preload.py`; the IPython kernel of `_kernel.py` for mode "kernel"), lowers its
own rlimits (CPU, address space, file size, open files, processes, no core files), says it is ready,
then runs one snippet per request — all in one namespace, so variables persist while the process
lives — and answers each with one report. It exits when the request pipe closes or the harness is
gone.

This confines nothing: the code runs as the harness user, with the harness user's files, network
and processes. See docs/sandbox.md, "The subprocess backend".
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import struct
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # -I leaves the script's directory out

if TYPE_CHECKING:  # the same modules as mypy finds them; at run time this script never imports toolsight
    from toolsight.sandbox import _execute as ex
    from toolsight.sandbox._preload import PRELOADED, preload
    from toolsight.sandbox._protocol import read_frame
else:
    import _execute as ex
    from _preload import PRELOADED, preload
    from _protocol import read_frame

PARENT_CHECK_S = 1.0


def send(fd: int, obj: dict[str, Any]) -> None:
    """One length-prefixed JSON frame (a lone surrogate travels as an escape; odd values as their str)."""
    data = json.dumps(obj, default=str).encode()
    view = memoryview(struct.pack(">I", len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def watch_parent(harness: int) -> None:
    """Exit as soon as the harness is gone (this process is re-parented), so no child outlives a run."""
    def loop() -> None:
        while True:
            time.sleep(PARENT_CHECK_S)
            if os.getppid() != harness:
                os._exit(0)

    threading.Thread(target=loop, name="toolsight-parent-watch", daemon=True).start()


def user_processes() -> int:
    """Processes of this uid now: RLIMIT_NPROC counts all of them (no uid of its own here)."""
    uid = os.getuid()
    n = 0
    with contextlib.suppress(OSError):
        for d in os.listdir("/proc"):
            if d.isdigit():
                with contextlib.suppress(OSError):
                    if os.stat(f"/proc/{d}").st_uid == uid:
                        n += 1
    return n


def cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def set_limits(limits: dict[str, Any], stateful: bool) -> None:
    """Lower this process's rlimits, soft = hard (the code cannot raise them again). The CPU limit
    counts from now: the imports before it are not the code's."""
    cpu = int(cpu_seconds()) + 1 + int(limits.get("session_cpu_s" if stateful else "cpu_s", 20))
    mem = int(limits.get("memory_mb", 4096)) << 20
    fsize = int(limits.get("file_mb", 64)) << 20
    nofile = int(limits.get("open_files", 256))
    nproc = int(limits.get("processes", 64)) + (0 if os.geteuid() == 0 else user_processes())
    for name, soft, hard in (("CPU", cpu, cpu + 1), ("AS", mem, mem), ("FSIZE", fsize, fsize),
                             ("NOFILE", nofile, nofile), ("NPROC", nproc, nproc), ("CORE", 0, 0)):
        with contextlib.suppress(ValueError, OSError):  # a platform without one, or a lower hard limit already
            resource.setrlimit(getattr(resource, "RLIMIT_" + name), (soft, hard))


def clear_outputs() -> None:
    """Empty stdout and stderr (files of the harness) before a request: each report covers one call."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)


def main() -> int:
    config: dict[str, Any] = json.loads(sys.argv[1])
    req_fd, rep_fd = int(config["req_fd"]), int(config["rep_fd"])
    watch_parent(int(config["harness_pid"]))
    mode = str(config.get("mode", "exec"))
    given = dict(os.environ)  # the scrubbed environment the harness gave
    kernel = preload(str(config.get("profile", "image")), eager=mode == "kernel")
    os.environ.clear()  # what the imports added (OpenCV sets LD_LIBRARY_PATH) is not the code's
    os.environ.update(given)
    workspace = str(config["workspace"])
    os.chdir(workspace)
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    if kernel is not None:
        kernel.bind(1, 2)
    ns = ex.namespace(workspace, PRELOADED)
    set_limits(dict(config.get("limits") or {}), bool(config.get("stateful")))
    send(rep_fd, {"kind": "ready", "pid": os.getpid()})
    while True:
        req = read_frame(req_fd)
        if req is None:
            return 0
        clear_outputs()
        code = str(req.get("code", ""))
        cpu0 = cpu_seconds()
        if kernel is not None:
            t0 = time.monotonic()
            rep = kernel.execute(code)
            rep["code_s"] = round(time.monotonic() - t0, 6)
        else:
            rep = ex.run(code, ns)
        rep["cpu_s"] = round(cpu_seconds() - cpu0, 4)
        send(rep_fd, {"kind": "report", **rep})


if __name__ == "__main__":
    sys.exit(main())
