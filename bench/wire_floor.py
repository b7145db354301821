"""The floor for bench/engine.py: bare HTTP clients that drive the same conversations toolsight does.

One client per wire format (OpenAI Chat Completions, Anthropic Messages, Gemini generateContent).
Each task sends the system prompt, the user turn with the 64x64 PNG, and the crop tool's schema;
every reply with a tool call is answered with the exact tool message toolsight sends (the crop's
text and the cropped PNG, re-sent in every later request), until the reply has no tool call. The
bodies are byte-for-byte what toolsight's adapters send (`engine.py` checks this on one task
before it measures): only the work a client cannot avoid is left — build the body, json.dumps it,
POST it over a pooled keep-alive connection, json.loads the reply. The crop itself is computed once,
before the clock starts: the floor does no tool work.

Transport: `httpx2` (the transport inside the openai and anthropic SDKs) or `aiohttp` (the one
google-genai uses).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SYSTEM = (
    "You are a careful visual reasoning assistant. Look at the image(s) and answer the question. "
    "You may call the tools you are given to inspect or transform the image; you will see the images "
    "they produce. Put your final answer inside <answer></answer> tags, e.g. <answer>B</answer>."
)
CROP_ARGS: dict[str, Any] = {"image": "img.png", "bbox": [0, 0, 0.5, 0.5]}
FEEDBACK = "Here are the images produced by tool call {call_id}."

PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages",
         "google": "/v1beta/models/m:generateContent"}
HEADERS = {
    "openai": {"authorization": "Bearer k", "content-type": "application/json"},
    "anthropic": {"x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json"},
    "google": {"x-goog-api-key": "k", "content-type": "application/json"},
}


@dataclass(frozen=True)
class Conversation:
    """What every task of the benchmark dataset sends: the image, the crop result, the tool schema."""

    image_b64: str
    crop_b64: str
    tool_text: str  # the crop's result as the model reads it (images inside the tool result)
    tool_text_user: str  # the same when the image follows in a user message (openai, google)
    crop_schema: dict[str, Any]
    crop_description: str
    #: the headers toolsight's adapter sends (taken from a recorded request), so that the floor's
    #: requests are toolsight's requests; empty: a minimal set
    headers: list[tuple[str, str]] = field(default_factory=list)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)))

    @classmethod
    def load(cls, path: Path) -> Conversation:
        """Read back what `save` wrote (the floor's child process imports neither OpenCV nor toolsight)."""
        data = json.loads(path.read_text())
        data["headers"] = [tuple(h) for h in data.get("headers", [])]
        return cls(**data)

    @classmethod
    def for_image(cls, png: Path) -> Conversation:
        import cv2

        data = png.read_bytes()
        arr = cv2.imread(str(png), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
        h, w = arr.shape[:2]
        x2, y2 = round(0.5 * w), round(0.5 * h)
        ok, buf = cv2.imencode(".png", arr[0:y2, 0:x2], [cv2.IMWRITE_PNG_COMPRESSION, 1])
        assert ok
        crop = buf.tobytes()
        in_id = "img-" + hashlib.sha256(data).hexdigest()[:12]
        out_id = "img-" + hashlib.sha256(crop).hexdigest()[:12]
        text = f"Cropped {in_id} to box [0, 0, {x2}, {y2}] (pixels).\nProduced image(s): {out_id} ({x2}x{y2})"
        from toolsight.tools.crop import crop as crop_tool  # the schema only, taken once

        return cls(
            image_b64=base64.b64encode(data).decode(), crop_b64=base64.b64encode(crop).decode(),
            tool_text=text, tool_text_user=f"{text}\n[image(s) {out_id} attached in the next user message]",
            crop_schema=crop_tool.parameters, crop_description=crop_tool.description,
        )


# --- one task's conversation per wire format --------------------------------------------------------
# Each `start_*` returns the first body; each `step_*` reads a reply, appends to the body's history
# and returns False when the reply has no tool call (the task is done).

def start_openai(c: Conversation, prompt: str) -> dict[str, Any]:
    return {"model": "m", "messages": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + c.image_b64, "detail": "auto"}},
            {"type": "text", "text": prompt}]},
    ], "tools": [{"type": "function", "function": {"name": "crop", "description": c.crop_description,
                                                   "parameters": c.crop_schema}}]}


def step_openai(c: Conversation, body: dict[str, Any], reply: dict[str, Any]) -> bool:
    msg = reply["choices"][0]["message"]
    calls = msg.get("tool_calls") or []
    if not calls:
        return False
    msgs = body["messages"]
    msgs.append({"role": "assistant", "content": msg.get("content"), "tool_calls": [
        {"id": k["id"], "type": "function", "function": {"name": k["function"]["name"],
                                                         "arguments": k["function"]["arguments"]}}
        for k in calls]})
    for k in calls:
        msgs.append({"role": "tool", "tool_call_id": k["id"], "content": c.tool_text_user})
    for k in calls:
        msgs.append({"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + c.crop_b64, "detail": "auto"}},
            {"type": "text", "text": FEEDBACK.format(call_id=k["id"])}]})
    return True


def start_anthropic(c: Conversation, prompt: str) -> dict[str, Any]:
    return {"max_tokens": 4096, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": c.image_b64}},
        {"type": "text", "text": prompt}]}],
        "model": "m", "system": SYSTEM,
        "tools": [{"name": "crop", "description": c.crop_description, "input_schema": c.crop_schema}]}


def step_anthropic(c: Conversation, body: dict[str, Any], reply: dict[str, Any]) -> bool:
    uses = [b for b in reply["content"] if b.get("type") == "tool_use"]
    if not uses:
        return False
    body["messages"].append({"role": "assistant", "content": [
        {"type": "tool_use", "id": b["id"], "name": b["name"], "input": b["input"]} for b in uses]})
    body["messages"].append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": b["id"], "content": [
            {"type": "text", "text": c.tool_text},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": c.crop_b64}}]}
        for b in uses]})
    return True


def start_google(c: Conversation, prompt: str) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": c.image_b64}}, {"text": prompt}]}],
        "systemInstruction": {"parts": [{"text": SYSTEM}], "role": "user"}, "generationConfig": {},
        "tools": [{"functionDeclarations": [{"name": "crop", "description": c.crop_description,
                                             "parametersJsonSchema": c.crop_schema}]}]}


def step_google(c: Conversation, body: dict[str, Any], reply: dict[str, Any]) -> bool:
    parts = reply["candidates"][0]["content"]["parts"]
    calls = [p for p in parts if "functionCall" in p]
    if not calls:
        return False
    body["contents"].append({"role": "model", "parts": calls})
    user: list[dict[str, Any]] = [
        {"functionResponse": {"id": p["functionCall"]["id"], "name": p["functionCall"]["name"],
                              "response": {"output": c.tool_text_user}}} for p in calls]
    for p in calls:
        user.append({"inlineData": {"mimeType": "image/png", "data": c.crop_b64}})
        user.append({"text": FEEDBACK.format(call_id=p["functionCall"]["id"])})
    body["contents"].append({"role": "user", "parts": user})
    return True


EPHEMERAL = {"type": "ephemeral"}


def cached_anthropic(body: dict[str, Any]) -> dict[str, Any]:
    """The body as toolsight's loop sends it to Anthropic, with prompt-cache breakpoints (docs/cost.md):
    on the system prompt and on the last block of the last two user messages (a copy: the next round's
    body must not keep this round's marks)."""
    msgs = list(body["messages"])
    for i in [i for i, m in enumerate(msgs) if m["role"] == "user" and m["content"]][-2:]:
        content = list(msgs[i]["content"])
        content[-1] = {**content[-1], "cache_control": EPHEMERAL}
        msgs[i] = {**msgs[i], "content": content}
    return {**body, "system": [{"type": "text", "text": body["system"], "cache_control": EPHEMERAL}],
            "messages": msgs}


#: what is sent for a conversation's body, where it differs from the body kept between rounds
VIEWS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"anthropic": cached_anthropic}

WIRES: dict[str, tuple[Callable[[Conversation, str], dict[str, Any]],
                       Callable[[Conversation, dict[str, Any], dict[str, Any]], bool]]] = {
    "openai": (start_openai, step_openai),
    "anthropic": (start_anthropic, step_anthropic),
    "google": (start_google, step_google),
}

Post = Callable[[bytes], Awaitable[bytes]]


def _compact(obj: Any) -> bytes:  # the openai and anthropic SDKs' encoding
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _default(obj: Any) -> bytes:  # google-genai's
    return json.dumps(obj).encode()


ENCODERS: dict[str, Callable[[Any], bytes]] = {"openai": _compact, "anthropic": _compact, "google": _default}


def _orjson(obj: Any) -> bytes:
    import orjson

    return orjson.dumps(obj)


async def run_tasks(wire: str, base_url: str, conv: Conversation, prompts: list[str], concurrency: int,
                    transport: str = "httpx2", bodies: list[dict[str, Any]] | None = None,
                    encoder: str = "sdk") -> int:
    """Run every prompt's task at `concurrency` tasks in flight; returns the number of model calls.
    `encoder`: "sdk" encodes bodies as the wire's SDK does (`json`), "orjson" as fast as Python can.
    `bodies` (for the equality check) collects a copy of every body sent."""
    start, step = WIRES[wire]
    encode = ENCODERS[wire] if encoder == "sdk" else _orjson
    view = VIEWS.get(wire, lambda body: body)
    url = base_url + PATHS[wire]
    headers = conv.headers or HEADERS[wire]
    calls = 0
    queue = list(reversed(prompts))

    async def drive(post: Post) -> None:
        nonlocal calls
        while queue:
            body = start(conv, queue.pop())
            while True:
                raw = encode(view(body))
                if bodies is not None:
                    bodies.append(json.loads(raw))
                reply = json.loads(await post(raw))
                calls += 1
                if not step(conv, body, reply):
                    break

    if transport == "aiohttp":
        import aiohttp

        conn = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=conn) as session:

            async def post_aiohttp(raw: bytes) -> bytes:
                async with session.post(url, data=raw, headers=headers) as r:
                    r.raise_for_status()
                    return await r.read()

            await asyncio.gather(*(drive(post_aiohttp) for _ in range(concurrency)))
        return calls
    import httpx2

    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx2.AsyncClient(limits=limits, timeout=120) as client:

        async def post_httpx2(raw: bytes) -> bytes:
            r = await client.post(url, content=raw, headers=headers)
            r.raise_for_status()
            return r.content

        await asyncio.gather(*(drive(post_httpx2) for _ in range(concurrency)))
    return calls
