"""The toolsight loop keeps providers' prompt caches effective: each request repeats the previous one.

The loop runs a task of several tool rounds through the official SDKs (OpenAI, Anthropic, Gemini)
against the scripted server; the recorded bodies show that request i's messages are, byte for byte,
the first messages of request i+1 (cache marks aside), and that Anthropic requests carry their
`cache_control` breakpoints where the cache can use them. The image budget is checked on its own:
it rewrites earlier messages only on the rounds where it drops images.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
from pathlib import Path
from typing import Any

import pytest

from enginekit import write_png
from toolsight.agents.images import ImageBudget, apply_image_budget
from toolsight.agents.inputs import register_inputs
from toolsight.agents.loop import Agent
from toolsight.agents.settings import AgentSettings
from toolsight.log.toolspec import ToolSpec
from toolsight.log.trajectory import Trajectory
from toolsight.models.base import GenerateConfig, ImagePart, Message, ModelOutput
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script, ScriptedCall, Step
from toolsight.tasks.schema import Task
from toolsight.tools.base import ArtifactStore, Toolbox
from toolsight.tools.crop import crop

ROUNDS = 4  # three crop rounds, then the answer
SYSTEM = "You are a careful visual assistant. " * 300  # > 1024 tokens: every provider caches it


def _script() -> Script:
    crops = [Step(tool_calls=[ScriptedCall(name="crop", arguments={"image": "img.png", "bbox": [0, 0, 0.9 - 0.1 * i, 0.9]})])
             for i in range(ROUNDS - 1)]
    return Script(steps=[*crops, Step(text="<answer>42</answer>")])


def _calls(tmp_path: Path, provider: str, loop: str = "toolsight", script: Script | None = None,
           **caps: Any) -> tuple[list[dict[str, Any]], list[ModelOutput], Trajectory]:
    """The request bodies the server received, the replies the loop got (with their usage), the trajectory."""
    write_png(tmp_path / "ds" / "img.png", 80, 60)
    task = Task.model_validate({"id": "t1", "turns": [{"prompt": "How many squares?", "images": [{"path": "img.png"}]}]})
    box = Toolbox([crop], ArtifactStore(tmp_path / "ws"), task.id)
    inputs = register_inputs(task, tmp_path / "ds", box)
    settings = AgentSettings(tools=["crop"], system_prompt=SYSTEM, loop=loop, **caps)  # type: ignore[arg-type]
    outs: list[ModelOutput] = []
    with ScriptedServer(script or _script()) as srv:
        url = srv.openai_base_url if provider == "openai" else srv.base_url
        model = get_model(f"{provider}/test-model", base_url=url, api_key="test-key")

        async def generate(msgs: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
            outs.append(await model.generate(msgs, tools, config))
            return outs[-1]

        async def go() -> Trajectory:
            try:
                return await Agent(model, settings, generate).run(task, box, inputs)
            finally:
                await model.aclose()

        traj = asyncio.run(go())
        bodies = [r.body for r in srv.requests]
    return bodies, outs, traj


def _run(tmp_path: Path, provider: str, loop: str = "toolsight", **caps: Any) -> tuple[list[dict[str, Any]], Trajectory]:
    bodies, _, traj = _calls(tmp_path, provider, loop, **caps)
    assert len(bodies) == ROUNDS and traj.turns[0].response == "<answer>42</answer>"
    return bodies, traj


def _unmarked(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _unmarked(v) for k, v in node.items() if k != "cache_control"}
    if isinstance(node, list):
        return [_unmarked(x) for x in node]
    return node


def _conversation(provider: str, body: dict[str, Any]) -> list[Any]:
    key = {"openai": "messages", "anthropic": "messages", "google": "contents"}[provider]
    return list(_unmarked(body[key]))


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_each_request_repeats_the_previous_one_and_adds_to_it(tmp_path: Path, provider: str) -> None:
    bodies, _ = _run(tmp_path, provider)
    convs = [_conversation(provider, b) for b in bodies]
    for before, after in itertools.pairwise(convs):
        assert len(after) > len(before)
        assert after[:len(before)] == before
    for b in bodies:  # the rest of the prefix (system prompt, tools) does not change either
        assert _unmarked({k: v for k, v in b.items() if k not in ("messages", "contents")}) == \
            _unmarked({k: v for k, v in bodies[0].items() if k not in ("messages", "contents")})


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_later_rounds_read_the_earlier_prefix_from_the_cache(tmp_path: Path, provider: str) -> None:
    _, traj = _run(tmp_path, provider)
    # every round after the first finds the previous round's prompt (> 1024 tokens) in the cache
    assert traj.usage.cache_read_tokens > (ROUNDS - 1) * 1024
    assert traj.usage.cache_read_tokens < traj.usage.input_tokens


def _marks(body: dict[str, Any]) -> list[tuple[str, int]]:
    """Where the breakpoints are: ("system", block) or ("message", index of the message)."""
    out = [("system", i) for i, b in enumerate(body.get("system") or []) if isinstance(b, dict) and "cache_control" in b]
    for i, m in enumerate(body["messages"]):
        for j, b in enumerate(m["content"]):
            if "cache_control" in b:
                assert j == len(m["content"]) - 1, "a breakpoint ends its message"
                out.append(("message", i))
    return out


def test_anthropic_breakpoints_are_on_the_system_prompt_and_the_last_two_user_messages(tmp_path: Path) -> None:
    bodies, traj = _run(tmp_path, "anthropic")
    for n, body in enumerate(bodies):
        marks = _marks(body)
        assert len(marks) <= 4  # Anthropic's limit
        users = [i for i, m in enumerate(body["messages"]) if m["role"] == "user"]
        assert marks == [("system", 0), *[("message", i) for i in users[-2:]]]
        assert len(marks) == (2 if n == 0 else 3)
        if n:  # the breakpoint that wrote the previous request's prefix is read by this one
            prev_last = len(bodies[n - 1]["messages"]) - 1
            assert ("message", prev_last) in marks
    assert traj.usage.cache_write_tokens > 0


def test_the_last_round_only_reads_the_cache(tmp_path: Path) -> None:
    bodies, outs, _ = _calls(tmp_path, "anthropic", max_rounds=ROUNDS, no_tools_on_last_round=True)
    # no round will read what the last one could write, and with a new tool_choice Anthropic can read
    # only the tools and the system prompt: one breakpoint, on the system prompt
    assert _marks(bodies[-1]) == [("system", 0)]
    assert _marks(bodies[-2])[-1] == ("message", len(bodies[-2]["messages"]) - 1)
    assert outs[-1].usage.cache_write_tokens == 0 and outs[-1].usage.cache_read_tokens > 1024


# --- no_tools_on_last_round: the last round keeps the tools and forbids them -------------------------

#: how each provider is told not to call the tools it is offered
_FORBID = {"openai": ("tool_choice", "none"), "anthropic": ("tool_choice", {"type": "none"}),
           "google": ("toolConfig", {"functionCallingConfig": {"mode": "NONE"}})}


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_the_last_round_sends_the_tools_with_tool_choice_none_and_reads_the_cache(tmp_path: Path,
                                                                                 provider: str) -> None:
    bodies, outs, traj = _calls(tmp_path, provider, max_rounds=ROUNDS, no_tools_on_last_round=True)
    assert len(bodies) == ROUNDS and traj.turns[0].response == "<answer>42</answer>"
    key, forbid = _FORBID[provider]
    assert bodies[-1]["tools"] == bodies[0]["tools"]
    assert bodies[-1][key] == forbid
    assert all(key not in b for b in bodies[:-1])  # earlier rounds: the provider's default (auto)
    last, before = outs[-1].usage, outs[-2].usage
    assert last.cache_read_tokens > 1024  # at least the tools and the system prompt
    if provider != "anthropic":  # implicit caches: the whole previous request (OpenAI: in 128-token steps)
        assert last.cache_read_tokens >= before.input_tokens - 127
    # Anthropic: a change of tool_choice invalidates the cached messages, not the tools and system prompt
    assert last.cache_read_tokens < last.input_tokens


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_a_tool_call_on_the_forbidden_last_round_ends_the_turn_as_the_official_loop_does(tmp_path: Path,
                                                                                         provider: str) -> None:
    stray = Step(text="Let me look once more.", tool_calls=[ScriptedCall(name="crop", arguments={
        "image": "img.png", "bbox": [0, 0, 0.5, 0.5]})])
    script = Script(steps=[*_script().steps[:-1], stray])
    caps: dict[str, Any] = {"max_rounds": ROUNDS, "no_tools_on_last_round": True}
    bodies, _, traj = _calls(tmp_path / "toolsight", provider, script=script, **caps)
    official_bodies, _, official = _calls(tmp_path / "official", provider, loop="official", script=script, **caps)
    assert "tools" in bodies[-1] and "tools" not in official_bodies[-1]
    turn, ref = traj.turns[0], official.turns[0]
    assert len(bodies) == ROUNDS and len(traj.tool_calls) == ROUNDS - 1  # the stray call never ran
    assert (turn.stop_reason, turn.response, turn.rounds, turn.tool_calls) == \
        ("answered", "Let me look once more.", ROUNDS, ROUNDS - 1)
    assert (ref.stop_reason, ref.response, ref.rounds, ref.tool_calls) == \
        (turn.stop_reason, turn.response, turn.rounds, turn.tool_calls)
    assert [c.name for c in official.tool_calls] == [c.name for c in traj.tool_calls]


def test_official_loops_send_no_cache_marks(tmp_path: Path) -> None:
    bodies, traj = _run(tmp_path, "anthropic", loop="official")
    assert all(not _marks(b) for b in bodies)
    assert traj.usage.cache_read_tokens == traj.usage.cache_write_tokens == 0


# --- the image budget ----------------------------------------------------------------------------

def _image_msgs(n: int) -> list[Message]:
    return [Message.user(f"image {i}", images=[ImagePart(path=f"/x/{i}.png", artifact_id=f"img-{i:012d}")])
            for i in range(1, n + 1)]


def _rewrites(shape: Any, max_images: int, n: int) -> list[int]:
    """The numbers of images at which a request did not repeat the previous request's messages."""
    sent = [shape(_image_msgs(k)) for k in range(1, n + 1)]
    return [k + 2 for k in range(n - 1) if sent[k + 1][:len(sent[k])] != sent[k]]


def test_the_image_budget_rewrites_earlier_messages_only_when_it_drops_images() -> None:
    budget = ImageBudget(4)
    assert _rewrites(budget.apply, 4, 9) == [5, 8]  # 5 images: drop to 2; 2 + 3 new = 5 again at 8
    assert budget.dropped == {f"img-{i:012d}" for i in range(1, 7)}
    # the sliding window rewrites at every image beyond the budget
    assert _rewrites(lambda m: apply_image_budget(m, 4), 4, 9) == [5, 6, 7, 8, 9]


def test_the_image_budget_never_sends_more_than_its_limit_and_keeps_the_newest() -> None:
    budget = ImageBudget(4)
    for k in range(1, 12):
        sent = budget.apply(copy.deepcopy(_image_msgs(k)))
        shown = [p.artifact_id for m in sent for p in m.content if isinstance(p, ImagePart)]
        assert len(shown) <= 4 and shown[-1] == f"img-{k:012d}"
        assert sum(1 for m in sent if "omitted: image budget" in m.text) == k - len(shown)
