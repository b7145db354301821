"""PhysToolBench end to end through the CLI against the scripted server on 127.0.0.1: the official
request layout (prompt then PNG, temperature 0, 8,192 tokens, no system prompt, no tools), `cot`,
`no-cot` and `both`, and the per-level tables `toolsight report` prints for both settings."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from PIL import Image
from ptkit import hf_layout, image_task_layout, sample_records

from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer

ANSWER = "### Thinking Process\nThe first object fits.\n### Answer\n1"


def _ts(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["COLUMNS"] = "250"
    return subprocess.run([sys.executable, "-m", "toolsight", *args], capture_output=True, text=True, env=env,
                          timeout=600)


def _records(run: Path) -> dict[str, dict[str, object]]:
    return {r["task_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}


def test_cot_no_cot_both_and_the_level_tables(tmp_path: Path) -> None:
    repo = image_task_layout(tmp_path / "repo")
    hf = hf_layout(tmp_path / "hf")
    golds = {f"{lv}_{r['id']}": r["correct_tool"] for lv, recs in sample_records().items() for r in recs}
    ones = {k for k, g in golds.items() if g == "1"}
    runs = {s: tmp_path / f"run-{s}" for s in ("cot", "no-cot", "both")}
    with ScriptedServer(Script.answer(ANSWER)) as srv:
        for setting, data in (("cot", hf), ("no-cot", repo), ("both", repo)):
            r = _ts("run", "phystoolbench", "--data", str(data), "--setting", setting, "--model", "openai/vlm",
                    "--base-url", srv.openai_base_url, "--out", str(runs[setting]), "--no-report")
            assert r.returncode == 0, r.stderr
        requests = list(srv.requests)
    first = requests[0].body
    assert first["temperature"] == 0.0 and first["max_tokens"] == 8192 and "tools" not in first
    (msg,) = first["messages"]
    assert msg["role"] == "user" and [p["type"] for p in msg["content"]] == ["text", "image_url"]
    assert msg["content"][0]["text"] in {r["cot_prompt"] for recs in sample_records().values() for r in recs}
    easy1 = next(q.body for q in requests if "three carrots" in q.body["messages"][0]["content"][0]["text"])
    url = easy1["messages"][0]["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as im:
        assert im.format == "PNG" and im.mode == "RGB"  # the stored RGBA image, converted as the official client does

    cot = _records(runs["cot"])
    assert {k for k, r in cot.items() if r["score"]["passed"]} == ones  # type: ignore[index]
    no_cot = _records(runs["no-cot"])
    assert not any(r["score"]["passed"] for r in no_cot.values())  # type: ignore[index]  # raw text != "1"
    no_cot_prompts = [q for q in requests if q.body["messages"][0]["content"][0]["text"].endswith("or 'None'.")]
    assert len(no_cot_prompts) == 40 + 40  # the no-cot run and the no-cot half of `both`
    both = _records(runs["both"])
    assert set(both) == {f"{k}@{v}" for k in golds for v in ("cot", "no-cot")}
    assert {k.removesuffix("@cot") for k, r in both.items() if r["score"]["passed"]} == ones  # type: ignore[index]

    vcr_run = tmp_path / "run-vcr"
    with ScriptedServer(Script.answer(ANSWER)) as srv:
        r = _ts("run", "phystoolbench", "--data", str(repo), "--setting", "vcr", "--model", "openai/vlm",
                "--base-url", srv.openai_base_url, "--out", str(vcr_run), "--limit", "3", "--no-report")
        n_vcr = len(srv.requests)
    assert r.returncode == 0, r.stderr
    vcr = _records(vcr_run)
    assert len(vcr) == 3 and all(x["score"]["passed"] for x in vcr.values())  # type: ignore[index]  # Easy golds: "1"
    crops: int = sum(len(x["trajectory"]["tool_calls"][0]["artifacts"]) for x in vcr.values())  # type: ignore[index,misc]
    assert n_vcr == 3 * 3 + crops  # n + 3 calls per task
    assert all([s["stage"] for s in x["trajectory"]["stages"]] == [1, 2, 3, 4, 5] for x in vcr.values())  # type: ignore[index]

    rep = _ts("report", str(runs["cot"]), str(runs["no-cot"]), str(runs["both"]))
    assert rep.returncode == 0, rep.stderr
    text = rep.stdout
    assert "### Score % by difficulty" in text and "### Score % by scene" in text
    header = next(ln for ln in text.splitlines() if ln.startswith("| Model | Setting | Overall | Easy"))
    assert header.split("|")[3:9] == [" Overall ", " Easy ", " Medium-M1 ", " Medium-M2 ", " Medium-M3 ", " Hard "]
    level_rows = text.split("### Score % by difficulty")[1].split("###")[0]
    for setting in ("| cot |", "| no-cot |", "| both:cot |", "| both:no-cot |", "HUMAN(BEST) (paper)"):
        assert setting in level_rows, setting
    cot_row = next(ln for ln in level_rows.splitlines() if "| cot |" in ln)
    assert "100.0 [100.0–100.0]" in cot_row.split("|")[4]  # every Easy gold is "1"
