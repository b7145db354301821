"""Run model-written Python: the `Sandbox` interface and its backends, chosen by name.

    from toolsight import sandbox
    sandbox.use_backend("forkserver")                       # or "subprocess"; see backends.py
    res = await sandbox.run_code("print(1)", workspace)      # ExecResult
    box = sandbox.start(workspace)                          # the Sandbox interface (interface.py)
    session = sandbox.open_session(workspace)               # a stateful Sandbox: variables persist
    kernel = sandbox.open_kernel(workspace)                 # a stateful IPython kernel
    res = await kernel.execute("1 + 1", timeout_s=30)       # KernelResult
    sandbox.isolation_report()                              # which backend, which layers are in force

Everything here goes through the backend in force (`get_backend()`): `forkserver` (the default:
pre-warmed fork servers whose children confine themselves — a separate uid, namespaces, a tmpfs
workspace, cgroups, rlimits, capabilities, Landlock, a seccomp allowlist) or `subprocess` (a plain
child process of the harness with a scrubbed environment and rlimits: NOT isolated). The default is
TOOLSIGHT_SANDBOX_BACKEND, else forkserver. `configure(size=...)` sizes the fork-server pools to the
run's concurrency; `shutdown()` (registered with atexit) stops every backend's processes. See
docs/sandbox.md.
"""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any

from toolsight.sandbox.backends import (
    DEFAULT_BACKEND,
    ENV_VAR,
    UnknownSandboxBackend,
    backend_names,
    forkserver,
    get_backend,
    set_backend,
    shutdown,
    use_backend,
)
from toolsight.sandbox.client import SandboxError, SandboxPool, ServerGone, ServerProcess, summarize
from toolsight.sandbox.forkserver import PROFILES, ForkServerBackend, ForkServerSandbox
from toolsight.sandbox.interface import Kernel, RunOutcome, Sandbox, SandboxBackend, WorkspaceError
from toolsight.sandbox.models import ExecResult, KernelError, KernelOutput, KernelResult, Limits
from toolsight.sandbox.subprocess_backend import SubprocessBackend, SubprocessSandbox

__all__ = [
    "DEFAULT_BACKEND",
    "ENV_VAR",
    "PROFILES",
    "ExecResult",
    "ForkServerBackend",
    "ForkServerSandbox",
    "Kernel",
    "KernelError",
    "KernelOutput",
    "KernelResult",
    "Limits",
    "RunOutcome",
    "Sandbox",
    "SandboxBackend",
    "SandboxError",
    "SandboxPool",
    "ServerGone",
    "ServerProcess",
    "SubprocessBackend",
    "SubprocessSandbox",
    "UnknownSandboxBackend",
    "WorkspaceError",
    "backend_names",
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
    "use_backend",
]

atexit.register(shutdown)


def configure(size: int | None = None, *, cgroup: bool | None = None, pids_max: int | None = None) -> None:
    """Size the fork-server pools (e.g. to the run's concurrency) and set server options before first use.

    Only the forkserver backend has pools; the subprocess backend starts a child per call and ignores this.
    """
    forkserver().configure(size, cgroup=cgroup, pids_max=pids_max)


def get_pool(profile: str = "image") -> SandboxPool:
    """The fork-server pool of a preload profile (for the fork server's own tests and bench; tools use `start`)."""
    return forkserver().pool(profile)


def start(workspace: Path, *, limits: Limits | None = None, stateful: bool = False,
          profile: str | None = None, mode: str = "exec") -> Sandbox:
    """One task's sandbox on the backend in force (see interface.py)."""
    return get_backend().start(workspace, limits=limits, stateful=stateful, profile=profile, mode=mode)


def open_session(workspace: Path, limits: Limits | None = None, profile: str = "full") -> Sandbox:
    """A stateful interpreter for one task on the backend in force: variables persist across `exec`
    calls until `aclose()` (a limit that ends the interpreter loses them; the next call says so)."""
    return start(workspace, limits=limits, stateful=True, profile=profile)


def open_kernel(workspace: Path, limits: Limits | None = None) -> Kernel:
    """A stateful IPython kernel for one task on the backend in force: `await k.execute(code, timeout_s)`,
    `restart()`, `aclose()`.

    Its interpreter runs an in-process InteractiveShell (no ZMQ, no sockets) with a wall clock per
    call; on the fork server it is fully confined, on a fresh dedicated server, frozen between calls.
    """
    box = start(workspace, limits=limits, stateful=True, profile="kernel", mode="kernel")
    return Kernel(box, limits or Limits())


def isolation_report() -> dict[str, Any]:
    """Which backend is in force and which isolation layers hold (a backend may start a process to probe);
    never raises."""
    try:
        return get_backend().isolation_report()
    except Exception as exc:
        return {"sandbox": f"unavailable: {exc}", "backend": _backend_name(), "isolated": False, "level": "none",
                "layers": {}, "warnings": [str(exc)]}


def _backend_name() -> str:
    try:
        return str(get_backend().name)
    except Exception:
        return "unknown"


async def run_code(code: str, workspace: Path, limits: Limits | None = None, profile: str = "image") -> ExecResult:
    """Run `code` once (stateless) on the backend in force."""
    return await start(workspace, limits=limits, profile=profile).exec(code)
