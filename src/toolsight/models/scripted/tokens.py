"""Realistic token counts for the scripted server: text by a simple tokenizer approximation, images
the way each provider bills them.

The server used to report request bytes / 4, so one 480×360 PNG (base64 in the JSON body) became
~150,000 "input tokens". These rules give numbers of the right size for tests, demos and cost
estimates; they are approximations, documented in docs/models.md, not any provider's tokenizer.

- **Text**: words and single punctuation marks are tokens; a word longer than four characters
  counts one token per four characters (BPE vocabularies split long and rare words). About 1.3
  tokens per English word, as the providers' own rules of thumb say.
- **OpenAI** (gpt-4o style, `detail` high or auto): scale to fit 2048×2048, then so the shortest side is
  at most 768; 170 tokens per 512-px tile + 85. `detail: low` = 85. gpt-4.1-mini / -nano and
  o4-mini bill 32-px patches (at most 1536) times 1.62 / 2.46 / 1.72.
- **Anthropic**: width × height / 750 after scaling the long side to at most 1568 px.
- **Gemini**: 258 tokens when both sides are ≤ 384 px, else 258 per 768×768 tile.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import re
from typing import Any

from PIL import Image

_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_DATA_URL = re.compile(r"^data:[^;,]*;base64,", re.ASCII)


def text_tokens(text: str) -> int:
    """Approximate tokens of a text (see the module docstring)."""
    n = 0
    for m in _WORD.finditer(text):
        n += max(1, math.ceil(len(m.group()) / 4))
    return n


def image_size(b64: str) -> tuple[int, int] | None:
    """(width, height) of a base64 image (PNG, JPEG, …: only the header is decoded), or None."""
    try:
        raw = base64.b64decode(_DATA_URL.sub("", b64), validate=False)
        with Image.open(io.BytesIO(raw)) as im:
            return int(im.width), int(im.height)
    except (binascii.Error, ValueError, OSError, Image.DecompressionBombError):
        return None


# ---- per provider ------------------------------------------------------------------------------

_PATCH_MULTIPLIER = {"gpt-4.1-mini": 1.62, "gpt-4.1-nano": 2.46, "o4-mini": 1.72}


def openai_image_tokens(width: int, height: int, detail: str = "auto", model: str = "") -> int:
    """OpenAI Chat Completions: tiles for gpt-4o-style models, 32-px patches for the mini/nano ones."""
    for prefix, mult in _PATCH_MULTIPLIER.items():
        if model.startswith(prefix):
            patches = math.ceil(width / 32) * math.ceil(height / 32)
            if patches > 1536:  # scaled down until it fits 1536 patches
                scale = math.sqrt(1536 * 32 * 32 / (width * height))
                patches = min(1536, math.ceil(width * scale / 32) * math.ceil(height * scale / 32))
            return math.ceil(patches * mult)
    if detail == "low":
        return 85
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        s = 2048 / max(w, h)
        w, h = w * s, h * s
    if min(w, h) > 768:
        s = 768 / min(w, h)
        w, h = w * s, h * s
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic: about width × height / 750, after scaling the long side down to 1568 px."""
    w, h = float(width), float(height)
    if max(w, h) > 1568:
        s = 1568 / max(w, h)
        w, h = w * s, h * s
    return max(1, math.ceil(w * h / 750))


def gemini_image_tokens(width: int, height: int) -> int:
    """Gemini: 258 for a small image (both sides ≤ 384 px), else 258 per 768×768 tile."""
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


# ---- whole requests ----------------------------------------------------------------------------

def _walk(node: Any, wire: str, model: str, acc: list[int]) -> None:
    """Add the tokens of every text and image in a request body to acc[0]."""
    if isinstance(node, dict):
        image = _image_of(node, wire)
        if image is not None:
            data, detail = image
            size = image_size(data)
            if size is not None:
                acc[0] += _IMAGE_RULES[wire](size, detail, model)
            return
        for k, v in node.items():
            if isinstance(v, str):
                if k not in _NOT_TEXT:
                    acc[0] += text_tokens(v)
            else:
                _walk(v, wire, model, acc)
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, str):
                acc[0] += text_tokens(item)
            else:
                _walk(item, wire, model, acc)


# string fields that are wire framing, not text the model reads
_NOT_TEXT = frozenset({
    "role", "type", "id", "tool_call_id", "tool_use_id", "media_type", "mime_type", "mimeType", "detail",
    "url", "data", "signature", "thoughtSignature", "thought_signature", "cache_control",
})


def _image_of(node: dict[str, Any], wire: str) -> tuple[str, str] | None:
    if wire == "openai" and node.get("type") == "image_url" and isinstance(node.get("image_url"), dict):
        url = node["image_url"].get("url")
        return (url, str(node["image_url"].get("detail") or "auto")) if isinstance(url, str) else None
    if wire == "responses" and node.get("type") == "input_image" and isinstance(node.get("image_url"), str):
        return node["image_url"], str(node.get("detail") or "auto")
    if wire == "anthropic" and node.get("type") == "image" and isinstance(node.get("source"), dict):
        data = node["source"].get("data")
        return (data, "") if isinstance(data, str) else None
    if wire == "google":
        inline = node.get("inlineData") or node.get("inline_data")
        if isinstance(inline, dict) and isinstance(inline.get("data"), str):
            return inline["data"], ""
    return None


_IMAGE_RULES = {
    "openai": lambda size, detail, model: openai_image_tokens(size[0], size[1], detail, model),
    "responses": lambda size, detail, model: openai_image_tokens(size[0], size[1], detail, model),
    "anthropic": lambda size, detail, model: anthropic_image_tokens(size[0], size[1]),
    "google": lambda size, detail, model: gemini_image_tokens(size[0], size[1]),
}


def request_tokens(body: dict[str, Any], wire: str, model: str = "") -> int:
    """Input tokens of a request body in a wire format ('openai', 'responses', 'anthropic', 'google').

    Counts the conversation, the system prompt and the tool declarations (as providers do), plus
    4 tokens of framing per message (not per Responses API input item).
    """
    acc = [0]
    for key in ("messages", "contents", "input", "system", "systemInstruction", "system_instruction", "instructions",
                "tools"):
        value = body.get(key)
        if value is not None:
            _walk([value] if isinstance(value, str) else value, wire, model, acc)
    messages = body.get("messages") or body.get("contents") or []
    framing = 4 * len(messages) if isinstance(messages, list) else 0
    return max(1, acc[0] + framing)


def node_tokens(node: Any, wire: str, model: str = "") -> int:
    """Tokens of one piece of a request body (a message, a content block, a tool declaration, a
    system prompt) by the same rules as `request_tokens`, which is the sum over its pieces plus
    framing: the prompt-cache simulation (prompt_cache.py) counts prefixes with it."""
    acc = [0]
    _walk([node] if isinstance(node, str) else node, wire, model, acc)
    return acc[0]
