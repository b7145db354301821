"""Helpers for the batch API tests: a provider model against a ScriptedServer, its batch client, and
driving a batch from submission to its results through the official SDK."""

from __future__ import annotations

import asyncio
from typing import Any

from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput
from toolsight.models.batch.base import BatchAPI, BatchItem, BatchResult, BatchState
from toolsight.models.registry import get_model
from toolsight.models.scripted import Script, ScriptedCall, ScriptedServer, Step
from toolsight.tools.base import ToolSpec

CONFIG = GenerateConfig(timeout=10, max_tokens=64)
CROP = ToolSpec(name="crop", description="Crop the image to a box.",
                parameters={"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})


def make_model(provider: str, srv: ScriptedServer) -> Model:
    url = srv.openai_base_url if provider == "openai" else srv.base_url
    return get_model(f"{provider}/test-model", base_url=url, api_key="test-key")


def three_tasks(**batch: Any) -> Script:
    """Three tasks that answer differently: a tool call, a text with reasoning, a plain text."""
    return Script.model_validate({
        "tasks": {
            "a": [Step(text="Zooming.", tool_calls=[ScriptedCall(name="crop", arguments={"x": 3}, id="call_a")])],
            "b": [Step(text="It is 7.", reasoning="Counted the dots.", input_tokens=21, output_tokens=5)],
            "c": [Step(text="A red sign.")],
        },
        "steps": [Step(text="default")],
        "batch": batch,
    })


def prompts(*keys: str) -> dict[str, list[Message]]:
    return {k: [Message.system("Be brief."), Message.user(f"[task:{k}] What is in image {k}?")] for k in keys}


def items(model: Model, conversations: dict[str, list[Message]]) -> list[BatchItem]:
    return [BatchItem(custom_id=k, body=model.batch_body(m, [CROP], CONFIG)) for k, m in conversations.items()]


async def until_over(api: BatchAPI, batch_id: str, limit: int = 50) -> list[BatchState]:
    """Poll until the batch is no longer in progress; every state seen, in order."""
    seen: list[BatchState] = []
    for _ in range(limit):
        seen.append(await api.poll(batch_id))
        if seen[-1].status != "in_progress":
            return seen
    raise AssertionError(f"batch {batch_id} still in progress after {limit} polls")


async def submit_and_collect(model: Model, conversations: dict[str, list[Message]], tag: str = "t1",
                             ) -> tuple[str, list[BatchState], list[BatchResult]]:
    api = model.batch_api()
    assert api is not None
    try:
        bid = await api.submit(items(model, conversations), tag=tag)
        states = await until_over(api, bid)
        return bid, states, await api.results(bid)
    finally:
        await api.aclose()


def online(provider: str, script: Script, conversations: dict[str, list[Message]]) -> dict[str, ModelOutput]:
    """The same conversations sent on-line, in the same order, to a fresh server playing `script`."""
    async def go(model: Model) -> dict[str, ModelOutput]:
        try:
            return {k: await model.generate(m, [CROP], CONFIG) for k, m in conversations.items()}
        finally:
            await model.aclose()

    with ScriptedServer(script) as srv:
        return asyncio.run(go(make_model(provider, srv)))
