"""`openai/NAME`: OpenAI's Chat Completions API, also any OpenAI-compatible server via a base URL.

vLLM, SGLang and Ollama speak the same wire format, so one adapter serves all of them. SDK retries
are off (`max_retries=0`): the runner retries, and SDK errors become classified `ModelError`s.
"""

from __future__ import annotations

from typing import Any

import openai
from openai import AsyncOpenAI

from toolsight.models._common import api_key, stainless_call
from toolsight.models.base import (
    FinishReason,
    GenerateConfig,
    ImagePart,
    Message,
    Model,
    ModelError,
    ModelOutput,
    TextPart,
    ToolCall,
    Usage,
)
from toolsight.models.task_context import task_headers
from toolsight.tools.base import ToolSpec

KEY_VARS = ("OPENAI_API_KEY",)

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}


def _parts(msg: Message) -> str | list[dict[str, Any]]:
    """Plain string when the message is text only (accepted everywhere), else content parts."""
    if not any(isinstance(p, ImagePart) for p in msg.content):
        return msg.text
    out: list[dict[str, Any]] = []
    for p in msg.content:
        if isinstance(p, TextPart):
            out.append({"type": "text", "text": p.text})
        else:
            out.append({"type": "image_url", "image_url": {"url": p.data_url(), "detail": p.detail}})
    return out


def to_wire(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages in the Chat Completions wire format."""
    wire: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "assistant":
            # null content only alongside tool calls: some compatible servers reject it otherwise
            d: dict[str, Any] = {"role": "assistant", "content": m.text or (None if m.tool_calls else "")}
            if m.tool_calls:
                d["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in m.tool_calls
                ]
            wire.append(d)
        elif m.role == "tool":
            wire.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": _parts(m)})
        else:
            wire.append({"role": m.role, "content": _parts(m)})
    return wire


def tools_to_wire(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


class OpenAIModel(Model):
    """A chat model behind the OpenAI SDK. `model_id` is what is sent as `model`."""

    tool_image_mode = "user"

    def __init__(self, name: str, model_id: str, *, base_url: str | None = None, api_key_value: str | None = None,
                 default_headers: dict[str, str] | None = None) -> None:
        super().__init__(name)
        self.model_id = model_id
        self.base_url = base_url
        self._key = api_key(name, KEY_VARS, api_key_value, base_url)
        self._headers = default_headers
        self._client: AsyncOpenAI | None = None

    def client(self) -> AsyncOpenAI:
        if self._client is None:
            self._client = AsyncOpenAI(api_key=self._key, base_url=self.base_url, max_retries=0,
                                       default_headers=self._headers)
        return self._client

    def request_args(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> dict[str, Any]:
        # Messages and tools travel in `extra_body` (merged into the JSON body, taking precedence):
        # the SDK's typed-params transform walks them recursively and costs ~0.8 ms for a two-message
        # request and ~8 ms for a ten-round history with eight tools — more than the whole harness.
        body: dict[str, Any] = {"messages": to_wire(messages)}
        if tools:
            body["tools"] = tools_to_wire(tools)
        body.update(config.extra_body)
        args: dict[str, Any] = {"model": self.model_id, "messages": [], "extra_body": body}
        if config.temperature is not None:
            args["temperature"] = config.temperature
        if config.top_p is not None:
            args["top_p"] = config.top_p
        if config.max_tokens is not None:
            # OpenAI's own reasoning models refuse `max_tokens`; compatible servers all know it
            args["max_completion_tokens" if self.base_url is None else "max_tokens"] = config.max_tokens
        if config.seed is not None:
            args["seed"] = config.seed
        if config.stop:
            args["stop"] = config.stop
        if config.reasoning_effort is not None:
            args["reasoning_effort"] = config.reasoning_effort
        return args

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        args = self.request_args(messages, tools, config)
        request = self.client().chat.completions.create(
            **args, timeout=config.timeout, extra_headers=task_headers() or None)
        resp = await stainless_call(self.name, openai, request, config.timeout, KEY_VARS[0])
        return self.parse(resp)

    def parse(self, resp: Any) -> ModelOutput:
        if not resp.choices:
            raise ModelError(f"{self.name}: response has no choices", retryable=True)
        choice = resp.choices[0]
        msg = choice.message
        calls = [
            ToolCall(id=c.id or f"call_{i}", name=c.function.name, arguments=c.function.arguments or "")
            for i, c in enumerate(msg.tool_calls or [])
            if getattr(c, "function", None) is not None
        ]
        extra = msg.model_extra or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        content: list[TextPart | ImagePart] = [TextPart(text=msg.content)] if msg.content else []
        usage = Usage()
        if resp.usage is not None:
            u = resp.usage
            details = u.completion_tokens_details
            cached = u.prompt_tokens_details
            usage = Usage(
                input_tokens=u.prompt_tokens or 0,
                output_tokens=u.completion_tokens or 0,
                reasoning_tokens=(details.reasoning_tokens or 0) if details is not None else 0,
                cache_read_tokens=(cached.cached_tokens or 0) if cached is not None else 0,
            )
        finish = _FINISH.get(choice.finish_reason or "", "unknown")
        if calls and finish == "stop":  # some compatible servers say "stop" after tool calls
            finish = "tool_calls"
        return ModelOutput(
            message=Message(role="assistant", content=content, tool_calls=calls,
                            reasoning=reasoning if isinstance(reasoning, str) and reasoning else None),
            usage=usage, finish_reason=finish, model=resp.model or self.model_id,
        )

    async def chat_completions_raw(self, kwargs: dict[str, Any], timeout: float) -> list[dict[str, Any]]:
        """Send `client.chat.completions.create(**kwargs)` as given (the SDK builds the body) and return
        what came back unparsed: the streamed chunks as dicts, or the one response dict when not
        streaming. For harnesses that must reproduce another client's requests exactly."""

        async def go() -> list[dict[str, Any]]:
            resp = await self.client().chat.completions.create(**kwargs, timeout=timeout)
            if not kwargs.get("stream"):
                return [resp.to_dict()]
            return [chunk.to_dict() async for chunk in resp]

        out: list[dict[str, Any]] = await stainless_call(self.name, openai, go(), timeout, KEY_VARS[0])
        return out

    async def responses_raw(self, kwargs: dict[str, Any], timeout: float) -> dict[str, Any]:
        """`client.responses.create(**kwargs)` (the Responses API, e.g. with the hosted code interpreter),
        returned as a dict."""

        async def go() -> dict[str, Any]:
            resp = await self.client().responses.create(**kwargs, timeout=timeout)
            out: dict[str, Any] = resp.to_dict()
            return out

        out: dict[str, Any] = await stainless_call(self.name, openai, go(), timeout, KEY_VARS[0])
        return out

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "provider": "openai", "model_id": self.model_id, "base_url": self.base_url}
