"""VTC-Bench's code track: `code_interpreter(reasoning, code)` on toolsight's sandboxed IPython kernel.

Two variants, one per loop mode (tool sets registered in `vtc_bench.VTC_TOOLSETS`).

**`vtc_code_official`** (the official loop's `code` setting) is the reference tool —
`qwen_agent/tools/code_interpreter.py` of zhuzil/VTC-Bench @ 484ef7c2 — as the model meets it:

- schema: the reference's name, description and parameters, verbatim (`vtc_prompts`);
- arguments: the JSON string is read as the reference reads it (a fenced block anywhere in the
  string wins, then JSON5 `code`, then the string itself); `reasoning` is ignored; a `code` that is
  not a string fails with the agent's generic tool-error text, as the reference's regex does;
- before running: the conversation's images are copied into `<work>/<task id>/` (the reference's
  file access), pip / conda / apt installs are refused with the reference's message, lines starting
  with `cv2.imshow(`, `cv2.waitKey(`, `cv2.destroyAllWindows(` are dropped, and empty code returns "";
- the kernel: one per task, kept across the driver's whole-task reruns (the reference keeps one per
  agent, and the driver makes one agent per task); working folder
  `workspace/tools/code_interpreter/<model>/<task id>` of the task workspace; started with the
  reference's init cell (its imports and names, `input()` disabled, the `_M6CountdownTimer` alarm,
  `sns.set_theme()`, `%xmode Minimal`); each call runs `_M6CountdownTimer.start(30)\\n<code>\\n\\n`
  and then `_M6CountdownTimer.cancel()` as cells of their own, so `Cell In[N]` counts as there;
- the result: the kernel's outputs in order as "stdout:\\n\\n```\\n…\\n```", "execute_result:…",
  "error:…" blocks; a displayed image is saved as `<work>/<task id>/<uuid>.png` and named
  `![fig-001](path)`; the 30 s alarm reads "Timeout: Code execution exceeded the time limit."; a cell
  still running after 300 s (the reference's wait for each kernel message) is killed ("Timeout: Code
  execution exceeded 300 seconds.", a fresh kernel next call); an empty result is "Finished
  execution."; image paths in the text become image items (`results.images_in_text`), each
  registered as an artifact.

`INIT_VARIANT` picks the init cell: "published" (default: the reference as published, whose CJK
font loads, so the cell runs to its end and `%xmode Minimal` applies; the font itself is not
bundled, plots use DejaVu Sans) or "recorded" (the golden-wire recording's environment: the font
file was an empty stand-in, the init cell stopped at the font line, tracebacks kept IPython's
Context mode and `PIL.Image.show` was not replaced).

**`vtc_code`** (`--loop toolsight`) is the improved variant on the same kernel and schema: the
working folder is the task workspace (images by file name), tracebacks keep Context mode and the
model's own line numbers (no injected timer line), displayed images *and* image files the code
writes are returned (the reference loses an image saved without `display()`), cv2 GUI calls are
no-ops instead of deleted lines (deleting a line can leave an empty block), installs get a clear
message, and a cell longer than the wall clock restarts the kernel with a note saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import json5

from toolsight import imaging, sandbox
from toolsight.benchmarks.vtc_bench import prompts as P
from toolsight.benchmarks.vtc_bench.qwen import Item, basename
from toolsight.benchmarks.vtc_bench.results import images_in_text
from toolsight.benchmarks.vtc_bench.tools.interface import generic_error, inside
from toolsight.sandbox import Kernel, KernelOutput, KernelResult, Limits
from toolsight.sandbox.interface import WorkspaceError, read_member
from toolsight.tools.base import Artifact, Tool, ToolContext, ToolError, ToolResult
from toolsight.tools.python_tools import (
    DISPLAY_MAX_BYTES,
    DISPLAY_MAX_PIXELS,
    MAX_CODE_CHARS,
    register_display,
)

OFFICIAL_TOOLSET = "vtc_code_official"
TOOLSIGHT_TOOLSET = "vtc_code"
WORK_DIR = "workspace/tools/code_interpreter"  # BaseToolWithFileAccess: <DEFAULT_WORKSPACE>/tools/<name>
#: ToolContext.state keys the official loop fills: the model name the driver puts in the working
#: folder, and the image paths of the conversation (the reference copies them before every call)
MODEL_KEY = "vtc_official.model"
FILES_KEY = "vtc_official.files"
OFFICIAL_KERNEL_KEY = "vtc_code_official.kernel"
TOOLSIGHT_KERNEL_KEY = "vtc_code.kernel"
CALL_TIMEOUT_S = 30  # CodeInterpreter.call(timeout=30): the alarm set before each cell
#: toolsight's caps on the arguments (the reference has none): the official tool's whole argument string,
#: and how long reading it (JSON5, the forbidden-command check) may take off the event loop
MAX_ARGUMENT_CHARS = 64_000
MAX_REASONING_CHARS = 20_000
READ_DEADLINE_S = 10.0
TOO_LONG = ("The code_interpreter arguments are {n:,} characters; the limit is {cap:,}. Send shorter code "
            "(build large data in several calls, or compute it in the code).")
UNREADABLE = "The code_interpreter arguments could not be read within {s:g} s; send shorter code."
IOPUB_TIMEOUT_S = 300.0  # _execute_code: how long it waits for each kernel message
INIT_TIMEOUT_S = 120.0
InitVariant = Literal["published", "recorded"]
INIT_VARIANT: InitVariant = "published"
#: the reference has no CPU or memory cap of its own; the sandbox's memory cap stays, CPU gets the
#: driver's per-attempt hour (a kernel's CPU limit counts over the whole task)
OFFICIAL_LIMITS = Limits(wall_s=IOPUB_TIMEOUT_S, session_cpu_s=3600)
TOOLSIGHT_LIMITS = Limits(wall_s=120.0, session_cpu_s=1200)

TIMEOUT_ALARM = "Timeout: Code execution exceeded the time limit."
TIMEOUT_WAIT = "Timeout: Code execution exceeded {seconds} seconds."
UNEXPECTED = "The code interpreter encountered an unexpected error."
FINISHED = "Finished execution."

# --------------------------------------------------------------------------- the reference's code handling

_FENCE = re.compile(r"```[^\n]*\n(.+?)```", re.DOTALL)
# `_check_forbidden_commands`: the patterns (also named in the message), tried in this order, ignoring case
FORBIDDEN_PATTERNS = (
    r"!pip\s+install", r"!pip\s+-q\s+install", r"!pip3\s+install", r"!pip3\s+-q\s+install",
    r"subprocess.*pip.*install", r"os.system.*pip.*install", r"subprocess.*conda.*install",
    r"os.system.*conda.*install", r"!conda\s+install", r"!apt-get\s+install", r"!apt\s+install",
    r"!yum\s+install",
)
FORBIDDEN_MESSAGE = "❌ Package installation commands are not allowed. Detected forbidden command pattern: {pattern}"
_BLOCKING_PREFIXES = ("cv2.imshow(", "cv2.waitKey(", "cv2.destroyAllWindows(")
_BLOCKING_ASSIGNED = ("= cv2.imshow(", "= cv2.waitKey(")


def remove_code_blocks(text: Any) -> Any:
    """`remove_code_blocks`: the first fenced block's body, else the text stripped (non-strings raise)."""
    if not text:
        return text
    m = _FENCE.search(text)
    return m.group(1).strip() if m else text.strip()


def extract_code(text: str) -> str:
    """`extract_code`: a fenced block, else a JSON5 object's string `code`, else the text stripped."""
    if not text:
        return ""
    m = _FENCE.search(text)
    if m:
        return m.group(1).strip()
    with contextlib.suppress(Exception):
        if text.strip().startswith("{"):
            parsed = json5.loads(text)
            if isinstance(parsed, dict) and isinstance(parsed.get("code"), str):
                return str(parsed["code"]).strip()
    return text.strip()


def read_code(params: str | dict[str, Any] | None) -> Any:
    """The code `CodeInterpreter.call` runs for these arguments (raises where the reference raises).

    The string is parsed by JSON5 once: where the reference parses it a second time (`extract_code`
    after a failed parse), that parse of the same text fails the same way, and the result is the
    text itself (the string has no fenced block here). JSON5 is pure Python (~40 µs a character):
    callers cap the string's size and run this off the event loop (`OfficialCodeInterpreter`)."""
    code: Any
    if isinstance(params, str):
        code = remove_code_blocks(params)
        if not (code and code != params):  # the reference's test: a fenced block found in the string
            try:
                code = json5.loads(params).get("code", "")
            except Exception:
                code = params.strip()
    elif isinstance(params, dict):
        code = params.get("code", "")
    else:
        code = str(params)
    return remove_code_blocks(code)


def _segments(pattern: str) -> tuple[re.Pattern[str], ...] | None:
    """A `a.*b.*c` pattern whose parts are fixed-length (no quantifier, group or class) as its compiled
    parts; None for any other pattern (it is searched as it is)."""
    parts = pattern.split(".*")
    if len(parts) < 2 or any(ch in part for part in parts for ch in "*+?{}()[]|^$\\"):
        return None
    return tuple(re.compile(part, re.IGNORECASE) for part in parts)


_CHECKS: tuple[tuple[str, re.Pattern[str] | tuple[re.Pattern[str], ...]], ...] = tuple(
    (p, _segments(p) or re.compile(p, re.IGNORECASE)) for p in FORBIDDEN_PATTERNS)


def _chain(parts: tuple[re.Pattern[str], ...], code: str) -> bool:
    """`re.search("a.*b.*c", code, re.I)` in linear time: `.` never matches a newline, so a match lies
    in one line, and there it exists iff the leftmost `a`, then the leftmost `b` after its end, then
    a `c` after that are found (each part matches a fixed number of characters, so the leftmost
    choice leaves the most room). The official pattern backtracks cubically on a long line (12 KB of
    "subprocess pip " took 34 s)."""
    for line in code.split("\n"):
        pos = 0
        for part in parts:
            m = part.search(line, pos)
            if m is None:
                break
            pos = m.end()
        else:
            return True
    return False


def forbidden_command(code: str) -> str | None:
    """`_check_forbidden_commands`: the refusal naming the first official pattern that matches, or None.

    Same verdicts as `re.search(pattern, code, re.IGNORECASE)` for each pattern in order (tested
    against it on a corpus of code), in time linear in the code's length."""
    for pattern, check in _CHECKS:
        hit = _chain(check, code) if isinstance(check, tuple) else check.search(code) is not None
        if hit:
            return FORBIDDEN_MESSAGE.format(pattern=pattern)
    return None


def read_and_check(params: str | dict[str, Any] | None) -> tuple[Any, str | None]:
    """`read_code`, then `forbidden_command` on it (a non-string code raises there, as in the reference)."""
    code = read_code(params)
    return code, forbidden_command(code)


def argument_chars(params: str | dict[str, Any] | None) -> int:
    """The size of a call's arguments: the string's length, or the total of a dict's string values."""
    if isinstance(params, str):
        return len(params)
    if isinstance(params, dict):
        return sum(len(v) for v in params.values() if isinstance(v, str))
    return 0


def remove_blocking_calls(code: str) -> str:
    """`_remove_blocking_cv2_calls`: drop whole lines that start with (or assign) a cv2 GUI call."""
    kept = [line for line in code.split("\n")
            if not (line.strip().startswith(_BLOCKING_PREFIXES) or any(a in line.strip() for a in _BLOCKING_ASSIGNED))]
    return "\n".join(kept)


def official_cell(code: str, timeout: int | None = None) -> str:
    """The cell the reference runs: the alarm line, the code (the font re-set after `sns.set_theme(`), two newlines."""
    lines: list[str] = []
    for line in f"_M6CountdownTimer.start({CALL_TIMEOUT_S if timeout is None else timeout})\n{code}".split("\n"):
        lines.append(line)
        if line.startswith("sns.set_theme("):
            lines.append('plt.rcParams["font.family"] = _m6_font_prop.get_name()')
    return "\n".join(lines) + "\n\n"


# The reference's init cell (`code_interpreter_init_kernel.py` + "%xmode Minimal"), as behaviour: the
# same imports and names in the user namespace. It runs in the task's working folder.
_INIT_HEAD = """\
import os
os.chdir({work!r})
import json, math, re, signal, threading, time
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.font_manager import FontProperties
from sympy import Eq, solve, symbols
from PIL import Image
from IPython.display import display, Image as IPythonImage
globals().pop('cv2', None), globals().pop('PILImage', None)  # toolsight's kernel pre-imports them; the reference does not

def input(*args, **kwargs):
    raise NotImplementedError('Python input() function is disabled.')

def _m6_timout_handler(_signum=None, _frame=None):
    raise TimeoutError('M6_CODE_INTERPRETER_TIMEOUT')

signal.signal(signal.SIGALRM, _m6_timout_handler)

class _M6CountdownTimer:
    @classmethod
    def start(cls, timeout):
        signal.alarm(timeout)

    @classmethod
    def cancel(cls):
        signal.alarm(0)

sns.set_theme()
"""
# published: the font loads (here matplotlib's DejaVu Sans stands in for Alibaba PuHuiTi), PIL's
# image viewer is replaced by a no-op (the reference shows it in a thread and kills the viewer)
_INIT_PUBLISHED = """\
_m6_font_prop = FontProperties(family='DejaVu Sans')
plt.rcParams['font.family'] = _m6_font_prop.get_name()

class _AutoCloseImageManager:
    @classmethod
    def setup(cls):
        Image.Image.show = lambda img_instance, title=None: None

_AutoCloseImageManager.setup()
%xmode Minimal
"""
# recorded: an empty font file; get_name() raises and the rest of the cell never runs
_INIT_RECORDED = """\
_m6_font_prop = FontProperties(fname='/dev/null')
plt.rcParams['font.family'] = _m6_font_prop.get_name()
"""


def init_cell(work: Path, variant: InitVariant) -> str:
    return _INIT_HEAD.format(work=str(work)) + (_INIT_PUBLISHED if variant == "published" else _INIT_RECORDED)


# --------------------------------------------------------------------------- formatting (_execute_code)


def _block(kind: str, text: str) -> str:
    return f"\n\n{kind}:\n\n```\n{text}\n```"


def _error_text(out: KernelOutput) -> str:
    text = out.text or ""
    return TIMEOUT_ALARM if "M6_CODE_INTERPRETER_TIMEOUT" in text else text


@dataclass
class _Kernel:
    """One task's kernel and whether it has run its init cell (a dead kernel starts again)."""

    kernel: Kernel
    ready: bool = False

    async def aclose(self) -> None:
        await self.kernel.aclose()


_ARROW = re.compile(r"^-+>\s*\d+\s")  # IPython's marker of the failing line ("---> 34 ...", "----> 34 ..." by version)


def _stopped_at_font(init: KernelResult) -> bool:
    """The recorded variant's expected failure: the empty font file, on the font line of the init cell."""
    lines = [ln for tb in (init.error.traceback[:3] if init.error else []) for ln in tb.splitlines()]
    return any(_ARROW.match(ln) and "_m6_font_prop.get_name()" in ln for ln in lines)


def work_dirs(ws: Path, model: str, qid: str) -> tuple[Path, Path]:
    """(the kernel's working folder, the folder images are served from), as the reference joins them."""
    work = ws / WORK_DIR
    for part in (model, qid):
        if part:
            work = work / part
    serve = work / qid if qid else work
    if not inside(serve, ws) or not inside(work, ws):
        raise ValueError(f"the working folder for model {model!r} and task {qid!r} would leave the workspace")
    return work, serve


def copy_files(files: list[str], ws: Path, save: Path) -> None:
    """`BaseToolWithFileAccess.call`: the conversation's files into the serve folder (local ones only)."""
    for f in files:
        if f.startswith(("data:", "data;", "http://", "https://")):
            continue  # inline data is skipped by the reference; URLs are never fetched here
        src = Path(f[len("file://"):] if f.startswith("file://") else f)
        src = src if src.is_absolute() else ws / src
        if not src.is_file() or not inside(src, ws):
            continue
        dest = save / basename(f)
        if not inside(dest, ws) or os.path.abspath(src) == os.path.abspath(dest):
            continue
        with contextlib.suppress(OSError):
            if dest.exists():
                a, b = src.stat(), dest.stat()
                if a.st_size == b.st_size and abs(a.st_mtime - b.st_mtime) < 1:
                    continue
                dest.unlink()
            shutil.copyfile(src, dest)
            dest.chmod(0o666)  # the code may overwrite it, as in the driver's folder


class OfficialCodeInterpreter(Tool):
    """The reference's `code_interpreter` on the sandbox kernel (see the module docstring)."""

    def __init__(self, limits: Limits | None = None, variant: InitVariant | None = None) -> None:
        super().__init__(P.CODE_TOOL_NAME, P.CODE_TOOL_DESCRIPTION, dict(P.CODE_TOOL_PARAMETERS))
        self.limits = limits
        self.variant = variant

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self(args, ctx)

    async def __call__(self, raw_args: str | dict[str, Any] | None, ctx: ToolContext) -> ToolResult:
        try:
            return await self._call(raw_args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # Agent._call_tool's text for an exception the tool raised
            text = generic_error(self.name, exc)
            return ToolResult(text=text, ok=False, error=text, extra={"official": {"form": "str", "text": text}})

    async def _call(self, raw_args: str | dict[str, Any] | None, ctx: ToolContext) -> ToolResult:
        ws = ctx.workspace.resolve()
        work, serve = work_dirs(ws, str(ctx.state.get(MODEL_KEY) or ""), ctx.task_id)
        files = [f for f in ctx.state.get(FILES_KEY) or [] if isinstance(f, str)]

        def prepare() -> None:
            # made by the harness, not by the kernel: a folder the kernel creates lives only in its overlay
            # and would never show the images served into it later; writable for the sandbox's user
            for d in (work, serve):
                d.mkdir(parents=True, exist_ok=True)
                d.chmod(0o1777)
            copy_files(files, ws, serve)

        await asyncio.to_thread(prepare)
        size = argument_chars(raw_args)
        if size > MAX_ARGUMENT_CHARS:
            return self._result(TOO_LONG.format(n=size, cap=MAX_ARGUMENT_CHARS), ws, ctx, ok=False,
                                extra={"refused": True, "argument_chars": size})
        try:  # JSON5 is slow pure Python: off the event loop, with a deadline
            code, refused = await asyncio.wait_for(asyncio.to_thread(read_and_check, raw_args), READ_DEADLINE_S)
        except TimeoutError:
            return self._result(UNREADABLE.format(s=READ_DEADLINE_S), ws, ctx, ok=False, extra={"refused": True})
        if refused is not None:
            return self._result(refused, ws, ctx, ok=False, extra={"refused": True})
        code = remove_blocking_calls(code)
        if not code.strip():
            return self._result("", ws, ctx, extra={"code": code})
        state = await self._kernel(ctx, work)
        res = await state.kernel.execute(official_cell(code), IOPUB_TIMEOUT_S)
        if res.ended:
            state.ready = False  # the reference's kernel would still be busy; here it is gone
        else:
            cancel = await state.kernel.execute("_M6CountdownTimer.cancel()", 30.0)
            state.ready = not cancel.ended
        text = await asyncio.to_thread(self._format, res, ws, serve)
        extra = {"code": code, "execution_count": res.execution_count, "files_read": res.exec.files_read,
                 "files_written": res.exec.files_written, "limit": res.exec.limit, "kernel_restarted": res.restarted,
                 "cpu_s": res.exec.cpu_s}
        ok = res.ok and not any(o.kind == "error" for o in res.outputs)
        return self._result(text if text.strip() else FINISHED, ws, ctx, ok=ok, extra=extra)

    async def _kernel(self, ctx: ToolContext, work: Path) -> _Kernel:
        state = ctx.state.get(OFFICIAL_KERNEL_KEY)
        if not isinstance(state, _Kernel):
            limits = self.limits or OFFICIAL_LIMITS.model_copy(update={"wall_s": IOPUB_TIMEOUT_S})
            state = _Kernel(sandbox.open_kernel(ctx.workspace, limits))
            ctx.state[OFFICIAL_KERNEL_KEY] = state  # Toolbox.aclose() ends it
        if not state.ready:
            variant = self.variant or INIT_VARIANT
            init = await state.kernel.execute(init_cell(work, variant), INIT_TIMEOUT_S)
            if init.ended:
                raise RuntimeError(f"the code kernel did not start: {init.exec.error or 'unknown error'}")
            if init.error is not None and not (variant == "recorded" and _stopped_at_font(init)):
                # the reference refuses to start without its packages (_check_deps_for_code_interpreter)
                raise RuntimeError(f"the code kernel's first cell failed ({init.error.ename}: {init.error.evalue}); "
                                   "VTC-Bench's code interpreter needs IPython, seaborn, pandas and sympy in the "
                                   "sandbox: pip install 'toolsight[sandbox-libs]'")
            state.ready = True
        return state

    def _format(self, res: KernelResult, ws: Path, serve: Path) -> str:
        """`_execute_code`'s result text: one block per kernel message, images served as files."""
        result = ""
        idx = 0
        outputs = list(res.outputs)
        if res.ended and not outputs and res.stdout:
            outputs = [KernelOutput(kind="stream", name="stdout", text=res.stdout)]  # what was printed before
        for out in outputs:
            kind: str = out.kind  # a stream's block is named after the stream (stdout / stderr)
            text, image = "", ""
            if out.kind == "stream":
                kind, text = out.name or "stdout", out.text or ""
            elif out.kind == "error":
                text = _error_text(out)
            elif out.kind == "execute_result":
                text = out.text or ""
            elif out.kind == "display_data" and not out.image:
                text = out.text or ""
            if out.image:
                try:
                    path = serve_image(ws, out.image, out.mime or "image/png", serve)
                except Exception:  # the reference's read loop ends here, its text replaced by this
                    result += _block(kind, UNEXPECTED)
                    break
                idx += 1
                image = f"![fig-{idx:03d}]({path.relative_to(ws)})"
            if text:
                result += _block(kind, text)
            if image:
                result += f"\n\n{image}"
        if res.ended:
            result += _block("error", TIMEOUT_WAIT.format(seconds=f"{IOPUB_TIMEOUT_S:g}") if res.timed_out
                             else UNEXPECTED)
        return result.lstrip("\n")

    def _result(self, text: str, ws: Path, ctx: ToolContext, ok: bool = True,
                extra: dict[str, Any] | None = None) -> ToolResult:
        shown = images_in_text(text, ws)
        info = dict(extra or {})
        if isinstance(shown, str):
            info["official"] = {"form": "str", "text": shown}
            return ToolResult(text=text, ok=ok, error=None if ok else text, extra=info)
        artifacts = register_images(shown, ctx, self.name)
        info["official"] = {"form": "list", "items": [{"text": i.text, "image": i.image} for i in shown]}
        return ToolResult(text=text, artifacts=artifacts, ok=ok, error=None if ok else text, extra=info)


def serve_image(ws: Path, name: str, mime: str, serve: Path) -> Path:
    """`_serve_image`: a displayed image re-saved by PIL as `<serve>/<uuid>.<png|jpeg>` (decoded by the
    guarded decoder: a displayed image over its pixel cap is refused before it is decoded)."""
    data = read_member(ws, name, DISPLAY_MAX_BYTES)
    ext = "jpeg" if mime == "image/jpeg" else "png"
    path = serve / f"{uuid.uuid4()}.{ext}"
    if not inside(path, ws):
        raise WorkspaceError(f"{path} is outside the workspace")
    with imaging.open_image(data, max_pixels=DISPLAY_MAX_PIXELS, max_bytes=DISPLAY_MAX_BYTES,
                            what="a displayed image") as im:
        im.save(path)
    path.chmod(0o666)
    return path


def register_images(items: list[Item], ctx: ToolContext, tool: str) -> list[Artifact]:
    """One artifact per image item (files in the workspace), in the items' order."""
    out: list[Artifact] = []
    for it in items:
        if not it.image or it.image.startswith(("http://", "https://", "data:")):
            continue
        with contextlib.suppress(Exception):
            out.append(ctx.store.add_file(Path(it.image), tool_call_id=ctx.call_id or None, tool=tool))
    return out


# --------------------------------------------------------------------------- toolsight variant

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
MAX_IMAGES = 8
INSTALL_REFUSED = ("package installation is not available here (the sandbox has no network), so the code was "
                   "not run; numpy, cv2, PIL, matplotlib, pandas, scipy, sympy and seaborn are installed")


def _snapshot(ws: Path) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    with contextlib.suppress(OSError), os.scandir(ws) as it:
        for e in it:
            if e.name.lower().endswith(IMAGE_SUFFIXES):
                with contextlib.suppress(OSError):
                    st = e.stat(follow_symlinks=False)
                    out[e.name] = (st.st_mtime_ns, st.st_size)
    return out


class VTCCodeInterpreter(Tool):
    """`code_interpreter(reasoning, code)` for the toolsight loop (see the module docstring)."""

    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__(P.CODE_TOOL_NAME, P.CODE_TOOL_DESCRIPTION, dict(P.CODE_TOOL_PARAMETERS))
        self.limits = limits or TOOLSIGHT_LIMITS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        extra_args = sorted(set(args) - {"reasoning", "code"})
        if extra_args:
            raise ToolError(f"unknown argument(s) {', '.join(extra_args)}; the arguments are 'reasoning' and 'code'")
        reasoning = args.get("reasoning")
        if reasoning is not None and not isinstance(reasoning, str):
            raise ToolError("'reasoning' must be a string")
        if reasoning is not None and len(reasoning) > MAX_REASONING_CHARS:
            raise ToolError(f"'reasoning' is {len(reasoning)} characters; the limit is {MAX_REASONING_CHARS}")
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            raise ToolError("missing required argument 'code': a non-empty string of Python code")
        if len(code) > MAX_CODE_CHARS:
            raise ToolError(f"'code' is {len(code)} characters; the limit is {MAX_CODE_CHARS}")
        if forbidden_command(code) is not None:
            raise ToolError(INSTALL_REFUSED)
        kernel = ctx.state.get(TOOLSIGHT_KERNEL_KEY)
        if not isinstance(kernel, Kernel):
            kernel = sandbox.open_kernel(ctx.workspace, self.limits)
            ctx.state[TOOLSIGHT_KERNEL_KEY] = kernel  # Toolbox.aclose() ends it
        ws = ctx.workspace
        known = {a.file for a in ctx.store.all()}
        before = await asyncio.to_thread(_snapshot, ws)
        await asyncio.to_thread(ctx.store.make_read_only)
        res = await kernel.execute(code, self.limits.wall_s)
        parts: list[str] = []
        if res.restarted:
            parts.append("(note: the kernel was restarted; earlier variables are gone)")
        artifacts: list[Artifact] = []
        text = ""
        for out in res.outputs:
            if out.kind == "stream" and out.text:
                text += _block(out.name or "stdout", out.text)
            elif out.kind in ("execute_result", "display_data", "error") and out.text:
                text += _block(out.kind, out.text)
            if out.image:
                art = await asyncio.to_thread(register_display, ctx, out.image, self.name)
                if isinstance(art, Artifact):
                    artifacts.append(art)
                else:
                    parts.append(art)
        if res.ended:
            why = (f"the cell ran longer than {self.limits.wall_s:g} s; the kernel was restarted and earlier "
                   "variables are gone" if res.timed_out else res.stop_reason(self.limits)
                   or f"the kernel stopped ({res.exec.limit or res.exec.error or 'crash'}); earlier variables are gone")
            text += _block("error", why)
        room = max(0, MAX_IMAGES - len({a.id for a in artifacts}))
        saved, unseen = await asyncio.to_thread(self._saved, ctx, before, known | {a.file for a in artifacts}, room)
        artifacts += [a for _, a in saved]
        if saved:
            parts.append("The saved image path is: " + ", ".join(name for name, _ in saved))
        artifacts = list({a.id: a for a in artifacts}.values())  # a shown file is one image, not two
        if len(artifacts) > MAX_IMAGES or unseen:
            more = f" ({unseen} more image files were written and not read)" if unseen else ""
            parts.append(f"only the first {MAX_IMAGES} images of a call are returned{more}")
            artifacts = artifacts[:MAX_IMAGES]
        body = "\n".join(p for p in [text.lstrip("\n"), *parts] if p) or FINISHED
        ok = res.ok and not res.ended
        err = None if ok else (f"{res.error.ename}: {res.error.evalue}" if res.error else res.exec.error or "failed")
        extra = {"code": code, "reasoning": reasoning or "", "execution_count": res.execution_count,
                 "files_read": res.exec.files_read, "files_written": res.exec.files_written, "limit": res.exec.limit,
                 "images": [a.id for a in artifacts]}
        by_file = {a.file: a.id for a in ctx.store.all()}
        parents = [by_file[n] for n in res.exec.files_read if n in by_file]
        if parents:
            extra["inputs"] = parents
        return ToolResult(text=body, artifacts=artifacts, ok=ok, error=err, extra=extra)

    def _saved(self, ctx: ToolContext, before: dict[str, tuple[int, int]], known: set[str],
               room: int) -> tuple[list[tuple[str, Artifact]], int]:
        """Image files the cell wrote into the workspace (new or changed, not already artifacts): at most
        `room` of them are read and registered; also how many more were written."""
        after = _snapshot(ctx.workspace)
        out: list[tuple[str, Artifact]] = []
        names = sorted(n for n, sig in after.items() if before.get(n) != sig and n not in known)
        for i, name in enumerate(names):
            if len(out) >= room:
                return out, len(names) - i
            art = _register_file(ctx, name, self.name)
            if art is not None:
                out.append((name, art))
        return out, 0



def _register_file(ctx: ToolContext, name: str, tool: str) -> Artifact | None:
    try:
        data = read_member(ctx.workspace, name, DISPLAY_MAX_BYTES)
        info = imaging.check(data, max_pixels=DISPLAY_MAX_PIXELS, max_bytes=DISPLAY_MAX_BYTES)
        return ctx.store.add_bytes(data, Path(name).suffix.lower(), tool_call_id=ctx.call_id, tool=tool,
                                   size=info.size, file_name=name)
    except Exception:
        return None


def official_code_tools() -> list[Tool]:
    return [OfficialCodeInterpreter()]


def toolsight_code_tools() -> list[Tool]:
    return [VTCCodeInterpreter()]


__all__ = ["FILES_KEY", "INIT_VARIANT", "MODEL_KEY", "OfficialCodeInterpreter", "VTCCodeInterpreter",
           "extract_code", "forbidden_command", "official_code_tools", "read_code", "remove_blocking_calls",
           "remove_code_blocks", "toolsight_code_tools"]
