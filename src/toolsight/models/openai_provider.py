"""`openai/NAME`: OpenAI's Chat Completions API, also any OpenAI-compatible server via a base URL.

vLLM, SGLang and Ollama speak the same wire format, so one adapter serves all of them. SDK retries
are off (`max_retries=0`): the runner retries, and SDK errors become classified `ModelError`s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolsight.log.toolspec import ToolSpec
from toolsight.models import wire
from toolsight.models._common import api_key, read_reply, stainless_call
from toolsight.models._direct import DirectPath, capture_hook
from toolsight.models._routes import store_for
from toolsight.models.base import (
    ConfigurationError,
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
from toolsight.models.images import data_url
from toolsight.models.responses_reply import check_responses_reply
from toolsight.models.task_context import task_headers

if TYPE_CHECKING:  # the SDK is imported when a request needs it (~0.7 s): a route kept from an
    from openai import AsyncOpenAI  # earlier run lets a run go without it (models/_routes.py)

    from toolsight.models.batch.openai import OpenAIBatchAPI

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
            out.append({"type": "image_url", "image_url": {"url": data_url(p), "detail": p.detail}})
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
    """A chat model behind the OpenAI SDK. `model_id` is what is sent as `model`.

    `direct=True` (the default): after the SDK has sent a request, later ones with the same timeout
    go straight through one aiohttp session with the same URL, headers and body (models/_direct.py);
    `direct=False` sends every request through `chat.completions.create`. `route_cache=False` keeps
    the route from being stored for later runs (models/_routes.py; default: `$TOOLSIGHT_ROUTE_CACHE`).
    """

    tool_image_mode = "user"

    def __init__(self, name: str, model_id: str, *, base_url: str | None = None, api_key_value: str | None = None,
                 default_headers: dict[str, str] | None = None, direct: bool = True,
                 route_cache: bool | None = None) -> None:
        super().__init__(name)
        self.model_id = model_id
        self.base_url = base_url
        self._key = api_key(name, KEY_VARS, api_key_value, base_url)
        self._headers = default_headers
        self._client: AsyncOpenAI | None = None
        store = None
        if direct and route_cache is not False:
            store = store_for("openai", "openai", base_url, self._key, ("OPENAI_",), ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
                              extra=default_headers)
        self._direct = DirectPath(store=store)
        self.direct = direct

    def client(self) -> AsyncOpenAI:
        if self._client is None:
            import openai
            from openai import AsyncOpenAI

            # the SDK's own default client, plus a hook that shows the direct path what the SDK sends
            http = openai.DefaultAsyncHttpxClient(event_hooks={"request": [capture_hook], "response": []})
            self._client = AsyncOpenAI(api_key=self._key, base_url=self.base_url, max_retries=0,
                                       default_headers=self._headers, http_client=http)
        return self._client

    def request_body(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> dict[str, Any]:
        """The JSON body of the Chat Completions request; with a wire profile (`config.wire`), in
        the shapes and key order of the driver it describes."""
        profile = config.wire
        msgs = wire.messages(messages, profile, data_url) if profile is not None else to_wire(messages)
        body: dict[str, Any] = {"model": self.model_id, "messages": msgs}
        if config.temperature is not None:
            body["temperature"] = config.temperature
        if config.top_p is not None:
            body["top_p"] = config.top_p
        if config.max_tokens is not None:
            # OpenAI's own reasoning models refuse `max_tokens`; compatible servers all know it
            field = "max_completion_tokens" if self.base_url is None else "max_tokens"
            if profile is not None and profile.max_tokens_field is not None:
                field = profile.max_tokens_field
            body[field] = config.max_tokens
        if config.seed is not None:
            body["seed"] = config.seed
        if config.stop:
            body["stop"] = config.stop
        if config.reasoning_effort is not None:
            body["reasoning_effort"] = config.reasoning_effort
        if tools:
            body["tools"] = tools_to_wire(tools)
            choice = profile.tool_choice if profile is not None else config.tool_choice
            if choice is not None:
                body["tool_choice"] = choice
        if profile is not None and profile.stream is not None:
            body["stream"] = profile.stream
        body.update(config.extra_body)
        return wire.ordered(body, profile) if profile is not None else body

    def request_args(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> dict[str, Any]:
        """`chat.completions.create` arguments for the body. Everything but the model travels in
        `extra_body` (merged into the JSON body, taking precedence): the SDK's typed-params transform
        walks messages recursively and costs ~0.8 ms for a two-message request and ~8 ms for a
        ten-round history with eight tools — more than the whole harness."""
        body = self.request_body(messages, tools, config)
        model = body.pop("model")
        return {"model": model, "messages": [], "extra_body": body}

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        return await read_reply(self.name, self._generate(messages, tools, config))

    async def _generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        if config.wire is not None:
            return await self._generate_profiled(messages, tools, config, config.wire)
        route = self._direct.route(config.timeout) if self.direct else None
        if route is None:
            return await self._generate_sdk(self.client(), messages, tools, config)
        body = self.request_body(messages, tools, config)
        return self.parse_dict(await self._direct.send(self.name, route, body, self.client, KEY_VARS[0]))

    async def _generate_sdk(self, client: AsyncOpenAI, messages: list[Message], tools: list[ToolSpec],
                            config: GenerateConfig) -> ModelOutput:
        import openai

        args = self.request_args(messages, tools, config)
        with self._direct.capture(config.timeout, on=self.direct):
            request = client.chat.completions.create(**args, timeout=config.timeout, extra_headers=task_headers() or None)
            resp = await stainless_call(self.name, openai, request, config.timeout, KEY_VARS[0])
        return self.parse(resp)

    async def _generate_profiled(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig,
                                 profile: wire.WireProfile) -> ModelOutput:
        """A driver's request through the SDK, as the driver's client sends it: the body in the
        profile's shapes and order (the SDK's documented `post` for a body built elsewhere) and the
        client's own retries of the attempt (`sdk_max_retries`: the SDK's backoff and statuses)."""
        import openai
        from openai.types.chat import ChatCompletion

        if profile.stream:
            raise ModelError(f"{self.name}: wire profile {profile.name!r} streams; a streaming driver's loop "
                             "sends its requests with `chat_completions_raw`")
        options: Any = {"max_retries": profile.sdk_max_retries, "timeout": config.timeout}
        if task_headers():
            options["headers"] = task_headers()
        if "security" in getattr(openai, "RequestOptions", dict).__annotations__:
            options["security"] = {"bearer_auth": True}  # what `chat.completions.create` asks for
        request = self.client().post("/chat/completions", body=self.request_body(messages, tools, config),
                                     cast_to=ChatCompletion, options=options)
        resp = await stainless_call(self.name, openai, request, config.timeout, KEY_VARS[0])
        return self.parse_dict(resp.to_dict(warnings=False), profile)

    def parse(self, resp: Any) -> ModelOutput:
        """A ModelOutput from the SDK's ChatCompletion."""
        # warnings off: a reply the SDK's models do not expect (a tool input that is not an object)
        # is read as sent, as parse_dict reads it, without pydantic's serializer complaining
        return self.parse_dict(resp.to_dict(warnings=False))

    def parse_dict(self, resp: dict[str, Any], profile: wire.WireProfile | None = None) -> ModelOutput:
        """A ModelOutput from a Chat Completions reply as decoded JSON. With a wire profile that
        re-sends replies as its driver's client does, the reply is kept for that
        (`provider_data`, `wire.ECHO_KEY`)."""
        choices = resp.get("choices") or []
        if not choices:
            raise ModelError(f"{self.name}: malformed reply (no choices)", retryable=True, kind="response")
        choice = choices[0]
        msg = choice.get("message") or {}
        calls = [
            ToolCall(id=c.get("id") or f"call_{i}", name=c["function"].get("name") or "",
                     arguments=c["function"].get("arguments") or "")
            for i, c in enumerate(msg.get("tool_calls") or [])
            if c.get("function") is not None
        ]
        reasoning = msg.get("reasoning_content") or msg.get("reasoning")
        text = msg.get("content")
        content: list[TextPart | ImagePart] = [TextPart(text=text)] if text else []
        u = resp.get("usage")
        usage = chat_usage(u) if isinstance(u, dict) else Usage()
        finish = _FINISH.get(choice.get("finish_reason") or "", "unknown")
        if calls and finish == "stop":  # some compatible servers say "stop" after tool calls
            finish = "tool_calls"
        echo = wire.echo_of(msg, profile)
        return ModelOutput(
            message=Message(role="assistant", content=content, tool_calls=calls,
                            reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
                            provider_data={wire.ECHO_KEY: echo} if echo is not None else None),
            usage=usage, finish_reason=finish, model=resp.get("model") or self.model_id,
        )

    async def probe(self, timeout: float = 30.0) -> None:
        """`GET /models` (free; any answer but a failure means the endpoint is up): no chat request."""
        import openai

        client = self.client().with_options(max_retries=0, timeout=timeout)
        await stainless_call(self.name, openai, client.models.list(), timeout, KEY_VARS[0])

    async def chat_completions_raw(self, kwargs: dict[str, Any], timeout: float) -> list[dict[str, Any]]:
        """Send `client.chat.completions.create(**kwargs)` as given (the SDK builds the body) and return
        what came back unparsed: the streamed chunks as dicts, or the one response dict when not
        streaming. For harnesses that must reproduce another client's requests exactly."""

        async def go() -> list[dict[str, Any]]:
            # the task header (not part of the body), besides any headers the caller set
            headers = {**task_headers(), **(kwargs.get("extra_headers") or {})}
            args = {k: v for k, v in kwargs.items() if k != "extra_headers"}
            resp = await self.client().chat.completions.create(**args, timeout=timeout, extra_headers=headers or None)
            if not kwargs.get("stream"):
                return [resp.to_dict()]
            return [chunk.to_dict() async for chunk in resp]

        import openai

        out: list[dict[str, Any]] = await stainless_call(self.name, openai, go(), timeout, KEY_VARS[0])
        return out

    async def responses_raw(self, kwargs: dict[str, Any], timeout: float) -> dict[str, Any]:
        """`client.responses.create(**kwargs)` (the Responses API, e.g. with the hosted code interpreter),
        returned as a dict."""

        async def go() -> dict[str, Any]:
            resp = await self.client().responses.create(**kwargs, timeout=timeout, extra_headers=task_headers() or None)
            return check_responses_reply(self.name, resp.to_dict())

        import openai

        out: dict[str, Any] = await stainless_call(self.name, openai, read_reply(self.name, go()), timeout,
                                                   KEY_VARS[0])
        return out

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
        await self._direct.aclose()

    def batch_api(self) -> OpenAIBatchAPI:
        """OpenAI's Batch API at this model's base URL, with its key and headers (models/batch/openai.py)."""
        from toolsight.models.batch.openai import OpenAIBatchAPI

        return OpenAIBatchAPI(self.name, api_key=self._key, base_url=self.base_url, default_headers=self._headers)

    def batch_body(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> dict[str, Any]:
        """`request_body`, refused when it would stream (a batch item cannot)."""
        body = self.request_body(messages, tools, config)
        if body.get("stream"):
            what = f"wire profile {config.wire.name!r}" if config.wire is not None and config.wire.stream \
                else "`stream` in extra_body"
            raise ConfigurationError(f"{self.name}: {what} streams its replies; a batch cannot carry a streamed "
                                     "request, so run this setting without batching")
        return body

    def batch_parse(self, reply: dict[str, Any], config: GenerateConfig | None = None) -> ModelOutput:
        """A batch item's Chat Completions reply, read by `parse_dict` (with the item's wire profile,
        which may keep the reply to re-send it), marked `batch`."""
        out = self.parse_dict(reply, config.wire if config is not None else None)
        out.batch = True
        return out

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "provider": "openai", "model_id": self.model_id, "base_url": self.base_url}


def chat_usage(u: dict[str, Any]) -> Usage:
    """Usage from a Chat Completions `usage` object."""
    details = u.get("completion_tokens_details") or {}
    cached = u.get("prompt_tokens_details") or {}
    return Usage(input_tokens=u.get("prompt_tokens") or 0, output_tokens=u.get("completion_tokens") or 0,
                 reasoning_tokens=details.get("reasoning_tokens") or 0,
                 cache_read_tokens=cached.get("cached_tokens") or 0)


def raw_chat_usage(replies: list[dict[str, Any]]) -> Usage | None:
    """The usage of what `chat_completions_raw` returned (a response, or a stream's chunks: the last
    chunk that carries one), or None when the endpoint reported none (a stream sent without
    `stream_options.include_usage` has none)."""
    for reply in reversed(replies):
        u = reply.get("usage")
        if isinstance(u, dict):
            return chat_usage(u)
    return None


def responses_usage(reply: dict[str, Any]) -> Usage | None:
    """The usage of a Responses API reply, or None when it has none."""
    u = reply.get("usage")
    if not isinstance(u, dict):
        return None
    return Usage(input_tokens=int(u.get("input_tokens") or 0), output_tokens=int(u.get("output_tokens") or 0),
                 reasoning_tokens=int((u.get("output_tokens_details") or {}).get("reasoning_tokens") or 0),
                 cache_read_tokens=int((u.get("input_tokens_details") or {}).get("cached_tokens") or 0))
