"""TIR-Bench in official mode, end to end against the scripted server on 127.0.0.1: the paper's
feedback after every tool result (also a text-only one), App. E's generation settings for an open
model, and OpenAI's hosted code interpreter through the Responses API for the tool-using rows."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from toolsight.benchmarks.registry import get_benchmark
from toolsight.benchmarks.tir_bench.data import export_official
from toolsight.benchmarks.tir_bench.generate import generate
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner, load_for_run
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script


def _official(tmp: Path, n: int = 1) -> tuple[Path, list[dict[str, Any]]]:
    gen = tmp / "gen"
    tasks = generate("rotation_game", n, 5, gen)
    out = tmp / "official"
    export_official(tasks, gen, out)
    return out, json.loads((out / "TIR-Bench.json").read_text())


def _run(tmp: Path, data: Path, script: dict[str, Any], model: str, setting: str) -> dict[str, Any]:
    run = tmp / "run"
    with ScriptedServer(Script.model_validate(script)) as srv:
        opts = RunOptions.of(benchmark="tir-bench", model=model, setting=setting, data=str(data),
                          base_url=srv.openai_base_url, out=str(run), concurrency=1, cache=False, retries=0)
        bench = get_benchmark("tir-bench")
        asyncio.run(Runner(opts, bench, load_for_run(bench, str(data)), get_model(model, base_url=opts.model.base_url)).run())
        reqs = list(srv.requests)
    recs = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    return {"reqs": reqs, "recs": recs, "manifest": json.loads((run / "manifest.json").read_text())}


def _texts(msg: dict[str, Any]) -> list[str]:
    c = msg["content"]
    return [c] if isinstance(c, str) else [p["text"] for p in c if p.get("type") == "text"]


def test_feedback_follows_every_tool_result_and_open_models_get_app_e(tmp_path: Path) -> None:
    data, recs = _official(tmp_path)
    gold = recs[0]["answer"]
    script = {"steps": [
        {"tool_calls": [{"name": "rotate_image", "arguments": {"degrees": 90}}]},
        {"tool_calls": [{"name": "rotate_image", "arguments": {"degrees": "a lot"}}]},  # fails: text only
        {"text": f"The answer is {gold}."},
    ]}
    out = _run(tmp_path, data, script, "openai/open-vlm", "function")
    assert out["manifest"]["loop"] == "official"
    bodies = [r.body for r in out["reqs"]]
    assert len(bodies) == 3
    assert all(b["temperature"] == 0 and b["max_tokens"] == 2048 for b in bodies)  # App. E, open model
    second = bodies[1]["messages"]
    fb = second[-1]
    assert second[-2]["role"] == "tool" and "Produced image(s)" not in json.dumps(second[-2])
    assert fb["role"] == "user" and _texts(fb) == ["The rotated image is attached."]
    assert any(p.get("type") == "image_url" for p in fb["content"])  # the image travels with the feedback
    third = bodies[2]["messages"]
    assert third[-2]["role"] == "tool" and "degrees" in json.dumps(third[-2])
    assert third[-1]["role"] == "user" and third[-1]["content"] == "The rotated image is attached."  # text result too
    rec = out["recs"][0]
    assert rec["error"] is None and rec["score"]["value"] == 1.0
    # the manifest records what was sent: the loop's tools and its feedback text among the user prompts
    sent = out["manifest"]["sent"]
    assert sent["requests"] == 3 and [t["name"] for t in sent["tools"]] == [
        t["function"]["name"] for t in bodies[0]["tools"]]
    assert "The rotated image is attached." in sent["user_prompts"]


def test_hosted_code_interpreter_through_the_responses_api(tmp_path: Path) -> None:
    data, recs = _official(tmp_path)
    gold = recs[0]["answer"]
    script = {"steps": [{
        "text": f"The answer is {gold}.",
        "code_interpreter": [
            {"code": "from PIL import Image\nim = Image.open('/mnt/data/x.png')\nprint(im.size)", "logs": "(64, 64)"},
            {"code": "im.rotate(90).save('/mnt/data/r.png')", "images": ["https://files.example/r.png"]},
        ],
    }]}
    out = _run(tmp_path, data, script, "openai/o3", "code")
    (req,) = out["reqs"]
    assert req.path == "/v1/responses"
    assert req.body["tools"] == [{"type": "code_interpreter", "container": {"type": "auto"}}]
    assert req.body["model"] == "o3" and "temperature" not in req.body  # an API model: provider defaults
    parts = req.body["input"][0]["content"]
    assert [p["type"] for p in parts] == ["input_text", "input_image"]
    assert parts[1]["image_url"].startswith("data:image/")
    rec = out["recs"][0]
    calls = rec["trajectory"]["tool_calls"]
    assert [c["name"] for c in calls] == ["code_interpreter"] * 2
    assert json.loads(calls[0]["arguments"])["code"].startswith("from PIL import Image")
    assert calls[0]["text"] == "(64, 64)" and calls[1]["extra"]["image_urls"] == ["https://files.example/r.png"]
    assert rec["trajectory"]["turns"][0]["response"] == f"The answer is {gold}."
    assert rec["error"] is None and rec["score"]["value"] == 1.0
    # the manifest records the raw Responses request the loop built: the hosted tool, the prompt as a template
    sent = out["manifest"]["sent"]
    assert sent["requests"] == 1 and sent["tools"] == req.body["tools"] and sent["tool_sets"] == [["code_interpreter"]]
    (template,) = sent["user_prompts"]
    assert "{prompt}" in template and template.replace("{prompt}", recs[0]["prompt"]) == parts[0]["text"]


def test_toolsight_loop_keeps_the_generic_loop(tmp_path: Path) -> None:
    data, recs = _official(tmp_path)
    script = {"steps": [{"tool_calls": [{"name": "rotate_image", "arguments": {"degrees": 90}}]},
                        {"text": f"The answer is {recs[0]['answer']}."}]}
    run = tmp_path / "run"
    with ScriptedServer(Script.model_validate(script)) as srv:
        opts = RunOptions.of(benchmark="tir-bench", model="openai/open-vlm", setting="function", loop="toolsight",
                          data=str(data), base_url=srv.openai_base_url, out=str(run), concurrency=1, cache=False)
        bench = get_benchmark("tir-bench")
        asyncio.run(Runner(opts, bench, load_for_run(bench, str(data)), get_model(opts.model.spec, base_url=opts.model.base_url)).run())
        bodies = [r.body for r in srv.requests]
    assert "temperature" not in bodies[0]  # no App. E defaults in the toolsight loop
    assert "[image(s) " in json.dumps(bodies[1]["messages"])  # toolsight's placeholder line
    assert json.loads((run / "manifest.json").read_text())["loop"] == "toolsight"


def test_a_malformed_hosted_interpreter_reply_is_a_model_error(tmp_path: Path) -> None:
    """A Responses API reply whose code-interpreter `outputs` is a number (or with no output at all)
    is a malformed reply: retried, then the task's model error with exit 3 — not a harness error
    (issue 26, item 6). Through the CLI, as a user runs it."""
    from clikit import records, ts

    data, recs = _official(tmp_path)
    good = {"text": f"The answer is {recs[0]['answer']}.", "code_interpreter": [{"code": "print(1)", "logs": "1"}]}
    for name, steps, code in (
        ("retried", [{"fault": "malformed", "malformed": "number_content"}, good], 0),
        ("empty", [{"fault": "malformed", "malformed": "no_message"}], 3),
        ("number", [{"fault": "malformed", "malformed": "number_content"}], 3),
    ):
        with ScriptedServer(Script.model_validate({"steps": steps})) as srv:
            r = ts("run", "tir-bench", "--data", str(data), "--setting", "code", "-m", "openai/o3", "--base-url",
                   srv.openai_base_url, "--out", str(tmp_path / name), "--retries", "1", "--backoff-base", "0.01",
                   "--no-report")
            assert all(q.path == "/v1/responses" for q in srv.requests)
        assert r.returncode == code and "Traceback" not in r.stderr, (name, r.stderr)
        (rec,) = records(tmp_path / name)
        if code == 0:
            assert rec["error"] is None and rec["trajectory"]["retries"] == 1
        else:
            assert rec["error"].startswith("model error") and "malformed reply" in rec["error"], rec["error"]
