"""VTC-Bench's 35 `opencv_*` tools as the official driver offers them (tool set `vtc_interface_official`).

Schemas are the reference's, verbatim (`interface_tools.json`); calls behave like its
`BaseTool._verify_json_format_args` (lenient JSON, then `jsonschema.validate`) followed by
`opencv_interface.generate`: the image is a path (absolute, relative to the working folder, a
`file://` path or a base64 data URL), the result is saved as `workspace/tools/opencv/<uuid>.png`
and reported as "<message>\\n\\nEdited Image Path: <absolute path>", and every failure is the
reference's text ("Failed to run OpenCV operation ...", or the generic "An error occurred when
calling tool ..." with a traceback). The working folder is the task's workspace: a path outside
it is treated as a file that does not exist, and URLs are not fetched. Each result carries the
reference's content items in `extra["official"]` (form "list" or "str") for the official loop.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import traceback
import uuid
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import json5
import jsonschema
import numpy as np
from PIL import Image, UnidentifiedImageError

from toolsight import imaging
from toolsight.benchmarks.vtc_bench.tools import cv_ops
from toolsight.tools.base import Artifact, Tool, ToolContext, ToolResult

TOOLSET = "vtc_interface_official"
WORK_DIR = "workspace/tools/opencv"
#: ToolContext.state key where the official loop puts the image path of the task's first user message
HINT_KEY = "vtc_official.user_image"
ACTION = "\n\n**Action Required**: Please call this tool again with absolute image path"
#: toolsight's caps (the reference has none): the argument string (an image may come inline as base64),
#: the size up to which JSON5 (pure Python, ~40 µs a character) is tried on a string that is not JSON,
#: and how long reading the arguments may take off the event loop
MAX_ARGUMENT_CHARS = 32_000_000
MAX_JSON5_CHARS = 64_000
READ_DEADLINE_S = 10.0
MAX_IMAGE_PIXELS = 40_000_000


@cache
def interface_schemas() -> list[dict[str, Any]]:
    """The 35 tools as the driver sends them (OpenAI `tools` array entries), in the config's order."""
    data = json.loads((Path(__file__).with_name("interface_tools.json")).read_text(encoding="utf-8"))
    tools: list[dict[str, Any]] = data["tools"]
    return tools


# --------------------------------------------------------------------------- arguments (qwen_agent)


def _fix_json(text: str) -> str:
    """The driver's repairs for almost-JSON: trailing commas, missing commas, unquoted keys, unclosed brackets."""
    fixed = re.sub(r",(\s*[}\]])", r"\1", text)
    fixed = re.sub(r'("(?:[^"\\]|\\.)*")\s+("(?:[^"\\]|\\.)*"\s*:)', r"\1, \2", fixed)
    fixed = re.sub(r"(\{|,)\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*:", r'\1"\2":', fixed)
    fixed += "}" * max(0, fixed.count("{") - fixed.count("}"))
    fixed += "]" * max(0, fixed.count("[") - fixed.count("]"))
    return fixed


def lenient_json(text: str) -> Any:
    """`qwen_agent.utils.json_loads`: fences stripped, then JSON, JSON5, then the repairs; else JSONDecodeError."""
    text = text.strip("\n")
    if text.startswith("```") and text.endswith("\n```"):
        text = "\n".join(text.split("\n")[1:-1])
    try:
        return json.loads(text)
    except json.JSONDecodeError as first:
        try:
            if len(text) > MAX_JSON5_CHARS:  # toolsight's bound: JSON5 would take seconds per 100 KB
                raise ValueError("too long for JSON5")
            return json5.loads(text)
        except (ValueError, RecursionError):
            try:
                return json.loads(_fix_json(text))
            except Exception:
                raise first from None


def verify_args(raw: str | dict[str, Any] | None, schema: dict[str, Any]) -> Any:
    """`BaseTool._verify_json_format_args` for a dict schema (raises what it raises)."""
    if isinstance(raw, str):
        try:
            params = lenient_json(raw)
        except json.JSONDecodeError:
            raise ValueError("Parameters must be formatted as a valid JSON!") from None
    else:
        params = raw
    jsonschema.validate(instance=params, schema=schema)
    return params


def generic_error(tool: str, exc: BaseException) -> str:
    """The text `Agent._call_tool` returns for an exception a tool raised (with its traceback)."""
    tb = "".join(traceback.format_tb(exc.__traceback__))
    return f"An error occurred when calling tool `{tool}`:\n{type(exc).__name__}: {exc}\nTraceback:\n{tb}"


# --------------------------------------------------------------------------- images


def inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError):
        return False


def workspace_file(ref: str, ws: Path) -> Path | None:
    """The file `ref` names (absolute, or relative to the workspace), if it exists inside the workspace."""
    p = Path(ref)
    cand = p if p.is_absolute() else ws / p
    try:
        if cand.is_file() and inside(cand, ws):
            return cand
    except OSError:
        return None
    return None


def _from_base64(data: str) -> Image.Image:
    return imaging.open_image(base64.b64decode(data), max_pixels=MAX_IMAGE_PIXELS)


def load_pil(image: str, ws: Path) -> tuple[Image.Image, Path | None]:
    """`opencv_interface.load_image` with the workspace as the working folder; (image, its file or None)."""
    if image.startswith("data:image") or image.startswith("data:;base64,"):
        b64 = image.split(";base64,")[1] if ";base64," in image else (image.split(",")[1] if "," in image else image)
        return _from_base64(b64), None
    ref = image[len("file://"):] if image.startswith("file://") else image
    if not ref.startswith(("http://", "https://")):  # URLs are never fetched (no network for tools)
        found = workspace_file(ref, ws)
        if found is not None:  # a workspace file may be model code's: through the guarded decoder
            try:
                return imaging.open_image(imaging.read_capped(found), max_pixels=MAX_IMAGE_PIXELS), found
            except imaging.ImageRejected as exc:
                if "not a readable image" in str(exc):
                    raise UnidentifiedImageError(f"cannot identify image file {ref!r}") from None
                raise
    try:
        return _from_base64(ref), None
    except Exception:
        raise ValueError(f"Unable to load image from input: {ref[:100]}...") from None


def _bgr(im: Image.Image) -> np.ndarray[Any, Any]:
    return cv2.cvtColor(np.array(im), cv2.COLOR_RGB2BGR)  # as the reference: fails for grey/RGBA images


_PATH_ERRORS = ("Unable to load image", "No such file or directory")


def _is_path_error(text: str) -> bool:
    low = text.lower()
    return any(s in text for s in _PATH_ERRORS) or "cannot find the file" in low or "file not found" in low


class OfficialOpenCVTool(Tool):
    """One reference `opencv_<op>` tool; see the module docstring."""

    def __init__(self, schema: dict[str, Any]) -> None:
        fn = schema["function"]
        super().__init__(fn["name"], fn["description"], fn["parameters"])
        self.op = self.name.removeprefix("opencv_")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self(args, ctx)

    async def __call__(self, raw_args: str | dict[str, Any] | None, ctx: ToolContext) -> ToolResult:
        size = len(raw_args) if isinstance(raw_args, str) else 0
        if size > MAX_ARGUMENT_CHARS:
            text = f"The arguments of {self.name} are {size:,} characters; the limit is {MAX_ARGUMENT_CHARS:,}."
            return ToolResult(text=text, ok=False, error=text, extra={"official": {"form": "str", "text": text}})
        try:  # off the event loop, with a deadline: JSON5 and jsonschema on model text
            params = await asyncio.wait_for(
                asyncio.to_thread(verify_args, raw_args if raw_args is not None else "", self.parameters),
                READ_DEADLINE_S)
        except Exception as exc:
            text = generic_error(self.name, exc)
            return ToolResult(text=text, ok=False, error=text, extra={"official": {"form": "str", "text": text}})
        return await asyncio.to_thread(self._generate, params, ctx)

    def _generate(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        ws = ctx.workspace
        raw_param = params.get("param", {})
        image = params.get("image")
        inputs: list[str] = []
        try:
            op_params: dict[str, Any] = {}
            if isinstance(raw_param, dict):
                op_params = raw_param
            elif isinstance(raw_param, str):
                try:
                    op_params = json.loads(raw_param)
                except json.JSONDecodeError:
                    op_params = {}
            pil, src = load_pil(str(image), ws)
            if src is not None:
                inputs.append(self._register(ctx, src).id)
            img = _bgr(pil)

            def load_template(ref: str) -> np.ndarray[Any, Any]:
                t, tsrc = load_pil(ref, ws)
                if tsrc is not None:
                    inputs.append(self._register(ctx, tsrc).id)
                return _bgr(t)

            out, message = cv_ops.apply(img, self.op, op_params, load_template)
            work = ws / WORK_DIR
            asked = params.get("work_dir")
            if isinstance(asked, str) and asked:
                cand = Path(asked) if Path(asked).is_absolute() else ws / asked
                if inside(cand, ws):  # a model may name its own folder, but only inside the workspace
                    work = cand
            work.mkdir(parents=True, exist_ok=True)
            path = (work / f"{uuid.uuid4()}.png").resolve()
            Image.fromarray(cv2.cvtColor(out, cv2.COLOR_BGR2RGB)).save(path)
        except Exception as exc:
            text = f"Failed to run OpenCV operation '{self.op}':\n{exc}" + ACTION
            if _is_path_error(str(exc)):
                text += f"\n Set the 'image' parameter to: {ctx.state.get(HINT_KEY, '')}"
            return ToolResult(text=text, ok=False, error=text, extra={
                "official": {"form": "list", "items": [{"text": text}]}, "inputs": inputs})
        art = ctx.store.add_file(path, parents=inputs, tool_call_id=ctx.call_id or None, tool=self.name)
        text = f"{message}\n\nEdited Image Path: {path}"
        return ToolResult(text=text, artifacts=[art], extra={
            "official": {"form": "list", "items": [{"text": text}, {"image": str(path)}]},
            "operation": self.op, "inputs": inputs})

    @staticmethod
    def _register(ctx: ToolContext, path: Path) -> Artifact:
        art = ctx.store.add_file(path, source="input")
        return ctx.store.resolve(art.id)  # records it as an input of this call


def official_interface_tools() -> list[Tool]:
    """The 35 reference tools in the reference's order."""
    return [OfficialOpenCVTool(s) for s in interface_schemas()]
