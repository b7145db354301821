"""The VTC-Bench official loop in the situations the golden transcripts do not reach: the 20-call
budget (notes, last-call flattening, no-answer re-asks), Chinese questions, the driver's per-model
branches, and its task-level reruns and answer rules. Real runs: runner → OpenAI SDK → scripted
server on 127.0.0.1 → real OpenCV tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from vtckit import run_vtc, texts

from toolsight.benchmarks.vtc_bench import loop as vtc_loop
from toolsight.benchmarks.vtc_bench import prompts as P
from toolsight.benchmarks.vtc_bench.loop import extract_answer, final_text, should_retry_answer
from toolsight.benchmarks.vtc_bench.profiles import DriverProfile
from toolsight.benchmarks.vtc_bench.qwen import Item, QMsg
from toolsight.benchmarks.vtc_bench.scorer import driver_answer, official_prediction, spreadsheet_roundtrip

FLIP = {"name": "opencv_flip", "arguments": {"image": "$input:t", "param": {"direction": "vertical"}}}
ROT = {"name": "opencv_rotate", "arguments": {"image": "$prev", "param": {"angle": 90}}}


@pytest.fixture(autouse=True)
def _no_rerun_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vtc_loop, "RERUN_WAITS", (0.0, 0.0))


def test_twenty_calls_notes_flattening_and_reasks(tmp_path: Path) -> None:
    steps: list[dict[str, object]] = [{"tool_calls": [FLIP]} for _ in range(16)]
    steps.append({"text": "two at once", "tool_calls": [FLIP, ROT]})  # call 17: a parallel call
    steps += [{"tool_calls": [FLIP]}, {"tool_calls": [FLIP]}]  # calls 18, 19
    steps += [{"text": "It is C."}, {"text": "<answer>C</answer>"}]  # call 20 without a tag, then re-asked
    out = run_vtc(tmp_path, [{"id": "chart_9", "question": "Which bar is tallest? [task:t]"}], {"tasks": {"t": steps}})
    bodies = out["bodies"]
    assert len(bodies) == 21
    assert all(len(b["tools"]) == 35 for b in bodies[:19]) and all("tools" not in b for b in bodies[19:])
    # notes: separate text items, from 5 calls left; on every tool message of the parallel call
    tool_msgs = [m for m in bodies[18]["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 19  # rounds 1-18, round 17 with two calls
    assert all(not texts(m)[-1].startswith("\n[Note") for m in tool_msgs[:14])
    assert [texts(m)[-1] for m in tool_msgs[14:16]] == [P.REMAINING_NOTE.format(n=n) for n in (5, 4)]
    assert [texts(m)[-1] for m in tool_msgs[16:18]] == [P.REMAINING_NOTE.format(n=3)] * 2  # both calls of round 17
    assert texts(tool_msgs[18])[-1] == P.REMAINING_NOTE.format(n=2)
    assert tool_msgs[18]["content"][-2]["type"] == "image_url"  # the note follows the image
    # call 20: no tools, the history flattened into user messages, no upload line
    last = bodies[19]["messages"]
    assert not [m for m in last if m["role"] == "tool" or "tool_calls" in m]
    assert not texts(last[1])[0].startswith("(Uploaded")
    flat = "".join(t for m in last if m["role"] == "user" for t in texts(m))
    assert flat.count('The tool "opencv_flip" was called with these arguments: \n') == 19
    assert flat.count("The tool has returned the following result: \n") == 20
    assert "[You have just 1 more conversation opportunity." in flat and "Which bar is tallest? [task:t]" in flat
    assert texts(bodies[20]["messages"][-1]) == [P.NO_ANSWER_RETRY]  # re-asked once, then answered
    rec = out["records"]["chart_9"]
    assert rec["error"] is None and rec["trajectory"]["turns"][0]["answer"] == "C"
    assert rec["trajectory"]["model_calls"] == 21


def test_chinese_flattening_on_a_short_budget(tmp_path: Path) -> None:
    steps = [{"tool_calls": [FLIP]}, {"tool_calls": [FLIP]}, {"text": "<answer>C</answer>"}]
    out = _run_capped(tmp_path, "图中有几个圆？ [task:t]", steps)  # a 3-call budget (--cap max_rounds=3)
    assert texts(out["bodies"][0]["messages"][1])[0] == "（上传了 ![图片](x_1.jpg)）"
    last = out["bodies"][-1]
    assert "tools" not in last
    flat = "".join(t for m in last["messages"] if m["role"] == "user" for t in texts(m))
    assert "\n\n工具\"opencv_flip\"被调用时使用了以下参数：\n" in flat and "\n\n该工具返回了以下结果：\n" in flat


def _run_capped(tmp: Path, question: str, steps: list[Any],
                model: str = "Qwen3-VL-30B-A3B-Thinking") -> dict[str, Any]:
    import asyncio
    import json

    from vtckit import make_data

    from toolsight.benchmarks.registry import get_benchmark
    from toolsight.engine.options import RunOptions
    from toolsight.engine.runner import Runner, load_for_run
    from toolsight.engine.store import artifact_dir
    from toolsight.models.registry import get_model
    from toolsight.models.scripted import ScriptedServer
    from toolsight.models.scripted.script import Script

    data, run = tmp / "data", tmp / "run"
    make_data(data, [{"id": "x_1", "question": question}])
    path = f"{artifact_dir(run, 'x_1').resolve()}/images/chart/x_1.jpg"
    script = json.loads(json.dumps({"tasks": {"t": steps}}).replace("$input:t", path))
    with ScriptedServer(Script.model_validate(script)) as srv:
        opts = RunOptions.of(benchmark="vtc-bench", model=f"openai/{model}", setting="interface", data=str(data),
                          base_url=srv.openai_base_url, out=str(run), concurrency=1, cache=False, retries=0,
                          caps={"max_rounds": 3})
        bench = get_benchmark("vtc-bench")
        asyncio.run(Runner(opts, bench, load_for_run(bench, str(data)),
                           get_model(opts.model.spec, base_url=opts.model.base_url)).run())
        bodies = [r.body for r in srv.requests]
    recs = {x["task_id"]: x for x in map(json.loads, (run / "records.jsonl").read_text().splitlines())}
    return {"bodies": bodies, "records": recs}


def test_4o_profile_sends_tool_images_in_a_user_message(tmp_path: Path) -> None:
    steps = [{"tool_calls": [FLIP]}, {"text": "<answer>C</answer>"}]
    out = _run_capped(tmp_path, "Which? [task:t]", steps, model="gpt-4o-2024-08-06")
    msgs = out["bodies"][1]["messages"]
    tool = next(m for m in msgs if m["role"] == "tool")
    assert [p["type"] for p in tool["content"]] == ["text"] and "Edited Image Path: " in texts(tool)[0]
    after = msgs[msgs.index(tool) + 1]
    assert after["role"] == "user"
    assert [p["type"] for p in after["content"]] == ["text", "text", "image_url"]
    assert texts(after)[0].startswith("(Uploaded ![image](") and texts(after)[1] == P.TOOL_IMAGE_NOTE
    assert "reasoning_effort" not in out["bodies"][0]


def test_o_series_profile_wording_and_reasoning_effort(tmp_path: Path) -> None:
    steps = [{"tool_calls": [FLIP]}, {"tool_calls": [FLIP]}, {"text": "no tag"}, {"text": "<answer>C</answer>"}]
    out = _run_capped(tmp_path, "Which? [task:t]", steps, model="o3")
    bodies = out["bodies"]
    assert all(b.get("reasoning_effort") == "high" for b in bodies)
    note = texts(next(m for m in reversed(bodies[2]["messages"]) if m["role"] == "user"))
    assert any("results of the previous execution: [Which? [task:t]" in t for t in note)
    assert any("problem-solving approach" in t for t in note)
    assert texts(bodies[3]["messages"][-1]) == [P.NO_ANSWER_RETRY.replace("processing", "execution")]


def test_profiles_follow_the_drivers_name_tests() -> None:
    assert DriverProfile.for_model("Qwen3-VL-30B-A3B-Thinking").name == "qwen3-vl"
    assert DriverProfile.for_model("claude-sonnet-4").images_in_user_message is False
    g25 = DriverProfile.for_model("gemini-2.5-pro")
    assert g25.images_in_user_message and g25.reasoning_effort == "high" and not g25.gemini3_thinking
    kwargs: dict[str, object] = {"extra_body": {"top_k": 20}}
    DriverProfile.for_model("gemini-3-pro-preview").request_extras(kwargs)
    assert kwargs["extra_body"] == {"top_k": 20, "google": {"thinking_config": {"thinking_level": "high"}}}
    assert "reasoning_effort" not in kwargs
    assert DriverProfile.for_model("O3").execution_wording and DriverProfile.for_model("O3").reasoning_effort is None


def test_refusals_rerun_the_task_and_unknown_tools_answer_in_the_drivers_words(tmp_path: Path) -> None:
    script = {"tasks": {"t": [
        {"tool_calls": [{"name": "opencv_magic", "arguments": {"image": "x"}}]},
        {"text": "<answer>I cannot tell</answer>"},
        {"text": "<answer>B</answer>"},
    ]}}
    out = run_vtc(tmp_path, [{"id": "chart_3", "question": "Which? [task:t]"}], script)
    bodies = out["bodies"]
    tool = next(m for m in bodies[1]["messages"] if m["role"] == "tool")
    assert texts(tool) == ["Tool opencv_magic does not exists."]
    assert len(bodies) == 3 and len(bodies[2]["messages"]) == 2  # a whole new attempt: system + user
    assert out["records"]["chart_3"]["trajectory"]["turns"][0]["answer"] == "B"


def test_unfixable_arguments_fail_the_task_as_the_client_does(tmp_path: Path) -> None:
    script = {"tasks": {"t": [{"tool_calls": [{"name": "opencv_flip", "arguments": "{'image': 'x.jpg', 'param'"}]},
                              {"text": "<answer>C</answer>"}]}}
    out = run_vtc(tmp_path, [{"id": "chart_4", "question": "Which? [task:t]"}], script)
    rec = out["records"]["chart_4"]
    assert len(out["bodies"]) == 1  # the second request is never sent
    assert rec["error"] is not None and "Failed to fix function arguments JSON" in rec["error"]
    call = rec["trajectory"]["tool_calls"][0]
    assert call["text"].startswith("An error occurred when calling tool `opencv_flip`:\nValueError: "
                                   "Parameters must be formatted as a valid JSON!\nTraceback:\n")


def test_the_drivers_answer_rules() -> None:
    assert extract_answer("x <answer> B </answer> <answer>C</answer>", None, None) == "B"
    assert extract_answer("<|answer|>D<|answer|> and <answer>B</answer>", None, None) == "D"
    assert extract_answer("no tags", "thinking... <answer>A</answer>", None) == "A"
    assert extract_answer("no tags", None, "unable to say") == "unable to say"  # kept from an earlier attempt
    assert extract_answer("</answer>x<answer>", None, None) == ""  # the driver slices by the first of each
    resp = [QMsg("assistant", "", reasoning_content="r"), QMsg("assistant", "<answer>B</answer>"),
            QMsg("tool", [Item(text="result"), Item(image="/x.png")])]
    assert final_text(resp) == ("result", None)  # the last message with text, even a tool result
    assert final_text([QMsg("user", "  ")]) == (None, None)
    assert should_retry_answer("Insufficient detail", P.RETRY_ANSWER_KEYWORDS)
    assert should_retry_answer(" ", P.RETRY_ANSWER_KEYWORDS) and not should_retry_answer("C", P.RETRY_ANSWER_KEYWORDS)


def test_official_prediction_goes_through_the_spreadsheet() -> None:
    assert official_prediction("It is C.") == "nan"  # no tags: no answer
    assert official_prediction("<answer>N/A</answer>") == "nan"
    assert official_prediction("<answer>None</answer>") == "nan"
    assert official_prediction("<answer>=1+1</answer>") == "0"
    assert official_prediction("<answer> C </answer>") == "C"
    assert spreadsheet_roundtrip(None) == "nan" and driver_answer("<|answer|>x<|answer|>") == "x"


def test_images_are_encoded_as_the_driver_encodes_them(tmp_path: Path) -> None:
    import base64
    import io

    from PIL import Image

    from toolsight.benchmarks.vtc_bench.loop import images_in_text
    from toolsight.benchmarks.vtc_bench.qwen import image_url

    Image.new("RGB", (20, 10), (9, 9, 9)).save(tmp_path / "tiny.png")
    Image.new("RGB", (1600, 2400), (9, 9, 9)).save(tmp_path / "tall.png")

    def size(name: str) -> tuple[int, int]:
        url = image_url(name, tmp_path)
        assert url.startswith("data:image/jpeg;base64,")
        with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as im:
            assert im.format == "JPEG"
            return im.size

    assert size("tiny.png") == (57, 29)  # short side under 28: scaled by 2.8, +1 after truncation
    assert size("tall.png") == (1080, 1620)  # short side capped at 1080
    # a text result naming an image path gets the image attached; paths outside the workspace do not
    ws = tmp_path / "ws"
    ws.mkdir()
    Image.new("RGB", (8, 8)).save(ws / "out.png")
    got = images_in_text(f"saved to {ws / 'out.png'} and {tmp_path / 'tall.png'}", ws)
    assert isinstance(got, list)
    assert [(i.text, i.image) for i in got][1:] == [(f"The saved image path is: {ws / 'out.png'}", None),
                                                    (None, str(ws / "out.png"))]
    assert images_in_text("no image here", ws) == "no image here"


def test_providers_without_a_raw_call_get_the_same_messages(tmp_path: Path) -> None:
    """The fallback for non-OpenAI providers: the driver's messages as toolsight messages (same texts)."""
    import asyncio

    from vtckit import make_data

    from toolsight.agents.inputs import register_inputs
    from toolsight.benchmarks.vtc_bench.data import load_vtc_bench
    from toolsight.benchmarks.vtc_bench.settings import SETTINGS, to_agent_settings
    from toolsight.models.base import GenerateConfig, Message, ModelOutput
    from toolsight.models.scripted.inproc import ScriptedModel
    from toolsight.models.scripted.script import Script
    from toolsight.tools.base import ArtifactStore, Toolbox, ToolSpec
    from toolsight.tools.registry import build_tools

    make_data(tmp_path / "data", [{"id": "x_1", "question": "Which? [task:t]"}])
    (task,), _ = load_vtc_bench(tmp_path / "data")
    settings = to_agent_settings(SETTINGS["interface"])
    from toolsight.benchmarks.vtc_bench.benchmark import VTC_TOOLSETS

    box = Toolbox(build_tools(settings.tools, extra=VTC_TOOLSETS), ArtifactStore(tmp_path / "ws"), task.id)
    inputs = register_inputs(task, tmp_path / "data", box)
    model = ScriptedModel("mock/x", Script.model_validate({"tasks": {"t": [
        {"tool_calls": [{"name": "opencv_flip", "arguments": {"image": "images/chart/x_1.jpg", "param": {}}}]},
        {"text": "<answer>C</answer>"}]}}))
    seen: list[list[Message]] = []

    async def generate(msgs: list[Message], tools: list[ToolSpec], cfg: GenerateConfig) -> ModelOutput:
        seen.append(msgs)
        out: ModelOutput = await model.generate(msgs, tools, cfg)
        return out

    traj = asyncio.run(vtc_loop.VTCOfficialAgent(SETTINGS["interface"], settings, model, generate).run(task, box, inputs))
    assert traj.turns[0].answer == "C" and traj.tool_calls[0].ok
    first, second = seen
    assert first[1].content[0].text == "(Uploaded ![image](x_1.jpg)) " and first[1].images  # type: ignore[union-attr]
    tool = next(m for m in second if m.role == "tool")
    assert tool.text.startswith("Flipped image horizontal.\n\nEdited Image Path: ") and tool.images
