"""Parsing details that the scripted server does not produce: the `reasoning` field some
OpenAI-compatible servers use, tool calls with finish reason "stop", and Retry-After forms."""

from __future__ import annotations

import email.utils
import time

import pytest
from openai.types.chat import ChatCompletion

from toolsight.models._common import retry_after_seconds
from toolsight.models.openai_provider import OpenAIModel


def _completion(message: dict[str, object], finish: str) -> ChatCompletion:
    return ChatCompletion.model_validate({
        "id": "x", "object": "chat.completion", "created": 0, "model": "served-model",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13,
                  "completion_tokens_details": {"reasoning_tokens": 3},
                  "prompt_tokens_details": {"cached_tokens": 2}},
    })


def test_openai_reasoning_field_tool_calls_after_stop_and_usage_details() -> None:
    model = OpenAIModel("openai/m", "m", base_url="http://127.0.0.1:9/v1")
    out = model.parse(_completion({
        "content": None, "reasoning": "look closer",
        "tool_calls": [{"id": "a", "type": "function", "function": {"name": "crop", "arguments": "{"}}],
    }, "stop"))
    assert out.message.reasoning == "look closer"
    assert out.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in out.tool_calls] == [("a", "crop", "{")]
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.reasoning_tokens,
            out.usage.cache_read_tokens) == (9, 4, 3, 2)
    assert out.model == "served-model"
    assert model.parse(_completion({"content": "cut"}, "length")).finish_reason == "length"


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"retry-after": "12"}) == 12
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert retry_after_seconds({"retry-after": when}) == pytest.approx(30, abs=2)


def test_tool_call_arguments_for_the_anthropic_and_gemini_wires_read_the_same_every_time() -> None:
    """`object_arguments` keeps what it decoded (every request re-sends the history): each string
    still gets its own object, a malformed or non-object one stays wrapped, and one past the kept
    length is decoded as before."""
    from toolsight.models import _common
    from toolsight.models._common import object_arguments

    long_text = "x" * (_common._ARGS_CACHE_CHARS + 10)
    cases = {'{"bbox": [0, 0, 1, 1]}': {"bbox": [0, 0, 1, 1]}, '{"bbox": [0, 0, 1, 2]}': {"bbox": [0, 0, 1, 2]},
             "{": {"_raw": "{"}, "[1, 2]": {"_raw": "[1, 2]"}, "  ": {},
             '{"t": "' + long_text + '"}': {"t": long_text}}
    for _ in range(2):  # the second round is served from what the first kept
        assert {raw: object_arguments(raw) for raw in cases} == cases
