"""Perception behind one interface: `detect(image, terms) -> boxes, labels, scores` and `ocr(image) ->
lines with boxes`.

Detection backends: remote API (DINO-X, Grounding-DINO server), local ONNX (YOLO-style), replay of
released detection files, and the classical OpenCV fallback (not semantic). OCR engines: RapidOCR
(offline default), Tesseract. Every result names the backend that made it. Layer 2: used by the
`detect_and_crop_objects` and `ocr` tools.
"""

from __future__ import annotations

from toolsight.perception.detect import BACKENDS, Detector, build_detector, configured_backend, get_detector
from toolsight.perception.ocr import OcrEngine, get_ocr
from toolsight.perception.types import (
    Detection,
    DetectionResult,
    ImageInput,
    OcrLine,
    OcrResult,
    PerceptionError,
)

__all__ = [
    "BACKENDS",
    "Detection",
    "DetectionResult",
    "Detector",
    "ImageInput",
    "OcrEngine",
    "OcrLine",
    "OcrResult",
    "PerceptionError",
    "build_detector",
    "configured_backend",
    "get_detector",
    "get_ocr",
]
