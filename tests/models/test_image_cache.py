"""The base64 of an image is made from the bytes the store just wrote: an input or a tool's image
is not read back from disk for its first send, and a file written again is sent with its new bytes."""

from __future__ import annotations

import base64
from pathlib import Path

from PIL import Image

from toolsight.agents.inputs import register_inputs
from toolsight.log.messages import ImagePart
from toolsight.models.images import image_b64, remember_image_bytes
from toolsight.tasks.schema import Task
from toolsight.tools.base import ArtifactStore, Toolbox


def _png(colour: tuple[int, int, int], path: Path) -> bytes:
    Image.new("RGB", (6, 5), colour).save(path)
    return path.read_bytes()


def test_an_input_is_sent_from_the_bytes_registered_not_read_back(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    root.mkdir()
    data = _png((1, 2, 3), root / "a.png")
    store = ArtifactStore(tmp_path / "ws", on_write=remember_image_bytes)  # as a run wires it
    task = Task.model_validate({"id": "t", "turns": [{"prompt": "p", "images": [{"path": "a.png"}]}]})
    art = register_inputs(task, root, Toolbox([], store, "t"))["a.png"]
    sent = store.path(art)
    assert sent.read_bytes() == data
    sent.unlink()  # the send below must not need the file: the store handed its bytes over
    assert image_b64(ImagePart(path=str(sent))) == base64.b64encode(data).decode()


def test_a_file_written_again_is_sent_with_its_new_bytes(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "ws", on_write=remember_image_bytes)  # as a run wires it
    first = _png((255, 0, 0), tmp_path / "r.png")
    second = _png((0, 0, 255), tmp_path / "b.png")
    a = store.add_bytes(first, file_name="view.png")
    part = ImagePart(path=str(store.path(a)))
    assert image_b64(part) == base64.b64encode(first).decode()  # sent once: now cached as base64
    b = store.add_bytes(second, file_name="view.png")  # a tool writes the same name again
    assert store.path(b) == store.path(a)
    assert image_b64(ImagePart(path=str(store.path(b)))) == base64.b64encode(second).decode()
