"""The batch form of VTC-Bench's official request (docs/batch.md): the driver streams its Chat
Completions call, a batch item cannot, so in batch mode the loop sends the same body without
`stream`/`stream_options` (`toolsight.models.batch.sdk_body.chat_batch_body`) and turns the `chat.completion` reply into the one chunk `accumulate`
reads — the loop's code after the call is the same for both."""

from __future__ import annotations

from typing import Any


def reply_to_chunks(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """A `chat.completion` reply as the one streamed chunk that carries all of it: `choices[0].delta`
    holds the message's role, content, reasoning and tool calls (each with its `index`), beside the
    choice's `finish_reason` and the reply's `usage` (what `chat_completions_raw` returns when streaming)."""
    choices = []
    for i, choice in enumerate(reply.get("choices") or []):
        msg = choice.get("message") or {}
        delta: dict[str, Any] = {"role": msg.get("role") or "assistant", "content": msg.get("content")}
        if msg.get("reasoning_content") is not None:
            delta["reasoning_content"] = msg["reasoning_content"]
        if msg.get("tool_calls"):
            delta["tool_calls"] = [{**tc, "index": n} for n, tc in enumerate(msg["tool_calls"])]
        choices.append({"index": choice.get("index", i), "delta": delta, "finish_reason": choice.get("finish_reason")})
    chunk: dict[str, Any] = {"id": reply.get("id"), "object": "chat.completion.chunk", "created": reply.get("created"),
                             "model": reply.get("model"), "choices": choices}
    if reply.get("usage") is not None:
        chunk["usage"] = reply["usage"]
    return [chunk]
