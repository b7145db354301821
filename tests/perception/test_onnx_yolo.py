"""The local ONNX detector's YOLO pre/post-processing, on a tiny graph built in the test (onnx.helper):
letterbox and its inverse, BGR -> RGB, thresholds, NMS, class names and term filtering."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from perceptionkit import tiny_yolo

from toolsight.perception import ImageInput, PerceptionError
from toolsight.perception.onnx_yolo import Letterbox, OnnxDetector, decode, letterbox, parse_names


def _scene() -> np.ndarray:
    img = np.zeros((100, 200, 3), np.uint8)
    img[30:70, 120:160] = (0, 0, 255)  # red (BGR)
    img[30:70, 20:60] = (255, 0, 0)  # blue: invisible to a red-channel detector if channels are swapped right
    return img


def test_letterbox_keeps_aspect_and_pads_centred() -> None:
    img = np.zeros((100, 200, 3), np.uint8)
    img[:, :, 2] = 255  # pure red
    tensor, lb = letterbox(img, 64)
    assert tensor.shape == (1, 3, 64, 64) and tensor.dtype == np.float32
    assert lb.scale == pytest.approx(0.32) and lb.pad_x == 0 and lb.pad_y == 16
    assert tensor[0, 0, 32, 32] == pytest.approx(1.0)  # R channel first after BGR -> RGB
    assert tensor[0, 2, 32, 32] == pytest.approx(0.0)
    assert tensor[0, 0, 5, 32] == pytest.approx(114 / 255)  # grey padding above the image
    back = lb.to_original(np.array([[0.0, 16.0, 64.0, 48.0]]), 200, 100)
    assert back.tolist() == [[0.0, 0.0, 200.0, 100.0]]


def test_detections_land_on_the_red_object_in_original_pixels(tmp_path: Path) -> None:
    det = OnnxDetector(tiny_yolo(tmp_path / "m.onnx"), conf=0.5)
    assert det.size == 64 and det.names == ["red thing"]
    res = det.run(ImageInput(_scene()), [])
    assert res.backend == "onnx" and res.semantic and res.width == 200
    assert res.detections, "the red square must be found"
    for d in res.detections:
        assert d.label == "red thing" and 0.5 <= d.score <= 1.0
        cx, cy = (d.box[0] + d.box[2]) / 2, (d.box[1] + d.box[3]) / 2
        assert 115 <= cx <= 165 and 25 <= cy <= 75, d.box  # on the red square, never the blue one
    xs = sorted({d.box[0] for d in res.detections})
    assert xs == [125.0]  # the one fully red cell column, mapped back through scale 0.32


def test_terms_filter_classes_and_explain_a_miss(tmp_path: Path) -> None:
    det = OnnxDetector(tiny_yolo(tmp_path / "m.onnx"), conf=0.5)
    assert det.run(ImageInput(_scene()), ["Red"]).detections
    miss = det.run(ImageInput(_scene()), ["hammer"])
    assert miss.detections == [] and "red thing" in miss.note


def test_overlapping_boxes_are_suppressed(tmp_path: Path) -> None:
    # boxes three cells wide overlap their neighbours: NMS keeps one per cluster
    wide = OnnxDetector(tiny_yolo(tmp_path / "w.onnx", box_cells=3), conf=0.5)
    narrow = OnnxDetector(tiny_yolo(tmp_path / "n.onnx", box_cells=1), conf=0.5)
    img = _scene()
    assert len(wide.run(ImageInput(img), []).detections) < len(narrow.run(ImageInput(img), []).detections)


def test_decode_v5_layout_with_objectness() -> None:
    lb = Letterbox(scale=1.0, pad_x=0.0, pad_y=0.0, size=100)
    rows = np.array([[[50, 50, 20, 20, 0.9, 0.1, 0.8],    # class 1, score 0.72
                      [52, 50, 20, 20, 0.9, 0.1, 0.7],    # overlaps the first: suppressed
                      [10, 10, 4, 4, 0.2, 0.9, 0.1]]],    # 0.18 < conf
                    np.float32)
    dets = decode(rows, lb, 100, 100, ["a", "b"], conf=0.25, layout="v5")
    assert [(d.label, round(d.score, 2), d.box) for d in dets] == [("b", 0.72, (40.0, 40.0, 60.0, 60.0))]


def test_names_from_metadata_file_or_default() -> None:
    assert parse_names("{0: 'person', 1: 'bike'}", 3) == ["person", "bike", "class_2"]
    assert parse_names("hammer\nwrench\n", 2) == ["hammer", "wrench"]
    assert parse_names(None, 2) == ["class_0", "class_1"]


def test_bad_weights_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PerceptionError, match="not found"):
        OnnxDetector(tmp_path / "missing.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(PerceptionError, match="not a loadable ONNX model"):
        OnnxDetector(bad)
