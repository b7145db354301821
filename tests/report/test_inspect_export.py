"""`toolsight export RUN --format inspect` (issue 28): a real run — the OpenAI SDK talking to the scripted
server, a crop tool call on a real PNG, a task whose model call fails — written as an Inspect AI `.eval` log
and read back with Inspect's own reader: the samples, the images (the very bytes of the run's artifacts),
the tool calls, the scores and the token usage are the run's. Inspect's viewer bundler lists the log, and
without inspect_ai installed the command says which extra to install."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, read_eval_log, resolve_sample_attachments
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ContentImage

from clikit import assert_one_error_line, dataset, lines, records, ts
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer

SCRIPT = {"steps": [
    {"tool_calls": [{"name": "crop", "arguments": {"image": "$prev", "bbox": [0, 0, 0.5, 0.5]}}],
     "input_tokens": 120, "output_tokens": 7},
    {"text": "<answer>A</answer>", "input_tokens": 300, "output_tokens": 5},
]}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 choice tasks (gold A, B, A), each: crop, then answer A — two correct, one wrong."""
    root = tmp_path_factory.mktemp("insp")
    ds = dataset(root / "ds", 3)
    with ScriptedServer(Script.model_validate(SCRIPT), record=False) as srv:
        r = ts("run", str(ds), "-m", "openai/scripted", "--base-url", srv.openai_base_url, "--setting", "crop",
               "--out", str(root / "run"), "--no-report", "--concurrency", "1")
    assert r.returncode == 0, r.stderr
    return root / "run"


@pytest.fixture(scope="module")
def log(run: Path) -> EvalLog:
    r = ts("export", str(run), "--format", "inspect")
    assert r.returncode == 0, r.stderr
    written = [Path(x.removeprefix("wrote ")) for x in lines(r.stdout)]
    assert len(written) == 1 and written[0].parent == run / "inspect" and written[0].suffix == ".eval", r.stdout
    return read_eval_log(str(written[0]))


def _bytes(img: ContentImage) -> bytes:
    head, data = img.image.split(",", 1)
    assert head == "data:image/png;base64", head
    return base64.b64decode(data)


def _images(content: Any) -> list[ContentImage]:
    return [c for c in content if isinstance(c, ContentImage)] if isinstance(content, list) else []


def test_samples_spec_and_scores_are_the_runs(run: Path, log: EvalLog) -> None:
    recs = {r["task_id"]: r for r in records(run)}
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert log.status == "success"
    assert log.eval.model == "openai/scripted" and log.eval.task == f"{run.parent.joinpath('ds').name}/crop"
    assert log.eval.run_id == manifest["run_id"] and log.eval.dataset.samples == 3
    assert log.samples is not None and sorted(s.id for s in log.samples) == sorted(recs)
    for s in log.samples:
        rec = recs[str(s.id)]
        assert [s.target] == rec["extra"]["gold"] == (["A"] if s.id in ("t0", "t2") else ["B"])
        assert s.scores is not None
        (score,) = s.scores.values()
        assert score.value == rec["score"]["value"] and score.answer == "A"
        assert s.output.completion == "<answer>A</answer>"
        assert s.metadata["category"] == rec["tags"]["category"]
    assert log.results is not None
    (ev,) = log.results.scores
    assert ev.metrics["mean"].value == pytest.approx(2 / 3) and ev.scored_samples == 3


def test_messages_carry_the_runs_images_and_tool_calls(run: Path, log: EvalLog) -> None:
    assert log.samples is not None
    sample = resolve_sample_attachments(next(s for s in log.samples if s.id == "t1"))  # images: stored once
    rec = next(r for r in records(run) if r["task_id"] == "t1")
    arts = {a["id"]: run / "artifacts" / "t1" / a["file"] for a in rec["trajectory"]["artifacts"]}
    (call,) = rec["trajectory"]["tool_calls"]
    crop_out = arts[call["artifacts"][0]].read_bytes()
    users = [m for m in sample.messages if isinstance(m, ChatMessageUser)]
    shown = [_bytes(i) for m in users for i in _images(m.content)]
    source = next(p for a, p in arts.items() if a not in call["artifacts"])
    assert shown[0] == source.read_bytes()  # the task's image, as the model was sent it
    assistant = next(m for m in sample.messages if isinstance(m, ChatMessageAssistant) and m.tool_calls)
    assert assistant.tool_calls is not None
    assert assistant.tool_calls[0].function == "crop" and assistant.tool_calls[0].arguments["bbox"] == [0, 0, 0.5, 0.5]
    tool = next(m for m in sample.messages if isinstance(m, ChatMessageTool))
    assert tool.tool_call_id == assistant.tool_calls[0].id and tool.error is None
    made = [_bytes(i) for m in sample.messages for i in _images(m.content)]
    assert crop_out in made and crop_out != source.read_bytes()  # the crop's output, not the input again


def test_model_usage_matches_the_records(run: Path, log: EvalLog) -> None:
    recs = {r["task_id"]: r["trajectory"]["usage"] for r in records(run)}
    assert log.samples is not None
    for s in log.samples:
        u = s.model_usage["openai/scripted"]
        assert (u.input_tokens, u.output_tokens) == (recs[str(s.id)]["input_tokens"], recs[str(s.id)]["output_tokens"])
        assert (u.input_tokens, u.output_tokens) == (420, 12)  # the script's two replies
    total = log.stats.model_usage["openai/scripted"]
    assert (total.input_tokens, total.output_tokens, total.total_tokens) == (1260, 36, 1296)


def test_a_task_that_failed_is_a_sample_with_its_error_and_no_score(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    with ScriptedServer(Script.model_validate({"steps": [{"fault": "status", "status": 400}]}), record=False) as srv:
        r = ts("run", str(ds), "-m", "openai/x", "--base-url", srv.openai_base_url, "--retries", "0",
               "--out", str(tmp_path / "run"), "--no-report")
    assert r.returncode == 3, r.stderr
    out = tmp_path / "x.eval"
    assert ts("export", str(tmp_path / "run"), "--out", str(out)).returncode == 0
    log = read_eval_log(str(out))
    errors = {r["task_id"]: r["error"] for r in records(tmp_path / "run")}
    assert log.samples is not None and len(log.samples) == 2
    for s in log.samples:
        assert s.error is not None and s.error.message == errors[str(s.id)] and s.scores is None
    assert log.results is not None and log.results.completed_samples == 0
    assert log.results.scores[0].metrics == {}


def test_inspects_viewer_bundle_lists_the_log(run: Path, log: EvalLog, tmp_path: Path) -> None:
    inspect = Path(sys.executable).with_name("inspect")
    r = subprocess.run([str(inspect), "view", "bundle", "--log-dir", str(run / "inspect"), "--output-dir",
                        str(tmp_path / "bundle")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    listing = json.loads((tmp_path / "bundle" / "logs" / "listing.json").read_text(encoding="utf-8"))
    (entry,) = listing.values()
    assert entry["task"] == log.eval.task and entry["status"] == "success"
    assert entry["primary_metric"]["value"] == pytest.approx(2 / 3)
    assert (tmp_path / "bundle" / "index.html").is_file()


def test_without_inspect_ai_one_line_names_the_extra(run: Path, tmp_path: Path) -> None:
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "inspect_ai.py").write_text("raise ImportError('hidden for this test')\n", encoding="utf-8")
    src = Path(__file__).resolve().parents[2] / "src"
    r = ts("export", str(run), "--out", str(tmp_path / "x.eval"), PYTHONPATH=f"{hide}:{src}")
    assert_one_error_line(r, 2, "inspect_ai", "pip install 'toolsight[inspect]'")
    assert not (tmp_path / "x.eval").exists()


@pytest.mark.parametrize(("args", "needles"), [
    (["--format", "xml"], ["--format 'xml'", "inspect, csv or parquet"]),
    (["--format", "csv", "--out", "x.parquet"], ["--out x.parquet", "ends in .csv"]),
])
def test_bad_flags_are_one_line(run: Path, args: list[str], needles: list[str]) -> None:
    assert_one_error_line(ts("export", str(run), *args), 2, *needles)


def test_a_path_that_is_not_a_folder_of_runs(tmp_path: Path) -> None:
    assert_one_error_line(ts("export", str(tmp_path / "nope")), 2, "nope: no such folder")
    assert_one_error_line(ts("export", str(tmp_path)), 2, "no runs in this folder")


CHROMIUM = "/usr/bin/chromium"


def test_inspects_own_viewer_shows_the_sample_with_its_images(run: Path, log: EvalLog, tmp_path: Path) -> None:
    """`inspect view bundle` (Inspect's static viewer) served on 127.0.0.1 and opened in headless Chromium:
    the log's page lists the run's samples, and a sample's messages show its images (decoded, not broken)."""
    import functools
    import http.server
    import os
    import threading

    if not Path(CHROMIUM).is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} not installed (apt-get install -y chromium)")
        print(f"SKIP: {CHROMIUM} not installed")
        pytest.skip(f"{CHROMIUM} not installed")
    from playwright.sync_api import sync_playwright

    bundle = tmp_path / "bundle"
    r = subprocess.run([str(Path(sys.executable).with_name("inspect")), "view", "bundle", "--log-dir",
                        str(run / "inspect"), "--output-dir", str(bundle)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(bundle)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                errors: list[str] = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(f"http://127.0.0.1:{srv.server_address[1]}/")
                page.click(f"text={log.eval.task}", timeout=60_000)
                for i in range(3):  # the samples' rows, by their prompts
                    page.locator(f"text=Question {i}: which colour is the square?").first.wait_for(timeout=60_000)
                page.click("text=Question 1: which colour is the square?")
                page.locator('img[src^="data:image/png"]').nth(1).wait_for(timeout=60_000)  # the page's CSP: no eval
                sizes = page.eval_on_selector_all('img[src^="data:image/png"]', "els => els.map(e => e.naturalWidth)")
                assert len(sizes) >= 2 and all(w > 0 for w in sizes), sizes  # the input and the crop, decoded
                if os.environ.get("TOOLSIGHT_SCREENSHOTS"):
                    page.screenshot(path=str(Path(os.environ["TOOLSIGHT_SCREENSHOTS"]) / "inspect-view-sample.png"))
                assert not errors, errors
            finally:
                browser.close()
    finally:
        srv.shutdown()


def test_scores_name_exports_a_rescoring_instead_of_the_records(run: Path, tmp_path: Path) -> None:
    lines_ = [{"task_id": "t0", "score": {"value": 0.25, "passed": False, "answer": "A", "scorer": "by-hand"}},
              {"task_id": "t1", "score": {"value": 1.0, "passed": True, "answer": "A", "scorer": "by-hand"}},
              {"task_id": "t2", "score": None, "error": "not scored"}]
    (run / "scores-hand.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines_), encoding="utf-8")
    try:
        r = ts("export", str(run), "--scores", "hand", "--out", str(tmp_path / "h.eval"))
        assert r.returncode == 0, r.stderr
        log = read_eval_log(str(tmp_path / "h.eval"))
        assert log.samples is not None
        got = {s.id: (s.scores or {}).get("by-hand") for s in log.samples}
        assert got["t0"] is not None and got["t0"].value == 0.25 and got["t1"] is not None and got["t1"].value == 1.0
        assert got["t2"] is None
        assert log.results is not None and log.results.scores[0].metrics["mean"].value == pytest.approx(0.625)
        missing = ts("export", str(run), "--scores", "nope", "--out", str(tmp_path / "n.eval"))
        assert_one_error_line(missing, 2, "no scores file", "scores-nope.jsonl")
    finally:
        (run / "scores-hand.jsonl").unlink()
