"""A local HTTP server that plays a script in the OpenAI, Anthropic and Gemini wire formats.

Routes: OpenAI `POST /v1/chat/completions` (also `/chat/completions`; server-sent events when the
body asks for `stream: true`), OpenAI `POST /v1/responses` (the Responses API, with a step's
`code_interpreter` runs as hosted `code_interpreter_call` items), Anthropic `POST /v1/messages`,
Gemini `POST /v1beta/models/{model}:generateContent`, and the models listings (`GET /v1/models`,
`GET /v1beta/models`) that health probes use, and the three providers' batch APIs (`scripted/batches.py`,
items played on the routes above). Every reply reports usage, with the input tokens a provider's
prompt cache would have served (`Script.prompt_cache`, prompt_cache.py); every request is recorded in
`ScriptedServer.requests` so tests can check what an SDK really sent. A Chat Completions request's
`stop` strings cut the scripted text as a real server would (`_apply_stop`).

    with ScriptedServer(script) as srv:      # background thread, 127.0.0.1, ephemeral port
        model = get_model("openai/x", base_url=srv.base_url + "/v1")

CLI demo: `python -m toolsight.models.scripted.server --script FILE --port N`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess as sp
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson
from aiohttp import web

from toolsight.models.base import ConfigurationError
from toolsight.models.scripted import batch_anthropic, batch_google, batch_openai
from toolsight.models.scripted.batches import BATCH_HEADER, Batches
from toolsight.models.scripted.errors import error_body as _error_body
from toolsight.models.scripted.prompt_cache import CacheUse, PromptCache
from toolsight.models.scripted.script import TASK_HEADER, Player, Script, Step, header_task, task_key
from toolsight.models.scripted.tokens import request_tokens, text_tokens


@dataclass
class RecordedRequest:
    wire: str  # "openai" | "anthropic" | "google"
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    task: str | None = None
    step: dict[str, Any] = field(default_factory=dict)
    received: float = 0.0  # time.time() when the request arrived (start-up measurements)
    batch: str | None = None  # `BATCH_ID/CUSTOM_ID` when played as a batch item (scripted/batches.py)


# --- reading requests ---------------------------------------------------------------------------

def _text_of(content: Any, text_key: str = "text") -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get(text_key, "")) for p in content if isinstance(p, dict))
    return ""


def _openai_info(body: dict[str, Any]) -> tuple[str, int]:
    msgs = body.get("messages") or []
    first: dict[str, Any] = next((m for m in msgs if m.get("role") == "user"), {})
    return _text_of(first.get("content")), sum(1 for m in msgs if m.get("role") == "tool")


def _responses_info(body: dict[str, Any]) -> tuple[str, int]:
    items = body.get("input")
    if isinstance(items, str):
        return items, 0
    first: dict[str, Any] = next((m for m in items or [] if isinstance(m, dict) and m.get("role") == "user"), {})
    n = sum(1 for m in items or [] if isinstance(m, dict) and m.get("type") == "function_call_output")
    return _text_of(first.get("content")), n


def _anthropic_info(body: dict[str, Any]) -> tuple[str, int]:
    msgs = body.get("messages") or []
    first: dict[str, Any] = next((m for m in msgs if m.get("role") == "user"), {})
    n = sum(
        1 for m in msgs if isinstance(m.get("content"), list)
        for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
    )
    return _text_of(first.get("content")), n


def _google_info(body: dict[str, Any]) -> tuple[str, int]:
    contents = body.get("contents") or []
    first: dict[str, Any] = next((c for c in contents if c.get("role", "user") == "user"), {})
    n = sum(1 for c in contents for p in c.get("parts") or [] if "functionResponse" in p)
    return _text_of(first.get("parts")), n


# --- writing replies ----------------------------------------------------------------------------

def _usage(step: Step, body: dict[str, Any], wire: str, model: str) -> tuple[int, int]:
    """(input, output) tokens: the step's own numbers, else the provider-style estimate (tokens.py)."""
    inp = step.input_tokens if step.input_tokens is not None else request_tokens(body, wire, model)
    out = step.output_tokens
    if out is None:
        out = max(1, text_tokens(step.text or "") + sum(
            text_tokens(c.name) + text_tokens(c.raw_arguments()) + 3 for c in step.tool_calls))
    return inp, out


def _openai_reply(step: Step, model: str, usage: tuple[int, int], ids: list[str],
                  cache: CacheUse = CacheUse()) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": None if step.fault == "empty" else step.text}
    if step.fault != "empty":
        if step.tool_calls:
            msg["tool_calls"] = [
                {"id": i, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments()}}
                for i, c in zip(ids, step.tool_calls, strict=True)
            ]
        if step.reasoning:
            msg["reasoning_content"] = step.reasoning
    finish = step.finish_reason or ("tool_calls" if "tool_calls" in msg else "stop")
    return {
        "id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage),
                  "prompt_tokens_details": {"cached_tokens": cache.read}},
    }


def _anthropic_reply(step: Step, model: str, usage: tuple[int, int], ids: list[str],
                     cache: CacheUse = CacheUse()) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if step.fault != "empty":
        if step.reasoning:
            blocks.append({"type": "thinking", "thinking": step.reasoning, "signature": "sig-scripted"})
        if step.text:
            blocks.append({"type": "text", "text": step.text})
        for i, c in zip(ids, step.tool_calls, strict=True):
            args: Any = c.arguments
            if isinstance(args, str):  # the Messages API sends objects; a raw string is passed as is
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    pass
            blocks.append({"type": "tool_use", "id": i, "name": c.name, "input": args})
    finish = step.finish_reason or ("tool_use" if step.tool_calls and step.fault != "empty" else "end_turn")
    return {
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": model, "content": blocks,
        "stop_reason": finish, "stop_sequence": None,
        "usage": {"input_tokens": usage[0] - cache.read - cache.write, "output_tokens": usage[1],
                  "cache_creation_input_tokens": cache.write, "cache_read_input_tokens": cache.read},
    }


def _google_reply(step: Step, model: str, usage: tuple[int, int], ids: list[str],
                  cache: CacheUse = CacheUse()) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if step.fault != "empty":
        if step.reasoning:
            parts.append({"text": step.reasoning, "thought": True})
        if step.text:
            parts.append({"text": step.text})
        for i, c in zip(ids, step.tool_calls, strict=True):
            args: Any = c.arguments
            if isinstance(args, str):  # Gemini sends objects; keep an unparsable string under `_raw`
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    args = {"_raw": args}
            parts.append({"functionCall": {"id": i, "name": c.name, "args": args},
                          "thoughtSignature": "c2NyaXB0ZWQ="})
    content: dict[str, Any] = {"role": "model", "parts": parts}
    thoughts = text_tokens(step.reasoning) if step.reasoning else 0
    um: dict[str, Any] = {"promptTokenCount": usage[0], "candidatesTokenCount": usage[1],
                          "totalTokenCount": sum(usage) + thoughts}
    if thoughts:
        um["thoughtsTokenCount"] = thoughts
    if cache.read:  # Gemini leaves the field out when nothing came from the cache
        um["cachedContentTokenCount"] = cache.read
    return {
        "candidates": [{"content": content, "finishReason": step.finish_reason or "STOP", "index": 0}],
        "usageMetadata": um, "modelVersion": model,
    }


def _responses_reply(step: Step, model: str, usage: tuple[int, int], ids: list[str],
                     cache: CacheUse = CacheUse()) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if step.fault != "empty":
        if step.reasoning:
            output.append({"type": "reasoning", "id": "rs_scripted",
                           "summary": [{"type": "summary_text", "text": step.reasoning}]})
        for n, run in enumerate(step.code_interpreter, start=1):
            outs: list[dict[str, Any]] = [{"type": "logs", "logs": run.logs}] if run.logs else []
            outs += [{"type": "image", "url": u} for u in run.images]
            output.append({"type": "code_interpreter_call", "id": f"ci_scripted_{n}", "code": run.code,
                           "container_id": "cntr_scripted", "outputs": outs, "status": "completed"})
        for i, c in zip(ids, step.tool_calls, strict=True):
            output.append({"type": "function_call", "id": f"fc_{i}", "call_id": i, "name": c.name,
                           "arguments": c.raw_arguments(), "status": "completed"})
        if step.text is not None:
            output.append({"type": "message", "id": "msg_scripted", "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": step.text, "annotations": []}]})
    return {
        "id": "resp_scripted", "object": "response", "created_at": int(time.time()), "status": "completed",
        "model": model, "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": sum(usage),
                  "input_tokens_details": {"cached_tokens": cache.read},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }


_IMAGE_ID = re.compile(r"img-[0-9a-f]{12}")
# a tool result that names the image it produced by path (VTC-Bench's official tools and code track)
_IMAGE_PATH = re.compile(r"(?:Edited Image Path|The saved image path is): (\S+)")
# the generic settings' note naming the turn's input images (agents.loop.INPUT_IMAGE_NOTE): before any
# tool has produced an image, `$prev` is the last of these
_INPUT_NAMES = re.compile(r"Input image file\(s\): (.+?)\. Tools take an image")


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, list):
        return [s for x in obj for s in _strings(x)]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    return []


def _newest_image(conversation: Any) -> str | None:
    """The newest image id, or the newest produced-image path, in the conversation's texts; before a tool
    has produced one, the last input image the prompt names."""
    last: str | None = None
    for text in _strings(conversation):
        found = [(m.start(), m.group(0)) for m in _IMAGE_ID.finditer(text)]
        found += [(m.start(1), m.group(1)) for m in _IMAGE_PATH.finditer(text)]
        found += [(m.start(1), m.group(1).split(", ")[-1]) for m in _INPUT_NAMES.finditer(text)]
        if found:
            last = max(found)[1]
    return last


def _substitute_prev(step: Step, body: dict[str, Any]) -> Step:
    """`$prev` in a scripted tool call's arguments becomes the newest image id in the request's
    conversation (not its tool descriptions) — or, when tools name their outputs by path
    ("Edited Image Path: …"), the newest such path — so a script can chain tools on images whose
    names it cannot know in advance."""
    if not any("$prev" in c.raw_arguments() for c in step.tool_calls):
        return step
    conversation = body.get("messages") or body.get("contents") or body.get("input") or []
    last = _newest_image(conversation)
    if last is None:
        return step
    calls = [c.model_copy(update={"arguments": c.raw_arguments().replace("$prev", last)}) for c in step.tool_calls]
    return step.model_copy(update={"tool_calls": calls})


def _apply_stop(step: Step, stop: Any) -> Step:
    """`stop` as an OpenAI-compatible server honours it: the text is cut before the earliest stop
    string (which is not returned) and the reply finishes with "stop" — so a script can be written as a
    model would generate without a stop (PyVision's `</code>`, say)."""
    if not step.text or not stop:
        return step
    if isinstance(stop, str):
        stops = [stop]
    elif isinstance(stop, list):
        stops = [x for x in stop if isinstance(x, str) and x]
    else:
        return step
    cuts = [i for i in (step.text.find(x) for x in stops) if i >= 0]
    if not cuts:
        return step
    return step.model_copy(update={"text": step.text[:min(cuts)], "finish_reason": "stop"})


#: a per-request token map: the request body in, `{"$token": "value"}` out (`ScriptedServer(tokens=…)`)
Tokens = Callable[[dict[str, Any]], dict[str, str]]


def _replace_tokens(value: Any, tokens: dict[str, str]) -> Any:
    if isinstance(value, str):
        for k, v in tokens.items():
            value = value.replace(k, v)
        return value
    if isinstance(value, list):
        return [_replace_tokens(x, tokens) for x in value]
    if isinstance(value, dict):
        return {k: _replace_tokens(x, tokens) for k, x in value.items()}
    return value


def substitute_tokens(step: Step, tokens: dict[str, str]) -> Step:
    """The step with each token in its tool calls' arguments replaced: in the string values of object
    arguments, and inside raw-string arguments (the value JSON-escaped, as it sits in a JSON string)."""
    if not tokens or not step.tool_calls:
        return step
    escaped = {k: json.dumps(v)[1:-1] for k, v in tokens.items()}
    calls = [c.model_copy(update={"arguments": _replace_tokens(c.arguments, tokens) if isinstance(c.arguments, dict)
                                  else _replace_tokens(c.arguments, escaped)}) for c in step.tool_calls]
    return step.model_copy(update={"tool_calls": calls})


async def _openai_sse(request: web.Request, reply: dict[str, Any]) -> web.StreamResponse:
    """A Chat Completions reply as server-sent events: one chunk with the role (+ reasoning, +
    content), one per tool call (id, name and complete arguments), one with the finish reason,
    then `[DONE]` — the framing the golden-wire recordings used."""
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await resp.prepare(request)
    choice = reply["choices"][0]
    msg = choice["message"]
    base = {"id": reply["id"], "object": "chat.completion.chunk", "created": reply["created"],
            "model": reply["model"]}

    async def send(delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> None:
        chunk: dict[str, Any] = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if usage is not None:
            chunk["usage"] = usage
        await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")

    first: dict[str, Any] = {"role": "assistant"}
    if msg.get("reasoning_content"):
        first["reasoning_content"] = msg["reasoning_content"]
    if msg.get("content"):
        first["content"] = msg["content"]
    await send(first)
    for i, call in enumerate(msg.get("tool_calls") or []):
        await send({"tool_calls": [{"index": i, **call}]})
    await send({}, choice["finish_reason"], reply.get("usage"))
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp


_READERS = {"openai": _openai_info, "anthropic": _anthropic_info, "google": _google_info,
            "responses": _responses_info}


def _malformed(step: Step, wire: str, model: str) -> web.Response:
    """A 200 reply a client cannot use (`fault: malformed`), in the shape each wire's reply has."""
    if step.malformed == "not_json":
        return web.Response(body=b"<html><body>upstream error</body></html>", content_type="application/json")
    if step.malformed == "not_utf8":
        return web.Response(body=b'{"id": "x", "choices": "' + bytes([0xFF, 0xFE, 0xFA]) + b'"}',
                            content_type="application/json")
    text: Any = 12345 if step.malformed == "number_content" else None
    if wire == "openai":
        reply: dict[str, Any] = {"id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()),
                                 "model": model, "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                                 "choices": [] if text is None else
                                 [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
    elif wire == "responses":  # a hosted-interpreter run whose outputs are a number, or no output at all
        reply = {"id": "resp_scripted", "object": "response", "created_at": int(time.time()), "status": "completed",
                 "model": model, "output": [] if text is None else
                 [{"type": "code_interpreter_call", "id": "ci_scripted_1", "code": "print(1)", "outputs": text,
                   "container_id": "cntr_scripted", "status": "completed"},
                  {"type": "message", "id": "msg_scripted", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                 "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}
    elif wire == "anthropic":
        reply = {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
                 "content": [] if text is None else [{"type": "text", "text": text}], "stop_reason": "end_turn",
                 "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    else:
        reply = {"candidates": [] if text is None else [{"content": {"role": "model", "parts": [{"text": text}]},
                                                         "finishReason": "STOP"}],
                 "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1}, "modelVersion": model}
    return web.Response(body=orjson.dumps(reply), content_type="application/json")


_WRITERS = {"openai": _openai_reply, "anthropic": _anthropic_reply, "google": _google_reply,
            "responses": _responses_reply}


class ScriptedServer:
    """Serves `script` on 127.0.0.1 from a background thread. `start()` returns the base URL."""

    def __init__(self, script: Script, host: str = "127.0.0.1", port: int = 0, record: bool = True,
                 subprocess: bool = False, tokens: Tokens | None = None) -> None:
        """`subprocess=True` serves from a child process instead of a thread: use it for throughput
        measurements (a server thread competes with the client for the GIL); `requests` stays empty.
        `tokens`: resolves script tokens from each request (e.g. `$input` = the image path its tool
        description names), so one script plays against harnesses that name things differently."""
        self.script = script
        self.tokens = tokens
        self.subprocess = subprocess
        self._proc: sp.Popen[str] | None = None
        self._script_file: Path | None = None
        self.player = Player(script)
        self.host = host
        self.port = port
        self.record = record
        self.requests: list[RecordedRequest] = []
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        # what a `capacity` limit did (read by tests): requests in service now, the most at once, refused
        self.inflight = 0
        self.peak_inflight = 0
        self.rejected = 0
        self._room: asyncio.Semaphore | None = None
        self.batches = Batches(self)  # the batch endpoints' state (scripted/batches.py)
        #: the simulated prompt cache (`Script.prompt_cache`; prompt_cache.py)
        self.prompt_cache = PromptCache() if script.prompt_cache else None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    def app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._openai)
        app.router.add_post("/chat/completions", self._openai)
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_post("/v1beta/models/{model}:generateContent", self._google)
        app.router.add_post("/v1/models/{model}:generateContent", self._google)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/v1beta/models", self._models)
        for provider in (batch_openai, batch_anthropic, batch_google):  # the batch endpoints (scripted/batches.py)
            provider.register(app, self.batches)
        return app

    async def _models(self, request: web.Request) -> web.StreamResponse:
        """The models listing (what providers probe an endpoint with): it plays the next step of the
        request's key like a chat request — a fault step answers with its error, anything else with
        a one-model listing (readable by the OpenAI, Anthropic and Gemini SDKs)."""
        wire = "google" if request.path.startswith("/v1beta") else "openai"
        key = header_task(request.headers.get(TASK_HEADER))
        step = self.player.next_step(key, 0)
        if self.record:
            self.requests.append(RecordedRequest(wire=wire, path=request.path, headers=dict(request.headers), body={},
                                                 task=key, step=step.model_dump(exclude_defaults=True),
                                                 received=time.time()))
        if step.fault == "drop":
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError
        if step.fault == "status":
            headers = {"Retry-After": f"{step.retry_after:g}"} if step.retry_after is not None else None
            return web.json_response(_error_body(wire, step.status), status=step.status, headers=headers)
        model = {"id": "scripted", "object": "model", "type": "model", "created": 0, "owned_by": "toolsight",
                 "display_name": "scripted", "created_at": "1970-01-01T00:00:00Z", "name": "models/scripted"}
        return web.json_response({"object": "list", "data": [model], "models": [model], "has_more": False,
                                  "first_id": "scripted", "last_id": "scripted"})

    async def _openai(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, "openai")

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, "responses")

    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, "anthropic")

    async def _google(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, "google")

    async def _handle(self, request: web.Request, wire: str) -> web.StreamResponse:
        received = time.time()  # on arrival, before any queueing (start-up measurements)
        cap = self.script.capacity
        if cap is None:
            return await self._serve_one(request, wire, received)
        if cap.over == "reject" and self.inflight >= cap.concurrency:
            self.rejected += 1
            headers = {"Retry-After": f"{cap.retry_after:g}"} if cap.retry_after is not None else None
            return web.json_response(_error_body(wire, cap.status), status=cap.status, headers=headers)
        if self._room is None:
            self._room = asyncio.Semaphore(cap.concurrency)
        async with self._room:  # over: queue waits here; over: reject never does (checked above)
            self.inflight += 1
            self.peak_inflight = max(self.peak_inflight, self.inflight)
            try:
                await asyncio.sleep(cap.seconds)
                return await self._serve_one(request, wire, received)
            finally:
                self.inflight -= 1

    async def _serve_one(self, request: web.Request, wire: str, received: float) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = orjson.loads(raw)  # ~10x faster than json on bodies full of base64 images
        except orjson.JSONDecodeError:
            try:
                body = json.loads(raw)  # what only `json` reads (NaN, integers beyond 64 bits)
            except json.JSONDecodeError:
                return web.json_response(_error_body(wire, 400), status=400)
        first_text, tool_results = _READERS[wire](body)
        # an explicit [task:ID] in the prompt wins; else the task id the runner sends in the header
        key = task_key(first_text) or header_task(request.headers.get(TASK_HEADER))
        step = self.player.next_step(key, tool_results)
        if self.record:
            self.requests.append(RecordedRequest(wire=wire, path=request.path, headers=dict(request.headers),
                                                 body=body, task=key, step=step.model_dump(exclude_defaults=True),
                                                 received=received, batch=request.headers.get(BATCH_HEADER)))
        if step.fault == "stall" or step.seconds > 0:
            await asyncio.sleep(step.seconds)
        if step.fault == "drop":
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError  # nothing more to write on a dead connection
        if step.fault == "status":
            headers = {"Retry-After": f"{step.retry_after:g}"} if step.retry_after is not None else None
            return web.json_response(_error_body(wire, step.status), status=step.status, headers=headers)
        model = str(body.get("model") or request.match_info.get("model") or "scripted")
        if step.fault == "malformed":
            return _malformed(step, wire, model)
        if self.tokens is not None:
            step = substitute_tokens(step, self.tokens(body))
        step = _substitute_prev(step, body)
        if wire == "openai":
            step = _apply_stop(step, body.get("stop"))
        ids = [c.id or self.player.new_call_id() for c in step.tool_calls]
        usage = _usage(step, body, wire, model)
        cache = self.prompt_cache.use(body, wire, model, usage[0]) if self.prompt_cache is not None else CacheUse()
        reply = _WRITERS[wire](step, model, usage, ids, cache)
        if wire == "openai" and body.get("stream") is True:
            asked = bool((body.get("stream_options") or {}).get("include_usage"))
            if self.script.stream_usage == "requested" and not asked:
                reply = {k: v for k, v in reply.items() if k != "usage"}
            return await _openai_sse(request, reply)
        return web.Response(body=orjson.dumps(reply), content_type="application/json")

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> str:
        if self._thread is not None or self._proc is not None:
            return self.base_url
        if self.subprocess:
            return self._start_process()
        self._thread = threading.Thread(target=self._serve, name="scripted-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise ConfigurationError(f"scripted server could not start on {self.host}:{self.port}: {self._error}")
        return self.base_url

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._setup())
        except OSError as exc:
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            if self._runner is not None:
                loop.run_until_complete(self._runner.cleanup())
            loop.close()

    async def _setup(self) -> None:
        runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=True, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, backlog=1024)
        await site.start()
        self._runner = runner
        sockets: Any = getattr(site._server, "sockets", None)
        if sockets:
            self.port = int(sockets[0].getsockname()[1])

    def _start_process(self) -> str:
        fd, name = tempfile.mkstemp(prefix="toolsight-script-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(self.script.model_dump_json(exclude_defaults=True))
        self._script_file = Path(name)
        self._proc = sp.Popen(
            [sys.executable, "-m", "toolsight.models.scripted.server", "--script", name, "--host", self.host,
             "--port", str(self.port)],
            stdout=sp.PIPE, stderr=sp.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        m = re.search(r"http://[^:\s]+:(\d+)", line)
        if m is None:
            err = self._proc.stderr.read() if self._proc.stderr is not None else ""
            self.stop()
            raise ConfigurationError(f"scripted server process did not start: {line.strip()} {err.strip()}")
        self.port = int(m.group(1))
        return self.base_url

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except sp.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
            if self._script_file is not None:
                self._script_file.unlink(missing_ok=True)
            return
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._thread = None

    def __enter__(self) -> ScriptedServer:
        self.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m toolsight.models.scripted.server",
                                 description="Serve a script in the OpenAI, Anthropic and Gemini wire formats.")
    ap.add_argument("--script", type=Path, help="JSON script file (default: always answer 'hello')")
    ap.add_argument("--port", type=int, default=8765, help="0 picks a free port (printed on start)")
    ap.add_argument("--host", default="127.0.0.1")
    a = ap.parse_args(argv)
    try:
        script = Script.load(a.script) if a.script else Script.answer("hello")
    except ConfigurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    srv = ScriptedServer(script, host=a.host, port=a.port, record=False)
    try:
        srv.start()
    except ConfigurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"scripted server on {srv.base_url}  (OpenAI base URL: {srv.openai_base_url}); Ctrl-C stops it",
          flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
