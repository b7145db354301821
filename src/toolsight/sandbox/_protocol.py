"""The sandbox server's wire: framed JSON to the harness, datagram reports from children, the probe.

Imported by `_server.py` (a standalone script: this module must not import toolsight). A report is
untrusted input from model code: `parse_report` bounds its size and turns every decoding failure
(deep nesting included) into `BadReport`, which makes the server kill the child.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
from typing import Any

REPORT_MAX = 1 << 20
OUT_CAP_DEFAULT = 64 * 1024  # bytes of stdout and of stderr read back unless the limits say otherwise


def read_frame(fd: int) -> dict[str, Any] | None:
    head = _read_exact(fd, 4)
    if head is None:
        return None
    (n,) = struct.unpack(">I", head)
    body = _read_exact(fd, n)
    if body is None:
        return None
    val: dict[str, Any] = json.loads(body)
    return val


def _read_exact(fd: int, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def write_frame(fd: int, obj: dict[str, Any]) -> None:
    data = json.dumps(obj).encode()
    payload = struct.pack(">I", len(data)) + data
    view = memoryview(payload)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class BadReport(Exception):
    """The direct child sent something that is not a report: it is killed."""


def parse_report(data: bytes) -> dict[str, Any]:
    """Decode a report datagram; anything malformed (deep nesting, bad JSON, not an object) raises."""
    if len(data) > REPORT_MAX:
        raise BadReport("report too large")
    try:
        val = json.loads(data)
    except (ValueError, RecursionError, UnicodeDecodeError, MemoryError) as exc:
        raise BadReport(f"{type(exc).__name__}") from None
    if not isinstance(val, dict):
        raise BadReport("not an object")
    return val


def report_pair() -> tuple[socket.socket, socket.socket]:
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    parent.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    for s, opt in ((parent, socket.SO_RCVBUF), (child, socket.SO_SNDBUF)):
        with contextlib.suppress(OSError):
            s.setsockopt(socket.SOL_SOCKET, opt, 2 * REPORT_MAX)
        with contextlib.suppress(OSError):  # root may exceed the system maximum
            s.setsockopt(socket.SOL_SOCKET, 33 if opt == socket.SO_RCVBUF else 32, 2 * REPORT_MAX)
    return parent, child



PROBE_CODE = r'''
import json, os, socket, resource, ctypes, errno
r = {}
try:
    with open(@OUTSIDE@, "w") as fh:
        fh.write("x")
    r["landlock_fs"] = False
except PermissionError:
    r["landlock_fs"] = True
except OSError as e:
    r["landlock_fs"] = e.errno == errno.EROFS or e.errno == errno.ENOENT
try:
    open("/proc/self/mountinfo").read()
    r["landlock_fs"] = False
except PermissionError:
    pass
except OSError:
    pass
try:
    os.kill(@PPID@, 0)
    r["signal_scope"] = False
except PermissionError:
    r["signal_scope"] = True
except ProcessLookupError:
    r["signal_scope"] = True
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.close()
    r["seccomp"] = False
except PermissionError:
    r["seccomp"] = True
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(4096)
r["seccomp_allowlist"] = libc.mlock(buf, 4096) != 0 and ctypes.get_errno() == errno.EPERM
status = open("/proc/self/status").read()
capeff = [l.split()[1] for l in status.splitlines() if l.startswith("CapEff")]
r["capabilities_dropped"] = bool(capeff) and int(capeff[0], 16) == 0
r["no_new_privs"] = any(l.split() == ["NoNewPrivs:", "1"] for l in status.splitlines())
r["rlimits"] = {n: resource.getrlimit(getattr(resource, "RLIMIT_" + n))[1]
                for n in ("CPU", "AS", "FSIZE", "NOFILE", "NPROC")}
r["env_keys"] = sorted(os.environ)
r["setsid"] = os.getsid(0) == os.getpid()
r["uid"] = os.getuid()
ns = @NS@
for kind in ("mnt", "net", "ipc", "pid", "user"):
    try:
        r[kind + "ns"] = os.readlink("/proc/self/ns/" + kind) != ns[kind]
    except OSError:
        r[kind + "ns"] = False
r["host_hidden"] = not os.path.exists("/etc/passwd") and not os.path.exists("/home")
st = os.statvfs(".")
r["workspace_bytes"] = st.f_blocks * st.f_frsize
print("PROBE " + json.dumps(r))
'''
