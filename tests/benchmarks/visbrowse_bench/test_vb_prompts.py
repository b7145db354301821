"""The settings' prompts, tool schemas and first request, byte for byte against the reference.

The hashes are of the reference strings in `ZhengboZhang/VisBrowse-Bench` @ 10b95c0c (`prompt.py`
SYSTEM_PROMPT and INPUT_PROMPT, `tools/tool_visit.py` EXTRACTOR_PROMPT, `tool_util.py` tools as
`json.dumps(tools, sort_keys=True)`), computed from that commit's files.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

from vbkit import ScriptModel, run_task, say

from sharedfiles import shared_file
from toolsight.benchmarks.visbrowse_bench.benchmark import TOOLSETS, visbrowse_settings
from toolsight.benchmarks.visbrowse_bench.data import load_visbrowse
from toolsight.benchmarks.visbrowse_bench.loop import MUST_ANSWER, render_input
from toolsight.benchmarks.visbrowse_bench.prompts import EXTRACTOR_PROMPT, INPUT_PROMPT, SYSTEM_PROMPT
from toolsight.models.openai_provider import to_wire, tools_to_wire
from toolsight.tools.registry import build_tools

REF_SHA = {
    "SYSTEM_PROMPT": "6524121736b2e2c76c1b5fb7956c5d29e4c780b52cacf42a8cd3be8bbbc57c26",
    "INPUT_PROMPT": "112c69b5a6aac809d6572e02133c32d6c665080cd37b32642f5d3264bc2f5ed5",
    "EXTRACTOR_PROMPT": "7e904e9c3253cd2e22ede084f6287239f901505c38271584448f0c4b94b76aa1",
    "tools": "57ae29c198ef7755931bd9a07d1f11fbe2897a290724f30ce3642e51efe0ea74",
}


def _sha(s: str) -> str:
    return hashlib.sha256(s.encode()).hexdigest()


def test_prompts_and_tool_schemas_are_the_references() -> None:
    assert _sha(SYSTEM_PROMPT) == REF_SHA["SYSTEM_PROMPT"]
    assert _sha(INPUT_PROMPT) == REF_SHA["INPUT_PROMPT"]
    assert _sha(EXTRACTOR_PROMPT) == REF_SHA["EXTRACTOR_PROMPT"]
    tools = tools_to_wire([t.spec() for t in build_tools(visbrowse_settings()["+IS"].tools, TOOLSETS)])
    assert [t["function"]["name"] for t in tools] == ["text_search", "reverse_image_search", "visit", "image_search",
                                                     "image_crop"]
    assert _sha(json.dumps(tools, sort_keys=True)) == REF_SHA["tools"]
    assert MUST_ANSWER == ("You must answer now based on the information gathered, and put answer in <answer> ... "
                           "</answer> tags")


def test_paper_prompts_differ_only_where_documented() -> None:
    paper = " ".join(shared_file("papers/visbrowse-bench.txt").read_text().split()).replace("’", "'")
    assert " ".join(SYSTEM_PROMPT.split()) in paper
    code = " ".join(INPUT_PROMPT.split("Input Question:")[0].split())
    as_paper = code.replace("'image_crop' tool", "'crop_image' tool").replace("during the search process",
                                                                               "during the searching process")
    assert code not in paper and as_paper in paper  # docs/fidelity.md: crop_image, "searching"


def test_settings_match_the_paper_and_the_reference_loop() -> None:
    s = visbrowse_settings()
    assert list(s) == ["direct", "+TS", "+IS"]
    assert [t.name for t in build_tools(s["+TS"].tools, TOOLSETS)] == ["text_search", "visit"]
    assert len(build_tools(s["+IS"].tools, TOOLSETS)) == 5 and s["direct"].tools == []
    # this benchmark's sets are the generic browse tools with the reference's texts (same arguments)
    generic = {t.name: t for t in build_tools(["browse"])}
    for t in build_tools(s["+IS"].tools, TOOLSETS):
        assert type(t) is type(generic[t.name]) and t.description != generic[t.name].description
        assert t.parameters["properties"].keys() == generic[t.name].parameters["properties"].keys()
    for v in s.values():
        assert v.loop == "official" and v.max_rounds == 15 and v.generate.temperature == 1.0
        assert v.system_prompt == SYSTEM_PROMPT and v.user_template == INPUT_PROMPT
    assert s["+IS"].generate.extra_body == {"tool_choice": "auto"} and s["direct"].generate.extra_body == {}


def test_render_input_joins_urls_like_the_reference() -> None:
    out = render_input(INPUT_PROMPT, "Q?", ["https://a/1.png", "https://a/2.png"])
    assert out.endswith("\n\nInput Question: Q?\nInput image_url: https://a/1.png, https://a/2.png, \n")


def test_first_request_on_the_wire(miniweb: Path, tmp_path: Path) -> None:
    """The first request of a real sample task as the OpenAI adapter sends it."""
    tasks, root, _ = load_visbrowse(shared_file("data/visbrowse-bench/data/VisBrowse-Bench.sample.jsonl").parents[1], download=False)
    task = next(t for t in tasks if t.id == "13")  # two images
    model = ScriptModel([say("<answer>x</answer>")])
    asyncio.run(run_task(task, root, model, visbrowse_settings()["+IS"], miniweb / "corpus", tmp_path))
    msgs, tools, config = model.requests[0]
    wire = to_wire(msgs)
    assert wire[0] == {"role": "system", "content": SYSTEM_PROMPT}
    user = wire[1]["content"]
    urls = task.turns[0].meta["image_urls"]
    assert user[0] == {"type": "text", "text": render_input(INPUT_PROMPT, task.turns[0].prompt, urls)}
    assert [p["type"] for p in user] == ["text", "image_url", "image_url"]
    png = (root / task.turns[0].images[0].path).read_bytes()
    import base64

    assert user[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(png).decode()
    assert _sha(json.dumps(tools_to_wire(tools), sort_keys=True)) == REF_SHA["tools"]
    assert config.temperature == 1.0 and config.extra_body == {"tool_choice": "auto"}
