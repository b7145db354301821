"""The perception tools: `detect_and_crop_objects` (the VCR agent's detection tool) and `ocr`.

Both wrap `toolsight.perception`; which backend ran is in each result's text and `extra['backend']`,
and in the run manifest (`backend_info`). Crops are new artifacts whose parent is the image they were
cut from, so the viewer shows them and the chain walk sees their provenance. Crops get 10 pixels of
margin on every side (clipped to the image, integer-truncated), as the crops the PhysToolBench authors
released were cut (`crop_size` = box + 20 px).
"""

from __future__ import annotations

import json
from typing import Any

from toolsight.perception import ImageInput, PerceptionError, configured_backend, get_detector, get_ocr
from toolsight.tools.base import Tool, ToolContext, ToolError, ToolResult

CROP_MARGIN = 10
DETECT_NAME = "detect_and_crop_objects"
OCR_NAME = "ocr"


def _image(ctx: ToolContext, ref: str) -> tuple[Any, ImageInput]:
    art, arr = ctx.store.load_array(ref)
    return art, ImageInput(pixels=arr, sha256=art.sha256, name=art.file)


class DetectAndCropTool(Tool):
    """Detect objects named by query terms and crop each one out as a new image."""

    def __init__(self, detector: str | None = None, margin: int = CROP_MARGIN) -> None:
        super().__init__(
            DETECT_NAME,
            "Detect objects in an image and crop each detection out as a new image. Returns JSON with "
            "every detection (index, label, confidence, bbox [x1, y1, x2, y2] in pixels, the cropped image id "
            "and its size) and the list `cropped_images`. `backend` says which detector ran; when "
            "`semantic` is false the labels are not object classes and the terms were not used.",
            {
                "type": "object",
                "properties": {
                    "image": {"type": "string", "description": "image id (e.g. img-3fa9c2d1e0b4) or workspace file name"},
                    "terms": {"type": "array", "items": {"type": "string"},
                              "description": "detection query terms, e.g. [\"wrench\", \"hammer\"]; [] detects any objects"},
                    "max_objects": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20},
                },
                "required": ["image"],
                "additionalProperties": False,
            },
        )
        self.detector_name = detector
        self.margin = margin

    def backend_info(self) -> dict[str, object]:
        try:
            return get_detector(self.detector_name).describe()
        except PerceptionError as exc:
            return {"backend": self.detector_name or configured_backend(), "error": str(exc)}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        unknown = set(args) - {"image", "terms", "max_objects"}
        if unknown:
            raise ToolError(f"unknown argument(s) {', '.join(sorted(unknown))}; use image, terms, max_objects")
        ref = args.get("image")
        if not isinstance(ref, str) or not ref.strip():
            raise ToolError("missing required argument 'image' (an image id or workspace file name)")
        terms_raw = args.get("terms", [])
        if isinstance(terms_raw, str):  # a comma-separated string, as the authors' `query` was
            terms_raw = [t for t in terms_raw.split(",")]
        if not isinstance(terms_raw, list) or not all(isinstance(t, str) for t in terms_raw):
            raise ToolError("argument 'terms' must be a list of strings, e.g. [\"knife\", \"cutting board\"]")
        terms = [t.strip() for t in terms_raw if t.strip()]
        max_objects = args.get("max_objects", 20)
        if isinstance(max_objects, bool) or not isinstance(max_objects, int) or not 1 <= max_objects <= 50:
            raise ToolError(f"argument 'max_objects' must be an integer from 1 to 50, got {max_objects!r}")
        art, img = _image(ctx, ref)
        try:
            detector = get_detector(self.detector_name)
            result = await detector.detect(img, terms)
        except PerceptionError as exc:
            raise ToolError(f"detection failed: {exc}") from None
        h, w = img.height, img.width
        crops = []
        listed: list[dict[str, Any]] = []
        for i, d in enumerate(result.detections[:max_objects], start=1):
            x1, y1, x2, y2 = d.box
            cx1, cy1 = max(0, int(x1 - self.margin)), max(0, int(y1 - self.margin))
            cx2, cy2 = min(w, int(x2 + self.margin)), min(h, int(y2 + self.margin))
            if cx2 <= cx1 or cy2 <= cy1:
                continue
            crop = ctx.store.add_array(img.pixels[cy1:cy2, cx1:cx2], parents=[art.id], tool_call_id=ctx.call_id,
                                       tool=DETECT_NAME)
            crops.append(crop)
            entry: dict[str, Any] = {"index": i, "label": d.label, "confidence": round(d.score, 4),
                                     "bbox": [round(v, 1) for v in d.box], "cropped_image": crop.id,
                                     "crop_size": [crop.width, crop.height]}
            if d.attributes:
                entry["shape"] = d.attributes
            listed.append(entry)
        payload = {"query": ", ".join(terms), "total_detections": len(listed), "detections": listed,
                   "cropped_images": [c.id for c in crops], "original_image": art.id,
                   "backend": result.backend, "semantic": result.semantic}
        if result.note:
            payload["note"] = result.note
        text = json.dumps(payload, ensure_ascii=False)
        return ToolResult(text=text, artifacts=crops,
                          extra={"backend": result.backend, "semantic": result.semantic, "detections": len(listed)})


class OcrTool(Tool):
    """Read the text in an image: lines with their boxes and confidences."""

    def __init__(self, engine: str | None = None) -> None:
        super().__init__(
            OCR_NAME,
            "Read the text in an image (OCR). Returns JSON: `lines`, each with `text`, `confidence` and `bbox` "
            "[x1, y1, x2, y2] in pixels, top to bottom; `text` joins them; `backend` names the OCR engine.",
            {
                "type": "object",
                "properties": {
                    "image": {"type": "string", "description": "image id (e.g. img-3fa9c2d1e0b4) or workspace file name"},
                },
                "required": ["image"],
                "additionalProperties": False,
            },
        )
        self.engine_name = engine

    def backend_info(self) -> dict[str, object]:
        try:
            return get_ocr(self.engine_name).describe()
        except PerceptionError as exc:
            return {"backend": self.engine_name or "auto", "error": str(exc)}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        unknown = set(args) - {"image"}
        if unknown:
            raise ToolError(f"unknown argument(s) {', '.join(sorted(unknown))}; use image")
        ref = args.get("image")
        if not isinstance(ref, str) or not ref.strip():
            raise ToolError("missing required argument 'image' (an image id or workspace file name)")
        art, img = _image(ctx, ref)
        try:
            result = await get_ocr(self.engine_name).read(img)
        except PerceptionError as exc:
            raise ToolError(f"OCR failed: {exc}") from None
        lines = [{"text": ln.text, "confidence": ln.score, "bbox": [round(v, 1) for v in ln.bbox]}
                 for ln in result.lines]
        payload = {"image": art.id, "text": result.text, "lines": lines, "backend": result.backend}
        return ToolResult(text=json.dumps(payload, ensure_ascii=False),
                          extra={"backend": result.backend, "inputs": [art.id]})


def detect_tools() -> list[Tool]:
    return [DetectAndCropTool()]


def ocr_tools() -> list[Tool]:
    return [OcrTool()]


def perception_tools() -> list[Tool]:
    """The `perception` tool set: detection with crops, and OCR."""
    return [DetectAndCropTool(), OcrTool()]


__all__ = ["CROP_MARGIN", "DETECT_NAME", "OCR_NAME", "DetectAndCropTool", "OcrTool", "perception_tools"]
