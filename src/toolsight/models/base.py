"""The model interface: messages in, one ModelOutput out. Providers implement `Model.generate`.

Messages carry text and images (images by file path, encoded only when a provider sends them),
assistant tool calls, and tool results. Errors a provider raises are classified so the runner can
retry what is transient and fail the task on what is not.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from toolsight.errors import ToolsightError
from toolsight.log.messages import (  # re-exported: the message types live in the run log (layer 1)
    FinishReason as FinishReason,
)
from toolsight.log.messages import ImagePart as ImagePart
from toolsight.log.messages import Message as Message
from toolsight.log.messages import Part as Part
from toolsight.log.messages import Role as Role
from toolsight.log.messages import TextPart as TextPart
from toolsight.log.messages import ToolCall as ToolCall
from toolsight.log.messages import Usage as Usage
from toolsight.log.toolspec import ToolSpec
from toolsight.models.task_context import set_current_task
from toolsight.models.wire import WireProfile
from toolsight.tasks.schema import Task

if TYPE_CHECKING:
    from toolsight.models.batch.base import BatchAPI


class ModelOutput(BaseModel):
    message: Message
    usage: Usage = Field(default_factory=Usage)
    finish_reason: FinishReason = "stop"
    model: str = ""
    cached: bool = False
    #: the reply came through the provider's batch API (billed at its batch price)
    batch: bool = False

    @property
    def text(self) -> str:
        return self.message.text

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self.message.tool_calls


class GenerateConfig(BaseModel):
    """Generation settings passed through to the provider (None = provider default)."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, ge=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = None
    stop: list[str] | None = None
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    thinking_budget: int | None = Field(default=None, ge=0)
    timeout: float = Field(default=120.0, gt=0)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    #: a reference driver's request shapes (official loops only; `toolsight.models.wire`)
    wire: WireProfile | None = None
    #: mark the request for a provider's prompt cache (Anthropic `cache_control` breakpoints; OpenAI
    #: and Gemini cache prefixes without being asked): `read` where earlier requests wrote (the system
    #: prompt, the previous round's prefix), `write` also this request's whole prompt, for a next
    #: round to read. Set by the toolsight loop, never by official loops; it does not change the
    #: reply, so it is not part of the response-cache key
    prompt_cache: Literal["off", "read", "write"] = "off"
    #: whether the model may call the tools a request offers (sent only with tools): `auto` (the
    #: providers' default) or `none` — OpenAI `tool_choice: "none"`, Anthropic `{"type": "none"}`, Gemini
    #: `toolConfig.functionCallingConfig.mode: NONE`. None sends nothing. The toolsight loop's last round
    #: of `no_tools_on_last_round` keeps the tools (the start of the cached prefix) and forbids them
    tool_choice: Literal["auto", "none"] | None = None

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Left out of dumps while unset, so a config without it serializes as before (response-cache
        keys and recorded manifests stay the same)."""
        out: dict[str, Any] = handler(self)
        if out.get("tool_choice", "") is None:
            del out["tool_choice"]
        return out

    def is_deterministic(self) -> bool:
        return self.temperature == 0 or self.seed is not None


#: what went wrong on the wire: an HTTP error status, no connection, no reply in time, or a reply
#: that could not be read. The runner pauses the whole run for connection and timeout errors.
ErrorKind = Literal["status", "connection", "timeout", "response"]


class ModelError(Exception):
    """A provider error. `retryable` errors are retried with backoff; others fail the task."""

    def __init__(self, message: str, *, retryable: bool = False, retry_after: float | None = None,
                 status: int | None = None, kind: ErrorKind | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        self.kind: ErrorKind = kind or ("status" if status is not None else "response")


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

    def for_task(self, task: Task, epoch: int = 1) -> Model:
        """The model to use for one task (in epoch `epoch` of a run with --epochs). Baselines that need
        the task (reference, random) override it; `random` draws each epoch's guess afresh.

        Called by the runner in the task's own context: it also marks the task as current, so
        providers send its id with every request (`task_context.task_headers`).
        """
        set_current_task(task.id)
        return self

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Close HTTP clients."""

    async def probe(self, timeout: float = 30.0) -> None:  # noqa: B027 - optional hook
        """A health check that costs nothing (the outage breaker's, `calls/breaker.py`): a request such
        as the provider's models listing — never a completion. Returns when the endpoint answered
        anything; raises `ModelError` when it could not be reached or failed (a 5xx, a timeout).
        The default sends nothing: a model without an endpoint is always up."""

    def setting_warning(self, tools: Sequence[str], tasks: Sequence[Task],
                        specs: Sequence[ToolSpec] = ()) -> str | None:
        """Why this model will do badly under a setting that offers `tools` (tool names, with their
        schemas in `specs` when known) on `tasks`, or None. A baseline that solves tasks by calling tools says which ones are missing, so a
        run that can only score 0 does not look like a result."""
        return None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "tool_image_mode": self.tool_image_mode, "native_tools": self.native_tools}

    def endpoint_id(self) -> str:
        """The model and where it is served: the same spec on another base URL is another model (a
        response cache must never answer one with the other's replies)."""
        base = getattr(self, "base_url", None)
        return f"{self.name}@{base}" if base else self.name

    def batch_api(self) -> BatchAPI | None:
        """The provider's batch endpoint (`toolsight.models.batch`), or None: this model cannot batch."""
        return None

    def batch_body(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> dict[str, Any]:
        """The request body the on-line call would send (wire profile included), for a batch item."""
        raise NotImplementedError(f"{self.name}: no batch API")

    def batch_parse(self, reply: dict[str, Any], config: GenerateConfig | None = None) -> ModelOutput:
        """A batch item's reply body read as the on-line reply would be (`ModelOutput.batch` set);
        `config`: the item's generation settings, for a parser that reads by them (a wire profile)."""
        raise NotImplementedError(f"{self.name}: no batch API")

    def forget(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> None:  # noqa: B027
        """The reply to this request could not be used (a judge reply that does not parse): drop it
        from any cache in front of the model, so asking again asks the model. No cache: nothing to do."""


#: how an agent asks for one model reply: the model's own `generate`, or the runner's caller around it
#: (connection limit, retries, the outage breaker, the cache, the per-call log)
Generate = Callable[[list[Message], list[ToolSpec], GenerateConfig], Awaitable[ModelOutput]]
