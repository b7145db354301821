"""`google/NAME`: Gemini through the google-genai SDK (`client.aio.models.generate_content`).

Tools are function declarations with the raw JSON schema (`parameters_json_schema`); tool calls and
results are `function_call` / `function_response` parts; images are inline bytes. Thought
signatures returned with function calls are kept in `Message.provider_data` and sent back, which
Gemini 3 requires. SDK retries are off (`HttpRetryOptions(attempts=1)`, which also turns off the
SDK's implicit retry after connection errors).
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import TYPE_CHECKING, Any

from toolsight.log.toolspec import ToolSpec
from toolsight.models._common import (
    api_key,
    connection_error,
    object_arguments,
    read_reply,
    status_error,
    timeout_error,
)
from toolsight.models._direct import DirectPath, Reply, Route, dumps
from toolsight.models._routes import store_for
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
from toolsight.models.images import image_b64
from toolsight.models.task_context import task_headers

if TYPE_CHECKING:  # the SDK is imported when a request needs it (~0.8 s): a route kept from an
    from google import genai  # earlier run lets a run go without it (models/_routes.py)
    from google.genai import types

    from toolsight.models.batch.google import GoogleBatchAPI

KEY_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")

_FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
             "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR", "LANGUAGE"}
_LEVELS = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"}


def _finish(reason: str | None, has_calls: bool) -> FinishReason:
    if reason in (None, "STOP", "FINISH_REASON_UNSPECIFIED"):
        return "tool_calls" if has_calls else ("stop" if reason == "STOP" else "unknown")
    if reason == "MAX_TOKENS":
        return "length"
    if reason in _FILTERED:
        return "content_filter"
    if reason in ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MALFORMED_RESPONSE"):
        return "error"
    return "unknown"


def _image(p: ImagePart) -> dict[str, Any]:
    return {"inlineData": {"mimeType": p.media_type(), "data": image_b64(p)}}


def _parts(msg: Message) -> list[dict[str, Any]]:
    return [{"text": p.text} if isinstance(p, TextPart) else _image(p) for p in msg.content
            if not isinstance(p, TextPart) or p.text]


def to_wire(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """(system instruction, contents in the REST JSON form). Consecutive tool/user messages form
    one user turn, so all function responses to one model turn travel together."""
    system: list[str] = []
    contents: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for m in messages:
        if m.role == "system":
            system.append(m.text)
            continue
        if m.role == "assistant":
            sigs: dict[str, str] = (m.provider_data or {}).get("google_signatures") or {}
            parts: list[dict[str, Any]] = [{"text": m.text}] if m.text else []
            for c in m.tool_calls:
                names[c.id] = c.name
                part: dict[str, Any] = {"functionCall": {"id": c.id, "name": c.name, "args": object_arguments(c.arguments)}}
                if c.id in sigs:
                    part["thoughtSignature"] = sigs[c.id]
                parts.append(part)
            contents.append({"role": "model", "parts": parts or [{"text": ""}]})
            continue
        if m.role == "tool":
            cid = m.tool_call_id or ""
            fr: dict[str, Any] = {"id": cid, "name": m.name or names.get(cid, "tool"), "response": {"output": m.text}}
            imgs = m.images
            if imgs:  # multimodal function responses (Gemini 3)
                fr["parts"] = [_image(p) for p in imgs]
            parts = [{"functionResponse": fr}]
        else:
            parts = _parts(m)
        if contents and contents[-1]["role"] == "user":
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": "user", "parts": parts})
    return ("\n\n".join(system) or None), contents


def _signature(raw: str) -> str:
    """A thought signature in the standard base64 alphabet, as the SDK path re-encodes the bytes
    it decoded (it accepts both alphabets and missing padding)."""
    data = raw.replace("+", "-").replace("/", "_")
    return base64.b64encode(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))).decode("ascii")


class GoogleModel(Model):
    """Gemini behind google-genai. `direct=True` (the default): requests go straight through one aiohttp
    session with the URL and headers the SDK's request builder makes and the body the SDK path sends
    (models/_direct.py); `direct=False` sends every request through `generate_content`.
    `route_cache=False` keeps the route from being stored for later runs (models/_routes.py)."""

    tool_image_mode = "user"

    def __init__(self, name: str, model_id: str, *, base_url: str | None = None,
                 api_key_value: str | None = None, direct: bool = True, route_cache: bool | None = None) -> None:
        super().__init__(name)
        self.model_id = model_id
        self.base_url = base_url
        self._key = api_key(name, KEY_VARS, api_key_value, base_url)
        self._client: genai.Client | None = None
        store = None
        if direct and route_cache is not False:
            store = store_for("google", "google-genai", base_url, self._key, ("GOOGLE_", "GEMINI_"), KEY_VARS)
        self._direct = DirectPath(store=store)
        self.direct = direct

    def client(self) -> genai.Client:
        if self._client is None:
            from google import genai
            from google.genai import types

            opts = types.HttpOptions(base_url=self.base_url, api_version="v1beta", retry_options=types.HttpRetryOptions(attempts=1))
            self._client = genai.Client(vertexai=False, api_key=self._key, http_options=opts)
        return self._client

    async def probe(self, timeout: float = 30.0) -> None:
        """`GET models` (one page of the listing, free): no content request."""
        import httpx
        from google.genai import errors as genai_errors

        try:
            await asyncio.wait_for(self.client().aio.models.list(config={"page_size": 1}), timeout=timeout)
        except genai_errors.APIError as exc:
            raise status_error(self.name, int(exc.code or 0), str(exc.message or exc),
                               getattr(exc.response, "headers", None), " or ".join(KEY_VARS)) from None
        except (TimeoutError, httpx.TimeoutException):
            raise timeout_error(self.name, timeout) from None
        except httpx.HTTPError as exc:
            raise connection_error(self.name, f"{type(exc).__name__}: {exc}") from None

    @staticmethod
    def _http_options(config: GenerateConfig) -> dict[str, Any]:
        return {"timeout": int(config.timeout * 1000), "retry_options": {"attempts": 1}}

    def request_config(self, system: str | None, contents: list[dict[str, Any]], tools: list[ToolSpec],
                       config: GenerateConfig) -> dict[str, Any]:
        # Contents and tools go in `extra_body` in their REST form, replacing the placeholder: the SDK's
        # pydantic conversion of every part costs ~7 ms per call for a ten-round history.
        body: dict[str, Any] = {"contents": contents}
        if tools:
            body["tools"] = self._tools(tools)
            if config.tool_choice is not None:
                body["toolConfig"] = self._tool_config(config.tool_choice)
        body.update(config.extra_body)
        cfg: dict[str, Any] = {
            "http_options": {**self._http_options(config), "extra_body": body},
            "automatic_function_calling": {"disable": True},
        }
        if system:
            cfg["system_instruction"] = system
        if config.temperature is not None:
            cfg["temperature"] = config.temperature
        if config.top_p is not None:
            cfg["top_p"] = config.top_p
        if config.max_tokens is not None:
            cfg["max_output_tokens"] = config.max_tokens
        if config.seed is not None:
            cfg["seed"] = config.seed
        if config.stop:
            cfg["stop_sequences"] = config.stop
        thinking = self._thinking(config)
        if thinking:
            cfg["thinking_config"] = thinking
        return cfg

    @staticmethod
    def _tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
        return [{"functionDeclarations": [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters} for t in tools
        ]}]

    @staticmethod
    def _tool_config(choice: str) -> dict[str, Any]:
        """`GenerateConfig.tool_choice` as Gemini's function-calling mode (AUTO or NONE)."""
        return {"functionCallingConfig": {"mode": choice.upper()}}

    @staticmethod
    def _thinking(config: GenerateConfig) -> dict[str, Any]:
        thinking: dict[str, Any] = {}
        if config.thinking_budget is not None:
            thinking["thinking_budget"] = config.thinking_budget
        elif config.reasoning_effort is not None:
            thinking["thinking_level"] = _LEVELS[config.reasoning_effort]
        if thinking:
            thinking["include_thoughts"] = True
        return thinking

    def request_body(self, system: str | None, contents: list[dict[str, Any]], tools: list[ToolSpec],
                     config: GenerateConfig) -> dict[str, Any]:
        """The JSON body the SDK makes of `request_config`: its conversion of the config (generation
        settings in camelCase, the thinking config as given), then `extra_body` merged on top."""
        body: dict[str, Any] = {"contents": contents}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}], "role": "user"}
        gen: dict[str, Any] = {}
        if config.temperature is not None:
            gen["temperature"] = config.temperature
        if config.top_p is not None:
            gen["topP"] = config.top_p
        if config.max_tokens is not None:
            gen["maxOutputTokens"] = config.max_tokens
        if config.stop:
            gen["stopSequences"] = config.stop
        if config.seed is not None:
            gen["seed"] = config.seed
        thinking = self._thinking(config)
        if thinking:
            gen["thinkingConfig"] = thinking
        body["generationConfig"] = gen
        if tools:
            body["tools"] = self._tools(tools)
            if config.tool_choice is not None:
                body["toolConfig"] = self._tool_config(config.tool_choice)
        if config.extra_body:
            from google.genai import _common as genai_common

            genai_common.recursive_dict_update(body, dict(config.extra_body))  # the SDK's own merge
        return body

    def _route(self, config: GenerateConfig) -> tuple[Route | None, bool]:
        """The route for `config.timeout` and whether it is new (made now by the SDK's request
        builder). A new route is learned — kept for the next calls and later runs — only once a
        request on it succeeded, as the other providers learn only from an SDK request that did."""
        route = self._direct.route(config.timeout)
        if route is not None:
            return route, False
        from google.genai import _transformers as genai_transformers
        from google.genai import types

        api = self.client()._api_client
        path = f"{genai_transformers.t_model(api, self.model_id)}:generateContent"
        req = api._build_request("post", path, {}, types.HttpOptions.model_validate(self._http_options(config)))
        return Route.make(req.url, req.headers, config.timeout), True

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        return await read_reply(self.name, self._generate(messages, tools, config))

    async def _generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        system, contents = to_wire(messages)
        route, new = self._route(config) if self.direct else (None, False)
        if route is None:
            return await self._generate_sdk(system, contents, tools, config)
        # compact JSON: the SDK's own encoding (`json.dumps` defaults) puts a space after every , and :
        body = dumps(self.request_body(system, contents, tools, config))
        reply = await self._direct.post(self.name, route, body)
        if reply.status != 200:  # the SDK treats every other status as an error
            raise await self._status_error(reply)
        try:
            data = reply.json()
        except ValueError as exc:
            raise ModelError(f"{self.name}: malformed response: {exc}", retryable=True) from None
        out = self.parse_dict(data)
        if new:
            self._direct.learn(route.timeout, route.url, route.headers)
        return out

    async def _status_error(self, reply: Reply) -> ModelError:
        """The SDK's error for the reply (its message), classified as on the SDK path."""
        from google.genai import errors as genai_errors

        try:
            response_json: Any = reply.json()
        except ValueError:
            response_json = {"message": reply.body.decode("utf-8", "replace"), "status": reply.reason}
        try:
            await genai_errors.APIError.raise_error_async(reply.status, response_json, None)
        except genai_errors.APIError as exc:
            return status_error(self.name, int(exc.code or reply.status), str(exc.message or exc), reply.headers,
                                " or ".join(KEY_VARS))
        return status_error(self.name, reply.status, str(response_json), reply.headers, " or ".join(KEY_VARS))

    async def _generate_sdk(self, system: str | None, contents: list[dict[str, Any]], tools: list[ToolSpec],
                            config: GenerateConfig) -> ModelOutput:
        import aiohttp
        import httpx
        from google.genai import errors as genai_errors

        cfg = self.request_config(system, contents, tools, config)
        if task_hdr := task_headers():  # per-request header naming the task (the scripted server keys on it)
            cfg["http_options"]["headers"] = task_hdr
        try:
            resp = await asyncio.wait_for(
                self.client().aio.models.generate_content(model=self.model_id, contents=".",
                                                          config=cfg),  # type: ignore[arg-type]
                timeout=config.timeout + 1.0,
            )
        except genai_errors.APIError as exc:
            headers = getattr(exc.response, "headers", None)
            raise status_error(self.name, int(exc.code or 0), str(exc.message or exc), headers,
                               " or ".join(KEY_VARS)) from None
        except (TimeoutError, httpx.TimeoutException):
            raise timeout_error(self.name, config.timeout) from None
        except (aiohttp.ClientError, httpx.TransportError, OSError) as exc:
            raise connection_error(self.name, f"{type(exc).__name__}: {exc}") from None
        return self.parse(resp)

    def parse(self, resp: types.GenerateContentResponse) -> ModelOutput:
        """A ModelOutput from the SDK's GenerateContentResponse."""
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        sigs: dict[str, str] = {}
        reason: str | None = None
        cand = resp.candidates[0] if resp.candidates else None
        if cand is not None:
            reason = cand.finish_reason.value if cand.finish_reason is not None else None
            for i, p in enumerate((cand.content.parts if cand.content else None) or []):
                if p.function_call is not None:
                    fc = p.function_call
                    cid = fc.id or f"call_{i}"
                    args = fc.args or {}
                    raw = args["_raw"] if set(args) == {"_raw"} and isinstance(args["_raw"], str) else json.dumps(args)
                    calls.append(ToolCall(id=cid, name=fc.name or "", arguments=raw))
                    if p.thought_signature:
                        sigs[cid] = base64.b64encode(p.thought_signature).decode("ascii")
                elif p.text is not None:
                    (thoughts if p.thought else texts).append(p.text)
        elif resp.prompt_feedback is not None and resp.prompt_feedback.block_reason is not None:
            reason = "SAFETY"
        else:
            raise ModelError(f"{self.name}: malformed reply (no candidates and no block reason)", retryable=True,
                             kind="response")
        u = resp.usage_metadata
        usage = Usage()
        if u is not None:
            th = u.thoughts_token_count or 0
            usage = Usage(input_tokens=u.prompt_token_count or 0, output_tokens=(u.candidates_token_count or 0) + th,
                          reasoning_tokens=th, cache_read_tokens=u.cached_content_token_count or 0)
        return self._output(texts, thoughts, calls, sigs, reason, usage, resp.model_version)

    def parse_dict(self, resp: dict[str, Any]) -> ModelOutput:
        """A ModelOutput from a generateContent reply as decoded JSON (the same reading as `parse`)."""
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        sigs: dict[str, str] = {}
        reason: str | None = None
        cands = resp.get("candidates") or []
        if cands:
            cand = cands[0]
            reason = cand.get("finishReason")
            for i, p in enumerate((cand.get("content") or {}).get("parts") or []):
                fc = p.get("functionCall")
                if fc is not None:
                    cid = fc.get("id") or f"call_{i}"
                    args = fc.get("args") or {}
                    raw = args["_raw"] if set(args) == {"_raw"} and isinstance(args["_raw"], str) else json.dumps(args)
                    calls.append(ToolCall(id=cid, name=fc.get("name") or "", arguments=raw))
                    if p.get("thoughtSignature"):
                        sigs[cid] = _signature(p["thoughtSignature"])
                elif p.get("text") is not None:
                    (thoughts if p.get("thought") else texts).append(p["text"])
        elif (resp.get("promptFeedback") or {}).get("blockReason") is not None:
            reason = "SAFETY"
        else:
            raise ModelError(f"{self.name}: malformed reply (no candidates and no block reason)", retryable=True,
                             kind="response")
        u = resp.get("usageMetadata")
        usage = Usage()
        if u is not None:
            th = u.get("thoughtsTokenCount") or 0
            usage = Usage(input_tokens=u.get("promptTokenCount") or 0,
                          output_tokens=(u.get("candidatesTokenCount") or 0) + th,
                          reasoning_tokens=th, cache_read_tokens=u.get("cachedContentTokenCount") or 0)
        return self._output(texts, thoughts, calls, sigs, reason, usage, resp.get("modelVersion"))

    def _output(self, texts: list[str], thoughts: list[str], calls: list[ToolCall], sigs: dict[str, str],
                reason: str | None, usage: Usage, model: str | None) -> ModelOutput:
        content: list[TextPart | ImagePart] = [TextPart(text="".join(texts))] if any(texts) else []
        msg = Message(role="assistant", content=content, tool_calls=calls, reasoning="".join(thoughts) or None,
                      provider_data={"google_signatures": sigs} if sigs else None)
        return ModelOutput(message=msg, usage=usage, finish_reason=_finish(reason, bool(calls)),
                           model=model or self.model_id)

    async def aclose(self) -> None:
        if self._client is not None:
            try:
                await self._client.aio.aclose()
            except (AttributeError, RuntimeError):
                pass
            self._client = None
        await self._direct.aclose()

    def batch_api(self) -> GoogleBatchAPI:
        """Gemini batch mode at this model's base URL, with its key (models/batch/google.py)."""
        from toolsight.models.batch.google import GoogleBatchAPI

        return GoogleBatchAPI(self.name, self.model_id, api_key=self._key, base_url=self.base_url)

    def batch_body(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> dict[str, Any]:
        """`request_body` for the messages (a batch item's inline `request`)."""
        system, contents = to_wire(messages)
        return self.request_body(system, contents, tools, config)

    def batch_parse(self, reply: dict[str, Any], config: GenerateConfig | None = None) -> ModelOutput:
        """A batch item's `generateContent` reply, read by `parse_dict`, marked `batch`."""
        out = self.parse_dict(reply)
        out.batch = True
        return out

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "provider": "google", "model_id": self.model_id, "base_url": self.base_url}
