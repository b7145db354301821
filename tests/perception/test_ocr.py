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
