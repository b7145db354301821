"""Start-up stays light: `toolsight --help` must not import numpy, PIL, OpenCV or a provider SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("numpy", "PIL", "cv2", "openai", "anthropic", "google.genai", "pydantic")

PROBE = """
import json, sys
sys.argv = ["toolsight", "--help"]
import toolsight.cli
try:
    toolsight.cli.main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {"numpy", "PIL", "cv2", "openai", "anthropic", "pydantic"} or m.startswith("google.genai"))))
"""


def test_help_imports_no_heavy_module() -> None:
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True)
    assert "Usage" in r.stdout and "run" in r.stdout
    loaded = json.loads(r.stdout.strip().splitlines()[-1])
    assert not [m for m in loaded if m.split(".")[0] in {h.split(".")[0] for h in HEAVY}], loaded


RUN_PROBE = """
import json, sys
sys.argv = ["toolsight", "run", *sys.argv[1:]]
import toolsight.cli
try:
    toolsight.cli.main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {"numpy", "cv2", "PIL", "toolsight"})))
"""

PIXEL_MODULES = {"numpy", "cv2", "PIL"}


def _dataset(tmp_path: Path) -> Path:
    """Three tasks, each with one small RGB PNG: a plain PNG, which needs no decoder to register."""
    from PIL import Image

    from toolsight.tasks.dataset import write_dataset
    from toolsight.tasks.schema import ImageRef, Task, Turn

    data = tmp_path / "data"
    data.mkdir()
    Image.new("RGB", (8, 8), (1, 2, 3)).save(data / "a.png")
    write_dataset(data, [Task(id=f"t{i}", turns=[Turn(prompt="which?", images=[ImageRef(path="a.png")], answer="A")])
                         for i in range(3)])
    return data


def _run_probe(tmp_path: Path, setting: str) -> list[str]:
    """The modules a `toolsight run` of `_dataset` with `setting` imported; the scripted model
    answers at once, and all three tasks must reach it and pass."""
    from toolsight.models.scripted import Rule, Script, ScriptedServer

    data = _dataset(tmp_path)
    with ScriptedServer(Script(rule=Rule(tool="crop", calls=0, answer="<answer>A</answer>"))) as srv:
        args = [str(data), "--model", "openai/m", "--base-url", srv.base_url + "/v1", "--setting", setting,
                "--retries", "0", "--no-cache", "--no-report", "--out", str(tmp_path / "run")]
        r = subprocess.run([sys.executable, "-c", RUN_PROBE, *args], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and len(srv.requests) == 3, r.stderr[-2000:]
    assert "accuracy 100.0% over 3 scored" in r.stdout + r.stderr
    loaded: list[str] = json.loads(r.stdout.strip().splitlines()[-1])
    assert "toolsight.engine.runner" in loaded  # the probe saw the run's modules
    return loaded


def test_a_run_without_tool_calls_imports_no_sandbox_and_no_pixels(tmp_path: Path) -> None:
    """`toolsight run` imports what its run uses: a crop-setting run whose model answers at once
    never imports the sandbox (not even to shut it down at the end), nor numpy/OpenCV/Pillow."""
    loaded = _run_probe(tmp_path, "crop")
    assert "toolsight.sandbox" not in loaded
    assert not [m for m in loaded if m.split(".")[0] in PIXEL_MODULES], loaded
    assert "toolsight.tools.crop" in loaded  # the setting's tool was there, only never called


def test_a_run_whose_setting_has_no_tools_imports_no_pixel_library(tmp_path: Path) -> None:
    """The `direct` setting offers no tools: registering the PNG inputs, sending them, scoring and
    recording need neither numpy, OpenCV nor Pillow, and the run imports none of them."""
    loaded = _run_probe(tmp_path, "direct")
    assert not [m for m in loaded if m.split(".")[0] in PIXEL_MODULES], loaded
