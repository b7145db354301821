"""The sandbox interface: what the code tools need from a sandbox, independent of how it is built.

    backend = sandbox.get_backend()                       # the fork server unless set_backend(...)
    box = backend.start(workspace)                        # one task's sandbox (stateless calls)
    res = await box.exec("print(1)", limits)              # ExecResult
    data = await box.read_file("transformed_image_0.png") # bytes, workspace-relative names only
    await box.write_file("notes.txt", b"...", read_only=True)
    box.isolation()                                       # which layers are in force
    await box.aclose()                                    # stop (stateful: ends the interpreter)

`stateful=True` gives a sandbox whose variables persist across `exec` calls (one long-lived,
frozen-between-calls child on a dedicated server); `open_kernel` gives the IPython kernel on top
of a stateful sandbox. Another backend (a container runtime, a remote pool) implements
`SandboxBackend` and `Sandbox`; the tools do not change.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from toolsight.errors import ToolsightError
from toolsight.sandbox.client import SandboxPool, SandboxSession
from toolsight.sandbox.models import ExecResult, KernelError, KernelOutput, KernelResult, Limits

MAX_READ_BYTES = 64 << 20


class WorkspaceError(ToolsightError):
    """A workspace file name that is not a plain name inside the workspace, or not a regular file."""


@runtime_checkable
class Sandbox(Protocol):
    """One task's sandbox: run code, move files in and out of its workspace, stop."""

    workspace: Path
    stateful: bool

    async def exec(self, code: str, limits: Limits | None = None, wall_s: float | None = None) -> ExecResult: ...

    async def read_file(self, name: str, max_bytes: int = MAX_READ_BYTES) -> bytes: ...

    async def write_file(self, name: str, data: bytes, read_only: bool = False) -> None: ...

    def isolation(self) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class SandboxBackend(Protocol):
    """Makes sandboxes. The fork server is the built-in one."""

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
    path, _rel = _member(workspace, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".ts-write-{os.getpid()}-{path.name}")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o444 if read_only else 0o644)
    os.replace(tmp, path)


class ForkServerSandbox:
    """A task's sandbox on the fork-server backend (stateless calls go to the shared pool)."""

    def __init__(self, pool: SandboxPool, workspace: Path, limits: Limits, stateful: bool, mode: str,
                 profile: str | None) -> None:
        self.pool = pool
        self.workspace = Path(workspace)
        self.limits = limits
        self.stateful = stateful
        self.session: SandboxSession | None = pool.session(self.workspace, limits, mode, profile) if stateful else None

    async def exec(self, code: str, limits: Limits | None = None, wall_s: float | None = None) -> ExecResult:
        if self.session is not None:
            return await asyncio.to_thread(self.session.run, code, wall_s)
        lim = limits or self.limits
        if wall_s is not None:
            lim = lim.model_copy(update={"wall_s": wall_s})
        return await asyncio.to_thread(self.pool.run, code, self.workspace, lim)

    async def read_file(self, name: str, max_bytes: int = MAX_READ_BYTES) -> bytes:
        return await asyncio.to_thread(read_member, self.workspace, name, max_bytes)

    async def write_file(self, name: str, data: bytes, read_only: bool = False) -> None:
        await asyncio.to_thread(write_member, self.workspace, name, data, read_only)

    def isolation(self) -> dict[str, Any]:
        return self.pool.isolation()

    async def restart(self) -> None:
        if self.session is not None:
            await asyncio.to_thread(self.session.restart)

    async def aclose(self) -> None:
        if self.session is not None:
            await self.session.aclose()


class ForkServerBackend:
    """The built-in backend: pools of pre-warmed fork servers, one per preload profile."""

    name = "fork-server"

    def __init__(self, get_pool: Any, shutdown: Any) -> None:
        self._get_pool = get_pool
        self._shutdown = shutdown

    def start(self, workspace: Path, *, limits: Limits | None = None, stateful: bool = False,
              profile: str | None = None, mode: str = "exec") -> ForkServerSandbox:
        pool_profile = profile or ("image" if not stateful else "full")
        pool = self._get_pool("image" if stateful else pool_profile)
        return ForkServerSandbox(pool, workspace, limits or Limits(), stateful, mode,
                                 (profile or "full") if stateful else None)

    def isolation_report(self) -> dict[str, Any]:
        report: dict[str, Any] = self._get_pool("image").isolation()
        return report

    def shutdown(self) -> None:
        self._shutdown()


class Kernel:
    """A stateful IPython kernel in the sandbox (see `open_kernel`)."""

    def __init__(self, box: ForkServerSandbox, limits: Limits) -> None:
        self.box = box
        self.limits = limits
        self.workspace = box.workspace

    async def execute(self, code: str, timeout_s: float | None = None) -> KernelResult:
        """Run one cell. On a timeout (or any limit that ends the process) the kernel's state is lost
        and the next call starts a fresh kernel, as Jupyter's restart would."""
        res = await self.box.exec(code, wall_s=timeout_s or self.limits.wall_s)
        session = self.box.session
        # a server that failed before answering left the previous call's frame behind: not this call's
        frame = session.last_frame if session is not None and not res.server_restarted else {}
        report = frame.get("report") if isinstance(frame.get("report"), dict) else {}
        outputs: list[KernelOutput] = []
        for o in (report or {}).get("outputs") or []:
            if not isinstance(o, dict) or o.get("kind") not in ("stream", "execute_result", "display_data", "error"):
                continue
            with contextlib.suppress(Exception):
                image = o.get("image")
                if image is not None:
                    _member(self.workspace, str(image))  # a name inside the workspace, or dropped
                outputs.append(KernelOutput(kind=o["kind"], text=o.get("text"), image=image, mime=o.get("mime"),
                                            name=o.get("name")))
        err: KernelError | None = None
        kerr = (report or {}).get("kernel_error")
        if isinstance(kerr, dict):
            with contextlib.suppress(Exception):
                err = KernelError(ename=str(kerr.get("ename", "")), evalue=str(kerr.get("evalue", "")),
                                  traceback=list(kerr.get("traceback") or []))
        elif not res.ok and res.error:
            err = KernelError(ename=(res.limit or "SandboxError"), evalue=res.error, traceback=[res.error])
        count = (report or {}).get("execution_count")
        stdout = "".join(o.text or "" for o in outputs if o.kind == "stream" and o.name == "stdout") or res.stdout
        stderr = "".join(o.text or "" for o in outputs if o.kind == "stream" and o.name == "stderr") or res.stderr
        return KernelResult(
            ok=res.ok, stdout=stdout, stderr=stderr, outputs=outputs, error=err,
            execution_count=count if isinstance(count, int) else None,
            timed_out=res.limit == "wall_time", restarted=res.session_restarted, exec=res,
            ended=bool(frame.get("session_dead")) or res.limit == "server_timeout" or res.server_restarted,
        )

    async def restart(self) -> None:
        """Throw the state away; the next `execute` runs in a fresh kernel."""
        await self.box.restart()

    async def aclose(self) -> None:
        await self.box.aclose()


__all__ = ["ForkServerBackend", "ForkServerSandbox", "Kernel", "Sandbox", "SandboxBackend", "WorkspaceError",
           "read_member", "write_member"]
