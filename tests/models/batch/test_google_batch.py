"""Gemini specifics of the batch client: the display name is the tag, the SDK pages through the
batch list, and the inline requests carry the on-line bodies unchanged."""

from __future__ import annotations

import asyncio

from batchkit import items, make_model, prompts, three_tasks, until_over
from google import genai
from google.genai import types

from toolsight.models.batch.google import GoogleBatchAPI
from toolsight.models.scripted import ScriptedServer


def test_the_sdk_pages_through_the_batch_list_and_find_walks_the_pages() -> None:
    async def go(srv: ScriptedServer) -> tuple[list[str], list[tuple[str, str]], str | None]:
        model = make_model("google", srv)
        api = GoogleBatchAPI("google/test-model", "test-model", api_key="k", base_url=srv.base_url, page_size=2)
        sdk = genai.Client(vertexai=False, api_key="k",
                           http_options=types.HttpOptions(base_url=srv.base_url, api_version="v1beta"))
        try:
            ids = [await api.submit(items(model, prompts("a")), tag=f"tag-{n}") for n in range(5)]
            listed = [(str(j.name), str(j.display_name)) async for j in await sdk.aio.batches.list(config={"page_size": 2})]
            return ids, listed, await api.find("tag-0")  # the oldest: on the last page
        finally:
            await api.aclose()
            await sdk.aio.aclose()

    with ScriptedServer(three_tasks()) as srv:
        ids, listed, oldest = asyncio.run(go(srv))
    assert listed == [(i, f"tag-{n}") for n, i in reversed(list(enumerate(ids)))]
    assert oldest == ids[0]


def test_a_failed_item_keeps_its_place_and_its_key() -> None:
    async def go(srv: ScriptedServer) -> list[tuple[str, bool, str | None]]:
        model = make_model("google", srv)
        api = model.batch_api()
        assert api is not None
        try:
            bid = await api.submit(items(model, prompts("x", "y", "z")), tag="t")
            await until_over(api, bid)
            return [(r.custom_id, r.reply is not None, r.error) for r in await api.results(bid)]
        finally:
            await api.aclose()

    with ScriptedServer(three_tasks(fail=["y"], fail_status=429)) as srv:
        got = asyncio.run(go(srv))
    assert [(c, ok) for c, ok, _ in got] == [("x", True), ("y", False), ("z", True)]
    assert got[1][2] is not None and got[1][2].startswith("HTTP 429")
