"""PyVision's executor (`pyvision_python`) on a real sandbox kernel, in both loop modes.

What the official mode must keep (the original's behaviour, read from
`safe_persis_shared_vis_python_exe.py`) and what the toolsight mode fixes, block by block: the stale
worker after a timeout, the worker dying of SystemExit or a killed process, `plt.show()` in an
indented block, and the parts both share (the forbidden-call check, stdout truncation, `image_clue_i`
as RGB, no output → `None`, figure provenance). The timeout is shortened to 3 s here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from toolsight.agents.pyvision.executor import TOOL, ExecutorConfig, PyVisionExecutor, configure
from toolsight.tools.base import ArtifactStore, Toolbox

TIMEOUT = 3.0


def _box(tmp: Path, mode: str) -> Toolbox:
    ws = tmp / "ws"
    ws.mkdir(parents=True)
    arr = np.zeros((30, 40, 4), np.uint8)
    arr[..., 0] = 200
    arr[..., 3] = 255
    Image.fromarray(arr, "RGBA").save(ws / "in.png")
    store = ArtifactStore(ws)
    art = store.add_file(ws / "in.png", source="input", keep_name=True)
    box = Toolbox([PyVisionExecutor(timeout_s=TIMEOUT)], store, "t")
    configure(box.state, ExecutorConfig(mode=mode, files=[art.file], inputs=[art.id]))  # type: ignore[arg-type]
    return box


def _blocks(tmp: Path, mode: str, codes: list[str]) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        box = _box(tmp, mode)
        out = []
        try:
            for code in codes:
                r = await box.call(TOOL, {"code": code})
                out.append({"report": r.extra.get("report"), "text": r.extra.get("text_result"), "ok": r.ok,
                            "figures": r.artifacts, "inputs": [a.id for a in box.store.all() if a.source == "input"]})
        finally:
            await box.aclose()
        return out

    return asyncio.run(go())


SLOW = f"import time\ntime.sleep({TIMEOUT + 1.5})\nprint('late')"


def test_official_keeps_the_stale_worker_after_a_timeout(tmp_path: Path) -> None:
    r = _blocks(tmp_path, "official", ["x = 1", SLOW, "print('second')", "print('third', x)",
                                       "raise SystemExit(3)", "print('after exit')"])
    assert r[0]["report"] == "Done" and r[0]["text"] is None
    assert r[1]["report"] == "Timeout Error"
    assert r[2]["text"] == "late"  # the previous block's result, as the original's worker delivers it
    assert r[3]["text"] == "second"
    assert r[4]["text"] == "third 1"
    # SystemExit ends the original's worker loop: from then on every block times out
    assert r[5]["report"] == "Timeout Error"


def test_toolsight_restarts_after_a_timeout(tmp_path: Path) -> None:
    r = _blocks(tmp_path, "toolsight", ["x = 1", SLOW, "print('second')", "print(x)",
                                        "print(image_clue_0.size)", "raise SystemExit(3)", "print('after exit')"])
    assert r[1]["report"].startswith("Timeout Error: the code ran longer than 3 s and was stopped")
    assert r[2]["text"] == "second"  # its own result, never the stale one
    assert r[3]["report"] == "Error: name 'x' is not defined"  # the interpreter was restarted, as the report said
    assert r[4]["text"] == "(40, 30)"  # the images are loaded again
    assert r[5]["report"] == "Error: SystemExit 3" and r[6]["text"] == "after exit"


def test_both_modes_share_the_runtime(tmp_path: Path) -> None:
    codes = ["print(image_clue_0.mode, image_clue_0.size)", "my_input('x')", "y = 2", "print('0123456789' * 60)",
             "import matplotlib.pyplot as plt\nplt.imshow(image_clue_0)\nplt.show()",
             "if True:\n    plt.show()", "import os\nos._exit(1)", "print('alive')"]
    for mode in ("official", "toolsight"):
        r = _blocks(tmp_path / mode, mode, codes)
        assert r[0]["text"] == "RGB (40, 30)", mode  # PIL images converted to RGB (the input is RGBA)
        assert r[1]["report"] == "Error: Forbidden function calls detected", mode  # `…input(` anywhere
        assert r[2]["report"] == "Done" and r[2]["text"] is None, mode
        assert r[3]["text"] == "0123456789" * 20 + "..." + "0123456789" * 20, mode
        [fig] = r[4]["figures"]
        assert (fig.width, fig.height) == (640, 480) and fig.parents == tuple(r[4]["inputs"]), mode
        if mode == "official":  # the original pastes its capture code in at column 0: the `if` has no body
            assert r[5]["report"].startswith("Error: expected an indented block after 'if' statement")
            # the process died: the original's worker is gone, every later block times out
            assert r[6]["report"] == "Timeout Error" and r[7]["report"] == "Timeout Error"
        else:
            assert r[5]["report"] == "Done" and len(r[5]["figures"]) == 1
            assert r[6]["report"].startswith("Error: the interpreter stopped")
            assert r[7]["text"] == "alive"
