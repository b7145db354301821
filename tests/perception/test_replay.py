"""The replay detector on files in the authors' released format: matched by file hash, by pixels
(re-encoded), or by a unique name; boxes rescaled; a missing recording or a bad file said clearly."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from toolsight.perception import ImageInput, PerceptionError
from toolsight.perception.replay import ReplayDetector


def _released(root: Path) -> tuple[Path, np.ndarray]:
    folder = root / "dataset" / "image-task" / "Medium-M3" / "annotated"
    (folder / "0048_0_DINOX_CROPPED").mkdir(parents=True)
    img = np.full((200, 300, 3), 90, np.uint8)
    cv2.rectangle(img, (10, 20), (60, 90), (0, 200, 0), -1)
    cv2.imwrite(str(folder / "0048_0.png"), img)
    rec = {"query": "wrench, nut", "total_detections": 2, "detections": [
        {"index": 1, "label": "wrench, nut", "confidence": 0.72, "bbox": [10.5, 20.0, 60.0, 90.0],
         "cropped_image_path": "/elsewhere/x_1_conf0.72.png", "crop_size": [70, 90]},
        {"index": 2, "label": "wrench, nut", "confidence": 0.41, "bbox": [100.0, 100.0, 150.0, 180.0],
         "cropped_image_path": "/elsewhere/x_2_conf0.41.png", "crop_size": [70, 100]}],
        "cropped_images": [], "save_directory": "/elsewhere", "original_image": "/elsewhere/0048_0.png"}
    (folder / "0048_0_DINOX_CROPPED" / "detection_and_crop_results.json").write_text(json.dumps(rec))
    other = root / "dataset" / "image-task" / "Medium-M3" / "annotated" / "0034_0_DINOX_RESULTS"
    other.mkdir()
    (other / "detection_results.json").write_text(json.dumps(
        [{"bbox": [1, 2, 30, 40], "category": "battery", "score": 0.58, "mask": {"counts": "x"}}]))
    return folder / "0048_0.png", img


def test_matches_by_hash_pixels_and_name(tmp_path: Path) -> None:
    path, img = _released(tmp_path)
    det = ReplayDetector(tmp_path)
    assert len(det.recordings) == 2
    import hashlib

    by_file = det.run(ImageInput(img, sha256=hashlib.sha256(path.read_bytes()).hexdigest()), ["ignored"])
    assert [(d.label, d.score, d.box) for d in by_file.detections] == [
        ("wrench, nut", 0.72, (10.5, 20.0, 60.0, 90.0)), ("wrench, nut", 0.41, (100.0, 100.0, 150.0, 180.0))]
    assert "wrench, nut" in by_file.note and by_file.terms == ["ignored"]
    # same pixels, another encoding and name: the pixel hash finds it
    assert len(det.run(ImageInput(img.copy(), sha256="0" * 64, name="renamed.png"), []).detections) == 2
    # the plain results file, found by its unique name (no image beside it)
    other = det.run(ImageInput(np.zeros((50, 50, 3), np.uint8), name="0034_0.png"), [])
    assert [(d.label, d.box) for d in other.detections] == [("battery", (1.0, 2.0, 30.0, 40.0))]


def test_rescales_to_a_resized_image_and_says_when_nothing_is_recorded(tmp_path: Path) -> None:
    _, img = _released(tmp_path)
    det = ReplayDetector(tmp_path)
    half = cv2.resize(img, (150, 100), interpolation=cv2.INTER_AREA)
    res = det.run(ImageInput(half, name="0048_0.png"), [])
    assert res.detections[0].box == pytest.approx((5.25, 10.0, 30.0, 45.0))
    none = det.run(ImageInput(np.zeros((10, 10, 3), np.uint8), name="unknown.png"), [])
    assert none.detections == [] and "no recorded detections" in none.note


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(PerceptionError, match="does not exist"):
        ReplayDetector(tmp_path / "nope")
    bad = tmp_path / "a_DINOX_CROPPED"
    bad.mkdir()
    (bad / "detection_and_crop_results.json").write_text(json.dumps({"detections": [{"bbox": [1, 2]}]}))
    with pytest.raises(PerceptionError, match=r"detection 0: needs 'bbox'"):
        ReplayDetector(tmp_path)
