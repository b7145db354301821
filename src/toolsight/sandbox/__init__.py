"""Run model-written Python safely and fast: a pool of pre-warmed, confined fork servers.

    from toolsight import sandbox
    res = await sandbox.run_code("print(1)", workspace)      # ExecResult
    box = sandbox.start(workspace)                          # the Sandbox interface (interface.py)
    kernel = sandbox.open_kernel(workspace)                 # a stateful IPython kernel
    res = await kernel.execute("1 + 1", timeout_s=30)       # KernelResult
    sandbox.isolation_report()                              # which layers are in force

The pool is a process-wide singleton, started lazily on first use and stopped by `shutdown()`
(registered with atexit). `configure(size=...)` sizes it to the run's concurrency. See
docs/sandbox.md for the layers (a separate uid, namespaces, a tmpfs workspace, cgroups, rlimits,
capabilities, Landlock, a seccomp allowlist).
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from pathlib import Path
from typing import Any

from toolsight.sandbox.client import (
    SandboxError,
    SandboxPool,
    SandboxSession,
    ServerGone,
    ServerProcess,
    summarize,
)
from toolsight.sandbox.interface import (
    ForkServerBackend,
    ForkServerSandbox,
    Kernel,
    Sandbox,
    SandboxBackend,
    WorkspaceError,
)
from toolsight.sandbox.models import ExecResult, KernelError, KernelOutput, KernelResult, Limits

__all__ = [
    "PROFILES",
    "ExecResult",
    "ForkServerBackend",
    "ForkServerSandbox",
    "Kernel",
    "KernelError",
    "KernelOutput",
    "KernelResult",
    "Limits",
    "Sandbox",
    "SandboxBackend",
    "SandboxError",
    "SandboxPool",
    "SandboxSession",
    "ServerGone",
    "ServerProcess",
    "WorkspaceError",
    "configure",
    "get_backend",
    "get_pool",
    "isolation_report",
    "open_kernel",
    "open_session",
    "run_code",
    "set_backend",
    "shutdown",
    "start",
    "summarize",
]

PROFILES = ("image", "full", "kernel")
_lock = threading.Lock()
_pools: dict[str, SandboxPool] = {}
_size: int | None = None
_config: dict[str, Any] = {}


def configure(size: int | None = None, *, cgroup: bool | None = None, pids_max: int | None = None) -> None:
    """Size the shared pools (e.g. to the run's concurrency) and set server options before first use."""
    global _size
    with _lock:
        if size is not None:
            _size = size
            for p in _pools.values():
                p.resize(size)
        if cgroup is not None:
            _config["cgroup"] = cgroup
        if pids_max is not None:
            _config["pids_max"] = pids_max


def get_pool(profile: str = "image") -> SandboxPool:
    """The shared pool of a preload profile, created on first use.

    'image' servers preload numpy, cv2 and PIL (small, so each fork is cheap); 'full' servers also
    preload pandas, scipy, sympy, matplotlib and bs4 (for python_interpreter). Anything else is
    importable lazily in both.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown sandbox profile {profile!r}; use one of {', '.join(PROFILES)}")
    with _lock:
        pool = _pools.get(profile)
        if pool is None:
            pool = _pools[profile] = SandboxPool(_size, {**_config, "preload": profile})
        return pool


def shutdown() -> None:
    """Stop every server of the shared pools (safe to call more than once)."""
    with _lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.shutdown()


atexit.register(shutdown)


_backend: SandboxBackend | None = None


def get_backend() -> SandboxBackend:
    """The sandbox backend in use: the fork server unless `set_backend` chose another."""
    global _backend
    if _backend is None:
        _backend = ForkServerBackend(get_pool, shutdown)
    return _backend


def set_backend(backend: SandboxBackend | None) -> None:
    """Use another backend (a container runtime, a remote pool) for every code tool; None: the default."""
    global _backend
    _backend = backend


def start(workspace: Path, *, limits: Limits | None = None, stateful: bool = False,
          profile: str | None = None, mode: str = "exec") -> Sandbox:
    """One task's sandbox on the current backend (see interface.py)."""
    return get_backend().start(workspace, limits=limits, stateful=stateful, profile=profile, mode=mode)


def open_kernel(workspace: Path, limits: Limits | None = None) -> Kernel:
    """A stateful IPython kernel for one task: `await k.execute(code, timeout_s)`, `restart()`, `aclose()`.

    Its child runs an in-process InteractiveShell (no ZMQ, no sockets), fully confined, on a fresh
    dedicated server (never a pooled one), frozen between calls, with a wall clock per call.
    """
    box = ForkServerBackend(get_pool, shutdown).start(workspace, limits=limits, stateful=True, profile="kernel",
                                                      mode="kernel")
    return Kernel(box, limits or Limits())


def isolation_report() -> dict[str, Any]:
    """Which isolation layers are in force (starts one server and reads its probe); never raises."""
    try:
        return get_backend().isolation_report()
    except Exception as exc:
        return {"sandbox": f"unavailable: {exc}", "level": "none", "layers": {}, "warnings": [str(exc)]}


async def run_code(code: str, workspace: Path, limits: Limits | None = None, profile: str = "image") -> ExecResult:
    """Run `code` in a fresh confined child of a pooled server (in a worker thread)."""
    return await asyncio.to_thread(get_pool(profile).run, code, workspace, limits)


def open_session(workspace: Path, limits: Limits | None = None, profile: str = "full") -> SandboxSession:
    """A stateful interpreter session for one task (close it with `close()` / `aclose()`); it runs on a
    fresh dedicated server of `profile`."""
    return get_pool("image").session(workspace, limits, "exec", profile)
