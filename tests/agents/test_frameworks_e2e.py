"""Issue 30's end-to-end check: `toolsight run … --agent pyvision` / `--agent deepeyes` as a user types
it, through the CLI, against the scripted OpenAI-compatible server — TIR-Bench (the Table 2 settings,
with the paper's GPT answer extraction by a scripted judge) and one generated set of each other
benchmark, run the way docs/generators.md says.

Every task runs to a record without error; each made its framework's tool call in the sandbox,
whose image is an artifact made from the input (so effective chains, the viewer and reports work as
for any agent); the requests carry the framework's parameters, not the benchmark's tools.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolsight.benchmarks.generation import generate
from toolsight.models.scripted import Script, ScriptedServer

FENCE = "```"
PYVISION = [{"text": f"Zoom in.\n<code>\n{FENCE}python\nimport matplotlib.pyplot as plt\nprint(image_clue_0.size)\n"
                     f"plt.imshow(image_clue_0.crop((0, 0, 60, 60)))\nplt.show()\n{FENCE}\n</code>\nnever sent"},
            {"text": "The answer.\n<answer>\n\\boxed{A}\n</answer>"}]
DEEPEYES = [{"text": '<think>zoom</think>\n<tool_call>\n{"name": "image_zoom_in_tool", "arguments": '
                     '{"bbox_2d": [0, 0, 60, 60], "label": "corner"}}\n</tool_call>'},
            {"text": "<think>done</think>\n<answer>A</answer>"}]
STEPS = {"pyvision": PYVISION, "deepeyes": DEEPEYES}
TOOL = {"pyvision": "pyvision_python", "deepeyes": "image_zoom_in_tool"}


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sets")
    out = {}
    for kind in ("maze", "vtc-count_objects", "phystool", "vtb", "browse"):
        generate(kind, 2, 0, root / kind)
        out[kind] = root / kind
    return out


def _cli(tmp: Path, steps: list[dict[str, Any]], *args: str, judge: dict[str, Any] | None = None
         ) -> tuple[subprocess.CompletedProcess[str], list[Any], Path]:
    run = tmp / "run"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["TOOLSIGHT_CACHE"] = str(tmp / "cache")
    with ScriptedServer(Script.model_validate({"steps": steps})) as srv, \
            ScriptedServer(Script.model_validate(judge or {"steps": [{"text": "A"}]})) as jsrv:
        cmd = [sys.executable, "-m", "toolsight", "run", *args, "--model", "openai/gpt-4.1", "--base-url",
               srv.openai_base_url, "--out", str(run), "--concurrency", "1"]
        if judge is not None:
            cmd += ["--judge", "openai/gpt-4o", "--judge-base-url", jsrv.openai_base_url]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=tmp)
        reqs = list(srv.requests)
    return r, reqs, run


def _check(r: subprocess.CompletedProcess[str], reqs: list[Any], run: Path, agent: str) -> list[dict[str, Any]]:
    assert r.returncode == 0, r.stderr[-3000:]
    recs = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines() if x.strip()]
    assert len(recs) == 2 and all(x["error"] is None for x in recs), [x["error"] for x in recs]
    for rec in recs:
        traj = rec["trajectory"]
        [call] = traj["tool_calls"]
        assert call["name"] == TOOL[agent] and call["ok"], call
        arts = {a["id"]: a for a in traj["artifacts"]}
        inputs = [a["id"] for a in traj["artifacts"] if a["source"] == "input"]
        [made] = call["artifacts"]
        assert set(arts[made]["parents"]) <= set(inputs) and arts[made]["parents"]
        assert traj["turns"][-1]["seen_images"][-1] == made  # the last image the model saw: the chain's end
        assert traj["turns"][-1]["answer"] == "A"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["agent_settings"]["agent"] == agent and agent in manifest["agent_settings"]["tools"]
    for q in reqs:
        assert "tools" not in q.body and q.body["stop"] == (["</code>"] if agent == "pyvision" else ["<|im_end|>"])
    return recs


@pytest.mark.parametrize("agent", ["pyvision", "deepeyes"])
def test_tir_bench_with_agent_on_its_default_setting(agent: str, sets: dict[str, Path], tmp_path: Path) -> None:
    """`toolsight run tir-bench --agent NAME …`: the agent, not TIR-Bench's own official loop."""
    r, reqs, run = _cli(tmp_path, STEPS[agent], "tir-bench", "--data", str(sets["maze"]), "--agent", agent)
    _check(r, reqs, run, agent)
    first = reqs[0].body
    if agent == "pyvision":  # the official loop: PyVision's body exactly (main.py's defaults)
        assert list(first) == ["model", "messages", "max_tokens", "stop", "temperature", "top_p"]
        assert (first["max_tokens"], first["temperature"], first["top_p"]) == (10000, 0.6, 1.0)
    else:
        assert list(first) == ["model", "messages", "max_tokens", "stop", "temperature"]
        assert (first["max_tokens"], first["temperature"]) == (10240, 0.0)
    assert "trace viewer:" in r.stdout and (run / "viewer" / "index.html").is_file()


@pytest.mark.parametrize("agent", ["pyvision", "deepeyes"])
def test_tir_bench_table2_setting_with_the_papers_extraction(agent: str, sets: dict[str, Path],
                                                             tmp_path: Path) -> None:
    gold = {json.loads(x)["id"]: json.loads(x)["turns"][0]["answer"]
            for x in (sets["maze"] / "tasks.jsonl").read_text().splitlines()}
    # the extractor (the judge model) answers each task's gold letter: the score must follow it
    judge = {"steps": [{"text": "Z"}], "tasks": {k: [{"text": v}] for k, v in gold.items()}}
    r, reqs, run = _cli(tmp_path, STEPS[agent], "tir-bench", "--data", str(sets["maze"]), "--setting", agent,
                        "--no-report", judge=judge)
    recs = _check(r, reqs, run, agent)
    for rec in recs:
        assert rec["score"]["scorer"] == "tir-bench" and rec["score"]["judge_calls"], rec["score"]
        assert rec["score"]["value"] == 1.0 and rec["score"]["answer"] == gold[rec["task_id"]]


OTHERS = [("vtc-count_objects", []), ("phystool", []), ("vtb", ["visualtoolbench", "--no-score"]),
          ("browse", ["visbrowse-bench", "--setting", "direct", "--no-score"])]


@pytest.mark.parametrize("agent", ["pyvision", "deepeyes"])
@pytest.mark.parametrize(("kind", "how"), OTHERS, ids=[k for k, _ in OTHERS])
def test_the_other_benchmarks_generated_sets(kind: str, how: list[str], agent: str, sets: dict[str, Path],
                                             tmp_path: Path) -> None:
    target = [how[0], "--data", str(sets[kind]), *how[1:]] if how else [str(sets[kind])]
    r, reqs, run = _cli(tmp_path, STEPS[agent], *target, "--agent", agent, "--no-report")
    _check(r, reqs, run, agent)
