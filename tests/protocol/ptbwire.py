"""The PhysToolBench golden-wire replay (`../shared/golden-wire/phystoolbench/`, README there).

Builds a transcript's fixture as the recording did (`scripts/ptb_fixture.py`): the Hugging Face
layout, one parquet file whose `image` column holds the stand-in PNG of each record (numbered
rectangles in the record's mode and size, checked against the recording's hashes); serves the
script on toolsight's scripted server (its markers `[task:<key>c]` / `[task:<key>n]` sit in the
stored prompts) and runs toolsight's official `both` setting with the driver's 3 attempts
(`--retries 2`).
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from goldenwirekit import Normaliser, load
from sharedfiles import missing
from toolsight.benchmarks.registry import get_benchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner, load_for_run
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script

FOLDER = "phystoolbench"
#: the driver's `model_api` makes 3 attempts per call (its `retries=3`): toolsight's --retries 2
DRIVER_RETRIES = 2


def stand_in(w: int, h: int, mode: str, n_objects: int = 6) -> bytes:
    """The recording's stand-in image (`scripts/ptb_fixture.py::stand_in`)."""
    im = Image.new("RGB", (w, h), (235, 235, 225))
    d = ImageDraw.Draw(im)
    for i in range(n_objects):
        x0 = int(w * (i + 0.2) / n_objects)
        x1 = int(w * (i + 0.8) / n_objects)
        d.rectangle([x0, h // 3, x1, 2 * h // 3], fill=(60 + 30 * i, 90, 200 - 25 * i))
        d.text((x0 + 4, h // 3 - 16), str(i + 1), fill=(0, 0, 0))
    if mode == "RGBA":
        im = im.convert("RGBA")
        px = im.load()
        assert px is not None
        for y in range(0, h, 7):
            px[0, y] = (0, 0, 0, 0)
    elif mode == "P":
        im = im.convert("P", palette=Image.Palette.ADAPTIVE, colors=32)
    elif mode != "RGB":
        im = im.convert(mode)
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def build_fixture(g: dict[str, Any], root: Path) -> Path:
    """The parquet file (HF layout) with the rows as recorded and the stand-in images."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        missing("pyarrow (the PhysToolBench parquet layout; pip install 'toolsight[hf]')")

    fx = g["fixture"]
    specs = {f"{s['level']}_{s['id']}": s for s in fx["spec"]}
    rows = []
    for row in fx["rows"]:
        s = specs[row["id"]]
        data = stand_in(s["w"], s["h"], s["mode"])
        assert hashlib.sha256(data).hexdigest() == fx["images"][row["id"]]["sha256"], f"stand-in {row['id']} differs"
        rows.append({**row, "image": {"bytes": data, "path": None}})
    path = root / fx["parquet"]
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def replay(path: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Run the transcript's items through toolsight's official `both` setting; bodies normalised."""
    g = load(path)
    root, run = tmp / "fx", tmp / "run"
    build_fixture(g, root)
    monkeypatch.setenv("TOOLSIGHT_CACHE", str(tmp / "cache"))  # the parquet's images are extracted here
    with ScriptedServer(Script.model_validate(g["script"])) as srv:
        opts = RunOptions.of(benchmark="phystoolbench", model=f"openai/{g['model']}", setting="both",
                             loop="official", data=str(root), base_url=srv.openai_base_url, out=str(run),
                             concurrency=1, score=False, cache=False, retries=DRIVER_RETRIES, backoff_base=0.01)
        bench = get_benchmark("phystoolbench")
        runner = Runner(opts, bench, load_for_run(bench, str(root)),
                        get_model(opts.model.spec, base_url=opts.model.base_url))
        asyncio.run(runner.run())
        recorded = [r for r in srv.requests if r.path.endswith("/chat/completions")]
    norm = Normaliser([(str(tmp.resolve()), "<WORK>")])
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines() if x.strip()]
    return {"golden": g, "bodies": [norm(r.body) for r in recorded], "tasks": [r.task for r in recorded],
            "records": records}
