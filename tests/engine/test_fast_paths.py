"""The shortcuts the speed work took (docs/speed.md) give the answers the long way gives."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from toolsight.agents.images import fit_pixels
from toolsight.log.messages import ImagePart
from toolsight.models.images import _B64Cache, image_b64
from toolsight.tools.artifacts import image_size
from toolsight.tools.crop import crop


def _encoded(shape: tuple[int, ...], fmt: str) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, shape, dtype=np.uint8)).save(buf, fmt)
    return buf.getvalue()


@pytest.mark.parametrize(("shape", "fmt"), [((12, 16, 3), "PNG"), ((30, 7), "PNG"), ((9, 5, 4), "PNG"),
                                            ((5, 9, 3), "JPEG"), ((6, 4, 3), "BMP")])
def test_image_size_matches_pil(shape: tuple[int, ...], fmt: str) -> None:
    data = _encoded(shape, fmt)
    with Image.open(io.BytesIO(data)) as im:
        assert image_size(data) == im.size == (shape[1], shape[0])


def test_fit_pixels_trusts_a_known_size_and_opens_the_file_otherwise(tmp_path: Path) -> None:
    big = tmp_path / "big.png"
    big.write_bytes(_encoded((40, 50, 3), "PNG"))
    # the artifact's size says it fits: the file is not opened (it is not even an image here)
    fake = tmp_path / "not-an-image.png"
    fake.write_bytes(b"nope")
    assert fit_pixels(fake, 100, tmp_path / ".sent", size=(10, 10)) == fake
    # too large by its size: scaled down, from the pixels
    out = fit_pixels(big, 500, tmp_path / ".sent", size=(50, 40))
    assert out != big
    with Image.open(out) as im:
        assert im.size[0] * im.size[1] <= 500
    assert fit_pixels(big, 500, tmp_path / ".sent") == out  # unknown size: opened, same answer


def test_b64_cache_is_bounded_by_entries_and_bytes(tmp_path: Path) -> None:
    files = []
    for i in range(4):
        p = tmp_path / f"{i}.bin"
        p.write_bytes(bytes([i]) * 300)  # 400 base64 characters each
        files.append(str(p))
    cache = _B64Cache(max_entries=3, max_bytes=1000)
    for f in files:
        cache.get(f)
    assert list(cache._data) == files[2:]  # 3 entries would be 1,200 characters: only the newest 2 stay
    assert cache._bytes == 800
    Path(files[3]).write_bytes(b"changed")
    assert cache.get(files[3]) == base64.b64encode(bytes([3]) * 300).decode()  # encoded once, then kept
    assert image_b64(ImagePart(path=files[0])) == base64.b64encode(bytes([0]) * 300).decode()


def test_a_tool_spec_is_built_once_and_rebuilt_when_the_tool_changes() -> None:
    first = crop.spec()
    assert crop.spec() is first
    old = crop.description
    try:
        crop.description = "another description"
        assert crop.spec() is not first and crop.spec().description == "another description"
    finally:
        crop.description = old
    assert crop.spec().description == old
