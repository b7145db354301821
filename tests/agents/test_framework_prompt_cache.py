"""The toolsight loops of `--agent pyvision` and `--agent deepeyes` keep providers' prompt caches effective.

A task of three model calls (two tool rounds — PyVision code that draws a figure, DeepEyes zooms —
then the answer) through the runner and the official SDKs (OpenAI, Anthropic, Gemini) against the
scripted server, real sandbox: request i's messages are, byte for byte, the first messages of request
i+1 (cache marks aside), Anthropic requests carry `cache_control` breakpoints, and the scripted
server reports cached input tokens for the later calls. The official loops ask for no caching.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from agentwirekit import make_image, write_tasks
from toolsight.benchmarks.registry import get_benchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner, load_for_run
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script

FENCE = "```"
PLOT = f"Let me look.\n<code>\n{FENCE}python\nimport matplotlib.pyplot as plt\nplt.imshow(image_clue_0)\nplt.show()\n{FENCE}\n</code>"
ZOOM = '<think>zoom</think>\n<tool_call>\n{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [0, 0, 200, 200]}}\n</tool_call>'
STEPS = {"pyvision": [PLOT, PLOT, "<answer>\n\\boxed{A}\n</answer>"],
         "deepeyes": [ZOOM, ZOOM, "<answer>A</answer>"]}
#: a long question, so every request is over the providers' 1024-token caching minimum
QUESTION = "Where is the bar? " + "Look at every part of the picture carefully. " * 120


def _run(tmp: Path, agent: str, provider: str, loop: str = "toolsight") -> tuple[list[dict[str, Any]], dict[str, Any]]:
    data, run = tmp / "data", tmp / f"run-{loop}"
    write_tasks(data, [{"id": "k", "turns": [{"prompt": QUESTION, "images": [{"path": "images/a.png"}],
                                               "options": {"A": "bottom", "B": "top"}}]}])
    make_image(data / "images" / "a.png", 640, 480, "PNG")
    script = Script.model_validate({"steps": [{"text": t} for t in STEPS[agent]]})
    with ScriptedServer(script) as srv:
        url = srv.openai_base_url if provider == "openai" else srv.base_url
        opts = RunOptions.of(benchmark=str(data), model=f"{provider}/test-model", agent=agent, loop=loop,
                             data=str(data), base_url=url, out=str(run), concurrency=1, score=False, cache=False,
                             retries=0)
        bench = get_benchmark(str(data))
        model = get_model(opts.model.spec, base_url=opts.model.base_url, api_key="test-key")
        asyncio.run(Runner(opts, bench, load_for_run(bench, str(data)), model).run())
        bodies = [r.body for r in srv.requests]
    [rec] = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines() if x.strip()]
    assert len(bodies) == 3 and rec["trajectory"]["turns"][0]["answer"] == "A"
    assert len(rec["trajectory"]["tool_calls"]) == 2
    return bodies, rec


def _unmarked(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _unmarked(v) for k, v in node.items() if k != "cache_control"}
    if isinstance(node, list):
        return [_unmarked(x) for x in node]
    return node


def _marked(node: Any) -> bool:
    return "cache_control" in json.dumps(node)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
@pytest.mark.parametrize("agent", ["pyvision", "deepeyes"])
def test_each_request_repeats_the_previous_one_and_later_calls_read_the_cache(tmp_path: Path, agent: str,
                                                                             provider: str) -> None:
    bodies, rec = _run(tmp_path, agent, provider)
    key = "contents" if provider == "google" else "messages"
    convs = [_unmarked(b[key]) for b in bodies]
    for before, after in itertools.pairwise(convs):
        assert len(after) > len(before) and after[:len(before)] == before
    for b in bodies:  # the rest (system prompt, parameters) does not change either
        assert _unmarked({k: v for k, v in b.items() if k != key}) == _unmarked(
            {k: v for k, v in bodies[0].items() if k != key})
    usage = rec["trajectory"]["usage"]
    # both later calls read at least the first request (the question alone is > 1024 tokens)
    assert usage["cache_read_tokens"] > 2 * 1024 and usage["cache_read_tokens"] < usage["input_tokens"]


@pytest.mark.parametrize("agent", ["pyvision", "deepeyes"])
def test_anthropic_breakpoints_are_on_the_last_two_user_messages(tmp_path: Path, agent: str) -> None:
    bodies, rec = _run(tmp_path, agent, "anthropic")
    for n, body in enumerate(bodies):
        users = [i for i, m in enumerate(body["messages"]) if m["role"] == "user"]
        marked = [i for i, m in enumerate(body["messages"]) if _marked(m)]
        assert marked == users[-2:] and len(users[-2:]) == min(n + 1, 2)
        for i in marked:  # on the message's last block
            assert [_marked(b) for b in body["messages"][i]["content"]][-1]
        assert _marked(body.get("system")) == (agent == "deepeyes")  # PyVision sends no system prompt
    assert rec["trajectory"]["usage"]["cache_write_tokens"] > 0


@pytest.mark.parametrize("agent", ["pyvision", "deepeyes"])
def test_the_official_loop_asks_for_no_caching(tmp_path: Path, agent: str) -> None:
    bodies, rec = _run(tmp_path, agent, "anthropic", loop="official")
    assert not any(_marked(b) for b in bodies)
    assert rec["trajectory"]["usage"]["cache_read_tokens"] == rec["trajectory"]["usage"]["cache_write_tokens"] == 0
