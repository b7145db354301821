"""DeepEyes' evaluation protocol, as pure functions (Visual-Agent/DeepEyes @ 6c5e7967, `eval/eval_vstar.py`;
the full protocol with line numbers is the golden-wire folder's PROTOCOL.md, summarised in docs/agents.md).

- the request: `temperature 0.0, max_tokens 10240, stop ["<|im_end|>"]` (`PARAMS`), no tools;
- messages: the system prompt (a string), then a user message `[image, "Question: …\\nOptions: …\\n" +
  USER_PROMPT_V2]` (`first_message`; the options lettered A, B, … as `"\\n" + "A. x\\n" + …`);
- a reply's first `<tool_call>…</tool_call>` body is the call (`first_tool_call`); after it the reply
  (a string) and a user message `["<tool_response>", crop, USER_PROMPT_V2, "</tool_response>"]`
  (`tool_response`); the crop is `bbox_2d` of the original image resized by Qwen's `smart_resize`
  (multiples of 28, bicubic), sent as PNG;
- the answer is the text between the first `<answer>` and the next `</answer>`, else the whole
  reply (`answer_of`).

The `official` loop parses the call with Python `eval` (in the sandbox: `zoom.py`), the `toolsight`
loop with `json.loads` (`parse_call`), clamps the box to the image and returns errors to the model
(`error_message`, the training loop's "Error: …" turn).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from toolsight.agents.deepeyes.prompts import INSTRUCTION, USER_PROMPT_V2
from toolsight.models.base import ImagePart, Message, TextPart
from toolsight.models.images import data_url

#: eval_vstar.py:182-189; `timeout` is the OpenAI SDK's default (not in the body)
PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 10240, "stop": ["<|im_end|>"], "timeout": 600.0}
#: `if try_count > 10: break` before each call
MAX_CALLS = 11
#: the original's option letters (`abc_map`): a seventh option is a KeyError there
LETTERS = "ABCDEF"
OFFICIAL_MIME = "image/jpeg"
TOOL_NAME = "image_zoom_in_tool"
IMAGE_FACTOR = 28
MIN_PIXELS = 4 * 28 * 28
MAX_PIXELS = 16384 * 28 * 28


class TooManyOptions(ValueError):
    """More options than the original letters (A-F)."""


def options_block(options: Sequence[str], official: bool) -> str:
    """`option_str`: "\\n" then "A. x\\n" per option (the toolsight loop letters a seventh option G, …)."""
    if official and len(options) > len(LETTERS):
        raise TooManyOptions(f"{len(options)} options: the original letters only {len(LETTERS)} (KeyError: "
                             f"{len(LETTERS) + 1} in abc_map)")
    return "\n" + "".join(f"{chr(ord('A') + i)}. {opt}\n" for i, opt in enumerate(options))


def instruction(question: str, options: Sequence[str], official: bool) -> str:
    return INSTRUCTION.format(question=question, options=options_block(options, official))


def first_message(question: str, options: Sequence[str], images: list[ImagePart], official: bool) -> Message:
    """The first user message: the image(s), then the instruction (one image in the original)."""
    return Message(role="user", content=[*images, TextPart(text=instruction(question, options, official))])


def tool_response(crop: ImagePart) -> Message:
    return Message(role="user", content=[TextPart(text="<tool_response>"), crop, TextPart(text=USER_PROMPT_V2),
                                         TextPart(text="</tool_response>")])


def error_message(error: str) -> Message:
    """The toolsight loop's answer to a bad call: the training loop's "Error: …" user turn."""
    return Message(role="user", content=[TextPart(text=f"Error: {error}")])


def first_tool_call(reply: str) -> str | None:
    """The body of the reply's first `<tool_call>` (up to the next `</tool_call>`, or the end), stripped."""
    if "<tool_call>" not in reply:
        return None
    return reply.split("<tool_call>")[1].split("</tool_call>")[0].strip()


def has_answer(reply: str) -> bool:
    return "<answer>" in reply and "</answer>" in reply


def answer_of(reply: str) -> str:
    """`pred_ans`: between the first `<answer>` and the next `</answer>`, stripped; else the whole reply."""
    if has_answer(reply):
        return reply.split("<answer>")[1].split("</answer>")[0].strip()
    return reply


def parse_call(body: str) -> list[float]:
    """The toolsight loop's parse: JSON, the zoom tool, four numbers in `bbox_2d`; a ValueError says what
    is wrong in words the model can act on."""
    try:
        call = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"Invalid tool call format: {body}. Error: {exc}") from None
    if not isinstance(call, dict):
        raise ValueError(f"Invalid tool call format: {body}. Error: expected a JSON object")
    name, args = call.get("name"), call.get("arguments")
    if name != TOOL_NAME:
        raise ValueError(f"Unknown tool name: {name}")
    if not isinstance(args, dict) or "bbox_2d" not in args:
        raise ValueError('the arguments need "bbox_2d": [x1, y1, x2, y2] in pixels of the original image')
    box = args["bbox_2d"]
    if (not isinstance(box, list) or len(box) != 4
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in box)):
        raise ValueError(f"bbox_2d must be four numbers [x1, y1, x2, y2], got {json.dumps(box)}")
    return [float(v) for v in box]


def clamp(box: Sequence[float], width: int, height: int) -> list[float]:
    """The box inside the image; a ValueError when nothing of it is left."""
    left, top, right, bottom = box
    left, top = max(0.0, left), max(0.0, top)
    right, bottom = min(float(width), right), min(float(height), bottom)
    if not (left < right and top < bottom):
        raise ValueError(f"ZOOM IN ARGUMENTS ARE INVALID: {list(box)} leaves nothing of the {width}x{height} image "
                         "(x1 < x2 and y1 < y2, in pixels of the original image)")
    return [left, top, right, bottom]


def round_by_factor(number: float, factor: int) -> int:
    return round(number / factor) * factor


def ceil_by_factor(number: float, factor: int) -> int:
    return math.ceil(number / factor) * factor


def floor_by_factor(number: float, factor: int) -> int:
    return math.floor(number / factor) * factor


def smart_resize(height: float, width: float, factor: int = IMAGE_FACTOR, min_pixels: int = MIN_PIXELS,
                 max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """Qwen-VL's `smart_resize` as eval_vstar.py copies it (`:106-119`)."""
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


def wire(messages: list[Message]) -> list[dict[str, Any]]:
    """The messages as DeepEyes sends them: system and assistant contents as strings, user contents as
    parts (image first), images as data URLs with the part's label (`image/jpeg` in the official loop)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role in ("system", "assistant"):
            out.append({"role": m.role, "content": m.text})
            continue
        content: list[dict[str, Any]] = []
        for p in m.content:
            if isinstance(p, TextPart):
                content.append({"type": "text", "text": p.text})
            else:
                content.append({"type": "image_url", "image_url": {"url": data_url(p)}})
        out.append({"role": m.role, "content": content})
    return out


__all__ = ["MAX_CALLS", "OFFICIAL_MIME", "PARAMS", "TOOL_NAME", "TooManyOptions", "answer_of", "clamp",
           "error_message", "first_message", "first_tool_call", "has_answer", "instruction", "options_block",
           "parse_call", "smart_resize", "tool_response", "wire"]
