"""The benchmark's own tool: `count_shapes`, which counts the shapes of one colour in an image.

Pixel work with OpenCV: the colour is a hue band in HSV (saturated, not dark); blobs are the
external contours of the colour mask after a small opening; a blob's shape is how much of its
minimum enclosing circle it fills (circle ≈ 1.0, square 2/π ≈ 0.64, equilateral triangle ≈ 0.41),
which does not depend on rotation. The result names the count in an `INFO: {json}` line (the
reference agent reads it there, `answer_from = {"field": "count"}`) and returns a copy of the image
with the counted blobs boxed.
"""

from __future__ import annotations

import json
import math
from typing import Literal

import cv2
import numpy as np
from toolsight.tools.base import Tool, ToolContext, ToolResult, tool

Color = Literal["red", "yellow", "green", "blue"]
Shape = Literal["circle", "square", "triangle"]
COLORS: tuple[Color, ...] = ("red", "yellow", "green", "blue")
SHAPES: tuple[Shape, ...] = ("circle", "square", "triangle")
#: OpenCV hue bands (0-179) per colour; red wraps around 0
HUE_BANDS: dict[str, list[tuple[int, int]]] = {
    "red": [(0, 8), (172, 179)], "yellow": [(18, 36)], "green": [(45, 85)], "blue": [(100, 130)],
}
MIN_SATURATION = 110
MIN_VALUE = 80
#: fill of the enclosing circle: above CIRCLE a circle, SQUARE a square, TRIANGLE a triangle (measured on
#: generated shapes 22-56 px: triangles 0.44-0.52, squares 0.60-0.71, circles 0.89-0.97)
CIRCLE, SQUARE, TRIANGLE = 0.80, 0.56, 0.30
DEFAULT_MIN_AREA = 40


def color_mask(bgr: np.ndarray, color: str) -> np.ndarray:
    """The pixels of `color` (255) in a BGR image, opened with a 3×3 kernel against speckle."""
    hsv = cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV)
    mask = np.zeros(hsv.shape[:2], np.uint8)
    for lo, hi in HUE_BANDS[color]:
        mask |= cv2.inRange(hsv, (lo, MIN_SATURATION, MIN_VALUE), (hi, 255, 255))
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))


def shape_of(contour: np.ndarray) -> str:
    """'circle', 'square', 'triangle' or 'other', by how much of its enclosing circle the blob fills."""
    (_, _), radius = cv2.minEnclosingCircle(contour)
    fill = cv2.contourArea(contour) / max(math.pi * radius * radius, 1e-9)
    if fill >= CIRCLE:
        return "circle"
    if fill >= SQUARE:
        return "square"
    if fill >= TRIANGLE:
        return "triangle"
    return "other"


def find_shapes(bgr: np.ndarray, color: str, min_area: int) -> list[tuple[str, tuple[int, int, int, int]]]:
    """Every blob of `color` at least `min_area` pixels large: (its shape, its box x, y, w, h)."""
    contours, _ = cv2.findContours(color_mask(bgr, color), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    found = []
    for c in contours:
        if cv2.contourArea(c) >= min_area:
            x, y, w, h = cv2.boundingRect(c)
            found.append((shape_of(c), (int(x), int(y), int(w), int(h))))
    return sorted(found, key=lambda f: (f[1][1], f[1][0]))


def shape_tools(min_area: int = DEFAULT_MIN_AREA) -> list[Tool]:
    """The `shapes` tool set: `count_shapes`, counting blobs of at least `min_area` pixels."""

    @tool(name="count_shapes")
    def count_shapes(ctx: ToolContext, image: str, color: Color, shape: Shape) -> ToolResult:
        """Count the shapes of one colour and kind in an image; returns the count and the image with them boxed.

        Args:
            image: the image: an input file name or the id of an image a tool produced.
            color: the colour to count: red, yellow, green or blue.
            shape: the kind of shape to count: circle, square or triangle.
        """
        art, bgr = ctx.store.load_array(image)
        boxes = [box for kind, box in find_shapes(bgr, color, min_area) if kind == shape]
        marked = bgr.copy()
        for x, y, w, h in boxes:
            cv2.rectangle(marked, (x - 2, y - 2), (x + w + 1, y + h + 1), (0, 0, 0), 2)
        out = ctx.store.add_array(marked, parents=[art.id], tool_call_id=ctx.call_id, tool="count_shapes")
        info = {"count": len(boxes), "color": color, "shape": shape, "boxes": [list(b) for b in boxes]}
        return ToolResult(text=f"{len(boxes)} {color} {shape}(s) in {art.id}, boxed in the image returned.\n"
                               f"INFO: {json.dumps(info)}", artifacts=[out])

    return [count_shapes]
