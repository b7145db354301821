"""Local ONNX detector with YOLO-style pre- and post-processing (onnxruntime, CPU).

For users who point toolsight at their own weights (`TOOLSIGHT_DETECT_ONNX=model.onnx`), e.g. an
Ultralytics YOLOv8/YOLO11 export (output `[1, 4 + classes, anchors]`, boxes as centre x, centre y,
width, height in network pixels) or a YOLOv5 export (`[1, anchors, 5 + classes]` with an objectness
column). Pre-processing: letterbox to the network's square input (aspect kept, grey 114 padding,
centred), BGR -> RGB, scale to 0..1, NCHW float32. Post-processing: best class per anchor, confidence
threshold, boxes mapped back through the letterbox, per-class non-maximum suppression. Class names
come from the model's `names` metadata (as Ultralytics writes it), a names file (one per line), or
default to `class_N`. Query terms filter the classes (case-insensitive, either name containing the
other); no term matching any class returns nothing, with a note listing the classes.
"""

from __future__ import annotations

import ast
import asyncio
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np

from toolsight.perception.types import Detection, DetectionResult, ImageInput, PerceptionError

NAME = "onnx"
Layout = Literal["auto", "v8", "v5"]


@dataclass(frozen=True)
class Letterbox:
    """How an image was fitted into the network input: `net = orig * scale + pad`."""

    scale: float
    pad_x: float
    pad_y: float
    size: int

    def to_original(self, box: np.ndarray, width: int, height: int) -> np.ndarray:
        """Boxes (N, 4) x1, y1, x2, y2 in network pixels -> original pixels, clipped."""
        out = box.astype(np.float64).copy()
        out[:, [0, 2]] = (out[:, [0, 2]] - self.pad_x) / self.scale
        out[:, [1, 3]] = (out[:, [1, 3]] - self.pad_y) / self.scale
        out[:, [0, 2]] = out[:, [0, 2]].clip(0, width)
        out[:, [1, 3]] = out[:, [1, 3]].clip(0, height)
        return out


def letterbox(bgr: np.ndarray, size: int) -> tuple[np.ndarray, Letterbox]:
    """The NCHW float32 RGB tensor (values 0..1) for a square `size` input, and the mapping used."""
    h, w = bgr.shape[:2]
    scale = min(size / w, size / h)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    resized = cv2.resize(bgr, (nw, nh), interpolation=cv2.INTER_LINEAR)
    canvas = np.full((size, size, 3), 114, np.uint8)
    px, py = (size - nw) // 2, (size - nh) // 2
    canvas[py:py + nh, px:px + nw] = resized
    rgb = cv2.cvtColor(canvas, cv2.COLOR_BGR2RGB)
    tensor = np.ascontiguousarray(rgb.transpose(2, 0, 1)[None].astype(np.float32) / 255.0)
    return tensor, Letterbox(scale=scale, pad_x=float(px), pad_y=float(py), size=size)


def _rows(output: np.ndarray, layout: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(boxes cxcywh (N, 4), best score (N,), best class (N,)) from a raw YOLO output."""
    out = np.asarray(output, dtype=np.float32)
    if out.ndim == 3:
        out = out[0]
    if out.ndim != 2:
        raise PerceptionError(f"ONNX detector output has shape {np.shape(output)}; expected [1, C, N] or [1, N, C]")
    if layout == "auto":  # exports put the long anchor axis last (v8: [C, N]) or first (v5: [N, C])
        layout = "v8" if out.shape[0] < out.shape[1] else "v5"
    if layout == "v8":
        rows = out.T
        if rows.shape[1] < 5:
            raise PerceptionError(f"YOLOv8-style output needs 4 box + >=1 class columns, got {rows.shape[1]}")
        cls = rows[:, 4:]
        best = cls.argmax(axis=1)
        score = cls[np.arange(len(rows)), best]
    else:
        rows = out
        if rows.shape[1] < 6:
            raise PerceptionError(f"YOLOv5-style output needs 4 box + objectness + >=1 class columns, got {rows.shape[1]}")
        cls = rows[:, 5:]
        best = cls.argmax(axis=1)
        score = rows[:, 4] * cls[np.arange(len(rows)), best]
    return rows[:, :4], score, best


def decode(output: np.ndarray, lb: Letterbox, width: int, height: int, names: list[str], *,
           conf: float = 0.25, iou: float = 0.45, layout: Layout = "auto", max_det: int = 100) -> list[Detection]:
    """YOLO post-processing: threshold, cxcywh -> xyxy, undo the letterbox, per-class NMS."""
    boxes, score, best = _rows(output, layout)
    keep = score >= conf
    boxes, score, best = boxes[keep], score[keep], best[keep]
    if not len(boxes):
        return []
    xyxy = np.stack([boxes[:, 0] - boxes[:, 2] / 2, boxes[:, 1] - boxes[:, 3] / 2,
                     boxes[:, 0] + boxes[:, 2] / 2, boxes[:, 1] + boxes[:, 3] / 2], axis=1)
    orig = lb.to_original(xyxy, width, height)
    dets: list[Detection] = []
    for c in np.unique(best):
        idx = np.flatnonzero(best == c)
        rects = [[float(b[0]), float(b[1]), float(b[2] - b[0]), float(b[3] - b[1])] for b in orig[idx]]
        kept = cv2.dnn.NMSBoxes(rects, [float(s) for s in score[idx]], conf, iou)
        for k in np.asarray(kept).reshape(-1):
            i = int(idx[int(k)])
            x1, y1, x2, y2 = (float(v) for v in orig[i])
            if x2 <= x1 or y2 <= y1:
                continue
            label = names[int(c)] if int(c) < len(names) else f"class_{int(c)}"
            dets.append(Detection(label=label, score=round(min(1.0, max(0.0, float(score[i]))), 4),
                                  box=(x1, y1, x2, y2)))
    dets.sort(key=lambda d: -d.score)
    return dets[:max_det]


def parse_names(raw: str | None, n_classes: int) -> list[str]:
    """Class names from Ultralytics metadata (`{0: 'person', ...}`) or a newline list; else class_N."""
    names: list[str] = []
    if raw:
        try:
            val = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            val = None
        if isinstance(val, dict):
            names = [str(val[k]) for k in sorted(val)]
        elif isinstance(val, list | tuple):
            names = [str(v) for v in val]
        else:
            names = [ln.strip() for ln in raw.splitlines() if ln.strip()]
    return names + [f"class_{i}" for i in range(len(names), n_classes)]


def term_filter(dets: list[Detection], terms: list[str]) -> list[Detection]:
    wanted = [t.strip().lower() for t in terms if t.strip()]
    if not wanted:
        return dets
    return [d for d in dets if any(t in d.label.lower() or d.label.lower() in t for t in wanted)]


class OnnxDetector:
    """A YOLO-style detector from an ONNX file, run on the CPU by onnxruntime."""

    name = NAME
    semantic = True

    def __init__(self, path: str | Path, names_file: str | Path | None = None, *, conf: float = 0.25,
                 iou: float = 0.45, layout: Layout = "auto", max_objects: int = 20) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise PerceptionError(f"ONNX detector weights not found: {self.path} (set TOOLSIGHT_DETECT_ONNX to a .onnx file)")
        try:
            import onnxruntime as ort
        except ImportError:
            raise PerceptionError("the ONNX detector needs onnxruntime: pip install 'toolsight[perception]'") from None
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1  # tasks run concurrently; one thread each keeps the cores shared
        try:
            self.session = ort.InferenceSession(str(self.path), sess_options=opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for a bad file
            raise PerceptionError(f"{self.path}: not a loadable ONNX model ({type(exc).__name__}: {exc})") from None
        inp = self.session.get_inputs()[0]
        self.input_name = inp.name
        dims = [d if isinstance(d, int) else None for d in inp.shape]
        self.size = int(dims[2] or dims[3] or 640) if len(dims) == 4 else 640
        out_shape = self.session.get_outputs()[0].shape
        channels = [d for d in out_shape[1:] if isinstance(d, int)]
        meta = self.session.get_modelmeta().custom_metadata_map
        raw_names = Path(names_file).read_text(encoding="utf-8") if names_file else meta.get("names")
        n_guess = (min(channels) - (4 if layout != "v5" else 5)) if channels else 0
        self.names = parse_names(raw_names, max(0, n_guess))
        self.conf, self.iou, self.layout, self.max_objects = conf, iou, layout, max_objects
        self._lock = threading.Lock()

    def run(self, image: ImageInput, terms: list[str]) -> DetectionResult:
        tensor, lb = letterbox(image.pixels, self.size)
        with self._lock:
            outputs: list[Any] = self.session.run(None, {self.input_name: tensor})
        dets = decode(outputs[0], lb, image.width, image.height, self.names, conf=self.conf, iou=self.iou,
                      layout=self.layout)
        kept = term_filter(dets, terms)[: self.max_objects]
        note = ""
        if terms and dets and not kept:
            note = f"none of the terms match this detector's classes ({', '.join(self.names[:30])})"
        return DetectionResult(detections=kept, backend=NAME, semantic=True, terms=list(terms), width=image.width,
                               height=image.height, note=note)

    async def detect(self, image: ImageInput, terms: list[str]) -> DetectionResult:
        return await asyncio.to_thread(self.run, image, terms)

    def describe(self) -> dict[str, object]:
        return {"backend": NAME, "semantic": True, "weights": str(self.path), "input": self.size,
                "classes": len(self.names), "conf": self.conf, "iou": self.iou, "layout": self.layout}
