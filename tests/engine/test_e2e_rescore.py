"""`toolsight score`: re-score a finished run with another scorer and a judge served on 127.0.0.1,
without calling the evaluated model again; the records stay byte-for-byte untouched."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from enginekit import write_png
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer


def _ts(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["COLUMNS"] = "200"
    return subprocess.run([sys.executable, "-m", "toolsight", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_rescore_with_a_judge_leaves_records_untouched(tmp_path: Path) -> None:
    ds = tmp_path / "ds"
    write_png(ds / "img.png")
    opts = {"A": "3", "B": "4", "C": "5", "D": "6"}
    with (ds / "tasks.jsonl").open("w") as fh:
        for i, gold in enumerate(["A", "C"]):
            fh.write(json.dumps({"id": f"t{i}", "turns": [{"prompt": f"[task:t{i}] How many?", "answer": gold,
                                 "options": opts, "answer_type": "choice", "images": [{"path": "img.png"}]}]}) + "\n")
    model_script = Script.model_validate({"steps": [{"text": "<answer>x</answer>"}], "tasks": {
        "t0": [{"text": "<answer>Option A</answer>"}], "t1": [{"text": "<answer>B</answer>"}]}})
    run = tmp_path / "run"
    with ScriptedServer(model_script) as model_srv:
        r = _ts("run", str(ds), "--model", "openai/m", "--base-url", model_srv.openai_base_url, "--out", str(run),
                "--no-report")
        assert r.returncode == 0, r.stderr
        n_model_requests = len(model_srv.requests)
    before = hashlib.sha256((run / "records.jsonl").read_bytes()).hexdigest()
    with ScriptedServer(Script.answer("A")) as judge_srv:
        r = _ts("score", str(run), "--scorer", "vtc-bench", "--judge", "openai/judge-1",
                "--judge-base-url", judge_srv.openai_base_url, "--name", "vtc-judge1")
        judge_requests = list(judge_srv.requests)
    assert r.returncode == 0, r.stderr
    assert hashlib.sha256((run / "records.jsonl").read_bytes()).hexdigest() == before
    assert n_model_requests == 2
    scores = {json.loads(x)["task_id"]: json.loads(x) for x in (run / "scores-vtc-judge1.jsonl").read_text().splitlines()}
    # "Option A" fails VTC's letter rule and goes to the judge, which reads A: correct
    s0 = scores["t0"]["score"]
    assert s0["value"] == 1.0 and s0["judge_calls"] and s0["judge_calls"][0]["model"].endswith("judge-1")
    assert "Option A" in s0["judge_calls"][0]["prompt"]
    # "B" against gold C: the rules reject it, the judge (always "A") does not rescue it
    assert scores["t1"]["score"]["value"] == 0.0
    assert judge_requests and all(q.body["model"] == "judge-1" for q in judge_requests)
    rep = _ts("report", str(run), "--scores", "vtc-judge1")
    assert rep.returncode == 0 and "scores-vtc-judge1.jsonl" in rep.stdout
