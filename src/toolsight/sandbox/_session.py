"""Stateful sessions of a dedicated sandbox server: one long-lived confined child per task.

Imported by `_server.py` (a standalone script: this module must not import toolsight at run time);
what a session needs of its server is the `Host` protocol, so this module never imports the server.
The child runs each request in one namespace (or the IPython kernel of `_kernel.py`) and reports
each; between calls its processes are frozen (cgroup freezer, else SIGSTOP of its group), so no
thread runs unwatched and nothing it wrote changes while the server copies it back. A session
server never serves stateless calls: it was started for this task and is stopped with it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from toolsight.sandbox._confine import Cgroups, UidLease
    from toolsight.sandbox._protocol import (
        OUT_CAP_DEFAULT,
        BadReport,
        read_frame,
        report_pair,
        write_frame,
    )
    from toolsight.sandbox._workspace import CopyBack, close_state
else:
    from _protocol import OUT_CAP_DEFAULT, BadReport, read_frame, report_pair, write_frame
    from _workspace import CopyBack, close_state


class Host(Protocol):
    """What a session needs of the server that holds it (`_server.Server`)."""

    cg: Cgroups | None
    lease: UidLease | None
    kernel: Any

    def kill_spare(self) -> None: ...
    def _prepare(self, report_fd: int, ctrl_fd: int, setup_fd: int, cgroups: tuple[str, ...]) -> None: ...
    def _enter(self, workspace: str, limits: dict[str, Any]) -> None: ...
    def _namespace(self, workspace: str) -> dict[str, Any]: ...
    @staticmethod
    def _exec(code: str, ns: dict[str, Any]) -> dict[str, Any]: ...
    @staticmethod
    def _send_report(rep: dict[str, Any]) -> None: ...
    def _reset_outputs(self) -> None: ...
    def _read_outputs(self, cap: int) -> dict[str, Any]: ...
    def _collect(self, sock: socket.socket, pid: int, state: dict[str, Any]) -> dict[str, Any] | None: ...
    def _kill_group(self, pid: int) -> None: ...
    def _kill_child(self, pid: int) -> tuple[int, float]: ...
    def _kill_tree(self, pid: int) -> None: ...
    def _wait(self, pidfd: int, deadline: float, sock: socket.socket) -> str: ...
    @staticmethod
    def _wait4(pid: int) -> tuple[int, float]: ...
    def _set_memory(self, limits: dict[str, Any]) -> None: ...
    def _files(self, state: dict[str, Any], workspace: str, copier: CopyBack | None) -> dict[str, Any]: ...
    @staticmethod
    def _status_fields(status: int | None, limits: dict[str, Any], timed_out: bool,
                       report: dict[str, Any] | None, outs: dict[str, Any], oom: bool) -> dict[str, Any]: ...


class Sessions:
    """The (at most one) session of a server."""

    def __init__(self, srv: Host) -> None:
        self.srv = srv
        self.current: dict[str, Any] | None = None

    def open(self, req: dict[str, Any]) -> dict[str, Any]:
        self.close()
        self.srv.kill_spare()  # a session server never serves stateless calls
        workspace = req["workspace"]
        limits = dict(req.get("limits", {}))
        limits["cpu_s"] = int(limits.get("session_cpu_s", 600))
        mode = str(req.get("mode", "exec"))
        parent_sock, child_sock = report_pair()
        setup_parent, setup_child = report_pair()
        req_r, req_w = os.pipe()
        self.srv._reset_outputs()
        self.srv._set_memory(limits)
        pid = os.fork()
        if pid == 0:
            try:
                parent_sock.close()
                setup_parent.close()
                os.close(req_w)
                self.srv._prepare(child_sock.fileno(), req_r, setup_child.fileno(), ("freezer",))
                self.srv._enter(workspace, limits)
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    os.write(2, f"sandbox setup failed: {type(exc).__name__}: {exc}\n".encode())
                os._exit(71)
            try:  # nothing the code does may return into the server's code in this process
                self.loop(workspace, mode)
            except BaseException as exc:  # e.g. a signal handler of the code raising between cells
                with contextlib.suppress(Exception):
                    os.write(2, f"the interpreter ended between cells: {type(exc).__name__}: {exc}\n".encode())
            os._exit(70)
        child_sock.close()
        setup_child.close()
        os.close(req_r)
        s = self.current = {"pid": pid, "pidfd": os.pidfd_open(pid), "sock": parent_sock, "req": req_w,
                            "workspace": workspace, "limits": limits, "state": {}, "copier": None,
                            "frozen": False}
        deadline = time.monotonic() + 20
        try:
            while True:
                event = self.srv._wait(s["pidfd"], deadline, parent_sock)
                if event != "message":
                    break
                rep = self.srv._collect(parent_sock, pid, s["state"])
                if rep is not None and rep.get("ready"):
                    self.srv._collect(setup_parent, pid, s["state"])
                    if "upper" in s["state"]:
                        s["copier"] = CopyBack(s["state"]["upper"], workspace,
                                               self.srv.lease.group if self.srv.lease else None)
                    self.freeze(True)
                    return {"event": "done", "ok": True, "pid": pid}
        except BadReport:
            pass
        finally:
            setup_parent.close()
        outs = self.srv._read_outputs(OUT_CAP_DEFAULT)
        self.close()
        return {"event": "done", "ok": False, "error": "session did not start: " + outs["stderr"][-500:]}

    def loop(self, workspace: str, mode: str) -> None:
        """The session child: run each request in one namespace (or the IPython kernel); report each."""
        ns = self.srv._namespace(workspace)
        kernel = self.srv.kernel if mode == "kernel" else None
        if kernel is not None:
            kernel.bind(1, 2)
        self.srv._send_report({"ready": True})
        while True:
            msg = read_frame(4)
            if msg is None:
                os._exit(0)
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            for fd in (1, 2):
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                    os.lseek(fd, 0, os.SEEK_SET)
            code = str(msg.get("code", ""))
            if kernel is not None:
                t0 = time.monotonic()
                rep = kernel.execute(code)
                rep["code_s"] = round(time.monotonic() - t0, 6)
            else:
                rep = self.srv._exec(code, ns)
            self.srv._send_report(rep)

    def freeze(self, on: bool) -> None:
        """Freeze (cgroup freezer; else SIGSTOP of the group) a session's processes between calls."""
        s = self.current
        if s is None or s["frozen"] == on:
            return
        if self.srv.cg is not None and "freezer" in self.srv.cg.paths:
            if not self.srv.cg.freeze(on):
                self.srv._kill_group(s["pid"])  # cannot freeze it: it does not run unwatched
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(s["pid"], signal.SIGSTOP if on else signal.SIGCONT)
        s["frozen"] = on

    def run(self, req: dict[str, Any]) -> dict[str, Any]:
        s = self.current
        if s is None:
            return {"event": "done", "session_dead": True, "error": "no session open"}
        limits = s["limits"]
        wall = float(req.get("wall_s", limits.get("wall_s", 30)))
        cap = int(limits.get("output_bytes", OUT_CAP_DEFAULT))
        oom0 = self.srv.cg.oom_kills() if self.srv.cg else 0
        t0 = time.monotonic()
        self.freeze(False)
        with contextlib.suppress(OSError):
            write_frame(s["req"], {"code": req["code"]})
        status: int | None = None
        cpu: float | None = None
        report: dict[str, Any] | None = None
        timed_out = False
        bad = ""
        try:
            while True:
                event = self.srv._wait(s["pidfd"], t0 + wall, s["sock"])
                if event == "message":
                    report = self.srv._collect(s["sock"], s["pid"], s["state"])
                    if report is None:
                        continue
                    break
                if event == "timeout":
                    timed_out = True
                    status, cpu = self.srv._kill_child(s["pid"])
                else:
                    status, cpu = self.srv._wait4(s["pid"])
                report = self.srv._collect(s["sock"], s["pid"], s["state"])
                break
        except BadReport as exc:
            bad = str(exc)
            report = None
            status, cpu = self.srv._kill_child(s["pid"])
        except BaseException:
            self.srv._kill_group(s["pid"])
            raise
        duration = time.monotonic() - t0
        dead = status is not None
        if dead:
            self.srv._kill_tree(s["pid"])
        else:
            self.freeze(True)  # before reading what it wrote: nothing runs between calls
        outs = self.srv._read_outputs(cap)
        files = self.srv._files(s["state"], s["workspace"], s["copier"])
        oom = bool(self.srv.cg and self.srv.cg.oom_kills() > oom0)
        res = {"event": "done", **outs, **files, "duration_s": round(duration, 6), "report": report,
               "session_dead": dead}
        res.update(self.srv._status_fields(status, limits, timed_out, report, outs, oom))
        if report and isinstance(report.get("cpu_s"), float | int):
            res["cpu_s"] = report["cpu_s"]
        if cpu is not None:
            res["cpu_s"] = cpu
        if bad:
            res["bad_report"] = bad
            res["limit"] = res["limit"] or "killed"
        if dead:
            self.close_fds()
        return res

    def close_fds(self) -> None:
        s = self.current
        if s is None:
            return
        for fd in (s["pidfd"], s["req"]):
            with contextlib.suppress(OSError):
                os.close(fd)
        s["sock"].close()
        close_state(s["state"])
        self.current = None

    def close(self) -> dict[str, Any]:
        s = self.current
        if s is not None:
            self.srv._kill_group(s["pid"])
            self.freeze(False)  # a frozen process does not die until thawed
            with contextlib.suppress(ChildProcessError):
                os.waitpid(s["pid"], 0)
            self.srv._kill_tree(s["pid"])
            self.close_fds()
        return {"event": "done", "ok": True}
