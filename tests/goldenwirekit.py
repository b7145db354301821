"""Helpers for the golden-wire replays: find the transcripts, build their fixtures, normalise, compare.

The transcripts (`../shared/golden-wire/<benchmark>/*.json`, recorded from the official drivers) are
read by path, never copied into the repository, and every transcript in a folder is replayed — a
transcript added later in the same format is picked up without editing a test. Under CI a missing
folder or an empty one is a failure; locally the tests skip and say why. Each folder's README gives
its normalisation; the pieces they share are here (base64 images to descriptors, fixed strings to
placeholders, names numbered in order of first appearance), the per-folder kits
(`tests/protocol/*wire.py`) add the rest. The VTC-Bench replay (`replay`) lives here too.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from sharedfiles import in_ci, shared_dir
from toolsight.benchmarks.registry import get_benchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner, load_for_run
from toolsight.engine.store import artifact_dir
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script

GOLDEN = Path(os.environ.get("TOOLSIGHT_GOLDEN_WIRE", shared_dir() / "golden-wire"))
VTC = GOLDEN / "vtc-bench"
SETTINGS = {"interface": "interface", "strong_gt": "strong+gt", "weak": "weak", "code": "code"}


# ---------------------------------------------------------------------------------------- finding them

def transcripts(folder: str) -> list[Path]:
    """Every transcript (`*.json`) of a golden-wire folder, sorted; [] when the folder is absent (a
    failure under CI, where the shared folder must be there)."""
    root = GOLDEN / folder
    if not root.is_dir():
        if in_ci():
            pytest.fail(f"golden-wire transcripts not found at {root} (set TOOLSIGHT_GOLDEN_WIRE)", pytrace=False)
        return []
    return sorted(root.glob("*.json"))


def golden_files(*settings: str) -> list[Path]:
    """VTC-Bench's transcripts of the given settings (the file name's last part before `.json`)."""
    return [p for p in transcripts("vtc-bench") if p.stem.rsplit(".", 1)[-1] in settings]


def require(files: list[Path], folder: str = "vtc-bench") -> None:
    if not files:
        where = GOLDEN / folder
        if in_ci():
            pytest.fail(f"no golden-wire transcripts under {where}", pytrace=False)
        pytest.skip(f"golden-wire transcripts not found at {where}; set TOOLSIGHT_GOLDEN_WIRE to run these tests")


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


# ---------------------------------------------------------------------------------------- normalising

def image_descriptor(data: bytes, prefix: str | None = None, mode: bool = True) -> dict[str, Any]:
    """What the READMEs put in place of an image: its hash, format, (mode,) size and byte count."""
    with Image.open(io.BytesIO(data)) as im:
        out: dict[str, Any] = {"sha256": hashlib.sha256(data).hexdigest(), "format": str(im.format).lower()}
        if mode:
            out["mode"] = im.mode
        out.update({"width": im.size[0], "height": im.size[1], "bytes": len(data)})
    if prefix is not None:
        out["data_url_prefix"] = prefix
    return out


class Normaliser:
    """One transcript's normalisation, over its bodies in order: base64 data URLs become image
    descriptors, `replace` pairs (longest first) become placeholders, and each `numbered` pattern's
    matches become `<kind:N>`, numbered per transcript in order of first appearance."""

    def __init__(self, replace: list[tuple[str, str]] | None = None, numbered: dict[str, re.Pattern[str]] | None = None,
                 mode: bool = True, after: Callable[[str], str] | None = None) -> None:
        self.replace = sorted((p for p in replace or [] if p[0]), key=lambda p: -len(p[0]))
        self.numbered = numbered or {}
        self.mode = mode
        self.after = after
        self.seen: dict[str, dict[str, str]] = {k: {} for k in self.numbered}

    def text(self, t: str) -> Any:
        if t.startswith("data:") and ";base64," in t[:64]:
            prefix, b64 = t.split(",", 1)
            return image_descriptor(base64.b64decode(b64), prefix + ",", self.mode)
        for a, b in self.replace:
            t = t.replace(a, b)
        for kind, pattern in self.numbered.items():
            t = pattern.sub(self._numberer(kind), t)
        return self.after(t) if self.after is not None else t

    def _numberer(self, kind: str) -> Callable[[re.Match[str]], str]:
        seen = self.seen[kind]

        def number(m: re.Match[str]) -> str:
            return seen.setdefault(m.group(0), f"<{kind}:{len(seen) + 1}>")

        return number

    def __call__(self, o: Any) -> Any:
        if isinstance(o, str):
            return self.text(o)
        if isinstance(o, list):
            return [self(x) for x in o]
        if isinstance(o, dict):
            return {k: self(v) for k, v in o.items()}
        return o


def golden_bodies(g: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded bodies, with `{"$tool_set": …}` references expanded to their arrays."""
    out = []
    for r in g["requests"]:
        b = dict(r["body"])
        if isinstance(b.get("tools"), dict):
            b["tools"] = g["tool_sets"][b["tools"]["$tool_set"]]
        out.append(b)
    return out


def first_difference(a: Any, b: Any, path: str = "$") -> str | None:
    """Where `a` (toolsight) and `b` (the driver) first differ, key order included, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)} (toolsight) vs {list(b)} (driver)"
        for k in a:
            found = first_difference(a[k], b[k], f"{path}.{k}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None if len(a) == len(b) else f"{path}: {len(a)} items (toolsight) vs {len(b)} (driver)"
    numbers = isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool | None)
    if a != b or (type(a) is not type(b) and not numbers):
        sa, sb = json.dumps(a, ensure_ascii=False), json.dumps(b, ensure_ascii=False)
        return f"{path}:\n  toolsight: {sa[:1500]}\n  driver:    {sb[:1500]}"
    return None


def assert_same_requests(got: list[dict[str, Any]], want: list[dict[str, Any]], got_tasks: list[str | None],
                         want_tasks: list[str | None]) -> None:
    """Same number of requests, for the same tasks in the same order, and every body identical."""
    assert got_tasks == want_tasks, f"task order: toolsight {got_tasks}, driver {want_tasks}"
    for i, (a, b) in enumerate(zip(got, want, strict=True), start=1):
        diff = first_difference(a, b)
        if diff is not None:
            pytest.fail(f"request {i} ({want_tasks[i - 1]}) differs at {diff}", pytrace=False)


# ---------------------------------------------------------------------------------------- scripts

def resolve_tokens(steps: list[dict[str, Any]], tokens: dict[str, str]) -> None:
    """Replace script tokens in the tool-call arguments of `steps`, in place: in the string values of
    object arguments and inside raw-string arguments (JSON-escaped there: they sit in JSON strings)."""
    escaped = {k: json.dumps(v)[1:-1] for k, v in tokens.items()}

    def walk(o: Any, table: dict[str, str]) -> Any:
        if isinstance(o, str):
            for k, v in table.items():
                o = o.replace(k, v)
            return o
        if isinstance(o, list):
            return [walk(x, table) for x in o]
        if isinstance(o, dict):
            return {k: walk(v, table) for k, v in o.items()}
        return o

    for step in steps:
        for call in step.get("tool_calls") or []:
            args = call.get("arguments")
            call["arguments"] = walk(args, escaped) if isinstance(args, str) else walk(args, tokens)


def task_of_final(fin: dict[str, Any], rows: dict[str, dict[str, Any]]) -> str:
    """The task key a driver's `final` entry belongs to (its `task`, else its row's marker)."""
    if isinstance(fin.get("task"), str):
        return str(fin["task"])
    idx = fin.get("row_index")
    for key, row in rows.items():
        if row.get("_index") == idx:
            return key
    raise AssertionError(f"a final entry that names no task: {fin}")


def is_error_final(fin: dict[str, Any]) -> bool:
    """A driver `final` entry that records a failed task rather than an answer."""
    return "error" in fin or fin.get("status") not in (None, "success")


# ---------------------------------------------------------------------------------------- VTC-Bench

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


def _frames(m: re.Match[str]) -> str:
    frames = re.findall(r'  File "([^"\n]*)", line (\d+), in ([^\n]*)', m.group(1))
    names = " | ".join(f"{f.rsplit('/', 1)[-1]}:{fn}" for f, _, fn in frames)
    return f"Traceback:\n<TRACEBACK frames={len(frames)}: {names}>" + ("\n" if m.group(1).endswith("\n") else "")


def vtc_normaliser(workdir: str) -> Normaliser:
    """README rules 1-4 for one task's bodies (its workspace is the `<WORKDIR>`)."""
    return Normaliser([(workdir, "<WORKDIR>")], {"uuid": UUID}, mode=False, after=lambda t: TB.sub(_frames, t))


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


def replay(path: Path, tmp: Path, loop: str | None = None) -> dict[str, Any]:
    """Run the transcript's scenario through toolsight (official loop by default) against the scripted
    server; return the golden data, toolsight's normalised bodies, task keys and records."""
    g = load(path)
    data, run = tmp / "data", tmp / "run"
    build_fixture(g, data)
    rows = {r["question"].rsplit("[task:", 1)[1].rstrip("]"): r for r in g["fixture"]["rows"]}
    ws = {key: str(artifact_dir(run, row["id"]).resolve()) for key, row in rows.items()}
    script = json.loads(json.dumps(g["script"]))
    for key, steps in script.get("tasks", {}).items():
        if key in ws:
            resolve_tokens(steps, {"$input": f"{ws[key]}/{g['fixture']['images'][key]['path']}"})
    with ScriptedServer(Script.model_validate(script)) as srv:
        opts = RunOptions.of(benchmark="vtc-bench", model=f"openai/{g['model']}", setting=SETTINGS[g["setting"]],
                             loop=loop, data=str(data), base_url=srv.openai_base_url, out=str(run), concurrency=1,
                             score=False, cache=False, retries=0)
        bench = get_benchmark("vtc-bench")
        runner = Runner(opts, bench, load_for_run(bench, str(data)), get_model(opts.model.spec, base_url=opts.model.base_url))
        asyncio.run(runner.run())
        recorded = list(srv.requests)
    norm = vtc_normaliser("")  # UUIDs are numbered per file, over the bodies in order
    bodies = []
    for r in recorded:
        norm.replace = [(ws[r.task], "<WORKDIR>")] if r.task in ws else []  # each task's own workspace
        bodies.append(norm(r.body))
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    return {"golden": g, "bodies": bodies, "tasks": [r.task for r in recorded], "records": records, "run": run,
            "rows": rows}
