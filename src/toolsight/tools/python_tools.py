"""The code tools: `python_image_processing` and `python_interpreter`, both run in the sandbox.

`python_image_processing` takes the contract of VisualToolBench's vision tool (paper App. D.4): its
description lists the task's image files; the code reads one, may use PIL, NumPy or OpenCV, and must
save `transformed_image_{i}.png` (i counts up per task). The descriptions here are toolsight's; a
benchmark that shows its paper's wording passes its own (`description=`) in a set it declares. New
images are harvested with count, size and pixel caps and become Artifacts whose parents are the input
images the code actually opened (seen by the sandbox server through inotify). `python_interpreter`
runs general Python, stateless by default or stateful (one long-lived sandboxed interpreter per task).
`python_kernel` is a stateful IPython kernel in the sandbox (Jupyter-style outputs; displayed images
become Artifacts). Each call's trace (`extra`) records the code, files read and written, duration,
exit status, the limit that ended it and which sandbox backend ran it. All of them reach the sandbox
through its interface (`sandbox.start`, `sandbox.open_kernel`), so they run on the backend in force
(`sandbox.use_backend`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolsight import imaging, sandbox
from toolsight.sandbox.interface import WorkspaceError, read_member
from toolsight.sandbox.models import ExecResult, Limits, clean_text
from toolsight.tools.base import Artifact, Tool, ToolContext, ToolError, ToolResult, ToolSpec
from toolsight.tools.calculator import Calculator

IMAGE_TOOL = "python_image_processing"
INTERPRETER_TOOL = "python_interpreter"
TRANSFORMED_RE = re.compile(r"^transformed_image_(\d+)\.png$")
NEXT_INDEX_KEY = f"{IMAGE_TOOL}.next_index"
SESSION_KEY = f"{INTERPRETER_TOOL}.session"
KERNEL_TOOL = "python_kernel"
KERNEL_KEY = f"{KERNEL_TOOL}.kernel"
MAX_CODE_CHARS = 5000
MAX_CANDIDATES = 64  # harvest looks at no more files than this per call
MAX_NOTES_CHARS = 2000
MAX_HARVEST_BYTES = 64 << 20
UNKNOWN_PROVENANCE = ("note: the sandbox could not track which files this call read (its event queue "
                      "overflowed); the provenance of images it produced is unknown")

CODE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "Python code to run.", "minLength": 1, "maxLength": MAX_CODE_CHARS},
    },
    "required": ["code"],
}

#: python_image_processing's description; `{image_list}` and `{processed_image_save_path}` are filled per task
IMAGE_DESCRIPTION = (
    "Run Python code that transforms an image and saves the result as PNG.\n"
    "- Read a source image from the working folder's file list: {image_list}.\n"
    "- Process it with PIL, NumPy or OpenCV (matplotlib cannot display images here).\n"
    "- Save each result as PNG in {processed_image_save_path}, named \"transformed_image_i.png\", where i "
    "starts at 0 and goes up by one on every call so no file is overwritten; you will see the saved images. "
    "Example:\n"
    "    img.save(f\"{processed_image_save_path}/transformed_image_{{i}}.png\", \"PNG\")\n"
)

#: the packages python_interpreter's description lists (name shown, import name), when installed
INTERPRETER_PACKAGES = [
    ("numpy", "numpy"), ("pandas", "pandas"), ("scipy", "scipy"), ("scikit-learn", "sklearn"), ("sympy", "sympy"),
    ("opencv-python (cv2)", "cv2"), ("Pillow (PIL)", "PIL"), ("matplotlib", "matplotlib"),
]


def installed(packages: Sequence[tuple[str, str]]) -> list[str]:
    """The names of the (name, import name) packages that can be imported here, in their order."""
    return [name for name, mod in packages if importlib.util.find_spec(mod) is not None]


def _interpreter_description() -> str:
    return (
        "Run Python code and return what it prints (stdout) and any error (stderr).\n\n"
        "Pre-installed packages:\n" + "\n".join(f"- {p}" for p in installed(INTERPRETER_PACKAGES))
    )


def _code_arg(args: dict[str, Any]) -> str:
    extra = sorted(set(args) - {"code"})
    if extra:
        raise ToolError(f"unknown argument(s) {', '.join(extra)}; the only argument is 'code' (a string)")
    code = args.get("code")
    if not isinstance(code, str) or not code.strip():
        raise ToolError("missing required argument 'code': a non-empty string of Python code")
    if len(code) > MAX_CODE_CHARS:
        raise ToolError(f"'code' is {len(code)} characters; the limit is {MAX_CODE_CHARS}")
    return code


def _output_text(res: ExecResult) -> str:
    parts: list[str] = []
    if res.stdout:
        parts.append(res.stdout.rstrip("\n") + ("\n[stdout truncated]" if res.stdout_truncated else ""))
    if res.stderr:
        parts.append("stderr:\n" + res.stderr.rstrip("\n") + ("\n[stderr truncated]" if res.stderr_truncated else ""))
    if res.error and (not res.stderr or res.limit or res.error not in res.stderr):
        parts.append(f"error: {res.error}")
    return "\n".join(parts)


def _trace(code: str, res: ExecResult) -> dict[str, Any]:
    extra = {"code": code, "ok": res.ok, **res.trace()}
    if not res.files_tracked:
        extra["provenance"] = "unknown"
    return extra



class PythonImageProcessing(Tool):
    """Model-written image code in the sandbox that saves `transformed_image_<i>.png` files.

    `description` may hold `{image_list}` and `{processed_image_save_path}`, filled per task.
    """

    def __init__(self, limits: Limits | None = None, max_images: int = 8, max_file_mb: int = 20,
                 max_pixels: int = 40_000_000, description: str = IMAGE_DESCRIPTION) -> None:
        super().__init__(IMAGE_TOOL, description, CODE_SCHEMA)
        self.limits = limits or Limits()
        self.max_images = max_images
        self.max_file_bytes = max_file_mb << 20
        self.max_pixels = max_pixels

    def spec(self, ctx: ToolContext | None = None) -> ToolSpec:
        names = image_list(ctx) if ctx is not None else ["<the task's image files>"]
        save = str(ctx.workspace.resolve()) if ctx is not None else "<the working directory>"
        desc = self.description.format(image_list=", ".join(names) or "(no images)",
                                       processed_image_save_path=save)
        return ToolSpec(name=self.name, description=desc, parameters=self.parameters)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        code = _code_arg(args)
        ws = ctx.workspace
        before = await asyncio.to_thread(_snapshot, ws)
        await asyncio.to_thread(ctx.store.make_read_only)
        res = await sandbox.start(ws, limits=self.limits).exec(code)
        # off the event loop: a call may leave many files, and decoding images takes time
        produced, notes = await asyncio.to_thread(self._harvest, ctx, res, before)
        extra = _trace(code, res)
        extra["images"] = [a.id for a in produced]
        nxt = int(ctx.state.get(NEXT_INDEX_KEY, 0))
        if not produced and res.ok:
            notes.append(
                f"No new transformed_image_{{i}}.png was saved; save the result as "
                f"f\"{{PROCESSED_IMAGE_SAVE_PATH}}/transformed_image_{nxt}.png\" to see it."
            )
        elif produced:
            notes.append(f"Saved: {', '.join(a.file for a in produced)}. The next file is transformed_image_{nxt}.png.")
        note_text = clean_text("\n".join(notes))
        if len(note_text) > MAX_NOTES_CHARS:
            note_text = note_text[:MAX_NOTES_CHARS] + " [notes truncated]"
        text = "\n".join(p for p in [_output_text(res), note_text] if p)
        return ToolResult(text=text, artifacts=produced, ok=res.ok, error=None if res.ok else (res.error or "failed"),
                          extra=extra)

    def _harvest(self, ctx: ToolContext, res: ExecResult, before: dict[str, tuple[int, int, int]]
                 ) -> tuple[list[Artifact], list[str]]:
        ws = ctx.workspace
        after = _snapshot(ws)
        changed = {n for n, sig in after.items() if before.get(n) != sig}
        matches = [(int(m.group(1)), n) for n in changed | set(res.files_written)
                   if (m := TRANSFORMED_RE.match(n)) and n in after]
        candidates = sorted(matches)[:MAX_CANDIDATES]
        others = sorted(n for n in changed if not TRANSFORMED_RE.match(n)
                        and n.lower().endswith((".png", ".jpg", ".jpeg", ".webp", ".bmp")))
        notes: list[str] = []
        if not res.files_tracked:
            notes.append(UNKNOWN_PROVENANCE)
        if len(matches) > MAX_CANDIDATES:
            notes.append(f"{len(matches)} transformed_image files were written; only the first "
                         f"{MAX_CANDIDATES} were looked at")
        if others:
            notes.append(f"note: {', '.join(others[:5])} written but only transformed_image_{{i}}.png files are returned")
        for item in res.files_skipped[:5]:
            notes.append(f"note: {item['name']} was not kept: {item['reason']}")
        by_file = {a.file: a for a in ctx.store.all()}
        parents = [by_file[n].id for n in res.files_read if n in by_file]
        produced: list[Artifact] = []
        total = 0
        for idx, name in candidates:
            if len(produced) >= self.max_images:
                notes.append(f"only the first {self.max_images} images of a call are returned")
                break
            if total >= MAX_HARVEST_BYTES:
                notes.append("the images of this call are over the size cap; the rest are not returned")
                break
            try:
                # read once; everything below is checked on these bytes and registers these bytes
                data = read_member(ws, name, self.max_file_bytes)
            except WorkspaceError as exc:
                notes.append(f"{name} skipped: {exc}")
                continue
            total += len(data)
            problem = self._check(data)
            if problem:
                notes.append(f"{name} skipped: {problem}")
                continue
            overwrote = name in by_file
            try:
                art = ctx.store.add_bytes(data, ".png", parents=[p for p in parents if by_file.get(name) is None
                                                                 or p != by_file[name].id],
                                          tool_call_id=ctx.call_id, tool=self.name,
                                          file_name=None if overwrote else name)
            except Exception as exc:
                notes.append(f"{name} skipped: not a readable image ({type(exc).__name__}: {exc})")
                continue
            if overwrote:
                notes.append(f"{name} already existed and was overwritten; use a new index i")
            produced.append(art)
            ctx.state[NEXT_INDEX_KEY] = max(int(ctx.state.get(NEXT_INDEX_KEY, 0)), idx + 1)
        return produced, notes

    def _check(self, data: bytes) -> str | None:
        if len(data) > self.max_file_bytes:
            return f"{len(data) >> 20} MiB is over the {self.max_file_bytes >> 20} MiB limit"
        try:  # the header only (the guarded decoder): a decompression bomb is never decoded
            info = imaging.check(data, max_pixels=self.max_pixels, max_bytes=self.max_file_bytes, what="it")
        except imaging.ImageRejected as exc:
            return str(exc)
        if info.format != "PNG":
            return f"it is {info.format}, not PNG"
        return None


def image_list(ctx: ToolContext) -> list[str]:
    """The task's image file names: inputs first, then images produced so far."""
    arts = ctx.store.all()
    return [a.file for a in arts if a.source == "input"] + [a.file for a in arts if a.source != "input"]


def _snapshot(ws: Path, cap: int = 20000) -> dict[str, tuple[int, int, int]]:
    out: dict[str, tuple[int, int, int]] = {}
    with contextlib.suppress(OSError), os.scandir(ws) as it:
        for e in it:
            if len(out) >= cap:
                break
            with contextlib.suppress(OSError):
                st = e.stat(follow_symlinks=False)
                out[e.name] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return out


class PythonInterpreter(Tool):
    """General Python in the sandbox; `stateful=True` keeps one interpreter (and its variables) per task."""

    def __init__(self, limits: Limits | None = None, stateful: bool = False, description: str | None = None) -> None:
        super().__init__(INTERPRETER_TOOL, description or _interpreter_description(), CODE_SCHEMA)
        self.limits = limits or Limits()
        self.stateful = stateful

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        code = _code_arg(args)
        await asyncio.to_thread(ctx.store.make_read_only)
        if self.stateful:
            box = ctx.state.get(SESSION_KEY)
            if box is None:
                box = sandbox.start(ctx.workspace, limits=self.limits, stateful=True, profile="full")
                ctx.state[SESSION_KEY] = box  # Toolbox.aclose() ends it
        else:
            box = sandbox.start(ctx.workspace, limits=self.limits, profile="full")
        res = await box.exec(code)
        extra = _trace(code, res)
        extra["stateful"] = self.stateful
        text = _output_text(res)
        if res.session_restarted:
            text = "(note: the interpreter was restarted; earlier variables are gone)\n" + text
        return ToolResult(text=text, ok=res.ok, error=None if res.ok else (res.error or "failed"), extra=extra)


class PythonKernel(Tool):
    """A Jupyter-style stateful kernel (IPython, in the sandbox): stdout, the last expression's value,
    displayed images (IPython.display, PIL images, matplotlib figures) and IPython tracebacks."""

    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__(KERNEL_TOOL, KERNEL_DESCRIPTION, CODE_SCHEMA)
        self.limits = limits or Limits()

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        code = _code_arg(args)
        await asyncio.to_thread(ctx.store.make_read_only)
        kernel = ctx.state.get(KERNEL_KEY)
        if kernel is None:
            kernel = sandbox.open_kernel(ctx.workspace, self.limits)
            ctx.state[KERNEL_KEY] = kernel  # Toolbox.aclose() ends it
        res = await kernel.execute(code, self.limits.wall_s)
        parts: list[str] = []
        if res.restarted:
            parts.append("(note: the kernel was restarted; earlier variables are gone)")
        artifacts: list[Artifact] = []
        for out in res.outputs:
            if out.kind == "stream" and out.text:
                parts.append(out.text.rstrip("\n") if out.name == "stdout" else "stderr:\n" + out.text.rstrip("\n"))
            elif out.kind == "execute_result" and out.text is not None:  # an image value has its text too
                parts.append(f"Out[{res.execution_count}]: {out.text}")
            elif out.kind == "error" and out.text:
                parts.append(out.text)
            if out.image:
                art = await asyncio.to_thread(register_display, ctx, out.image, self.name)
                if isinstance(art, Artifact):
                    artifacts.append(art)
                else:
                    parts.append(art)
        reason = res.stop_reason(self.limits)  # killed (memory, time, a signal): say why, never an empty result
        if res.timed_out:
            parts.append(f"error: the cell ran longer than {self.limits.wall_s:g} s and the kernel was restarted")
        elif reason:
            parts.append(f"error: {reason}")
        extra = _trace(code, res.exec)
        extra.update({"execution_count": res.execution_count, "images": [a.id for a in artifacts],
                      "outputs": [o.model_dump(exclude_none=True) for o in res.outputs][:50]})
        err = None if res.ok else (f"{res.error.ename}: {res.error.evalue}" if res.error else res.exec.error or "failed")
        return ToolResult(text="\n".join(parts), artifacts=artifacts, ok=res.ok, error=err, extra=extra)


KERNEL_DESCRIPTION = (
    "A stateful Python (IPython/Jupyter) kernel. Variables persist across calls. The value of the last "
    "expression is shown; show images with IPython.display.display (a PIL image, or "
    "IPython.display.Image(filename=...)) or matplotlib's plt.show(). numpy (np), cv2, matplotlib.pyplot (plt) "
    "and PIL are imported."
)


DISPLAY_MAX_PIXELS = 40_000_000
DISPLAY_MAX_BYTES = 20 << 20


def register_display(ctx: ToolContext, name: str, tool: str) -> Artifact | str:
    """An image a cell displayed (written by the kernel into the workspace): read once, check, register."""
    try:
        data = read_member(ctx.workspace, name, DISPLAY_MAX_BYTES)
        try:
            info = imaging.check(data, max_pixels=DISPLAY_MAX_PIXELS, max_bytes=DISPLAY_MAX_BYTES,
                                 what="a displayed image")
        except imaging.ImageRejected as exc:
            return f"note: {exc}"
        return ctx.store.add_bytes(data, Path(name).suffix or ".png", tool_call_id=ctx.call_id, tool=tool,
                                   size=info.size)
    except Exception as exc:
        return f"note: a displayed image could not be read ({type(exc).__name__})"


def code_tools(limits: Limits | None = None, stateful: bool = False) -> list[Tool]:
    """python_image_processing, python_interpreter (stateless unless `stateful`) and calculator."""
    return [PythonImageProcessing(limits), PythonInterpreter(limits, stateful=stateful), Calculator()]


def image_processing_tools(limits: Limits | None = None) -> list[Tool]:
    """python_image_processing only."""
    return [PythonImageProcessing(limits)]


def stateful_code_tools(limits: Limits | None = None) -> list[Tool]:
    """Like code_tools, with a stateful python_interpreter."""
    return code_tools(limits, stateful=True)


def kernel_tools(limits: Limits | None = None) -> list[Tool]:
    """python_kernel (a stateful IPython kernel in the sandbox) and calculator."""
    return [PythonKernel(limits), Calculator()]

