"""The run directory's life cycle: created atomically, held by one process, resumed only as itself.

- **Atomic creation**: a new run directory is built as a hidden sibling (`.NAME.creating-*`) with
  its manifest and lock, then renamed into place. At every instant the directory is absent or
  resumable; a kill during start-up leaves only the hidden sibling, swept on a later start.
- **One writer**: `run.lock` is `flock`ed for the whole run; a second process gets one line
  naming the holder's pid. The kernel drops the lock when the holder dies (even by SIGKILL).
- **Identity**: `--resume` compares the model, setting, generation settings, caps, scoring
  (mode, judge, on/off) and the dataset's content hash, field by field; a difference is refused
  unless `--force`, which records the change in the manifest's `history`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolsight.errors import EXIT_ABORTED, EXIT_USAGE, ToolsightError
from toolsight.log.files import MANIFEST, read_manifest, write_manifest
from toolsight.log.manifest import Manifest

LOCK = "run.lock"
#: what an older toolsight killed between opening the cache and writing the manifest left behind
_STARTUP_LEFTOVERS = frozenset({"cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm", "cache.sqlite-journal", LOCK})
#: a half-created sibling younger than this may belong to a process creating it right now
_STALE_AFTER_S = 60.0


class RunError(ToolsightError):
    """A user-fixable problem starting a run: a run directory that cannot be used as asked (exists,
    not a run, a different configuration), a bad option (one clear message)."""

    exit_code = EXIT_USAGE


class RunDirBusy(ToolsightError):
    """Another process holds the run directory's lock."""

    exit_code = EXIT_ABORTED


class RunLock:
    """An exclusive `flock` on `DIR/run.lock`, holding the owner's pid (for the message to others)."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path

    @classmethod
    def acquire(cls, run_dir: Path) -> RunLock:
        path = run_dir / LOCK
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            raise RunDirBusy(
                f"{run_dir} is in use by another toolsight process (pid {holder}); wait for it to finish "
                "or stop it, or choose another --out"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(fd, path)

    def release(self) -> None:
        if self.fd < 0:
            return
        with contextlib.suppress(OSError):
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = -1


def _read_pid(fd: int) -> str:
    try:
        return os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
    except OSError:
        return "unknown"


def open_run_dir(run_dir: Path, new_manifest: Callable[[], Manifest], resume: bool) -> tuple[RunLock, Manifest | None]:
    """Lock `run_dir`, creating it atomically with `new_manifest()` if it does not exist.

    Returns the lock and the existing manifest, or None when the directory was just created.
    """
    for _ in range(3):
        if (run_dir / MANIFEST).is_file():
            lock = RunLock.acquire(run_dir)
            try:
                if not resume:
                    raise RunError(
                        f"run directory {run_dir} already exists; pass --resume to continue it, or choose another --out"
                    )
                return lock, read_manifest(run_dir)
            except BaseException:
                lock.release()
                raise
        if run_dir.exists():
            _clear_startup_leftovers(run_dir)
        created = _create(run_dir, new_manifest)
        if created is not None:
            return created, None
    raise RunError(f"could not create {run_dir}: other processes keep creating it")


def _clear_startup_leftovers(run_dir: Path) -> None:
    """Accept an empty folder, or one an older toolsight left when killed during start-up."""
    if not run_dir.is_dir():
        raise RunError(f"{run_dir} exists and is not a folder; choose another --out")
    names = {p.name for p in run_dir.iterdir()}
    if not names:
        return
    if not names <= _STARTUP_LEFTOVERS:
        raise RunError(
            f"{run_dir} exists and is not a toolsight run directory (no {MANIFEST}); choose another --out"
        )
    lock = RunLock.acquire(run_dir)  # a process still starting up in it holds this
    try:
        for name in names - {LOCK}:
            (run_dir / name).unlink(missing_ok=True)
        (run_dir / LOCK).unlink(missing_ok=True)
    finally:
        lock.release()


def _create(run_dir: Path, new_manifest: Callable[[], Manifest]) -> RunLock | None:
    parent = run_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    _sweep_half_created(parent, run_dir.name)
    tmp = Path(tempfile.mkdtemp(prefix=f".{run_dir.name}.creating-", dir=parent))
    lock: RunLock | None = None
    try:
        lock = RunLock.acquire(tmp)
        write_manifest(tmp, new_manifest())
        try:
            os.rename(tmp, run_dir)  # the directory appears with its manifest, or not at all
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                lock.release()
                shutil.rmtree(tmp, ignore_errors=True)
                return None  # another process created it first
            raise
        _fsync_dir(parent)
        lock.path = run_dir / LOCK
        return lock
    except BaseException:
        if lock is not None:
            lock.release()
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _sweep_half_created(parent: Path, name: str) -> None:
    """Remove `.NAME.creating-*` siblings a killed start-up left (never one still being created)."""
    now = time.time()
    for p in parent.glob(f".{name}.creating-*"):
        try:
            if now - p.stat().st_mtime < _STALE_AFTER_S:
                continue
            lock = RunLock.acquire(p)
        except (OSError, RunDirBusy):
            continue
        lock.release()
        shutil.rmtree(p, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ---- identity ------------------------------------------------------------------------------------

def identity_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Human-readable differences between two identities, one per field ('model: a -> b')."""
    out: list[str] = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a != b:
            out.append(f"{key}: {_short(a)} -> {_short(b)}")
    return out


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def record_resume(run_dir: Path, manifest: Manifest, event: dict[str, Any],
                  accepted: dict[str, Any] | None = None) -> Manifest:
    """Append a `history` entry (and, for a forced change, the new identity) and write atomically.

    Everything else in the manifest — run id, creation time, the options the run was made with —
    stays as it was.
    """
    update: dict[str, Any] = {"history": [*manifest.history, event]}
    if accepted:
        update.update(accepted)
    new = Manifest.model_validate({**manifest.model_dump(mode="json"), **update})
    write_manifest(run_dir, new)
    return new
