"""VTC-Bench end to end through the CLI: the official TSV files, the interface setting, a scripted
model (on 127.0.0.1) chaining five OpenCV operations on the images they produce, and the report's
Table-4-style (accuracy by category) and Table-5-style (toolchain) tables."""

from __future__ import annotations

import csv
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer

COLUMNS = ["index", "id", "category", "image", "question", "answer", "A", "B", "C", "D"]
CHAIN = '["Rotate", "Crop", "Adjust Brightness", "Binarize", "Connected Components"]'


def _official(root: Path) -> None:
    rows = []
    for i, (blobs, gold) in enumerate([(4, "B"), (5, "C")], start=1):
        img = np.full((120, 200, 3), 40, np.uint8)
        for k in range(blobs):
            cv2.circle(img, (20 + 40 * k, 60), 12, (200, 200, 200), -1, cv2.LINE_AA)
        (root / "images" / "counting").mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(root / "images" / "counting" / f"counting_{i}.jpg"), img)
        rows.append([str(i), f"counting_{i}", "counting", f"images/counting/counting_{i}.jpg",
                     f"[task:counting_{i}] How many discs are there?", gold, "3", "4", "5", "6"])
    for name, extra in (("VTC-Bench.tsv", False), ("VTC-Bench_GTToolChain.tsv", True)):
        with (root / name).open("w", newline="") as fh:
            w = csv.writer(fh, delimiter="\t")
            w.writerow(COLUMNS + (["model_tools_gt"] if extra else []))
            for r in rows:
                w.writerow(r + ([CHAIN] if extra else []))


def _ts(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["COLUMNS"] = "250"
    return subprocess.run([sys.executable, "-m", "toolsight", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_interface_run_chaining_five_operations(tmp_path: Path) -> None:
    data = tmp_path / "vtc"
    _official(data)

    def plan(task: str, answer: str) -> list[dict[str, object]]:
        calls = [
            ("opencv_rotate", {"image": f"{task}.jpg", "param": {"angle": 90}}),
            ("opencv_crop", {"image": "$prev", "param": {"x": 0, "y": 5, "width": 120, "height": 190}}),
            ("opencv_convertscaleabs", {"image": "$prev", "param": {"alpha": 1.2, "beta": 10}}),
            ("opencv_threshold", {"image": "$prev", "param": {"mode": "otsu"}}),
            ("opencv_connected_components_with_stats", {"image": "$prev", "param": {"threshold_mode": "otsu"}}),
        ]
        steps: list[dict[str, object]] = [{"tool_calls": [{"name": n, "arguments": a}]} for n, a in calls]
        return [*steps, {"text": f"<think>counted</think><answer>{answer}</answer>"}]

    script = Script.model_validate({"steps": [{"text": "<answer>A</answer>"}], "tasks": {
        "counting_1": plan("counting_1", "B"), "counting_2": plan("counting_2", "A")}})
    run = tmp_path / "run"
    with ScriptedServer(script) as srv:
        r = _ts("run", "vtc-bench", "--data", str(data), "--setting", "interface", "--model", "openai/vlm",
                "--base-url", srv.openai_base_url, "--out", str(run), "--no-report")
        first = next(q for q in srv.requests if q.task == "counting_1")
    assert r.returncode == 0, r.stderr
    recs = {x["task_id"]: x for x in map(json.loads, (run / "records.jsonl").read_text().splitlines())}
    for tid in ("counting_1", "counting_2"):
        calls = recs[tid]["trajectory"]["tool_calls"]
        assert [c["ok"] for c in calls] == [True] * 5, [c["error"] for c in calls]
        assert "total_components" in calls[-1]["text"]
        for prev, nxt in itertools.pairwise(calls):
            assert nxt["inputs"] == prev["artifacts"]  # each call worked on the previous call's image
    assert recs["counting_1"]["score"]["value"] == 1.0 and recs["counting_2"]["score"]["value"] == 0.0
    # the reference prompt format reached the model, with 35 tools offered
    parts = [p["text"] for p in first.body["messages"][-1]["content"] if p.get("type") == "text"]
    assert parts[0] == "(Uploaded ![image](counting_1.jpg)) "  # the official loop (the default) as the driver
    user_text = parts[-1]
    assert "### User Image Size:** \"200x120\"" in user_text and "<answer>" in user_text
    assert len(first.body["tools"]) == 35
    rep = _ts("report", str(run), "--by", "category")
    assert rep.returncode == 0, rep.stderr
    assert "Score % by category" in rep.stdout and "counting" in rep.stdout
    tool_row = next(line for line in rep.stdout.splitlines() if line.startswith("| openai/vlm | interface | 100.0"))
    cells = [c.strip() for c in tool_row.strip("|").split("|")]
    assert cells[4] == "5.00"  # calls per task
    assert cells[6] == "5.00"  # effective calls per task: the whole chain leads to the last image
    assert cells[8] == "0.00" and cells[9] == "0.00"  # chain-length MAE vs the 5-step ground truth
    assert "Chain length by category (effective / reference)" in rep.stdout
    section = rep.stdout.split("Chain length by category")[1]
    chain_row = next(line for line in section.splitlines() if line.startswith("| openai/vlm | interface |"))
    assert "5.00 / 5.00 (0.00)" in chain_row


def test_category_columns_follow_the_papers_order() -> None:
    from toolsight.metrics.compute import RunMetrics
    from toolsight.report.tables import ordered_values

    vtc = [RunMetrics(run_dir=".", benchmark="vtc-bench")]
    got = ordered_values("category", ["spatial", "attention", "ocr", "chart", "counting"], vtc)
    assert got == ["ocr", "attention", "chart", "counting", "spatial"]
    other = [RunMetrics(run_dir=".", benchmark="tir-bench")]
    assert ordered_values("category", ["b", "a"], other) == ["a", "b"]
