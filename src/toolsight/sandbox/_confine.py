"""Confinement layers the sandbox server applies in its forked children (stdlib + ctypes only).

Imported by `_server.py`, which runs as a standalone script: this module must not import toolsight.
Each function is one layer; the server calls them in order in the child:

  namespaces (mount, net, ipc, uts) → skeleton root (read-only binds of what Python needs, a private
  /proc) → the workspace as an overlay whose upper layer is a size-limited tmpfs → pivot_root →
  uid/gid switch → rlimits → capabilities → no_new_privs → Landlock → seccomp allowlist.

The cgroup helpers (pids, memory, freezer) run in the server. Everything here is Linux-only.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import socket
import stat
import struct
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy's view; at run time the server has put this directory on sys.path
    from toolsight.sandbox._syscalls import (
        IOCTL_ALLOWED,
        SYSCALLS_ALLOWED,
        SYSCALLS_ENOSYS,
        SYSCALLS_ENOTSUP,
    )
else:
    from _syscalls import IOCTL_ALLOWED, SYSCALLS_ALLOWED, SYSCALLS_ENOSYS, SYSCALLS_ENOTSUP

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
LIBC.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
LIBC.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
LIBC.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
LIBC.unshare.argtypes = [ctypes.c_int]
LIBC.setgroups.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint)]

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP = 0x10000000, 0x20000000, 0x40000000, 0x02000000

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
SYS_PIVOT_ROOT = 155

SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446

# Landlock access rights (linux/landlock.h)
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_REMOVE_DIR, FS_REMOVE_FILE, FS_MAKE_CHAR, FS_MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
FS_MAKE_REG, FS_MAKE_SOCK, FS_MAKE_FIFO, FS_MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
FS_MAKE_SYM, FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1
RULE_PATH_BENEATH = 1

# What the child may read. The interpreter prefix, the venv and site-packages are added at run time.
READ_ONLY_PATHS = [
    "/usr", "/lib", "/lib64", "/lib32", "/bin", "/etc/ld.so.cache", "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/etc/fonts", "/etc/localtime", "/etc/mime.types", "/usr/share/fonts",
    "/usr/share/zoneinfo", "/sys/devices/system/cpu",
]
DEVICES = ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"]
# /proc: only these entries (Landlock); not /proc/self/{mountinfo,cgroup,net,environ,...}
PROC_FILES = ["/proc/cpuinfo", "/proc/meminfo", "/proc/self/status", "/proc/self/stat", "/proc/self/statm",
              "/proc/self/maps", "/proc/self/limits", "/proc/self/cmdline", "/proc/self/comm"]
PROC_DIRS = ["/proc/self/fd", "/proc/self/task"]

UID_BASE_DEFAULT = 1_870_000_000  # a reserved range no real account uses; slot uids are base+1..base+SLOTS
UID_SLOTS = 4096
LOCK_DIR = "/run/toolsight-sandbox"


def errno_call(res: int, what: str) -> int:
    if res < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")
    return res


# ----------------------------------------------------------------------------- uid allocation

class UidLease:
    """One uid/gid from the reserved range, held (flock) for the server's lifetime, so concurrent
    harness processes on one machine never hand the same uid to two live sandboxes."""

    def __init__(self, base: int) -> None:
        self.base = base
        self.group = base  # the common sandbox group: copied-back workspace files belong to it
        self.uid = -1
        self._fd = -1
        os.makedirs(LOCK_DIR, mode=0o700, exist_ok=True)
        start = os.getpid() % UID_SLOTS
        for i in range(UID_SLOTS):
            n = 1 + (start + i) % UID_SLOTS
            fd = os.open(os.path.join(LOCK_DIR, f"uid-{base + n}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.uid, self._fd = base + n, fd
            return
        raise OSError(errno.EAGAIN, "no free sandbox uid in the reserved range")

    @property
    def gid(self) -> int:
        return self.uid


def switch_user(uid: int, gid: int, group: int) -> None:
    """setgroups/setresgid/setresuid to the sandbox uid (root drops all capabilities with it)."""
    arr = (ctypes.c_uint * 1)(group)
    errno_call(int(LIBC.setgroups(1, arr)), "setgroups")
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


# ----------------------------------------------------------------------------- namespaces and mounts

def mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    res = LIBC.mount(src.encode() if src else None, target.encode(), fstype.encode() if fstype else None,
                     flags, data.encode() if data else None)
    errno_call(int(res), f"mount {target}")


def unshare(flags: int) -> None:
    errno_call(int(LIBC.unshare(flags)), "unshare")


def locked_flags(path: str) -> int:
    """The mount flags of `path`'s mount that a bind remount must keep (ro, nosuid, nodev, noexec): in a
    user namespace they are locked, and a remount that drops one fails (EPERM)."""
    try:
        f = os.statvfs(path).f_flag
    except OSError:
        return 0
    out = 0
    for st_flag, ms_flag in ((os.ST_RDONLY, MS_RDONLY), (os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV),
                             (os.ST_NOEXEC, MS_NOEXEC)):
        if f & st_flag:
            out |= ms_flag
    return out


def enter_server_namespaces(host_root: bool, user: bool, pid: bool) -> dict[str, Any]:
    """First thing the server does (still single-threaded). A normal user gets a user namespace of its
    own (its uid and gid mapped to 0: root powers over the namespaces it creates, none outside), in
    which mounts and the other namespaces work as for root; root needs none. Then a PID namespace:
    this process forks, the child (pid 1 of the new namespace) becomes the server, and this process
    waits for it and exits with its status (`_relay`). When pid 1 dies, the kernel kills every
    process of the namespace, so nothing of a sandbox outlives its server. Returns what was made."""
    info: dict[str, Any] = {"user_namespace": False, "pid_namespace": False, "host_pid": os.getpid(),
                            "host_uid": os.geteuid(), "errors": {}, "host_ns": {}}
    for kind in ("pid", "user"):
        with contextlib.suppress(OSError):
            info["host_ns"][kind] = os.readlink(f"/proc/self/ns/{kind}")
    if user and not host_root:
        uid, gid = os.geteuid(), os.getegid()
        try:
            unshare(CLONE_NEWUSER)
            _write_map("/proc/self/setgroups", "deny")
            _write_map("/proc/self/uid_map", f"0 {uid} 1")
            _write_map("/proc/self/gid_map", f"0 {gid} 1")
            info["user_namespace"] = True
        except OSError as exc:
            info["errors"]["user_namespace"] = str(exc)
    if pid and (host_root or info["user_namespace"]):
        try:
            unshare(CLONE_NEWPID)
        except OSError as exc:
            info["errors"]["pid_namespace"] = str(exc)
            return info
        r, w = os.pipe()
        child = os.fork()
        if child:
            os.close(r)
            os.write(w, str(child).encode())
            os.close(w)
            _relay(child)
        os.close(w)
        LIBC.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)  # the waiting parent is killed: so is the namespace
        info["host_pid"] = int(os.read(r, 32) or b"0")
        os.close(r)
        if os.getppid() == 0 and info["host_pid"] == 0:
            os._exit(1)
        info["pid_namespace"] = True
    return info


def _write_map(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def _relay(child: int) -> None:
    """The parent left outside the PID namespace: keeps no channel open, waits, exits with the status."""
    import signal as _signal

    for fd in (0, 1):
        with contextlib.suppress(OSError):
            os.close(fd)
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status) else 1)


def nested_user_namespace(inside: int = 65534) -> None:
    """In a child of a rootless server: a user namespace of its own in which the code is `inside` (not 0),
    mapped to the server's (namespace) root; with it, the code holds no capability over the server's
    namespaces. Called before the capabilities are dropped (a new user namespace grants a full set)."""
    unshare(CLONE_NEWUSER)
    _write_map("/proc/self/setgroups", "deny")
    _write_map("/proc/self/uid_map", f"{inside} 0 1")
    _write_map("/proc/self/gid_map", f"{inside} 0 1")


def _mkdirs(path: str, mode: int = 0o755) -> None:
    with contextlib.suppress(FileExistsError):
        os.makedirs(path, mode=mode, exist_ok=True)


OLD_ROOT = "/.old"


def build_skeleton(root: str, ro_paths: list[str], devices: list[str]) -> None:
    """In the server's own (private) mount namespace, once: a tmpfs at `root` holding read-only binds of
    `ro_paths`, the device files and a private /proc (hidepid: other users' processes are invisible).
    Each child copies the namespace (cheap) and pivots into it (`enter_skeleton`)."""
    unshare(CLONE_NEWNS)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,nr_inodes=8192,mode=0755")
    for p in ro_paths:
        target = root + p
        if os.path.isdir(p):
            _mkdirs(target)
        else:
            _mkdirs(os.path.dirname(target))
            with open(target, "a"):
                pass
        mount(p, target, None, MS_BIND | MS_REC)
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | locked_flags(p))
    _mkdirs(root + "/dev")
    for d in devices:
        if not os.path.exists(d):
            continue
        with open(root + d, "a"):
            pass
        mount(d, root + d, None, MS_BIND)
        mount(None, root + d, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NOEXEC | locked_flags(d))
    _mkdirs(root + "/proc")
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible")
    os.mkdir(root + "/.up", 0o700)  # the workspace's upper layer goes here (root only; not on Landlock's list)
    os.mkdir(root + OLD_ROOT, 0o700)


def enter_skeleton(root: str) -> None:
    """In the child's own copy of the server's namespace: pivot into the skeleton. The host tree stays
    at /.old until the request names the workspace; then `cover_host` hides it."""
    errno_call(int(LIBC.syscall(SYS_PIVOT_ROOT, root.encode(), (root + OLD_ROOT).encode())), "pivot_root")
    os.chdir("/")


def cover_host() -> None:
    """Hide the host tree under an empty read-only tmpfs, and make the root read-only.

    Not unmounted: a detach waits for an RCU grace period (about 4 ms here), and this runs on the
    critical path. Covered, it is unreachable by any path; the code cannot unmount the cover (no
    capabilities, and seccomp denies umount); the tree goes away with the namespace after the call."""
    mount("tmpfs", OLD_ROOT, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=2,mode=000")
    # MS_BIND: this mount only; the skeleton's tmpfs is shared with the server and the other children
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def tree_bytes(path: str, cap_entries: int = 20000) -> int:
    """Bytes used by the regular files below `path` (bounded walk)."""
    total = 0
    n = 0
    stack = [path]
    while stack and n < cap_entries:
        d = stack.pop()
        with contextlib.suppress(OSError), os.scandir(d) as it:
            for e in it:
                n += 1
                with contextlib.suppress(OSError):
                    st = e.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(e.path)
                    elif stat.S_ISREG(st.st_mode):
                        total += st.st_blocks * 512
    return total


def enter_workspace(workspace: str, disk_bytes: int, inodes: int, group: int, userxattr: bool = False) -> int:
    """Mount the workspace at its own path: an overlay with the host workspace read-only below and a
    size-limited tmpfs above (the task's remaining quota). Returns an fd of the upper directory.
    `userxattr`: in a user namespace overlayfs keeps its metadata in user.* xattrs (trusted.* needs
    host root)."""
    lower = OLD_ROOT + workspace
    used = tree_bytes(lower)
    size = max(1 << 20, disk_bytes - used)
    up = "/.up"
    mount("tmpfs", up, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"size={size},nr_inodes={inodes},mode=0700")
    upper, work = up + "/u", up + "/w"
    os.mkdir(upper)
    os.mkdir(work)
    # root:group 1775: the child (a member of `group`) creates files but cannot delete or rename
    # files it does not own (the inputs, earlier outputs) — the sticky bit.
    os.chown(upper, 0, group)
    os.chmod(upper, 0o1775)
    _mkdirs(workspace)
    opts = "userxattr,index=off,metacopy=off,xino=off" if userxattr else \
        "index=off,metacopy=off,redirect_dir=off,xino=off"
    mount("overlay", workspace, "overlay", MS_NOSUID | MS_NODEV | MS_NOEXEC,
          f"lowerdir={lower},upperdir={upper},workdir={work},{opts}")
    upper_fd = os.open(upper, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    cover_host()
    return upper_fd


def bind_workspace(workspace: str) -> None:
    """Without the tmpfs layer: the host workspace itself, bound read-write (no quota)."""
    _mkdirs(workspace)
    mount(OLD_ROOT + workspace, workspace, None, MS_BIND)
    mount(None, workspace, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC
          | locked_flags(OLD_ROOT + workspace))
    cover_host()


def send_fds(sock_fd: int, payload: bytes, fds: list[int]) -> None:
    s = socket.socket(fileno=os.dup(sock_fd))
    try:
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))] if fds else []
        s.sendmsg([payload], anc)
    finally:
        s.close()


# ----------------------------------------------------------------------------- capabilities

class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_bounding(last_cap: int) -> None:
    """Lock root out of its privileges for good: securebits, bounding and ambient sets."""
    with contextlib.suppress(Exception):
        LIBC.prctl(PR_SET_SECUREBITS, 0x3, 0, 0, 0)  # SECBIT_NOROOT | SECBIT_NOROOT_LOCKED
    for cap in range(last_cap + 1):
        LIBC.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    LIBC.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def clear_capabilities() -> None:
    hdr = _CapHeader(0x20080522, 0)
    data = (_CapData * 2)()
    errno_call(int(LIBC.capset(ctypes.byref(hdr), ctypes.byref(data))), "capset")


# ----------------------------------------------------------------------------- Landlock

def landlock_abi() -> int:
    res = LIBC.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return int(res) if res > 0 else 0


def fs_mask(abi: int) -> int:
    mask = (1 << 13) - 1
    if abi >= 2:
        mask |= FS_REFER
    if abi >= 3:
        mask |= FS_TRUNCATE
    if abi >= 5:
        mask |= FS_IOCTL_DEV
    return mask


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def apply_landlock(abi: int, ro: list[str], rw: list[str], dev_rw: list[str]) -> None:
    """Restrict this process: read-only `ro`, read-write `rw`, no TCP, scoped signals and sockets."""
    handled = fs_mask(abi)
    fields: list[int] = [handled]
    if abi >= 4:
        fields.append(NET_BIND_TCP | NET_CONNECT_TCP)
    if abi >= 6:
        fields.append(SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL)
    attr = (ctypes.c_uint64 * len(fields))(*fields)
    rs = errno_call(
        int(LIBC.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(8 * len(fields)),
                         ctypes.c_uint32(0))),
        "landlock_create_ruleset",
    )
    read_dir = FS_READ_FILE | FS_READ_DIR
    write_dir = (FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR
                 | FS_MAKE_REG | FS_REFER | FS_TRUNCATE) & handled
    file_bits = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
    try:
        for paths, access in ((ro, read_dir), (rw, write_dir), (dev_rw, FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE)):
            for p in paths:
                try:
                    fd = os.open(p, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue
                try:
                    allowed = access & handled
                    if not os.path.isdir(p):
                        allowed &= file_bits
                    rule = _PathBeneath(allowed, fd)
                    errno_call(int(LIBC.syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_int(rs), ctypes.c_int(RULE_PATH_BENEATH),
                                                ctypes.byref(rule), ctypes.c_uint32(0))), f"landlock_add_rule {p}")
                finally:
                    os.close(fd)
        errno_call(int(LIBC.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(rs), ctypes.c_uint32(0))),
                   "landlock_restrict_self")
    finally:
        os.close(rs)


# ----------------------------------------------------------------------------- seccomp

def build_seccomp(signal_fallback: bool) -> bytes | None:
    """Compile the allowlist filter once (BPF bytes): default deny with EPERM; None without libseccomp.

    The allowlist is data (`_syscalls.py`). On top: `socket` is denied for every family (the
    report channel is made by the server), `socketpair` only for AF_UNIX streams, `clone` without
    namespace flags, `chmod`-family without set-uid/set-gid bits, `sendto` only without an address,
    `prlimit64` only on itself, and a short list of terminal/fd ioctls.
    """
    try:
        import pyseccomp as sc
    except Exception:
        return None
    try:
        f = sc.SyscallFilter(defaction=sc.ERRNO(errno.EPERM))
        with contextlib.suppress(Exception):  # a binary tree of syscall numbers, not a linear scan
            f.set_attr(sc.Attr.CTL_OPTIMIZE, 2)
        allow = sc.ALLOW
        for name in SYSCALLS_ALLOWED:
            with contextlib.suppress(Exception):
                f.add_rule(allow, name)
        for name in SYSCALLS_ENOTSUP:
            with contextlib.suppress(Exception):
                f.add_rule(sc.ERRNO(errno.EOPNOTSUPP), name)
        for name in SYSCALLS_ENOSYS:  # glibc falls back to an older call we can filter by argument
            with contextlib.suppress(Exception):
                f.add_rule(sc.ERRNO(errno.ENOSYS), name)
        f.add_rule(allow, "socketpair", sc.Arg(0, sc.EQ, socket.AF_UNIX), sc.Arg(1, sc.MASKED_EQ, 0xF, socket.SOCK_STREAM))
        ns_flags = CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWCGROUP
        f.add_rule(allow, "clone", sc.Arg(0, sc.MASKED_EQ, ns_flags, 0))
        suid = stat.S_ISUID | stat.S_ISGID
        f.add_rule(allow, "chmod", sc.Arg(1, sc.MASKED_EQ, suid, 0))
        f.add_rule(allow, "fchmod", sc.Arg(1, sc.MASKED_EQ, suid, 0))
        f.add_rule(allow, "fchmodat", sc.Arg(2, sc.MASKED_EQ, suid, 0))
        f.add_rule(allow, "sendto", sc.Arg(4, sc.EQ, 0))
        f.add_rule(allow, "prlimit64", sc.Arg(0, sc.EQ, 0))
        for req in IOCTL_ALLOWED:
            f.add_rule(allow, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, req))
        if signal_fallback:
            # no Landlock signal scope (old kernel, same uid): signals only to its own process group
            for name in ("kill", "tgkill", "tkill"):
                with contextlib.suppress(Exception):
                    f.add_rule(allow, name, sc.Arg(0, sc.EQ, 0))
        else:
            for name in ("kill", "tgkill", "tkill"):
                f.add_rule(allow, name)
        r, w = os.pipe()
        try:
            with os.fdopen(w, "wb", closefd=False) as wf:
                f.export_bpf(wf)
            os.close(w)
            w = -1
            data = b""
            while True:
                chunk = os.read(r, 65536)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(r)
            if w >= 0:
                os.close(w)
        return data
    except Exception:
        return None


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_seccomp(bpf: bytes) -> None:
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = _SockFprog(len(bpf) // 8, ctypes.cast(buf, ctypes.c_void_p))
    errno_call(int(LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0)), "seccomp")


# ----------------------------------------------------------------------------- cgroups (server side)

CG_ROOT = "/sys/fs/cgroup"


def _write(path: str, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


def _read(path: str) -> str:
    with open(path) as fh:
        return fh.read()


class Cgroups:
    """The server's cgroups (v1 controllers here; v2 files where the controller lives there):
    `pids` and `memory` (the server joins both once, so every child starts inside; the memory limit
    counts the code's pages, its tmpfs files and memfds) and `freezer` (a stateful session's child
    joins: its processes are frozen between calls)."""

    def __init__(self, name: str, want: dict[str, bool], delegated: bool = False) -> None:
        self.name = name
        self.paths: dict[str, str] = {}
        base = delegated_base() if delegated else None
        for ctl in ("pids", "memory", "freezer"):
            if not want.get(ctl, True) or (delegated and base is None):
                continue
            path = self._make_delegated(base, ctl) if base is not None else self._make(ctl)
            if path:
                self.paths[ctl] = path

    def _make_delegated(self, base: str, ctl: str) -> str | None:
        """A v2 cgroup beside the server's own, in a subtree delegated to the user (systemd `Delegate=`):
        the parent of the server's cgroup is the user's and enables the controller for its children."""
        try:
            if ctl != "freezer" and ctl not in _read(os.path.join(base, "cgroup.subtree_control")).split():
                return None
            path = os.path.join(base, f"toolsight-{self.name}")
            os.makedirs(path, exist_ok=True)
            probe = {"pids": "pids.max", "memory": "memory.max", "freezer": "cgroup.freeze"}[ctl]
            return path if os.path.exists(os.path.join(path, probe)) else None
        except OSError:
            return None

    def _make(self, ctl: str) -> str | None:
        for base in (os.path.join(CG_ROOT, ctl), os.path.join(CG_ROOT, "unified"), CG_ROOT):
            probe = {"pids": "pids.max", "memory": "memory.limit_in_bytes", "freezer": "freezer.state"}[ctl]
            v2 = {"pids": "pids.max", "memory": "memory.max", "freezer": "cgroup.freeze"}[ctl]
            try:
                if base.endswith(ctl) and os.path.isfile(os.path.join(base, "cgroup.procs")):
                    path = os.path.join(base, "toolsight", self.name)
                    os.makedirs(path, exist_ok=True)
                    if ctl != "freezer" and not os.path.exists(os.path.join(path, probe)):
                        continue
                    return path
                ctrl_file = os.path.join(base, "cgroup.controllers")
                if os.path.isfile(ctrl_file) and (ctl == "freezer" or ctl in _read(ctrl_file).split()):
                    parent = os.path.join(base, "toolsight")
                    os.makedirs(parent, exist_ok=True)
                    with contextlib.suppress(OSError):
                        _write(os.path.join(base, "cgroup.subtree_control"), f"+{ctl}")
                    with contextlib.suppress(OSError):
                        _write(os.path.join(parent, "cgroup.subtree_control"), f"+{ctl}")
                    path = os.path.join(parent, self.name)
                    os.makedirs(path, exist_ok=True)
                    if os.path.exists(os.path.join(path, v2)):
                        return path
            except OSError:
                continue
        return None

    def v2(self, ctl: str) -> bool:
        return os.path.exists(os.path.join(self.paths.get(ctl, "/nonexistent"), "cgroup.controllers"))

    def join(self, ctl: str, pid: int = 0) -> bool:
        path = self.paths.get(ctl)
        if not path:
            return False
        try:
            _write(os.path.join(path, "cgroup.procs"), str(pid or os.getpid()))
            return True
        except OSError:
            return False

    def set_pids_max(self, n: int) -> None:
        with contextlib.suppress(OSError, KeyError):
            _write(os.path.join(self.paths["pids"], "pids.max"), str(n))

    def set_memory_max(self, nbytes: int) -> bool:
        path = self.paths.get("memory")
        if not path:
            return False
        try:
            if self.v2("memory"):
                _write(os.path.join(path, "memory.max"), str(nbytes))
                with contextlib.suppress(OSError):
                    _write(os.path.join(path, "memory.swap.max"), "0")
            else:
                _write(os.path.join(path, "memory.limit_in_bytes"), str(nbytes))
                with contextlib.suppress(OSError):
                    _write(os.path.join(path, "memory.memsw.limit_in_bytes"), str(nbytes))
            return True
        except OSError:
            return False

    def oom_kills(self) -> int:
        path = self.paths.get("memory")
        if not path:
            return 0
        name = "memory.events" if self.v2("memory") else "memory.oom_control"
        with contextlib.suppress(OSError, ValueError):
            for line in _read(os.path.join(path, name)).splitlines():
                k, _, v = line.partition(" ")
                if k == "oom_kill":
                    return int(v)
        return 0

    def freeze(self, on: bool, timeout_s: float = 5.0) -> bool:
        """Freeze (or thaw) every process of the freezer cgroup; True once the kernel says it is done."""
        path = self.paths.get("freezer")
        if not path:
            return False
        try:
            if self.v2("freezer"):
                _write(os.path.join(path, "cgroup.freeze"), "1" if on else "0")
                deadline = time.monotonic() + timeout_s
                while time.monotonic() < deadline:
                    if ("frozen 1" in _read(os.path.join(path, "cgroup.events"))) == on:
                        return True
                    time.sleep(0.0005)
                return False
            _write(os.path.join(path, "freezer.state"), "FROZEN" if on else "THAWED")
            want = "FROZEN" if on else "THAWED"
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                if _read(os.path.join(path, "freezer.state")).strip() == want:
                    return True
                time.sleep(0.0005)
            return False
        except OSError:
            return False

    def procs(self, ctl: str) -> list[int]:
        path = self.paths.get(ctl)
        if not path:
            return []
        try:
            return [int(x) for x in _read(os.path.join(path, "cgroup.procs")).split()]
        except (OSError, ValueError):
            return []

    def remove(self, park_pid: int) -> None:
        for ctl, path in self.paths.items():
            if ctl in ("pids", "memory"):  # the server itself is in it: move it out first
                with contextlib.suppress(OSError):
                    parent = os.path.dirname(os.path.dirname(path))
                    _write(os.path.join(parent, "cgroup.procs"), str(park_pid))
            if ctl == "freezer":
                self.freeze(False, 1.0)
            remove_dir(path)


def delegated_base() -> str | None:
    """The parent of this process's v2 cgroup when the user may create cgroups there (a delegated
    subtree), else None. Only v2 delegates to unprivileged users safely; v1 is root's alone here."""
    try:
        with open("/proc/self/cgroup") as fh:
            rel = next((ln.split("::", 1)[1].strip() for ln in fh if ln.startswith("0::")), None)
    except OSError:
        return None
    if not rel or rel == "/":
        return None
    for mnt in (CG_ROOT, os.path.join(CG_ROOT, "unified")):
        own = os.path.join(mnt, rel.lstrip("/"))
        parent = os.path.dirname(own)
        if os.path.isfile(os.path.join(own, "cgroup.procs")) and os.access(parent, os.W_OK) \
                and os.access(os.path.join(parent, "cgroup.procs"), os.W_OK):
            return parent
    return None


def remove_dir(path: str, timeout_s: float = 2.0) -> None:
    """rmdir a cgroup, waiting briefly for killed processes in it to finish exiting (EBUSY until then)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)


def read_only_paths(extra: list[str]) -> list[str]:
    seen: list[str] = []
    for p in [*extra, *READ_ONLY_PATHS]:
        rp = os.path.realpath(p)
        if os.path.exists(rp) and rp not in seen:
            seen.append(rp)
    # drop paths already covered by a parent in the list (one bind mount each)
    seen.sort(key=len)
    out: list[str] = []
    for p in seen:
        if not any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            out.append(p)
    return out
