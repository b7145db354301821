"""TIR-Bench settings as the loop sees them, and the predefined rotate_image tool on real pixels."""

from __future__ import annotations

import asyncio
from pathlib import Path

import cv2
import numpy as np

from enginekit import imread
from toolsight.benchmarks.tir_bench.benchmark import tir_settings
from toolsight.benchmarks.tir_bench.tools import rotate_image
from toolsight.tools.base import ArtifactStore, Toolbox


def test_settings_names_tools_and_strategy_text() -> None:
    s = tir_settings("toolsight")
    assert set(s) == {"direct", "code", "code-s2", "code-s3", "function", "function-s2", "function-s3",
                      "pyvision", "deepeyes"}  # the last two: Table 2's agent-framework rows
    assert s["direct"].tools == [] and s["code"].tools == ["python"] and s["function"].tools == ["rotate_image"]
    assert s["code-s2"].user_template == "{prompt}\nPlease consider to write code to process the image."
    assert s["function"].tool_image_note == "The rotated image is attached."
    assert {x.loop for x in s.values()} == {"toolsight"}
    official = tir_settings()  # the default: the paper's protocol
    assert {x.loop for x in official.values()} == {"official"}
    assert official["code"].tools == ["tir_code"]  # a stateful interpreter (the sandbox kernel), as in the paper
    assert official["code"].max_images_in_context is None and official["code"].max_image_pixels is None
    assert official["code"].time_limit_s is None


def test_rotate_image_turns_the_original_clockwise(tmp_path: Path) -> None:
    img = np.zeros((40, 60, 3), np.uint8)
    img[0:10, 0:10] = 255  # a white block in the top-left corner
    cv2.imwrite(str(tmp_path / "in.png"), img)
    store = ArtifactStore(tmp_path / "ws")
    src = store.add_file(tmp_path / "in.png", source="input")
    box = Toolbox([rotate_image], store)
    r = asyncio.run(box.call("rotate_image", {"degrees": 90}))
    assert r.ok and r.artifacts[0].parents == (src.id,)
    out = imread(store.path(r.artifacts[0]))
    assert out.shape[:2] == (60, 40)
    assert out[2:8, 32:38].mean() > 200  # clockwise: the top-left block moves to the top-right
    assert out[2:8, 2:8].mean() < 20
    bad = asyncio.run(box.call("rotate_image", {"degrees": "a lot"}))
    assert not bad.ok and "degrees" in (bad.error or "")
