"""DeepEyes' zoom-in as a toolsight tool (`image_zoom_in_tool`, tool set `deepeyes`), run in the sandbox.

Only the `deepeyes` agent calls it, after putting the image to crop in the toolbox state
(`configure`). Two argument forms, one per loop mode:

- `{"call": "<the text inside <tool_call>>"}` (`official`): the sandbox runs the original's steps on
  the text — Python `eval` of it (model text: it runs in the sandbox only, with the names the
  driver's module has that a call could use: `os`, `json`, `np`, `math`, `io`, `base64`, `Image`,
  `BytesIO`), `['arguments']['bbox_2d']`, the crop of the original image with that box as given (no
  clamping: outside is black; floats are rounded by Pillow), `smart_resize` of the unrounded width and
  height (factor 28), bicubic, PNG. Any exception fails the call with `Type: message`, and the agent
  ends the task as the original does;
- `{"bbox_2d": [x1, y1, x2, y2], "label": "…"}` (`toolsight`): the box the agent parsed as JSON and
  clamped to the image; the same crop, resize and PNG.

The crop is registered as an artifact whose parent is the image it was cut from.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any

from toolsight import sandbox
from toolsight.agents.deepeyes.prompts import TOOL_SCHEMA_FIXED
from toolsight.agents.deepeyes.protocol import TOOL_NAME
from toolsight.sandbox.interface import WorkspaceError, read_member
from toolsight.sandbox.models import Limits
from toolsight.tools.artifacts import image_size
from toolsight.tools.base import Tool, ToolContext, ToolError, ToolResult

TOOLSET = "deepeyes"
CONFIG_KEY = f"{TOOL_NAME}.config"
COUNT_KEY = f"{TOOL_NAME}.count"
MARK = "@@deepeyes-zoom@@ "
LIMITS = Limits(wall_s=60.0)
MAX_CROP_BYTES = 64 << 20
MAX_CROP_PIXELS = 64_000_000
_SCHEMA: dict[str, Any] = json.loads(TOOL_SCHEMA_FIXED)["function"]

#: runs in the sandbox (the working folder is the task's workspace); constants are prepended
SCRIPT = r'''
import base64, io, json, math, os
from io import BytesIO
import numpy as np
from PIL import Image


def round_by_factor(number, factor):
    return round(number / factor) * factor


def ceil_by_factor(number, factor):
    return math.ceil(number / factor) * factor


def floor_by_factor(number, factor):
    return math.floor(number / factor) * factor


def smart_resize(height, width, factor=28, min_pixels=4 * 28 * 28, max_pixels=16384 * 28 * 28):
    h_bar = max(factor, round_by_factor(height, factor))
    w_bar = max(factor, round_by_factor(width, factor))
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = floor_by_factor(height / beta, factor)
        w_bar = floor_by_factor(width / beta, factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = ceil_by_factor(height * beta, factor)
        w_bar = ceil_by_factor(width * beta, factor)
    return h_bar, w_bar


def main():
    pil_img = Image.open(SRC)
    if TEXT is not None:
        names = {"os": os, "json": json, "np": np, "math": math, "io": io, "base64": base64, "Image": Image,
                 "BytesIO": BytesIO}
        action_list = eval(TEXT, names)
        bbox = action_list['arguments']['bbox_2d']
    else:
        bbox = BBOX
    left, top, right, bottom = bbox
    cropped_image = pil_img.crop((left, top, right, bottom))
    new_w, new_h = smart_resize((right - left), (bottom - top), factor=28)
    cropped_image = cropped_image.resize((new_w, new_h), resample=Image.BICUBIC)
    cropped_image.save(OUT, format="PNG")
    return {"ok": True, "size": [new_w, new_h], "bbox": [float(v) for v in bbox]}


try:
    result = main()
except Exception as e:
    result = {"ok": False, "error": f"{type(e).__name__}: {e}"}
print(MARK + json.dumps(result))
'''


@dataclass
class ZoomConfig:
    """The image the next zoom cuts from: its workspace file and artifact id."""

    file: str
    artifact: str


def configure(state: dict[str, Any], config: ZoomConfig) -> None:
    state[CONFIG_KEY] = config



def _result(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.split("\n")):
        if line.startswith(MARK):
            with contextlib.suppress(json.JSONDecodeError):
                got = json.loads(line[len(MARK):])
                return got if isinstance(got, dict) else None
    return None


class ZoomTool(Tool):
    """`image_zoom_in_tool`: see the module docstring."""

    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__(TOOL_NAME, str(_SCHEMA["description"]), dict(_SCHEMA["parameters"]))
        self.limits = limits or LIMITS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        config = ctx.state.get(CONFIG_KEY)
        if not isinstance(config, ZoomConfig):
            raise ToolError("no image to zoom in on (the deepeyes agent names it before a call)")
        text = args.get("call")
        box = args.get("bbox_2d")
        if text is None and box is None:
            raise ToolError("pass the tool call's text as 'call', or 'bbox_2d'")
        n = int(ctx.state.get(COUNT_KEY, 0)) + 1
        ctx.state[COUNT_KEY] = n
        out = f"deepeyes_zoom_{n}.png"
        consts = (f"TEXT = {text!r}\nBBOX = {box!r}\nSRC = {config.file!r}\nOUT = {out!r}\nMARK = {MARK!r}\n")
        await asyncio.to_thread(ctx.store.make_read_only)
        res = await sandbox.run_code(consts + SCRIPT, ctx.workspace, self.limits, profile="image")
        got = _result(res.stdout)
        extra: dict[str, Any] = {"backend": res.backend, "limit": res.limit, "parse": "eval" if text is not None
                                 else "json", "source": config.artifact}
        if got is None:
            why = res.error or res.stderr.strip()[-300:] or "no result"
            return ToolResult.fail(f"the zoom did not run: {why}", **extra)
        if not got.get("ok"):
            return ToolResult.fail(str(got.get("error")), **extra)
        try:
            data = await asyncio.to_thread(read_member, ctx.workspace, out, MAX_CROP_BYTES)
        except WorkspaceError as exc:
            return ToolResult.fail(f"the crop could not be read: {exc}", **extra)
        try:  # what the file says, not what the sandbox printed
            w, h = image_size(data)
        except Exception as exc:  # Pillow raises many types for a file that is not an image
            return ToolResult.fail(f"the crop is not a readable image ({type(exc).__name__})", **extra)
        if w * h > MAX_CROP_PIXELS:
            return ToolResult.fail(f"the crop is {w}x{h}, over the {MAX_CROP_PIXELS} pixel limit", **extra)
        art = ctx.store.add_bytes(data, ".png", parents=[config.artifact], tool_call_id=ctx.call_id, tool=TOOL_NAME,
                                  file_name=out, size=(w, h))
        extra.update({"bbox": got.get("bbox"), "size": [w, h]})
        return ToolResult(text=f"Zoomed in on {got.get('bbox')} of {config.file}: a {w}x{h} crop.", artifacts=[art],
                          extra=extra)


def zoom_tools() -> list[Tool]:
    return [ZoomTool()]


__all__ = ["TOOLSET", "ZoomConfig", "ZoomTool", "configure", "zoom_tools"]
