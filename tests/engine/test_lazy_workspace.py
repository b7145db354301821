"""Task workspaces made only when a task needs one, and input images kept once per run (issue 29 item 5).

A task that calls no tool writes no file of its own: its input is the run's shared copy
(`RUN/artifacts/.inputs/`), which the viewer and the Inspect export find through
`artifact_files`. A task whose model crops gets its workspace, with a private copy of its input
under the dataset's name, and a write there never reaches the shared copy.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import cv2
import numpy as np

from enginekit import write_png
from toolsight.benchmarks.dataset.benchmark import DatasetBenchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner
from toolsight.engine.store import artifact_files, iter_records, shared_inputs_dir
from toolsight.log.record import Record
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart, ToolCall, Usage
from toolsight.report.viewer import build_viewer
from toolsight.tools.artifacts import ArtifactStore
from toolsight.tools.base import ToolSpec


class CropOnce(Model):
    """Crops the input once (when it is offered a tool), then answers A."""

    def __init__(self) -> None:
        super().__init__("test/crop-once")

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        usage = Usage(input_tokens=10, output_tokens=2)
        if tools and not any(m.role == "tool" for m in messages):
            args = json.dumps({"image": "a.png", "bbox": [0.0, 0.0, 0.5, 0.5]})
            msg = Message(role="assistant", tool_calls=[ToolCall(id="c0", name="crop", arguments=args)])
            return ModelOutput(message=msg, usage=usage, finish_reason="tool_calls")
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text="<answer>A</answer>")]),
                           usage=usage)


def _dataset(root: Path, n: int = 4) -> Path:
    rng = np.random.default_rng(1)
    (root / "images").mkdir(parents=True)
    cv2.imwrite(str(root / "images" / "a.png"), rng.integers(0, 256, (40, 50, 3), dtype=np.uint8))
    cv2.imwrite(str(root / "images" / "b.png"), rng.integers(0, 256, (30, 20, 3), dtype=np.uint8))
    with (root / "tasks.jsonl").open("w") as fh:
        for i in range(n):  # tasks 0..n-2 share a.png; the last one has b.png
            image = "images/a.png" if i < n - 1 else "images/b.png"
            fh.write(json.dumps({"id": f"t{i}", "turns": [{"prompt": f"[task:t{i}] Which?", "images": [{"path": image}],
                                                           "answer": "A"}]}) + "\n")
    return root


def _run(data: Path, out: Path, setting: str) -> list[Record]:
    bench = DatasetBenchmark(data)
    opts = RunOptions.of(benchmark=str(data), model="test/crop-once", setting=setting, out=str(out), backoff_base=0.01)
    asyncio.run(Runner(opts, bench, bench.load(None), CropOnce()).run())
    recs = sorted(iter_records(out), key=lambda r: r.task_id)
    assert recs and all(r.error is None for r in recs), [r.error for r in recs]
    return recs


def test_a_run_without_tools_keeps_one_copy_per_image_and_no_task_folder(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "ds")
    out = tmp_path / "run"
    recs = _run(data, out, "direct")
    assert sorted(os.listdir(out / "artifacts")) == [".inputs"]  # no task made a folder
    ids = {r.trajectory.artifacts[0].id for r in recs}
    assert len(ids) == 2 and sorted(p.name for p in shared_inputs_dir(out).iterdir()) == sorted(f"{i}.png" for i in ids)
    for rec in recs:
        (art,) = rec.trajectory.artifacts
        src = data / "images" / ("a.png" if rec.task_id != "t3" else "b.png")
        assert art.file == src.name and art.source == "input"  # the prompt's file name is the dataset's
        assert artifact_files(out, rec)[art.id].read_bytes() == src.read_bytes()
    # editing the dataset later changes nothing in the run
    write_png(data / "images" / "a.png", 5, 5)
    assert artifact_files(out, recs[0])[recs[0].trajectory.artifacts[0].id].read_bytes() != (
        data / "images" / "a.png").read_bytes()
    # the viewer shows the shared copy (copied into its site)
    site = tmp_path / "site"
    build_viewer(out, site)
    page = next(p for p in site.rglob("*.html") if "t3" in p.name)
    shown = [site / "img" / p.split("img/", 1)[1] for p in _img_srcs(page.read_text())]
    assert [p.read_bytes() for p in shown] == [(tmp_path / "ds" / "images" / "b.png").read_bytes()]


def _img_srcs(html: str) -> list[str]:
    return [m for m in re.findall(r'<img[^>]*src="([^"]+)"', html) if "img/" in m]


def test_a_tool_task_gets_its_workspace_with_a_private_copy_of_its_input(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "ds", n=2)
    out = tmp_path / "run"
    recs = _run(data, out, "crop")
    rec = recs[0]
    ws = out / "artifacts" / "t0"
    inp = next(a for a in rec.trajectory.artifacts if a.source == "input")
    crop = next(a for a in rec.trajectory.artifacts if a.source == "tool")
    assert sorted(p.name for p in ws.iterdir()) == sorted(["a.png", crop.file])
    shared = artifact_files(out, rec)[inp.id]
    assert shared.parent == shared_inputs_dir(out)
    assert (ws / "a.png").read_bytes() == shared.read_bytes()
    # a private copy: not a link to the shared one (model code may write in its workspace)
    assert os.stat(ws / "a.png").st_ino != os.stat(shared).st_ino and os.stat(shared).st_nlink == 1
    assert crop.parents == (inp.id,) and artifact_files(out, rec)[crop.id] == ws / crop.file


def test_a_lazy_store_makes_its_folder_when_asked_and_writes_the_inputs_there(tmp_path: Path) -> None:
    shared = tmp_path / "shared.png"
    write_png(shared, 6, 4)
    data = shared.read_bytes()
    heard: list[str] = []
    ws = tmp_path / "artifacts" / "t0"
    store = ArtifactStore(ws, lazy=True, on_write=lambda path, _: heard.append(path))
    art = store.add_input("photo.png", data, (6, 4), shared)
    assert not ws.exists()
    assert store.path(art) == shared and heard == [str(shared)]  # read from the shared copy meanwhile
    assert store.workspace == ws and ws.is_dir()
    assert (ws / "photo.png").read_bytes() == data and heard[-1] == str(ws / "photo.png")
    assert store.path(art) == ws / "photo.png"
    (ws / "photo.png").write_bytes(b"overwritten by model code")
    assert shared.read_bytes() == data


def test_read_only_inputs_are_made_in_the_workspace_before_model_code(tmp_path: Path) -> None:
    shared = tmp_path / "shared.png"
    write_png(shared, 6, 4)
    ws = tmp_path / "w"
    store = ArtifactStore(ws, lazy=True)
    store.add_input("a.png", shared.read_bytes(), (6, 4), shared)
    store.make_read_only()
    assert (ws / "a.png").is_file() and not os.stat(ws / "a.png").st_mode & 0o222
    assert os.stat(shared).st_mode & 0o200  # the shared copy was not the one touched


def test_a_left_over_folder_of_a_killed_attempt_is_replaced_when_the_workspace_is_made(tmp_path: Path) -> None:
    shared = tmp_path / "shared.png"
    write_png(shared, 6, 4)
    ws = tmp_path / "w"
    ws.mkdir()
    (ws / "half.png").write_bytes(b"partial")
    store = ArtifactStore(ws, lazy=True)
    store.add_input("a.png", shared.read_bytes(), (6, 4), shared)
    assert sorted(p.name for p in store.workspace.iterdir()) == ["a.png"]


def test_one_image_under_two_names_is_in_the_workspace_under_both(tmp_path: Path) -> None:
    """A multi-turn task may give the same picture as turn 0's and turn 1's image: one artifact,
    two files by name (model code opens each turn's by its name)."""
    shared = tmp_path / "shared.png"
    write_png(shared, 6, 4)
    data = shared.read_bytes()
    store = ArtifactStore(tmp_path / "w", lazy=True)
    a = store.add_input("turn_0_image_0.png", data, (6, 4), shared)
    b = store.add_input("turn_1_image_0.png", data, (6, 4), shared)
    assert a is b and len(store.all()) == 1
    assert sorted(p.name for p in store.workspace.iterdir()) == ["turn_0_image_0.png", "turn_1_image_0.png"]
    store.add_input("turn_2_image_0.png", data, (6, 4), shared)  # registered once the folder is made
    assert (store.workspace / "turn_2_image_0.png").read_bytes() == data


def test_a_run_leaves_no_image_in_the_encoder_cache(tmp_path: Path) -> None:
    """The base64 cache holds up to 64 MB of a run's images; the report that follows a run needs the
    memory more (docs/speed.md), so the run empties it when it ends."""
    from toolsight.models import images

    _run(_dataset(tmp_path / "ds", n=2), tmp_path / "run", "crop")
    assert images._b64_cache._bytes == 0 and not images._b64_cache._data
