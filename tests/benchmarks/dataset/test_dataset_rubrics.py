"""A dataset folder's tasks that carry rubrics are judged by them when a judge is given — in `run --judge`
and in `score --judge` — through the real CLI against scripted OpenAI-compatible servers for the model
and the judge; without a judge they are matched as before and the record says the rubrics were not
judged (issue 26 item 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clikit import records, ts, write_png
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer

MET = json.dumps({"explanation": "the answer names the blue square", "judge_result": "Met"})


@pytest.fixture
def rubric_set(tmp_path: Path) -> Path:
    """t0: gold "A" and two rubrics; t1: gold "B", no rubrics (always matched)."""
    ds = tmp_path / "ds"
    write_png(ds / "images" / "pic.png")
    tasks = [
        {"id": "t0", "turns": [{"prompt": "Which colour is the square?", "images": [{"path": "images/pic.png"}],
                                "answer": "A", "rubrics": [{"id": "r1", "text": "Names the colour blue", "weight": 3},
                                                           {"id": "r2", "text": "Says it is a square", "weight": 1}]}]},
        {"id": "t1", "turns": [{"prompt": "Is there a square?", "images": [{"path": "images/pic.png"}],
                                "answer": "B"}]},
    ]
    (ds / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return ds


def _model() -> ScriptedServer:
    # a free-text answer: never equal to the gold letter, so only a rubric judge can give t0 credit
    return ScriptedServer(Script.model_validate({"steps": [{"text": "<answer>a blue square</answer>"}]}))


def _scores(run: Path) -> dict[str, dict[str, object]]:
    return {r["task_id"]: r["score"] for r in records(run)}


def test_run_with_a_judge_judges_the_rubrics_and_without_says_they_were_not(rubric_set: Path, tmp_path: Path) -> None:
    with _model() as model, ScriptedServer(Script.answer(MET)) as judge:
        judged = ts("run", str(rubric_set), "-m", "openai/m", "--base-url", model.openai_base_url,
                    "--judge", "openai/j", "--judge-base-url", judge.openai_base_url,
                    "--out", str(tmp_path / "judged"), "--no-report")
        judge_prompts = [q.body["messages"][-1]["content"] for q in judge.requests]
        plain = ts("run", str(rubric_set), "-m", "openai/m", "--base-url", model.openai_base_url,
                   "--out", str(tmp_path / "plain"), "--no-report")
    assert judged.returncode == 0, judged.stderr
    s = _scores(tmp_path / "judged")
    assert s["t0"]["scorer"] == "rubric" and s["t0"]["value"] == 1.0 and s["t0"]["passed"] is True, s["t0"]
    assert [row["id"] for row in s["t0"]["details"]["rubrics"]] == ["r1", "r2"]  # type: ignore[index]
    assert len(judge_prompts) == 2 and all("a blue square" in str(p) for p in judge_prompts)
    assert s["t1"]["scorer"] == "answer_match" and s["t1"]["value"] == 0.0  # no rubrics: matched, no judge call
    assert plain.returncode == 0, plain.stderr
    p = _scores(tmp_path / "plain")
    assert p["t0"]["scorer"] == "answer_match" and p["t0"]["value"] == 0.0
    assert p["t0"]["details"]["rubrics_not_judged"] == 2  # type: ignore[index]
    assert "2 rubric(s) not judged (no --judge)" in str(p["t0"]["explanation"])
    assert "rubrics_not_judged" not in p["t1"]["details"]  # type: ignore[operator]


def test_score_with_a_judge_judges_the_rubrics_of_a_finished_run(rubric_set: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    with _model() as model:
        r = ts("run", str(rubric_set), "-m", "openai/m", "--base-url", model.openai_base_url, "--out", str(run),
               "--no-report")
    assert r.returncode == 0, r.stderr
    with ScriptedServer(Script.answer(MET)) as judge:
        sc = ts("score", str(run), "--judge", "openai/j", "--judge-base-url", judge.openai_base_url, "--name", "j")
        n_judge = len(judge.requests)
    assert sc.returncode == 0, sc.stderr
    lines = {json.loads(x)["task_id"]: json.loads(x) for x in (run / "scores-j.jsonl").read_text().splitlines()}
    assert lines["t0"]["score"]["scorer"] == "rubric" and lines["t0"]["score"]["value"] == 1.0
    assert n_judge == 2
