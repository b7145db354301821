"""Anthropic specifics of the batch client: the tag inside the request ids, the ids it accepts, the
results as the SDK streams them, and bodies that cannot be batched."""

from __future__ import annotations

import asyncio

import pytest
from anthropic import AsyncAnthropic
from batchkit import CONFIG, items, make_model, prompts, three_tasks, until_over

from toolsight.models.base import ConfigurationError, Message
from toolsight.models.batch.anthropic import AnthropicBatchAPI, tag_prefix
from toolsight.models.batch.base import BatchItem
from toolsight.models.scripted import ScriptedServer


def test_the_request_ids_carry_the_tag_and_the_sdk_reads_every_kind_of_result() -> None:
    async def go(srv: ScriptedServer) -> tuple[list[str], list[tuple[str, str]], list[str]]:
        model = make_model("anthropic", srv)
        api = model.batch_api()
        sdk = AsyncAnthropic(api_key="k", base_url=srv.base_url, max_retries=0)
        assert api is not None
        try:
            bid = await api.submit(items(model, prompts("a", "b", "c")), tag="run7-0003")
            await until_over(api, bid)
            raw = [(r.custom_id, str(r.result.type)) async for r in await sdk.messages.batches.results(bid)]
            listed = [b.id async for b in sdk.messages.batches.list(limit=1)]
            return [bid], raw, listed
        finally:
            await api.aclose()
            await sdk.close()

    # b fails, and the batch expires after two items: succeeded, errored and expired in one file
    with ScriptedServer(three_tasks(fail=["b"], expire_after=2)) as srv:
        ids, raw, listed = asyncio.run(go(srv))
    p = tag_prefix("run7-0003")
    assert raw == [(f"{p}_a", "succeeded"), (f"{p}_b", "errored"), (f"{p}_c", "expired")]
    assert listed == ids


def test_ids_that_leave_no_room_for_the_tag_are_refused_before_anything_is_sent() -> None:
    async def go(srv: ScriptedServer) -> str:
        api = AnthropicBatchAPI("anthropic/test-model", api_key="k", base_url=srv.base_url)
        body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
        try:
            with pytest.raises(ValueError) as caught:
                await api.submit([BatchItem(custom_id="task/1", body=body), BatchItem(custom_id="x" * 50, body=body)],
                                 tag="t")
            return str(caught.value)
        finally:
            await api.aclose()

    with ScriptedServer(three_tasks()) as srv:
        message = asyncio.run(go(srv))
        assert not srv.batches.batches
    assert "task/1" in message and "x" * 50 in message and "1-49 characters" in message


def test_a_streaming_request_cannot_be_batched() -> None:
    with ScriptedServer(three_tasks()) as srv:
        model = make_model("anthropic", srv)
        with pytest.raises(ConfigurationError, match="without batching"):
            model.batch_body([Message.user("hi")], [], CONFIG.model_copy(update={"extra_body": {"stream": True}}))
