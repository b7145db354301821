"""`anthropic/NAME`: Anthropic's Messages API through the official SDK.

The system prompt travels separately; images are base64 source blocks; tool calls are `tool_use`
blocks and tool results `tool_result` blocks, which may hold images (so `tool_image_mode = "tool"`).
Consecutive tool/user messages are merged into one user turn, tool results first, as the API
requires. Thinking blocks (with their signatures) are kept in `Message.provider_data` and sent
back, which extended thinking with tool use requires.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
from anthropic import AsyncAnthropic

from toolsight.models._common import api_key, object_arguments, stainless_call
from toolsight.models.base import (
    FinishReason,
    GenerateConfig,
    ImagePart,
    Message,
    Model,
    ModelOutput,
    TextPart,
    ToolCall,
    Usage,
)
from toolsight.models.task_context import task_headers
from toolsight.tools.base import ToolSpec

KEY_VARS = ("ANTHROPIC_API_KEY",)
DEFAULT_MAX_TOKENS = 4096

_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}


def _blocks(msg: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in msg.content:
        if isinstance(p, TextPart):
            if p.text:
                out.append({"type": "text", "text": p.text})
        else:
            out.append({"type": "image", "source": {"type": "base64", "media_type": p.media_type(), "data": p.b64()}})
    return out


def to_wire(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """(system prompt, messages) in the Messages API format."""
    system: list[str] = []
    wire: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            system.append(m.text)
            continue
        if m.role == "assistant":
            blocks: list[dict[str, Any]] = list((m.provider_data or {}).get("anthropic_thinking") or [])
            if m.text:
                blocks.append({"type": "text", "text": m.text})
            for c in m.tool_calls:
                blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": object_arguments(c.arguments)})
            wire.append({"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]})
            continue
        if m.role == "tool":
            blocks = [{"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": _blocks(m)}]
        else:
            blocks = _blocks(m)
        if wire and wire[-1]["role"] == "user":
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": "user", "content": blocks})
    return ("\n\n".join(system) or None), wire


def tools_to_wire(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


class AnthropicModel(Model):
    tool_image_mode = "tool"

    def __init__(self, name: str, model_id: str, *, base_url: str | None = None,
                 api_key_value: str | None = None) -> None:
        super().__init__(name)
        self.model_id = model_id
        self.base_url = base_url
        self._key = api_key(name, KEY_VARS, api_key_value, base_url)
        self._client: AsyncAnthropic | None = None

    def client(self) -> AsyncAnthropic:
        if self._client is None:
            self._client = AsyncAnthropic(api_key=self._key, base_url=self.base_url, max_retries=0)
        return self._client

    def request_args(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> dict[str, Any]:
        system, wire = to_wire(messages)
        budget = config.thinking_budget
        max_tokens = config.max_tokens or (DEFAULT_MAX_TOKENS + (budget or 0))
        args: dict[str, Any] = {"model": self.model_id, "messages": wire, "max_tokens": max_tokens}
        if system:
            args["system"] = system
        if tools:
            args["tools"] = tools_to_wire(tools)
        if budget:
            args["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if config.reasoning_effort is not None:
            effort = "low" if config.reasoning_effort == "minimal" else config.reasoning_effort
            args["output_config"] = {"effort": effort}
        if config.stop:
            args["stop_sequences"] = config.stop
        # this SDK's `messages.create` has no temperature/top_p parameters: they go in the body
        extra: dict[str, Any] = {}
        if config.temperature is not None:
            extra["temperature"] = config.temperature
        if config.top_p is not None:
            extra["top_p"] = config.top_p
        extra.update(config.extra_body)
        if extra:
            args["extra_body"] = extra
        return args

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        args = self.request_args(messages, tools, config)
        request = self.client().messages.create(
            **args, timeout=config.timeout, extra_headers=task_headers() or None)
        resp = await stainless_call(self.name, anthropic, request, config.timeout, KEY_VARS[0])
        return self.parse(resp)

    def parse(self, resp: Any) -> ModelOutput:
        texts: list[str] = []
        reasoning: list[str] = []
        thinking: list[dict[str, Any]] = []
        calls: list[ToolCall] = []
        for b in resp.content or []:
            kind = getattr(b, "type", None)
            if kind == "text":
                texts.append(b.text)
            elif kind == "thinking":
                reasoning.append(b.thinking)
                thinking.append({"type": "thinking", "thinking": b.thinking, "signature": b.signature})
            elif kind == "redacted_thinking":
                thinking.append({"type": "redacted_thinking", "data": b.data})
            elif kind == "tool_use":
                raw = b.input if isinstance(b.input, str) else json.dumps(b.input)
                calls.append(ToolCall(id=b.id, name=b.name, arguments=raw))
        u = resp.usage
        usage = Usage(
            input_tokens=(u.input_tokens or 0) + (getattr(u, "cache_creation_input_tokens", None) or 0)
            + (getattr(u, "cache_read_input_tokens", None) or 0),
            output_tokens=u.output_tokens or 0,
            cache_read_tokens=getattr(u, "cache_read_input_tokens", None) or 0,
        ) if u is not None else Usage()
        content: list[TextPart | ImagePart] = [TextPart(text="".join(texts))] if any(texts) else []
        msg = Message(role="assistant", content=content, tool_calls=calls,
                      reasoning="\n".join(reasoning) or None,
                      provider_data={"anthropic_thinking": thinking} if thinking else None)
        return ModelOutput(message=msg, usage=usage, finish_reason=_FINISH.get(resp.stop_reason or "", "unknown"),
                           model=resp.model or self.model_id)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "provider": "anthropic", "model_id": self.model_id, "base_url": self.base_url}
