"""OpenAI specifics of the batch endpoints and client: the Files API round trip, list pagination as
the SDK walks it, a batch refused as a whole, and bodies that cannot be batched."""

from __future__ import annotations

import asyncio
import json

import pytest
from batchkit import CONFIG, items, make_model, prompts, three_tasks, until_over
from openai import AsyncOpenAI

from toolsight.models.base import ConfigurationError, Message
from toolsight.models.batch.base import BatchItem
from toolsight.models.batch.openai import OpenAIBatchAPI
from toolsight.models.scripted import ScriptedServer
from toolsight.models.wire import WireProfile


def test_the_sdk_pages_through_the_batch_list_and_find_walks_the_pages() -> None:
    async def go(srv: ScriptedServer) -> tuple[list[str], list[str], str | None]:
        model = make_model("openai", srv)
        api = OpenAIBatchAPI("openai/test-model", api_key="k", base_url=srv.openai_base_url, page_size=2)
        sdk = AsyncOpenAI(api_key="k", base_url=srv.openai_base_url, max_retries=0)
        try:
            ids = [await api.submit(items(model, prompts("a")), tag=f"tag-{n}") for n in range(5)]
            listed = [b.id async for b in sdk.batches.list(limit=2)]
            return ids, listed, await api.find("tag-0")  # the oldest: on the last page
        finally:
            await api.aclose()
            await sdk.close()

    with ScriptedServer(three_tasks()) as srv:
        ids, listed, oldest = asyncio.run(go(srv))
    assert listed == ids[::-1]  # newest first, every batch once across three pages
    assert oldest == ids[0]


def test_the_output_and_error_files_are_jsonl_as_openai_writes_them() -> None:
    async def go(srv: ScriptedServer) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
        model = make_model("openai", srv)
        api = model.batch_api()
        sdk = AsyncOpenAI(api_key="k", base_url=srv.openai_base_url, max_retries=0)
        assert api is not None
        try:
            bid = await api.submit(items(model, prompts("a", "b")), tag="t")
            await until_over(api, bid)
            b = await sdk.batches.retrieve(bid)
            assert b.output_file_id and b.error_file_id
            out = (await sdk.files.content(b.output_file_id)).text
            err = (await sdk.files.content(b.error_file_id)).text
            return [json.loads(x) for x in out.splitlines()], [json.loads(x) for x in err.splitlines()]
        finally:
            await api.aclose()
            await sdk.close()

    with ScriptedServer(three_tasks(fail=["b"], fail_status=503)) as srv:
        out, err = asyncio.run(go(srv))
    assert [(r["custom_id"], r["response"]["status_code"], r["error"]) for r in out] == [("a", 200, None)]  # type: ignore[index]
    assert out[0]["response"]["body"]["object"] == "chat.completion"  # type: ignore[index]
    assert [(r["custom_id"], r["response"]["status_code"]) for r in err] == [("b", 503)]  # type: ignore[index]
    assert err[0]["response"]["body"]["error"]["message"]  # type: ignore[index]


def test_a_batch_whose_input_is_refused_fails_as_a_whole_and_says_which_line() -> None:
    async def go(srv: ScriptedServer) -> str | None:
        api = OpenAIBatchAPI("openai/test-model", api_key="k", base_url=srv.openai_base_url)
        try:
            good = BatchItem(custom_id="x", body={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
            bid = await api.submit([good, good], tag="dup")
            state = (await until_over(api, bid))[-1]
            assert state.status == "failed"
            return state.error
        finally:
            await api.aclose()

    with ScriptedServer(three_tasks()) as srv:
        error = asyncio.run(go(srv))
        assert not [r for r in srv.requests if r.batch is not None]
    assert error is not None and "line 2" in error and "custom_id 'x' appears twice" in error


@pytest.mark.parametrize("how", ["profile", "extra_body"])
def test_a_streaming_request_cannot_be_batched(how: str) -> None:
    with ScriptedServer(three_tasks()) as srv:
        model = make_model("openai", srv)
        config = CONFIG.model_copy(update={"wire": WireProfile(name="a streaming driver", stream=True)}
                                   if how == "profile" else {"extra_body": {"stream": True}})
        with pytest.raises(ConfigurationError, match="without batching") as caught:
            model.batch_body([Message.user("hi")], [], config)
    assert ("a streaming driver" in str(caught.value)) == (how == "profile")


def test_responses_api_bodies_batch_on_the_responses_endpoint() -> None:
    async def go(srv: ScriptedServer) -> list[dict[str, object] | None]:
        api = OpenAIBatchAPI("openai/test-model", api_key="k", base_url=srv.openai_base_url, endpoint="/v1/responses")
        try:
            body = {"model": "m", "input": [{"role": "user", "content": "[task:b] how many?"}]}
            bid = await api.submit([BatchItem(custom_id="r1", body=body)], tag="resp")
            await until_over(api, bid)
            return [r.reply for r in await api.results(bid)]
        finally:
            await api.aclose()

    with ScriptedServer(three_tasks()) as srv:
        replies = asyncio.run(go(srv))
        paths = [r.path for r in srv.requests if r.batch is not None]
    assert paths == ["/v1/responses"]
    reply = replies[0]
    assert reply is not None and reply["object"] == "response"
    message = [o for o in reply["output"] if o["type"] == "message"]  # type: ignore[union-attr,index,attr-defined]
    assert message[0]["content"][0]["text"] == "It is 7."  # type: ignore[index]
