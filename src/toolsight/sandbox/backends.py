"""Sandbox backends by name, and the one place that decides which one is in force.

    sandbox.backend_names()             # ("forkserver", "subprocess")
    sandbox.use_backend("subprocess")   # from now on every code tool, kernel, session and run_code
    sandbox.get_backend()               # the backend in force

`forkserver` (the default) runs code in confined fork servers; `subprocess` in a plain child
process of the harness, which is not isolated (its isolation report says so). The default is the
name in the environment variable TOOLSIGHT_SANDBOX_BACKEND when it is set (read once, at first use),
else `forkserver`. `set_backend(obj)` puts an object in force instead of a name (a test double, a
plugin's backend). Each named backend has one instance per process, made on first use, so its
servers and children are shared by every task, and `shutdown()` stops them all.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from toolsight.errors import ToolsightError
from toolsight.sandbox.forkserver import ForkServerBackend
from toolsight.sandbox.interface import SandboxBackend
from toolsight.sandbox.subprocess_backend import SubprocessBackend

ENV_VAR = "TOOLSIGHT_SANDBOX_BACKEND"
DEFAULT_BACKEND = "forkserver"
_FACTORIES: dict[str, Callable[[], SandboxBackend]] = {
    "forkserver": ForkServerBackend,
    "subprocess": SubprocessBackend,
}

_lock = threading.RLock()
_instances: dict[str, SandboxBackend] = {}
_current: SandboxBackend | None = None
_default: str | None = None


class UnknownSandboxBackend(ToolsightError):
    """A sandbox backend name that is not one of `backend_names()`."""

    def __init__(self, name: str, where: str = "") -> None:
        super().__init__(f"unknown sandbox backend {name!r}{where}; the backends are: {', '.join(backend_names())}")


def backend_names() -> tuple[str, ...]:
    """The names `use_backend` accepts, the default first."""
    return tuple(_FACTORIES)


def backend(name: str) -> SandboxBackend:
    """The process's instance of a named backend (made on first use); it does not put it in force."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UnknownSandboxBackend(name)
    with _lock:
        inst = _instances.get(name)
        if inst is None:
            inst = _instances[name] = factory()
        return inst


def forkserver() -> ForkServerBackend:
    """The fork-server backend's instance (its pools: `configure`, `get_pool`), whichever backend is in force."""
    inst = backend("forkserver")
    assert isinstance(inst, ForkServerBackend)
    return inst


def use_backend(name: str) -> None:
    """Put the named backend in force for everything that runs code from now on."""
    global _current
    chosen = backend(name)
    with _lock:
        _current = chosen


def default_name() -> str:
    """The default backend's name: TOOLSIGHT_SANDBOX_BACKEND when set (read once), else forkserver."""
    global _default
    with _lock:
        if _default is None:
            name = os.environ.get(ENV_VAR, "").strip() or DEFAULT_BACKEND
            if name not in _FACTORIES:
                raise UnknownSandboxBackend(name, f" (from the environment variable {ENV_VAR})")
            _default = name
        return _default


def get_backend() -> SandboxBackend:
    """The backend in force: the one `use_backend` / `set_backend` chose, else the default."""
    global _current
    with _lock:
        if _current is None:
            _current = backend(default_name())
        return _current


def set_backend(obj: SandboxBackend | None) -> None:
    """Put a backend object in force (tests, plugins); None: back to the default backend."""
    global _current
    with _lock:
        _current = obj


def shutdown() -> None:
    """Stop what every backend started (servers, children); safe to call more than once."""
    with _lock:
        live = list(_instances.values())
        if _current is not None and all(_current is not b for b in live):
            live.append(_current)
    for b in live:
        b.shutdown()
