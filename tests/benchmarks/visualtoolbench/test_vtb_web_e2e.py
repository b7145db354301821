"""VisualToolBench's web tools end to end through the CLI, against the scripted model server on 127.0.0.1.

- `--setting strong --web offline=CORPUS`: the model is offered all six tools (the reference's descriptors
  in the official loop, toolsight's in the toolsight loop), searches, reads a page and looks up the weather;
  the tool messages are the reference's `str(dict)` observations (official) or toolsight's texts;
- record, then replay: the offline run replayed with its corpus deleted gives the same records, every web
  answer taken from the cassette; a `--web live` run against loopback stand-ins for Serper and Open-Meteo,
  replayed, sends those APIs not one request.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from vtbkit import png, write_converted
from webfakes import LIGHT_URL, FakeApis, write_corpus

from toolsight.benchmarks.visualtoolbench import prompts as P
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer
from toolsight.web.cassette import CASSETTE

PROMPT = "[task:web-1] When was the Gull Rock light first lit, and how warm did it get in Saltmere on 2020-08-14?"
ANSWER = "It was first lit in 1871; the high in Saltmere was 22.6 °C."
RUBRICS = {
    "r1": {"description": "Says 1871.", "weight": 5, "objective/subjective": "objective",
           "explicit/implicit": "explicit", "category": ["truthfulness"], "critical": "yes", "final_answer": "yes",
           "toolsight_check": {"number": 1871}},
    "r2": {"description": "Gives the high of 22.6 °C.", "weight": 3, "objective/subjective": "objective",
           "explicit/implicit": "explicit", "category": ["truthfulness"], "critical": "no", "final_answer": "yes",
           "toolsight_check": {"number": 22.6, "tol": 0.05}},
}


def _data(root: Path) -> Path:
    img = {"bytes": png(80), "path": None}
    row = {"id": "web-1", "turncase": "single-turn", "num_turns": 1, "prompt_category": "generalist",
           "eval_focus": "hybrid_tool_reasoning", "turn_prompts": [PROMPT], "turn_golden_answers": [ANSWER],
           "turn_tool_trajectories": [json.dumps("1. `web_search`: find the page.")],
           "rubrics_by_turn": [json.dumps(RUBRICS)], "images": [img], "images_by_turn": [[img]], "num_images": 1}
    return write_converted([row], root)


def _script(search: str, location: str, date: str) -> Script:
    return Script.model_validate({"steps": [{"text": "no script"}], "tasks": {"web-1": [
        {"tool_calls": [{"name": search, "arguments": {"query": "Gull Rock lighthouse"}, "id": "call_s"}]},
        {"tool_calls": [{"name": "browser_get_page_text", "arguments": {"url": LIGHT_URL}, "id": "call_p"},
                        {"name": "historical_weather", "arguments": {"location": location, "date": date},
                         "id": "call_w"}]},
        {"text": ANSWER},
    ]}})


def _ts(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    e["COLUMNS"] = "250"
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "toolsight", *args], capture_output=True, text=True, env=e,
                          timeout=300)


def _run(data: Path, out: Path, script: Script, *extra: str, env: dict[str, str] | None = None
         ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with ScriptedServer(script) as srv:
        r = _ts("run", "visualtoolbench", "--data", str(data), "--setting", "strong", "--model", "openai/vlm",
                "--base-url", srv.openai_base_url, "--out", str(out), "--no-report", *extra, env=env)
        bodies = [q.body for q in srv.requests]
    assert r.returncode == 0, r.stderr[-3000:]
    recs = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert len(recs) == 1
    return recs[0], bodies


def _calls(rec: dict[str, Any]) -> list[tuple[str, bool, str]]:
    return [(c["name"], c["ok"], c["text"]) for c in rec["trajectory"]["tool_calls"]]


def _cassette_backends(run: Path) -> set[str]:
    db = sqlite3.connect(run / CASSETTE)
    try:
        return {str(r[0]) for r in db.execute("SELECT DISTINCT backend FROM calls")}
    finally:
        db.close()


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("TOOLSIGHT_CACHE", str(tmp_path / "cache"))
    return _data(tmp_path / "vtb"), write_corpus(tmp_path / "corpus")


def test_official_loop_offline_then_replayed_without_the_corpus(setup: tuple[Path, Path], tmp_path: Path) -> None:
    data, corpus = setup
    rec, bodies = _run(data, tmp_path / "run1", _script("google_search", "Saltmere", "2020-08-14"),
                       "--web", f"offline={corpus}")
    assert len(bodies) == 3
    tools = [t["function"] for t in bodies[0]["tools"]]
    assert [t["name"] for t in tools] == list(P.OFFICIAL_TOOL_ORDER)  # all six, the reference's order and names
    by_name = {t["name"]: t for t in tools}
    assert by_name["google_search"]["description"] == P.SEARCH_DESCRIPTION
    assert by_name["google_search"]["parameters"] == P.SEARCH_PARAMETERS
    assert by_name["browser_get_page_text"]["description"] == P.PAGE_TEXT_DESCRIPTION
    assert by_name["historical_weather"]["parameters"] == P.WEATHER_PARAMETERS
    # tool results are the reference's str(dict) observations
    search_msg = bodies[1]["messages"][-1]
    assert search_msg["role"] == "tool" and search_msg["tool_call_id"] == "call_s"
    search = ast.literal_eval(search_msg["content"])
    assert search["status"] == "success" and search["results"][0]["url"] == LIGHT_URL
    page_msg, weather_msg = bodies[2]["messages"][-2:]
    page, weather = ast.literal_eval(page_msg["content"]), ast.literal_eval(weather_msg["content"])
    assert page["title"] == "Gull Rock Lighthouse" and "first lit in 1871" in page["text"]
    assert weather["temperature"]["max"] == "22.6°C" and weather["status"] == "success"
    assert rec["error"] is None and rec["score"]["passed"] is True and rec["score"]["value"] == 1.0
    assert [(n, ok) for n, ok, _ in _calls(rec)] == [("google_search", True), ("browser_get_page_text", True),
                                                    ("historical_weather", True)]
    web = json.loads((tmp_path / "run1" / "manifest.json").read_text())["backends"]["web"]
    assert web["mode"] == "offline" and web["backend"]["name"] == "corpus" and web["weather"]["name"] == "corpus"

    shutil.rmtree(corpus)  # the replay cannot read the corpus: every answer must come from the cassette
    rec2, _ = _run(data, tmp_path / "run2", _script("google_search", "Saltmere", "2020-08-14"),
                   "--web", f"replay={tmp_path / 'run1'}")
    assert _calls(rec2) == _calls(rec) and rec2["score"]["value"] == 1.0
    assert _cassette_backends(tmp_path / "run2") == {"replay"}
    assert _cassette_backends(tmp_path / "run1") == {"corpus"}
    web2 = json.loads((tmp_path / "run2" / "manifest.json").read_text())["backends"]["web"]
    assert web2["mode"] == "replay" and web2["weather"] is None


def test_toolsight_loop_offline_offers_toolsight_texts(setup: tuple[Path, Path], tmp_path: Path) -> None:
    data, corpus = setup
    rec, bodies = _run(data, tmp_path / "run", _script("web_search", "Saltmere", "2020-08-14"),
                       "--web", f"offline={corpus}", "--cap", "loop=toolsight")
    names = [t["function"]["name"] for t in bodies[0]["tools"]]
    assert sorted(names) == sorted(["python_image_processing", "python_interpreter", "calculator", "web_search",
                                    "browser_get_page_text", "historical_weather"])
    calls = _calls(rec)
    assert [(n, ok) for n, ok, _ in calls] == [("web_search", True), ("browser_get_page_text", True),
                                              ("historical_weather", True)]
    assert calls[0][2].startswith('Results for "Gull Rock lighthouse"')
    assert calls[1][2].startswith(f"Title: Gull Rock Lighthouse\nURL: {LIGHT_URL}\n")
    assert "Temperature (°C): max 22.6, min 14.7, mean 19.0" in calls[2][2]
    assert rec["score"]["passed"] is True


def test_live_run_replayed_sends_no_request(setup: tuple[Path, Path], tmp_path: Path) -> None:
    data, _ = setup
    script = _script("google_search", "New York, NY", "2021-07-04")
    with FakeApis() as fake:
        rec, _ = _run(data, tmp_path / "live", script, "--web", "live", env=fake.env())
        recorded = fake.paths()
        # one search, two geocoding requests and the archive; the page's `.test` host resolves nowhere, so the
        # live backend refuses it (a recorded failure, replayed as the same failure)
        assert recorded == ["/search", "/v1/search", "/v1/search", "/v1/archive"]
        calls = _calls(rec)
        assert ast.literal_eval(calls[0][2])["results"][0]["url"] == "https://www.lights.test/gull-rock"
        assert ast.literal_eval(calls[2][2])["temperature"]["max"] == "27.9°C"
        page = ast.literal_eval(calls[1][2])
        assert page["status"] == "error" and "could not resolve the host" in page["error"], page
        web = json.loads((tmp_path / "live" / "manifest.json").read_text())["backends"]["web"]
        assert web["mode"] == "live" and web["weather"]["archive_url"] == fake.base + "/v1/archive"

        rec2, _ = _run(data, tmp_path / "replayed", script, "--web", f"replay={tmp_path / 'live'}", env=fake.env())
        assert fake.paths() == recorded  # not one request on replay
    assert _calls(rec2) == calls
    assert _cassette_backends(tmp_path / "replayed") == {"replay"}


def test_official_loop_names_google_search_and_a_web_search_crash_is_an_error(
        setup: tuple[Path, Path], tmp_path: Path) -> None:
    """Issue 26 item 10: the official loop offers `google_search` (the driver's name), so the manifest and
    `list settings` say so; a model that calls the paper's `web_search` ends the task as the driver does
    (`Processing Error: 'web_search'`), and the summary counts that as a run error (exit 3), not "0 errors"."""
    data, corpus = setup
    listed = _ts("list", "settings", "visualtoolbench")
    strong = next(ln for ln in listed.stdout.splitlines() if ln.startswith("strong"))
    assert "google_search" in strong and "web_search" not in strong.replace("google_search", ""), strong

    out = tmp_path / "run"
    with ScriptedServer(_script("web_search", "Saltmere", "2020-08-14")) as srv:
        r = _ts("run", "visualtoolbench", "--data", str(data), "--setting", "strong", "--model", "openai/vlm",
                "--base-url", srv.openai_base_url, "--out", str(out), "--no-report", "--web", f"offline={corpus}")
        offered = [t["function"]["name"] for t in srv.requests[0].body["tools"]]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [t["name"] for t in manifest["tools"]] == offered == list(P.OFFICIAL_TOOL_ORDER)
    assert next(t for t in manifest["tools"] if t["name"] == "google_search")["description"] == P.SEARCH_DESCRIPTION
    (rec,) = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert rec["trajectory"]["turns"][0]["response"] == "Processing Error: 'web_search'"
    assert rec["trajectory"]["stop_reason"] == "error" and "'web_search'" in rec["trajectory"]["loop_error"]
    assert rec["trajectory"]["tool_calls"] == [] and rec["score"]["passed"] is False  # scored as the driver's
    text = r.stdout + r.stderr
    assert "1 run error(s) (official loop crash: 1)" in text and "0 tool call(s)" in text, text
    assert r.returncode == 3, text
