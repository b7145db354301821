"""The perception tools through a real Toolbox: crops become artifacts with provenance, OCR reads a
crop's number, bad arguments come back as messages the model can read, and both tools are listed."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import pytest
from perceptionkit import scene_tasks

from toolsight.tools.base import ArtifactStore, Toolbox
from toolsight.tools.perception import CROP_MARGIN, perception_tools


@pytest.fixture(autouse=True)
def _classical(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("TOOLSIGHT_DETECTOR", "TOOLSIGHT_DETECT_REPLAY", "TOOLSIGHT_DETECT_ONNX", "DDS_CLOUDAPI_TOKEN",
              "TOOLSIGHT_GDINO_URL"):
        monkeypatch.delenv(k, raising=False)


def _box(scenes: Path, tmp_path: Path) -> tuple[Toolbox, str, dict[str, object]]:
    task = scene_tasks(scenes)[0]
    turn = task["turns"][0]  # type: ignore[index]
    src = scenes / turn["images"][0]["path"]
    store = ArtifactStore(tmp_path / "ws")
    (store.workspace / src.name).write_bytes(src.read_bytes())
    store.add_file(store.workspace / src.name, source="input", keep_name=True)
    return Toolbox(perception_tools(), store, "t"), src.name, turn


def test_detect_and_crop_then_ocr_a_crop(scenes: Path, tmp_path: Path) -> None:
    box, name, turn = _box(scenes, tmp_path)
    res = asyncio.run(box.call("detect_and_crop_objects", json.dumps({"image": name, "terms": ["wrench"]})))
    assert res.ok, res.error
    payload = json.loads(res.text)
    objects = turn["meta"]["objects"]  # type: ignore[index]
    assert payload["backend"] == "classical" and payload["semantic"] is False and "not a semantic" in payload["note"]
    assert payload["total_detections"] == len(objects) == len(res.artifacts)
    original = payload["original_image"]
    img = cv2.imread(str(tmp_path / "ws" / name))
    assert img is not None
    w = img.shape[1]
    for d, art in zip(payload["detections"], res.artifacts, strict=True):
        assert art.parents == (original,) and art.tool == "detect_and_crop_objects" and d["cropped_image"] == art.id
        x1, _, x2, _ = d["bbox"]
        want_w = min(w, int(x2 + CROP_MARGIN)) - max(0, int(x1 - CROP_MARGIN))
        assert abs(art.width - want_w) <= 1 and d["crop_size"] == [art.width, art.height]
    assert res.extra["backend"] == "classical" and res.extra["inputs"] == [original]
    numbers = set()
    for art in res.artifacts:
        r = asyncio.run(box.call("ocr", {"image": art.id}))
        assert r.ok, r.error
        numbers.add(json.loads(r.text)["text"].strip())
    assert numbers == {str(o["number"]) for o in objects}  # type: ignore[index]


@pytest.mark.parametrize(("args", "message"), [
    ({}, "missing required argument 'image'"),
    ({"image": "nope.png"}, "unknown image 'nope.png'"),
    ({"image": "X", "terms": [1, 2]}, "'terms' must be a list of strings"),
    ({"image": "X", "max_objects": 0}, "'max_objects' must be an integer from 1 to 50"),
    ({"image": "X", "colour": "red"}, "unknown argument(s) colour"),
])
def test_bad_arguments_are_readable_failures(scenes: Path, tmp_path: Path, args: dict[str, object],
                                             message: str) -> None:
    box, name, _ = _box(scenes, tmp_path)
    args = {k: (name if v == "X" else v) for k, v in args.items()}
    res = asyncio.run(box.call("detect_and_crop_objects", json.dumps(args)))
    assert not res.ok and message in (res.error or "")
    assert not asyncio.run(box.call("ocr", "{not json")).ok


def test_a_backend_failure_is_a_readable_failure(scenes: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIGHT_DETECTOR", "onnx")  # selected but no weights configured
    box, name, _ = _box(scenes, tmp_path)
    res = asyncio.run(box.call("detect_and_crop_objects", {"image": name}))
    assert not res.ok and "TOOLSIGHT_DETECT_ONNX" in (res.error or "")


def test_listed_by_the_cli() -> None:
    env = {**os.environ, "COLUMNS": "200"}
    out = subprocess.run([sys.executable, "-m", "toolsight", "list", "tools"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "detect_and_crop_objects" in out.stdout and "\n    ocr" in out.stdout
