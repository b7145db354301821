"""The model interface: messages in, one ModelOutput out. Providers implement `Model.generate`.

Messages carry text and images (images by file path, encoded only when a provider sends them),
assistant tool calls, and tool results. Errors a provider raises are classified so the runner can
retry what is transient and fail the task on what is not.
"""

from __future__ import annotations

import base64
import mimetypes
from abc import ABC, abstractmethod
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolsight.errors import ToolsightError
from toolsight.tasks.schema import Task
from toolsight.tools.base import ToolSpec

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
        return self.mime or mimetypes.guess_type(self.path)[0] or "image/png"

    def b64(self) -> str:
        return _b64_file(self.path)

    def data_url(self) -> str:
        return f"data:{self.media_type()};base64,{self.b64()}"


@lru_cache(maxsize=256)
def _b64_file(path: str) -> str:
    return base64.b64encode(Path(path).read_bytes()).decode("ascii")


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


class ModelOutput(BaseModel):
    message: Message
    usage: Usage = Field(default_factory=Usage)
    finish_reason: FinishReason = "stop"
    model: str = ""
    cached: bool = False

    @property
    def text(self) -> str:
        return self.message.text

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self.message.tool_calls


class GenerateConfig(BaseModel):
    """Generation settings passed through to the provider (None = provider default)."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: list[str] | None = None
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    thinking_budget: int | None = None
    timeout: float = 120.0
    extra_body: dict[str, Any] = Field(default_factory=dict)

    def is_deterministic(self) -> bool:
        return self.temperature == 0 or self.seed is not None


class ModelError(Exception):
    """A provider error. `retryable` errors are retried with backoff; others fail the task."""

    def __init__(self, message: str, *, retryable: bool = False, retry_after: float | None = None,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status


class ConfigurationError(ToolsightError):
    """A user-fixable set-up problem (unknown model prefix, missing API key): one clear message."""


class Model(ABC):
    """A model behind a provider. `name` is the full spec, e.g. 'openai/gpt-4o'."""

    #: where tool-produced images go by default: inside the tool message, or a following user message
    tool_image_mode: Literal["tool", "user"] = "user"
    #: False for models that need the text tool protocol (<tool_call>{json}</tool_call>)
    native_tools: bool = True

    def __init__(self, name: str) -> None:
        self.name = name

    @abstractmethod
    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        ...

    def for_task(self, task: Task) -> Model:
        """The model to use for one task. Baselines that need the task (reference, random) override it."""
        return self

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Close HTTP clients."""

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "tool_image_mode": self.tool_image_mode, "native_tools": self.native_tools}
