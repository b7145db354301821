"""Batch mode end to end: `toolsight run phystoolbench … --batch` and `toolsight score RUN --judge …
--judge-batch` as real subprocesses, each provider's official SDK talking to the scripted server's
batch endpoints on 127.0.0.1 (which plays every batch item on its on-line endpoint and records it).

What is checked comes from the server's record and the run directory: how many batches were
submitted, which requests went on-line, the request bodies, the journal, the records — including a
run killed (SIGKILL) between submitting its batch and collecting it, then resumed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2ekit import kill_when, records, run

from toolsight.calls.batch_journal import BATCHES, read_journal
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import RecordedRequest

#: the providers whose batch client is in (models/batch/)
PROVIDERS = ["openai", "anthropic", "google"]
N = 4
FAST = ("--batch-idle", "0.3", "--batch-poll", "0.05")
ONLINE_PATHS = ("/chat/completions", "/messages", ":generateContent")


@pytest.fixture(scope="module")
def ptb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from toolsight.benchmarks.phystoolbench.generate import generate_phystool

    root = tmp_path_factory.mktemp("ptb")
    generate_phystool(N, 7, root)
    return root


def script(**batch: Any) -> Script:
    return Script.model_validate({"steps": [{"text": "Object 1 holds the papers down. Answer: 1"}], "batch": batch})


def base_url(provider: str, srv: ScriptedServer) -> str:
    return srv.openai_base_url if provider == "openai" else srv.base_url


def ptb_run(provider: str, srv: ScriptedServer, data: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "phystoolbench", "--data", str(data), "--setting", "cot", "-m", f"{provider}/test-model",
            "--base-url", base_url(provider, srv), "--out", str(out), "--no-report", "--backoff-base", "0.01", *extra]


def completions(srv: ScriptedServer) -> list[RecordedRequest]:
    return [r for r in srv.requests if r.path.endswith(ONLINE_PATHS)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batched_run_sends_every_call_in_one_batch(provider: str, ptb: Path, tmp_path: Path) -> None:
    with ScriptedServer(script(polls=2)) as srv:
        r = run(*ptb_run(provider, srv, ptb, tmp_path / "run", "--batch", *FAST))
        sent = completions(srv)
        batches = list(srv.batches.batches.values())
    assert r.returncode in (0, 3), r.stderr
    assert len(batches) == 1 and len(batches[0].items) == N
    assert len(sent) == N and all(q.batch is not None for q in sent)  # nothing went on-line
    recs = records(tmp_path / "run")
    assert len(recs) == N and all(x["error"] is None for x in recs)
    assert all([c["batch"] for c in x["trajectory"]["model_call_log"]] == [True] for x in recs)
    assert all([t["response"] for t in x["trajectory"]["turns"]] == ["Object 1 holds the papers down. Answer: 1"]
               for x in recs)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["options"]["batch"] == "calls"
    assert f"batch mode (model: {N} call(s) batched in 1 new batch(es))" in r.stdout + r.stderr
    kinds = [e["kind"] for e in read_journal(tmp_path / "run")]
    assert kinds == ["submit", "batch", *["result"] * N, "closed"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batched_bodies_equal_the_online_bodies(provider: str, ptb: Path, tmp_path: Path) -> None:
    with ScriptedServer(script()) as srv:
        r = run(*ptb_run(provider, srv, ptb, tmp_path / "online", "--no-cache"))
        online = completions(srv)
    assert r.returncode in (0, 3), r.stderr
    with ScriptedServer(script()) as srv:
        r = run(*ptb_run(provider, srv, ptb, tmp_path / "batched", "--batch", *FAST))
        batched = completions(srv)
    assert r.returncode in (0, 3), r.stderr
    assert all(q.batch is None for q in online) and all(q.batch is not None for q in batched)

    def key(body: dict[str, Any]) -> str:
        return json.dumps(body, sort_keys=True)

    assert len(online) == N
    assert sorted(map(key, (q.body for q in batched))) == sorted(map(key, (q.body for q in online)))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_failed_and_expired_items_go_on_line_and_good_results_are_kept(provider: str, ptb: Path,
                                                                        tmp_path: Path) -> None:
    # item 2 fails; the batch expires after running 3 items, so item 4 never runs
    with ScriptedServer(script(fail_every=2, expire_after=3, fail_status=500)) as srv:
        r = run(*ptb_run(provider, srv, ptb, tmp_path / "run", "--batch", "--batch-retry", "online", *FAST))
        sent = completions(srv)
    assert r.returncode in (0, 3), r.stderr
    in_batch = [q for q in sent if q.batch is not None]
    on_line = [q for q in sent if q.batch is None]
    assert len(in_batch) == 2 and len(on_line) == 2  # items 1 and 3 kept; 2 and 4 sent again on-line
    recs = records(tmp_path / "run")
    assert len(recs) == N and all(x["error"] is None for x in recs)
    flags = sorted(c["batch"] for x in recs for c in x["trajectory"]["model_call_log"])
    assert flags == [False, False, True, True]
    out = r.stdout + r.stderr
    assert "model: 2 call(s) batched in 1 new batch(es), 2 sent on-line after their batch item failed (1 expired)" in out
    results = [e for e in read_journal(tmp_path / "run") if e["kind"] == "result"]
    assert sum(e["reply"] is not None for e in results) == 2 and sum(e["expired"] for e in results) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_failed_and_expired_items_are_asked_once_more_in_a_new_batch_then_on_line(provider: str, ptb: Path,
                                                                               tmp_path: Path) -> None:
    # batch 1: item 2 fails (HTTP 500), item 4 expires; batch 2 holds both again, and its 2nd item fails
    with ScriptedServer(script(fail_every=2, expire_after=3, fail_status=500)) as srv:
        r = run(*ptb_run(provider, srv, ptb, tmp_path / "run", "--batch", *FAST))
        sent = completions(srv)
        sizes = [len(b.items) for b in srv.batches.batches.values()]
    assert r.returncode in (0, 3), r.stderr
    assert sizes == [N, 2]
    assert len([q for q in sent if q.batch is not None]) == 3 and len([q for q in sent if q.batch is None]) == 1
    recs = records(tmp_path / "run")
    assert len(recs) == N and all(x["error"] is None for x in recs)
    assert sorted(c["batch"] for x in recs for c in x["trajectory"]["model_call_log"]) == [False, True, True, True]
    assert ("model: 3 call(s) batched in 2 new batch(es), 2 asked again in a new batch after their item failed or "
            "expired, 1 sent on-line after their batch item failed)") in r.stdout + r.stderr
    journal = read_journal(tmp_path / "run")
    retried = [i["custom_id"] for e in journal if e["kind"] == "submit" for i in e["items"]][N:]
    assert len(retried) == 2 and all(c.endswith("-r") for c in retried)
    first = {e["custom_id"]: e for e in journal if e["kind"] == "result" and not e["custom_id"].endswith("-r")}
    assert sorted((e["expired"], e["retryable"]) for e in first.values() if e["reply"] is None) == [
        (False, True), (True, False)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_item_that_failed_with_a_bad_request_goes_on_line_at_once(provider: str, ptb: Path, tmp_path: Path) -> None:
    with ScriptedServer(script(fail_every=2, fail_status=400)) as srv:  # a 400 would fail again in a new batch
        r = run(*ptb_run(provider, srv, ptb, tmp_path / "run", "--batch", *FAST))
        sent = completions(srv)
        n_batches = len(srv.batches.batches)
    assert r.returncode in (0, 3), r.stderr
    assert n_batches == 1 and len([q for q in sent if q.batch is None]) == 2
    assert "model: 2 call(s) batched in 1 new batch(es), 2 sent on-line after their batch item failed" in r.stdout + r.stderr
    assert len(records(tmp_path / "run")) == N


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_run_killed_before_its_second_batch_is_collected_resumes_it(provider: str, ptb: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    # batch 1 ends with items 2 and 4 failed (HTTP 500); batch 2 (their second try) stays in progress
    with ScriptedServer(script(fail_every=2, fail_status=500, hold_after=1)) as srv:
        args = ptb_run(provider, srv, ptb, out, "--batch", *FAST)
        kill_when(args, lambda: sum(e["kind"] == "batch" for e in read_journal(out)) == 2, "the second batch's id in the journal")
        tags = [e["tag"] for e in read_journal(out) if e["kind"] == "submit"]
        assert len(tags) == 2 and not any(e["kind"] == "result" and e["tag"] == tags[1] for e in read_journal(out))
        srv.script.batch.hold_after = None
        srv.script.batch.fail_every = 0
        r = run(*args, "--resume")
        sizes = [len(b.items) for b in srv.batches.batches.values()]
        second = srv.batches.submissions(tags[1])
        sent = completions(srv)
    assert r.returncode in (0, 3), r.stderr
    assert sizes == [N, 2] and second == 1  # the second batch polled again after the kill, never re-submitted
    assert len(sent) == N and all(q.batch is not None for q in sent)
    recs = records(out)
    assert len(recs) == N and all(x["error"] is None for x in recs)
    results = [e["custom_id"] for e in read_journal(out) if e["kind"] == "result"]
    assert len(results) == len(set(results)) == N + 2  # every result recorded once
    assert "1 resumed" in r.stdout + r.stderr


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_run_killed_after_submitting_resumes_by_polling_the_same_batch(provider: str, ptb: Path,
                                                                          tmp_path: Path) -> None:
    out = tmp_path / "run"
    with ScriptedServer(script(seconds=3.0)) as srv:
        args = ptb_run(provider, srv, ptb, out, "--batch", *FAST)
        kill_when(args, lambda: any(e["kind"] == "batch" for e in read_journal(out)), "the batch id in the journal")
        assert not any(e["kind"] == "result" for e in read_journal(out))  # submitted, not collected
        assert records(out) == []
        r = run(*args, "--resume")
        batches = list(srv.batches.batches.values())
        sent = completions(srv)
        tag = next(e["tag"] for e in read_journal(out) if e["kind"] == "submit")
        submissions = srv.batches.submissions(tag)
    assert r.returncode in (0, 3), r.stderr
    assert len(batches) == 1 and submissions == 1  # exactly one submission, polled again after the kill
    assert len(sent) == N and all(q.batch is not None for q in sent)
    recs = records(out)
    assert sorted(x["task_id"] for x in recs) == sorted({x["task_id"] for x in recs}) and len(recs) == N
    results = [e["custom_id"] for e in read_journal(out) if e["kind"] == "result"]
    assert len(results) == len(set(results)) == N  # every result recorded once
    assert "1 resumed" in r.stdout + r.stderr


def _choice_dataset(root: Path) -> Path:
    from enginekit import write_png

    write_png(root / "img.png")
    opts = {"A": "3", "B": "4", "C": "5", "D": "6"}
    with (root / "tasks.jsonl").open("w") as fh:
        for i in range(3):
            fh.write(json.dumps({"id": f"t{i}", "turns": [{"prompt": f"[task:t{i}] How many?", "answer": "A",
                                 "options": opts, "answer_type": "choice", "images": [{"path": "img.png"}]}]}) + "\n")
    return root


@pytest.mark.parametrize("provider", PROVIDERS)
def test_score_with_judge_batch(provider: str, tmp_path: Path) -> None:
    ds = _choice_dataset(tmp_path / "ds")
    run_dir = tmp_path / "run"
    # answers the letter rule rejects ("Option A"), so every record goes to the judge
    with ScriptedServer(Script.model_validate({"steps": [{"text": "<answer>Option A</answer>"}]})) as srv:
        r = run("run", str(ds), "-m", "openai/m", "--base-url", srv.openai_base_url, "--out", str(run_dir),
                "--no-report")
    assert r.returncode == 0, r.stderr
    with ScriptedServer(Script.model_validate({"steps": [{"text": "A"}], "batch": {"polls": 1}})) as judge:
        r = run("score", str(run_dir), "--scorer", "vtc-bench", "--judge", f"{provider}/judge-1",
                "--judge-base-url", base_url(provider, judge), "--name", "batched", "--judge-batch", *FAST)
        sent = completions(judge)
        n_batches = len(judge.batches.batches)
    assert r.returncode == 0, r.stderr
    assert n_batches == 1 and len(sent) == 3 and all(q.batch is not None for q in sent)
    scores = [json.loads(x) for x in (run_dir / "scores-batched.jsonl").read_text().splitlines()]
    assert [s["score"]["value"] for s in scores] == [1.0, 1.0, 1.0]
    assert "batch mode (judge: 3 call(s) batched in 1 new batch(es))" in r.stdout
    meta = json.loads((run_dir / "scores-batched.meta.json").read_text())
    assert meta["batch"]["judge"]["batched"] == 3
    assert (run_dir / BATCHES).is_file()


def test_batch_refuses_a_model_without_a_batch_api_and_a_tool_loop(ptb: Path, tmp_path: Path) -> None:
    r = run("run", "phystoolbench", "--data", str(ptb), "--setting", "cot", "-m", "reference", "--out",
            str(tmp_path / "a"), "--batch")
    assert r.returncode == 2 and "--batch: reference has no batch API" in r.stderr and "Traceback" not in r.stderr
    with ScriptedServer(script()) as srv:
        r = run(*ptb_run("openai", srv, ptb, tmp_path / "b", "--batch"), "--setting", "tools")
        assert not srv.requests
    assert r.returncode == 2 and "pass --batch rounds" in r.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batch_rounds_sends_each_round_of_a_tool_loop_as_one_batch(provider: str, ptb: Path, tmp_path: Path) -> None:
    # every task: one crop call (round 1), then its answer once the tool result is back (round 2)
    loop = Script.model_validate({"rule": {"tool": "crop", "arguments": {}, "calls": 1, "answer": "Answer: 1"}})
    with ScriptedServer(loop) as srv:
        r = run(*ptb_run(provider, srv, ptb, tmp_path / "run", "--batch", "rounds", *FAST), "--setting", "tools")
        batches = list(srv.batches.batches.values())
        sent = completions(srv)
    assert r.returncode in (0, 3), r.stderr
    assert [len(b.items) for b in batches] == [N, N]  # round 1 of every task, then round 2 of every task
    assert len(sent) == 2 * N and all(q.batch is not None for q in sent)
    recs = records(tmp_path / "run")
    assert len(recs) == N and all(x["error"] is None for x in recs)
    assert all([c["batch"] for c in x["trajectory"]["model_call_log"]] == [True, True] for x in recs)
    assert all(len(x["trajectory"]["tool_calls"]) == 1 for x in recs)
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["options"]["batch"] == "rounds"


MET = json.dumps({"explanation": "ok", "judge_result": "Met"})


def _rubric_dataset(root: Path, n: int = 3) -> Path:
    from e2ekit import dataset

    dataset(root, n)
    rows = [json.loads(x) for x in (root / "tasks.jsonl").read_text().splitlines()]
    for r in rows:
        r["turns"][0]["rubrics"] = [{"id": "r1", "text": "names the colour", "weight": 5}]
    (root / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_judge_batch_during_a_run_and_an_unusable_judge_reply_is_asked_again(tmp_path: Path) -> None:
    ds = _rubric_dataset(tmp_path / "ds")
    run_dir = tmp_path / "run"
    with ScriptedServer(Script.model_validate({"steps": [{"text": "<answer>A</answer> it is red"}]})) as model, \
            ScriptedServer(Script.model_validate({"steps": [{"text": "I cannot say"}]})) as bad:
        r = run("run", str(ds), "-m", "openai/m", "--base-url", model.openai_base_url, "--out", str(run_dir),
                "--no-report", "--judge", "openai/j", "--judge-base-url", bad.openai_base_url, "--judge-batch",
                "--retries", "0", *FAST)
        asked_bad = completions(bad)
        model_sent = completions(model)
    assert r.returncode == 3, r.stderr  # every score is an error: the judge's replies do not parse
    assert model_sent and all(q.batch is None for q in model_sent)  # only the judge was batched
    assert asked_bad and all(q.batch is not None for q in asked_bad)
    assert "batch mode (judge: " in r.stdout + r.stderr
    forgotten = {e["custom_id"] for e in read_journal(run_dir) if e["kind"] == "forget"}
    assert forgotten  # the unusable replies are marked so
    with ScriptedServer(Script.model_validate({"steps": [{"text": MET}], "batch": {"polls": 1}})) as good:
        r = run("score", str(run_dir), "--scorer", "rubric", "--mode", "corrected", "--judge", "openai/j",
                "--judge-base-url", good.openai_base_url, "--name", "good", "--judge-batch", *FAST)
        asked_good = completions(good)
    assert r.returncode == 0, r.stdout + r.stderr
    # the same requests, asked again in a batch: the journal did not replay the unusable replies
    assert len(asked_good) == 3 and all(q.batch is not None for q in asked_good)
    scores = [json.loads(x)["score"]["passed"] for x in (run_dir / "scores-good.jsonl").read_text().splitlines()]
    assert scores == [True, True, True]


def test_rubric_judging_with_judge_batch_goes_as_one_batch(tmp_path: Path) -> None:
    """3 tasks × 6 rubrics = 18 judge calls, more than the rubric scorer's own limit of 8 at once: with
    `--judge-batch` they all wait together and go as one batch (one provider turnaround), not three."""
    ds = _choice_dataset(tmp_path / "ds")
    rubrics = [{"id": f"r{k}", "text": f"The answer names a letter ({k})", "weight": 1} for k in range(6)]
    lines = [json.loads(x) for x in (ds / "tasks.jsonl").read_text().splitlines()]
    for t in lines:
        t["turns"][0]["rubrics"] = rubrics
    (ds / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in lines))
    run_dir = tmp_path / "run"
    with ScriptedServer(Script.model_validate({"steps": [{"text": "<answer>A</answer>"}]})) as srv:
        r = run("run", str(ds), "-m", "openai/m", "--base-url", srv.openai_base_url, "--out", str(run_dir),
                "--no-report", "--no-score")
    assert r.returncode == 0, r.stderr
    met = json.dumps({"explanation": "it names one", "judge_result": "Met"})
    with ScriptedServer(Script.model_validate({"steps": [{"text": met}], "batch": {"polls": 1}})) as judge:
        r = run("score", str(run_dir), "--scorer", "rubric", "--mode", "corrected", "--judge", "openai/judge-1",
                "--judge-base-url", judge.openai_base_url, "--name", "rubrics", "--judge-batch", *FAST)
        sent = completions(judge)
        n_batches = len(judge.batches.batches)
    assert r.returncode == 0, r.stderr
    assert len(sent) == 18 and all(q.batch is not None for q in sent)
    assert n_batches == 1
    scores = [json.loads(x) for x in (run_dir / "scores-rubrics.jsonl").read_text().splitlines()]
    assert [s["score"]["value"] for s in scores] == [1.0, 1.0, 1.0]


def test_retry_with_batch_sends_the_failed_tasks_through_one_batch(tmp_path: Path) -> None:
    ds = _choice_dataset(tmp_path / "ds")
    run_dir = tmp_path / "run"
    fault = [{"fault": "status", "status": 500}]
    failing = Script.model_validate({"steps": [{"text": "<answer>A</answer>"}], "tasks": {"t0": fault, "t1": fault}})
    with ScriptedServer(failing) as srv:
        r = run("run", str(ds), "-m", "openai/m", "--base-url", srv.openai_base_url, "--out", str(run_dir),
                "--no-report", "--retries", "0")
    assert r.returncode == 3, r.stderr
    assert sorted(x["task_id"] for x in records(run_dir) if x["error"]) == ["t0", "t1"]
    with ScriptedServer(Script.model_validate({"steps": [{"text": "<answer>A</answer>"}], "batch": {"polls": 1}})) as srv:
        r = run("retry", str(run_dir), "--base-url", srv.openai_base_url, "--no-report", "--batch", *FAST)
        sent = completions(srv)
        sizes = [len(b.items) for b in srv.batches.batches.values()]
    assert r.returncode == 0, r.stdout + r.stderr
    assert sizes == [2] and len(sent) == 2 and all(q.batch is not None for q in sent)  # only t0 and t1, one batch
    latest = {x["task_id"]: x for x in records(run_dir)}
    assert all(x["error"] is None for x in latest.values()) and len(latest) == 3
    assert [c["batch"] for c in latest["t0"]["trajectory"]["model_call_log"]] == [True]
    assert "batch mode (model: 2 call(s) batched in 1 new batch(es))" in r.stdout + r.stderr


@pytest.mark.parametrize("mode,n_batches,on_line", [("batch", 2, 0), ("online", 1, 1)])
def test_score_judge_batch_retry(mode: str, n_batches: int, on_line: int, tmp_path: Path) -> None:
    ds = _choice_dataset(tmp_path / "ds")
    run_dir = tmp_path / "run"
    with ScriptedServer(Script.model_validate({"steps": [{"text": "<answer>Option A</answer>"}]})) as srv:
        assert run("run", str(ds), "-m", "openai/m", "--base-url", srv.openai_base_url, "--out", str(run_dir),
                   "--no-report").returncode == 0
    # the judge batch's 2nd item fails with HTTP 503
    judge_script = Script.model_validate({"steps": [{"text": "A"}], "batch": {"fail_every": 2, "fail_status": 503}})
    with ScriptedServer(judge_script) as judge:
        r = run("score", str(run_dir), "--scorer", "vtc-bench", "--judge", "openai/judge-1", "--judge-base-url",
                judge.openai_base_url, "--name", "s", "--judge-batch", "--batch-retry", mode, *FAST)
        sent = completions(judge)
        batches = len(judge.batches.batches)
    assert r.returncode == 0, r.stdout + r.stderr
    assert batches == n_batches and len([q for q in sent if q.batch is None]) == on_line
    meta = json.loads((run_dir / "scores-s.meta.json").read_text())
    assert meta["batch"]["judge"]["rebatched"] == (1 if mode == "batch" else 0)


def test_retry_without_batch_flags_keeps_the_runs_batch_options(tmp_path: Path) -> None:
    ds = _choice_dataset(tmp_path / "ds")
    run_dir = tmp_path / "run"
    fault = [{"fault": "status", "status": 500}]
    failing = Script.model_validate({"steps": [{"text": "<answer>A</answer>"}], "tasks": {"t0": fault, "t1": fault}})
    with ScriptedServer(failing) as srv:  # t0 and t1 fail in the batch, then on-line (no retries): run errors
        r = run("run", str(ds), "-m", "openai/m", "--base-url", srv.openai_base_url, "--out", str(run_dir),
                "--no-report", "--retries", "0", "--batch", "--batch-retry", "online", *FAST)
    assert r.returncode == 3, r.stderr
    with ScriptedServer(Script.model_validate({"steps": [{"text": "<answer>A</answer>"}]})) as srv:
        r = run("retry", str(run_dir), "--base-url", srv.openai_base_url, "--no-report")
        sent = completions(srv)
        n_batches = len(srv.batches.batches)
    assert r.returncode == 0, r.stdout + r.stderr
    # still batch mode with --batch-retry online: the journal holds both items' failures, so they go
    # on-line at once (under --batch-retry batch they would be asked again in a new batch)
    assert n_batches == 0 and len(sent) == 2 and all(q.batch is None for q in sent)
    assert "batch mode (model: 0 call(s) batched in 0 new batch(es), 2 sent on-line after their batch item failed)" \
        in r.stdout + r.stderr
