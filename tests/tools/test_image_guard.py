"""The one guarded image decoder (`toolsight.imaging`, issue 27 item 4) and the paths that use it here:
the `crop` tool (and every tool that loads an artifact's pixels), a kernel's displayed image, and the
artifact store itself. Web fetches, crops and reverse search: tests/web/test_web_round3.py; VTC-Bench's
`serve_image`: tests/benchmarks/vtc_bench/test_vtc_round3.py; datasets: tests/tasks/test_dataset.py;
task inputs: tests/agents/test_inputs.py;
model code's harvested images: tests/sandbox/test_code_tools.py."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from enginekit import write_png_bomb
from toolsight import imaging
from toolsight.tasks.dataset import validate_dataset
from toolsight.tools.base import ArtifactStore, ToolContext
from toolsight.tools.crop import crop
from toolsight.tools.python_tools import register_display

BOMB = (11_000, 11_000)  # 121 Mpx: under twice Pillow's limit, where Pillow only warns and decodes


def _png(w: int, h: int, mode: str = "RGB") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, (w, h), 90).save(buf, format="PNG")
    return buf.getvalue()


def test_the_header_decides_before_any_pixel_is_decoded(tmp_path: Path) -> None:
    write_png_bomb(tmp_path / "bomb.png", *BOMB)
    data = (tmp_path / "bomb.png").read_bytes()
    assert len(data) < 1_000_000
    with pytest.raises(imaging.ImageRejected, match=r"11000x11000 pixels \(121.0 Mpx\), over the pixel limit"):
        imaging.check(data)
    with pytest.raises(imaging.ImageRejected, match="pixel limit"):
        imaging.open_image(data)
    with pytest.raises(imaging.ImageRejected, match="pixel limit"):
        imaging.decode_array(data)
    with pytest.raises(imaging.ImageRejected, match="pixel limit"):
        imaging.check_file(tmp_path / "bomb.png")
    ok = _png(64, 48)
    assert imaging.check(ok) == imaging.ImageInfo("PNG", 64, 48, "RGB")
    assert imaging.check(ok, max_pixels=64 * 48).size == (64, 48)  # at the limit: accepted
    with pytest.raises(imaging.ImageRejected, match="pixel limit"):
        imaging.check(ok, max_pixels=64 * 48 - 1)
    with pytest.raises(imaging.ImageRejected, match="over the 100-byte limit"):
        imaging.check(ok, max_bytes=100)
    arr = imaging.decode_array(ok)
    assert arr.shape == (48, 64, 3) and arr.dtype == np.uint8 and arr[0, 0].tolist() == [0, 0, 90]  # BGR


def test_only_the_accepted_formats_are_decoded(tmp_path: Path) -> None:
    """Pillow's EPS plugin runs Ghostscript on the bytes; the guard never hands them to it."""
    eps = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\nshowpage\n"
    with pytest.raises(imaging.ImageRejected, match="not a readable image in an accepted format"):
        imaging.check(eps)
    jpeg = io.BytesIO()
    Image.new("RGB", (30, 20)).save(jpeg, format="JPEG")
    assert imaging.check(jpeg.getvalue()).format == "JPEG"
    with pytest.raises(imaging.ImageRejected, match="not a readable image"):
        imaging.check(b"GIF89a but not really")


def test_a_dataset_image_in_a_format_outside_the_list_is_a_problem(tmp_path: Path) -> None:
    import json

    root = tmp_path / "ds"
    root.mkdir()
    (root / "img.eps").write_bytes(b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\nshowpage\n")
    task = {"id": "t0", "benchmark": "custom", "turns": [{"prompt": "q", "images": [{"path": "img.eps"}],
                                                          "answer": "a"}]}
    (root / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    problems = [str(p) for p in validate_dataset(root)]
    assert len(problems) == 1 and "not a readable image" in problems[0], problems


def test_the_crop_tool_refuses_a_bomb_in_the_workspace(tmp_path: Path) -> None:
    """A file model code wrote: the crop tool (like every tool that loads an artifact's pixels) took the
    harness from 77 MiB to about 1 GiB for an 11000x11000 PNG of 470 KB."""
    store = ArtifactStore(tmp_path / "ws")
    write_png_bomb(store.workspace / "big.png", *BOMB)
    (store.workspace / "small.png").write_bytes(_png(40, 30))
    ctx = ToolContext(store=store, call_id="c1", task_id="t1")
    res = asyncio.run(crop({"image": "big.png", "bbox": [0, 0, 0.5, 0.5]}, ctx))
    assert not res.ok and "pixel limit" in res.text, res.text
    assert store.all() == []  # nothing of it was registered
    good = asyncio.run(crop({"image": "small.png", "bbox": [0, 0, 0.5, 0.5]}, ctx))
    assert good.ok and good.artifacts[0].width == 20


def test_a_kernels_displayed_bomb_is_a_note_not_an_artifact(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "ws")
    write_png_bomb(store.workspace / ".display" / "cell1-1.png", *BOMB)
    ctx = ToolContext(store=store, call_id="c1", task_id="t1")
    got = register_display(ctx, ".display/cell1-1.png", "python_kernel")
    assert isinstance(got, str) and "pixel limit" in got, got
    assert store.all() == []


def test_the_artifact_store_checks_bytes_before_it_writes_them(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "ws")
    write_png_bomb(tmp_path / "bomb.png", *BOMB)
    with pytest.raises(imaging.ImageRejected):
        store.add_bytes((tmp_path / "bomb.png").read_bytes(), ".png")
    assert [p.name for p in store.workspace.iterdir()] == []


def _pil_verifies(data: bytes) -> bool:
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.verify()
    except Exception:
        return False
    return True


def test_png_intact_says_yes_only_where_pillows_verify_does() -> None:
    """`png_intact` decides a dataset's plain PNGs without Pillow: it may pass a PNG to Pillow
    (False) but must never accept one Pillow's verify refuses."""
    plain = _png(5, 4)
    damaged = bytearray(plain)
    damaged[45] ^= 0x01  # a byte inside IDAT: its CRC no longer matches
    no_pixels = plain[:33] + plain[-12:]  # signature, IHDR, IEND: no IDAT
    cases = {
        "plain RGB": plain, "RGBA": _png(3, 3, "RGBA"), "grey": _png(3, 3, "L"), "trailing bytes": plain + b"xx",
        "IDAT damaged": bytes(damaged), "truncated": plain[:-6], "no IDAT": no_pixels, "palette": _png(3, 3, "P"),
        "not a PNG": b"GIF89a" + plain[6:],
    }
    decided = {name: imaging.png_intact(data) for name, data in cases.items()}
    assert decided == {"plain RGB": True, "RGBA": True, "grey": True, "trailing bytes": True, "IDAT damaged": False,
                       "truncated": False, "no IDAT": False, "palette": False, "not a PNG": False}
    for name, data in cases.items():
        if decided[name]:
            assert _pil_verifies(data), name
    assert not _pil_verifies(bytes(damaged))


def test_a_damaged_png_in_a_dataset_is_still_a_problem(tmp_path: Path) -> None:
    """A PNG `png_intact` refuses goes to Pillow, which names what is wrong, as before."""
    from toolsight.tasks.dataset import write_dataset
    from toolsight.tasks.schema import ImageRef, Task, Turn

    damaged = bytearray(_png(5, 4))
    damaged[45] ^= 0x01
    (tmp_path / "bad.png").write_bytes(bytes(damaged))
    (tmp_path / "good.png").write_bytes(_png(5, 4))
    write_dataset(tmp_path, [Task(id="a", turns=[Turn(prompt="p", images=[ImageRef(path="good.png")])]),
                             Task(id="b", turns=[Turn(prompt="p", images=[ImageRef(path="bad.png")])])])
    problems = validate_dataset(tmp_path)
    assert len(problems) == 1 and "bad.png" in str(problems[0]) and "not a readable image" in str(problems[0])


def test_read_capped_reads_a_file_whole_and_refuses_one_over_the_cap(tmp_path: Path) -> None:
    data = _png(20, 20)
    (tmp_path / "a.png").write_bytes(data)
    assert imaging.read_capped(tmp_path / "a.png") == data
    assert imaging.read_capped(tmp_path / "a.png", max_bytes=len(data)) == data
    with pytest.raises(imaging.ImageRejected, match=f"over the {len(data) - 1:,}-byte limit"):
        imaging.read_capped(tmp_path / "a.png", max_bytes=len(data) - 1)
    (tmp_path / "empty.png").write_bytes(b"")
    assert imaging.read_capped(tmp_path / "empty.png") == b""
