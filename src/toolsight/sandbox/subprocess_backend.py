"""The `subprocess` backend: model code in a plain child process of the harness. It is NOT isolated.

For machines where the fork server cannot run (no namespaces, Landlock or seccomp; not Linux), or
to debug a tool without the confinement. A stateless call starts a fresh `python -I _child.py`
and ends it after its report; a stateful sandbox (a session, the IPython kernel) keeps one child for
the task, so variables persist between calls, and starts a fresh one when the child dies.

What it gives: a scrubbed environment (`client.clean_env`: no API keys; HOME and TMPDIR in a scratch
folder of its own), the task workspace as the working folder, rlimits (CPU, address space, file
size, open files, processes, no core files) where the platform has them, its own process group (the
wall clock kills the whole group), and the same results as the fork server: `ExecResult` with the
same limit names and messages (`client.to_result`), the IPython kernel's outputs, the files a call
read (inotify on the workspace, from the harness) and wrote (the workspace compared before and after).

What it does not: the code runs as the harness user (root, if the harness is) with that user's
files, network and processes. It can read and change any file the harness can, including the
task's inputs and other tasks' workspaces; reach the network; read `/proc/<harness pid>/environ`
(where the API keys are) and the harness's memory; signal or ptrace the harness; leave processes
behind that called `setsid`. Its `isolation_report()` says so, and a warning is logged once.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import logging
import os
import resource
import select
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from toolsight.sandbox._execute import status_fields
from toolsight.sandbox._protocol import REPORT_MAX, BadReport, parse_report
from toolsight.sandbox._workspace import WATCH_MASK, Inotify
from toolsight.sandbox.client import SandboxError, clean_env, to_result
from toolsight.sandbox.interface import MAX_READ_BYTES, RunOutcome, read_file, write_file
from toolsight.sandbox.models import ExecResult, Limits

log = logging.getLogger(__name__)

NAME = "subprocess"
CHILD_SCRIPT = Path(__file__).with_name("_child.py")
START_TIMEOUT_S = 120.0
MAX_TRACKED_FILES = 20000
MAX_DEPTH = 8
WARNING = ("the subprocess sandbox backend is NOT isolated: model-written code runs as a plain child process of "
           "the harness, as the same user, with that user's files, network and processes (it can read "
           "/proc/<harness pid>/environ, where API keys are); only its environment is scrubbed and rlimits apply. "
           "Use the forkserver backend wherever it runs")


# ----------------------------------------------------------------------------- what a call touched

def snapshot(root: str) -> dict[str, tuple[int, int, int]]:
    """Every regular file under `root` (relative name -> size, mtime, inode), to see what a call wrote."""
    out: dict[str, tuple[int, int, int]] = {}

    def walk(path: str, prefix: str, depth: int) -> None:
        with contextlib.suppress(OSError), os.scandir(path) as it:
            for e in it:
                if len(out) >= MAX_TRACKED_FILES:
                    return
                with contextlib.suppress(OSError):
                    st = e.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode) and depth < MAX_DEPTH:
                        walk(e.path, f"{prefix}{e.name}/", depth + 1)
                    elif stat.S_ISREG(st.st_mode):
                        out[prefix + e.name] = (st.st_size, st.st_mtime_ns, st.st_ino)

    walk(root, "", 0)
    return out


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def watch_reads(root: str) -> Inotify | None:
    """An inotify watch on the workspace (Linux): which of its files the call opened. None elsewhere."""
    libc = _libc()
    if libc is None or not hasattr(libc, "inotify_init1"):
        return None
    fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
    if fd < 0:
        return None
    if int(libc.inotify_add_watch(fd, os.fsencode(root), WATCH_MASK)) < 0:
        os.close(fd)
        return None
    return Inotify(fd)


# ----------------------------------------------------------------------------- one child

class ChildProcess:
    """One `_child.py` process: started (and ready), given snippets one at a time, killed.

    Not thread-safe: a sandbox uses it from one thread at a time.
    """

    def __init__(self, workspace: str, limits: Limits, profile: str, mode: str, stateful: bool,
                 on_kill: Callable[[ChildProcess], None] | None = None) -> None:
        self.workspace = workspace
        self.stateful = stateful
        self.on_kill = on_kill
        self.scratch = tempfile.mkdtemp(prefix="toolsight-subprocess-")
        self._out: IO[bytes] = open(os.path.join(self.scratch, "stdout"), "w+b")  # closed in kill()
        self._err: IO[bytes] = open(os.path.join(self.scratch, "stderr"), "w+b")
        self._buf = bytearray()
        self._ended = False
        self._killed = False
        self.status: int | None = None  # the wait status, once the child has been reaped
        self.cpu_s: float | None = None
        req_r, self._req = os.pipe()
        self._rep, rep_w = os.pipe()
        os.set_blocking(self._rep, False)
        config = {"req_fd": req_r, "rep_fd": rep_w, "harness_pid": os.getpid(), "profile": profile, "mode": mode,
                  "workspace": workspace, "limits": limits.wire(), "stateful": stateful}
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", str(CHILD_SCRIPT), json.dumps(config)],
                stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._err, env=clean_env(self.scratch),
                cwd=workspace, start_new_session=True, close_fds=True, pass_fds=(req_r, rep_w),
            )
        except OSError as exc:
            for fd in (self._req, self._rep):
                os.close(fd)
            self._close_files()
            raise SandboxError(f"the subprocess sandbox could not start python: {exc}") from None
        finally:
            os.close(req_r)
            os.close(rep_w)
        self.pidfd: int | None = None
        with contextlib.suppress(AttributeError, OSError):
            self.pidfd = os.pidfd_open(self.proc.pid)
        try:
            hello = self._read(time.monotonic() + START_TIMEOUT_S)
        except (TimeoutError, BadReport) as exc:
            hello = {"error": str(exc)}
        if hello is None or hello.get("kind") != "ready":
            tail = self._output(self._err, 2000)[0][-2000:]
            self.kill()
            raise SandboxError(f"the subprocess sandbox's child did not start ({hello or 'it exited'}):\n{tail}")

    @property
    def alive(self) -> bool:
        """Still running (checked without reaping it: its pid stays ours until `kill`)."""
        if self._ended:
            return False
        if self.pidfd is None:
            return self.proc.poll() is None
        ready, _, _ = select.select([self.pidfd], [], [], 0)
        return not ready

    # -- the report pipe
    def _frame(self) -> dict[str, Any] | None:
        if len(self._buf) < 4:
            return None
        (n,) = struct.unpack(">I", self._buf[:4])
        if n > REPORT_MAX:
            raise BadReport("report too large")
        if len(self._buf) < 4 + n:
            return None
        body = bytes(self._buf[4:4 + n])
        del self._buf[:4 + n]
        return parse_report(body)

    def _drain(self) -> bool:
        """Read what the pipe holds; False once every writer has closed it."""
        while True:
            try:
                chunk = os.read(self._rep, 1 << 20)
            except BlockingIOError:
                return True
            if not chunk:
                return False
            self._buf += chunk
            if len(self._buf) > REPORT_MAX + 4:
                raise BadReport("report too large")

    def _read(self, deadline: float) -> dict[str, Any] | None:
        """The next frame; None when the child exited without one. TimeoutError at the deadline."""
        while True:
            frame = self._frame()
            if frame is not None:
                return frame
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            watch = [self._rep] if self.pidfd is None else [self._rep, self.pidfd]
            ready, _, _ = select.select(watch, [], [], left if self.pidfd is not None else min(left, 0.05))
            if self._rep in ready and self._drain():
                continue
            exited = (self.pidfd in ready) if self.pidfd is not None else self.proc.poll() is not None
            if exited or self._rep in ready:  # exited, or the pipe closed: a last frame may be in the buffer
                with contextlib.suppress(OSError):
                    self._drain()
                return self._frame()

    # -- a call
    def run(self, code: str, limits: Limits, wall_s: float) -> dict[str, Any]:
        """Run one snippet; the reply frame the fork server would send (same keys, for `to_result`),
        with `session_dead` when the child ended during the call."""
        before = snapshot(self.workspace)
        watch = watch_reads(self.workspace)
        report: dict[str, Any] | None = None
        timed_out = False
        bad = ""
        t0 = time.monotonic()
        try:
            self._send({"code": code})
            report = self._read(t0 + wall_s)
        except TimeoutError:
            timed_out = True
        except BadReport as exc:
            bad = str(exc)
        except OSError:  # the request pipe is broken: the child is gone
            pass
        duration = time.monotonic() - t0
        if report is not None and report.get("kind") != "report":
            bad, report = "not a report", None
        if report is None:
            self.end()  # timed out, died, or sent garbage: the whole group goes (its output is read below)
        cap = int(limits.output_bytes)
        stdout, out_bytes = self._output(self._out, cap)
        stderr, err_bytes = self._output(self._err, cap)
        outs = {"stdout": stdout, "stdout_bytes": out_bytes, "stderr": stderr, "stderr_bytes": err_bytes}
        files: dict[str, Any] = {"files_read": [], "files_tracked": False}
        if watch is not None:
            files = watch.collect()
            watch.close()
        after = snapshot(self.workspace)
        files["files_written"] = sorted(n for n, sig in after.items() if before.get(n) != sig)
        frame: dict[str, Any] = {"event": "done", **outs, **files, "duration_s": round(duration, 6),
                                 "report": report, "session_dead": self.status is not None or report is None}
        frame.update(status_fields(self.status, limits.wire(), timed_out, report, outs, False))
        if report is not None:
            if isinstance(report.get("cpu_s"), float | int):
                frame["cpu_s"] = report["cpu_s"]
            if not self.stateful:  # as the fork server: a one-call child's outcome; a session's child lives on
                frame["exit_code"] = 0 if report.get("ok") else 1
        elif self.cpu_s is not None:
            frame["cpu_s"] = self.cpu_s
        if bad:
            frame["bad_report"] = bad
            frame["limit"] = frame["limit"] or "killed"
        return frame

    def _send(self, obj: dict[str, Any]) -> None:
        data = json.dumps(obj).encode()
        view = memoryview(struct.pack(">I", len(data)) + data)
        while view:
            view = view[os.write(self._req, view):]

    def _output(self, f: IO[bytes], cap: int) -> tuple[str, int]:
        try:
            size = os.fstat(f.fileno()).st_size
            return os.pread(f.fileno(), min(size, cap), 0).decode("utf-8", errors="replace"), size
        except (OSError, ValueError):
            return "", 0

    # -- the end
    def end(self) -> None:
        """Kill the child's process group and reap the child (its wait status in `status`). Idempotent."""
        if self._ended:
            return
        self._ended = True
        rc = self.proc.returncode
        if rc is None:  # not reaped yet: the pid is still ours, so is the group it leads
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            try:
                _pid, status, ru = os.wait4(self.proc.pid, 0)
                self.status, self.cpu_s = status, round(ru.ru_utime + ru.ru_stime, 4)
                self.proc.returncode = os.waitstatus_to_exitcode(status)
            except ChildProcessError:
                pass
        else:  # reaped by Popen.poll (no pidfd on this platform): its status from the return code
            self.status = (rc & 0xFF) << 8 if rc >= 0 else -rc

    def kill(self) -> None:
        """End the child and release everything of it (pipes, output files, scratch folder). Idempotent."""
        self.end()
        if self._killed:
            return
        self._killed = True
        for fd in (self._req, self._rep, self.pidfd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._close_files()
        if self.on_kill is not None:
            self.on_kill(self)

    def _close_files(self) -> None:
        for f in (self._out, self._err):
            with contextlib.suppress(OSError):
                f.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


# ----------------------------------------------------------------------------- the sandbox and the backend

class SubprocessSandbox:
    """A task's sandbox on the subprocess backend: a fresh child per stateless call, one child per stateful one."""

    backend = NAME

    def __init__(self, owner: SubprocessBackend, workspace: Path, limits: Limits, stateful: bool, mode: str,
                 profile: str) -> None:
        self.owner = owner
        self.workspace = Path(workspace)
        self.limits = limits
        self.stateful = stateful
        self.mode = mode
        self.profile = profile
        self._child: ChildProcess | None = None
        self._lost = False  # a stateful child ended (a limit, a crash, restart()): the next one says so
        self._lock = threading.Lock()

    def _call(self, code: str, limits: Limits | None, wall_s: float | None) -> RunOutcome:
        lim = self.limits if self.stateful else (limits or self.limits)
        wall = wall_s or lim.wall_s
        ws = str(self.workspace.resolve())
        if not os.path.isdir(ws):
            raise SandboxError(f"workspace {ws} does not exist")
        if not self.stateful:
            child = self.owner.spawn(ws, lim, self.profile, self.mode, stateful=False)
            try:
                frame = child.run(code, lim, wall)
            finally:
                child.kill()
            return self._outcome(frame, lim, wall, ended=False)
        with self._lock:
            restarted = False
            if self._child is None or not self._child.alive:
                if self._child is not None:
                    self._child.kill()
                restarted, self._lost = self._lost or self._child is not None, False
                self._child = self.owner.spawn(ws, lim, self.profile, self.mode, stateful=True)
            frame = self._child.run(code, lim, wall)
            ended = bool(frame["session_dead"])
            out = self._outcome(frame, lim, wall, ended=ended)
            out.result.session_restarted = restarted
            if ended:
                self._child.kill()
                self._child, self._lost = None, True
                out.result.error = ((out.result.error or "the interpreter process ended")
                                    + " (the interpreter state is lost; the next call starts fresh)")
                out.result.ok = False
            return out

    @staticmethod
    def _outcome(frame: dict[str, Any], lim: Limits, wall: float, ended: bool) -> RunOutcome:
        res = to_result(frame, lim.model_copy(update={"wall_s": wall}))
        res.backend = NAME
        report = frame.get("report")
        return RunOutcome(res, report if isinstance(report, dict) else {}, ended)

    async def exec(self, code: str, limits: Limits | None = None, wall_s: float | None = None) -> ExecResult:
        return (await asyncio.to_thread(self._call, code, limits, wall_s)).result

    async def run(self, code: str, wall_s: float | None = None) -> RunOutcome:
        return await asyncio.to_thread(self._call, code, None, wall_s)

    async def read_file(self, name: str, max_bytes: int = MAX_READ_BYTES) -> bytes:
        return await read_file(self.workspace, name, max_bytes)

    async def write_file(self, name: str, data: bytes, read_only: bool = False) -> None:
        await write_file(self.workspace, name, data, read_only)

    def isolation(self) -> dict[str, Any]:
        return self.owner.isolation_report()

    def _stop(self, lost: bool) -> None:
        with self._lock:
            if self._child is not None:
                self._child.kill()
                self._child = None
                self._lost = self._lost or lost

    async def restart(self) -> None:
        """End the interpreter (its state is lost); the next call starts a fresh child."""
        await asyncio.to_thread(self._stop, True)

    async def aclose(self) -> None:
        await asyncio.to_thread(self._stop, False)


PROBE_CODE = r'''
import json, os, resource, socket
r = {"env_keys": sorted(os.environ), "uid": os.getuid(), "setsid": os.getsid(0) == os.getpid()}
r["rlimits"] = {n: resource.getrlimit(getattr(resource, "RLIMIT_" + n))[1]
                for n in ("CPU", "AS", "FSIZE", "NOFILE", "NPROC")}
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    r["socket"] = True
except OSError:
    r["socket"] = False
print("PROBE " + json.dumps(r))
'''


class SubprocessBackend:
    """Plain child processes of the harness; keeps track of the live ones so `shutdown` ends them."""

    name = NAME

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._children: set[ChildProcess] = set()
        self._report: dict[str, Any] | None = None
        self._warned = False

    def start(self, workspace: Path, *, limits: Limits | None = None, stateful: bool = False,
              profile: str | None = None, mode: str = "exec") -> SubprocessSandbox:
        if not self._warned:
            self._warned = True
            log.warning("sandbox: %s", WARNING)
        return SubprocessSandbox(self, workspace, limits or Limits(), stateful, mode,
                                 profile or ("full" if stateful else "image"))

    def spawn(self, workspace: str, limits: Limits, profile: str, mode: str, stateful: bool) -> ChildProcess:
        child = ChildProcess(workspace, limits, profile, mode, stateful, on_kill=self._forget)
        with self._lock:
            self._children.add(child)
        return child

    def _forget(self, child: ChildProcess) -> None:
        with self._lock:
            self._children.discard(child)

    def isolation_report(self) -> dict[str, Any]:
        """What holds, probed in a child (the environment, the rlimits, the network), and that it is not isolated."""
        if self._report is None:
            self._report = self._probe()
        return self._report

    def _probe(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        with tempfile.TemporaryDirectory(prefix="toolsight-probe-") as ws:
            child = self.spawn(ws, Limits(wall_s=30, cpu_s=10), "image", "exec", stateful=False)
            try:
                frame = child.run(PROBE_CODE, Limits(wall_s=30, cpu_s=10), 30.0)
            finally:
                child.kill()
        for line in str(frame.get("stdout", "")).splitlines():
            if line.startswith("PROBE "):
                with contextlib.suppress(ValueError):
                    found = json.loads(line[6:])
        return report_from_probe(found, frame)

    def shutdown(self) -> None:
        """Kill every live child (stateful sandboxes start a fresh one if used again)."""
        with self._lock:
            children = list(self._children)
        for child in children:
            child.kill()


def report_from_probe(found: dict[str, Any], frame: dict[str, Any]) -> dict[str, Any]:
    """The isolation report of the subprocess backend, from its probe: every confinement layer is absent."""
    root = os.geteuid() == 0
    rl = found.get("rlimits") or {}
    finite = {k for k, v in rl.items() if isinstance(v, int) and v >= 0 and v != resource.RLIM_INFINITY}
    allowed = set(clean_env("/"))
    warnings = [WARNING]
    layers: dict[str, Any] = {
        "clean_env": bool(found) and set(found.get("env_keys") or []) <= allowed,
        "setsid": found.get("setsid") is True,
        "rlimits": all(k in finite for k in ("CPU", "AS", "FSIZE", "NOFILE")),
        "rlimit_nproc": ("NPROC" in finite) if not root else "running as root: RLIMIT_NPROC does not bind",
        "uid_separation": False,
        "no_new_privs": False,
        "capabilities_dropped": False if root else "not root (none held)",
        "landlock_fs": False,
        "landlock_tcp": False,
        "landlock_signal_scope": False,
        "landlock_abstract_unix_scope": False,
        "seccomp": False,
        "seccomp_allowlist": False,
        "mount_namespace": False,
        "net_namespace": False,
        "ipc_namespace": False,
        "tmpfs_workspace": False,
        "cgroup_pids": False,
        "cgroup_memory": False,
        "network_closed": found.get("socket") is False,
        "session_freezer": "none: a stateful child's threads keep running between calls",
    }
    if not found:
        warnings.append("the probe child did not report: " + (str(frame.get("stderr", ""))[-500:] or "no output"))
    return {
        "sandbox": NAME,
        "backend": NAME,
        "isolated": False,
        "level": "none",
        "platform": sys.platform,
        "root": root,
        "uid": found.get("uid"),
        "layers": layers,
        "warnings": warnings,
        "warning": WARNING,
    }
