"""Perceptual hashes for reverse image search, robust to the crop tool's pad/crop/resize/JPEG.

Corpus images get one 64-bit pHash (imagehash). A query gets several: the image as is, with its
near-uniform border trimmed, and centre trims of 4-15 % per side — the crop tool pads a box by
10 % of its size on each side, so a crop of a picture inside a larger image is the picture plus
a frame; one of the trims lines up with the picture again. The distance of a query to a corpus
image is the smallest Hamming distance over the query's hashes. Images are shrunk to at most
256 px before hashing (pHash itself works on 32×32), which keeps a lookup in milliseconds.
"""

from __future__ import annotations

import imagehash
import numpy as np
from PIL import Image

from toolsight import imaging

#: Hamming distance (of 64 bits) at or below which two images count as the same picture
DEFAULT_THRESHOLD = 8
TRIMS = (0.04, 0.083, 0.12, 0.15)
_MAX_SIDE = 256
MAX_PIXELS = 40_000_000


def _load(data: bytes) -> Image.Image:
    # the guarded decoder: a corpus file or a fetched query image may be a bomb; a JPEG decodes at a
    # reduced scale (draft)
    with imaging.open_image(data, max_pixels=MAX_PIXELS, draft=("L", (_MAX_SIDE, _MAX_SIDE))) as im:
        g = im.convert("L")
    if max(g.size) > _MAX_SIDE:
        g.thumbnail((_MAX_SIDE, _MAX_SIDE), Image.Resampling.BILINEAR)
    return g


def _hash(img: Image.Image) -> int:
    # a box-filtered 64×64 copy first: imagehash's own Lanczos resize to 32×32 then costs little
    # (it dominated the lookup), and corpus and query images go through the same two steps
    small = img.resize((64, 64), Image.Resampling.BOX)
    return int(str(imagehash.phash(small)), 16)


def image_hash(data: bytes) -> int:
    """The pHash of an image file's bytes, as an unsigned 64-bit int."""
    return _hash(_load(data))


def _trim_uniform(img: Image.Image, tol: int = 12) -> Image.Image | None:
    """The image without a border of (nearly) the corner colour; None when there is none to trim."""
    a = np.asarray(img, dtype=np.int16)
    h, w = a.shape
    if h < 8 or w < 8:
        return None
    ref = int(np.median([a[0, 0], a[0, -1], a[-1, 0], a[-1, -1]]))
    diff = np.abs(a - ref) > tol
    rows = np.flatnonzero(diff.mean(axis=1) > 0.02)
    cols = np.flatnonzero(diff.mean(axis=0) > 0.02)
    if rows.size == 0 or cols.size == 0:
        return None
    top, bottom, left, right = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
    if (bottom - top) * (right - left) > 0.97 * h * w or bottom - top < 8 or right - left < 8:
        return None
    return img.crop((left, top, right, bottom))


def query_hashes(data: bytes) -> list[int]:
    """The query image's hashes: as is, border-trimmed, and centre trims (see the module docstring)."""
    img = _load(data)
    out = [_hash(img)]
    trimmed = _trim_uniform(img)
    if trimmed is not None:
        out.append(_hash(trimmed))
    w, h = img.size
    for t in TRIMS:
        dx, dy = round(w * t), round(h * t)
        if w - 2 * dx >= 8 and h - 2 * dy >= 8:
            out.append(_hash(img.crop((dx, dy, w - dx, h - dy))))
    return list(dict.fromkeys(out))


def distances(index: np.ndarray, queries: list[int]) -> np.ndarray:
    """For each indexed hash, the smallest Hamming distance to any of the query hashes."""
    if index.size == 0:
        return np.zeros(0, dtype=np.int64)
    best: np.ndarray | None = None
    for q in queries:
        d = np.bitwise_count(np.bitwise_xor(index, np.uint64(q))).astype(np.int64)
        best = d if best is None else np.minimum(best, d)
    assert best is not None
    return best
