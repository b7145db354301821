"""`TaskCalls.call_raw(..., batch=RawBatch(body, parse))`: a raw call an official loop built itself goes
through the run's batch collector in batch mode (the OpenAI SDK against the scripted server's batch
endpoints), logged with its usage and `batch=True`; without the batch form it stays on-line and is
counted as not batchable, and outside a task scope or outside batch mode nothing changes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from toolsight.calls.batch_journal import BATCHES, BatchJournal
from toolsight.calls.batching import BatchCollector, BatchRoute, BatchTuning, batch_scope, open_route
from toolsight.calls.retry import ModelCaller
from toolsight.calls.task import RawBatch, TaskCalls
from toolsight.models.base import ModelError
from toolsight.models.openai_provider import OpenAIModel, raw_chat_usage
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script

FAST = BatchTuning(idle_s=0.05, poll_s=0.01, poll_max_s=0.02)
BODY: dict[str, Any] = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Which colour?"}]}


def calls(srv: ScriptedServer, run_dir: Path, batch_mode: bool = True) -> tuple[ModelCaller, TaskCalls, OpenAIModel]:
    model = get_model("openai/gpt-4.1", base_url=srv.openai_base_url)
    assert isinstance(model, OpenAIModel)
    caller = ModelCaller(model, retries=0)
    if batch_mode:
        caller.batch = open_route(model, BatchJournal(run_dir / BATCHES), FAST, "m")
    return caller, TaskCalls(caller, caller), model


def ask(tc: TaskCalls, model: OpenAIModel, batched: bool, scope: str | None = "t1") -> dict[str, Any]:
    """One raw call (non-streamed, so both routes return a reply dict), with or without its batch form."""
    async def once() -> list[dict[str, Any]]:
        return await model.chat_completions_raw(BODY, 30)

    async def go() -> dict[str, Any]:
        form = RawBatch(BODY, lambda reply: [{**reply, "via": "batch"}]) if batched else None
        if scope is None:
            out = await tc.call_raw(once, raw_chat_usage, request=BODY, batch=form)
        else:
            with batch_scope(scope):
                out = await tc.call_raw(once, raw_chat_usage, request=BODY, batch=form)
        if tc.caller is not None and tc.caller.batch is not None:
            await tc.caller.batch.collector.aclose()
        return out[0]

    return asyncio.run(go())


SCRIPT = Script.model_validate({"steps": [{"text": "red", "input_tokens": 70, "output_tokens": 2}], "batch": {}})


def test_the_batch_form_goes_through_the_collector(tmp_path: Path) -> None:
    with ScriptedServer(SCRIPT) as srv:
        caller, tc, model = calls(srv, tmp_path)
        reply = ask(tc, model, batched=True)
        sent = list(srv.requests)
    assert reply["via"] == "batch" and reply["choices"][0]["message"]["content"] == "red"
    assert [q.batch is not None for q in sent if q.path.endswith("/chat/completions")] == [True]
    assert len(srv.batches.batches) == 1
    assert caller.batch is not None
    assert (caller.batch.stats.batched, caller.batch.stats.unbatchable) == (1, 0)
    rec = tc.log[0]
    assert rec.batch and (rec.input_tokens, rec.output_tokens, rec.usage_missing) == (70, 2, False)


def test_without_the_batch_form_the_call_is_on_line_and_counted(tmp_path: Path) -> None:
    with ScriptedServer(SCRIPT) as srv:
        caller, tc, model = calls(srv, tmp_path)
        reply = ask(tc, model, batched=False)
        sent = list(srv.requests)
    assert "via" not in reply
    assert [q.batch for q in sent] == [None] and not srv.batches.batches
    assert caller.batch is not None
    assert (caller.batch.stats.batched, caller.batch.stats.unbatchable) == (0, 1)
    assert not tc.log[0].batch and tc.log[0].input_tokens == 70


def test_outside_a_task_scope_or_batch_mode_it_is_on_line(tmp_path: Path) -> None:
    with ScriptedServer(SCRIPT) as srv:
        caller, tc, model = calls(srv, tmp_path)
        assert "via" not in ask(tc, model, batched=True, scope=None)
        _, plain, model2 = calls(srv, tmp_path / "x", batch_mode=False)
        assert "via" not in ask(plain, model2, batched=True)
        sent = list(srv.requests)
    assert [q.batch for q in sent] == [None, None] and not srv.batches.batches
    assert caller.batch is not None
    assert (caller.batch.stats.batched, caller.batch.stats.unbatchable) == (0, 0)
    assert [r.batch for r in tc.log + plain.log] == [False, False]


def test_a_batch_reply_its_parse_refuses_goes_on_line(tmp_path: Path) -> None:
    """A reply the on-line call would refuse (`parse` raises a ModelError): the call goes on-line,
    counted as a fallback, not as batched."""
    def refuse(reply: dict[str, Any]) -> list[dict[str, Any]]:
        raise ModelError("malformed reply (choices: missing)", retryable=True)

    with ScriptedServer(SCRIPT) as srv:
        caller, tc, model = calls(srv, tmp_path)

        async def go() -> list[dict[str, Any]]:
            async def once() -> list[dict[str, Any]]:
                return await model.chat_completions_raw(BODY, 30)

            with batch_scope("t1"):
                out = await tc.call_raw(once, raw_chat_usage, request=BODY, batch=RawBatch(BODY, refuse))
            assert caller.batch is not None
            await caller.batch.aclose()
            return out

        reply = asyncio.run(go())[0]
        sent = [q.batch is not None for q in srv.requests if q.path.endswith("/chat/completions")]
    assert reply["choices"][0]["message"]["content"] == "red"
    assert sent == [True, False]  # asked in the batch, then on-line
    assert caller.batch is not None
    assert (caller.batch.stats.batched, caller.batch.stats.fallbacks) == (0, 1)
    assert not tc.log[0].batch and tc.log[0].input_tokens == 70


def test_another_endpoint_goes_in_a_batch_of_its_own(tmp_path: Path) -> None:
    """A raw call for `/v1/responses` beside a Chat Completions one in the same task: two batches, one
    per endpoint (a provider batch takes one endpoint), both counted for the model."""
    script = Script.model_validate({"steps": [{"text": "red", "input_tokens": 70, "output_tokens": 2}], "batch": {}})
    responses_body: dict[str, Any] = {"model": "gpt-4.1", "input": "Which colour?"}
    with ScriptedServer(script) as srv:
        caller, tc, model = calls(srv, tmp_path)

        async def go() -> tuple[Any, Any]:
            async def chat() -> list[dict[str, Any]]:
                return await model.chat_completions_raw(BODY, 30)

            async def responses() -> dict[str, Any]:
                return await model.responses_raw(responses_body, 30)

            with batch_scope("t1"):
                got = await asyncio.gather(
                    tc.call_raw(chat, raw_chat_usage, batch=RawBatch(BODY, lambda r: [r])),
                    tc.call_raw(responses, None, batch=RawBatch(responses_body, lambda r: r, endpoint="/v1/responses")))
            assert caller.batch is not None
            await caller.batch.aclose()
            return got

        chat_reply, resp_reply = asyncio.run(go())
        batches = sorted(srv.batches.batches.values(), key=lambda b: str(b.extra["endpoint"]))
        online = [q for q in srv.requests if q.batch is None and q.path.endswith(("/chat/completions", "/responses"))]
    assert [(b.extra["endpoint"], [i.path for i in b.items]) for b in batches] == [
        ("/v1/chat/completions", ["/v1/chat/completions"]), ("/v1/responses", ["/v1/responses"])]
    assert not online
    assert chat_reply[0]["choices"][0]["message"]["content"] == "red" and resp_reply["object"] == "response"
    assert caller.batch is not None
    assert (caller.batch.stats.batched, caller.batch.stats.submitted, caller.batch.stats.fallbacks) == (2, 2, 0)
    ids = sorted(i.custom_id for b in batches for i in b.items)
    assert ids[0].startswith("m-") and ids[1].startswith("m_responses-")


def test_a_provider_with_one_batch_endpoint_refuses_another(tmp_path: Path) -> None:
    """Anthropic's Message Batches take one kind of request: a raw call for another endpoint stops the run
    with one message instead of being sent somewhere it cannot go."""
    from toolsight.errors import RunAborted
    from toolsight.models.batch.anthropic import AnthropicBatchAPI

    api = AnthropicBatchAPI("anthropic/claude", api_key="k", base_url="http://127.0.0.1:9")
    with pytest.raises(ValueError, match="one kind of request"):
        api.for_endpoint("/v1/responses")
    route = BatchRoute(get_model("openai/gpt-4.1", base_url="http://127.0.0.1:9"),
                       BatchCollector(api, BatchJournal(tmp_path / BATCHES), FAST))

    async def go() -> None:
        with batch_scope("t1"):
            await route.raw({"x": 1}, lambda reply: reply, endpoint="/v1/responses")

    with pytest.raises(RunAborted, match=r"batch mode: .*one kind of request"):
        asyncio.run(go())
