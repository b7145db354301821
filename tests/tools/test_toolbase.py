"""The tool interface: schema from a typed function, argument validation, artifacts, provenance."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import cv2
import numpy as np
from pydantic import Field

from enginekit import imread, write_png
from toolsight.tools.base import ArtifactStore, Toolbox, ToolContext, ToolResult, tool
from toolsight.tools.crop import crop


@tool
def brighten(ctx: ToolContext, image: str, amount: int = Field(default=10, ge=0, le=100)) -> ToolResult:
    """Add a constant to every pixel.

    Args:
        image: image id or workspace file name.
        amount: how much to add (0-100).
    """
    art, arr = ctx.store.load_array(image)
    out = ctx.store.add_array(cv2.add(arr, np.full_like(arr, amount)), parents=[art.id], tool_call_id=ctx.call_id)
    return ToolResult(text="ok", artifacts=[out])


def _box(tmp_path: Path) -> tuple[Toolbox, str]:
    write_png(tmp_path / "in.png", 100, 80)
    store = ArtifactStore(tmp_path / "ws")
    a = store.add_file(tmp_path / "in.png", source="input")
    return Toolbox([crop, brighten], store, "t"), a.id


def test_schema_from_signature_and_docstring() -> None:
    p = brighten.parameters
    assert p["required"] == ["image"]
    assert p["properties"]["amount"]["maximum"] == 100
    assert p["properties"]["amount"]["description"] == "how much to add (0-100)."
    assert brighten.description == "Add a constant to every pixel."
    assert crop.parameters["required"] == ["image", "bbox"]


def test_bad_calls_become_readable_failures(tmp_path: Path) -> None:
    box, img = _box(tmp_path)
    cases = {
        "{oops": "not valid JSON",
        json.dumps({"image": img, "amount": 500}): "less than or equal to 100",
        json.dumps({"amount": 5}): "missing required argument 'image'",
        json.dumps({"image": img, "colour": 1}): "unknown argument 'colour'",
        json.dumps({"image": "/etc/passwd"}): "not an artifact id",
        json.dumps({"image": "nope.png"}): "unknown image",
        "[1, 2]": "must be a JSON object",
    }
    for args, expect in cases.items():
        r = asyncio.run(box.call("brighten", args))
        assert not r.ok and expect in (r.error or ""), (args, r.error)
    r = asyncio.run(box.call("crop", {"image": img, "bbox": [0.5, 0.5, 0.2, 0.9]}))
    assert not r.ok and "empty or outside" in (r.error or "")
    assert "Unknown tool" in (asyncio.run(box.call("rotate", {})).error or "")


def test_artifacts_chain_with_provenance(tmp_path: Path) -> None:
    box, img = _box(tmp_path)
    r1 = asyncio.run(box.call("crop", {"image": img, "bbox": [10, 20, 60, 70], "units": "pixel"}, "c1"))
    assert r1.ok
    a1 = r1.artifacts[0]
    assert (a1.width, a1.height) == (50, 50) and a1.parents == (img,) and a1.tool_call_id == "c1"
    r2 = asyncio.run(box.call("brighten", {"image": a1.id, "amount": 50}, "c2"))
    a2 = r2.artifacts[0]
    assert a2.parents == (a1.id,)
    pixels = imread(box.store.path(a2))
    original = imread(tmp_path / "in.png")[20:70, 10:60]
    assert np.array_equal(pixels, cv2.add(original, np.full_like(original, 50)))
    # the same content twice is one artifact (content-addressed)
    again = asyncio.run(box.call("crop", {"image": img, "bbox": [10, 20, 60, 70], "units": "pixel"}, "c3"))
    assert again.artifacts[0].id == a1.id
    assert [a.id for a in box.store.all()] == [img, a1.id, a2.id]
    # a workspace file can be referenced by name
    r3 = asyncio.run(box.call("crop", {"image": a2.file, "bbox": [0, 0, 0.5, 0.5]}))
    assert r3.ok and r3.artifacts[0].parents == (a2.id,)
