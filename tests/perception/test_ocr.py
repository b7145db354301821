"""OCR reads what was rendered: RapidOCR (offline, models in the wheel) and Tesseract when installed."""

from __future__ import annotations

import asyncio
import os
import shutil

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw

from toolsight.perception import ImageInput, get_ocr
from toolsight.tasks.synth import font

LINES = ["Invoice 48213", "Total 12.50 EUR", "Wrench size 17"]


def _rendered() -> ImageInput:
    img = Image.new("RGB", (900, 360), "white")
    d = ImageDraw.Draw(img)
    for i, s in enumerate(LINES):
        d.text((40, 40 + i * 100), s, fill="black", font=font(48))
    return ImageInput(cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2BGR))


def _norm(s: str) -> str:
    return " ".join(s.split()).lower()


def test_rapidocr_reads_rendered_lines_in_order() -> None:
    res = asyncio.run(get_ocr("rapidocr").read(_rendered()))
    assert res.backend == "rapidocr"
    assert [_norm(ln.text).replace(" ", "") for ln in res.lines] == [_norm(s).replace(" ", "") for s in LINES]
    for i, ln in enumerate(res.lines):
        x1, y1, _, y2 = ln.bbox
        assert 0.5 <= ln.score <= 1.0 and x1 < 120 and 25 + i * 100 <= (y1 + y2) / 2 <= 110 + i * 100


def test_tesseract_reads_rendered_lines_when_installed() -> None:
    if shutil.which("tesseract") is None:
        if os.environ.get("CI"):
            pytest.fail("tesseract is missing under CI: `make system-deps` installs tesseract-ocr")
        pytest.skip("tesseract-ocr is not installed (make system-deps installs it)")
    res = asyncio.run(get_ocr("tesseract").read(_rendered()))
    assert res.backend == "tesseract"
    assert [_norm(ln.text) for ln in res.lines] == [_norm(s) for s in LINES]


def test_the_perception_extra_brings_a_rapidocr_that_keeps_the_headless_opencv() -> None:
    """`pip install 'toolsight[perception]'` gives OCR: the extra names `rapidocr`, whose installed
    distribution ships its ONNX models and requires the headless OpenCV (never `opencv-python`, whose
    cv2 would replace the headless one and needs libGL)."""
    import re
    import tomllib
    from importlib import metadata
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    extra = pyproject["project"]["optional-dependencies"]["perception"]
    assert any(re.match(r"rapidocr\s*[<>=!~]", r) for r in extra), extra
    requires = [re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].lower().replace("_", "-")
                for r in metadata.requires("rapidocr") or [] if "extra ==" not in r]
    assert "opencv-python-headless" in requires and "opencv-python" not in requires, requires
    files = [str(f) for f in metadata.files("rapidocr") or []]
    assert sum(f.endswith(".onnx") for f in files) >= 2  # detection and recognition models in the wheel


def test_the_extra_s_rapidocr_reads_rendered_lines_in_order() -> None:
    from toolsight.perception.ocr import RapidOcrEngine

    engine = RapidOcrEngine("rapidocr")
    assert engine.describe()["package"] == "rapidocr"
    res = asyncio.run(engine.read(_rendered()))
    assert [_norm(ln.text).replace(" ", "") for ln in res.lines] == [_norm(s).replace(" ", "") for s in LINES]
    blank = asyncio.run(engine.read(ImageInput(np.full((60, 60, 3), 255, np.uint8))))
    assert blank.lines == []
