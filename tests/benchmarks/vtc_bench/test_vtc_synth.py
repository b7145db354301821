"""VTC-style generated tasks: determinism, validity, and replay of the reference calls through the real tools."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from toolsight.benchmarks.vtc_bench.generate import KIND_NAMES, generate_vtc, read_answer, replay, vtc_starter
from toolsight.benchmarks.vtc_bench.generate.tasks import VTCSynthError
from toolsight.tasks.dataset import load_dataset

# VTC-Bench's tool-group vocabulary (research notes §2.1, the groups used in model_tools_gt)
VOCAB = {
    "Convert Color", "Draw Contours", "Binarize", "Adjust Brightness", "Morphology", "Draw Line", "Color Filter",
    "Rotate", "Crop", "Blur", "Measure Area", "Edge Detect", "Sharpen", "Histogram Eq", "Line Detect", "Flip",
    "Circle Detect", "Resize", "Approximate Polygon", "Denoise", "Draw Circle", "Watershed",
    "Connected Components", "Measure Perimeter", "Template Match", "Zoom in", "Inpaint",
}


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("vtc-starter")
    vtc_starter(root, seed=0)
    return root


def test_starter_is_valid(starter: Path) -> None:
    ds = load_dataset(starter)  # validates schema and images
    assert len(ds.tasks) == 8
    assert sorted(t.tags["kind"] for t in ds.tasks) == sorted(k for k in KIND_NAMES for _ in range(2))
    for t in ds.tasks:
        turn = t.turns[0]
        assert turn.options is not None and list(turn.options) == ["A", "B", "C", "D"]
        assert isinstance(turn.answer, str) and turn.answer in turn.options
        assert turn.options[turn.answer] == str(turn.meta["count"])
        assert len(set(turn.options.values())) == 4
        assert turn.prompt.endswith("\n\nOptions:\nA. " + turn.options["A"] + "\n\nB. " + turn.options["B"]
                                    + "\n\nC. " + turn.options["C"] + "\n\nD. " + turn.options["D"] + "\n")
        groups = [s.tool for s in turn.reference_steps]
        assert groups and set(groups) <= VOCAB, groups
        calls = turn.meta["reference_calls"]
        assert len(calls) == len(groups)
        assert calls[0]["arguments"]["image"] == "$input"
        assert all(c["arguments"]["image"] == "$prev" for c in calls[1:])
        assert all(c["tool"].startswith("opencv_") for c in calls)
        assert t.tags["category"] in {"counting", "color", "measure", "ocr"}


def test_reference_calls_replay_to_the_answer(starter: Path) -> None:
    ds = load_dataset(starter)

    async def run_all() -> list[tuple[str, str | None, str | None]]:
        out = []
        for t in ds.tasks:
            res = await replay(t, starter)
            assert res.ok, res.error
            out.append((t.id, res.answer, t.turns[0].answer if isinstance(t.turns[0].answer, str) else None))
        return out

    for tid, got, want in asyncio.run(run_all()):
        assert got == want, tid


def test_restoration_step_is_needed(tmp_path: Path) -> None:
    # without undoing the rotation/flip, the strip is cropped from the wrong place: answers go wrong
    tasks = generate_vtc("bars", 6, seed=3, out_dir=tmp_path)

    async def without_undo() -> int:
        wrong = 0
        for t in tasks:
            turn = t.turns[0]
            calls = turn.meta["reference_calls"][1:]
            calls[0] = {**calls[0], "arguments": {**calls[0]["arguments"], "image": "$input"}}
            broken = t.model_copy(deep=True)
            broken.turns[0].meta["reference_calls"] = calls
            res = await replay(broken, tmp_path)
            wrong += res.answer != turn.answer
        return wrong

    assert asyncio.run(without_undo()) >= 3


def test_deterministic(tmp_path: Path) -> None:
    a = generate_vtc("count_objects", 3, seed=11, out_dir=tmp_path / "a")
    b = generate_vtc("count_objects", 3, seed=11, out_dir=tmp_path / "b")
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b]
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    generate_vtc("count_objects", 3, seed=12, out_dir=tmp_path / "c")
    assert _digest(tmp_path / "a") != _digest(tmp_path / "c")


def test_each_kind_generates_without_verification(tmp_path: Path) -> None:
    for kind in KIND_NAMES:
        tasks = generate_vtc(kind, 2, seed=5, out_dir=tmp_path / kind, verify=False)
        assert len(tasks) == 2 and (tmp_path / kind / "tasks.jsonl").is_file()


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(VTCSynthError, match="unknown VTC-style kind"):
        generate_vtc("mazes", 1, 0, tmp_path)
    with pytest.raises(VTCSynthError, match="at least 1"):
        generate_vtc("bars", 0, 0, tmp_path)


def test_read_answer_rules() -> None:
    text = 'Found 3. INFO: {"total_components": 3, "components": [{"area": 5}]}\n\nEdited Image Path: img-1'
    assert read_answer(text, {"field": "total_components"}) == "3"
    assert read_answer(text, {"field": "total_components", "map": {"3": "B"}}) == "B"
    assert read_answer(text, {"field": "total_components", "map": {"4": "B"}}) is None
    assert read_answer(text, {"field": "components", "op": "len"}) == "1"
    assert read_answer(text, {"field": "components.0.area"}) == "5"
    assert read_answer("no info here", {"field": "x"}) is None
