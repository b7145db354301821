"""What a sandboxed call read and wrote, seen from the server (stdlib only; no toolsight imports).

`Inotify` parses the events of an inotify instance the child created on its workspace before it
confined itself (and then closed: seccomp denies it any further inotify call), so the code cannot
hide or forge them. `copy_back` moves what a call wrote into its overlay's upper layer (a
size-limited tmpfs) into the host workspace: only regular files and directories, only names that
are valid UTF-8, never over a read-only host file (inputs and registered images), never set-uid
bits, with caps on count and bytes. The host workspace is written only here, by the server.
"""

from __future__ import annotations

import contextlib
import os
import queue
import stat
import struct
import threading
from typing import Any

IN_ACCESS, IN_MODIFY, IN_CLOSE_WRITE, IN_CLOSE_NOWRITE, IN_OPEN = 0x1, 0x2, 0x8, 0x10, 0x20
IN_MOVED_TO, IN_CREATE, IN_Q_OVERFLOW, IN_ISDIR = 0x80, 0x100, 0x4000, 0x40000000
WATCH_MASK = IN_ACCESS | IN_MODIFY | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE | IN_MOVED_TO | IN_CREATE

MAX_DEPTH = 8


def valid_name(name: str) -> bool:
    """A file name that is valid UTF-8, printable and not absurdly long."""
    try:
        raw = name.encode("utf-8")
    except UnicodeEncodeError:  # a non-UTF-8 byte, decoded by os as a lone surrogate
        return False
    return 0 < len(raw) <= 255 and name.isprintable()


class Inotify:
    """Events of one inotify fd: which top-level workspace files were read or written."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.set_blocking(fd, False)

    def collect(self) -> dict[str, Any]:
        read: list[str] = []
        written: list[str] = []
        overflow = False
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except (BlockingIOError, OSError):
                break
            if not buf:
                break
            off = 0
            while off + 16 <= len(buf):
                _wd, mask, _cookie, ln = struct.unpack_from("iIII", buf, off)
                raw = buf[off + 16: off + 16 + ln].split(b"\0", 1)[0]
                off += 16 + ln
                if mask & IN_Q_OVERFLOW:
                    overflow = True
                    continue
                if not raw or mask & IN_ISDIR:
                    continue
                name = raw.decode("utf-8", "backslashreplace")
                if mask & (IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE):
                    if name not in written and len(written) < 4096:
                        written.append(name)
                elif mask & (IN_ACCESS | IN_CLOSE_NOWRITE) and name not in read and len(read) < 4096:
                    read.append(name)
        return {"files_read": read, "files_written": written, "files_tracked": not overflow}

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _copy_file(src_fd: int, dst_fd: int, size: int) -> None:
    left = size
    while left > 0:
        try:
            n = os.copy_file_range(src_fd, dst_fd, min(left, 1 << 24))
        except OSError:
            n = os.sendfile(dst_fd, src_fd, None, min(left, 1 << 24))
        if n <= 0:
            break
        left -= n


class CopyBack:
    """Copy new and changed files of an overlay's upper layer into the host workspace."""

    def __init__(self, upper_fd: int, host: str, group: int | None, max_files: int = 1024,
                 max_bytes: int = 1 << 30) -> None:
        self.upper_fd = upper_fd
        self.host = host
        self.group = group
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.seen: dict[str, tuple[int, int, int]] = {}  # stateful sessions: copy only what changed

    def run(self) -> dict[str, Any]:
        written: list[str] = []
        skipped: list[dict[str, str]] = []
        budget = {"files": self.max_files, "bytes": self.max_bytes}
        try:
            host_fd = os.open(self.host, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            return {"copied": written, "skipped": [{"name": ".", "reason": f"workspace: {exc.strerror}"}]}
        up = os.dup(self.upper_fd)
        try:
            self._walk(up, host_fd, "", 0, written, skipped, budget)
        finally:
            os.close(up)
            os.close(host_fd)
        return {"copied": written, "skipped": skipped[:50]}

    def _walk(self, ufd: int, hfd: int, prefix: str, depth: int, written: list[str],
              skipped: list[dict[str, str]], budget: dict[str, int]) -> None:
        try:
            entries = list(os.scandir(ufd))
        except OSError:
            return
        entries.sort(key=lambda e: e.name)
        for e in entries:
            rel = prefix + e.name
            if not valid_name(e.name):
                skipped.append({"name": e.name.encode("utf-8", "backslashreplace").decode("utf-8"),
                                "reason": "the name is not valid UTF-8 or not printable"})
                continue
            try:
                st = os.stat(e.name, dir_fd=ufd, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                continue  # an overlay whiteout: a deletion, never carried to the host
            if stat.S_ISDIR(st.st_mode):
                if depth >= MAX_DEPTH:
                    skipped.append({"name": rel, "reason": f"deeper than {MAX_DEPTH} directories"})
                    continue
                self._dir(e.name, rel, st, ufd, hfd, depth, written, skipped, budget)
                continue
            if not stat.S_ISREG(st.st_mode):
                skipped.append({"name": rel, "reason": "not a regular file"})
                continue
            sig = (st.st_size, st.st_mtime_ns, st.st_ino)
            if self.seen.get(rel) == sig:
                continue
            if budget["files"] <= 0 or budget["bytes"] < st.st_size:
                skipped.append({"name": rel, "reason": "over the per-call file count or size cap"})
                continue
            problem = self._file(e.name, st, ufd, hfd)
            if problem:
                skipped.append({"name": rel, "reason": problem})
                continue
            self.seen[rel] = sig
            budget["files"] -= 1
            budget["bytes"] -= st.st_size
            written.append(rel)

    def _dir(self, name: str, rel: str, st: os.stat_result, ufd: int, hfd: int, depth: int,
             written: list[str], skipped: list[dict[str, str]], budget: dict[str, int]) -> None:
        try:
            hst = os.stat(name, dir_fd=hfd, follow_symlinks=False)
            if not stat.S_ISDIR(hst.st_mode):
                skipped.append({"name": rel, "reason": "a file of that name exists"})
                return
        except FileNotFoundError:
            try:
                os.mkdir(name, 0o2775, dir_fd=hfd)
            except OSError as exc:
                skipped.append({"name": rel, "reason": exc.strerror or "mkdir failed"})
                return
        try:
            sub_u = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=ufd)
        except OSError:
            return
        try:
            sub_h = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=hfd)
        except OSError:
            os.close(sub_u)
            return
        try:
            if self.group is not None:
                with contextlib.suppress(OSError):
                    os.fchown(sub_h, 0, self.group)
                    os.fchmod(sub_h, 0o2775)
            self._walk(sub_u, sub_h, rel + "/", depth + 1, written, skipped, budget)
        finally:
            os.close(sub_u)
            os.close(sub_h)

    def _file(self, name: str, st: os.stat_result, ufd: int, hfd: int) -> str | None:
        try:
            hst = os.stat(name, dir_fd=hfd, follow_symlinks=False)
            if not stat.S_ISREG(hst.st_mode):
                return "a non-file of that name exists in the workspace"
            if not hst.st_mode & 0o222:
                return "read-only in the workspace (an input or an earlier result): not changed"
        except FileNotFoundError:
            pass
        tmp = f".ts-copy-{os.getpid()}-{st.st_ino}"
        try:
            src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=ufd)
        except OSError as exc:
            return exc.strerror or "cannot open"
        try:
            dst = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                          dir_fd=hfd)
            try:
                _copy_file(src, dst, st.st_size)
                # never set-uid/set-gid/sticky; group-writable for the sandbox group, so a later call
                # may change it (read-only files — inputs, registered images — stay read-only)
                if self.group is not None:
                    os.fchown(dst, 0, self.group)
                os.fchmod(dst, 0o664 if self.group is not None else 0o644)
            finally:
                os.close(dst)
            os.rename(tmp, name, src_dir_fd=hfd, dst_dir_fd=hfd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=hfd)
            return exc.strerror or "copy failed"
        finally:
            os.close(src)
        return None


_CLOSE: queue.SimpleQueue[int] = queue.SimpleQueue()


def start_closer() -> None:
    """The server's background thread that closes per-call fds (see `close_state`)."""
    threading.Thread(target=_closer, name="fd-closer", daemon=True).start()


def _closer() -> None:
    while True:
        fd = _CLOSE.get()
        with contextlib.suppress(OSError):
            os.close(fd)


def close_state(state: dict[str, Any]) -> None:
    """Close a call's inotify and upper-layer fds in a background thread: closing an inotify instance
    waits for an SRCU grace period (~10-20 ms under load), which must not delay the reply."""
    ino = state.pop("inotify", None)
    if ino is not None:
        _CLOSE.put(ino.fd)
    up = state.pop("upper", None)
    if up is not None:
        _CLOSE.put(up)
