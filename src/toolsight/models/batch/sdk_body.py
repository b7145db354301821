"""The JSON body the OpenAI SDK sends for a raw `chat.completions.create(**kwargs)` call, as a batch item
carries it: official loops that build their own SDK arguments (VTC-Bench's, the agent frameworks')
hand this to batch mode (`RawBatch`, docs/batch.md) so a batched request is the on-line one."""

from __future__ import annotations

from typing import Any

#: `create(**kwargs)` arguments the OpenAI SDK does not put in the JSON body
NOT_BODY = ("extra_body", "extra_headers", "extra_query", "timeout")


def chat_batch_body(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The JSON body the OpenAI SDK sends for `chat.completions.create(**kwargs)` (`extra_body` merged at
    top level, as the SDK merges it), without `stream`/`stream_options` (a batch item cannot stream)."""
    body = {k: v for k, v in kwargs.items() if k not in NOT_BODY}
    body.update(kwargs.get("extra_body") or {})
    body.pop("stream", None)
    body.pop("stream_options", None)
    return body
