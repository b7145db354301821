"""`anthropic/NAME`: Anthropic's Messages API through the official SDK.

The system prompt travels separately; images are base64 source blocks; tool calls are `tool_use`
blocks and tool results `tool_result` blocks, which may hold images (so `tool_image_mode = "tool"`).
Consecutive tool/user messages are merged into one user turn, tool results first, as the API
requires. Thinking blocks (with their signatures) are kept in `Message.provider_data` and sent
back, which extended thinking with tool use requires.

With `GenerateConfig.prompt_cache` (the toolsight loop sets it) the request carries `cache_control`
breakpoints (`cache_breakpoints`): on the system prompt, on the user message before the last
assistant reply (the previous round's prefix, read from the cache) and, with `write`, on the last
user message (this round's prefix, written for the next round) — at most three of the four Anthropic
allows. A request no round will follow (`read`) writes nothing new: a cache write costs 1.25× input.
A `read` request that forbids its tools (`tool_choice: none`, the toolsight loop's last round after
rounds that allowed them) is marked on the system prompt only: Anthropic keys cached message blocks
by `tool_choice`, so only the tools and system prompt can be read, and a breakpoint in the messages
would only write what no request reads.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolsight.log.toolspec import ToolSpec
from toolsight.models._common import api_key, object_arguments, read_reply, stainless_call
from toolsight.models._direct import DirectPath, capture_hook
from toolsight.models._routes import store_for
from toolsight.models.base import (
    ConfigurationError,
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
from toolsight.models.images import image_b64
from toolsight.models.task_context import task_headers

if TYPE_CHECKING:  # the SDK is imported when a request needs it (~1.4 s): a route kept from an
    from anthropic import AsyncAnthropic  # earlier run lets a run go without it (models/_routes.py)

    from toolsight.models.batch.anthropic import AnthropicBatchAPI

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
            out.append({"type": "image", "source": {"type": "base64", "media_type": p.media_type(), "data": image_b64(p)}})
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


#: what Anthropic's prompt cache is asked for: the default 5-minute cache
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
#: breakpoints Anthropic accepts in one request
MAX_BREAKPOINTS = 4


def cache_breakpoints(system: str | None, wire: list[dict[str, Any]], write: bool = True, messages: bool = True
                      ) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """(system blocks, messages) with `cache_control` breakpoints, new copies of the blocks marked:
    the system prompt's block, the last content block of the user message before the last one and,
    with `write`, of the last one (none in the messages without `messages`). In a tool loop request
    i+1 repeats request i and adds an assistant reply and a user message, so the breakpoint that
    wrote request i's prefix is the one request i+1 reads."""
    sys_blocks = [{"type": "text", "text": system, "cache_control": EPHEMERAL}] if system else None
    users = [i for i, m in enumerate(wire) if m["role"] == "user" and m["content"]] if messages else []
    out = list(wire)
    for i in users[-2:] if write else users[-2:-1]:
        content = list(out[i]["content"])
        content[-1] = {**content[-1], "cache_control": EPHEMERAL}
        out[i] = {**out[i], "content": content}
    return sys_blocks, out


def tools_to_wire(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


class AnthropicModel(Model):
    """Claude behind the Anthropic SDK. `direct=True` (the default): after the SDK has sent a request,
    later ones with the same timeout go straight through one aiohttp session with the same URL,
    headers and body (models/_direct.py); `direct=False` sends every request through the SDK.
    `route_cache=False` keeps the route from being stored for later runs (models/_routes.py)."""

    tool_image_mode = "tool"

    def __init__(self, name: str, model_id: str, *, base_url: str | None = None,
                 api_key_value: str | None = None, direct: bool = True, route_cache: bool | None = None) -> None:
        super().__init__(name)
        self.model_id = model_id
        self.base_url = base_url
        self._key = api_key(name, KEY_VARS, api_key_value, base_url)
        self._client: AsyncAnthropic | None = None
        store = None
        if direct and route_cache is not False:
            store = store_for("anthropic", "anthropic", base_url, self._key, ("ANTHROPIC_",), ("ANTHROPIC_API_KEY",))
        self._direct = DirectPath(store=store)
        self.direct = direct

    def client(self) -> AsyncAnthropic:
        if self._client is None:
            import anthropic
            from anthropic import AsyncAnthropic

            # the SDK's own default client, plus a hook that shows the direct path what the SDK sends
            http = anthropic.DefaultAsyncHttpxClient(event_hooks={"request": [capture_hook], "response": []})
            self._client = AsyncAnthropic(api_key=self._key, base_url=self.base_url, max_retries=0, http_client=http)
        return self._client

    async def probe(self, timeout: float = 30.0) -> None:
        """`GET /v1/models` (free; any answer but a failure means the endpoint is up): no message request."""
        import anthropic

        client = self.client().with_options(max_retries=0, timeout=timeout)
        await stainless_call(self.name, anthropic, client.models.list(limit=1), timeout, KEY_VARS[0])

    def request_args(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> dict[str, Any]:
        system, wire = to_wire(messages)
        budget = config.thinking_budget
        max_tokens = config.max_tokens or (DEFAULT_MAX_TOKENS + (budget or 0))
        args: dict[str, Any] = {"model": self.model_id, "messages": wire, "max_tokens": max_tokens}
        if system:
            args["system"] = system
        if config.prompt_cache != "off" and config.wire is None:
            write = config.prompt_cache == "write"
            blocks, args["messages"] = cache_breakpoints(
                system, wire, write=write, messages=write or not (tools and config.tool_choice == "none"))
            if blocks:
                args["system"] = blocks
        if tools:
            args["tools"] = tools_to_wire(tools)
            if config.tool_choice is not None:
                args["tool_choice"] = {"type": config.tool_choice}
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

    def request_body(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> dict[str, Any]:
        """The JSON body the SDK makes of `request_args` (its parameters, then `extra_body` on top)."""
        args = self.request_args(messages, tools, config)
        extra = args.pop("extra_body", None) or {}
        return {**args, **extra}

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        return await read_reply(self.name, self._generate(messages, tools, config))

    async def _generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        route = self._direct.route(config.timeout) if self.direct else None
        if route is None:
            return await self._generate_sdk(self.client(), messages, tools, config)
        body = self.request_body(messages, tools, config)
        return self.parse_dict(await self._direct.send(self.name, route, body, self.client, KEY_VARS[0]))

    async def _generate_sdk(self, client: AsyncAnthropic, messages: list[Message], tools: list[ToolSpec],
                            config: GenerateConfig) -> ModelOutput:
        import anthropic

        args = self.request_args(messages, tools, config)
        with self._direct.capture(config.timeout, on=self.direct):
            request = client.messages.create(**args, timeout=config.timeout, extra_headers=task_headers() or None)
            resp = await stainless_call(self.name, anthropic, request, config.timeout, KEY_VARS[0])
        return self.parse(resp)

    def parse(self, resp: Any) -> ModelOutput:
        """A ModelOutput from the SDK's Message."""
        # warnings off: a reply the SDK's models do not expect (a tool input that is not an object)
        # is read as sent, as parse_dict reads it, without pydantic's serializer complaining
        return self.parse_dict(resp.to_dict(warnings=False))

    def parse_dict(self, resp: dict[str, Any]) -> ModelOutput:
        """A ModelOutput from a Messages API reply as decoded JSON."""
        texts: list[str] = []
        reasoning: list[str] = []
        thinking: list[dict[str, Any]] = []
        calls: list[ToolCall] = []
        for b in resp.get("content") or []:
            kind = b.get("type")
            if kind == "text":
                texts.append(b.get("text") or "")
            elif kind == "thinking":
                reasoning.append(b.get("thinking") or "")
                thinking.append({"type": "thinking", "thinking": b.get("thinking") or "", "signature": b.get("signature")})
            elif kind == "redacted_thinking":
                thinking.append({"type": "redacted_thinking", "data": b.get("data")})
            elif kind == "tool_use":
                inp = b.get("input")
                raw = inp if isinstance(inp, str) else json.dumps(inp)
                calls.append(ToolCall(id=b["id"], name=b["name"], arguments=raw))
        u = resp.get("usage")
        usage = Usage(
            input_tokens=(u.get("input_tokens") or 0) + (u.get("cache_creation_input_tokens") or 0)
            + (u.get("cache_read_input_tokens") or 0),
            output_tokens=u.get("output_tokens") or 0,
            cache_read_tokens=u.get("cache_read_input_tokens") or 0,
            cache_write_tokens=u.get("cache_creation_input_tokens") or 0,
        ) if u is not None else Usage()
        content: list[TextPart | ImagePart] = [TextPart(text="".join(texts))] if any(texts) else []
        msg = Message(role="assistant", content=content, tool_calls=calls,
                      reasoning="\n".join(reasoning) or None,
                      provider_data={"anthropic_thinking": thinking} if thinking else None)
        return ModelOutput(message=msg, usage=usage, finish_reason=_FINISH.get(resp.get("stop_reason") or "", "unknown"),
                           model=resp.get("model") or self.model_id)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
        await self._direct.aclose()

    def batch_api(self) -> AnthropicBatchAPI:
        """Anthropic's Message Batches API at this model's base URL, with its key (models/batch/anthropic.py)."""
        from toolsight.models.batch.anthropic import AnthropicBatchAPI

        return AnthropicBatchAPI(self.name, api_key=self._key, base_url=self.base_url)

    def batch_body(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> dict[str, Any]:
        """`request_body` (a batch item's `params`), refused when it would stream."""
        body = self.request_body(messages, tools, config)
        if body.get("stream"):
            raise ConfigurationError(f"{self.name}: `stream` in extra_body streams the reply; a batch cannot carry "
                                     "a streamed request, so run this setting without batching")
        return body

    def batch_parse(self, reply: dict[str, Any], config: GenerateConfig | None = None) -> ModelOutput:
        """A batch item's message, read by `parse_dict`, marked `batch`."""
        out = self.parse_dict(reply)
        out.batch = True
        return out

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "provider": "anthropic", "model_id": self.model_id, "base_url": self.base_url}
