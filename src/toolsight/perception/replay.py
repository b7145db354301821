"""Replay detector: the detections the PhysToolBench authors released, played back for the same images.

The authors' DINO-X runs sit next to the M3 images of the older dataset layout:
`annotated/<stem>_DINOX_CROPPED/detection_and_crop_results.json` (`{query, detections: [{index, label,
confidence, bbox: [x1, y1, x2, y2]}], original_image, ...}`) and `annotated/<stem>_DINOX_RESULTS/
detection_results.json` (`[{bbox, category, score, mask}]`). `ReplayDetector(root)` indexes every such
file under `root` and finds the one for an image by, in order: the SHA-256 of the image file, the hash
of its decoded pixels (the same picture re-encoded), then its file name when only one file has it.
The original image is looked up beside the folder (`<stem>.png` or the `original_image` basename);
boxes are rescaled when the image asked about has another size. An image with no recording gets no
detections and a note saying so; the query terms are recorded but do not filter (the recording holds
the authors' query).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2

from toolsight.perception.types import Detection, DetectionResult, ImageInput, PerceptionError

NAME = "replay"
FILES = ("detection_and_crop_results.json", "detection_results.json")
SUFFIXES = ("_DINOX_CROPPED", "_DINOX_RESULTS")


@dataclass
class Recording:
    """One released detection file and what it says."""

    path: Path
    query: str
    detections: list[Detection]
    image: Path | None = None
    image_size: tuple[int, int] | None = None
    sha256: str = ""
    pixel_hash: str = ""
    names: set[str] = field(default_factory=set)


def _num(x: Any, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise PerceptionError(f"{where}: expected a number, got {x!r}")
    return float(x)


def parse_file(path: Path) -> tuple[str, list[Detection], str | None]:
    """(query, detections, original image basename) of one released file; a bad file is one clear error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PerceptionError(f"{path}: not a readable detection JSON file ({exc})") from None
    items: list[Any]
    original: str | None = None
    query = ""
    if isinstance(data, dict):
        items = data.get("detections") or []
        query = str(data.get("query") or "")
        if isinstance(data.get("original_image"), str):
            original = data["original_image"].replace("\\", "/").rsplit("/", 1)[-1]
    elif isinstance(data, list):
        items = data
    else:
        raise PerceptionError(f"{path}: expected an object with 'detections' or a list of detections")
    dets: list[Detection] = []
    for i, d in enumerate(items):
        where = f"{path} detection {i}"
        if not isinstance(d, dict) or not isinstance(d.get("bbox"), list) or len(d["bbox"]) != 4:
            raise PerceptionError(f"{where}: needs 'bbox': [x1, y1, x2, y2]")
        box = tuple(_num(v, where + " bbox") for v in d["bbox"])
        label = str(d.get("label") or d.get("category") or query or "object")
        score = _num(d.get("confidence", d.get("score", 1.0)), where + " confidence")
        dets.append(Detection(label=label, score=min(1.0, max(0.0, score)), box=(box[0], box[1], box[2], box[3])))
    return query, dets, original


def _stem_of(folder: Path) -> str:
    name = folder.name
    for suf in SUFFIXES:
        if name.endswith(suf):
            return name[: -len(suf)]
    return name


class ReplayDetector:
    """Plays back released detection files under `root` (see the module docstring)."""

    name = NAME
    semantic = True

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        if not self.root.exists():
            raise PerceptionError(f"replay detections not found: {self.root} does not exist "
                                  "(set TOOLSIGHT_DETECT_REPLAY to the folder holding the *_DINOX_CROPPED folders)")
        self.recordings: list[Recording] = []
        paths = [self.root] if self.root.is_file() else sorted(
            p for f in FILES for p in self.root.rglob(f))
        # the cropped-results file wins over the plain one for the same image
        seen_stems: set[tuple[Path, str]] = set()
        for p in sorted(paths, key=lambda q: FILES.index(q.name) if q.name in FILES else 0):
            query, dets, original = parse_file(p)
            folder = p.parent
            stem = _stem_of(folder)
            key = (folder.parent, stem)
            if key in seen_stems:
                continue
            seen_stems.add(key)
            rec = Recording(path=p, query=query, detections=dets)
            cands = [folder.parent / f"{stem}{ext}" for ext in (".png", ".jpg", ".jpeg")]
            if original:
                cands.insert(0, folder.parent / original)
            rec.names = {c.name for c in cands}
            rec.image = next((c for c in cands if c.is_file()), None)
            self.recordings.append(rec)
        self._hashed = False
        self._lock = threading.Lock()

    def _hash_images(self) -> None:
        with self._lock:
            if self._hashed:
                return
            for rec in self.recordings:
                if rec.image is None:
                    continue
                data = rec.image.read_bytes()
                rec.sha256 = hashlib.sha256(data).hexdigest()
                arr = cv2.imread(str(rec.image), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
                if arr is not None:
                    rec.image_size = (int(arr.shape[1]), int(arr.shape[0]))
                    rec.pixel_hash = ImageInput(arr).pixel_hash()
            self._hashed = True

    def find(self, image: ImageInput) -> Recording | None:
        self._hash_images()
        if image.sha256:
            for rec in self.recordings:
                if rec.sha256 == image.sha256:
                    return rec
        ph = image.pixel_hash()
        for rec in self.recordings:
            if rec.pixel_hash and rec.pixel_hash == ph:
                return rec
        if image.name:
            named = [r for r in self.recordings if image.name in r.names]
            if len(named) == 1:
                return named[0]
        return None

    def run(self, image: ImageInput, terms: list[str]) -> DetectionResult:
        rec = self.find(image)
        if rec is None:
            return DetectionResult(backend=NAME, semantic=True, terms=list(terms), width=image.width,
                                   height=image.height, note=f"no recorded detections for this image under {self.root}")
        dets = rec.detections
        if rec.image_size and rec.image_size != (image.width, image.height):
            sx, sy = image.width / rec.image_size[0], image.height / rec.image_size[1]
            dets = [d.model_copy(update={"box": (d.box[0] * sx, d.box[1] * sy, d.box[2] * sx, d.box[3] * sy)})
                    for d in dets]
        note = f"replayed {rec.path.name} (recorded query: {rec.query!r})" if rec.query else f"replayed {rec.path.name}"
        return DetectionResult(detections=list(dets), backend=NAME, semantic=True, terms=list(terms),
                               width=image.width, height=image.height, note=note)

    async def detect(self, image: ImageInput, terms: list[str]) -> DetectionResult:
        import asyncio

        return await asyncio.to_thread(self.run, image, terms)

    def describe(self) -> dict[str, object]:
        return {"backend": NAME, "semantic": True, "root": str(self.root), "recordings": len(self.recordings)}
