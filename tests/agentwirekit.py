"""Helpers for the agent frameworks' golden-wire replays (`../shared/golden-wire/pyvision/`, `deepeyes/`).

The transcripts were recorded from the unmodified PyVision and DeepEyes drivers against a scripted
server (each folder's README). A replay rebuilds a transcript's fixture as a toolsight dataset folder
(the same synthetic images, byte for byte: `make_image` is the recordings' `fixture_images.py`), runs
`toolsight`'s runner with `--agent pyvision`/`deepeyes` in the official loop through the OpenAI SDK
against toolsight's scripted server playing the transcript's script, and normalises the request
bodies as the READMEs say (data URLs → sha256, format, mode, size, bytes and prefix). The files are
read in place; under CI a missing folder is a failure, locally the tests skip and say why.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from toolsight.benchmarks.registry import get_benchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner, load_for_run
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(os.environ.get("TOOLSIGHT_GOLDEN_WIRE", ROOT.parent / "shared" / "golden-wire"))
MARK = re.compile(r"\[task:([^\]\s]+)\]")


def transcripts(folder: str) -> list[Path]:
    """Every transcript in the folder (any number of them)."""
    where = GOLDEN / folder
    if not where.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"golden-wire transcripts not found at {where} (set TOOLSIGHT_GOLDEN_WIRE)")
        return []
    return sorted(where.glob("*.json"))


def require(files: list[Path], folder: str) -> None:
    if not files:
        if os.environ.get("CI"):
            pytest.fail(f"no golden-wire transcripts under {GOLDEN / folder}")
        pytest.skip(f"golden-wire transcripts not found at {GOLDEN / folder}; set TOOLSIGHT_GOLDEN_WIRE")


def make_image(path: Path, w: int, h: int, fmt: str = "PNG", mode: str = "RGB") -> str:
    """The recordings' stand-in (blue ground, six yellow discs, a red bar); returns its sha256."""
    im = Image.new("RGB", (w, h), (40, 70, 170))
    d = ImageDraw.Draw(im)
    r = max(4, min(w, h) // 14)
    for k in range(6):
        cx = int(w * (0.15 + 0.14 * k))
        cy = int(h * (0.25 if k % 2 == 0 else 0.6))
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(240, 210, 40))
    d.rectangle((int(w * 0.55), int(h * 0.78), int(w * 0.9), int(h * 0.9)), fill=(210, 30, 30))
    if mode != "RGB":
        im = im.convert(mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt.upper() == "JPEG":
        im.save(path, format="JPEG", quality=90)
    else:
        im.save(path, format=fmt.upper())
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fixture_image(path: Path, spec: dict[str, Any]) -> None:
    got = make_image(path, int(spec["width"]), int(spec["height"]), str(spec.get("format") or "png"),
                     str(spec.get("mode") or "RGB"))
    assert got == spec["sha256"], (f"stand-in {path.name} differs from the recording's (Pillow version?); "
                                   "the replay cannot compare image bytes")


def normalise(o: Any) -> Any:
    """README rule 1 (data URLs); the bodies hold no paths (rule 2)."""
    if isinstance(o, str):
        if o.startswith("data:") and ";base64," in o[:64]:
            prefix, b64 = o.split(",", 1)
            data = base64.b64decode(b64)
            try:
                im = Image.open(io.BytesIO(data))
                fmt, mode, w, h = str(im.format).lower(), im.mode, im.size[0], im.size[1]
            except Exception:
                fmt, mode, w, h = None, None, None, None
            return {"sha256": hashlib.sha256(data).hexdigest(), "format": fmt, "mode": mode, "width": w,
                    "height": h, "bytes": len(data), "data_url_prefix": prefix + ","}
        return o
    if isinstance(o, list):
        return [normalise(x) for x in o]
    if isinstance(o, dict):
        return {k: normalise(v) for k, v in o.items()}
    return o


def write_tasks(data: Path, tasks: list[dict[str, Any]]) -> None:
    data.mkdir(parents=True, exist_ok=True)
    with (data / "tasks.jsonl").open("w", encoding="utf-8") as fh:
        for t in tasks:
            fh.write(json.dumps(t) + "\n")


def run_agent(data: Path, run: Path, script: dict[str, Any], model: str, agent: str, loop: str = "official",
              caps: dict[str, Any] | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
    """Run the dataset folder `data` with `--agent agent --loop loop` against a scripted server playing
    `script`; the requests it received and the records."""
    with ScriptedServer(Script.model_validate(script)) as srv:
        opts = RunOptions.of(benchmark=str(data), model=model, agent=agent, loop=loop, data=str(data),
                             base_url=srv.openai_base_url, out=str(run), concurrency=1, score=False, cache=False,
                             retries=0, caps=caps or {})
        bench = get_benchmark(str(data))
        runner = Runner(opts, bench, load_for_run(bench, str(data)), get_model(opts.model.spec,
                                                                               base_url=opts.model.base_url))
        asyncio.run(runner.run())
        recorded = list(srv.requests)
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines() if x.strip()]
    return recorded, records


def pyvision_agent(g: dict[str, Any]) -> str:
    """The agent name for the transcript's `--prompt` (the driver overrides all but `no_tool*`)."""
    prompt = str(g.get("prompt_arg") or "")
    if "no_tool_no_cot" in prompt:
        return "pyvision-no-tool-no-cot"
    return "pyvision-no-tool" if "no_tool" in prompt else "pyvision"


def replay_pyvision(path: Path, tmp: Path) -> dict[str, Any]:
    """One PyVision transcript: its images (in the driver's order) and question as one task."""
    g = json.loads(path.read_text(encoding="utf-8"))
    data, run = tmp / "data", tmp / "run"
    for rel, spec in g["fixture"]["images"].items():
        fixture_image(data / rel, spec)
    question = g["fixture"]["question"]
    found = MARK.search(question)
    key = found.group(1) if found else "task"
    write_tasks(data, [{"id": key, "turns": [{"prompt": question,
                                               "images": [{"path": rel} for rel in g["fixture"]["images"]]}]}])
    recorded, records = run_agent(data, run, g["script"], f"openai/{g['model']}", pyvision_agent(g))
    return {"golden": g, "bodies": [normalise(r.body) for r in recorded], "tasks": [r.task for r in recorded],
            "records": records}


def replay_deepeyes(path: Path, tmp: Path) -> dict[str, Any]:
    """One DeepEyes transcript: each V* record as a task (question, options, image) in the driver's order."""
    g = json.loads(path.read_text(encoding="utf-8"))
    data, run = tmp / "data", tmp / "run"
    for rel, spec in g["fixture"]["images"].items():
        fixture_image(data / rel, spec)
    by_key: dict[str, dict[str, Any]] = {}
    for rel, rec in g["fixture"]["records"].items():
        found = MARK.search(rec["question"])
        assert found is not None, rel
        image = rel[: -len(".json")] + ".jpg"
        by_key[found.group(1)] = {
            "id": found.group(1),
            "turns": [{"prompt": rec["question"], "images": [{"path": image}],
                       "options": {chr(ord("A") + i): o for i, o in enumerate(rec["options"])},
                       "answer": "A", "answer_type": "choice"}],
        }
    order = [k for k in dict.fromkeys(g["task_order"]) if k in by_key]
    order += [k for k in by_key if k not in order]
    write_tasks(data, [by_key[k] for k in order])
    recorded, records = run_agent(data, run, g["script"], f"openai/{g['served_model_id']}", "deepeyes")
    return {"golden": g, "bodies": [normalise(r.body) for r in recorded], "tasks": [r.task for r in recorded],
            "records": records}


def first_difference(got: Any, want: Any) -> str:
    """Where two bodies first differ, as three lines of each (for a readable failure)."""
    a = json.dumps(got, indent=1, ensure_ascii=False).splitlines()
    b = json.dumps(want, indent=1, ensure_ascii=False).splitlines()
    k = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"line {k}:\n toolsight: {a[k:k + 3]}\n driver:    {b[k:k + 3]}"
