"""Messages as they are sent and stored: text and image parts, tool calls, usage.

Layer 1 value types shared by models (which send them), agents (which build them) and the run log
(which stores them). Images are referenced by path, never held as pixels; they are encoded only
when a provider sends them.
"""

from __future__ import annotations

import base64
import mimetypes
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "error", "unknown"]


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    """An image by path; `artifact_id` ties it to the task's artifacts for provenance."""

    type: Literal["image"] = "image"
    path: str
    artifact_id: str | None = None
    mime: str | None = None
    detail: Literal["auto", "low", "high"] = "auto"

    def media_type(self) -> str:
        return self.mime or _guess_type(self.path)

    def b64(self) -> str:
        return _b64_file(self.path)

    def data_url(self) -> str:
        return f"data:{self.media_type()};base64,{self.b64()}"


@lru_cache(maxsize=4096)
def _guess_type(path: str) -> str:
    return mimetypes.guess_type(path)[0] or "image/png"


class _B64Cache:
    """Base64 of image files by path, newest kept: an image is re-sent in every later request of
    its task, and is encoded once. Bounded by entries and by bytes, so memory stays flat however
    many tasks a run has and however large its images are."""

    def __init__(self, max_entries: int = 256, max_bytes: int = 64 << 20) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        # a file's bytes until it is first sent, then their base64
        self._data: OrderedDict[str, str | bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, path: str) -> str:
        with self._lock:
            hit = self._data.get(path)
            if hit is not None:
                self._data.move_to_end(path)
                if isinstance(hit, str):
                    return hit
        raw = hit if hit is not None else Path(path).read_bytes()
        value = base64.b64encode(raw).decode("ascii")
        self._put(path, value)
        return value

    def remember(self, path: str, data: bytes) -> None:
        """`data` was just written to `path`: the first `get` encodes it without reading the file."""
        self._put(path, data)

    def _put(self, path: str, value: str | bytes) -> None:
        with self._lock:
            old = self._data.pop(path, None)
            if old is not None:
                self._bytes -= len(old)
            self._data[path] = value
            self._bytes += len(value)
            while self._data and (len(self._data) > self.max_entries or self._bytes > self.max_bytes):
                _, dropped = self._data.popitem(last=False)
                self._bytes -= len(dropped)


_b64_cache = _B64Cache()


def _b64_file(path: str) -> str:
    return _b64_cache.get(path)


def remember_image_bytes(path: str, data: bytes) -> None:
    """Tell the encoder that `path` now holds `data` (just written), so sending it reads nothing."""
    _b64_cache.remember(path, data)


Part = TextPart | ImagePart


class ToolCall(BaseModel):
    """A tool call requested by the model. `arguments` is the raw JSON string as sent."""

    id: str
    name: str
    arguments: str = "{}"


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role
    content: list[TextPart | ImagePart] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    #: opaque provider state that must be sent back verbatim on the next call (Anthropic thinking
    #: signatures, Gemini thought signatures); None for everything else
    provider_data: dict[str, Any] | None = None

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", content=[TextPart(text=text)])

    @classmethod
    def user(cls, text: str = "", images: list[ImagePart] | None = None) -> Message:
        parts: list[TextPart | ImagePart] = list(images or [])
        if text:
            parts.append(TextPart(text=text))
        return cls(role="user", content=parts)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def images(self) -> list[ImagePart]:
        return [p for p in self.content if isinstance(p, ImagePart)]


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_read_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
        )
