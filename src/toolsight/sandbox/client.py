"""The harness side of the forkserver backend: fork-server processes, their pool, and stateful sessions.

A `ServerProcess` is one pre-warmed fork server (`_server.py`), started with a clean environment
(never the harness's, which holds API keys). Requests and replies are length-prefixed JSON frames
over its stdin/stdout. Every request has a reply timeout: a hung or dead server is killed (with
whatever it was running) and replaced, and the call returns a failed result — the task goes on.
`SandboxPool` keeps up to `size` servers (grown on demand, so it matches the run's concurrency),
each serving one task only (its workspace): a task never runs in a child of a server whose heap held
another task's code or output; a fresh server is started ahead for the next task;
everything here is blocking and thread-safe, and the async API runs it in worker threads.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from toolsight.sandbox import situations
from toolsight.sandbox.models import ExecResult, Limits

log = logging.getLogger(__name__)

SERVER_SCRIPT = Path(__file__).with_name("_server.py")
START_TIMEOUT_S = 90.0
REPLY_MARGIN_S = 10.0


class SandboxError(RuntimeError):
    """The sandbox could not be started or used on this machine."""


class ServerGone(SandboxError):
    """The server died or stopped answering; it has been killed."""


def clean_env(scratch: str) -> dict[str, str]:
    """The whole environment a server gets: nothing from the harness."""
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": scratch,
        "TMPDIR": scratch,
        "MPLCONFIGDIR": scratch,
        "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


class ServerProcess:
    """One fork server. Not thread-safe: the pool hands it to one thread at a time."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        if not sys.platform.startswith("linux"):
            raise SandboxError(f"the toolsight sandbox needs Linux (fork server with memfd/pidfd); this is {sys.platform}")
        self.scratch = tempfile.mkdtemp(prefix="toolsight-sandbox-")
        self._err: IO[bytes] = tempfile.TemporaryFile()
        cfg = dict(config or {})
        # a root harness may start its servers as another, unprivileged uid: the normal-user path
        # (bench/sandbox.py measures it beside root's); that uid must be able to read the interpreter
        uid = cfg.pop("server_uid", None)
        as_user: dict[str, Any] = {}
        if uid is not None:
            os.chown(self.scratch, int(uid), int(uid))
            as_user = {"user": int(uid), "group": int(uid), "extra_groups": []}
        self.proc = subprocess.Popen(
            [sys.executable, "-I", str(SERVER_SCRIPT), self.scratch, str(os.getpid()), json.dumps(cfg)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, env=clean_env(self.scratch),
            cwd=self.scratch, start_new_session=True, close_fds=True, **as_user,
        )
        self._buf = bytearray()
        #: the task (its workspace) whose calls this server has served; None while it is fresh. A server
        #: never serves another task: its heap may still hold the code and output of its task's calls.
        self.owner: str | None = None
        self.served: set[str] = set()  # every task it served (one at most; checked by the tests)
        self.last_used = time.monotonic()
        self.child_pid: int | None = None
        self.session_open = False
        self.died_idle = False
        self._killed = False
        try:
            hello = self._read(time.monotonic() + START_TIMEOUT_S)
        except ServerGone as exc:
            self._err.seek(0)
            tail = self._err.read()[-2000:].decode("utf-8", "replace")
            self.kill()
            raise SandboxError(f"sandbox server failed to start: {exc}\n{tail}") from None
        if hello.get("event") != "ready":
            self.kill()
            raise SandboxError(f"sandbox server sent {hello!r} instead of ready")
        self.hello = hello
        self.cgroup: str | None = hello.get("cgroup")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read(self, deadline: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            if len(self._buf) >= 4:
                (n,) = struct.unpack(">I", self._buf[:4])
                if len(self._buf) >= 4 + n:
                    body = bytes(self._buf[4:4 + n])
                    del self._buf[:4 + n]
                    val: dict[str, Any] = json.loads(body)
                    return val
            left = deadline - time.monotonic()
            if left <= 0:
                raise ServerGone("no reply before the deadline")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise ServerGone("the server closed its channel (it died)")
            self._buf += chunk

    def request(self, payload: dict[str, Any], reply_timeout: float) -> dict[str, Any]:
        """Send one request; return its final frame. On any failure the server is killed."""
        assert self.proc.stdin is not None
        data = json.dumps(payload).encode()
        deadline = time.monotonic() + reply_timeout
        self.died_idle = False
        started = False
        try:
            self.proc.stdin.write(struct.pack(">I", len(data)) + data)
            self.proc.stdin.flush()
            while True:
                frame = self._read(deadline)
                if frame.get("event") == "started":
                    self.child_pid = int(frame["pid"])
                    started = True
                    continue
                self.child_pid = None
                return frame
        except (OSError, ServerGone, ValueError) as exc:
            closed = isinstance(exc, OSError) or (isinstance(exc, ServerGone) and "closed" in str(exc))
            self.died_idle = closed and not started
            self.kill()
            raise ServerGone(str(exc)) from None

    def kill(self) -> None:
        """Kill the server and anything it was running (process group, cgroup), and clean up. Idempotent."""
        if self._killed:
            return
        self._killed = True
        log.info("sandbox: killing server %s", self.proc.pid)
        # only signal groups whose leader has not been reaped yet (a reaped pid may belong to someone else)
        if self.proc.returncode is None:
            # in a PID namespace the child's pid is the namespace's number (not the harness's): killing
            # the server kills the namespace, and every process in it, anyway
            in_ns = bool((getattr(self, "hello", None) or {}).get("pid_namespace"))
            for pid in ((None if in_ns else self.child_pid), self.proc.pid):
                if pid:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        self._sweep_cgroup()
        self._close_files()

    def _sweep_cgroup(self) -> None:
        cg = getattr(self, "cgroup", None)
        if not cg:
            return
        for _ in range(200):
            try:
                pids = [int(x) for x in Path(cg, "cgroup.procs").read_text().split()]
            except OSError:
                break
            if not pids:
                break
            for p in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(p, signal.SIGKILL)
            time.sleep(0.005)
        with contextlib.suppress(OSError):
            os.rmdir(cg)
        # the server's other cgroups (memory, freezer): empty once its processes are gone
        for path in (getattr(self, "hello", None) or {}).get("cgroups", {}).values():
            if path != cg:
                for _ in range(100):  # EBUSY while killed processes finish exiting
                    try:
                        os.rmdir(path)
                        break
                    except FileNotFoundError:
                        break
                    except OSError:
                        time.sleep(0.01)

    def stop(self) -> None:
        """Ask the server to exit; kill it if it does not."""
        if self.alive and self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                data = json.dumps({"op": "exit"}).encode()
                self.proc.stdin.write(struct.pack(">I", len(data)) + data)
                self.proc.stdin.flush()
                self.proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
        self.kill()

    def _close_files(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout, self._err):
            if f is not None:
                with contextlib.suppress(OSError):
                    f.close()
        with contextlib.suppress(OSError):
            import shutil

            shutil.rmtree(self.scratch, ignore_errors=True)


def to_result(frame: dict[str, Any], limits: Limits) -> ExecResult:
    """Turn a server's reply frame into an ExecResult."""
    if frame.get("server_error"):
        return ExecResult(ok=False, error=f"sandbox server error: {frame['server_error']}")
    report = frame.get("report") or {}
    stdout, stderr = str(frame.get("stdout", "")), str(frame.get("stderr", ""))
    limit = frame.get("limit")
    error = report.get("error")
    exit_code = frame.get("exit_code")
    if frame.get("bad_report"):
        error = ("the code wrote something malformed to the sandbox's report channel "
                 f"({frame['bad_report']}); it was killed")
    elif frame.get("setup_failed"):
        error = "sandbox setup failed: " + stderr.strip()[-500:]
    elif limit == "wall_time":
        error = f"TimeoutError: the code ran longer than the {limits.wall_s:g} s wall-clock limit and was killed"
    elif limit == "cpu_time":
        error = f"the code used more than {limits.cpu_s} s of CPU time and was killed"
    elif limit == "memory" and frame.get("signal") == "SIGKILL":
        error = f"MemoryError: the code used more than {limits.cgroup_memory_mb} MiB of memory and was killed"
    elif limit == "disk" and not error:
        error = f"the workspace is full (the quota is {limits.disk_mb} MiB)"
    elif frame.get("signal") and not error:
        error = f"the code was killed by {frame['signal']}"
    elif not report and exit_code == 70 and "ended between cells" in stderr:
        error = stderr.strip().splitlines()[-1][:500]
    elif not report and exit_code not in (0, None) and not error:
        error = f"the code exited with status {exit_code}"
    if not isinstance(report, dict):
        report = {}
    if error is not None and not isinstance(error, str):
        error = str(error)
    ok = report.get("ok") is True and limit is None and exit_code in (0, None) and not frame.get("signal")
    if not report and exit_code == 0 and not frame.get("signal"):
        ok = True  # os._exit(0) from the code: no report, clean exit
    return ExecResult(
        ok=ok, stdout=stdout, stderr=stderr,
        stdout_truncated=int(frame.get("stdout_bytes", 0)) > len(stdout.encode()),
        stderr_truncated=int(frame.get("stderr_bytes", 0)) > len(stderr.encode()),
        error=error, exit_code=exit_code, signal=frame.get("signal"), limit=limit,
        duration_s=float(frame.get("duration_s", 0.0)),
        code_s=report.get("code_s") if isinstance(report.get("code_s"), float | int) else None,
        cpu_s=frame.get("cpu_s") if isinstance(frame.get("cpu_s"), float | int) else None,
        files_read=list(frame.get("files_read", [])), files_written=list(frame.get("files_written", [])),
        files_skipped=list(frame.get("files_skipped", [])),
        files_tracked=bool(frame.get("files_tracked", True)),
    )


def _stop_all(servers: list[ServerProcess]) -> None:
    for srv in servers:
        srv.stop()


class SandboxPool:
    """Up to `size` fork servers, started on demand; `run` borrows one per call."""

    def __init__(self, size: int | None = None, config: dict[str, Any] | None = None,
                 reply_margin_s: float = REPLY_MARGIN_S) -> None:
        self.reply_margin_s = reply_margin_s
        self.size = max(1, size or min(8, max(4, os.cpu_count() or 2)))
        self.config = dict(config or {})
        self._idle: list[ServerProcess] = []
        self._all: list[ServerProcess] = []
        self._dedicated: list[ServerProcess] = []
        self._starting = 0
        self._cond = threading.Condition()
        self._closed = False
        self._warming = False
        #: keep one fresh server started ahead for the next task (`_prewarm`)
        self.prewarm = bool(self.config.pop("prewarm_servers", True))
        self.hello: dict[str, Any] | None = None

    # -- borrowing
    def acquire(self, owner: str | None = None) -> ServerProcess:
        """A server for one call of the task `owner` (its workspace): one that served this task before,
        else a fresh one (never one that served another task: see `ServerProcess.owner`)."""
        dead: list[ServerProcess] = []
        retired: list[ServerProcess] = []
        try:
            srv = self._acquire(dead, retired, owner)
        finally:
            for old in dead:  # died while idle: reap it, sweep its cgroup, remove its scratch dir
                old.kill()
            if retired:  # served another task: stopped in the background, never reused
                threading.Thread(target=_stop_all, args=(retired,), daemon=True).start()
        if owner is not None:
            srv.owner = owner
            srv.served.add(owner)
        return srv

    def _take_idle(self, owner: str | None, dead: list[ServerProcess]) -> ServerProcess | None:
        """An idle server of `owner`, else a fresh one (under the lock); dead ones go to `dead`."""
        for srv in list(self._idle):
            if not srv.alive:
                self._idle.remove(srv)
                self._forget(srv)
                dead.append(srv)
        for want in ((owner,) if owner is None else (owner, None)):
            for srv in reversed(self._idle):
                if srv.owner == want:
                    self._idle.remove(srv)
                    return srv
        return None

    def _acquire(self, dead: list[ServerProcess], retired: list[ServerProcess], owner: str | None) -> ServerProcess:
        with self._cond:
            while True:
                if self._closed:
                    raise SandboxError("the sandbox pool has been shut down")
                srv = self._take_idle(owner, dead)
                if srv is not None:
                    return srv
                if len(self._all) + self._starting < self.size:
                    self._starting += 1
                    break
                # full: the least recently used idle server of another task makes room (stopped, never reused)
                if self._retire_one(owner, retired):
                    continue
                self._cond.wait()
        return self._start()

    def _retire_one(self, owner: str | None, retired: list[ServerProcess]) -> bool:
        """Under the lock: take the least recently used idle server of a task other than `owner` out of
        the pool (the caller stops it); False when there is none."""
        others = [s for s in self._idle if s.owner is not None and s.owner != owner]
        if not others:
            return False
        victim = min(others, key=lambda s: s.last_used)
        self._idle.remove(victim)
        self._forget(victim)
        retired.append(victim)
        return True

    def _start(self) -> ServerProcess:
        """Start a server for a slot already counted in `_starting`."""
        try:
            srv = ServerProcess(self.config)
        except BaseException:
            with self._cond:
                self._starting -= 1
                self._cond.notify()
            raise
        with self._cond:
            self._starting -= 1
            self._all.append(srv)
            if self.hello is None:
                self.hello = srv.hello
        return srv

    def _prewarm(self) -> None:
        """Start one fresh server in the background when none is idle, so the next task's first call
        does not wait for a server to start (one above `size`: it only ever serves a new task)."""
        if not self.prewarm:
            return
        retired: list[ServerProcess] = []
        with self._cond:
            if self._closed or any(s.owner is None for s in self._idle) or self._warming:
                return
            if len(self._all) + self._starting >= self.size + 1 and not self._retire_one(None, retired):
                return
            self._starting += 1
            self._warming = True
        if retired:
            threading.Thread(target=_stop_all, args=(retired,), daemon=True).start()

        def run() -> None:
            try:
                srv = self._start()
            except BaseException:
                return
            finally:
                with self._cond:
                    self._warming = False
            self.release(srv)

        threading.Thread(target=run, name="toolsight-sandbox-prewarm", daemon=True).start()

    def release(self, srv: ServerProcess) -> None:
        with self._cond:
            alive = srv.alive
            srv.last_used = time.monotonic()
            if alive and not self._closed:
                self._idle.append(srv)
            else:
                self._forget(srv)
            self._cond.notify()
        if self._closed:
            srv.stop()
        elif not alive:
            srv.kill()
        elif srv.owner is not None:
            # after the call, not before it: the next task's server starts (and an old one stops) while
            # the model takes its turn, never beside the call on the critical path
            self._prewarm()

    def acquire_dedicated(self, profile: str | None = None) -> ServerProcess:
        """A fresh server outside the pool's count, for one stateful session; give it back with `discard`.

        Never a pooled server: a session's child must not descend from a server that ran other
        tasks' calls, and its server is stopped when the session ends.
        """
        with self._cond:
            if self._closed:
                raise SandboxError("the sandbox pool has been shut down")
        config = dict(self.config)
        if profile is not None:
            config["preload"] = profile
        srv = ServerProcess(config)
        with self._cond:
            self._dedicated.append(srv)
            if self.hello is None:
                self.hello = srv.hello
        return srv

    def discard(self, srv: ServerProcess) -> None:
        with self._cond:
            if srv in self._dedicated:
                self._dedicated.remove(srv)
        srv.stop()

    def server_of(self, workspace: Path) -> ServerProcess | None:
        """The (last used) server that serves the task of `workspace`, if any (for checks and debugging)."""
        key = str(Path(workspace).resolve())
        with self._cond:
            mine = [s for s in self._all if s.owner == key]
        return max(mine, key=lambda s: s.last_used) if mine else None

    def _forget(self, srv: ServerProcess) -> None:
        if srv in self._all:
            self._all.remove(srv)

    def resize(self, size: int) -> None:
        with self._cond:
            self.size = max(1, size)
            self._cond.notify_all()

    def warm(self, n: int = 1) -> None:
        """Start servers now (each takes about 1-2 s to import the packages)."""
        got = [self.acquire() for _ in range(min(n, self.size))]
        for s in got:
            self.release(s)

    # -- calls
    def run(self, code: str, workspace: Path, limits: Limits | None = None) -> ExecResult:
        """Run `code` in a fresh confined child, with `workspace` as its only writable directory."""
        lim = limits or Limits()
        ws = str(Path(workspace).resolve())
        if not os.path.isdir(ws):
            raise SandboxError(f"workspace {ws} does not exist")
        for attempt in range(2):
            srv = self.acquire(owner=ws)
            try:
                frame = srv.request({"op": "run", "code": code, "workspace": ws, "limits": lim.wire()},
                                    lim.wall_s + self.reply_margin_s)
            except ServerGone as exc:
                if attempt == 0 and srv.died_idle:
                    continue  # it had died before the code started: nothing ran, use a fresh server
                return ExecResult(ok=False, error=f"the sandbox server stopped answering ({exc}); it was killed "
                                                  "and will be restarted", limit="server_timeout",
                                  server_restarted=True)
            finally:
                self.release(srv)
            return to_result(frame, lim)
        raise AssertionError("unreachable")

    def session(self, workspace: Path, limits: Limits | None = None, mode: str = "exec",
                profile: str | None = None) -> SandboxSession:
        return SandboxSession(self, Path(workspace), limits or Limits(), mode, profile)

    def isolation(self) -> dict[str, Any]:
        if self.hello is None:
            self.warm(1)
        assert self.hello is not None
        return summarize(self.hello)

    def shutdown(self) -> None:
        with self._cond:
            self._closed = True
            servers = list(self._all) + list(self._dedicated)
            self._dedicated.clear()
            self._idle.clear()
            self._all.clear()
            self._cond.notify_all()
        for s in servers:
            s.stop()


class SandboxSession:
    """A stateful interpreter: one long-lived confined child per task; variables persist across runs.

    It holds one server of the pool for its lifetime. If the child dies (a limit, a crash), the next
    run starts a fresh child and says that the state was lost.
    """

    def __init__(self, pool: SandboxPool, workspace: Path, limits: Limits, mode: str = "exec",
                 profile: str | None = None) -> None:
        self.pool = pool
        self.workspace = str(workspace.resolve())
        self.limits = limits
        self.mode = mode
        self.profile = profile
        self._srv: ServerProcess | None = None
        self._lock = threading.Lock()

    def _open(self) -> ServerProcess:
        srv = self._srv
        if srv is None or not srv.alive:
            if srv is not None:
                self.pool.discard(srv)
            srv = self.pool.acquire_dedicated(self.profile)
            self._srv = srv
        if not srv.session_open:
            frame = srv.request({"op": "session_open", "workspace": self.workspace, "limits": self.limits.wire(),
                                 "mode": self.mode}, 30.0)
            if not frame.get("ok"):
                raise SandboxError(str(frame.get("error") or "could not open a sandbox session"))
            srv.session_open = True
        return srv

    def run(self, code: str, wall_s: float | None = None) -> ExecResult:
        return self.run_frame(code, wall_s)[0]

    def run_frame(self, code: str, wall_s: float | None = None) -> tuple[ExecResult, dict[str, Any]]:
        """Run `code` in the session's child: the result and the server's reply frame ({} when the server
        failed before answering: nothing of this call is in it)."""
        with self._lock:
            restarted = self._srv is not None and not self._srv.session_open
            try:
                srv = self._open()
            except ServerGone as exc:
                self._drop()
                return ExecResult(ok=False, error=f"sandbox server failed ({exc})", server_restarted=True), {}
            wall = wall_s or self.limits.wall_s
            try:
                frame = srv.request({"op": "session_run", "code": code, "wall_s": wall}, wall + self.pool.reply_margin_s)
            except ServerGone as exc:
                self._drop()
                return ExecResult(ok=False, error=f"the sandbox server stopped answering ({exc}); it was killed; "
                                                  "the interpreter state is lost", limit="server_timeout",
                                  server_restarted=True), {}
            res = to_result(frame, self.limits.model_copy(update={"wall_s": wall}))
            if frame.get("session_dead"):
                srv.session_open = False
                res.error = (res.error or "the interpreter process ended") + \
                    " (the interpreter state is lost; the next call starts fresh)"
                res.ok = False
            res.session_restarted = restarted
            return res, frame

    def restart(self) -> None:
        """End the session's child (its state is lost); the next run starts a fresh one on the same server."""
        with self._lock:
            srv = self._srv
            if srv is not None and srv.alive and srv.session_open:
                try:
                    srv.request({"op": "session_close"}, 15.0)
                except ServerGone:
                    self._drop()
                    return
            if srv is not None:
                srv.session_open = False

    def _drop(self) -> None:
        if self._srv is not None:
            self.pool.discard(self._srv)
            self._srv = None

    def close(self) -> None:
        with self._lock:
            srv = self._srv
            if srv is None:
                return
            if srv.alive and srv.session_open:
                with contextlib.suppress(ServerGone):
                    srv.request({"op": "session_close"}, 15.0)
            srv.session_open = False
            self._drop()

    async def aclose(self) -> None:
        import asyncio

        await asyncio.to_thread(self.close)


_WARNED: set[str] = set()


def summarize(hello: dict[str, Any]) -> dict[str, Any]:
    """The isolation level in force, from a server's start-up probe; warns loudly about missing layers.

    Three situations (docs/sandbox.md has the table): root (every layer, a dedicated host uid), a
    normal user with user namespaces (the same namespaces, tmpfs and drops in a user namespace of the
    server's own; the code's uid is 65534 in a namespace of its own but the same host uid as the
    harness; cgroups only where one is delegated to the user), and a normal user without them
    (Landlock, seccomp, rlimits and the clean environment only)."""
    probe: dict[str, Any] = hello.get("probe") or {}
    abi = int(hello.get("landlock_abi", 0))
    root = bool(hello.get("is_root"))
    userns = bool(hello.get("user_namespace"))
    nsroot = root or userns  # the server could make namespaces
    fs = probe.get("landlock_fs") is True
    disk = int(probe.get("workspace_bytes") or 0)
    cgroups: dict[str, Any] = hello.get("cgroups") or {}
    no_ns = ("no user namespaces (" + "; ".join(f"{k}: {v}" for k, v in (hello.get("namespace_errors") or {}).items())
             + "): ") if not nsroot else ""

    def ns_layer(key: str, what: str) -> bool | str:
        return (probe.get(key) is True) if nsroot else f"{no_ns}no {what}"

    def cg_layer(ctl: str, fallback: str) -> bool | str:
        if root or ctl in cgroups:
            return probe.get(f"cgroup_{ctl}") is True
        return f"no cgroup delegated to this user: {fallback}"

    if root:
        uid_sep: bool | str = (isinstance(probe.get("uid"), int) and probe.get("uid") not in (0, None)
                               and probe.get("uid") == hello.get("uid"))
    elif userns:
        uid_sep = ("partial: the code is uid 65534 in a user namespace of its own, but the same host uid as the "
                   "harness (a second host uid needs root); Landlock's scopes and seccomp keep signals, ptrace "
                   "and files of the harness out of reach") if probe.get("uid") == 65534 else False
    else:
        uid_sep = f"{no_ns}the code runs as the harness user"
    layers: dict[str, Any] = {
        "clean_env": probe.get("env_keys") == ["HOME", "LANG", "MPLCONFIGDIR", "PATH", "TMPDIR"],
        "setsid": probe.get("setsid") is True,
        "rlimits": bool(probe.get("rlimits")),
        "no_new_privs": probe.get("no_new_privs") is True,
        "capabilities_dropped": (probe.get("capabilities_dropped") is True) if nsroot else "not root (none held)",
        "uid_separation": uid_sep,
        "user_namespace": "not needed as root (a dedicated host uid)" if root
        else (probe.get("userns") is True and userns) if userns else f"{no_ns}none",
        "landlock_fs": fs,
        "landlock_tcp": fs and abi >= 4,
        "landlock_signal_scope": probe.get("signal_scope") is True,
        "landlock_abstract_unix_scope": fs and abi >= 6,
        "seccomp": probe.get("seccomp") is True,
        "seccomp_allowlist": probe.get("seccomp_allowlist") is True,
        "mount_namespace": (probe.get("mntns") is True and probe.get("host_hidden") is True) if nsroot
        else f"{no_ns}no mount namespace",
        "net_namespace": ns_layer("netns", "network namespace"),
        "ipc_namespace": ns_layer("ipcns", "IPC namespace"),
        "pid_namespace": (probe.get("pidns") is True and bool(hello.get("pid_namespace"))) if nsroot
        else f"{no_ns}no PID namespace",
        "tmpfs_workspace": (0 < disk <= (80 << 20)) if nsroot else f"{no_ns}no workspace quota",
        "cgroup_pids": cg_layer("pids", "RLIMIT_NPROC bounds the processes"),
        "cgroup_memory": cg_layer("memory", "RLIMIT_AS bounds each process's address space (not the sum, "
                                            "nor page cache)"),
        "session_freezer": "cgroup freezer" if hello.get("freezer") else "SIGSTOP of the process group",
    }
    warnings: list[str] = []
    if "error" in probe:
        warnings.append(f"the start-up probe failed: {probe['error']}")
    if not fs:
        warnings.append("Landlock is not in force: the code can read and write any file the harness user can")
    if not layers["seccomp"]:
        warnings.append("seccomp is not in force: the code can open network sockets (UDP/TCP) and call ptrace")
    if layers["landlock_signal_scope"] is not True and not layers["seccomp"]:
        warnings.append("signals are not scoped: the code could kill the sandbox server (it is restarted)")
    if root and layers["capabilities_dropped"] is not True:
        warnings.append("capabilities could not be dropped although running as root")
    ns_keys = ("mount_namespace", "net_namespace", "ipc_namespace", "pid_namespace", "tmpfs_workspace",
               "seccomp_allowlist")
    for key in ("uid_separation", *ns_keys, "cgroup_memory"):
        if root and layers[key] is not True:
            warnings.append(f"{key} is not in force although running as root")
    for key in (*ns_keys, "user_namespace", "capabilities_dropped"):
        if userns and layers[key] is not True:
            warnings.append(f"{key} is not in force although the user namespace is")
    if root and layers["cgroup_pids"] is not True:
        warnings.append("no cgroup pids limit as root: RLIMIT_NPROC does not bind root, fork bombs are not contained")
    if not root:  # what a normal user cannot have, said once, precisely
        warnings += [f"{k}: {v}" for k, v in layers.items()
                     if isinstance(v, str) and k not in ("capabilities_dropped", "session_freezer")]
    # "full": every layer root gets (a normal user without a delegated cgroup or a second host uid is
    # "partial", and the warnings say exactly what is missing)
    core = ("landlock_fs", "seccomp", "rlimits", "clean_env", "uid_separation", "seccomp_allowlist",
            "mount_namespace", "net_namespace", "ipc_namespace", "pid_namespace", "tmpfs_workspace",
            "cgroup_memory", "cgroup_pids")
    level = "full" if all(layers[k] is True for k in core) else ("partial" if layers["rlimits"] else "minimal")
    for w in warnings:
        if w not in _WARNED:
            _WARNED.add(w)
            log.warning("sandbox: %s", w)
    return {
        "sandbox": "fork-server",
        "backend": "forkserver",
        # the file system and the network are closed to the code (the level says how much else holds)
        "isolated": layers["landlock_fs"] is True and layers["seccomp"] is True,
        "level": level,
        "platform": sys.platform,
        "landlock_abi": abi,
        "root": root,
        "privilege": "root" if root else ("normal user, user namespaces" if userns else "normal user, no user namespaces"),
        "layers": layers,
        "warnings": warnings,
        # what each situation gets (docs/sandbox.md's table): this run's is the column named by "privilege"
        "situations": {key: dict(zip(situations.SITUATIONS, cells, strict=True))
                       for key, (_, cells) in situations.TABLE.items()},
    }
