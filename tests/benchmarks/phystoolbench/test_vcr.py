"""The VCR agent end to end against the scripted server (real OpenAI SDK, 127.0.0.1) with the replay
detector: the five stages in order with the paper's system prompt, crops as artifacts with provenance
(shown by the viewer), the n Stage-4 calls sent concurrently (observed at the server), the no-crop
path, and `--agent vcr` on another benchmark's dataset through the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from toolsight.agents.inputs import register_inputs
from toolsight.agents.settings import AgentSettings
from toolsight.agents.vcr import NO_OBJECTS, SYSTEM_PROMPT, VCRAgent, parse_terms
from toolsight.models.base import GenerateConfig, Message, ModelOutput
from toolsight.models.registry import get_model
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer
from toolsight.tasks.schema import ImageRef, Task, Turn
from toolsight.tools.base import ArtifactStore, Toolbox, ToolSpec

BOXES = [[20.0, 30.0, 90.0, 110.0], [120.0, 40.0, 200.0, 100.0], [60.0, 130.0, 150.0, 190.0]]
FINAL = "### Thinking Process\nGlobal: three tools. Local: crop 2 is cracked.\n### Answer\n1, 3"


def _data(root: Path) -> Path:
    """One M3-style image with the authors' detection file beside it, one image without."""
    ann = root / "annotated"
    (ann / "0001_0_DINOX_CROPPED").mkdir(parents=True)
    img = np.full((200, 240, 3), 225, np.uint8)
    for (x1, y1, x2, y2), c in zip(BOXES, [(0, 0, 200), (200, 0, 0), (0, 160, 0)], strict=True):
        cv2.rectangle(img, (int(x1), int(y1)), (int(x2), int(y2)), c, -1)
    cv2.imwrite(str(ann / "0001_0.png"), img)
    cv2.imwrite(str(ann / "0002_0.png"), np.full((50, 60, 3), 10, np.uint8))
    dets = [{"index": i + 1, "label": "wrench, hammer", "confidence": 0.7 - 0.1 * i, "bbox": b}
            for i, b in enumerate(BOXES)]
    (ann / "0001_0_DINOX_CROPPED" / "detection_and_crop_results.json").write_text(json.dumps(
        {"query": "wrench, hammer", "total_detections": 3, "detections": dets, "original_image": "x/0001_0.png"}))
    return root


def _task(tid: str, image: str) -> Task:
    prompt = f"[task:{tid}] Which wrench can I use?\nNoted that ... ### Answer\n1, 2, 3 ... or \"None\""
    return Task(id=tid, benchmark="phystoolbench", turns=[Turn(prompt=prompt, images=[ImageRef(path=image)],
                                                               answer="1, 3", meta={"cot_prompt": prompt})])


def _script() -> Script:
    stage4 = {"text": "This crop shows a wrench; its jaw is intact.", "seconds": 1.5}
    return Script.model_validate({"steps": [{"text": "unused"}], "tasks": {
        "t1": [{"text": "Global: a workbench with three numbered tools."},
               {"text": "Detection is needed to inspect each tool.\n[\"wrench\", \"hammer\"]"},
               stage4, stage4, stage4, {"text": FINAL}],
        "t2": [{"text": "Global: a dark image."}, {"text": "Nothing to crop.\n[]"}, {"text": FINAL}]}})


@pytest.fixture
def replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = _data(tmp_path / "data")
    monkeypatch.setenv("TOOLSIGHT_DETECT_REPLAY", str(root))
    monkeypatch.delenv("TOOLSIGHT_DETECTOR", raising=False)
    return root


def test_five_stages_with_crops_and_parallel_stage4(replay: Path, tmp_path: Path) -> None:
    settings = AgentSettings(name="vcr", agent="vcr", user_template="{cot_prompt}", answer_format="raw",
                             generate=GenerateConfig(temperature=0.0, max_tokens=8192))
    with ScriptedServer(_script()) as srv:
        model = get_model("openai/vlm", base_url=srv.openai_base_url)
        stage4_seen_at_first_reply: list[int] = []

        async def generate(msgs: list[Message], tools: list[ToolSpec], cfg: GenerateConfig) -> ModelOutput:
            out = await model.generate(msgs, tools, cfg)
            if "[Stage 4: In-Depth" in msgs[-1].text and not stage4_seen_at_first_reply:
                stage4_seen_at_first_reply.append(sum("[Stage 4: In-Depth" in json.dumps(q.body) for q in srv.requests))
            return out

        async def run(task: Task) -> tuple[Toolbox, object]:
            box = Toolbox([], ArtifactStore(tmp_path / "ws" / task.id), task.id)
            inputs = register_inputs(task, replay, box)
            traj = await VCRAgent(model, settings, generate).run(task, box, inputs)
            await model.aclose()
            return box, traj

        box, traj = asyncio.run(run(_task("t1", "annotated/0001_0.png")))
        requests = [q for q in srv.requests if q.task == "t1"]
    # the n = 3 Stage-4 requests were all at the server before the first of them was answered
    assert stage4_seen_at_first_reply == [3]
    assert len(requests) == 3 + 3  # n + 3 model calls
    for q in requests:
        assert q.body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
        assert q.body["temperature"] == 0.0 and "tools" not in q.body
    s4 = [q for q in requests if "[Stage 4: In-Depth" in json.dumps(q.body)]
    assert len(s4) == 3 and all(len(q.body["messages"]) == 2 for q in s4)  # independent: system + one crop
    final_req = requests[-1].body["messages"]
    assert "[Stage 5" in final_req[-1]["content"] and "This crop shows a wrench" in final_req[-1]["content"]
    assert "Global: a workbench" in json.dumps(final_req)  # the master conversation carries Stage 1

    assert [s.stage for s in traj.stages] == [1, 2, 3, 4, 5]  # type: ignore[attr-defined]
    assert traj.stages[1].extra["terms"] == ["wrench", "hammer"]  # type: ignore[attr-defined]
    (call,) = traj.tool_calls  # type: ignore[attr-defined]
    assert call.name == "detect_and_crop_objects" and call.ok and json.loads(call.arguments)["terms"] == ["wrench", "hammer"]
    assert call.extra["backend"] == "replay" and len(call.artifacts) == 3
    inp = next(a for a in traj.artifacts if a.source == "input")  # type: ignore[attr-defined]
    crops = [box.store.get(i) for i in call.artifacts]
    assert all(c is not None and c.parents == (inp.id,) for c in crops)
    assert [(c.width, c.height) for c in crops if c] == [(90, 100), (100, 80), (110, 80)]  # box + 10 px margins, clipped
    assert traj.stages[3].inputs == call.artifacts and traj.turns[0].response == FINAL  # type: ignore[attr-defined]
    assert traj.model_calls == 6 and traj.turns[0].seen_images == [inp.id, *call.artifacts]  # type: ignore[attr-defined]
    s4_calls = traj.stages[3].extra["calls"]  # type: ignore[attr-defined]
    assert max(c["started_s"] for c in s4_calls) < min(c["ended_s"] for c in s4_calls)  # overlapping in time


def test_no_crops_goes_back_to_the_original_image(replay: Path, tmp_path: Path) -> None:
    settings = AgentSettings(name="vcr", agent="vcr", user_template="{cot_prompt}")
    with ScriptedServer(_script()) as srv:
        model = get_model("openai/vlm", base_url=srv.openai_base_url)

        async def run() -> object:
            task = _task("t2", "annotated/0002_0.png")
            box = Toolbox([], ArtifactStore(tmp_path / "ws2"), task.id)
            traj = await VCRAgent(model, settings, model.generate).run(task, box, register_inputs(task, replay, box))
            await model.aclose()
            return traj

        traj = asyncio.run(run())
        last = srv.requests[-1].body["messages"][-1]["content"]
    assert len(srv.requests) == 3 and NO_OBJECTS in last and "shift the focus back to the original image" in last
    assert "no recorded detections" in last
    assert traj.stages[3].model_calls == 0 and traj.turns[0].response == FINAL  # type: ignore[attr-defined]


def test_parse_terms() -> None:
    assert parse_terms('Needed.\n["knife", " board "]') == (["knife", "board"], True)
    assert parse_terms("use [1, 2] then [\"a\"] and [bad") == (["a"], True)
    assert parse_terms("no list here") == ([], False)


def test_agent_vcr_on_another_benchmark_via_cli(tmp_path: Path) -> None:
    from toolsight.benchmarks.phystoolbench.generate import _draw

    root = tmp_path / "ds"
    (root / "images").mkdir(parents=True)
    objs = [{"shape": "disk", "broken": False, "size": 120.0, "angle": 0.0, "colour": (214, 48, 49), "cx": 150.0,
             "cy": 150.0, "number": 1},
            {"shape": "square", "broken": False, "size": 118.0, "angle": 0.4, "colour": (9, 132, 227),
             "cx": 500.0, "cy": 500.0, "number": 2}]
    _draw(objs).save(root / "images" / "a.png")
    line = {"id": "g1", "turns": [{"prompt": "Which object is round?", "images": [{"path": "images/a.png"}],
                                    "answer": "A", "options": {"A": "1", "B": "2"}, "answer_type": "choice"}]}
    (root / "tasks.jsonl").write_text(json.dumps(line) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("TOOLSIGHT_DETECT")}
    run = tmp_path / "run"
    with ScriptedServer(Script.answer('Round one.\n["disk"]\n<answer>A</answer>')) as srv:
        r = subprocess.run([sys.executable, "-m", "toolsight", "run", str(root), "--setting", "direct", "--agent", "vcr",
                            "--model", "openai/vlm", "--base-url", srv.openai_base_url, "--out", str(run)],
                           capture_output=True, text=True, env=env, timeout=300)
        n_requests = len(srv.requests)
    assert r.returncode == 0, r.stderr
    rec = json.loads((run / "records.jsonl").read_text())
    traj = rec["trajectory"]
    assert rec["score"]["passed"] is True and [s["stage"] for s in traj["stages"]] == [1, 2, 3, 4, 5]
    assert n_requests == 2 + 3 and len(traj["tool_calls"][0]["artifacts"]) == 2  # classical fallback: 2 blobs
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["agent_settings"]["agent"] == "vcr" and manifest["backends"]["detect_and_crop_objects"]["backend"] == "classical"
    page = next((run / "viewer").rglob("g1*.html")).read_text()
    for crop in traj["tool_calls"][0]["artifacts"]:
        assert crop in page  # the viewer shows the crops
    bad = subprocess.run([sys.executable, "-m", "toolsight", "run", str(root), "--agent", "nope", "--model", "reference"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2 and "--agent 'nope': unknown agent" in bad.stderr and "Traceback" not in bad.stderr
