"""The 35 reference interface tools (official loop): schemas verbatim, the reference's result and
error texts, paths confined to the task workspace — on real pixels with real OpenCV."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from toolsight.benchmarks.vtc_bench.tools.interface import (
    HINT_KEY,
    interface_schemas,
    lenient_json,
    official_interface_tools,
)
from toolsight.tools.base import ArtifactStore, Toolbox, ToolResult


@pytest.fixture
def box(tmp_path: Path) -> Toolbox:
    ws = tmp_path / "ws"
    (ws / "images" / "chart").mkdir(parents=True)
    img = np.full((150, 200, 3), 30, np.uint8)
    cv2.rectangle(img, (50, 40), (120, 100), (255, 255, 255), -1)
    cv2.imwrite(str(ws / "images" / "chart" / "c_1.jpg"), img)
    store = ArtifactStore(ws)
    store.add_file(ws / "images" / "chart" / "c_1.jpg", source="input")
    b = Toolbox(official_interface_tools(), store, task_id="c_1")
    b.state[HINT_KEY] = "images/chart/c_1.jpg"
    return b


def call(box: Toolbox, name: str, args: str | dict[str, Any]) -> ToolResult:
    return asyncio.run(box.call(name, args if isinstance(args, str) else json.dumps(args), call_id="c1"))


def test_schemas_are_the_references() -> None:
    tools = interface_schemas()
    assert len(tools) == 35 and tools[0]["function"]["name"] == "opencv_resize"
    circle = next(t for t in tools if t["function"]["name"] == "opencv_draw_circle")["function"]["parameters"]
    assert circle["properties"]["param"]["required"] == []  # not toolsight's x/y/radius
    assert all('"default":' not in json.dumps(t) for t in tools)  # no default fields (toolsight's have 98)


def test_result_text_paths_and_artifacts(box: Toolbox) -> None:
    ws = box.store.workspace.resolve()
    res = call(box, "opencv_draw_line", {"image": str(ws / "images/chart/c_1.jpg"),
                                         "param": {"x1": 0, "y1": 0, "x2": 10, "y2": 10}})
    assert res.ok
    text, path = res.extra["official"]["items"][0]["text"], res.extra["official"]["items"][1]["image"]
    assert text.startswith('Drew line from (0, 0) to (10, 10). INFO: {"start": [0, 0], "end": [10, 10], '
                           '"color": [0, 255, 0], "thickness": 2}\n\nEdited Image Path: ')
    assert text.endswith(path) and path.startswith(str(ws / "workspace" / "tools" / "opencv")) and path.endswith(".png")
    assert res.artifacts and res.extra["inputs"] == [box.store.all()[0].id]
    # chained by relative path and by the produced absolute path; the angle is truncated as int()
    rel = call(box, "opencv_rotate", {"image": "images/chart/c_1.jpg", "param": {"angle": 45.9}})
    assert rel.text.startswith("Rotated by 45.0 degrees clockwise.")
    nxt = call(box, "opencv_threshold", {"image": path, "param": {"mode": "otsu"}})
    assert nxt.ok and nxt.extra["inputs"] == [res.artifacts[0].id]
    assert '"threshold": ' in nxt.text and '"invert": false' in nxt.text


def test_the_references_error_texts(box: Toolbox) -> None:
    ws = box.store.workspace.resolve()
    res = call(box, "opencv_crop", {"image": str(ws / "images/chart/c_1.jpg"),
                                    "param": {"x": 150, "y": 0, "width": 100, "height": 10}})
    assert not res.ok and res.extra["official"]["form"] == "list"
    assert res.text == ("Failed to run OpenCV operation 'crop':\nCrop region exceeds image bounds. Image size: 200x150, "
                        "crop: x=150, y=0, width=100, height=10.\n\n**Action Required**: Please call this tool again "
                        "with absolute image path")
    missing = call(box, "opencv_flip", {"image": "/nowhere/x.png", "param": {}})
    assert missing.text.endswith("with absolute image path\n Set the 'image' parameter to: images/chart/c_1.jpg")
    assert "Unable to load image from input: /nowhere/x.png..." in missing.text
    no_param = call(box, "opencv_crop", {"image": "x.jpg"})
    assert no_param.extra["official"]["form"] == "str"
    assert no_param.text.startswith("An error occurred when calling tool `opencv_crop`:\nValidationError: "
                                    "'param' is a required property\n\nFailed validating 'required' in schema:")
    assert "\nTraceback:\n  File " in no_param.text
    bad = call(box, "opencv_flip", "{not json at all")
    assert "ValueError: Parameters must be formatted as a valid JSON!" in bad.text
    assert lenient_json("{'image': 'a.jpg',}") == {"image": "a.jpg"}  # JSON5, as the driver accepts


def test_paths_outside_the_workspace_do_not_exist(box: Toolbox, tmp_path: Path) -> None:
    outside = tmp_path / "secret.png"
    cv2.imwrite(str(outside), np.zeros((20, 20, 3), np.uint8))
    for ref in (str(outside), "../secret.png", f"file://{outside}"):
        res = call(box, "opencv_flip", {"image": ref, "param": {}})
        assert not res.ok and "Unable to load image from input" in res.text, ref
    asked = call(box, "opencv_flip", {"image": "images/chart/c_1.jpg", "param": {}, "work_dir": str(tmp_path / "out")})
    assert asked.ok and not (tmp_path / "out").exists()  # a work_dir outside the workspace is not used
