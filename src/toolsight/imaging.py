"""The one guarded image decoder: every image the harness opens from untrusted bytes goes through here.

Untrusted images are everywhere in a run: files model code wrote (tool outputs, kernel displays), web
fetches and replayed cassettes, crops of them, dataset images. A PNG of 11,000 x 11,000 pixels fits
in 470 KB and takes about 1 GB to decode; Pillow only *warns* below twice its `MAX_IMAGE_PIXELS`,
and its format list includes decoders that start external programs (EPS runs Ghostscript). So
before any pixel is decoded, `check` reads the header and refuses, with one clear message
(`ImageRejected`, a `ValueError`):

- more than `max_bytes` bytes (default `MAX_BYTES`),
- a format outside `FORMATS` (PNG, JPEG, GIF, WebP, BMP, TIFF, MPO),
- more than `max_pixels` pixels (default `MAX_PIXELS`) or a zero side, by the header's size.

`open_image` and `decode_array` decode only after that check (Pillow, or OpenCV for arrays), and
`check_file` does it for a file, reading at most its header. A PNG's size comes straight from its
IHDR chunk (the common case, paid for every image a task registers). This module sits at the bottom
of the layers (it imports nothing of toolsight), so datasets, the web layer and the tools share it.

Pillow, numpy and OpenCV are imported when an image must really be decoded (`pil()`, `decode_array`),
not with this module: a run whose images are PNGs and whose tools need no pixels imports none of them
(~0.1 s and ~2.5 MB for Pillow, ~30 MB for numpy and OpenCV).
"""

from __future__ import annotations

import io
import os
import struct
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image

#: the largest image (pixels) the harness decodes; a caller may ask for less (the code tools use 40 Mpx)
MAX_PIXELS = 64_000_000
#: the largest encoded image (bytes) the harness reads
MAX_BYTES = 64 << 20
#: the formats the harness decodes (Pillow's names); nothing that runs an external program
FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF", "MPO")
_PNG = b"\x89PNG\r\n\x1a\n"


def pil() -> ModuleType:
    """`PIL.Image`, imported on first use, with Pillow's own decompression-bomb limit set to
    `MAX_PIXELS` (what toolsight opens through Pillow directly is bounded as the guard bounds it)."""
    from PIL import Image as pil_image

    if pil_image.MAX_IMAGE_PIXELS != MAX_PIXELS:
        pil_image.MAX_IMAGE_PIXELS = MAX_PIXELS
    return pil_image


def guard_pil_if_loaded() -> None:
    """Set Pillow's limit (`pil()`) if something has imported Pillow already (a benchmark's module):
    its own `Image.open` calls then have the same bound; nothing is imported otherwise."""
    import sys

    if "PIL.Image" in sys.modules:
        pil()


class ImageRejected(ValueError):
    """Bytes the guard refuses to decode: too large, too many pixels, not an accepted image format."""


@dataclass(frozen=True)
class ImageInfo:
    """What the header says: Pillow's format name, the size in pixels, the mode ('' when not read)."""

    format: str
    width: int
    height: int
    mode: str = ""

    @property
    def size(self) -> tuple[int, int]:
        return self.width, self.height


def _limits(width: int, height: int, max_pixels: int, what: str) -> None:
    if width <= 0 or height <= 0:
        raise ImageRejected(f"{what} has a size of {width}x{height} pixels; it is not a usable image")
    if width * height > max_pixels:
        raise ImageRejected(f"{what} is {width}x{height} pixels ({width * height / 1e6:.1f} Mpx), over the "
                            f"pixel limit ({max_pixels / 1e6:g} Mpx); it was not decoded")


def _png_header(data: bytes) -> ImageInfo | None:
    if len(data) >= 26 and data[:8] == _PNG and data[12:16] == b"IHDR":
        w, h, depth, colour = struct.unpack(">IIBB", data[16:26])
        mode = {0: "L", 2: "RGB", 3: "P", 4: "LA", 6: "RGBA"}.get(colour, "") if depth == 8 else ""
        return ImageInfo("PNG", int(w), int(h), mode)
    return None


def _pil_header(fp: Any, what: str) -> ImageInfo:
    pil_image = pil()
    try:
        with warnings.catch_warnings():
            # the header is checked below; Pillow's own bomb check must not decide first, nor warn
            warnings.simplefilter("ignore", pil_image.DecompressionBombWarning)
            with pil_image.open(fp, formats=FORMATS) as im:
                return ImageInfo(str(im.format or ""), int(im.size[0]), int(im.size[1]), str(im.mode))
    except pil_image.DecompressionBombError as exc:
        raise ImageRejected(f"{what} is over the pixel limit ({exc}); it was not decoded") from None
    except Exception as exc:  # Pillow raises many types for bytes it cannot identify
        raise ImageRejected(f"{what} is not a readable image in an accepted format "
                            f"({', '.join(FORMATS)}): {type(exc).__name__}") from None


def png_intact(data: bytes) -> bool:
    """Whether `data` is a plain PNG (8-bit grey, RGB or RGBA) whose chunks, from the signature to
    IEND, are all complete, named in ASCII letters and have the right CRC — what Pillow's `verify`
    checks of such a PNG, done without Pillow. False for anything else (Pillow then decides and
    says why)."""
    n = len(data)
    if n < 8 + 25 or data[:8] != _PNG or data[12:16] != b"IHDR" or struct.unpack_from(">I", data, 8)[0] != 13:
        return False
    depth, colour, compression, filtering, interlace = data[24:29]
    if depth != 8 or colour not in (0, 2, 6) or compression or filtering or interlace > 1:
        return False
    view = memoryview(data)
    pos, pixels = 8, False
    while pos + 12 <= n:
        (length,) = struct.unpack_from(">I", data, pos)
        end = pos + 12 + length
        kind = data[pos + 4:pos + 8]
        if end > n or not kind.isalpha() or zlib.crc32(view[pos + 4:end - 4]) != struct.unpack_from(">I", data, end - 4)[0]:
            return False
        if kind == b"IEND":
            return pixels
        pixels = pixels or kind == b"IDAT"
        pos = end
    return False


def check_size(size: tuple[int, int], *, max_pixels: int = MAX_PIXELS, what: str = "the image") -> None:
    """The pixel caps for a size the caller already read from a header (ImageRejected when over)."""
    _limits(int(size[0]), int(size[1]), max_pixels, what)


def check(data: bytes, *, max_pixels: int = MAX_PIXELS, max_bytes: int = MAX_BYTES,
          what: str = "the image") -> ImageInfo:
    """The header of encoded image bytes, checked against the caps; nothing is decoded."""
    if len(data) > max_bytes:
        raise ImageRejected(f"{what} is {len(data):,} bytes, over the {max_bytes:,}-byte limit")
    info = _png_header(data) or _pil_header(io.BytesIO(data), what)
    _limits(info.width, info.height, max_pixels, what)
    return info


def check_file(path: Path | str, *, max_pixels: int = MAX_PIXELS, max_bytes: int = MAX_BYTES,
               what: str | None = None) -> ImageInfo:
    """`check` for a file (its size from `stat`, its header read from the file)."""
    name = what or f"image {os.fspath(path)}"
    size = os.stat(path).st_size
    if size > max_bytes:
        raise ImageRejected(f"{name} is {size:,} bytes, over the {max_bytes:,}-byte limit")
    with open(path, "rb") as fh:
        head = fh.read(26)
        info = _png_header(head)
        if info is None:
            fh.seek(0)
            info = _pil_header(fh, name)
    _limits(info.width, info.height, max_pixels, name)
    return info


def open_image(data: bytes, *, max_pixels: int = MAX_PIXELS, max_bytes: int = MAX_BYTES,
               what: str = "the image", draft: tuple[str, tuple[int, int]] | None = None) -> Image.Image:
    """A decoded Pillow image (loaded; the caller owns it), after `check`. `draft` (mode, size) lets a
    JPEG decode at a reduced scale."""
    check(data, max_pixels=max_pixels, max_bytes=max_bytes, what=what)
    pil_image = pil()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pil_image.DecompressionBombWarning)
            im: Image.Image = pil_image.open(io.BytesIO(data), formats=FORMATS)
            if draft is not None:
                im.draft(*draft)
            im.load()
    except Exception as exc:
        raise ImageRejected(f"{what} could not be decoded ({type(exc).__name__}: {exc})") from None
    return im


def decode_array(data: bytes, *, max_pixels: int = MAX_PIXELS, max_bytes: int = MAX_BYTES,
                 what: str = "the image") -> np.ndarray:
    """The image as a BGR uint8 array (OpenCV's layout; EXIF orientation ignored), after `check`."""
    import cv2
    import numpy as np

    check(data, max_pixels=max_pixels, max_bytes=max_bytes, what=what)
    arr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    if arr is None:  # a format or variant OpenCV does not read (e.g. some GIFs): Pillow decodes it
        with open_image(data, max_pixels=max_pixels, max_bytes=max_bytes, what=what) as im:
            rgb = np.asarray(im.convert("RGB"))
        arr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
    return arr


def read_capped(path: Path | str, max_bytes: int = MAX_BYTES, what: str | None = None) -> bytes:
    """A file's bytes, refused (ImageRejected) when it is over `max_bytes`, without reading more."""
    name = what or f"image {os.fspath(path)}"
    with open(path, "rb") as fh:
        # read the file's size, not `max_bytes + 1`: Python allocates the buffer of a read(n) up
        # front, so every small image would cost a 64 MB allocation (and its page faults)
        size = os.fstat(fh.fileno()).st_size
        data = fh.read(min(size, max_bytes) + 1) if size else b""
        if size == 0 or len(data) > size:  # not a regular file, or one that grew since: the rest, capped
            data += fh.read(max_bytes + 1 - len(data))
    if len(data) > max_bytes:
        raise ImageRejected(f"{name} is over the {max_bytes:,}-byte limit")
    return data


__all__ = ["FORMATS", "MAX_BYTES", "MAX_PIXELS", "ImageInfo", "ImageRejected", "check", "check_file",
           "decode_array", "guard_pil_if_loaded", "open_image", "pil", "read_capped"]
