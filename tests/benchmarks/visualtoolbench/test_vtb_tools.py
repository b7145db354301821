"""The official tool layer: the reference's exec namespace rebuilt in the sandbox, its new-file rule,
its calculator, and its argument errors — on real pixels and real sandbox processes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from toolsight.benchmarks.visualtoolbench.tools import (
    OfficialTools,
    Outcome,
    TurnFiles,
    _check,
    official_calculator,
    start_turn,
)
from toolsight.tools.base import ArtifactStore, Toolbox
from toolsight.tools.registry import build_tools


@pytest.fixture
def env(tmp_path: Path) -> tuple[OfficialTools, TurnFiles, Toolbox]:
    img = np.zeros((40, 60, 3), np.uint8)
    img[10:20, 10:30] = (0, 0, 255)
    cv2.imwrite(str(tmp_path / "src.png"), img)
    store = ArtifactStore(tmp_path / "ws")
    tb = Toolbox(build_tools(["python"]), store, "t")
    art = store.add_file(tmp_path / "src.png", source="input")
    return OfficialTools(tb), start_turn(tb, 0, art, "image_0.png"), tb


def _call(env: tuple[OfficialTools, TurnFiles, Toolbox], name: str, args: dict[str, Any], cid: str = "c") -> Outcome:
    tools, turn, _ = env
    return asyncio.run(tools.call(name, args, cid, turn))


def test_the_references_namespace_quirks(env: tuple[OfficialTools, TurnFiles, Toolbox]) -> None:
    o = _call(env, "python_image_processing", {"code": "img = Image.open('image_0.png')"})
    assert o.observation["ok"] == "false"  # the preloaded SafeImage.open calls Image.Image.open
    assert "AttributeError: type object 'Image' has no attribute 'open'" in o.observation["stderr"]
    assert 'File "<llm_code>", line 1' in o.observation["stderr"]
    o = _call(env, "python_image_processing", {"code": "print(sum([1, 2]))"})
    assert "NameError: name 'sum' is not defined" in o.observation["stderr"] and not o.ok
    o = _call(env, "python_image_processing", {"code": "import math\ndef f():\n    return math.pi\nprint(f())"})
    assert "NameError: name 'math' is not defined" in o.observation["stderr"]  # exec(code, globals, locals)
    o = _call(env, "python_image_processing", {"code": "print(PROCESSED_IMAGE_SAVE_PATH.name, np.sum([1, 2]))"})
    assert o.observation["stdout"] == "turn_0 3\n" and o.observation["ok"] == "true"  # a Path, as in the reference
    o = _call(env, "python_image_processing", {"code": "print(type(1))"})
    assert "NameError: name 'type' is not defined" in o.observation["stderr"]
    o = _call(env, "python_interpreter", {"code": "print(pd.DataFrame({'a': [1, 2]}).a.sum(), scipy.norm.cdf(0))"})
    assert o.observation == {"stdout": "3 0.5\n", "stderr": ""}
    o = _call(env, "python_interpreter", {"code": "1/0"})
    assert set(o.observation) == {"stdout", "stderr"} and "ZeroDivisionError" in o.observation["stderr"]
    assert not o.ok


def test_only_new_transformed_files_are_returned(env: tuple[OfficialTools, TurnFiles, Toolbox]) -> None:
    _tools, turn, tb = env
    save = ("from PIL import Image\nim = Image.open('image_0.png')\n"
            "im.crop((0, 0, {w}, 20)).save(str(PROCESSED_IMAGE_SAVE_PATH) + '/{name}')")
    o = _call(env, "python_image_processing", {"code": save.format(w=30, name="transformed_image_0.png")}, "c1")
    assert o.observation["output_paths"] == [str(turn.folder / "transformed_image_0.png")]
    assert o.observation["output_path"] == o.observation["output_paths"][0]
    assert [a.width for a in o.artifacts] == [30] and o.artifacts[0].parents == (o.inputs[0],)
    assert o.artifacts[0].tool_call_id == "c1"
    # overwriting an existing name is not "new" in the reference; other names are ignored
    o = _call(env, "python_image_processing", {"code": save.format(w=20, name="transformed_image_0.png")})
    assert o.observation["output_paths"] == [] and o.observation["ok"] == "true"
    o = _call(env, "python_image_processing", {"code": save.format(w=20, name="crop.png")})
    assert o.observation["output_paths"] == []
    link = "import os\nos.symlink('/etc/hostname', str(PROCESSED_IMAGE_SAVE_PATH) + '/transformed_image_7.png')"
    o = _call(env, "python_image_processing", {"code": link})
    assert o.observation["ok"] == "false" and o.observation["output_paths"] == []  # the sandbox refuses it
    # and the harness reads back only plain image files, whatever lands in the folder
    os.symlink("/etc/hostname", turn.folder / "transformed_image_8.png")
    assert _check(turn.folder / "transformed_image_8.png") == "not a regular file"
    (turn.folder / "transformed_image_9.png").write_text("not an image")
    assert (_check(turn.folder / "transformed_image_9.png") or "").startswith("not a readable image")
    assert all(a.source == "input" or a.width in (30,) for a in tb.store.all())


def test_arguments_and_the_calculator(env: tuple[OfficialTools, TurnFiles, Toolbox]) -> None:
    o = _call(env, "python_interpreter", {})
    assert o.observation == {"error": "VisionTools.python_interpreter() missing 1 required positional argument: 'code'"}
    assert _call(env, "calculator", {"expression": "2*3.14*5"}).observation == {
        "result": "31.400000000000002", "expression": "2*3.14*5", "status": "success"}
    assert official_calculator("2^3")["error"] == "<class 'ast.BitXor'>"
    assert official_calculator("sqrt(16)")["result"] == "4.0"
    assert official_calculator("log(8, 2)")["error"] == "Only one argument permitted."
    assert official_calculator("pi * 2")["error"] == "Unsupported expression element."
    assert official_calculator("floor(2.5)")["error"] == "Function floor not allowed."
    assert official_calculator("+3")["error"] == "<class 'ast.UAdd'>"
    assert official_calculator("1/0")["error"] == "division by zero"
    assert official_calculator("9**9**9")["status"] == "error"  # guarded: would hang the harness
    assert official_calculator("2**10")["result"] == "1024"
