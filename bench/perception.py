"""Per-image latency of the offline perception backends on a 1024x1024 image, and the VCR agent's
overhead beyond its model calls.

Backends (median of --repeats, after one warm-up): RapidOCR and Tesseract (when installed) on 1024²
rendered text; the classical contour detector on a 1024² generated scene; the ONNX path (letterbox,
onnxruntime, YOLO decoding) on a tiny constructed graph with a 640² input (untrained; it measures the
code path, not a real network). Each is also timed through its tool (`ocr`, `detect_and_crop_objects`:
argument parsing, image loading, crops encoded as PNG artifacts) and printed as a ratio to the bare call.

VCR overhead: the VCR agent and the default tool loop run the same scene with an instant in-process
model (no network, replies in microseconds), so their wall time is harness work only. Printed: the VCR
agent's time per task, minus its detection call (= overhead beyond model calls and detection), per
model call, and as a ratio to the tool loop's time per model call in the same run.

    .venv/bin/python bench/perception.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "perception"))

from toolsight.agents.inputs import register_inputs
from toolsight.agents.loop import Agent
from toolsight.agents.settings import AgentSettings
from toolsight.agents.vcr import VCRAgent
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart
from toolsight.perception import ImageInput, get_detector, get_ocr
from toolsight.perception.onnx_yolo import OnnxDetector
from toolsight.tasks.schema import ImageRef, Task, Turn
from toolsight.tasks.synth import font
from toolsight.tools.base import ArtifactStore, Toolbox, ToolSpec
from toolsight.tools.perception import perception_tools

SIZE = 1024


def text_image() -> np.ndarray:
    img = Image.new("RGB", (SIZE, SIZE), "white")
    d = ImageDraw.Draw(img)
    for i in range(8):
        d.text((60, 60 + i * 120), f"Line {i + 1}: invoice 4821{i} total {12 + i}.50 EUR", fill="black", font=font(40))
    return cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2BGR)


def scene_image(tmp: Path) -> np.ndarray:
    from toolsight.benchmarks.phystoolbench.generate import generate_phystool

    t = generate_phystool(1, 1, tmp / "scene", level="Medium-M2")[0]
    img = cv2.imread(str(tmp / "scene" / t.turns[0].images[0].path))
    return cv2.resize(img, (SIZE, SIZE), interpolation=cv2.INTER_CUBIC)


def median_ms(fn: Callable[[], Any], repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


class InstantModel(Model):
    """Replies at once: stage 2 gets terms, everything else a short text (no network)."""

    def __init__(self) -> None:
        super().__init__("bench/instant")

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        text = 'Need detection.\n["tool"]' if "[Stage 2" in messages[-1].text else "### Answer\n1"
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text=text)]))


def run_agent(make: Callable[[], Any], task: Task, root: Path, ws: Path) -> tuple[float, Any]:
    async def go() -> Any:
        box = Toolbox(perception_tools(), ArtifactStore(ws), task.id)
        return await make().run(task, box, register_inputs(task, root, box))

    if ws.exists():
        shutil.rmtree(ws)
    t0 = time.perf_counter()
    traj = asyncio.run(go())
    return (time.perf_counter() - t0) * 1000, traj


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-perception-"))
    rows: list[tuple[str, float, str]] = []
    try:
        text = ImageInput(text_image())
        scene = ImageInput(scene_image(tmp))
        ocr = get_ocr("rapidocr")
        rows.append(("RapidOCR, 1024² text (8 lines)", median_ms(lambda: asyncio.run(ocr.read(text)), a.repeats), ""))
        if shutil.which("tesseract"):
            tess = get_ocr("tesseract")
            rows.append(("Tesseract, 1024² text (8 lines)",
                         median_ms(lambda: asyncio.run(tess.read(text)), a.repeats), ""))
        else:
            rows.append(("Tesseract", float("nan"), "not installed"))
        det = get_detector("classical")
        n_obj = len(asyncio.run(det.detect(scene, [])).detections)
        classical = median_ms(lambda: asyncio.run(det.detect(scene, [])), a.repeats * 4)
        rows.append((f"classical detector, 1024² scene ({n_obj} objects)", classical, ""))
        from perceptionkit import tiny_yolo

        onnx = OnnxDetector(tiny_yolo(tmp / "tiny.onnx", side=640, grid=20), conf=0.5)
        rows.append(("ONNX YOLO path, constructed graph, 640² input", median_ms(lambda: onnx.run(scene, []),
                                                                            a.repeats * 4), ""))
        # the tools around the bare calls
        store = ArtifactStore(tmp / "ws-tools")
        cv2.imwrite(str(store.workspace / "scene.png"), scene.pixels)
        cv2.imwrite(str(store.workspace / "text.png"), text.pixels)
        box = Toolbox(perception_tools(), store, "bench")
        detect_args = json.dumps({"image": "scene.png", "terms": []})
        tool_det = median_ms(lambda: asyncio.run(box.call("detect_and_crop_objects", detect_args)), a.repeats * 4)
        rows.append(("detect_and_crop_objects tool (classical + crops)", tool_det, f"{tool_det / classical:.2f}x bare"))
        bare_ocr = rows[0][1]
        tool_ocr = median_ms(lambda: asyncio.run(box.call("ocr", {"image": "text.png"})), a.repeats)
        rows.append(("ocr tool (RapidOCR)", tool_ocr, f"{tool_ocr / bare_ocr:.2f}x bare"))

        # VCR overhead beyond model calls, against the tool loop in the same run
        root = tmp / "vcr"
        (root / "images").mkdir(parents=True)
        cv2.imwrite(str(root / "images" / "s.png"), scene.pixels)
        task = Task(id="b", turns=[Turn(prompt="Which object rolls?", images=[ImageRef(path="images/s.png")])])
        model = InstantModel()
        vcr_settings = AgentSettings(name="vcr", agent="vcr")
        vcr_times, calls, det_ms = [], 0, []
        for i in range(a.repeats + 1):
            ms, traj = run_agent(lambda: VCRAgent(model, vcr_settings), task, root, tmp / f"ws-vcr-{i}")
            if i:
                vcr_times.append(ms)
                det_ms.append(traj.tool_calls[0].duration_s * 1000)
            calls = traj.model_calls
        vcr = statistics.median(vcr_times)
        beyond = statistics.median([v - d for v, d in zip(vcr_times, det_ms, strict=True)])
        loop_settings = AgentSettings(name="loop", max_rounds=calls, max_tool_calls=0)

        class Chatty(InstantModel):  # keeps the loop going for the same number of calls
            async def generate(self, messages: list[Message], tools: list[ToolSpec],
                               config: GenerateConfig) -> ModelOutput:
                return ModelOutput(message=Message(role="assistant", content=[TextPart(text="thinking")]))

        loop_settings = loop_settings.model_copy(update={"nudge": "go on", "max_nudges": calls - 1,
                                                         "answer_format": "answer_tag"})
        loop_times = []
        loop_calls = 0
        for i in range(a.repeats + 1):
            ms, traj = run_agent(lambda: Agent(Chatty(), loop_settings), task, root, tmp / f"ws-loop-{i}")
            loop_calls = traj.model_calls
            if i:
                loop_times.append(ms)
        loop = statistics.median(loop_times)
        per_vcr, per_loop = beyond / calls, loop / loop_calls
        rows.append((f"VCR agent, instant model ({calls} model calls, {calls - 3} crops)", vcr,
                     f"detection {statistics.median(det_ms):.1f} ms"))
        rows.append(("VCR overhead beyond model calls and detection", beyond,
                     f"{per_vcr:.2f} ms/call = {per_vcr / per_loop:.2f}x tool loop ({per_loop:.2f} ms/call, "
                     f"{loop_calls} calls)"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    width = max(len(r[0]) for r in rows)
    print(f"{'measurement'.ljust(width)}  median ms  note")
    for name, ms, note in rows:
        print(f"{name.ljust(width)}  {ms:9.1f}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
