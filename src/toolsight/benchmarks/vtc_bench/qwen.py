"""The VTC-Bench driver's message pipeline (its Qwen-Agent fork), reproduced for the official loop.

Messages are kept the way the driver keeps them (`QMsg`: role, content as a string or a list of
text/image items, reasoning_content, name, function_call, extra, tool_call_id) and turned into
the request exactly as `BaseChatModel.chat` → `_preprocess_messages` → `QwenVLChatAtOAI.
convert_messages_to_dicts` → `_chat_complete_create` do for `qwenvl_oai` with `use_raw_api`:

- each message is re-formatted; user and system messages that hold images get a first text item
  "(Uploaded ![image](name.jpg)) " ("（上传了 ![图片](name.jpg)）" in Chinese) — only when tools
  are offered;
- without tools (the last call) tool calls and results are flattened into user messages
  ("The tool \"X\" was called with these arguments: …" / "The tool has returned the following
  result: …"), and two user messages in a row get an assistant "..." between them;
- images are sent as JPEG data URLs, short side at most 1080 px (bilinear), upscaled when a side
  is under 28 px; every image stays in context;
- an assistant message with a function call becomes `tool_calls` (arguments repaired as the
  client does, or the request fails), keys in the driver's order.

`accumulate` joins a streamed reply the way the client's `_chat_stream` does: one message for
reasoning, one for content, one per tool call.
"""

from __future__ import annotations

import base64
import copy
import io
import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from PIL import Image

CJK = re.compile(r"[\u4e00-\u9fff]")
MIN_SIDE = 28
MAX_SHORT_SIDE = 1080


class ModelServiceError(Exception):
    """What the driver's client raises for a failed model call (named as the driver names it)."""


@dataclass
class Item:
    """One content item: text or an image (a path, or a data/http URL)."""

    text: str | None = None
    image: str | None = None


@dataclass
class QMsg:
    role: str
    content: str | list[Item]
    reasoning_content: str | None = None
    name: str | None = None
    function_call: tuple[str, str] | None = None  # (name, arguments)
    extra: dict[str, Any] | None = None
    tool_call_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # toolsight's own bookkeeping, never sent

    def items(self) -> list[Item]:
        return [Item(text=self.content)] if isinstance(self.content, str) else list(self.content)

    def texts(self) -> list[str]:
        if isinstance(self.content, str):
            return [self.content]
        return [i.text for i in self.content if i.text is not None]


def has_chinese(text: str) -> bool:
    return bool(CJK.search(text))


def basename(path_or_url: str) -> str:
    """`get_basename_from_url`: the last path component, URL-decoded."""
    if re.match(r"^[A-Za-z]:\\", path_or_url):
        path_or_url = path_or_url.replace("\\", "/")
    name = unquote(os.path.basename(urlparse(path_or_url).path)).strip()
    if not name:
        parts = [x.strip() for x in path_or_url.split("/") if x.strip()]
        name = parts[-1] if parts else ""
    return name


def _format(msg: QMsg, tools_offered: bool, zh: bool) -> QMsg:
    """`format_as_multimodal_message(add_upload_info=True, add_multimodel_upload_info=tools_offered)`."""
    content = [Item(text=i.text, image=i.image) for i in msg.items()]
    if isinstance(msg.content, list) and tools_offered and msg.role in ("system", "user"):
        files = [i.image for i in content if i.image]
        if files:
            names = [basename(f) for f in files]
            joined = " ".join(f"![图片]({n})" if zh else f"![image]({n})" for n in names)
            upload = f"（上传了 {joined}）" if zh else f"(Uploaded {joined}) "
            if not any(i.text and upload in i.text for i in content):
                content = [Item(text=upload), *content]
    return QMsg(role=msg.role, content=content, reasoning_content=msg.reasoning_content,
                name=msg.name if msg.role == "tool" else None, function_call=msg.function_call,
                extra=copy.deepcopy(msg.extra), tool_call_id=msg.tool_call_id)


def _flatten(messages: list[QMsg], zh: bool) -> list[QMsg]:
    """`_remove_fncall_messages`: tool calls and results become text in user messages."""
    out: list[QMsg] = []
    for msg in messages:
        if msg.role == "tool" or msg.function_call:
            if not out or out[-1].role != "user":
                out.append(QMsg(role="user", content=[]))
            last = out[-1]
            if isinstance(last.content, str):
                last.content = [Item(text=last.content)]
            assert isinstance(last.content, list)
            others: list[Item] = []
            if msg.function_call:
                name, args = msg.function_call
                text = (f"\n\n工具\"{name}\"被调用时使用了以下参数：\n{args}" if zh
                        else f"\n\nThe tool \"{name}\" was called with these arguments: \n{args}")
            else:
                if msg.items() and msg.content:
                    if isinstance(msg.content, list):
                        parts = []
                        for it in msg.content:
                            if it.text:
                                parts.append(it.text)
                            else:
                                others.append(it)
                        result = "\n".join(parts)
                    else:
                        result = str(msg.content)
                else:
                    result = "No result."
                text = f"\n\n该工具返回了以下结果：\n{result}" if zh else f"\n\nThe tool has returned the following result: \n{result}"
            last.content.append(Item(text=text))
            last.content.extend(others)
        else:
            if msg.role == "user" and out and out[-1].role == "user":
                out.append(QMsg(role="assistant", content=[Item(text="...")]))
            out.append(msg)
    return out


def preprocess(messages: list[QMsg], tools_offered: bool, zh: bool) -> list[QMsg]:
    """What the client sends for `messages` (deep copies; the history is not changed)."""
    formatted = [_format(m, tools_offered, zh) for m in messages]
    return formatted if tools_offered else _flatten(formatted, zh)


# --------------------------------------------------------------------------- images


@lru_cache(maxsize=512)
def _encode(path: str, mtime_ns: int, size: int) -> str:
    with Image.open(path) as src:
        im: Image.Image = src
        if min(im.size) < MIN_SIDE:  # Qwen3-VL needs 28 px: upscale, as the driver does (+1 after rounding)
            scale = MIN_SIDE / min(im.size)
            im = im.resize((int(im.size[0] * scale) + 1, int(im.size[1] * scale) + 1),
                           resample=Image.Resampling.BILINEAR)
        if min(im.size) > MAX_SHORT_SIDE:
            w, h = im.size
            nw, nh = (MAX_SHORT_SIDE, int(MAX_SHORT_SIDE / w * h)) if w <= h else (int(MAX_SHORT_SIDE / h * w), MAX_SHORT_SIDE)
            im = im.resize((nw, nh), resample=Image.Resampling.BILINEAR)
        buf = io.BytesIO()
        im.convert(mode="RGB").save(buf, format="JPEG")
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("utf-8")


def image_url(value: str, workdir: Path) -> str:
    """`conv_multimodel_value` for an image: local files (relative to the working folder) → data URL."""
    if value.startswith("file://"):
        value = value[len("file://"):]
    if value.startswith(("http://", "https://", "data:")):
        return value
    p = Path(value) if Path(value).is_absolute() else workdir / value
    if not p.exists():
        raise ModelServiceError(f'Local file "{value}" does not exist.')
    st = p.stat()
    return _encode(str(p), st.st_mtime_ns, st.st_size)


# --------------------------------------------------------------------------- wire


def repair_arguments(args: str) -> str:
    """The client's check of tool-call arguments in the history: valid JSON, repaired JSON, or ValueError."""
    if not args:
        return args
    try:
        json.loads(args)
        return args
    except json.JSONDecodeError as e:
        fixed = re.sub(r",(\s*[}\]])", r"\1", args)
        fixed = re.sub(r'("(?:[^"\\]|\\.)*")\s+("(?:[^"\\]|\\.)*"\s*:)', r"\1, \2", fixed)
        fixed += "}" * max(0, fixed.count("{") - fixed.count("}"))
        fixed += "]" * max(0, fixed.count("[") - fixed.count("]"))
        try:
            json.loads(fixed)
            return fixed
        except Exception:
            raise ValueError(f"Failed to fix function arguments JSON. Original error: {e}. Arguments: {args}") from e


def to_wire(messages: list[QMsg], workdir: Path, gemini3: bool = False) -> list[dict[str, Any]]:
    """The request's `messages`: content parts, then the message's other fields in the driver's key order."""
    wire: list[dict[str, Any]] = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        for it in m.items():
            if it.text:
                parts.append({"type": "text", "text": it.text})
            elif it.image:
                parts.append({"type": "image_url", "image_url": {"url": image_url(it.image, workdir)}})
        d: dict[str, Any] = {"role": m.role, "content": parts}
        if m.reasoning_content is not None:
            d["reasoning_content"] = m.reasoning_content
        if m.name is not None:
            d["name"] = m.name
        if m.extra is not None:
            d["extra"] = copy.deepcopy(m.extra)
        if m.tool_call_id is not None:
            d["tool_call_id"] = m.tool_call_id
        if m.role == "assistant" and m.function_call:
            name, args = m.function_call
            call_id = m.tool_call_id or (m.extra or {}).get("function_id", "call_default")
            call: dict[str, Any] = {"id": call_id, "type": "function",
                                    "function": {"name": name, "arguments": repair_arguments(args)}}
            sig = (m.extra or {}).get("thought_signature")
            if gemini3 and sig:
                call["extra_content"] = {"google": {"thought_signature": sig}}
            d["tool_calls"] = [call]
        wire.append(d)
    return wire


# --------------------------------------------------------------------------- replies


class MalformedFunctionCall(ModelServiceError):
    """A streamed reply ended with finish_reason 'malformed_function_call' (the client retries it)."""


def accumulate(chunks: list[dict[str, Any]]) -> list[QMsg]:
    """The client's `_chat_stream` (full-stream mode): the messages of the last yield."""
    content, reasoning = "", ""
    calls: list[QMsg] = []
    out: list[QMsg] = []
    for chunk in chunks:
        choices = chunk.get("choices") or []
        if not choices:
            continue
        choice = choices[0]
        if choice.get("finish_reason") == "malformed_function_call":
            raise MalformedFunctionCall("\nError code: malformed_function_call. Error message: Malformed function call detected")
        delta = choice.get("delta") or {}
        if delta.get("reasoning_content"):
            reasoning += delta["reasoning_content"]
        if delta.get("content"):
            content += delta["content"]
        for tc in delta.get("tool_calls") or []:
            fn = tc.get("function") or {}
            tid = tc.get("id")
            if calls and (not tid or tid == (calls[-1].extra or {}).get("function_id")):
                name, args = calls[-1].function_call or ("", "")
                calls[-1].function_call = (name + (fn.get("name") or ""), args + (fn.get("arguments") or ""))
                sig = (tc.get("extra_content") or {}).get("google", {}) or {}
                if isinstance(sig, dict) and sig.get("thought_signature"):
                    assert calls[-1].extra is not None
                    calls[-1].extra["thought_signature"] = sig["thought_signature"]
            else:
                extra: dict[str, Any] = {"function_id": tid}
                sig = (tc.get("extra_content") or {}).get("google", {}) or {}
                if isinstance(sig, dict) and sig.get("thought_signature"):
                    extra["thought_signature"] = sig["thought_signature"]
                calls.append(QMsg(role="assistant", content="", function_call=(fn.get("name") or "", fn.get("arguments") or ""),
                                  extra=extra, tool_call_id=tid))
        out = []
        if reasoning:
            out.append(QMsg(role="assistant", content="", reasoning_content=reasoning))
        if content:
            out.append(QMsg(role="assistant", content=content))
        out.extend(calls)
    return out
