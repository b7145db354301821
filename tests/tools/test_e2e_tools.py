"""End to end through the agent loop with real tools on real pixels.

A step model (it decides only from what the loop shows it: the tool texts with the produced image
ids) chains OpenCV interface operations rotate -> crop -> threshold -> connected components and
answers with the count the last tool reported; another crops and rotates an image with sandboxed
Python (`python_image_processing`) and sees the result.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from pathlib import Path

import cv2
import numpy as np

from enginekit import StepModel, call, imread, say
from toolsight.agents.inputs import register_inputs
from toolsight.agents.loop import Agent
from toolsight.agents.settings import AgentSettings
from toolsight.models.base import Message
from toolsight.tasks.schema import Task
from toolsight.tools.base import ArtifactStore, Toolbox, ToolSpec
from toolsight.tools.registry import build_tools

IMG = re.compile(r"img-[0-9a-f]{12}")


def _scene(path: Path) -> None:
    """Five white blobs on black, the whole image rotated 90 degrees counter-clockwise."""
    img = np.zeros((200, 300, 3), np.uint8)
    for i in range(5):
        cv2.circle(img, (30 + 55 * i, 100), 15, (255, 255, 255), -1, cv2.LINE_AA)  # grey edges: threshold changes them
    cv2.circle(img, (290, 10), 4, (255, 255, 255), -1)  # a sixth blob the crop must remove
    cv2.imwrite(str(path), cv2.rotate(img, cv2.ROTATE_90_COUNTERCLOCKWISE))


def _run(tmp_path: Path, model: StepModel, toolsets: list[str]) -> tuple[object, Toolbox]:
    ds = tmp_path / "ds"
    ds.mkdir()
    _scene(ds / "scene.png")
    task = Task.model_validate({"id": "e2e", "turns": [{"prompt": "How many blobs?", "images": [{"path": "scene.png"}]}]})
    box = Toolbox(build_tools(toolsets), ArtifactStore(tmp_path / "ws"), task.id)
    inputs = register_inputs(task, ds, box)
    settings = AgentSettings(tools=toolsets, answer_format="answer_tag", max_rounds=10)
    traj = asyncio.run(Agent(model, settings).run(task, box, inputs))
    asyncio.run(box.aclose())
    return traj, box


def _last_image(msgs: list[Message]) -> str:
    for m in reversed(msgs):
        found = IMG.findall(m.text) + [p.artifact_id or "" for p in m.images]
        found = [f for f in found if f]
        if found:
            return str(found[-1])
    raise AssertionError("no image id in the conversation")


def test_interface_chain_counts_components(tmp_path: Path) -> None:
    plan = [
        ("opencv_rotate", {"angle": 90}),  # clockwise in the reference implementation
        ("opencv_crop", {"x": 0, "y": 50, "width": 280, "height": 100}),
        ("opencv_threshold", {"mode": "binary", "threshold_value": 127}),
        ("opencv_connected_components_with_stats", {"threshold_mode": "binary", "threshold_value": 127}),
    ]

    def policy(msgs: list[Message], tools: list[ToolSpec]) -> object:
        step = sum(1 for m in msgs if m.role == "tool")
        if step < len(plan):
            name, param = plan[step]
            return call(name, {"image": _last_image(msgs), "param": param}, f"c{step}")
        info = json.loads(re.search(r"INFO:\s*(\{.*\})", [m for m in msgs if m.role == "tool"][-1].text, re.S).group(1))  # type: ignore[union-attr]
        return say(f"<answer>{info['total_components']}</answer>")

    traj, box = _run(tmp_path, StepModel(policy), ["opencv"])
    calls = traj.tool_calls  # type: ignore[attr-defined]
    assert [c.name for c in calls] == [p[0] for p in plan] and all(c.ok for c in calls), [c.error for c in calls]
    assert traj.turns[0].answer == "5"  # type: ignore[attr-defined]
    # provenance: each output was made from the previous one, back to the input image
    chain = [box.store.get(c.artifacts[0]) for c in calls]
    assert all(a is not None for a in chain)
    assert chain[0].parents[0] == next(a.id for a in box.store.all() if a.source == "input")  # type: ignore[union-attr]
    for prev, nxt in itertools.pairwise(chain):
        assert nxt.parents == (prev.id,)  # type: ignore[union-attr]


def test_python_image_processing_crop_rotate_is_seen(tmp_path: Path) -> None:
    code = (
        "from PIL import Image\n"
        "im = Image.open('scene.png')\n"
        "im = im.crop((0, 0, 100, 150)).rotate(90, expand=True)\n"
        "im.save('transformed_image_0.png')\n"
        "print('size', im.size)\n"
    )

    def policy(msgs: list[Message], tools: list[ToolSpec]) -> object:
        if not any(m.role == "tool" for m in msgs):
            return call("python_image_processing", {"code": code})
        seen = [p for p in msgs[-1].images]
        return say(f"<answer>{len(seen)} image</answer>")

    model = StepModel(policy)
    traj, box = _run(tmp_path, model, ["python_image_processing"])
    c = traj.tool_calls[0]  # type: ignore[attr-defined]
    assert c.ok, c.error
    assert "size (150, 100)" in c.text
    produced = box.store.get(c.artifacts[0])
    assert produced is not None and (produced.width, produced.height) == (150, 100)
    src = next(a for a in box.store.all() if a.source == "input")
    assert produced.parents == (src.id,)
    expected = np.rot90(imread(box.store.path(src))[0:150, 0:100])
    assert np.array_equal(imread(box.store.path(produced)), expected)
    assert traj.turns[0].answer == "1 image"  # type: ignore[attr-defined]
    assert model.seen[1][-1].images[0].artifact_id == produced.id
