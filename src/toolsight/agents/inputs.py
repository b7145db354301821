"""A task's input images, registered in its workspace as input artifacts.

Each image is copied, never hard-linked: editing the dataset later must not change a past run's
artifacts. With a `SharedInputs` (the local runner's default) an image that needs no conversion is
copied once per run into `RUN/artifacts/.inputs/<artifact id><suffix>`, whatever the number of tasks
and epochs that use it, and reaches a task's own workspace only when that workspace is made (a lazy
`ArtifactStore`): a task that uses no tool writes no file. An image a provider may refuse (TIFF, CMYK
JPEG, 16-bit PNG, an animation, an unusual colour mode) is converted here, once, to an 8-bit
RGB/RGBA/grayscale PNG or JPEG (the first frame of an animation), and the artifact says what the
dataset file was (`converted_from`); the dataset's file itself stays in the workspace's `.source/`
(`source_path`) for official loops whose driver sends images as the dataset stores them. An image
that resolves outside the dataset folder is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import stat
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from toolsight import imaging
from toolsight.errors import ToolsightError
from toolsight.tasks.schema import Task
from toolsight.tools.base import Artifact, Toolbox

if TYPE_CHECKING:  # Pillow is imported for an input that is not a plain PNG (`imaging.pil()`)
    from PIL import Image

#: what every provider takes: PNG or JPEG, 8 bits per channel, one frame
ACCEPTED_FORMATS = frozenset({"PNG", "JPEG"})
ACCEPTED_MODES = frozenset({"RGB", "RGBA", "L"})


class InputImageError(ToolsightError):
    """A task's input image that cannot be used (names the task, the image and why)."""


class SharedInputs:
    """The run's one copy of each input image (`RUN/artifacts/.inputs/`), content-addressed: written
    once (to a temporary name, then renamed, so a killed run never leaves half a file under the
    final name) and kept by later invocations of the same run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._kept: set[str] = set()
        self._made = False

    def keep(self, data: bytes, suffix: str, digest: str) -> tuple[Path, bool]:
        """The shared copy of `data` (whose sha256 is `digest`), written now unless the run has it;
        and whether this is the first time this invocation asks for it."""
        name = f"img-{digest[:12]}{suffix.lower()}"
        dest = self.folder / name
        if name in self._kept:
            return dest, False
        if not os.path.exists(dest):
            if not self._made:
                os.makedirs(self.folder, exist_ok=True)
                self._made = True
            tmp = self.folder / f".{name}.{os.getpid()}.part"
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, dest)
        self._kept.add(name)
        return dest, True


def register_inputs(task: Task, dataset_root: Path, toolbox: Toolbox, shared: SharedInputs | None = None, *,
                    root_resolved: bool = False) -> dict[str, Artifact]:
    """Register the task's input images (under their base names) as input artifacts: one sendable as
    it is through the run's shared copies (`shared`, the module docstring; without it, copied into the
    workspace), one that needs converting into the workspace (made now). `root_resolved`: `dataset_root` is already resolved (the runner
    resolves it once per run: it stats every component of the path)."""
    out: dict[str, Artifact] = {}
    used: set[str] = set()
    root = dataset_root if root_resolved else dataset_root.resolve()
    for rel in task.image_paths():
        src = _inside(task, root, rel)
        with open(src, "rb") as fh:  # read once: decided on, copied and hashed from the same bytes
            data = fh.read()
        size = plain_png_size(data)
        if size is not None:  # the common case, decided from the header without PIL (~0.1 ms a task)
            out[rel] = _add_shared(toolbox, shared, _unique(Path(rel).name, used), data, size)
            continue
        with _open(task, rel, data) as im:
            _check_pixels(task, rel, im.size)  # from the header: nothing is decoded before this
            why = needs_conversion(im)
            name = _unique(Path(rel).name if why is None else Path(rel).stem + _suffix(im), used)
            if why is None:  # e.g. a JPEG: sendable as it is
                out[rel] = _add_shared(toolbox, shared, name, data, im.size)
                continue
            ws = toolbox.store.workspace
            convert(im, ws / name)
        art = toolbox.store.add_file(ws / name, source="input", keep_name=True, converted_from=why)
        # the dataset's file as it was, for loops that send it as their driver did
        keep = ws / SOURCE_DIR / art.id
        keep.parent.mkdir(exist_ok=True)
        keep.write_bytes(data)
        out[rel] = art
    return out


def _add_shared(toolbox: Toolbox, shared: SharedInputs | None, name: str, data: bytes,
                size: tuple[int, int]) -> Artifact:
    digest = hashlib.sha256(data).hexdigest()
    path, first = shared.keep(data, Path(name).suffix, digest) if shared is not None else (None, False)
    # the encoder caches the shared copy by path: told once, it encodes the image once for the run
    return toolbox.store.add_input(name, data, size, path, digest=digest, remember=first)


#: where a converted input's original bytes are kept in the task workspace (`source_path`)
SOURCE_DIR = ".source"


def source_path(workspace: Path, art: Artifact) -> Path:
    """The dataset's own file of an input image: the original of one that was converted (a palette
    or 16-bit PNG, a TIFF …), else the artifact's file. An official loop whose driver reads the
    dataset's image itself (and sends it in its own mode) encodes from this."""
    kept = workspace / SOURCE_DIR / art.id
    return kept if kept.is_file() else workspace / art.file


def _unique(name: str, used: set[str]) -> str:
    if name in used:
        name = f"{len(used)}_{name}"
    used.add(name)
    return name


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: colour types (at 8 bits per sample) that PIL opens as L, RGB and RGBA: sendable as they are
_PLAIN_COLOUR_TYPES = frozenset({0, 2, 6})


def plain_png_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) of a PNG that needs no conversion — 8-bit grey, RGB or RGBA, one frame, intact
    chunks up to the first IDAT (as PIL checks when it opens one), within PIL's pixel limit — read
    from its chunks; None for anything else, which then goes through PIL."""
    if len(data) < 33 or data[:8] != _PNG_SIGNATURE or data[12:16] != b"IHDR":
        return None
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    if depth != 8 or colour not in _PLAIN_COLOUR_TYPES or not 0 < width * height <= imaging.MAX_PIXELS:
        return None
    pos = 8
    while pos + 12 <= len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        end = pos + 8 + length
        if end + 4 > len(data):
            return None
        if kind == b"IDAT":
            return width, height
        if kind == b"acTL" or zlib.crc32(data[pos + 4:end]) != struct.unpack(">I", data[end:end + 4])[0]:
            return None  # an animation (frames), or a damaged chunk: PIL decides and explains
        pos = end + 4
    return None


def _inside(task: Task, root: Path, rel: str) -> str:
    """The input image's real path, refused when it resolves outside the (resolved) dataset folder.

    The common case costs one `lstat` per component of `rel`: when none of them is a symlink (and
    `rel` has no `..`, which the task schema refuses), the path cannot leave `root`. A symlink
    anywhere in `rel` takes the full `realpath` and checks where it lands."""
    base = str(root)
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    try:
        here = base
        for part in parts:
            here = os.path.join(here, part)
            if stat.S_ISLNK(os.lstat(here).st_mode):
                break
        else:
            if parts and ".." not in parts:
                return here
        src = os.path.realpath(os.path.join(root, rel), strict=True)
    except (OSError, RuntimeError):
        raise InputImageError(f"task {task.id}: input image {rel} not found in {root}") from None
    if not src.startswith(base.rstrip(os.sep) + os.sep):
        raise InputImageError(
            f"task {task.id}: input image {rel} resolves to {src}, outside the dataset folder {root}; "
            "copy the image into the folder"
        )
    return src


def _check_pixels(task: Task, rel: str, size: tuple[int, int]) -> None:
    """The guarded decoder's pixel cap (`toolsight.imaging`), before anything decodes or converts the image."""
    try:
        imaging.check_size(size, what=f"task {task.id}: input image {rel}")
    except imaging.ImageRejected as exc:
        raise InputImageError(str(exc)) from None


@contextlib.contextmanager
def _open(task: Task, rel: str, data: bytes) -> Iterator[Image.Image]:
    try:
        im = imaging.pil().open(io.BytesIO(data))
    except Exception as exc:  # Pillow raises many types for malformed files; all mean "unreadable"
        raise InputImageError(f"task {task.id}: input image {rel} cannot be read ({type(exc).__name__}: {exc})") from None
    try:
        yield im
    finally:
        im.close()


def needs_conversion(im: Image.Image) -> str | None:
    """What makes an image unsendable as it is ('TIFF RGB', 'JPEG CMYK', 'GIF P, 12 frames'), or None."""
    frames = int(getattr(im, "n_frames", 1) or 1)
    if im.format in ACCEPTED_FORMATS and im.mode in ACCEPTED_MODES and frames == 1:
        return None
    return f"{im.format or 'unknown format'} {im.mode}" + (f", {frames} frames" if frames > 1 else "")


def _suffix(im: Image.Image) -> str:
    # a photo (JPEG, e.g. CMYK) stays a JPEG so it does not grow tenfold; everything else is a PNG
    return ".jpg" if im.format == "JPEG" else ".png"


def to_8bit(im: Image.Image) -> Image.Image:
    """The first frame as 8-bit RGB, RGBA or L, keeping transparency where there was some."""
    with contextlib.suppress(EOFError):
        im.seek(0)
    mode = im.mode
    if mode in ACCEPTED_MODES:
        return im.copy()
    if mode.startswith("I;16") or mode in ("I", "F"):
        import numpy as np  # here: only 16-bit and float inputs need it (~0.2 s off every run's start)

        arr = np.asarray(im, dtype=np.float64)
        top = 65535.0 if (mode.startswith("I;16") or arr.max(initial=0) > 255) else 255.0
        grey: Image.Image = imaging.pil().fromarray(np.clip(arr * (255.0 / top), 0, 255).round().astype(np.uint8), "L")
        return grey
    if mode == "1":
        return im.convert("L")
    transparent = mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in im.info
    return im.convert("RGBA" if transparent else "RGB")


def convert(im: Image.Image, dest: Path) -> None:
    """Write the first frame of `im` to `dest` as an 8-bit PNG or JPEG (by `dest`'s suffix)."""
    out = to_8bit(im)
    if dest.suffix == ".jpg":
        out.convert("RGB").save(dest, "JPEG", quality=95)
    else:
        out.save(dest, "PNG")
