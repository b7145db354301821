"""VisualToolBench end to end through the CLI against the scripted server on 127.0.0.1 (official loop).

A multi-turn task: turn 1 runs `python_image_processing`, turn 2 the calculator; the requests are
checked for the reference driver's layout — system prompt, text-only history with the **gold** answer,
only the turn's first image as JPEG, `str(dict)` tool results, the transformed image in a following user
message, the image list growing in the tool description and restarting each turn — and the rubric
judge gets the official prompt in JSON mode. Both official data layouts are run.
"""

from __future__ import annotations

import ast
import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from vtbkit import official_rows, write_converted, write_parquet

from toolsight.benchmarks.visualtoolbench import prompts as P
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer

CROP = ("from PIL import Image\nimg = Image.open('turn_0_image_0.png')\n"
        "img.crop((0, 0, 40, 30)).save(str(PROCESSED_IMAGE_SAVE_PATH) + '/transformed_image_0.png')\nprint('cropped')")
MET = json.dumps({"explanation": "fine", "judge_result": "Met"})


def _script() -> Script:
    return Script.model_validate({"steps": [{"text": MET}], "tasks": {
        "mt-1": [
            {"tool_calls": [{"name": "python_image_processing", "arguments": {"code": CROP}, "id": "call_img"}]},
            {"text": "MODEL-ONE: the humerus."},
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": "2^3"}, "id": "call_calc"}]},
            {"text": "MODEL-TWO: none."},
            {"text": MET},
        ],
        "st-1": [{"text": "It is 12 m/s."}, {"text": MET}],
    }})


def _ts(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["COLUMNS"] = "250"
    env["TOOLSIGHT_WEB_KEYLESS"] = "1"  # live web by default (no corpus): accepted; these scripts never search
    return subprocess.run([sys.executable, "-m", "toolsight", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def _content(m: dict[str, Any]) -> list[dict[str, Any]]:
    c = m["content"]
    return [{"type": "text", "text": c}] if isinstance(c, str) else c


def _image_list(body: dict[str, Any]) -> str:
    tool = next(t for t in body["tools"] if t["function"]["name"] == "python_image_processing")
    desc: str = tool["function"]["description"]
    return desc.split("file list: ", 1)[1].split(".\n", 1)[0]


def _run(tmp_path: Path, data: Path, *extra: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    run = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    with ScriptedServer(_script()) as srv:
        r = _ts("run", "visualtoolbench", "--data", str(data), "--setting", "strong", "--model", "openai/vlm",
                "--base-url", srv.openai_base_url, "--judge", "openai/judge", "--judge-base-url",
                srv.openai_base_url, "--out", str(run), "--no-report", *extra)
        reqs = [q.body for q in srv.requests if q.task == "mt-1"]
    assert r.returncode == 0, r.stderr
    recs = {x["task_id"]: x for x in map(json.loads, (run / "records.jsonl").read_text().splitlines())}
    model = [b for b in reqs if b["model"] == "vlm"]
    judge = [b for b in reqs if b["model"] == "judge"]
    return recs, model, judge


@pytest.mark.parametrize("layout", ["converted", "parquet"])
def test_multi_turn_official_loop_with_gold_history(tmp_path: Path, layout: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIGHT_CACHE", str(tmp_path / "cache"))
    if layout == "converted":
        data = write_converted(official_rows(), tmp_path / "vtb")
    else:
        data = write_parquet(official_rows(), tmp_path / "hf" / "data" / "test-00000.parquet").parent.parent
    recs, model, judge = _run(tmp_path, data)
    assert len(model) == 4
    r0, r1, r2, r3 = model
    # turn 1: system prompt, then [text, image] with only the first image, as JPEG
    assert r0["messages"][0] == {"role": "system", "content": P.SYSTEM_HIGH}
    user = _content(r0["messages"][1])
    assert [p["type"] for p in user] == ["text", "image_url"]
    assert user[0]["text"] == "[task:mt-1] Where is the fracture?"
    url = user[1]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    assert base64.b64decode(url.split(",", 1)[1])[:3] == b"\xff\xd8\xff"
    assert [t["function"]["name"] for t in r0["tools"]] == ["python_image_processing", "python_interpreter",
                                                           "google_search", "browser_get_page_text",
                                                           "historical_weather", "calculator"]
    assert r0["temperature"] == 0.0
    first_list = ast.literal_eval(_image_list(r0))  # the reference shows the Python repr of the path list
    assert len(first_list) == 1 and first_list[0].endswith("/turn_0/turn_0_image_0.png")
    # the tool result is str(dict); the new image follows in a user message; the list has grown
    tool_msg, img_msg = r1["messages"][-2], r1["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_img"
    assert tool_msg["content"].startswith("{'ok': 'true', 'stdout': 'cropped\\n', 'stderr': '', 'output_path': '")
    assert [p["type"] for p in _content(img_msg)] == ["text", "image_url"]
    assert _content(img_msg)[0]["text"] == "Here are the transformed images from the tool call call_img."
    grown = ast.literal_eval(_image_list(r1))
    assert grown[0] == first_list[0] and grown[1].endswith("/turn_0/transformed_image_0.png")
    # turn 2: a fresh loop; history = turn-1 prompt + the GOLD answer, text only; only turn 2's first image
    msgs = r2["messages"]
    assert msgs[0]["role"] == "system"
    assert msgs[1] == {"role": "user", "content": "[task:mt-1] Where is the fracture?"}
    assert msgs[2] == {"role": "assistant", "content": "GOLD-ONE: the proximal humerus."}
    assert [p["type"] for p in _content(msgs[3])] == ["text", "image_url"] and len(msgs) == 4
    second_list = ast.literal_eval(_image_list(r2))
    assert len(second_list) == 1 and second_list[0].endswith("/turn_1/turn_1_image_0.png")
    assert r3["messages"][-1]["content"] == (
        "{'result': 'Error', 'expression': '2^3', 'status': 'error', 'error': \"<class 'ast.BitXor'>\"}")
    rec = recs["mt-1"]
    assert [t["response"] for t in rec["trajectory"]["turns"]] == ["MODEL-ONE: the humerus.", "MODEL-TWO: none."]
    calls = rec["trajectory"]["tool_calls"]
    assert [(c["name"], c["turn"], c["ok"]) for c in calls] == [("python_image_processing", 0, True),
                                                                ("calculator", 1, False)]
    assert len(calls[0]["artifacts"]) == 1 and calls[0]["inputs"]
    # the judge: one official prompt per rubric, JSON mode, no temperature (official scorer mode)
    assert len(judge) == 2
    for b in judge:
        assert b["response_format"] == {"type": "json_object"} and "temperature" not in b
        assert "You are an expert evaluator tasked with judging" in b["messages"][0]["content"]
    assert rec["score"]["value"] == 1.0 and rec["score"]["passed"] is True
    assert [s["value"] for s in rec["score"]["turns"]] == [1.0, 1.0]  # per-turn results kept
    assert recs["st-1"]["score"]["passed"] is True


def test_history_model_uses_the_models_answer(tmp_path: Path) -> None:
    data = write_converted(official_rows(), tmp_path / "vtb")
    _, model, _ = _run(tmp_path, data, "--history", "model")
    assert model[2]["messages"][2] == {"role": "assistant", "content": "MODEL-ONE: the humerus."}


def test_bad_history_flag_is_one_line(tmp_path: Path) -> None:
    r = _ts("run", "visualtoolbench", "--data", str(tmp_path), "--model", "reference", "--history", "gld")
    assert r.returncode == 2 and "--history 'gld'" in r.stderr and "Traceback" not in r.stderr
