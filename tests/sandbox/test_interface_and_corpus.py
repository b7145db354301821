"""The Sandbox interface (files in and out, on every backend; an installed backend object) and the seccomp
allowlist under a realistic corpus."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from sandboxkit import need

from toolsight import sandbox
from toolsight.sandbox import ExecResult, Limits, Sandbox, SandboxBackend, WorkspaceError

CORPUS = Path(__file__).with_name("seccomp_corpus.txt")  # a snippet run in the sandbox, not a module


def test_sandbox_interface_runs_reads_and_writes(ws: Path, backend: str) -> None:
    box = sandbox.get_backend().start(ws, limits=Limits(wall_s=10))
    assert isinstance(box, Sandbox) and not box.stateful and box.backend == backend

    async def go() -> tuple[ExecResult, bytes]:
        await box.write_file("in/data.txt", b"21", read_only=True)
        res = await box.exec("print(int(open('in/data.txt').read()) * 2)\nopen('out.txt', 'w').write('done')")
        data = await box.read_file("out.txt")
        for bad in ("../x", "/etc/passwd", "in/../../x", ""):
            with pytest.raises(WorkspaceError):
                await box.read_file(bad)
        (ws / "link").symlink_to("/etc/hostname")
        with pytest.raises(WorkspaceError):
            await box.read_file("link")
        await box.aclose()
        return res, data

    res, data = asyncio.run(go())
    assert res.ok and res.stdout.strip() == "42" and data == b"done"
    assert res.files_written == ["out.txt"] and res.backend == backend
    assert (ws / "in" / "data.txt").stat().st_mode & 0o222 == 0
    assert box.isolation()["backend"] == backend


def test_an_installed_backend_object_replaces_the_named_one(tmp_path: Path) -> None:
    """set_backend(obj) (tests, plugins) reaches the code tools; here a recording wrapper around the fork server."""
    calls: list[str] = []
    inner_backend = sandbox.get_backend()
    assert isinstance(inner_backend, SandboxBackend) and inner_backend.name == "forkserver"

    class Recording:
        name = "recording"

        def start(self, workspace: Path, *, limits: Limits | None = None, stateful: bool = False,
                  profile: str | None = None, mode: str = "exec") -> Any:
            inner = inner_backend.start(workspace, limits=limits, stateful=stateful, profile=profile, mode=mode)

            class Box:
                backend = "recording"
                stateful = False

                def __init__(self) -> None:
                    self.workspace = workspace

                async def exec(self, code: str, limits: Limits | None = None, wall_s: float | None = None) -> ExecResult:
                    calls.append(code)
                    return await inner.exec(code, limits, wall_s)

            return Box()

        def isolation_report(self) -> dict[str, Any]:
            return {"sandbox": "recording"}

        def shutdown(self) -> None:
            return None

    from toolsight.tools.base import ArtifactStore, ToolContext
    from toolsight.tools.python_tools import PythonInterpreter

    sandbox.set_backend(Recording())
    ctx = ToolContext(store=ArtifactStore(tmp_path / "ws"))
    res = asyncio.run(PythonInterpreter(Limits(wall_s=10))({"code": "print(5)"}, ctx))
    assert res.ok and res.text.strip() == "5" and calls == ["print(5)"]
    assert sandbox.isolation_report() == {"sandbox": "recording"}


def test_realistic_corpus_runs_under_the_allowlist(ws: Path, iso: dict[str, Any]) -> None:
    need(iso, "seccomp_allowlist")
    res = asyncio.run(sandbox.start(ws, limits=Limits(wall_s=120, cpu_s=100), profile="full").exec(CORPUS.read_text()))
    assert res.ok and "CORPUS OK" in res.stdout, (res.error, res.stderr[-3000:])
    denied = asyncio.run(sandbox.start(ws, limits=Limits(wall_s=10)).exec(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nb = ctypes.create_string_buffer(64)\n"
        "print(libc.mlock(b, 64), ctypes.get_errno(), libc.syscall(312, os.getpid(), os.getpid(), 0, 0, 0))\n"
        .replace("os.getpid()", "1")))
    assert denied.ok and denied.stdout.split()[:3] == ["-1", "1", "-1"], denied  # mlock, kcmp: not on the list
    assert os.path.exists(ws / "p.png")
