"""End to end through the CLI (real subprocesses): VisBrowse-Bench on the real sample against the scripted
OpenAI-compatible server with the offline backend and a summary model; the recorded run replayed with no
corpus and no summary model gives the same records; the generated mini-web solved by the reference."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sharedfiles import missing, shared_dir
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer
from toolsight.tools.web_tools import crop_jpeg

SHARED = shared_dir()
SAMPLE = SHARED / "data" / "visbrowse-bench"
IMG1 = SAMPLE / "VisBrowse_Bench_images" / "1.png"
URL1 = "https://raw.githubusercontent.com/ZhengboZhang/VisBrowse-Bench/refs/heads/main/VisBrowse_Bench_images/1.png"
PAGE = "https://films.example.test/iron-man-2008-poster"
BBOX = [0.02, 0.02, 0.98, 0.98]


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    e.update({"COLUMNS": "200", "TOOLSIGHT_CACHE": str(tmp / "cache"), **extra})
    return e


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolsight", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def _records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines() if x.strip()]


def _corpus(root: Path) -> None:
    """A small offline web: the sample's poster on one page, and unrelated pages."""
    (root / "images").mkdir(parents=True)
    shutil.copyfile(IMG1, root / "images" / "poster.png")  # a tmp copy for the test's corpus, not the repo
    body = "<p>The poster shows the cast of the 2008 film; the actor at the top right is Robert Downey Jr.</p>" * 3
    pages = [{"url": PAGE, "file": "poster.html"}]
    (root / "poster.html").write_text(f"<html><head><title>Iron Man (2008) poster</title></head><body><article>"
                                      f"<h1>Iron Man poster</h1><img src='https://img.films.example.test/im.png' "
                                      f"alt='Iron Man poster'>{body}</article></body></html>")
    for i in range(4):
        (root / f"other{i}.html").write_text(f"<html><head><title>Other {i}</title></head><body><p>Unrelated page "
                                             f"number {i} about harbours and ships.</p></body></html>")
        pages.append({"url": f"https://other.example.test/{i}", "file": f"other{i}.html"})
    (root / "manifest.json").write_text(json.dumps({"format": "toolsight-corpus/1", "pages": pages, "images": [
        {"url": "https://img.films.example.test/im.png", "file": "images/poster.png", "page": PAGE}]}))


def _script() -> Script:
    jpeg, _ = crop_jpeg(IMG1.read_bytes(), BBOX)
    crop_url = f"https://img.toolsight.test/{hashlib.sha256(jpeg).hexdigest()[:16]}.jpg"
    return Script.model_validate({"steps": [
        {"text": "I will zoom in on the poster.", "tool_calls": [{"name": "image_crop",
                                                                  "arguments": {"image_url": URL1, "bbox": BBOX}}]},
        {"text": "Now a reverse image search.", "tool_calls": [{"name": "reverse_image_search",
                                                                "arguments": {"image_url": crop_url}}]},
        {"text": "Reading the page.", "tool_calls": [{"name": "visit", "arguments": {
            "url": PAGE, "goal": "who is at the top right"}}]},
        {"text": "Robert Downey Jr. starred in Oppenheimer; Einstein was played by Tom Conti. "
                 "<answer>Tom Conti</answer>"},
    ]})


def _norm(rec: dict[str, Any], run: Path) -> dict[str, Any]:
    """A record without what legitimately differs between two runs (times, paths of the run directory)."""
    text = json.dumps(rec["trajectory"]["messages"]).replace(str(run), "RUN")
    calls = [{k: c[k] for k in ("name", "arguments", "ok", "error", "text", "artifacts", "inputs")}
             for c in rec["trajectory"]["tool_calls"]]
    return {"task": rec["task_id"], "messages": json.loads(text), "calls": calls, "turns": rec["trajectory"]["turns"],
            "score": {k: rec["score"][k] for k in ("value", "passed", "answer")}, "error": rec["error"]}


@pytest.mark.slow
def test_sample_task_offline_then_replayed_with_identical_records(tmp_path: Path) -> None:
    if not IMG1.is_file():
        missing(str(IMG1))
    corpus = tmp_path / "corpus"
    _corpus(corpus)
    summ = tmp_path / "summ.json"
    summ.write_text(json.dumps({"steps": [{"text": json.dumps({
        "rational": "the poster page", "evidence": "the actor at the top right is Robert Downey Jr.",
        "summary": "Robert Downey Jr. is at the top right."})}]}))
    env = _env(tmp_path, TOOLSIGHT_SCRIPT=str(summ))
    run1, run2 = tmp_path / "run1", tmp_path / "run2"
    with ScriptedServer(_script()) as srv:
        p = _cli("run", "visbrowse-bench", "--data", str(SAMPLE), "--setting", "+IS", "--model", "openai/vb",
                 "--base-url", srv.openai_base_url, "--web", f"offline={corpus}", "--summary-model", "mock/summ",
                 "--judge", "mock/judge", "--limit", "1", "--out", str(run1), "--no-report", env=env)
        assert p.returncode == 0, p.stderr
        first = srv.requests[0].body
    rec = _records(run1)[0]
    assert rec["task_id"] == "1" and rec["error"] is None
    assert [c["name"] for c in rec["trajectory"]["tool_calls"]] == ["image_crop", "reverse_image_search", "visit"]
    assert all(c["ok"] for c in rec["trajectory"]["tool_calls"])
    assert rec["trajectory"]["tool_calls"][1]["text"].endswith(f"Webpage Url: {PAGE}\n```")
    assert "Evidence in page: \nthe actor at the top right is Robert Downey Jr." in rec["trajectory"]["tool_calls"][2]["text"]
    assert rec["score"]["passed"] is True and rec["score"]["details"]["gen"] == "Tom Conti"
    assert first["temperature"] == 1 and first["tool_choice"] == "auto" and len(first["tools"]) == 5
    manifest = json.loads((run1 / "manifest.json").read_text())
    assert manifest["backends"]["web"]["mode"] == "offline" and manifest["backends"]["web"]["backend"]["name"] == "corpus"
    assert manifest["backends"]["web"]["summarizer"] == "mock/summ"

    # replay: no corpus, no summary model, a fresh server playing the same model replies
    shutil.rmtree(corpus)
    with ScriptedServer(_script()) as srv:
        p = _cli("run", "visbrowse-bench", "--data", str(SAMPLE), "--setting", "+IS", "--model", "openai/vb",
                 "--base-url", srv.openai_base_url, "--web", f"replay={run1}", "--limit", "1", "--out", str(run2),
                 "--judge", "mock/judge", "--no-report", env=_env(tmp_path))
        assert p.returncode == 0, p.stderr
    assert [_norm(r, run2) for r in _records(run2)] == [_norm(r, run1) for r in _records(run1)]
    m2 = json.loads((run2 / "manifest.json").read_text())
    assert m2["backends"]["web"]["mode"] == "replay" and m2["backends"]["web"]["replayed_from"].startswith(str(run1))


@pytest.mark.slow
def test_replay_with_different_model_replies_fails_the_task_clearly(tmp_path: Path, miniweb: Path) -> None:
    run1 = tmp_path / "r1"
    p = _cli("run", "visbrowse-bench", "--data", str(miniweb), "--model", "reference", "--limit", "1", "--out",
             str(run1), "--no-report", env=_env(tmp_path))
    assert p.returncode == 0, p.stderr
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"steps": [{"text": "search", "tool_calls": [
        {"name": "text_search", "arguments": {"query": "never recorded"}}]}, {"text": "<answer>x</answer>"}]}))
    p = _cli("run", "visbrowse-bench", "--data", str(miniweb), "--model", "mock/m", "--limit", "1", "--out",
             str(tmp_path / "r2"), "--web", f"replay={run1}", "--no-report", "--no-score",
             env=_env(tmp_path, TOOLSIGHT_SCRIPT=str(script)))
    rec = _records(tmp_path / "r2")[0]
    assert rec["error"] and "has no recorded text_search call" in rec["error"], p.stderr


@pytest.mark.slow
@pytest.mark.parametrize("loop", ["official", "toolsight"])
def test_generated_miniweb_is_solved_by_the_reference_in_both_loops(tmp_path: Path, loop: str) -> None:
    data = tmp_path / "mw"
    p = _cli("generate", "browse", "--n", "8", "--seed", "21", "--out", str(data), env=_env(tmp_path))
    assert p.returncode == 0, p.stderr
    run = tmp_path / "run"
    p = _cli("run", "visbrowse-bench", "--data", str(data), "--model", "reference", "--cap", f"loop={loop}",
             "--out", str(run), "--no-report", env=_env(tmp_path))
    assert p.returncode == 0, p.stderr
    recs = _records(run)
    assert len(recs) == 8
    assert all(r["error"] is None and r["score"]["passed"] for r in recs), [r["score"] for r in recs]
    kinds = {r["tags"]["kind"] for r in recs}
    assert kinds == {"year", "origin", "sibling", "title_year"}
    names = {c["name"] for r in recs for c in r["trajectory"]["tool_calls"]}
    assert names == {"image_crop", "reverse_image_search", "visit", "text_search", "image_search"}
    assert json.loads((run / "manifest.json").read_text())["backends"]["web"]["mode"] == "offline"
