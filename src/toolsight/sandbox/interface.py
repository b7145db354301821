"""The sandbox interface: what the code tools and the kernel need from a sandbox, whatever runs it.

    backend = sandbox.get_backend()                       # the backend in force (backends.py: by name)
    box = backend.start(workspace)                        # one task's sandbox (stateless calls)
    res = await box.exec("print(1)", limits)              # ExecResult
    data = await box.read_file("transformed_image_0.png") # bytes, workspace-relative names only
    await box.write_file("notes.txt", b"...", read_only=True)
    box.isolation()                                       # which backend, which layers are in force
    await box.aclose()                                    # stop (stateful: ends the interpreter)

`stateful=True` gives a sandbox whose variables persist across calls (one long-lived interpreter
per task). Its `run(code, wall_s)` also returns what the interpreter reported of the call (the
IPython kernel's outputs) and whether the call ended the interpreter; `restart()` throws its state
away. `Kernel` (the IPython kernel, `open_kernel`) is built on exactly these methods, so it runs on
any backend. The backends: `forkserver.py` (confined fork servers) and `subprocess_backend.py` (a
plain child process, not isolated); another one (a container runtime, a remote pool) implements
`SandboxBackend` and `Sandbox`, and the tools do not change.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from toolsight.errors import ToolsightError
from toolsight.sandbox.models import ExecResult, KernelError, KernelOutput, KernelResult, Limits

MAX_READ_BYTES = 64 << 20


class WorkspaceError(ToolsightError):
    """A workspace file name that is not a plain name inside the workspace, or not a regular file."""


@dataclass(frozen=True)
class RunOutcome:
    """One call of a sandbox: its result, what the interpreter itself reported (for the IPython kernel:
    its outputs, error and execution count; empty when it reported nothing), and whether the call
    ended a stateful sandbox's interpreter (a limit, a crash: its state is gone)."""

    result: ExecResult
    report: dict[str, Any] = field(default_factory=dict)
    ended: bool = False


@runtime_checkable
class Sandbox(Protocol):
    """One task's sandbox: run code, move files in and out of its workspace, restart, stop."""

    workspace: Path
    stateful: bool
    backend: str

    async def exec(self, code: str, limits: Limits | None = None, wall_s: float | None = None) -> ExecResult: ...

    async def run(self, code: str, wall_s: float | None = None) -> RunOutcome: ...

    async def read_file(self, name: str, max_bytes: int = MAX_READ_BYTES) -> bytes: ...

    async def write_file(self, name: str, data: bytes, read_only: bool = False) -> None: ...

    def isolation(self) -> dict[str, Any]: ...

    async def restart(self) -> None: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class SandboxBackend(Protocol):
    """Makes sandboxes. The built-in ones are chosen by name (`backends.py`)."""

    name: str

    def start(self, workspace: Path, *, limits: Limits | None = None, stateful: bool = False,
              profile: str | None = None, mode: str = "exec") -> Sandbox: ...

    def isolation_report(self) -> dict[str, Any]: ...

    def shutdown(self) -> None: ...


def _member(workspace: Path, name: str) -> tuple[Path, str]:
    """`name` as a path inside `workspace` (sub-directories allowed; never absolute, `..` or a link out)."""
    clean = name.strip().removeprefix("./")
    parts = [p for p in clean.split("/") if p not in ("", ".")]
    if not parts or clean.startswith("/") or any(p == ".." for p in parts) or "\\" in clean or "\0" in clean:
        raise WorkspaceError(f"{name!r} is not a file name inside the task workspace")
    return workspace.joinpath(*parts), "/".join(parts)


def read_member(workspace: Path, name: str, max_bytes: int = MAX_READ_BYTES) -> bytes:
    """Read a workspace file once, refusing links, non-regular files and files over `max_bytes`."""
    path, rel = _member(workspace, name)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise WorkspaceError(f"cannot read {rel}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise WorkspaceError(f"{rel} is not a regular file")
        if st.st_nlink != 1:
            raise WorkspaceError(f"{rel} has hard links; not accepted")
        if st.st_size > max_bytes:
            raise WorkspaceError(f"{rel} is {st.st_size} bytes, over the {max_bytes} byte limit")
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise WorkspaceError(f"{rel} grew over the {max_bytes} byte limit while being read")
        return data
    finally:
        os.close(fd)


def write_member(workspace: Path, name: str, data: bytes, read_only: bool = False) -> None:
    """Write a workspace file atomically (sub-directories made as needed), read-only if asked."""
    path, _rel = _member(workspace, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".ts-write-{os.getpid()}-{path.name}")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o444 if read_only else 0o644)
    os.replace(tmp, path)


async def read_file(workspace: Path, name: str, max_bytes: int = MAX_READ_BYTES) -> bytes:
    """`read_member` off the event loop: what every backend's `Sandbox.read_file` does."""
    return await asyncio.to_thread(read_member, workspace, name, max_bytes)


async def write_file(workspace: Path, name: str, data: bytes, read_only: bool = False) -> None:
    """`write_member` off the event loop: what every backend's `Sandbox.write_file` does."""
    await asyncio.to_thread(write_member, workspace, name, data, read_only)


class Kernel:
    """A stateful IPython kernel on a stateful sandbox of any backend (see `open_kernel`)."""

    def __init__(self, box: Sandbox, limits: Limits) -> None:
        self.box = box
        self.limits = limits
        self.workspace = box.workspace

    @property
    def backend(self) -> str:
        """The name of the backend the kernel runs on."""
        return self.box.backend

    def isolation(self) -> dict[str, Any]:
        """The backend's isolation report (which backend, which layers are in force)."""
        return self.box.isolation()

    async def execute(self, code: str, timeout_s: float | None = None) -> KernelResult:
        """Run one cell. On a timeout (or any limit that ends the process) the kernel's state is lost
        and the next call starts a fresh kernel, as Jupyter's restart would."""
        out = await self.box.run(code, wall_s=timeout_s or self.limits.wall_s)
        res, report = out.result, out.report
        outputs: list[KernelOutput] = []
        for o in report.get("outputs") or []:
            if not isinstance(o, dict) or o.get("kind") not in ("stream", "execute_result", "display_data", "error"):
                continue
            with contextlib.suppress(Exception):
                image = o.get("image")
                if image is not None:
                    _member(self.workspace, str(image))  # a name inside the workspace, or dropped
                outputs.append(KernelOutput(kind=o["kind"], text=o.get("text"), image=image, mime=o.get("mime"),
                                            name=o.get("name")))
        err: KernelError | None = None
        kerr = report.get("kernel_error")
        if isinstance(kerr, dict):
            with contextlib.suppress(Exception):
                err = KernelError(ename=str(kerr.get("ename", "")), evalue=str(kerr.get("evalue", "")),
                                  traceback=list(kerr.get("traceback") or []))
        elif not res.ok and res.error:
            err = KernelError(ename=(res.limit or "SandboxError"), evalue=res.error, traceback=[res.error])
        count = report.get("execution_count")
        stdout = "".join(o.text or "" for o in outputs if o.kind == "stream" and o.name == "stdout") or res.stdout
        stderr = "".join(o.text or "" for o in outputs if o.kind == "stream" and o.name == "stderr") or res.stderr
        return KernelResult(
            ok=res.ok, stdout=stdout, stderr=stderr, outputs=outputs, error=err,
            execution_count=count if isinstance(count, int) else None,
            timed_out=res.limit == "wall_time", restarted=res.session_restarted, exec=res, ended=out.ended,
        )

    async def restart(self) -> None:
        """Throw the state away; the next `execute` runs in a fresh kernel."""
        await self.box.restart()

    async def aclose(self) -> None:
        await self.box.aclose()


__all__ = ["Kernel", "RunOutcome", "Sandbox", "SandboxBackend", "WorkspaceError", "read_file", "read_member",
           "write_file", "write_member"]
