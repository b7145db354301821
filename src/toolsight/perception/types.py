"""The perception data types: images in, detections and OCR lines out, and the backend errors.

Every backend returns the same shapes, so tools and agents never care which one ran; each result
says which backend made it (`backend`) and whether its labels are semantic (a classical contour
detector's are not).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from toolsight.errors import ToolsightError


class PerceptionError(ToolsightError):
    """A perception backend that cannot be set up or cannot answer (bad weights file, HTTP error)."""


@dataclass(frozen=True)
class ImageInput:
    """One image for a backend: BGR uint8 pixels plus what identifies it (for the replay backend).

    `sha256` is the hash of the encoded file, `name` its file name; both may be empty.
    """

    pixels: np.ndarray
    sha256: str = ""
    name: str = ""

    @property
    def width(self) -> int:
        return int(self.pixels.shape[1])

    @property
    def height(self) -> int:
        return int(self.pixels.shape[0])

    def pixel_hash(self) -> str:
        """Hash of the decoded pixels: equal for the same picture stored in two encodings."""
        arr = np.ascontiguousarray(self.pixels)
        return hashlib.sha256(f"{arr.shape}".encode() + arr.tobytes()).hexdigest()


class Detection(BaseModel):
    """One detected object: a box in pixels of the image given, a label and a confidence."""

    label: str
    score: float = Field(ge=0.0, le=1.0)
    box: tuple[float, float, float, float] = Field(description="x1, y1, x2, y2 in pixels")
    attributes: dict[str, float | int | str] = Field(
        default_factory=dict, description="backend-specific measurements (the classical detector's shape hints)"
    )


class DetectionResult(BaseModel):
    """What `detect` returns: the detections, the backend that ran, and how to read its labels."""

    detections: list[Detection] = Field(default_factory=list)
    backend: str
    semantic: bool = Field(description="False when labels are not object classes (classical fallback)")
    terms: list[str] = Field(default_factory=list, description="the query terms as given")
    width: int = 0
    height: int = 0
    note: str = ""


class OcrLine(BaseModel):
    """One line of text with its quadrilateral (4 points, clockwise from top-left) and confidence."""

    text: str
    score: float
    box: list[tuple[float, float]]

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        xs = [p[0] for p in self.box]
        ys = [p[1] for p in self.box]
        return (min(xs), min(ys), max(xs), max(ys))


class OcrResult(BaseModel):
    lines: list[OcrLine] = Field(default_factory=list)
    backend: str
    width: int = 0
    height: int = 0

    @property
    def text(self) -> str:
        return "\n".join(ln.text for ln in self.lines)
