"""What a run and `toolsight score` say when the judge misbehaves (issue 26, the judge path): an
unparseable judge reply is never replayed from the cache, a judge on another endpoint is another
judge, score errors make exit 3, a judge outage keeps the model's work (scores pending, completed
by a resume without calling the model again), `score` stops cleanly on an outage and prints the
score table, and a resumed run's summary covers the whole run. The OpenAI SDK talks to scripted
servers on 127.0.0.1: one plays the model, others the judge."""

from __future__ import annotations

import json
from pathlib import Path

from clikit import dataset, lines, records, ts
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import ScriptedServer

MET = json.dumps({"explanation": "ok", "judge_result": "Met"})
NOT_MET = json.dumps({"explanation": "no", "judge_result": "Not Met"})


def _rubric_dataset(root: Path, n: int = 3) -> Path:
    """`n` tasks with one rubric each (the `rubric` scorer asks a judge per rubric)."""
    dataset(root, n)
    rows = [json.loads(x) for x in (root / "tasks.jsonl").read_text().splitlines()]
    for r in rows:
        r["turns"][0]["rubrics"] = [{"id": "r1", "text": "names the colour", "weight": 5}]
    (root / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _server(*steps: Step) -> ScriptedServer:
    return ScriptedServer(Script(steps=list(steps)))


def _model_run(tmp: Path, n: int = 3) -> Path:
    """A finished run (not scored) of `n` rubric tasks."""
    ds = _rubric_dataset(tmp / "ds", n)
    run = tmp / "run"
    with _server(Step(text="<answer>A</answer> it is blue")) as model:
        r = ts("run", str(ds), "-m", "openai/m", "--base-url", model.openai_base_url, "--out", str(run),
               "--no-score", "--no-report")
    assert r.returncode == 0, r.stderr
    return run


def _score(run: Path, judge: ScriptedServer, *extra: str) -> tuple[int, str, str]:
    r = ts("score", str(run), "--scorer", "rubric", "--mode", "corrected", "--judge", "openai/j",
           "--judge-base-url", judge.openai_base_url, "--retries", "0", *extra)
    return r.returncode, r.stdout, r.stderr


def test_an_unparseable_judge_reply_is_never_replayed_and_another_endpoint_is_another_judge(tmp_path: Path) -> None:
    run = _model_run(tmp_path)
    with _server(Step(text="I cannot say")) as bad:
        code, out, err = _score(run, bad)
        assert code == 3 and "3 score error(s)" in out, (out, err)
        asked = len(bad.requests)
        assert asked >= 3
        code, out, _ = _score(run, bad, "--name", "again")
        assert code == 3 and len(bad.requests) == 2 * asked  # asked again: nothing was cached
    with _server(Step(text=MET)) as good:
        code, out, err = _score(run, good, "--name", "good")
        assert code == 0 and "3 scored, 0 score error(s)" in out, (out, err)
        assert len(good.requests) == 3  # the same judge name on another endpoint: not the bad replies
        assert "| Model | Setting |" in out  # the score table is printed
        code, out, _ = _score(run, good, "--name", "cached")
        assert code == 0 and len(good.requests) == 3  # a good reply is replayed from the cache
        code, out, _ = _score(run, good, "--name", "fresh", "--no-cache")
        assert code == 0 and len(good.requests) == 6
    with _server(Step(text=NOT_MET)) as strict:  # the same judge name on a third endpoint: asked, not replayed
        code, out, err = _score(run, strict, "--name", "strict")
        assert code == 0 and len(strict.requests) == 3, (out, err)
    met = [json.loads(x)["score"]["passed"] for x in (run / "scores-good.jsonl").read_text().splitlines()]
    unmet = [json.loads(x)["score"]["passed"] for x in (run / "scores-strict.jsonl").read_text().splitlines()]
    assert met == [True] * 3 and unmet == [False] * 3


def test_score_stops_cleanly_when_the_judge_stays_down(tmp_path: Path) -> None:
    run = _model_run(tmp_path, n=2)
    with _server(Step(fault="status", status=500)) as down:
        code, out, err = _score(run, down, "--outage-timeout", "1", "--backoff-base", "0.05")
    assert code == 4, (out, err)
    assert "Traceback" not in err and "never retrieved" not in err
    (line,) = [x for x in lines(err) if x.startswith(("error", "stopped"))]
    assert "judge endpoint" in line and "model endpoint" not in line
    assert not list(run.glob("scores-*"))  # no half file, no temporary file left behind


def test_score_errors_make_exit_3_and_a_judge_outage_keeps_the_models_work(tmp_path: Path) -> None:
    ds = tmp_path / "vtb"
    assert ts("generate", "vtb", "--n", "2", "--seed", "4", "--out", str(ds)).returncode == 0
    with _server(Step(text="The answer is 16.")) as model:
        base = ["run", "visualtoolbench", "--data", str(ds), "--setting", "no-tools", "-m", "openai/m",
                "--base-url", model.openai_base_url, "--judge", "openai/j", "--retries", "0", "--no-report"]
        with _server(Step(text="no idea")) as bad:  # every reply unparseable: every task a score error
            r = ts(*base, "--judge-base-url", bad.openai_base_url, "--out", str(tmp_path / "a"))
        assert r.returncode == 3, r.stderr
        assert "0 run error(s)" in r.stderr and "2 score error(s)" in r.stderr
        with _server(Step(fault="status", status=500)) as down:  # the judge never comes back
            r = ts(*base, "--judge-base-url", down.openai_base_url, "--out", str(tmp_path / "b"),
                   "--outage-timeout", "1", "--backoff-base", "0.05")
        assert r.returncode == 3, r.stderr
        recs = records(tmp_path / "b")
        assert len(recs) == 2 and all(x["score_pending"] and x["error"] is None and x["score"] is None for x in recs)
        assert all(x["trajectory"]["turns"] for x in recs)  # the model's answers are kept
        assert "2 score(s) pending" in r.stderr
        model_calls = len(model.requests)
        with _server(Step(text=MET)) as good:  # resumed: the pending scores are completed, the model not asked
            r = ts(*base, "--judge-base-url", good.openai_base_url, "--out", str(tmp_path / "b"), "--resume")
            assert r.returncode == 0, r.stderr
            assert len(good.requests) > 0 and len(model.requests) == model_calls
        last = {x["task_id"]: x for x in records(tmp_path / "b")}
        assert all(x["score"] is not None and not x.get("score_pending") for x in last.values())
        assert "2 pending score(s) completed" in r.stderr


def test_a_resumed_runs_summary_covers_the_whole_run(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 4)  # gold A, B, A, B
    with _server(Step(text="<answer>A</answer>")) as model:
        base = ["run", str(ds), "-m", "openai/m", "--base-url", model.openai_base_url, "--out", str(tmp_path / "r"),
                "--no-report"]
        first = ts(*base, "--limit", "1")  # t0 right
        assert first.returncode == 0 and "accuracy 100.0% over 1 scored" in first.stderr
        again = ts(*base, "--resume")  # t1 wrong, t2 right, t3 wrong
    assert again.returncode == 0, again.stderr
    assert "3 task(s) run, 1 already finished" in again.stderr
    assert "accuracy 50.0% over 4 scored (the whole run)" in again.stderr
