"""The sandbox fork server: a standalone script (stdlib + preloaded science packages only).

Started by `toolsight.sandbox.client` with a clean environment as
`python -I _server.py <scratch-dir> <harness-pid> <config-json>`. It imports the packages of its
profile once (`_preload.py`), then serves framed JSON requests on its stdin/stdout. Per request a
child, forked ahead of time (the *spare*), confines itself layer by layer (`_confine.py`):

  setsid → PDEATHSIG → memory cgroup → stdio onto memfds, other fds closed → mount/net/ipc/uts
  namespaces + a read-only skeleton root (all off the critical path, while idle) → [request] →
  the workspace as an overlay over a size-limited tmpfs → pivot_root → inotify handed to the server
  → rlimits → environment cleared → capabilities dropped + a dedicated uid/gid → no_new_privs →
  Landlock → seccomp allowlist → exec(code).

Only the direct child may report (its datagrams' SCM_CREDENTIALS are checked) and a malformed
report kills it (`_protocol.py`). The server enforces the wall clock (SIGKILL to the group, then a cgroup sweep),
copies what the call wrote back into the host workspace (`_workspace.py`) and reaps everything
(it is a child subreaper). Pool servers never run stateful sessions; a stateful session's
processes are frozen between calls. This file must not import toolsight.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import itertools
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any

sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # -I leaves the script's directory out

if TYPE_CHECKING:  # the same modules as mypy finds them; at run time this script never imports toolsight
    from toolsight.sandbox import _confine as cf
    from toolsight.sandbox import _execute as ex
    from toolsight.sandbox._preload import PRELOADED, preload
    from toolsight.sandbox._protocol import (
        OUT_CAP_DEFAULT,
        PROBE_CODE,
        REPORT_MAX,
        BadReport,
        parse_report,
        read_frame,
        report_pair,
        write_frame,
    )
    from toolsight.sandbox._session import Sessions
    from toolsight.sandbox._workspace import WATCH_MASK, CopyBack, Inotify, close_state, start_closer
else:
    import _confine as cf
    import _execute as ex
    from _preload import PRELOADED, preload
    from _protocol import (
        OUT_CAP_DEFAULT,
        PROBE_CODE,
        REPORT_MAX,
        BadReport,
        parse_report,
        read_frame,
        report_pair,
        write_frame,
    )
    from _session import Sessions
    from _workspace import WATCH_MASK, CopyBack, Inotify, close_state, start_closer

NS_FLAGS = {"mountns": cf.CLONE_NEWNS | cf.CLONE_NEWUTS, "netns": cf.CLONE_NEWNET, "ipcns": cf.CLONE_NEWIPC}


# ----------------------------------------------------------------------------- the server

class Server:
    def __init__(self, scratch: str, harness_pid: int, config: dict[str, Any], kernel: Any = None,
                 nsinfo: dict[str, Any] | None = None) -> None:
        self.config = config
        self.scratch = scratch
        self.harness_pid = harness_pid
        self.kernel = kernel
        self.nsinfo = nsinfo or {}
        self.pid = os.getpid()  # in the server's PID namespace (1 when it has one)
        self.host_pid = int(self.nsinfo.get("host_pid") or self.pid)  # as the harness sees it (names, cgroups)
        self.host_root = int(self.nsinfo.get("host_uid", os.geteuid())) == 0
        #: a normal user's server in a user namespace of its own: root there (mounts, namespaces), not outside
        self.userns = bool(self.nsinfo.get("user_namespace"))
        self.is_root = os.geteuid() == 0  # root powers in its namespace: host root, or a user namespace
        # each layer can be switched off ({"<layer>": false}) to test the degraded path and to measure
        # its cost; a switched-off layer is reported as missing

        def on(key: str) -> bool:
            return bool(config.get(key, True))

        self.abi = cf.landlock_abi() if on("landlock") else 0
        try:
            with open("/proc/sys/kernel/cap_last_cap") as fh:
                self.last_cap = int(fh.read())
        except OSError:
            self.last_cap = 40
        import site

        extra = [sys.base_prefix, sys.prefix, sys.exec_prefix]
        with contextlib.suppress(Exception):
            extra += site.getsitepackages()
        self.ro_paths = cf.read_only_paths(extra)
        self.bpf = cf.build_seccomp(signal_fallback=self.abi < 6) if on("seccomp") else None
        self.lease: cf.UidLease | None = None
        self.uid_error = ""
        if self.host_root and on("uid"):
            try:
                self.lease = cf.UidLease(int(config.get("uid_base", cf.UID_BASE_DEFAULT)))
            except OSError as exc:
                self.uid_error = str(exc)
        self.ns_flags = 0
        if self.is_root:
            for key, flag in NS_FLAGS.items():
                if on(key):
                    self.ns_flags |= flag
        self.mountns = bool(self.ns_flags & cf.CLONE_NEWNS)
        self.tmpfs = self.mountns and on("tmpfs")
        self.root_mnt = os.path.join(scratch, "root")
        os.makedirs(self.root_mnt, exist_ok=True)
        if self.mountns:
            try:
                cf.build_skeleton(self.root_mnt, self.ro_paths, cf.DEVICES)
            except OSError:
                self.ns_flags &= ~(cf.CLONE_NEWNS | cf.CLONE_NEWUTS)
                self.mountns = self.tmpfs = False
        self.cg: cf.Cgroups | None = None
        if (self.host_root or self.userns) and on("cgroup"):
            # as root, the machine's cgroups; as a normal user, only a cgroup delegated to the user (v2)
            cg = cf.Cgroups(str(self.host_pid), {"pids": True, "memory": on("cgroup_memory"),
                                                  "freezer": on("freezer")}, delegated=not self.host_root)
            self.cg = cg if cg.paths else None
            cg.set_pids_max(int(config.get("pids_max", 128)) + 1)
            # The server joins its pids and memory cgroups once, so every child starts inside: moving a
            # process between cgroups costs ~10 ms here (an RCU-synchronised write lock). pids.max has
            # +1 for the server; its own memory after joining (a few MB) counts against the limit too.
            for ctl in ("pids", "memory"):
                if ctl in cg.paths and not cg.join(ctl):
                    cg.paths.pop(ctl, None)
        self.memory_limit = -1
        self.nproc_base = self._count_user_procs()
        self.out_fd = os.memfd_create("toolsight-stdout", 0)
        self.err_fd = os.memfd_create("toolsight-stderr", 0)
        self.sessions = Sessions(self)
        self.spare: dict[str, Any] | None = None
        self.ns_ids = {k: _ns_id("self", k) for k in ("mnt", "net", "ipc")}
        host_ns = self.nsinfo.get("host_ns") or {}
        for kind in ("pid", "user"):  # the code's PID and user namespaces differ from the harness's
            self.ns_ids[kind] = str(host_ns.get(kind) or _ns_id("self", kind))
        cf.LIBC.prctl(cf.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    def _count_user_procs(self) -> int:
        uid = os.getuid()
        n = 0
        for d in os.listdir("/proc"):
            if d.isdigit():
                with contextlib.suppress(OSError):
                    if os.stat(f"/proc/{d}").st_uid == uid:
                        n += 1
        return n

    # ---------------------------------------------------------------- the child, step by step
    def _prepare(self, report_fd: int, ctrl_fd: int, setup_fd: int, cgroups: tuple[str, ...]) -> None:
        """Child, before the request (off the critical path): own session, cgroups, stdio, namespaces."""
        os.setsid()
        cf.LIBC.prctl(cf.PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != self.pid:
            os._exit(70)
        if self.cg is not None:
            for ctl in cgroups:
                self.cg.join(ctl)
        with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")  # under memory pressure the kernel kills model code first
        null = os.open("/dev/null", os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(self.out_fd, 1)
        os.dup2(self.err_fd, 2)
        os.dup2(report_fd, 3)
        os.dup2(ctrl_fd, 4)
        os.dup2(setup_fd, 5)
        os.closerange(6, 1 << 16)
        if self.ns_flags:
            cf.unshare(self.ns_flags)
            if self.mountns:
                cf.enter_skeleton(self.root_mnt)

    def _enter(self, workspace: str, limits: dict[str, Any]) -> None:
        """Child, on the request: workspace, inotify (handed to the server), then every restriction."""
        upper = -1
        if self.tmpfs:
            upper = cf.enter_workspace(workspace, int(limits.get("disk_mb", 512)) << 20,
                                       int(limits.get("disk_files", 4096)), self.lease.group if self.lease else 0,
                                       userxattr=self.userns)
        elif self.mountns:
            cf.bind_workspace(workspace)
        if self.lease and not self.tmpfs:
            # no overlay: the code writes the workspace itself, as the sandbox group (set-gid directory,
            # group-writable files), and cannot remove what it does not own (sticky)
            os.chown(workspace, 0, self.lease.group)
            os.chmod(workspace, 0o3775)
            os.umask(0o002)
        os.chdir(workspace)
        ino = int(cf.LIBC.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        fds = []
        if ino >= 0 and cf.LIBC.inotify_add_watch(ino, b".", WATCH_MASK) >= 0:
            fds.append(ino)
        if upper >= 0:
            fds.append(upper)
        kinds = (["inotify"] if ino in fds else []) + (["upper"] if upper >= 0 else [])
        # on a socket of its own, which the server reads after the call: no extra wake-up on the critical path
        cf.send_fds(5, json.dumps({"kind": "setup", "fds": kinds}).encode(), fds)
        os.close(5)
        for fd in (ino, upper):
            if fd >= 0:
                os.close(fd)
        self._restrict(workspace, limits)

    def _restrict(self, workspace: str, limits: dict[str, Any]) -> None:
        cpu = int(limits.get("cpu_s", 20))
        mem = int(limits.get("memory_mb", 4096)) << 20
        fsize = int(limits.get("file_mb", 64)) << 20
        nofile = int(limits.get("open_files", 256))
        nproc = int(limits.get("processes", 64))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # a leased uid is ours alone, so RLIMIT_NPROC counts exactly this call's processes (it does not
        # bind root at all; without a separate uid it counts all of the harness user's processes)
        np_lim = self.nproc_base + nproc if not self.host_root else nproc
        resource.setrlimit(resource.RLIMIT_NPROC, (np_lim, np_lim))
        os.environ.clear()
        os.environ.update({"HOME": workspace, "TMPDIR": workspace, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                           "MPLCONFIGDIR": workspace})
        tempfile.tempdir = workspace
        if self.is_root:
            if self.userns:  # before the drops: a new user namespace starts with every capability
                cf.nested_user_namespace()
            cf.drop_bounding(self.last_cap)
            if self.lease:
                cf.switch_user(self.lease.uid, self.lease.gid, self.lease.group)
            cf.clear_capabilities()
        cf.errno_call(int(cf.LIBC.prctl(cf.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)), "no_new_privs")
        if self.abi >= 1:
            ro = [*self.ro_paths, "/dev/urandom", "/dev/zero", "/dev/random", *cf.PROC_FILES, *cf.PROC_DIRS]
            cf.apply_landlock(self.abi, ro, [workspace], ["/dev/null"])
        if self.bpf is not None:
            cf.load_seccomp(self.bpf)
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)

    def _namespace(self, workspace: str) -> dict[str, Any]:
        return ex.namespace(workspace, PRELOADED)

    @staticmethod
    def _exec(code: str, ns: dict[str, Any]) -> dict[str, Any]:
        return ex.run(code, ns)

    @staticmethod
    def _send_report(rep: dict[str, Any]) -> None:
        with contextlib.suppress(Exception):
            ru = resource.getrusage(resource.RUSAGE_SELF)
            rep["cpu_s"] = round(ru.ru_utime + ru.ru_stime, 4)
        with contextlib.suppress(Exception):
            # ensure_ascii: a lone surrogate in an error text travels as an escape, never breaks the channel
            os.write(3, json.dumps({"kind": "report", **rep}, default=str).encode()[:REPORT_MAX])

    # ---------------------------------------------------------------- server side of a call
    def _reset_outputs(self) -> None:
        for fd in (self.out_fd, self.err_fd):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)

    def _read_outputs(self, cap: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, fd in (("stdout", self.out_fd), ("stderr", self.err_fd)):
            size = os.fstat(fd).st_size
            data = os.pread(fd, min(size, cap), 0)
            out[key] = data.decode("utf-8", errors="replace")
            out[key + "_bytes"] = size
        return out

    def _collect(self, sock: socket.socket, pid: int, state: dict[str, Any]) -> dict[str, Any] | None:
        """Read every pending datagram: the direct child's setup (its fds) and report. Raises BadReport."""
        rep: dict[str, Any] | None = None
        ucred = struct.calcsize("3i")
        fd_space = socket.CMSG_SPACE(8 * 4)
        while True:
            try:
                data, anc, _flags, _addr = sock.recvmsg(REPORT_MAX + 1, socket.CMSG_SPACE(ucred) + fd_space,
                                                        socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break
            sender = None
            fds: list[int] = []
            for level, typ, cdata in anc:
                if level == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS:
                    sender = struct.unpack("3i", cdata[:ucred])[0]
                elif level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    n = len(cdata) // 4
                    fds.extend(struct.unpack(f"{n}i", cdata[: 4 * n]))
            if sender != pid:
                for fd in fds:  # not from the direct child: ignored, and its fds closed
                    with contextlib.suppress(OSError):
                        os.close(fd)
                continue
            try:
                val = parse_report(data)
            except BadReport:
                for fd in fds:
                    with contextlib.suppress(OSError):
                        os.close(fd)
                raise
            if val.get("kind") == "setup" and "setup" not in state:
                state["setup"] = True
                raw_kinds = val.get("fds")
                kinds: list[Any] = raw_kinds if isinstance(raw_kinds, list) else []
                for kind, fd in zip(kinds, fds, strict=False):
                    if kind == "inotify" and "inotify" not in state:
                        state["inotify"] = Inotify(fd)
                    elif kind == "upper" and "upper" not in state:
                        state["upper"] = fd
                    else:
                        os.close(fd)
                for fd in fds[len(kinds):]:
                    os.close(fd)
                continue
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            if val.get("kind") == "report":
                rep = val
        return rep

    def _kill_group(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)

    def _kill_child(self, pid: int) -> tuple[int, float]:
        """SIGKILL the child's process group; return its wait status and CPU seconds."""
        self._kill_group(pid)
        return self._wait4(pid)

    @staticmethod
    def _wait4(pid: int) -> tuple[int, float]:
        try:
            _, status, ru = os.wait4(pid, 0)
        except ChildProcessError:
            return 0, 0.0
        return status, round(ru.ru_utime + ru.ru_stime, 4)

    def _kill_tree(self, pid: int) -> None:
        self._kill_group(pid)
        self._sweep_cgroup()
        self._reap()

    def _sweep_cgroup(self, wait: bool = True) -> None:
        if self.cg is None or "pids" not in self.cg.paths:
            return
        for _ in range(2000):
            keep = {self.pid, self.spare["pid"] if self.spare else -1,
                    self.session["pid"] if self.session else -1}
            pids = [p for p in self.cg.procs("pids") if p not in keep]
            if not pids:
                return
            for p in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(p, signal.SIGKILL)
            self._reap()
            if not wait:
                return
            time.sleep(0.0002)

    @staticmethod
    def _reap() -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def _wait(self, pidfd: int, deadline: float, sock: socket.socket) -> str:
        """Wait for the child to exit, to send a datagram, or for the deadline."""
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        ready, _, _ = select.select([pidfd, sock.fileno()], [], [], left)
        if sock.fileno() in ready:
            return "message"
        if pidfd in ready:
            return "exit"
        return "timeout"

    @staticmethod
    def _status_fields(status: int | None, limits: dict[str, Any], timed_out: bool,
                       report: dict[str, Any] | None, outs: dict[str, Any], oom: bool) -> dict[str, Any]:
        return ex.status_fields(status, limits, timed_out, report, outs, oom)

    def _set_memory(self, limits: dict[str, Any]) -> None:
        if self.cg is None:
            return
        want = int(limits.get("cgroup_memory_mb", 2048)) << 20
        if want != self.memory_limit and self.cg.set_memory_max(want):
            self.memory_limit = want

    def _files(self, state: dict[str, Any], workspace: str, copier: CopyBack | None) -> dict[str, Any]:
        ino: Inotify | None = state.get("inotify")
        files = ino.collect() if ino else {"files_read": [], "files_written": [], "files_tracked": False}
        if copier is not None:
            got = copier.run()
            files["files_written"] = got["copied"]
            files["files_skipped"] = got["skipped"]
        return files

    # ---------------------------------------------------------------- the spare
    def ensure_spare(self, now: bool = False) -> None:
        """Fork the next call's child ahead of time (`now`: because a call needs it immediately)."""
        if self.spare is not None or (not now and (self.session is not None or not self.config.get("prefork", True))):
            return
        parent_sock, child_sock = report_pair()
        setup_parent, setup_child = report_pair()
        ctrl_r, ctrl_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                parent_sock.close()
                setup_parent.close()
                os.close(ctrl_w)
                t_fork = time.monotonic()
                self._prepare(child_sock.fileno(), ctrl_r, setup_child.fileno(), ())
                t_ready = time.monotonic()
                if not now:
                    self._prefault(int(self.config.get("prefault_mb", 64)), 4)
                req = read_frame(4)
                if req is None:
                    os._exit(0)
                t_req = time.monotonic()
                os.close(4)
                self._enter(req["workspace"], req.get("limits", {}))
                setup_s = time.monotonic() - t_req
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    os.write(2, f"sandbox setup failed: {type(exc).__name__}: {exc}\n".encode())
                os._exit(71)
            rep = self._exec(req["code"], self._namespace(req["workspace"]))
            rep["setup_s"] = round(setup_s, 6)
            rep["prepare_s"] = round(t_ready - t_fork, 6)
            rep["idle_s"] = round(t_req - t_ready, 6)
            self._send_report(rep)
            os._exit(0 if rep.get("ok") else 1)
        child_sock.close()
        setup_child.close()
        os.close(ctrl_r)
        self.spare = {"pid": pid, "sock": parent_sock, "setup": setup_parent, "ctrl": ctrl_w,
                      "pidfd": os.pidfd_open(pid)}

    @staticmethod
    def _prefault(mb: int, ctrl_fd: int) -> None:
        """While idle, grow the malloc heap by up to `mb` MiB of touched pages and keep it: the code's
        numpy arrays then reuse it instead of faulting fresh pages. Stops as soon as a request is waiting."""
        if mb <= 0:
            return
        cf.LIBC.mallopt(-3, 256 << 20)  # M_MMAP_THRESHOLD: big arrays come from the heap...
        cf.LIBC.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: ...which is not given back
        cf.LIBC.malloc.restype = ctypes.c_void_p
        cf.LIBC.free.argtypes = [ctypes.c_void_p]
        chunk = 512 << 10  # small steps: a waiting request is noticed within ~0.1 ms
        ptrs = []
        for _ in range((mb << 20) // chunk):
            ready, _, _ = select.select([ctrl_fd], [], [], 0)
            if ready:
                break
            ptr = cf.LIBC.malloc(ctypes.c_size_t(chunk))
            if not ptr:
                break
            ctypes.memset(ptr, 1, chunk)
            ptrs.append(ptr)
        for ptr in reversed(ptrs):
            cf.LIBC.free(ptr)

    def _take_spare(self) -> dict[str, Any] | None:
        spare, self.spare = self.spare, None
        if spare is None:
            return None
        ready, _, _ = select.select([spare["pidfd"]], [], [], 0)
        if ready:  # it died while waiting
            with contextlib.suppress(ChildProcessError):
                os.waitpid(spare["pid"], 0)
            self._drop_spare(spare)
            return None
        return spare

    @staticmethod
    def _drop_spare(spare: dict[str, Any]) -> None:
        for fd in (spare["ctrl"], spare["pidfd"]):
            with contextlib.suppress(OSError):
                os.close(fd)
        spare["sock"].close()
        spare["setup"].close()

    def kill_spare(self) -> None:
        spare, self.spare = self.spare, None
        if spare is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(spare["pid"], signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(spare["pid"], 0)
            self._drop_spare(spare)

    # ---------------------------------------------------------------- a stateless call
    def run(self, req: dict[str, Any], announce: bool = True) -> dict[str, Any]:
        marks = [time.monotonic()]
        workspace = req["workspace"]
        limits = req.get("limits", {})
        wall = float(limits.get("wall_s", 30))
        cap = int(limits.get("output_bytes", OUT_CAP_DEFAULT))
        self._sweep_cgroup(wait=False)  # whatever the previous call left is killed before this one starts
        self._reap()
        self._reset_outputs()
        self._set_memory(limits)
        oom0 = self.cg.oom_kills() if self.cg else 0
        t0 = time.monotonic()
        marks.append(t0)
        spare = self._take_spare()
        if spare is None:
            self.ensure_spare(now=True)
            spare = self._take_spare()
        if spare is None:
            raise RuntimeError("could not fork a sandbox child")
        pid, sock, pidfd, setup = spare["pid"], spare["sock"], spare["pidfd"], spare["setup"]
        with contextlib.suppress(OSError):
            write_frame(spare["ctrl"], {"workspace": workspace, "code": req["code"], "limits": limits})
        os.close(spare["ctrl"])
        if announce:  # after the request: the child starts while the harness notes its pid
            write_frame(OUT_FD, {"event": "started", "pid": pid})
        state: dict[str, Any] = {}
        report: dict[str, Any] | None = None
        status: int | None = None
        cpu: float | None = None
        timed_out = False
        bad = ""
        try:
            while True:
                event = self._wait(pidfd, t0 + wall, sock)
                if event == "message":
                    report = self._collect(sock, pid, state)
                    if report is None:
                        continue  # a setup message, or not from the direct child
                    # reported: kill the group now and let the kernel tear it down while we answer
                    self._kill_group(pid)
                    break
                if event == "timeout":
                    timed_out = True
                    status, cpu = self._kill_child(pid)
                else:
                    status, cpu = self._wait4(pid)
                break
            if report is None:
                report = self._collect(sock, pid, state)
            self._collect(setup, pid, state)
        except BadReport as exc:
            bad = str(exc)
            report = None
            self._kill_group(pid)
            status, cpu = self._wait4(pid)
            with contextlib.suppress(BadReport):
                self._collect(setup, pid, state)
        except BaseException:
            self._kill_group(pid)  # any failure while reading the child ends the child
            raise
        finally:
            os.close(pidfd)
            sock.close()
            setup.close()
        duration = time.monotonic() - t0
        marks.append(time.monotonic())
        if status is not None:
            self._kill_tree(pid)  # leftovers (background processes) die with the call
        outs = self._read_outputs(cap)
        copier = CopyBack(state["upper"], workspace, self.lease.group if self.lease else None) if "upper" in state else None
        try:
            files = self._files(state, workspace, copier)
        finally:
            close_state(state)
        oom = bool(self.cg and self.cg.oom_kills() > oom0)
        res = {"event": "done", **outs, **files, "duration_s": round(duration, 6), "report": report}
        res.update(self._status_fields(status, limits, timed_out, report, outs, oom))
        if report and isinstance(report.get("cpu_s"), float | int):
            res["cpu_s"] = report["cpu_s"]
        if cpu is not None:
            res["cpu_s"] = cpu
        if status is None and report is not None:
            res["exit_code"] = 0 if report.get("ok") else 1
        if status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 71:
            res["setup_failed"] = True
        if bad:
            res["bad_report"] = bad
            res["limit"] = res["limit"] or "killed"
        marks.append(time.monotonic())
        # ms spent before the child got the request, until its report, and after (for bench/sandbox.py)
        res["timeline"] = [round((b - a) * 1000, 2) for a, b in itertools.pairwise(marks)]
        return res

    # ---------------------------------------------------------------- stateful sessions (`_session.py`)
    def session_open(self, req: dict[str, Any]) -> dict[str, Any]:
        return self.sessions.open(req)

    def session_run(self, req: dict[str, Any]) -> dict[str, Any]:
        return self.sessions.run(req)

    def session_close(self) -> dict[str, Any]:
        return self.sessions.close()

    @property
    def session(self) -> dict[str, Any] | None:
        return self.sessions.current

    # ---------------------------------------------------------------- probing
    def probe(self) -> dict[str, Any]:
        ws = os.path.join(self.scratch, "probe-ws")
        os.makedirs(ws, exist_ok=True)
        outside = os.path.join(self.scratch, "probe-outside.txt")
        code = (PROBE_CODE.replace("@OUTSIDE@", repr(outside)).replace("@PPID@", str(self.pid))
                .replace("@NS@", repr(self.ns_ids)))
        self.ensure_spare(now=True)
        spare_pid = self.spare["pid"] if self.spare else -1
        in_cg: dict[str, bool] = {}
        deadline = time.monotonic() + 2
        while self.cg is not None and time.monotonic() < deadline:  # the spare joins right after its fork
            in_cg = {ctl: spare_pid in self.cg.procs(ctl) for ctl in ("pids", "memory")}
            if in_cg["memory"] or "memory" not in self.cg.paths:
                break
            time.sleep(0.001)
        res = self.run({"code": code, "workspace": ws, "limits": {"wall_s": 20, "cpu_s": 10, "disk_mb": 64}},
                       announce=False)
        found: dict[str, Any] = {}
        for line in str(res.get("stdout", "")).splitlines():
            if line.startswith("PROBE "):
                with contextlib.suppress(ValueError):
                    found = json.loads(line[6:])
        if not found:
            found = {"error": (str(res.get("stderr", "")) or "probe produced no output")[-800:]}
        found["cgroup_pids"] = bool(in_cg.get("pids"))
        found["cgroup_memory"] = bool(in_cg.get("memory")) and self.memory_limit > 0
        return {
            "landlock_abi": self.abi,
            "seccomp_built": self.bpf is not None,
            "is_root": self.host_root,
            "pid": self.host_pid,
            "ns_pid": self.pid,
            "user_namespace": self.userns,
            "pid_namespace": bool(self.nsinfo.get("pid_namespace")),
            "namespace_errors": dict(self.nsinfo.get("errors") or {}),
            "cgroup": self.cg.paths.get("pids") if self.cg else None,
            "cgroups": dict(self.cg.paths) if self.cg else {},
            "freezer": bool(self.cg and "freezer" in self.cg.paths),
            "uid": self.lease.uid if self.lease else None,
            "uid_error": self.uid_error,
            "probe": found,
            "ro_paths": self.ro_paths,
        }

    def cleanup(self) -> None:
        self.kill_spare()
        self.session_close()
        if self.cg is not None:
            self._sweep_cgroup()
            self.cg.remove(self.pid)


def _ns_id(pid: str, kind: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/{kind}")
    except OSError:
        return ""


OUT_FD = 1


def main() -> int:
    global OUT_FD
    scratch, harness_pid = sys.argv[1], int(sys.argv[2])
    config: dict[str, Any] = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    # first, while single-threaded: a normal user's user namespace, then the PID namespace (this
    # process forks; the child is pid 1 there and goes on below as the server)
    nsinfo = cf.enter_server_namespaces(os.geteuid() == 0, bool(config.get("userns", True)),
                                        bool(config.get("pidns", True)))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    in_fd = os.dup(0)
    OUT_FD = os.dup(1)
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    kernel = preload(str(config.get("preload", "image")))
    start_closer()
    server = Server(scratch, harness_pid, config, kernel, nsinfo)
    gc.collect()
    gc.freeze()  # children then never touch (and copy) the preloaded objects' GC headers
    try:
        write_frame(OUT_FD, {"event": "ready", "pid": server.pid, **server.probe()})
        server.ensure_spare()
        while True:
            rep = _serve_one(server, in_fd)
            if rep is None:
                break
            write_frame(OUT_FD, rep)
            # nothing of the request or reply may be reachable from the next child: both are dropped
            # before it is forked (model code can walk frames up to this loop)
            del rep
            server.ensure_spare()  # after the reply: the next call finds a child ready
    except BrokenPipeError:
        pass
    finally:
        server.cleanup()
    return 0


def _serve_one(server: Server, in_fd: int) -> dict[str, Any] | None:
    """Read one request and answer it. Its locals die with this frame, before the next fork."""
    req = read_frame(in_fd)
    if req is None or req.get("op") == "exit":
        return None
    op = req.get("op")
    try:
        if op == "run":
            return server.run(req)
        if op == "session_open":
            return server.session_open(req)
        if op == "session_run":
            return server.session_run(req)
        if op == "session_close":
            return server.session_close()
        if op == "ping":
            return {"event": "done", "ok": True}
        return {"event": "done", "error": f"unknown op {op!r}"}
    except Exception as exc:
        return {"event": "done", "server_error": f"{type(exc).__name__}: {exc}"}


if __name__ == "__main__":
    sys.exit(main())
