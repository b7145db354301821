"""Rubric judging through a real HTTP judge: the OpenAI SDK talking to the scripted server on 127.0.0.1.

Each rubric text carries a `[task:ID]` marker, so the scripted server plays one reply list per rubric.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from vtbofficial import official_judge_prompt

from toolsight.benchmarks.registry import get_scorer
from toolsight.models.registry import get_model
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer
from toolsight.scoring.base import ScoreContext
from toolsight.scoring.rubric import OFFICIAL_FAILED_REPLY
from toolsight.tasks.schema import Rubric, Task, Turn

MET = json.dumps({"explanation": "ok", "judge_result": "Met"})
NOT = json.dumps({"explanation": "missing", "judge_result": "Not Met"})


def _task() -> Task:
    rubrics = [Rubric(id="r1", text="[task:r1] states the price", weight=5),
               Rubric(id="r2", text="[task:r2] shows the steps", weight=2),
               Rubric(id="r3", text="[task:r3] is concise", weight=1)]
    return Task(id="pizza", turns=[Turn(prompt="How much is the pizza?", answer="$16", rubrics=rubrics)])


def _run(script: dict[str, list[dict[str, object]]], mode: str):  # type: ignore[no-untyped-def]
    with ScriptedServer(Script.model_validate({"tasks": script})) as srv:
        judge = get_model("openai/judge-model", base_url=srv.openai_base_url, api_key="test-key")
        scorer = get_scorer("rubric", mode)
        score = asyncio.run(scorer.score(_task(), ["It costs $16."], ScoreContext(judge=judge)))
        return score, list(srv.requests)


def test_http_judge_corrected_mode() -> None:
    score, requests = _run({"r1": [{"text": "I think it is met"}, {"text": MET}], "r2": [{"text": NOT}],
                            "r3": [{"fault": "status", "status": 500}, {"text": "```json\n" + MET + "\n```"}]},
                           "corrected")
    assert score.error is None
    assert score.value == pytest.approx(6 / 8) and score.passed is True
    assert len(requests) == 5 and len(score.judge_calls) == 5
    body = requests[0].body
    assert body["temperature"] == 0.0 and body["seed"] == 0 and body["model"] == "judge-model"
    prompts = {r.body["messages"][0]["content"] if isinstance(r.body["messages"][0]["content"], str)
               else r.body["messages"][0]["content"][0]["text"] for r in requests}
    assert official_judge_prompt("How much is the pizza?", "$16", "[task:r1] states the price", "It costs $16.") in prompts
    failed = [c for c in score.judge_calls if c.error]
    assert len(failed) == 1 and "500" in (failed[0].error or "")


def test_http_judge_official_mode_defaults_after_three_failures() -> None:
    err = {"fault": "status", "status": 503}
    score, requests = _run({"r1": [err, err, err], "r2": [{"text": MET}], "r3": [{"text": MET}]}, "official")
    assert score.error is None and score.passed is False and score.value == pytest.approx(3 / 8)
    assert score.details["judge_results"] == [OFFICIAL_FAILED_REPLY, MET, MET]
    assert sum(1 for r in requests if r.task == "r1") == 3
