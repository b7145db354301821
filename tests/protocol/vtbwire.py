"""The VisualToolBench golden-wire replay (`../shared/golden-wire/visualtoolbench/`, README there).

Builds a transcript's fixture (the converted layout: `data/{single,multi}_turn/dataset.json` and the
stand-in PNGs, drawn by the recording's recipe and checked against its hashes), serves its script
on toolsight's scripted server with the recording server's tokens (`$input` = the first path of the
image list in the request's `python_image_processing` description, `$save` = the save folder it
names), gives the web tools the README's web stand-ins as an offline corpus (the page and the day's
weather of `tools/scenarios.py`, as `tools/replay_toolsight.py` does), runs toolsight's official
loop and normalises its bodies as `tools/normalise.py` does.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from PIL import Image, ImageDraw

from goldenwirekit import GOLDEN, Normaliser, load
from toolsight.benchmarks.registry import get_benchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner, load_for_run
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script

FOLDER = "visualtoolbench"
SETTINGS = {"strong": "strong", "weak": "weak", "no_tools": "no-tools", "no-tools": "no-tools"}
IMAGE_TOOL = "python_image_processing"
LIST_RE = re.compile(r"working-directory file list: (\[.*?\])\.\n", re.S)
SAVE_RE = re.compile(r"transformed image as PNG to (.*?) using the filename pattern", re.S)
#: the one field no harness can write as the driver does: the driver's frames name its own module
#: by its absolute path (`<DRIVER>/scripts/tools.py` after normalisation); toolsight names it
#: relative to the driver's folder (`scripts/tools.py`, the same frame, line and source text)
DRIVER_MODULE = ("<DRIVER>/scripts/tools.py", "scripts/tools.py")


def draw(path: Path, w: int, h: int, mode: str) -> bytes:
    """The recording's stand-in picture (`tools/scenarios.py::draw`): blue ground, six yellow discs, a red bar."""
    im = Image.new("RGB", (w, h), (40, 90, 160))
    d = ImageDraw.Draw(im)
    r = max(2, min(w, h) // 12)
    for i in range(6):
        cx, cy = int(w * (i + 1) / 7), int(h * 0.25)
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(230, 200, 40))
    d.rectangle([w // 3, h // 2, w // 3 + w // 5, h // 2 + h // 8], fill=(200, 30, 30))
    if mode == "RGBA":
        im = im.convert("RGBA")
        im.putalpha(200)
    elif mode != "RGB":
        im = im.convert(mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path, format="PNG")
    return path.read_bytes()


def scenarios_module() -> ModuleType | None:
    """The recording's `tools/scenarios.py` (its web stand-ins), when the folder has it."""
    path = GOLDEN / FOLDER / "tools" / "scenarios.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("vtb_gw_scenarios", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build_fixture(g: dict[str, Any], root: Path) -> None:
    """The converted layout and the stand-in images (each checked against the recording's hash)."""
    fx = g["fixture"]
    for rel, info in fx["images"].items():
        data = draw(root / rel, info["width"], info["height"], info["mode"])
        assert hashlib.sha256(data).hexdigest() == info["sha256"], f"stand-in {rel} differs from the recording's"
    ds = root / fx["dataset"]
    ds.parent.mkdir(parents=True, exist_ok=True)
    ds.write_text(json.dumps(fx["records"], indent=2), encoding="utf-8")
    sc = scenarios_module()
    if sc is not None:  # the page and the weather the recording's stand-ins served, as an offline corpus
        corpus = root / "corpus"
        (corpus / "pages").mkdir(parents=True, exist_ok=True)
        (corpus / "pages" / "results.html").write_text(sc.PAGE_HTML, encoding="utf-8")
        (corpus / "manifest.json").write_text(json.dumps(sc.CORPUS_MANIFEST), encoding="utf-8")
        (corpus / "weather.json").write_text(json.dumps(sc.CORPUS_WEATHER), encoding="utf-8")


def _description(body: dict[str, Any]) -> str:
    for t in body.get("tools") or []:
        f = t.get("function", {})
        if f.get("name") == IMAGE_TOOL:
            return str(f.get("description", ""))
    return ""


def tokens(body: dict[str, Any]) -> dict[str, str]:
    """The recording server's tokens, read from the request itself (`tools/gwserver.py::tokens`)."""
    d = _description(body)
    lst, sv = LIST_RE.search(d), SAVE_RE.search(d)
    images = ast.literal_eval(lst.group(1)) if lst else []
    return {"$input": images[0] if images else "", "$save": sv.group(1) if sv else ""} if d else {}


def paths_in(bodies: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """`tools/normalise.py`'s path rule: save folders → `<SAVE>`, first image-list entries → `<INPUT>`."""
    out: list[tuple[str, str]] = []
    for b in bodies:
        d = _description(b)
        lst, sv = LIST_RE.search(d), SAVE_RE.search(d)
        if sv:
            out.append((sv.group(1), "<SAVE>"))
        if lst:
            images = ast.literal_eval(lst.group(1))
            if images:
                out.append((images[0], "<INPUT>"))
    return out


def replay(path: Path, tmp: Path) -> dict[str, Any]:
    """Run the transcript's scenario through toolsight's official loop; bodies normalised."""
    g = load(path)
    root, run = tmp / "fx", tmp / "run"
    build_fixture(g, root)
    web = f"offline={root / 'corpus'}" if (root / "corpus").is_dir() else None
    with ScriptedServer(Script.model_validate(g["script"]), tokens=tokens) as srv:
        opts = RunOptions.of(benchmark="visualtoolbench", model=f"openai/{g['model']}",
                             setting=SETTINGS[g["setting"]], loop="official", data=str(root),
                             base_url=srv.openai_base_url, out=str(run), concurrency=1, score=False, cache=False,
                             retries=0, web=web)
        bench = get_benchmark("visualtoolbench")
        runner = Runner(opts, bench, load_for_run(bench, str(root)),
                        get_model(opts.model.spec, base_url=opts.model.base_url))
        asyncio.run(runner.run())
        recorded = [r for r in srv.requests if r.path.endswith("/chat/completions")]
    raw = [r.body for r in recorded]
    norm = Normaliser([*paths_in(raw), (str(run.resolve()), "<RUN>"), (str(root.resolve()), "<DATA>")])
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines() if x.strip()]
    return {"golden": g, "bodies": [norm(b) for b in raw], "tasks": [r.task for r in recorded], "records": records}
