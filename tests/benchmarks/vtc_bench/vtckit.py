"""Run made-up VTC-Bench scenarios through the official loop against the scripted server."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path
from typing import Any

from goldenwirekit import stand_in
from toolsight.benchmarks.registry import get_benchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner, load_for_run
from toolsight.engine.store import artifact_dir
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script

COLUMNS = ["index", "id", "category", "image", "question", "answer", "A", "B", "C", "D"]


def make_data(root: Path, rows: list[dict[str, Any]]) -> None:
    """`rows`: id, question (with its [task:KEY] marker), size (w, h); options A-D, answer C."""
    root.mkdir(parents=True, exist_ok=True)
    for name, gt in (("VTC-Bench.tsv", False), ("VTC-Bench_GTToolChain.tsv", True)):
        with (root / name).open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, delimiter="\t")
            w.writerow(COLUMNS + (["model_tools_gt"] if gt else []))
            for i, r in enumerate(rows, start=1):
                img = f"images/chart/{r['id']}.jpg"
                w.writerow([str(i), r["id"], "chart", img, r["question"], "C", "1", "2", "3", "4"]
                           + (['["Crop", "Binarize"]'] if gt else []))
    for r in rows:
        stand_in(root / "images" / "chart" / f"{r['id']}.jpg", *r.get("size", (200, 150)))


def run_vtc(tmp: Path, rows: list[dict[str, Any]], script: dict[str, Any], model: str = "Qwen3-VL-30B-A3B-Thinking",
            setting: str = "interface", loop: str | None = None, caps: dict[str, Any] | None = None) -> dict[str, Any]:
    """Replace "$input" by the task image's absolute path, run, return bodies, records and workspaces.
    `caps`: cap overrides (`--cap`), e.g. {"max_rounds": 3} for a shorter call budget."""
    data, run = tmp / "data", tmp / "run"
    make_data(data, rows)
    ws = {r["id"]: artifact_dir(run, r["id"]).resolve() for r in rows}
    text = json.dumps(script)
    for r in rows:
        key = r["question"].rsplit("[task:", 1)[1].rstrip("]")
        text = text.replace(f"$input:{key}", f"{ws[r['id']]}/images/chart/{r['id']}.jpg")
    with ScriptedServer(Script.model_validate(json.loads(text))) as srv:
        opts = RunOptions.of(benchmark="vtc-bench", model=f"openai/{model}", setting=setting, loop=loop, data=str(data),
                          base_url=srv.openai_base_url, out=str(run), concurrency=1, cache=False, retries=0,
                          caps=caps or {})
        bench = get_benchmark("vtc-bench")
        runner = Runner(opts, bench, load_for_run(bench, str(data)), get_model(opts.model.spec, base_url=opts.model.base_url))
        asyncio.run(runner.run())
        reqs = list(srv.requests)
    recs = {x["task_id"]: x for x in map(json.loads, (run / "records.jsonl").read_text().splitlines())}
    return {"bodies": [r.body for r in reqs], "tasks": [r.task for r in reqs], "records": recs, "ws": ws, "run": run}


def texts(msg: dict[str, Any]) -> list[str]:
    content = msg.get("content")
    if isinstance(content, str):
        return [content]
    return [p["text"] for p in content or [] if p.get("type") == "text"]
