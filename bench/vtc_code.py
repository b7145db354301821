"""What VTC-Bench's code tools cost on top of the sandbox kernel they run on.

Per round, interleaved so a change in machine load hits every method alike: one bare
`kernel.execute` of the snippet (the baseline), one call of the official `code_interpreter`
(`vtc_code_official`: the file copy, the alarm line, the cancel cell — a second kernel round trip,
as the reference makes —, the output blocks) and one call of the toolsight variant (`vtc_code`:
snapshots of the workspace, protection of artifacts, the blocks). Also the first call of each
(kernel start + the init cell for the official tool). Medians in ms and ratios to the baseline.
Two snippets: `x = 1` (pure overhead) and an image snippet (read a 1000x800 JPEG, grey, Canny,
`display` the result).

    .venv/bin/python bench/vtc_code.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from toolsight import sandbox
from toolsight.benchmarks.vtc_bench.tools.code import MODEL_KEY, OfficialCodeInterpreter, VTCCodeInterpreter
from toolsight.sandbox import Limits
from toolsight.tools.base import ArtifactStore, Toolbox

SNIPPETS = {
    "trivial": "x = 1",
    "image": ("import cv2\nim = cv2.imread('{img}')\ng = cv2.cvtColor(im, cv2.COLOR_BGR2GRAY)\n"
              "cv2.imwrite('edges.png', cv2.Canny(g, 100, 200))\n"
              "from IPython.display import Image as IPImage, display\ndisplay(IPImage(filename='edges.png'))"),
}


def picture(path: Path) -> None:
    im = Image.new("RGB", (1000, 800), (40, 90, 160))
    d = ImageDraw.Draw(im)
    for i in range(6):
        d.ellipse([100 + 130 * i, 150, 180 + 130 * i, 230], fill=(230, 200, 40))
    im.save(path, quality=92)


async def main(rounds: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="bench-vtc-code-"))
    boxes: dict[str, Any] = {}
    for name in ("bare", "official", "toolsight"):
        ws = root / name
        store = ArtifactStore(ws)
        picture(ws / "in.jpg")
        store.add_file(ws / "in.jpg", source="input", keep_name=True)
        boxes[name] = (ws, store)
    kernel = sandbox.open_kernel(boxes["bare"][0], Limits(wall_s=60))
    official = Toolbox([OfficialCodeInterpreter()], boxes["official"][1], "task_1")
    official.state[MODEL_KEY] = "bench-model"
    toolsight = Toolbox([VTCCodeInterpreter()], boxes["toolsight"][1], "task_1")

    async def bare(code: str) -> None:
        await kernel.execute(code, 60)

    async def off(code: str) -> None:
        r = await official.call("code_interpreter", json.dumps({"reasoning": "", "code": code}))
        assert r.ok, r.text

    async def ts(code: str) -> None:
        r = await toolsight.call("code_interpreter", {"reasoning": "", "code": code})
        assert r.ok, r.text

    methods = {"bare kernel.execute": bare, "official code_interpreter": off, "toolsight code_interpreter": ts}
    first: dict[str, float] = {}
    for label, fn in methods.items():
        t0 = time.perf_counter()
        await fn("x = 0")
        first[label] = (time.perf_counter() - t0) * 1000
    results: dict[str, dict[str, float]] = {}
    for snip, code in SNIPPETS.items():
        times: dict[str, list[float]] = {k: [] for k in methods}
        for _ in range(rounds):
            for label, fn in methods.items():
                ws = boxes[{"bare kernel.execute": "bare", "official code_interpreter": "official"}.get(label, "toolsight")][0]
                t0 = time.perf_counter()
                await fn(code.format(img=ws / "in.jpg"))
                times[label].append((time.perf_counter() - t0) * 1000)
        results[snip] = {k: statistics.median(v) for k, v in times.items()}
    await kernel.aclose()
    await official.aclose()
    await toolsight.aclose()
    return {"first_call_ms": first, "median_ms": results}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    out = asyncio.run(main(args.rounds))
    print("first call (kernel start; official: + init cell), ms:")
    for k, v in out["first_call_ms"].items():
        print(f"  {k:28s} {v:8.1f}")
    for snip, med in out["median_ms"].items():
        base = med["bare kernel.execute"]
        print(f"snippet {snip!r}: median ms (ratio to the bare kernel call)")
        for k, v in med.items():
            print(f"  {k:28s} {v:8.1f}  ({v / base:.2f}x)")
