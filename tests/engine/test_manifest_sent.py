"""The manifest records the tool schemas and prompts a run's loop really sent (issue 26, "figures that are
true"): its `sent` block is checked against the request bodies the scripted server received from the
OpenAI SDK — toolsight's loop (tool specs and messages through `generate`) and VisualToolBench's official
loop (its own tool names) — and a resume adds to it without losing what the first invocation recorded.
VTC-Bench's official loop, which builds raw Chat Completions bodies itself: tests/benchmarks/vtc_bench/test_vtc_sent.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clikit import dataset, records, ts
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import ScriptedServer


def _sent(run: Path) -> dict[str, Any]:
    sent = json.loads((run / "manifest.json").read_text(encoding="utf-8"))["sent"]
    assert isinstance(sent, dict)
    return sent


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")


def _wire_names(bodies: list[dict[str, Any]]) -> list[list[str]]:
    out: list[list[str]] = []
    for b in bodies:
        names = [t["function"]["name"] for t in b.get("tools") or []]
        if names not in out:
            out.append(names)
    return out


def test_the_toolsight_loop_records_the_tools_and_prompts_it_sent(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 3)
    run = tmp_path / "run"
    with ScriptedServer(Script(steps=[Step(text="<answer>A</answer>")])) as srv:
        argv = ["run", str(ds), "-m", "openai/m", "--base-url", srv.openai_base_url, "--setting", "crop",
                "--out", str(run), "--no-report"]
        first = ts(*argv, "--limit", "2")
        assert first.returncode == 0, first.stderr
        bodies = [q.body for q in srv.requests]
        assert len(bodies) == 2
        sent = _sent(run)
        again = ts(*argv, "--resume")
        assert again.returncode == 0, again.stderr
    assert sent["requests"] == 2
    wire = [t["function"] for t in bodies[0]["tools"]]
    assert [t["name"] for t in sent["tools"]] == [t["name"] for t in wire] == ["crop"]
    assert sent["tools"] == [{"name": t["name"], "description": t["description"], "parameters": t["parameters"]}
                             for t in wire]
    assert sent["tool_sets"] == _wire_names(bodies)
    system = {_text(m["content"]) for b in bodies for m in b["messages"] if m["role"] == "system"}
    assert sent["system_prompts"] == sorted(system) and len(system) == 1
    # one template for every task: the task's own prompt replaced by {prompt}
    assert len(sent["user_prompts"]) == 1 and "{prompt}" in sent["user_prompts"][0], sent["user_prompts"]
    tasks = {json.loads(x)["id"]: json.loads(x) for x in (ds / "tasks.jsonl").read_text().splitlines()}
    for b in bodies:
        user = _text(next(m for m in b["messages"] if m["role"] == "user")["content"])
        prompt = next(t["turns"][0]["prompt"] for t in tasks.values() if t["turns"][0]["prompt"] in user)
        assert sent["user_prompts"][0].replace("{prompt}", prompt) == user
    resumed = _sent(run)  # the resume's request is added; nothing the first invocation recorded is lost
    assert resumed["requests"] == 3 and resumed["tools"] == sent["tools"]
    assert resumed["user_prompts"] == sent["user_prompts"] and resumed["system_prompts"] == sent["system_prompts"]


def test_visualtoolbench_official_loop_records_the_tool_names_it_offered(tmp_path: Path) -> None:
    data = tmp_path / "vtb"
    assert ts("generate", "vtb", "--n", "2", "--seed", "1", "--out", str(data)).returncode == 0
    run = tmp_path / "run"
    with ScriptedServer(Script(steps=[Step(text="The answer is 16.")])) as srv:
        r = ts("run", "visualtoolbench", "--data", str(data), "-m", "openai/m", "--base-url", srv.openai_base_url,
               "--no-score", "--out", str(run), "--no-report")
        bodies = [q.body for q in srv.requests]
    assert r.returncode == 0, r.stderr
    assert len(records(run)) == 2 and bodies
    sent = _sent(run)
    assert sent["requests"] == len(bodies)
    offered = [t["function"]["name"] for t in bodies[0]["tools"]]
    assert offered and list(dict.fromkeys(t["name"] for t in sent["tools"])) == offered  # the loop's own names
    # each distinct schema once (the image tool's description lists the task's images, so it differs per task)
    schemas: list[dict[str, Any]] = []
    for b in bodies:
        schemas.extend(f for t in b["tools"] if (f := {k: t["function"][k] for k in ("name", "description", "parameters")})
                       not in schemas)
    assert sent["tools"] == schemas
    assert sent["tool_sets"] == _wire_names(bodies)
    system = [_text(m["content"]) for b in bodies for m in b["messages"] if m["role"] == "system"]
    assert sent["system_prompts"] == list(dict.fromkeys(system))

