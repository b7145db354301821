"""Messages as they are sent and stored: text and image parts, tool calls, usage.

Layer 1 value types shared by models (which send them), agents (which build them) and the run log
(which stores them). Images are referenced by path, never held as pixels or bytes; a provider
encodes them when it sends them (`toolsight.models.images`).
"""

from __future__ import annotations

import mimetypes
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "error", "unknown"]


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    """An image by path; `artifact_id` ties it to the task's artifacts for provenance. `url`: where a
    server could fetch the same image (a dataset's public URL, an uploaded crop), sent instead of the
    bytes when a driver's wire profile sends images by URL (`toolsight.models.wire`)."""

    type: Literal["image"] = "image"
    path: str
    artifact_id: str | None = None
    mime: str | None = None
    detail: Literal["auto", "low", "high"] = "auto"
    url: str | None = None

    def media_type(self) -> str:
        return self.mime or _guess_type(self.path)


@lru_cache(maxsize=4096)
def _guess_type(path: str) -> str:
    return mimetypes.guess_type(path)[0] or "image/png"


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
    """Tokens of one call or a sum of calls. `input_tokens` counts every input token, including those
    read from (`cache_read_tokens`) or written to (`cache_write_tokens`) a provider's prompt cache."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )
