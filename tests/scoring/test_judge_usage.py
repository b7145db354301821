"""Judge calls record the tokens they used (for the cost column): an OpenAI-SDK judge on the scripted server."""

from __future__ import annotations

import asyncio

from toolsight.log.score import JudgeCall
from toolsight.models.base import GenerateConfig
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script, Step
from toolsight.scoring.judge import JudgeRunner


def test_a_judge_call_records_the_usage_the_provider_reported() -> None:
    script = Script(steps=[Step(text="not a verdict", input_tokens=321, output_tokens=7),
                           Step(text="YES", input_tokens=400, output_tokens=2)])
    with ScriptedServer(script) as srv:
        judge = get_model("openai/judge-model", base_url=srv.openai_base_url, api_key="test-key")

        async def go() -> list[JudgeCall]:
            try:
                runner = JudgeRunner(judge, GenerateConfig(temperature=0, seed=0, timeout=10))
                return await runner.attempts("Is the answer right?", lambda r: r == "YES")
            finally:
                await judge.aclose()

        calls = asyncio.run(go())
    usages = [(c.usage.input_tokens, c.usage.output_tokens) for c in calls if c.usage is not None]
    assert usages == [(321, 7), (400, 2)]  # every attempt is billed, the rejected one too
    assert not any(c.batch for c in calls)


def test_a_failed_judge_call_records_no_usage() -> None:
    with ScriptedServer(Script(steps=[Step(fault="status", status=400)])) as srv:
        judge = get_model("openai/judge-model", base_url=srv.openai_base_url, api_key="test-key")

        async def go() -> JudgeCall:
            try:
                return await JudgeRunner(judge, GenerateConfig(timeout=10), retries=1).call("Is it?")
            finally:
                await judge.aclose()

        call = asyncio.run(go())
    assert call.error is not None and call.usage is None
