"""Batch mode for the raw calls official loops build themselves (docs/batch.md), as real subprocesses
with the OpenAI SDK talking to the scripted server's batch endpoints:

- TIR-Bench's hosted code interpreter (`--setting code`, an OpenAI model: one Responses API call per
  task) under plain `--batch`: one `/v1/responses` batch whose item bodies are the on-line bodies, the
  same records and scores as on-line, counted as batched (not "not batchable"); a failed item goes
  on-line; a run killed after submitting resumes by polling the same batch;
- the agent frameworks' official loop (PyVision's Chat Completions calls) under `--batch rounds`: every
  round of every task batched, with the on-line bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2ekit import dataset, kill_after_submit_then_resume, records, run

from toolsight.calls.batch_journal import read_journal
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import RecordedRequest

N = 4
FAST = ("--batch-idle", "0.3", "--batch-poll", "0.05")
HOSTED = {"text": "The image is rotated. The answer is A.", "input_tokens": 1200, "output_tokens": 40,
          "code_interpreter": [{"code": "from PIL import Image\nprint(Image.open('/mnt/data/x.png').size)",
                                "logs": "(64, 64)"}]}
FENCE = "```"
PYVISION = [{"text": f"Look closer.\n<code>\n{FENCE}python\nprint(image_clue_0.size)\n{FENCE}\n</code>",
             "input_tokens": 500, "output_tokens": 20},
            {"text": "Done.\n<answer>\n\\boxed{A}\n</answer>", "input_tokens": 700, "output_tokens": 10}]


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tir") / "gen"
    r = run("generate", "rotation_game", "--n", str(N), "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


def tir(srv: ScriptedServer, data: Path, out: Path, *extra: str, setting: str = "code",
        model: str = "openai/o3") -> list[str]:
    return ["run", "tir-bench", "--data", str(data), "--setting", setting, "-m", model,
            "--base-url", srv.openai_base_url, "--out", str(out), "--no-report", "--backoff-base", "0.01", *extra]


def sent(srv: ScriptedServer, path: str) -> list[RecordedRequest]:
    return [r for r in srv.requests if r.path.endswith(path)]


def key(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True)


def outcome(run_dir: Path) -> dict[str, Any]:
    """Per task: the responses, the score, the hosted runs and the tokens of each call."""
    return {x["task_id"]: ([t["response"] for t in x["trajectory"]["turns"]], x["score"]["value"],
                           [(c["name"], c["text"]) for c in x["trajectory"]["tool_calls"]],
                           [(c["input_tokens"], c["output_tokens"], c["usage_missing"])
                            for c in x["trajectory"]["model_call_log"]])
            for x in records(run_dir)}


def batch_flags(run_dir: Path) -> list[list[bool]]:
    return [[c["batch"] for c in x["trajectory"]["model_call_log"]] for x in records(run_dir)]


def test_hosted_interpreter_batches_as_responses_items_and_scores_as_on_line(gen: Path, tmp_path: Path) -> None:
    script = Script.model_validate({"steps": [HOSTED], "batch": {"polls": 2}})
    with ScriptedServer(script) as srv:
        r_on = run(*tir(srv, gen, tmp_path / "online", "--no-cache"))
        online = sent(srv, "/responses")
    assert r_on.returncode in (0, 3), r_on.stderr
    with ScriptedServer(script) as srv:
        r = run(*tir(srv, gen, tmp_path / "batched", "--batch", *FAST))
        batched = sent(srv, "/responses")
        batches = list(srv.batches.batches.values())
    assert r.returncode in (0, 3), r.stderr
    # one Responses batch holding every task's call; nothing went on-line
    assert len(batches) == 1 and batches[0].extra["endpoint"] == "/v1/responses" and len(batches[0].items) == N
    assert len(batched) == N and all(q.batch is not None for q in batched)
    assert len(online) == N and all(q.batch is None for q in online)
    # the batched bodies are the on-line bodies: the hosted tool, the prompt and its image, no change
    assert sorted(map(key, (q.body for q in batched))) == sorted(map(key, (q.body for q in online)))
    assert all(q.body["tools"] == [{"type": "code_interpreter", "container": {"type": "auto"}}] for q in batched)
    on, ba = outcome(tmp_path / "online"), outcome(tmp_path / "batched")
    assert len(ba) == N and ba == on
    assert all(resp == [HOSTED["text"]] and runs == [("code_interpreter", "(64, 64)")] and calls == [(1200, 40, False)]
               for resp, _, runs, calls in ba.values())
    assert batch_flags(tmp_path / "batched") == [[True]] * N and batch_flags(tmp_path / "online") == [[False]] * N
    out = r.stdout + r.stderr
    assert f"batch mode (model: {N} call(s) batched in 1 new batch(es))" in out
    assert "not batchable" not in out
    # the journal's items carry the Responses label, not the model's Chat Completions one
    (sub,) = [e for e in read_journal(tmp_path / "batched") if e["kind"] == "submit"]
    assert sub["label"] == "m_responses" and all(i["custom_id"].startswith("m_responses-") for i in sub["items"])


def test_failed_hosted_items_go_on_line(gen: Path, tmp_path: Path) -> None:
    script = Script.model_validate({"steps": [HOSTED], "batch": {"fail_every": 2, "fail_status": 500}})
    with ScriptedServer(script) as srv:
        r = run(*tir(srv, gen, tmp_path / "run", "--batch", "--batch-retry", "online", *FAST))
        calls = sent(srv, "/responses")
        (batch,) = srv.batches.batches.values()
    assert r.returncode in (0, 3), r.stderr
    in_batch = [q for q in calls if q.batch is not None]
    on_line = [q for q in calls if q.batch is None]
    assert len(in_batch) == N // 2 and len(on_line) == N // 2  # every 2nd item failed: asked again on-line
    failed = {key(i.body) for i in batch.items} - {key(q.body) for q in in_batch}
    assert {key(q.body) for q in on_line} == failed  # the failed items' own bodies, sent on-line
    recs = records(tmp_path / "run")
    assert len(recs) == N and all(x["error"] is None for x in recs)
    assert all([t["response"] for t in x["trajectory"]["turns"]] == [HOSTED["text"]] for x in recs)
    assert sorted(f for flags in batch_flags(tmp_path / "run") for f in flags) == [False] * (N // 2) + [True] * (N // 2)
    assert f"model: {N // 2} call(s) batched in 1 new batch(es), {N // 2} sent on-line after their batch item failed" \
        in r.stdout + r.stderr


def test_a_hosted_run_killed_after_submitting_resumes_by_polling_the_same_batch(gen: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with ScriptedServer(Script.model_validate({"steps": [HOSTED], "batch": {"hold_after": 0}})) as srv:
        args = tir(srv, gen, out, "--batch", *FAST)
        r, submissions = kill_after_submit_then_resume(srv, args, out)
        batches = list(srv.batches.batches.values())
        calls = sent(srv, "/responses")
    assert r.returncode in (0, 3), r.stderr
    assert len(batches) == 1 and len(batches[0].items) == N and submissions == 1  # polled again, never re-sent
    assert len(calls) == N and all(q.batch is not None for q in calls)
    recs = records(out)
    assert len(recs) == N and all(x["error"] is None for x in recs)
    assert batch_flags(out) == [[True]] * N
    assert "1 resumed" in r.stdout + r.stderr


def test_a_tool_loop_setting_still_needs_batch_rounds(gen: Path, tmp_path: Path) -> None:
    """The same `code` setting with a model that runs TIR-Bench's own interpreter loop is refused under
    plain `--batch` (each round would wait), with one message naming the way out."""
    with ScriptedServer(Script.model_validate({"steps": [HOSTED], "batch": {}})) as srv:
        r = run(*tir(srv, gen, tmp_path / "run", "--batch", *FAST, model="openai/open-vlm"))
        ran = list(srv.requests)
    assert r.returncode != 0 and not ran
    assert "--batch rounds" in r.stderr and "Traceback" not in r.stderr


def test_pyvision_official_loop_batches_its_rounds(tmp_path: Path) -> None:
    # tasks whose prompts carry a `[task:ID]` marker: a batch item has no task header, and the
    # scripted server plays each task its own steps by that marker
    data = dataset(tmp_path / "data", 2)
    script = Script.model_validate({"steps": PYVISION, "batch": {}})
    with ScriptedServer(script) as srv:
        r_on = run(*tir(srv, data, tmp_path / "online", "--no-score", "--no-cache", setting="pyvision",
                        model="openai/gpt-4.1"))
        online = sent(srv, "/chat/completions")
    assert r_on.returncode in (0, 3), r_on.stderr
    with ScriptedServer(script) as srv:
        plain = run(*tir(srv, data, tmp_path / "plain", "--no-score", "--batch", *FAST, setting="pyvision",
                         model="openai/gpt-4.1"))
        r = run(*tir(srv, data, tmp_path / "batched", "--no-score", "--batch", "rounds", *FAST, setting="pyvision",
                     model="openai/gpt-4.1"))
        batched = sent(srv, "/chat/completions")
        batches = list(srv.batches.batches.values())
    assert plain.returncode != 0 and "--batch rounds" in plain.stderr  # a multi-round loop: plain --batch refused
    assert r.returncode in (0, 3), r.stderr
    # two rounds for each of two tasks, every one through a batch (a round waits for its batch)
    assert len(batched) == 4 and all(q.batch is not None for q in batched)
    assert len(batches) >= 2 and sum(len(b.items) for b in batches) == 4
    assert all(b.extra["endpoint"] == "/v1/chat/completions" for b in batches)
    # the driver's own bodies, as the on-line official loop sends them (not streamed)
    assert len(online) == 4 and all("stream" not in q.body for q in online)
    assert sorted(map(key, (q.body for q in batched))) == sorted(map(key, (q.body for q in online)))
    assert batched[-1].body["stop"] == ["</code>"]
    recs = records(tmp_path / "batched")
    assert len(recs) == 2 and all(x["error"] is None for x in recs)
    assert [[t["answer"] for t in x["trajectory"]["turns"]] for x in recs] == \
        [[t["answer"] for t in x["trajectory"]["turns"]] for x in records(tmp_path / "online")]
    assert batch_flags(tmp_path / "batched") == [[True, True]] * 2
    assert all(x["trajectory"]["tool_calls"][0]["name"] == "pyvision_python" for x in recs)
    out = r.stdout + r.stderr
    assert "model: 4 call(s) batched in" in out and "not batchable" not in out
