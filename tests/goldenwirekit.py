"""Helpers for the golden-wire replays: find the transcripts, build their fixture, normalise bodies.

The transcripts (`../shared/golden-wire/vtc-bench/*.json`, made from the official VTC-Bench driver)
are read by path, never copied into the repository. Under CI a missing folder is a failure; locally
the tests skip and say why. The normalisation is the one the transcripts' README gives.
"""

from __future__ import annotations

import asyncio
import base64
import csv
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
from toolsight.engine.store import artifact_dir
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(os.environ.get("TOOLSIGHT_GOLDEN_WIRE", ROOT.parent / "shared" / "golden-wire"))
VTC = GOLDEN / "vtc-bench"
SETTINGS = {"interface": "interface", "strong_gt": "strong+gt", "weak": "weak", "code": "code"}


def golden_files(*settings: str) -> list[Path]:
    if not VTC.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"golden-wire transcripts not found at {VTC} (set TOOLSIGHT_GOLDEN_WIRE)")
        return []
    return sorted(p for p in VTC.glob("*.json") if p.stem.rsplit(".", 1)[-1] in settings)


def require(files: list[Path]) -> None:
    if not files:
        if os.environ.get("CI"):
            pytest.fail(f"no golden-wire transcripts under {VTC}")
        pytest.skip(f"golden-wire transcripts not found at {VTC}; set TOOLSIGHT_GOLDEN_WIRE to run these tests")


def stand_in(path: Path, w: int, h: int) -> None:
    """REPLAY.md's synthetic stand-in image (byte-identical with the same Pillow)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.new("RGB", (w, h), (40, 90, 160))
    d = ImageDraw.Draw(im)
    r = max(2, min(w, h) // 12)
    for i in range(6):
        cx, cy = int(w * (i + 1) / 7), int(h * 0.25)
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(230, 200, 40))
    d.rectangle([w // 3, h // 2, w // 3 + w // 5, h // 2 + h // 8], fill=(200, 30, 30))
    im.save(path, format="JPEG", quality=92)


def build_fixture(g: dict[str, Any], data: Path) -> None:
    """Both official TSVs (the GT file with `model_tools_gt`) and the stand-in images."""
    rows = g["fixture"]["rows"]
    for name, gt in (("VTC-Bench.tsv", False), ("VTC-Bench_GTToolChain.tsv", True)):
        cols = [c for c in rows[0] if gt or c != "model_tools_gt"]
        if gt and "model_tools_gt" not in cols:
            cols.append("model_tools_gt")
        data.mkdir(parents=True, exist_ok=True)
        with (data / name).open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, delimiter="\t")
            w.writerow(cols)
            for r in rows:
                w.writerow([r.get(c, '["Crop"]') for c in cols])
    for img in g["fixture"]["images"].values():
        stand_in(data / img["path"], img["width"], img["height"])


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TB = re.compile(r"Traceback:\n((?:  File \"[^\"\n]*\", line \d+, in [^\n]*(?:\n|$)(?:    [^\n]*(?:\n|$))*)+)")
TB_MASK = re.compile(r"<TRACEBACK frames=\d+: [^>]*>")


class Normaliser:
    """README rules 1-4 over one transcript's bodies in order (UUIDs numbered per file)."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def _tb(self, m: re.Match[str]) -> str:
        frames = re.findall(r'  File "([^"\n]*)", line (\d+), in ([^\n]*)', m.group(1))
        names = " | ".join(f"{f.rsplit('/', 1)[-1]}:{fn}" for f, _, fn in frames)
        return f"Traceback:\n<TRACEBACK frames={len(frames)}: {names}>" + ("\n" if m.group(1).endswith("\n") else "")

    def _s(self, t: str, workdir: str) -> Any:
        if t.startswith("data:") and ";base64," in t[:64]:
            prefix, b64 = t.split(",", 1)
            data = base64.b64decode(b64)
            im = Image.open(io.BytesIO(data))
            return {"sha256": hashlib.sha256(data).hexdigest(), "format": str(im.format).lower(), "width": im.size[0],
                    "height": im.size[1], "bytes": len(data), "data_url_prefix": prefix + ","}
        t = t.replace(workdir, "<WORKDIR>")
        t = UUID.sub(lambda m: self.seen.setdefault(m.group(0), f"<uuid:{len(self.seen) + 1}>"), t)
        return TB.sub(self._tb, t)

    def __call__(self, o: Any, workdir: str) -> Any:
        if isinstance(o, str):
            return self._s(o, workdir)
        if isinstance(o, list):
            return [self(x, workdir) for x in o]
        if isinstance(o, dict):
            return {k: self(v, workdir) for k, v in o.items()}
        return o


def mask_tracebacks(o: Any) -> Any:
    """The one field no harness can match: the frames of the driver's own generic tool-error traceback
    (its source files and functions). Both sides keep the frame list's place, not its content."""
    if isinstance(o, str):
        return TB_MASK.sub("<TRACEBACK>", o)
    if isinstance(o, list):
        return [mask_tracebacks(x) for x in o]
    if isinstance(o, dict):
        return {k: mask_tracebacks(v) for k, v in o.items()}
    return o


def golden_bodies(g: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for r in g["requests"]:
        b = dict(r["body"])
        if isinstance(b.get("tools"), dict):
            b["tools"] = g["tool_sets"][b["tools"]["$tool_set"]]
        out.append(b)
    return out


def replay(path: Path, tmp: Path, loop: str | None = None) -> dict[str, Any]:
    """Run the transcript's scenario through toolsight (official loop by default) against the scripted
    server; return the golden data, toolsight's normalised bodies, task keys and records."""
    g = json.loads(path.read_text(encoding="utf-8"))
    data, run = tmp / "data", tmp / "run"
    build_fixture(g, data)
    rows = {r["question"].rsplit("[task:", 1)[1].rstrip("]"): r for r in g["fixture"]["rows"]}
    ws = {key: str(artifact_dir(run, row["id"]).resolve()) for key, row in rows.items()}
    script = json.loads(json.dumps(g["script"]))
    for key, steps in script.get("tasks", {}).items():
        for step in steps:
            for call in step.get("tool_calls") or []:
                if isinstance(call.get("arguments"), dict):
                    call["arguments"] = json.loads(json.dumps(call["arguments"]).replace(
                        "$input", f"{ws[key]}/{g['fixture']['images'][key]['path']}"))
    with ScriptedServer(Script.model_validate(script)) as srv:
        opts = RunOptions.of(benchmark="vtc-bench", model=f"openai/{g['model']}", setting=SETTINGS[g["setting"]],
                          loop=loop, data=str(data), base_url=srv.openai_base_url, out=str(run), concurrency=1,
                          score=False, cache=False, retries=0)
        bench = get_benchmark("vtc-bench")
        runner = Runner(opts, bench, load_for_run(bench, str(data)), get_model(opts.model.spec, base_url=opts.model.base_url))
        asyncio.run(runner.run())
        recorded = list(srv.requests)
    norm = Normaliser()
    bodies = [norm(r.body, ws.get(r.task or "", "\x00")) for r in recorded]
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    return {"golden": g, "bodies": bodies, "tasks": [r.task for r in recorded], "records": records, "run": run}
