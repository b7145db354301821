"""Batch mode for VTC-Bench's official loop (`--setting base`, one raw Chat Completions call per task):
`toolsight run vtc-bench … --batch` as a real subprocess, the OpenAI SDK talking to the scripted
server's batch endpoints, compared with an on-line run of the same generated set — the same records
and scores, the batched bodies equal to the on-line (streamed) bodies without `stream`/`stream_options`,
and the calls counted as batched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2ekit import kill_after_submit_then_resume, records, run

from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import RecordedRequest

N = 4
FAST = ("--batch-idle", "0.3", "--batch-poll", "0.05")
STEP = {"reasoning": "Counting the dark shapes one by one.", "text": "There are 11. <answer>D</answer>",
        "input_tokens": 900, "output_tokens": 30}


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vtc") / "gen"
    r = run("generate", "vtc-count_objects", "--n", str(N), "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


def vtc(srv: ScriptedServer, data: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "vtc-bench", "--data", str(data), "--setting", "base", "-m", "openai/gpt-4.1",
            "--base-url", srv.openai_base_url, "--out", str(out), "--no-report", "--backoff-base", "0.01", *extra]


def completions(srv: ScriptedServer) -> list[RecordedRequest]:
    return [r for r in srv.requests if r.path.endswith("/chat/completions")]


def outcome(run_dir: Path) -> dict[str, Any]:
    """Per task: the responses, the score and the tokens of each call."""
    return {x["task_id"]: ([t["response"] for t in x["trajectory"]["turns"]], x["score"]["value"],
                           x["score"]["answer"], [(c["input_tokens"], c["output_tokens"], c["usage_missing"])
                                                  for c in x["trajectory"]["model_call_log"]])
            for x in records(run_dir)}


def key(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True)


def test_base_setting_batches_every_call_and_scores_as_on_line(gen: Path, tmp_path: Path) -> None:
    script = Script.model_validate({"steps": [STEP], "batch": {"polls": 2}})
    with ScriptedServer(script) as srv:
        r_on = run(*vtc(srv, gen, tmp_path / "online", "--no-cache"))
        online = completions(srv)
    assert r_on.returncode in (0, 3), r_on.stderr
    with ScriptedServer(script) as srv:
        r = run(*vtc(srv, gen, tmp_path / "batched", "--batch", *FAST))
        batched = completions(srv)
        batches = list(srv.batches.batches.values())
    assert r.returncode in (0, 3), r.stderr
    # one batch with every task's call; nothing went on-line
    assert len(batches) == 1 and len(batches[0].items) == N
    assert len(batched) == N and all(q.batch is not None for q in batched)
    # the on-line run streamed; the batch sent the same bodies without stream/stream_options
    assert len(online) == N and all(q.batch is None and q.body["stream"] is True for q in online)
    assert all("stream" not in q.body and "stream_options" not in q.body for q in batched)
    unstreamed = [{k: v for k, v in q.body.items() if k not in ("stream", "stream_options")} for q in online]
    assert sorted(map(key, (q.body for q in batched))) == sorted(map(key, unstreamed))
    # every record as the on-line run has it, each call marked batch
    on, ba = outcome(tmp_path / "online"), outcome(tmp_path / "batched")
    assert len(ba) == N and ba == on
    assert all(resp == [STEP["text"]] and calls == [(900, 30, False)] for resp, _, _, calls in ba.values())
    recs = records(tmp_path / "batched")
    assert all([c["batch"] for c in x["trajectory"]["model_call_log"]] == [True] for x in recs)
    assert all([c["batch"] for c in x["trajectory"]["model_call_log"]] == [False] for x in records(tmp_path / "online"))
    out = r.stdout + r.stderr
    assert f"batch mode (model: {N} call(s) batched in 1 new batch(es))" in out
    assert "not batchable" not in out


def test_failed_items_go_on_line_streamed(gen: Path, tmp_path: Path) -> None:
    script = Script.model_validate({"steps": [STEP], "batch": {"fail_every": 2, "fail_status": 500}})
    with ScriptedServer(script) as srv:
        r = run(*vtc(srv, gen, tmp_path / "run", "--batch", "--batch-retry", "online", *FAST))
        sent = completions(srv)
    assert r.returncode in (0, 3), r.stderr
    in_batch = [q for q in sent if q.batch is not None]
    on_line = [q for q in sent if q.batch is None]
    assert len(in_batch) == N // 2 and len(on_line) == N // 2  # every 2nd item failed: sent again, streamed
    assert all(q.body["stream"] is True for q in on_line)
    recs = records(tmp_path / "run")
    assert len(recs) == N and all(x["error"] is None for x in recs)
    assert all([t["response"] for t in x["trajectory"]["turns"]] == [STEP["text"]] for x in recs)
    flags = sorted(c["batch"] for x in recs for c in x["trajectory"]["model_call_log"])
    assert flags == [False] * (N // 2) + [True] * (N // 2)
    assert f"model: {N // 2} call(s) batched in 1 new batch(es), {N // 2} sent on-line after their batch item failed" \
        in r.stdout + r.stderr


def test_a_tool_setting_batches_round_by_round(tmp_path: Path) -> None:
    """`--setting interface --batch rounds`: a tool call, then the answer — each call its own batch."""
    data = tmp_path / "gen1"
    assert run("generate", "vtc-count_objects", "--n", "1", "--out", str(data)).returncode == 0
    image = json.loads((data / "tasks.jsonl").read_text().splitlines()[0])["turns"][0]["images"][0]["path"]
    script = Script.model_validate({"steps": [
        {"text": "Let me threshold it.", "tool_calls": [
            {"name": "opencv_threshold", "arguments": {"image": image, "param": {"mode": "otsu"}}}]},
        {"text": "<answer>D</answer>"}], "batch": {}})
    with ScriptedServer(script) as srv:
        r = run("run", "vtc-bench", "--data", str(data), "--setting", "interface", "-m", "openai/gpt-4.1",
                "--base-url", srv.openai_base_url, "--out", str(tmp_path / "run"), "--no-report",
                "--batch", "rounds", *FAST)
        sent = completions(srv)
        batches = list(srv.batches.batches.values())
    assert r.returncode in (0, 3), r.stderr
    assert len(sent) == 2 and all(q.batch is not None and "stream" not in q.body for q in sent)
    assert [len(b.items) for b in batches] == [1, 1]
    assert sent[1].body["messages"][-1]["role"] == "tool"  # the second call carries the tool's result
    (rec,) = records(tmp_path / "run")
    assert [c["batch"] for c in rec["trajectory"]["model_call_log"]] == [True, True]
    assert rec["trajectory"]["tool_calls"][0]["name"] == "opencv_threshold" and rec["score"]["value"] == 1.0
    assert "model: 2 call(s) batched in 2 new batch(es)" in r.stdout + r.stderr


def test_a_run_killed_after_submitting_resumes_by_polling_the_same_batch(gen: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with ScriptedServer(Script.model_validate({"steps": [STEP], "batch": {"hold_after": 0}})) as srv:
        args = vtc(srv, gen, out, "--batch", *FAST)
        r, submissions = kill_after_submit_then_resume(srv, args, out)
        batches = list(srv.batches.batches.values())
        sent = completions(srv)
    assert r.returncode in (0, 3), r.stderr
    assert len(batches) == 1 and len(batches[0].items) == N and submissions == 1  # polled again, never re-sent
    assert len(sent) == N and all(q.batch is not None for q in sent)
    recs = records(out)
    assert len(recs) == N and all(x["error"] is None for x in recs)
    assert all([c["batch"] for c in x["trajectory"]["model_call_log"]] == [True] for x in recs)
    assert "1 resumed" in r.stdout + r.stderr
