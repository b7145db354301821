"""Input images registered in a task's workspace: copied (never hard-linked), converted when a
provider could not take them (with the conversion recorded), refused when they leave the dataset."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from toolsight.agents.inputs import InputImageError, plain_png_size, register_inputs
from toolsight.tasks.schema import Task
from toolsight.tools.base import Artifact, ArtifactStore, Toolbox


def _task(*paths: str) -> Task:
    return Task.model_validate({"id": "t", "turns": [{"prompt": "p", "images": [{"path": p} for p in paths]}]})


def _register(root: Path, ws: Path, *paths: str) -> dict[str, Artifact]:
    return dict(register_inputs(_task(*paths), root, Toolbox([], ArtifactStore(ws), "t")))


def _gradient(w: int = 40, h: int = 30) -> np.ndarray:
    x = np.linspace(0, 255, w, dtype=np.float64)
    return np.tile(x, (h, 1))


def test_inputs_are_private_copies(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    root.mkdir()
    Image.fromarray(_gradient().astype(np.uint8), "L").convert("RGB").save(root / "a.png")
    ws = tmp_path / "ws"
    arts = _register(root, ws, "a.png")
    copy = ws / "a.png"
    assert copy.read_bytes() == (root / "a.png").read_bytes()
    assert os.stat(copy).st_ino != os.stat(root / "a.png").st_ino and os.stat(root / "a.png").st_nlink == 1
    # editing the dataset afterwards does not change the run's copy
    Image.new("RGB", (40, 30), (255, 0, 0)).save(root / "a.png")
    assert copy.read_bytes() != (root / "a.png").read_bytes()
    art = arts["a.png"]
    assert art.converted_from is None and art.source == "input"


def _cmyk_jpeg(p: Path) -> None:
    Image.new("CMYK", (40, 30), (255, 0, 0, 0)).save(p, "JPEG")  # pure cyan ink


def _tiff(p: Path) -> None:
    Image.fromarray(np.dstack([_gradient()] * 3).astype(np.uint8), "RGB").save(p, "TIFF")


def _png16(p: Path) -> None:
    Image.fromarray((_gradient() * 257).astype(np.uint16)).save(p)


def _gif(p: Path) -> None:
    frames = []
    for i, colour in enumerate([(255, 0, 0), (0, 255, 0), (0, 0, 255)]):
        im = Image.new("RGB", (40, 30), (255, 255, 255))
        im.paste(colour, (i * 10, 0, i * 10 + 10, 30))
        frames.append(im.convert("P"))
    frames[0].save(p, save_all=True, append_images=frames[1:], duration=50, loop=0)


def _apng(p: Path) -> None:
    frames = [Image.new("RGB", (40, 30), c) for c in [(255, 0, 0), (0, 255, 0), (0, 0, 255)]]
    frames[0].save(p, save_all=True, append_images=frames[1:], duration=50)


def _palette_png(p: Path) -> None:
    Image.new("RGB", (40, 30), (255, 0, 0)).convert("P").save(p)


def _la_png(p: Path) -> None:
    Image.new("LA", (40, 30), (128, 200)).save(p)


@pytest.mark.parametrize(
    ("name", "make", "was", "out_name", "fmt", "mode"),
    [
        ("cmyk.jpg", _cmyk_jpeg, "JPEG CMYK", "cmyk.jpg", "JPEG", "RGB"),
        ("scan.tif", _tiff, "TIFF RGB", "scan.png", "PNG", "RGB"),
        ("depth.png", _png16, "PNG I;16", "depth.png", "PNG", "L"),
        ("anim.gif", _gif, "GIF P, 3 frames", "anim.png", "PNG", "RGB"),
        ("anim.png", _apng, "PNG RGB, 3 frames", "anim.png", "PNG", "RGB"),
        ("palette.png", _palette_png, "PNG P", "palette.png", "PNG", "RGB"),
        ("greyalpha.png", _la_png, "PNG LA", "greyalpha.png", "PNG", "RGBA"),
    ],
)
def test_images_a_provider_cannot_take_are_converted(name: str, make: object, was: str, out_name: str, fmt: str,
                                                      mode: str, tmp_path: Path) -> None:
    root = tmp_path / "ds"
    root.mkdir()
    make(root / name)  # type: ignore[operator]
    ws = tmp_path / "ws"
    art = _register(root, ws, name)[name]
    assert art.converted_from == was and art.file == out_name
    with Image.open(ws / out_name) as im:
        assert (im.format, im.mode, getattr(im, "n_frames", 1)) == (fmt, mode, 1)
        px = np.asarray(im)
    if name == "depth.png":  # 16-bit values scaled to 8 bits, not clipped or wrapped
        assert px.min() == 0 and px.max() == 255 and 120 <= int(px[0, 20]) <= 135
    if name == "anim.gif":  # the first frame: red at the left
        assert tuple(int(v) for v in px[15, 5]) == (255, 0, 0) and tuple(int(v) for v in px[15, 15]) == (255, 255, 255)
    if name == "cmyk.jpg":  # cyan in CMYK is cyan in RGB
        r, g, b = (int(v) for v in px[15, 20])
        assert r < 60 and g > 200 and b > 200


def test_a_symlink_out_of_the_dataset_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    root.mkdir()
    secret = tmp_path / "elsewhere.png"
    Image.new("RGB", (4, 4)).save(secret)
    (root / "link.png").symlink_to(secret)
    with pytest.raises(InputImageError, match="outside the dataset folder"):
        _register(root, tmp_path / "ws", "link.png")
    # a symlink that stays inside the folder is fine
    Image.new("RGB", (4, 4)).save(root / "real.png")
    (root / "alias.png").symlink_to(root / "real.png")
    assert _register(root, tmp_path / "ws2", "alias.png")["alias.png"] is not None


def test_a_symlinked_folder_out_of_the_dataset_is_refused(tmp_path: Path) -> None:
    """A symlink in the middle of the path (a folder) is followed and checked, as one at the end is;
    a real sub-folder, a missing file and a `./` in the path take the quick check."""
    root = tmp_path / "ds"
    (root / "real").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    Image.new("RGB", (4, 4)).save(outside / "x.png")
    (root / "sub").symlink_to(outside)
    with pytest.raises(InputImageError, match="outside the dataset folder"):
        _register(root, tmp_path / "ws", "sub/x.png")
    Image.new("RGB", (4, 4)).save(root / "real" / "y.png")
    assert _register(root, tmp_path / "ws2", "./real/y.png")["./real/y.png"] is not None
    (root / "in").symlink_to(root / "real")  # a folder symlink that stays inside
    assert _register(root, tmp_path / "ws3", "in/y.png")["in/y.png"] is not None
    with pytest.raises(InputImageError, match="not found"):
        _register(root, tmp_path / "ws4", "real/missing.png")


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA", "P", "LA", "I;16", "1"])
def test_the_png_header_check_agrees_with_pil(mode: str, tmp_path: Path) -> None:
    """Inputs are decided from the PNG header without PIL when they are plain 8-bit grey/RGB/RGBA:
    the size it reads is PIL's, and every other kind of PNG is left to PIL (None)."""
    p = tmp_path / "x.png"
    Image.new(mode, (37, 23)).save(p)
    with Image.open(p) as im:
        plain = im.format == "PNG" and im.mode in ("L", "RGB", "RGBA") and getattr(im, "n_frames", 1) == 1
        assert plain_png_size(p.read_bytes()) == ((37, 23) if plain else None)
    art = _register(tmp_path, tmp_path / "ws", "x.png")["x.png"]
    assert (art.width, art.height) == (37, 23)
    assert (art.converted_from is None) == plain


def test_a_png_with_a_damaged_header_is_refused_as_pil_refuses_it(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    root.mkdir()
    Image.new("RGB", (8, 8)).save(root / "ok.png")
    data = bytearray((root / "ok.png").read_bytes())
    data[29] ^= 0xFF  # a byte of the IHDR chunk's CRC
    (root / "bad.png").write_bytes(bytes(data))
    assert plain_png_size(bytes(data)) is None
    with pytest.raises(InputImageError, match=r"bad\.png cannot be read"):
        _register(root, tmp_path / "ws", "bad.png")


def _plain_grey_png(path: Path, width: int, height: int) -> None:
    """An 8-bit greyscale PNG of zeros, compressed in slices so no buffer of all its pixels is made."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    comp = zlib.compressobj(6)
    rows = b"\0" * ((1 + width) * 500)
    idat = b"".join(comp.compress(rows) for _ in range(height // 500)) + comp.flush()
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b""))


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")  # PIL's own header-time warning
@pytest.mark.parametrize("fmt", ["8-bit PNG", "1-bit PNG", "TIFF"])
def test_an_input_image_over_the_pixel_limit_is_refused_before_it_is_decoded(fmt: str, tmp_path: Path) -> None:
    """The guarded decoder's pixel cap (64 Mpx) holds for a task's inputs too, by the header, before PIL
    decodes or converts anything: an 8-bit PNG of 72 Mpx (where PIL itself only warns), a 1-bit PNG and a
    TIFF of 121 Mpx."""
    from enginekit import write_png_bomb

    root = tmp_path / "ds"
    root.mkdir()
    w, h, name = 11_000, 11_000, "big.png"
    if fmt == "8-bit PNG":
        w, h = 9_000, 8_000
        _plain_grey_png(root / name, w, h)
    elif fmt == "1-bit PNG":
        write_png_bomb(root / name, w, h)
    else:  # a 1-bit TIFF of the same size (15 MB of pixels to write it)
        name = "big.tif"
        Image.new("1", (w, h)).save(root / name, compression="group4")
    with pytest.raises(InputImageError, match=rf"{name.replace('.', '[.]')} is {w}x{h} pixels .* over the pixel limit"):
        _register(root, tmp_path / "ws", name)
