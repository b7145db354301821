"""Wire profiles: how a reference driver shapes its Chat Completions requests, applied verbatim.

A benchmark's official loop reproduces its driver's protocol (which messages, which texts); the
*wire profile* reproduces the bytes the driver's client library puts on the wire for those messages:

- the body's key order and the fields the client adds (`stream: false`, `tool_choice: "auto"` with
  tools, `max_tokens` or `max_completion_tokens`);
- each role's text-only content as a plain string or as a list of text parts;
- tool messages' keys and their order (with or without the tool's `name`);
- image parts with or without `detail`, inlined as data URLs or sent by their URL (`ImagePart.url`);
- how a reply goes back in the history (`echo`): built from its fields (toolsight's shape), as the
  OpenAI SDK's `ChatCompletionMessage.model_dump()` (every declared field, nulls included, then
  whatever else the server sent, such as `reasoning_content` / `reasoning`), or as LiteLLM re-sends
  its `Message` (`content` only when not null, `role`, `tool_calls` only when there are some,
  `reasoning_content` when the reply had reasoning);
- the client's own retries per attempt (`sdk_max_retries`: the OpenAI SDK's default is 2).

A benchmark package defines its profile (generic code never names one) and its official loop puts it
in `GenerateConfig.wire`; the OpenAI-protocol adapter applies it (`models/openai_provider.py`). Other
providers receive the same messages in their own wire format; without a profile (the toolsight loop)
nothing here applies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolsight.log.messages import ImagePart, Message

TextShape = Literal["string", "parts"]
Echo = Literal["fields", "openai-sdk", "litellm"]
#: where an adapter keeps the reply as it must be re-sent (`Message.provider_data`)
ECHO_KEY = "openai_echo"

#: the order `openai` SDK's `chat.completions.create()` writes the fields it knows (a body built by
#: the SDK from keyword arguments has its keys in this order; `extra_body` keys come after)
OPENAI_SDK_ORDER: tuple[str, ...] = (
    "model", "stream", "service_tier", "messages", "audio", "frequency_penalty", "function_call", "functions",
    "logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities", "moderation", "n",
    "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_options",
    "prompt_cache_retention", "reasoning_effort", "response_format", "safety_identifier", "seed", "stop", "store",
    "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity",
    "web_search_options",
)


class WireProfile(BaseModel):
    """One driver's request shapes (see the module docstring). The defaults are toolsight's own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="whose wire this is, for the manifest (e.g. the driver and its client library)")
    body_order: tuple[str, ...] = Field(default=(), description="top-level keys in the driver's order; "
                                        "keys not listed follow in toolsight's order")
    stream: bool | None = Field(default=None, description="sent as `stream` when not None")
    tool_choice: str | None = Field(default=None, description="sent as `tool_choice` with every request that has tools")
    text_content: dict[str, TextShape] = Field(
        default_factory=dict, description="per role (system, user, tool, assistant): text-only content as a "
        "string (the default) or as a list of text parts")
    tool_message_keys: tuple[str, ...] = Field(
        default=("role", "tool_call_id", "content"),
        description="the keys of a tool message in order; add 'name' to send the tool's name")
    echo: Echo = "fields"
    image_detail: Literal["auto", "low", "high"] | None = Field(
        default="auto", description="`image_url.detail`; None sends no `detail`")
    image_urls: bool = Field(default=False, description="an image part with a URL is sent by its URL, not inlined")
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = None
    sdk_max_retries: int = Field(default=0, ge=0, le=10,
                                 description="the client library's own retries of one attempt")


DataUrl = Callable[[ImagePart], str]


def _image(p: ImagePart, profile: WireProfile, data_url: DataUrl) -> dict[str, Any]:
    url = p.url if profile.image_urls and p.url else data_url(p)
    inner: dict[str, Any] = {"url": url}
    if profile.image_detail is not None:
        inner["detail"] = profile.image_detail
    return {"type": "image_url", "image_url": inner}


def content(m: Message, profile: WireProfile, data_url: DataUrl) -> str | list[dict[str, Any]]:
    """A message's content in the profile's shape: parts when it has images, else per role."""
    if any(isinstance(p, ImagePart) for p in m.content) or profile.text_content.get(m.role) == "parts":
        return [_image(p, profile, data_url) if isinstance(p, ImagePart) else {"type": "text", "text": p.text}
                for p in m.content]
    return m.text


def _assistant(m: Message, profile: WireProfile, data_url: DataUrl) -> dict[str, Any]:
    echo = (m.provider_data or {}).get(ECHO_KEY)
    if profile.echo != "fields" and isinstance(echo, Mapping):
        return dict(echo)
    text = content(m, profile, data_url)
    d: dict[str, Any] = {"role": "assistant", "content": text if text or not m.tool_calls else None}
    if m.tool_calls:
        d["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                           for c in m.tool_calls]
    return d


def _tool(m: Message, profile: WireProfile, data_url: DataUrl) -> dict[str, Any]:
    values = {"role": "tool", "tool_call_id": m.tool_call_id or "", "name": m.name or "",
              "content": content(m, profile, data_url)}
    return {k: values[k] for k in profile.tool_message_keys if k in values}


def messages(msgs: list[Message], profile: WireProfile, data_url: DataUrl) -> list[dict[str, Any]]:
    """The messages as the profile's driver sends them."""
    out: list[dict[str, Any]] = []
    for m in msgs:
        if m.role == "assistant":
            out.append(_assistant(m, profile, data_url))
        elif m.role == "tool":
            out.append(_tool(m, profile, data_url))
        else:
            out.append({"role": m.role, "content": content(m, profile, data_url)})
    return out


def ordered(body: dict[str, Any], profile: WireProfile) -> dict[str, Any]:
    """`body` with the profile's keys first, in its order."""
    if not profile.body_order:
        return body
    head = {k: body[k] for k in profile.body_order if k in body}
    return {**head, **{k: v for k, v in body.items() if k not in head}}


# ---- how a reply is kept for re-sending ----------------------------------------------------------

def _reasoning(raw: Mapping[str, Any]) -> str | None:
    value = raw.get("reasoning_content")
    if value is None:
        value = raw.get("reasoning")
    return value if isinstance(value, str) and value else None


def litellm_echo(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The reply as LiteLLM re-sends its `Message` to an OpenAI-protocol server: fields that are not
    null, in its declared order (`content`, `role`, `tool_calls` with `function` before `id`), and the
    reasoning under `reasoning_content` whichever name the server used."""
    d: dict[str, Any] = {}
    if raw.get("content") is not None:
        d["content"] = raw["content"]
    d["role"] = raw.get("role") or "assistant"
    calls = [c for c in raw.get("tool_calls") or [] if isinstance(c, Mapping)]
    if calls:
        d["tool_calls"] = [{"function": {"arguments": (c.get("function") or {}).get("arguments"),
                                         "name": (c.get("function") or {}).get("name")},
                            "id": c.get("id"), "type": c.get("type") or "function"} for c in calls]
    reasoning = _reasoning(raw)
    if reasoning is not None:
        d["reasoning_content"] = reasoning
    return d


def openai_sdk_echo(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The reply as `ChatCompletionMessage.model_dump()` of the openai SDK gives it (what a driver
    that appends `message.model_dump()` re-sends): built by the SDK itself from the reply's JSON."""
    from openai._models import construct_type  # the SDK's own response constructor
    from openai.types.chat import ChatCompletionMessage

    msg = construct_type(type_=ChatCompletionMessage, value=dict(raw))
    dumped: dict[str, Any] = msg.model_dump()  # type: ignore[attr-defined]
    return dumped


def echo_of(raw: Mapping[str, Any], profile: WireProfile | None) -> dict[str, Any] | None:
    """What to keep in `Message.provider_data[ECHO_KEY]` for a reply under `profile`, or None."""
    if profile is None or profile.echo == "fields":
        return None
    return openai_sdk_echo(raw) if profile.echo == "openai-sdk" else litellm_echo(raw)
