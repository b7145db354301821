"""The classical fallback detector on generated scenes: one box per object, shape hints that tell the
toy shapes apart, and an output that says it is not a semantic detector."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import cv2
import numpy as np

from toolsight.benchmarks.phystoolbench.generate import SIZE, _draw
from toolsight.perception import ImageInput, get_detector
from toolsight.perception.classical import detect_blobs


def _objects() -> list[dict[str, object]]:
    return [
        {"shape": "disk", "broken": False, "size": 120.0, "angle": 0.0, "colour": (214, 48, 49), "cx": 150.0,
         "cy": 150.0, "number": 1},
        {"shape": "triangle", "broken": True, "size": 150.0, "angle": 0.3, "colour": (9, 132, 227), "cx": 560.0,
         "cy": 170.0, "number": 2},
        {"shape": "square", "broken": False, "size": 118.0, "angle": 0.5, "colour": (0, 160, 110), "cx": 170.0,
         "cy": 560.0, "number": 3},
        {"shape": "bar", "broken": False, "size": 230.0, "angle": 1.0, "colour": (230, 126, 34), "cx": 540.0,
         "cy": 560.0, "number": 4},
    ]


def test_one_box_per_object_with_shape_hints() -> None:
    objs = _objects()
    img = cv2.cvtColor(np.asarray(_draw(objs)), cv2.COLOR_RGB2BGR)
    res = detect_blobs(ImageInput(img), ["wrench"])
    assert res.backend == "classical" and res.semantic is False
    assert "not a semantic detector" in res.note and res.terms == ["wrench"]
    assert (res.width, res.height) == (SIZE, SIZE)
    assert len(res.detections) == len(objs)
    by_centre = {}
    for d in res.detections:
        assert d.label == "object"
        x1, y1, x2, y2 = d.box
        hit = [o for o in objs if x1 <= float(o["cx"]) <= x2 and y1 <= float(o["cy"]) <= y2]  # type: ignore[arg-type]
        assert len(hit) == 1, d.box
        by_centre[hit[0]["shape"]] = d.attributes
    assert float(by_centre["disk"]["circularity"]) > 0.8
    assert by_centre["triangle"]["vertices"] == 3
    assert by_centre["square"]["vertices"] == 4 and float(by_centre["square"]["elongation"]) < 1.5
    assert float(by_centre["bar"]["elongation"]) > 2.5
    assert int(by_centre["triangle"]["saturation"]) < 40 < int(by_centre["disk"]["saturation"])  # grey = broken


def test_blank_image_has_no_detections_and_large_images_scale_back() -> None:
    blank = np.full((300, 300, 3), 200, np.uint8)
    assert detect_blobs(ImageInput(blank), []).detections == []
    big = np.full((1200, 1600, 3), 230, np.uint8)
    cv2.rectangle(big, (400, 300), (799, 699), (20, 20, 200), -1)
    (d,) = detect_blobs(ImageInput(big), []).detections
    assert all(abs(a - b) <= 6 for a, b in zip(d.box, (400, 300, 800, 700), strict=True)), d.box


def test_default_backend_is_classical(monkeypatch, scenes: Path) -> None:  # type: ignore[no-untyped-def]
    for k in ("TOOLSIGHT_DETECTOR", "TOOLSIGHT_DETECT_REPLAY", "TOOLSIGHT_DETECT_ONNX", "DDS_CLOUDAPI_TOKEN",
              "TOOLSIGHT_GDINO_URL"):
        monkeypatch.delenv(k, raising=False)
    task = json.loads((scenes / "tasks.jsonl").read_text().splitlines()[0])
    img = cv2.imread(str(scenes / task["turns"][0]["images"][0]["path"]))
    assert img is not None
    det = get_detector()
    res = asyncio.run(det.detect(ImageInput(img), []))
    assert det.name == "classical" and len(res.detections) == len(task["turns"][0]["meta"]["objects"])
