"""Issue 27's sandbox items, each a real snippet through the public API: a task never runs in a child of
a server that held another task's code (item 11), and a killed kernel says why (item 10)."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path
from typing import Any

from sandboxkit import need

from toolsight import sandbox
from toolsight.sandbox import ExecResult, Limits, SandboxPool
from toolsight.tools.base import ArtifactStore, ToolContext, ToolResult
from toolsight.tools.python_tools import PythonKernel

FAST = Limits(wall_s=20, cpu_s=10)

# Scans the child's own writable memory (heap and anonymous mappings) for a string given in two halves,
# so the whole string is never in the scanner's own memory: the halves are compared in place.
SCAN = r'''
import ctypes
H1, H2 = @H1@, @H2@
found = 0
for line in open("/proc/self/maps"):
    parts = line.split()
    perms, name = parts[1], (parts[5] if len(parts) > 5 else "")
    if not perms.startswith("rw") or name not in ("", "[heap]"):
        continue
    lo, hi = (int(x, 16) for x in parts[0].split("-"))
    region = ctypes.string_at(lo, hi - lo)
    i = region.find(H1)
    while i >= 0:
        if region[i + len(H1): i + len(H1) + len(H2)] == H2:
            found += 1
        i = region.find(H1, i + 1)
print("FOUND" if found else "NOTFOUND", found)
'''


def run(code: str, ws: Path, limits: Limits = FAST) -> ExecResult:
    return asyncio.run(sandbox.start(ws, limits=limits).exec(code))


def test_a_task_never_runs_where_another_tasks_code_was(tmp_path: Path) -> None:
    """Item 11: the server that took task A's code (its heap keeps freed copies) never forks a child for
    task B, and no server ever serves two tasks. (The pool here does not pre-fault the children's heap,
    which overwrites some freed memory: the scan sees what a reused server would leave.)"""
    secret = "TASKA" + uuid.uuid4().hex
    h1, h2 = secret[:18].encode(), secret[18:].encode()
    scan = SCAN.replace("@H1@", repr(h1)).replace("@H2@", repr(h2))
    ws_a, ws_b = tmp_path / "task-a", tmp_path / "task-b"
    ws_a.mkdir()
    ws_b.mkdir()
    code_a = "notes = " + repr((secret + " ") * 40) + "\nprint(len(notes))\n"
    pool = SandboxPool(size=2, config={"prefault_mb": 0, "prewarm_servers": False})
    try:
        for _ in range(3):
            res = pool.run(code_a, ws_a, FAST)
            assert res.ok, res
        own = pool.run(scan, ws_a, FAST)  # the same task: its server held its code, and its next child may see it
        assert own.ok, own
        print("scan in task A's own server:", own.stdout.strip())  # FOUND where freed memory was not reused
        other = pool.run(scan, ws_b, FAST)
        assert other.ok, other
        assert other.stdout.startswith("NOTFOUND"), other.stdout
        a, b = pool.server_of(ws_a), pool.server_of(ws_b)
        assert a is not None and b is not None and a is not b
        assert a.served == {str(ws_a.resolve())} and b.served == {str(ws_b.resolve())}
    finally:
        pool.shutdown()


def test_calls_of_one_task_reuse_its_server(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    run("pass", ws)
    pool = sandbox.get_pool()
    first = pool.server_of(ws)
    for _ in range(3):
        assert run("print(1)", ws).ok
    assert pool.server_of(ws) is first  # no fresh process per call: a task keeps its server


def _boot_start_s(pid: int) -> float:
    """When a process started, in seconds since boot (/proc/<pid>/stat)."""
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    return ticks / os.sysconf("SC_CLK_TCK")


def test_the_next_tasks_server_starts_after_a_call_not_on_the_next_tasks_critical_path(tmp_path: Path) -> None:
    """With a fresh server per task, the pool starts the next task's server once a call has returned (the
    model's turn), not beside the call: it started after task A's 1.5 s call, and before B's first call."""
    ws_a, ws_b = tmp_path / "a", tmp_path / "b"
    ws_a.mkdir()
    ws_b.mkdir()
    pool = SandboxPool(size=1)
    try:
        pool.warm(1)
        a_began = time.clock_gettime(time.CLOCK_BOOTTIME)
        assert pool.run("import time\ntime.sleep(1.5)", ws_a, FAST).ok
        deadline = time.monotonic() + 120
        while not any(s.owner is None for s in list(pool._idle)) and time.monotonic() < deadline:
            time.sleep(0.1)  # the fresh server starts in the background (about a second)
        b_began = time.clock_gettime(time.CLOCK_BOOTTIME)
        assert pool.run("print(2)", ws_b, FAST).ok
        a, b = pool.server_of(ws_a), pool.server_of(ws_b)
        assert b is not None and b is not a
        assert a_began + 1.0 < _boot_start_s(b.proc.pid) < b_began
    finally:
        pool.shutdown()


def _kernel_ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(store=ArtifactStore(tmp_path / "ws"), call_id="c1", task_id="t1")


async def _cells(tool: PythonKernel, ctx: ToolContext, cells: list[str], pause_s: float = 0.0) -> list[ToolResult]:
    out = []
    try:
        for code in cells:
            out.append(await tool({"code": code}, ctx))
            if pause_s:
                await asyncio.sleep(pause_s)
    finally:
        kernel: Any = ctx.state.get("python_kernel.kernel")
        if kernel is not None:
            await kernel.aclose()
    return out


def test_a_kernel_killed_by_a_stray_alarm_says_why(tmp_path: Path) -> None:
    """Item 10: an alarm set in one cell fires while the kernel is frozen between calls; the next call's
    result names the signal and says the state is lost (it was empty)."""
    ctx = _kernel_ctx(tmp_path)
    cells = ["import signal\nsignal.signal(signal.SIGALRM, signal.SIG_DFL)\nsignal.alarm(1)\nprint('set')",
             "print('after')", "print(6 * 7)"]
    first, second, third = asyncio.run(_cells(PythonKernel(FAST), ctx, cells, pause_s=1.5))
    assert first.ok and "set" in first.text, first
    assert not second.ok
    assert "killed by the signal SIGALRM (an alarm the code set with signal.alarm went off)" in second.text, second.text
    assert "next call starts a fresh kernel" in second.text, second.text
    assert third.ok and "42" in third.text and "restarted" in third.text, third


def test_a_kernel_killed_by_its_memory_limit_says_why(tmp_path: Path, iso: dict[str, Any]) -> None:
    need(iso, "cgroup_memory")
    ctx = _kernel_ctx(tmp_path)
    limits = Limits(wall_s=30, cgroup_memory_mb=256)
    (res,) = asyncio.run(_cells(PythonKernel(limits), ctx, ["x = bytearray(1 << 30)\nprint('no')"]))
    assert not res.ok
    assert "memory limit (256 MiB)" in res.text and "next call starts a fresh kernel" in res.text, res.text


def test_killed_kernel_reason_in_the_tir_tool(tmp_path: Path) -> None:
    """TIR-Bench's tool (a python_kernel underneath) showed only `Status: error` for a killed kernel."""
    from toolsight.benchmarks.tir_bench.tools import TIRCodeInterpreter

    ctx = _kernel_ctx(tmp_path)
    (res,) = asyncio.run(_cells(TIRCodeInterpreter(FAST), ctx,
                                ["import os, signal\nos.kill(os.getpid(), signal.SIGTERM)"]))
    assert res.text.startswith("Status: error\n") and "killed by the signal SIGTERM" in res.text, res.text
    assert "next call starts a fresh kernel" in res.text, res.text
