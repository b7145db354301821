"""The batch form of VTC-Bench's official request (`vtc_bench.batch_form`), against the real OpenAI SDK
and toolsight's scripted server: the body the SDK sends minus `stream`/`stream_options` is
`batch_body(kwargs)`, and a non-streamed reply turned into one chunk reads (`accumulate`) exactly as
the same reply streamed does — content, reasoning, tool calls, finish reason, usage."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolsight.benchmarks.vtc_bench.batch_form import reply_to_chunks
from toolsight.benchmarks.vtc_bench.qwen import MalformedFunctionCall, QMsg, accumulate
from toolsight.models.batch.sdk_body import chat_batch_body as batch_body
from toolsight.models.openai_provider import OpenAIModel, raw_chat_usage
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script

STEP: dict[str, Any] = {
    "reasoning": "Two discs on the left, three on the right.",
    "text": "Let me look closer.",
    "tool_calls": [{"name": "opencv_crop", "arguments": {"image": "a.jpg", "param": {"x": 1}}},
                   {"name": "opencv_threshold", "arguments": {"image": "a.jpg"}}],
    "input_tokens": 321, "output_tokens": 45,
}


def kwargs(stream: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "How many discs?"}],
                           "temperature": 0.0, "max_tokens": 512,
                           "tools": [{"type": "function", "function": {"name": "opencv_crop", "parameters": {}}}],
                           "extra_body": {"top_k": 20, "repetition_penalty": 1.05}}
    if stream:
        out.update(stream=True, stream_options={"include_usage": True}, extra_headers={"X-Test": "1"})
    return out


def both(steps: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(streamed chunks, the non-streamed reply, the bodies the server got) for the same step twice."""
    with ScriptedServer(Script.model_validate({"steps": steps})) as srv:
        model = get_model("openai/gpt-4.1", base_url=srv.openai_base_url)
        assert isinstance(model, OpenAIModel)

        async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            return await model.chat_completions_raw(kwargs(True), 30), await model.chat_completions_raw(kwargs(False), 30)

        streamed, whole = asyncio.run(go())
        bodies = [r.body for r in srv.requests]
    assert len(whole) == 1 and whole[0]["object"] == "chat.completion"
    return streamed, whole, bodies


def no_ids(msgs: list[QMsg]) -> list[tuple[Any, ...]]:
    """The messages without their tool-call ids (the server numbers each reply's calls afresh)."""
    return [(m.role, m.content, m.reasoning_content, m.function_call, bool(m.tool_call_id)) for m in msgs]


def test_the_batch_body_is_the_sdk_body_without_stream() -> None:
    _, _, (sent_streamed, sent_whole) = both([STEP, STEP])
    assert sent_streamed["stream"] is True and "stream_options" in sent_streamed and "extra_body" not in sent_streamed
    body = batch_body(kwargs(True))
    assert body == {k: v for k, v in sent_streamed.items() if k not in ("stream", "stream_options")}
    assert body == sent_whole
    assert body["top_k"] == 20 and "extra_headers" not in body


def test_one_chunk_reads_as_the_stream_reads() -> None:
    streamed, whole, _ = both([STEP, STEP])
    chunks = reply_to_chunks(whole[0])
    assert len(chunks) == 1
    choice = chunks[0]["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert [tc["index"] for tc in choice["delta"]["tool_calls"]] == [0, 1]
    got = accumulate(chunks)
    assert no_ids(got) == no_ids(accumulate(streamed))
    assert [m.reasoning_content for m in got if m.reasoning_content] == [STEP["reasoning"]]
    assert [m.content for m in got if m.content] == [STEP["text"]]
    calls = [m.function_call for m in got if m.function_call]
    assert calls == [("opencv_crop", '{"image": "a.jpg", "param": {"x": 1}}'), ("opencv_threshold", '{"image": "a.jpg"}')]
    assert all(m.tool_call_id and m.extra == {"function_id": m.tool_call_id} for m in got if m.function_call)
    assert raw_chat_usage(chunks) == raw_chat_usage(streamed)
    used = raw_chat_usage(chunks)
    assert used is not None and (used.input_tokens, used.output_tokens) == (321, 45)


def test_a_plain_answer_and_its_finish_reason() -> None:
    step = {"text": "<answer>B</answer>", "finish_reason": "length"}
    streamed, whole, _ = both([step, step])
    chunks = reply_to_chunks(whole[0])
    assert chunks[0]["choices"][0]["finish_reason"] == "length"
    assert accumulate(chunks) == accumulate(streamed) == [QMsg(role="assistant", content="<answer>B</answer>")]


def test_a_malformed_function_call_is_still_seen() -> None:
    reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "malformed_function_call"}]}
    with pytest.raises(MalformedFunctionCall):
        accumulate(reply_to_chunks(reply))
    assert raw_chat_usage(reply_to_chunks(reply)) is None  # a reply without usage stays without
