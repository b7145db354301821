"""The classical OpenCV fallback detector: foreground blobs by colour difference from the background.

It works offline on any image and needs no weights, but it is **not a semantic detector**: every box
is labelled `object`, the query terms are not used, and the result says so. Each detection carries
shape hints measured on its contour (vertices of the approximated polygon, circularity, solidity,
elongation, median colour and saturation), which is what a contour detector can honestly report.
Works best on plain backgrounds (the generated PhysToolBench-style scenes); on cluttered photos it
finds large coloured regions.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from toolsight.perception.types import Detection, DetectionResult, ImageInput

NAME = "classical"
NOTE = ("classical OpenCV contour detector: boxes are foreground blobs that differ in colour from the "
        "background; it is not a semantic detector, so every label is 'object' and the query terms were "
        "not used")
WORK_SIDE = 512  # blobs are found on a copy at most this large (speed); boxes are scaled back


def _background(img: np.ndarray) -> np.ndarray:
    """The median colour of a 2-pixel border: the background of a staged scene."""
    border = np.concatenate([img[:2].reshape(-1, 3), img[-2:].reshape(-1, 3),
                             img[:, :2].reshape(-1, 3), img[:, -2:].reshape(-1, 3)])
    med: np.ndarray = np.median(border, axis=0).astype(np.float32)
    return med


def foreground_mask(img: np.ndarray) -> np.ndarray:
    """255 where a pixel differs from the background colour (Otsu on the colour distance, at least 30)."""
    dist = np.linalg.norm(img.astype(np.float32) - _background(img), axis=2)
    d8 = np.clip(dist, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(d8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = (d8 > max(30.0, otsu)).astype(np.uint8) * 255
    k = max(3, (min(img.shape[:2]) // 100) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel)
    closed: np.ndarray = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel)
    return closed


def _shape_hints(contour: np.ndarray, img: np.ndarray, scale: float) -> dict[str, float | int | str]:
    area = float(cv2.contourArea(contour))
    perim = float(cv2.arcLength(contour, True))
    hull = cv2.convexHull(contour)
    hull_area = float(cv2.contourArea(hull)) or 1.0
    approx = cv2.approxPolyDP(contour, 0.03 * perim, True)
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    long_side, short_side = max(rw, rh), max(1e-6, min(rw, rh))
    mask = np.zeros(img.shape[:2], np.uint8)
    cv2.drawContours(mask, [contour], -1, 255, thickness=-1)
    pixels = img[mask > 0]
    med = np.median(pixels, axis=0).astype(np.uint8) if len(pixels) else np.zeros(3, np.uint8)
    hsv = cv2.cvtColor(med.reshape(1, 1, 3), cv2.COLOR_BGR2HSV)[0, 0]
    b, g, r = (int(v) for v in med)
    return {
        "area_px": round(area / (scale * scale)),
        "vertices": len(approx),
        "circularity": round(4 * math.pi * area / (perim * perim), 3) if perim else 0.0,
        "solidity": round(area / hull_area, 3),
        "elongation": round(long_side / short_side, 2),
        "color_hex": f"#{r:02x}{g:02x}{b:02x}",
        "saturation": int(hsv[1]),
    }


def detect_blobs(image: ImageInput, terms: list[str], *, max_objects: int = 20,
                 min_area_frac: float = 0.002) -> DetectionResult:
    """Foreground blobs of `image`, largest first (at most `max_objects`)."""
    img = image.pixels
    h, w = img.shape[:2]
    scale = min(1.0, WORK_SIDE / max(h, w))
    small = cv2.resize(img, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA) \
        if scale < 1.0 else img
    mask = foreground_mask(small)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    total = float(small.shape[0] * small.shape[1])
    found: list[tuple[float, Detection]] = []
    for c in contours:
        area = float(cv2.contourArea(c))
        if area < min_area_frac * total or area > 0.9 * total:
            continue
        x, y, bw, bh = cv2.boundingRect(c)
        hints = _shape_hints(c, small, scale)
        box = (x / scale, y / scale, min(w, (x + bw) / scale), min(h, (y + bh) / scale))
        score = float(np.clip(hints["solidity"], 0.0, 1.0))
        found.append((area, Detection(label="object", score=round(score, 3), box=box, attributes=hints)))
    found.sort(key=lambda t: (-t[0], t[1].box))
    dets = [d for _, d in found[:max_objects]]
    return DetectionResult(detections=dets, backend=NAME, semantic=False, terms=list(terms), width=w, height=h,
                           note=NOTE)


class ClassicalDetector:
    """The offline fallback; see the module docstring."""

    name = NAME
    semantic = False

    def __init__(self, max_objects: int = 20) -> None:
        self.max_objects = max_objects

    async def detect(self, image: ImageInput, terms: list[str]) -> DetectionResult:
        import asyncio

        return await asyncio.to_thread(detect_blobs, image, terms, max_objects=self.max_objects)

    def describe(self) -> dict[str, object]:
        return {"backend": NAME, "semantic": False, "max_objects": self.max_objects}
