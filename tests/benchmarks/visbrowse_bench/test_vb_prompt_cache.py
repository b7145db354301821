"""The corrected VisBrowse-Bench loop keeps providers' prompt caches effective; the official loop does not ask.

A task of three browsing rounds (a text search, an image search whose hits come back as images, a
visit), the "answer now" call, through the official SDKs (OpenAI, Anthropic, Gemini) against the
scripted server and the offline mini-web: request i's messages are the first messages of request
i+1 (cache marks aside), Anthropic requests carry `cache_control` breakpoints, the last call keeps
the tools and forbids them, and the scripted server reports cached input tokens on every later call.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest
from vbkit import run_task

from toolsight.benchmarks.visbrowse_bench.benchmark import visbrowse_settings
from toolsight.log.toolspec import ToolSpec
from toolsight.log.trajectory import Trajectory
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script, ScriptedCall, Step
from toolsight.tasks.dataset import load_dataset

ROUNDS = 3  # max_rounds: three tool rounds, then the last call (after "You must answer now")
_FORBID = {"openai": ("tool_choice", "none"), "anthropic": ("tool_choice", {"type": "none"}),
           "google": ("toolConfig", {"functionCallingConfig": {"mode": "NONE"}})}


def _script(last: Step) -> Script:
    calls = [ScriptedCall(name="text_search", arguments={"query": "painting"}),
             ScriptedCall(name="image_search", arguments={"query": "film poster"}),
             ScriptedCall(name="visit", arguments={"url": "https://example.test/", "goal": "the year"})]
    return Script(steps=[*[Step(text=f"Step {i}.", tool_calls=[c]) for i, c in enumerate(calls)], last])


class _Recording(Model):
    """The real adapter, with each reply kept (its usage is the scripted server's cache report)."""

    def __init__(self, inner: Model) -> None:
        super().__init__(inner.name)
        self.inner = inner
        self.tool_image_mode = inner.tool_image_mode
        self.outs: list[ModelOutput] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        self.outs.append(await self.inner.generate(messages, tools, config))
        return self.outs[-1]


def _run(miniweb: Path, tmp: Path, provider: str, loop: str = "toolsight",
         last: Step | None = None) -> tuple[list[dict[str, Any]], list[ModelOutput], Trajectory]:
    settings = visbrowse_settings()["+IS"].model_copy(update={"loop": loop, "max_rounds": ROUNDS})
    task = load_dataset(miniweb).tasks[0]
    with ScriptedServer(_script(last or Step(text="<answer>1999</answer>"))) as srv:
        url = srv.openai_base_url if provider == "openai" else srv.base_url
        inner = get_model(f"{provider}/test-model", base_url=url, api_key="test-key")
        model = _Recording(inner)

        async def go() -> Trajectory:
            try:
                return await run_task(task, miniweb, model, settings, miniweb / "corpus", tmp)
            finally:
                await inner.aclose()

        traj = asyncio.run(go())
        bodies = [r.body for r in srv.requests]
    return bodies, model.outs, traj


def _unmarked(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _unmarked(v) for k, v in node.items() if k != "cache_control"}
    if isinstance(node, list):
        return [_unmarked(x) for x in node]
    return node


def _marked(node: Any) -> bool:
    return "cache_control" in str(node)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_each_request_repeats_the_previous_one_and_later_calls_read_the_cache(miniweb: Path, tmp_path: Path,
                                                                             provider: str) -> None:
    bodies, outs, traj = _run(miniweb, tmp_path, provider)
    assert len(bodies) == ROUNDS + 1 and traj.turns[0].answer == "1999"
    assert [c.name for c in traj.tool_calls] == ["text_search", "image_search", "visit"]
    assert traj.turns[0].seen_images != traj.turns[0].seen_images[:1]  # image hits went back to the model
    key = "contents" if provider == "google" else "messages"
    convs = [_unmarked(b[key]) for b in bodies]
    for before, after in itertools.pairwise(convs):
        assert len(after) > len(before) and after[:len(before)] == before
    assert all(_unmarked(b["tools"]) == _unmarked(bodies[0]["tools"]) for b in bodies)
    # the last call: the same tools, forbidden
    name, forbid = _FORBID[provider]
    assert bodies[-1][name] == forbid and all(b.get(name) != forbid for b in bodies[:-1])
    assert outs[0].usage.cache_read_tokens == 0
    later = outs[1:] if provider != "anthropic" else outs[1:-1]
    for before, out in zip(outs, later, strict=False):  # the whole previous request (OpenAI: in 128-token steps)
        assert out.usage.cache_read_tokens >= max(1024, before.usage.input_tokens - 127)
    if provider == "anthropic":  # a new tool_choice: Anthropic could read only the tools and system prompt,
        assert outs[-1].usage.cache_read_tokens == outs[-1].usage.cache_write_tokens == 0  # < 1024 tokens here


def test_anthropic_breakpoints_write_each_round_and_the_last_call_only_reads(miniweb: Path, tmp_path: Path) -> None:
    bodies, outs, _ = _run(miniweb, tmp_path, "anthropic")
    for n, body in enumerate(bodies):
        users = [i for i, m in enumerate(body["messages"]) if m["role"] == "user"]
        marked = [i for i, m in enumerate(body["messages"]) if _marked(m)]
        assert _marked(body["system"]) and len(marked) + 1 <= 4
        assert marked == ([] if n == len(bodies) - 1 else users[-2:])  # the last call: the system prompt only
    assert all(o.usage.cache_write_tokens > 0 for o in outs[:-1]) and outs[-1].usage.cache_write_tokens == 0


def test_a_tool_call_on_the_last_call_is_not_run(miniweb: Path, tmp_path: Path) -> None:
    stray = Step(text="One more search.", tool_calls=[ScriptedCall(name="text_search", arguments={"query": "x"})])
    bodies, _, traj = _run(miniweb, tmp_path, "openai", last=stray)
    assert bodies[-1]["tool_choice"] == "none" and len(traj.tool_calls) == ROUNDS
    assert (traj.stop_reason, traj.turns[0].response, traj.turns[0].answer) == ("max_rounds", "One more search.", None)


def test_the_official_loop_asks_for_no_caching(miniweb: Path, tmp_path: Path) -> None:
    bodies, _, _ = _run(miniweb, tmp_path, "openai", loop="official")
    assert all(b["tool_choice"] == "auto" for b in bodies)  # the reference's, also on its last call
    assert not any(_marked(b) for b in bodies)
