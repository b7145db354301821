"""PyVision's code executor as a toolsight tool (`pyvision_python`, tool set `pyvision`): one sandbox
kernel per task running `_kernel_runtime.py` (PyVision's persistent namespace with `image_clue_i`
preloaded, `plt.show()` captured as PNG, its forbidden-call check, a 20 s timeout).

Only the `pyvision` agent calls it; it puts the loop mode and the task's images (workspace file names,
in `image_clue` order, with their artifact ids) in the toolbox state first (`configure`). A block's
result (`Block`) is what PyVision's driver reads: the report ("Done", "Error: …", "Timeout Error"),
the captured stdout (stripped, cut to 200 + "..." + 200 above 400 characters) or none, and the figures,
registered as artifacts.

Loop modes (docs/fidelity.md): `official` leaves the worker running after a timeout, so the next
block gets the previous block's result, as the original's does; when the kernel itself ends (a
sandbox limit, a crash: the original's worker process dying) every later block is "Timeout Error".
`toolsight` restarts the kernel after a timeout or an ended kernel (the next block starts afresh, with
the images loaded again, and the report says so), reports SystemExit & co. as errors, makes
`plt.show()` work inside indented code, and returns at most `MAX_FIGURES` figures per block.

Provenance: a figure's parents are the inputs whose `image_clue_<i>` this task's code has named so
far (all inputs when it named none) — figures are not variables in PyVision, so a figure can only be
made from the inputs.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from PIL import Image

from toolsight import sandbox
from toolsight.sandbox.interface import Kernel, WorkspaceError, read_member
from toolsight.sandbox.models import KernelResult, Limits
from toolsight.tools.base import Artifact, Tool, ToolContext, ToolError, ToolResult

TOOL = "pyvision_python"
TOOLSET = "pyvision"
CONFIG_KEY = f"{TOOL}.config"
SESSION_KEY = f"{TOOL}.session"
#: PythonExecutor(timeout_length=20) in the original
TIMEOUT_S = 20.0
#: toolsight mode: figures returned per block (the original returns every one)
MAX_FIGURES = 16
MAX_FIGURE_BYTES = 20 << 20
MAX_FIGURE_PIXELS = 40_000_000
MARK = "@@pyvision-result@@ "
RUNTIME_SOURCE = (Path(__file__).parent / "_kernel_runtime.py").read_text(encoding="utf-8")
#: the kernel's limits: a cell may wait the 20 s for its result (official: and a stale block may run on)
LIMITS = Limits(wall_s=TIMEOUT_S + 40.0, session_cpu_s=1800)
SETUP_WALL_S = 120.0
_CLUE = re.compile(r"image_clue_(\d+)")

DESCRIPTION = ("PyVision's Python executor: runs a code block in the task's persistent namespace (image_clue_i "
               "preloaded as PIL images, plt.show() captured as PNG) and returns its stdout and figures.")
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"code": {"type": "string", "description": "The Python code of one <code> block."}},
    "required": ["code"],
}


@dataclass
class ExecutorConfig:
    """What the agent tells the executor before a block: the loop mode and the task's images so far."""

    mode: Literal["official", "toolsight"]
    files: list[str] = field(default_factory=list)
    clues: list[int] = field(default_factory=list)  # each file's image_clue index (default 0, 1, …)
    inputs: list[str] = field(default_factory=list)  # each file's artifact id

    def pairs(self) -> list[list[Any]]:
        clues = self.clues or list(range(len(self.files)))
        return [[f, c] for f, c in zip(self.files, clues, strict=False)]


@dataclass
class Block:
    """One block's result as PyVision's driver reads it."""

    report: str
    text: str | None = None
    figures: list[Artifact] = field(default_factory=list)
    timed_out: bool = False
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.report == "Done"


def configure(state: dict[str, Any], config: ExecutorConfig) -> None:
    """Set the loop mode and images for the next block (the agent calls this before each block)."""
    state[CONFIG_KEY] = config


class _Session:
    """One task's kernel and what the harness knows about it."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.ready = False
        self.dead = False  # official: the kernel ended, as the original's worker process dying
        self.named: list[int] = []  # image_clue indices the task's code has named

    async def aclose(self) -> None:
        await self.kernel.aclose()


def _payload(res: KernelResult) -> dict[str, Any] | None:
    for line in reversed(res.stdout.split("\n")):
        if line.startswith(MARK):
            try:
                got = json.loads(line[len(MARK):])
            except json.JSONDecodeError:
                return None
            return got if isinstance(got, dict) else None
    return None


def _why(res: KernelResult) -> str:
    if res.error is not None:
        return f"{res.error.ename}: {res.error.evalue}"
    return res.exec.error or res.stderr.strip()[-300:] or "no result"


class PyVisionExecutor(Tool):
    """`pyvision_python(code)`: see the module docstring."""

    def __init__(self, timeout_s: float = TIMEOUT_S, limits: Limits | None = None) -> None:
        super().__init__(TOOL, DESCRIPTION, PARAMETERS)
        self.timeout_s = timeout_s
        self.limits = limits or LIMITS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        code = args.get("code")
        if not isinstance(code, str):
            raise ToolError("missing required argument 'code' (a string)")
        config = ctx.state.get(CONFIG_KEY)
        if not isinstance(config, ExecutorConfig):
            config = ExecutorConfig(mode="toolsight", files=[a.file for a in ctx.store.all() if a.source == "input"],
                                    inputs=[a.id for a in ctx.store.all() if a.source == "input"])
        session = ctx.state.get(SESSION_KEY)
        if not isinstance(session, _Session):
            session = _Session(sandbox.open_kernel(ctx.workspace, self.limits))
            ctx.state[SESSION_KEY] = session  # Toolbox.aclose() ends it
        for m in _CLUE.finditer(code):
            if int(m.group(1)) not in session.named:
                session.named.append(int(m.group(1)))
        block, extra = await self._block(session, code, config, ctx)
        extra.update({"code": code, "loop": config.mode, "report": block.report, "text_result": block.text,
                      "timed_out": block.timed_out, "images": [a.id for a in block.figures]})
        if block.note:
            extra["note"] = block.note
        return ToolResult(text=render_text(block), artifacts=block.figures, ok=block.ok,
                          error=None if block.ok else block.report, extra=extra)

    async def _setup(self, session: _Session, config: ExecutorConfig) -> KernelResult:
        cell = f"{RUNTIME_SOURCE}\n_pv_setup({config.mode!r}, {config.pairs()!r}, {self.timeout_s!r})\n"
        res = await session.kernel.execute(cell, SETUP_WALL_S)
        session.ready = res.ok
        return res

    async def _block(self, session: _Session, code: str, config: ExecutorConfig,
                     ctx: ToolContext) -> tuple[Block, dict[str, Any]]:
        official = config.mode == "official"
        extra: dict[str, Any] = {"backend": session.kernel.backend}
        if official and session.dead:
            # the original's worker is gone: its queue never answers, each block waits 20 s and times out
            return Block(report="Timeout Error", timed_out=True, note="the executor had ended earlier"), extra
        if not session.ready:
            res = await self._setup(session, config)
            if not res.ok:
                raise ToolError(f"the PyVision executor could not start in the sandbox: {_why(res)}")
        res = await session.kernel.execute(f"_pv_block({code!r}, {config.pairs()!r})", self.limits.wall_s)
        extra.update({"duration_s": res.exec.duration_s, "limit": res.exec.limit, "restarted": res.restarted})
        payload = _payload(res)
        if payload is None or res.ended:
            session.ready = False
            if official:
                session.dead = True
                return Block(report="Timeout Error", timed_out=True,
                             note=f"the executor ended ({_why(res)}), as the original's worker process dying"), extra
            if res.timed_out:
                return Block(report=timeout_report(self.timeout_s), timed_out=True, note=_why(res)), extra
            return Block(report=f"Error: the interpreter stopped ({_why(res)}); it was restarted: variables from "
                                "earlier blocks are gone (image_clue_i are loaded again)", note=_why(res)), extra
        if payload.get("stderr"):
            extra["stderr"] = payload["stderr"]
        if payload.get("traceback"):
            extra["traceback"] = payload["traceback"]
        if payload.get("timed_out") and not official:
            await session.kernel.restart()  # the stale block is stopped: no late result can arrive
            session.ready = False
            return Block(report=timeout_report(self.timeout_s), timed_out=True), extra
        by_clue = dict(zip(config.clues or range(len(config.inputs)), config.inputs, strict=False))
        parents = [by_clue[i] for i in session.named if i in by_clue] or list(config.inputs)
        figures, notes = await asyncio.to_thread(self._figures, ctx, payload, parents, official)
        if payload.get("bad_images"):
            notes.append(f"{payload['bad_images']} captured figure(s) were not valid base64")
        report = str(payload.get("report", ""))
        text = payload.get("text") if payload.get("has_text") else None
        return Block(report=report, text=None if text is None else str(text), figures=figures,
                     timed_out=bool(payload.get("timed_out")), note="; ".join(notes)), extra

    def _figures(self, ctx: ToolContext, payload: dict[str, Any], parents: list[str],
                 official: bool) -> tuple[list[Artifact], list[str]]:
        names = payload.get("images")
        if not isinstance(names, list):
            return [], []
        notes: list[str] = []
        if not official and len(names) > MAX_FIGURES:
            notes.append(f"{len(names) - MAX_FIGURES} more figure(s) not returned (at most {MAX_FIGURES} a block)")
            names = names[:MAX_FIGURES]
        out: list[Artifact] = []
        for name in names:
            try:
                data = read_member(ctx.workspace, str(name), MAX_FIGURE_BYTES)
                with Image.open(io.BytesIO(data)) as im:
                    w, h = im.size
                if w * h > MAX_FIGURE_PIXELS:
                    notes.append(f"a {w}x{h} figure is over the pixel limit")
                    continue
            except (WorkspaceError, OSError, ValueError) as exc:
                notes.append(f"a figure could not be read ({type(exc).__name__})")
                continue
            out.append(ctx.store.add_bytes(data, ".png", parents=parents, tool_call_id=ctx.call_id, tool=TOOL,
                                           size=(w, h)))
        return out, notes


def timeout_report(timeout_s: float) -> str:
    """The toolsight mode's timeout report: the original's words, and what happened."""
    return (f"Timeout Error: the code ran longer than {timeout_s:g} s and was stopped; the interpreter was "
            "restarted, so variables from earlier blocks are gone (image_clue_i are loaded again)")


def render_text(block: Block) -> str:
    """The result as text for the trajectory (the message itself is built by the agent)."""
    if not block.ok:
        return block.report
    figs = f"{len(block.figures)} figure(s)" if block.figures else "None"
    return f"Text Result:\n{block.text}\nImage Result: {figs}"


def executor_tools() -> list[Tool]:
    return [PyVisionExecutor()]


__all__ = ["MAX_FIGURES", "TIMEOUT_S", "TOOL", "TOOLSET", "Block", "ExecutorConfig", "PyVisionExecutor",
           "configure", "executor_tools", "render_text", "timeout_report"]
