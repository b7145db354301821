"""Rubric judging in toolsight's corrected mode (and the official mode's differences), scripted judge."""

from __future__ import annotations

import asyncio
import json

import pytest

from judgekit import RAISE, ScriptedJudge
from toolsight.benchmarks.registry import get_scorer
from toolsight.scoring.base import Score, ScoreContext
from toolsight.scoring.judge import JudgeUnavailableError
from toolsight.scoring.rubric import OFFICIAL_FAILED_REPLY, parse_verdict
from toolsight.tasks.schema import Rubric, Task, Turn


def verdict(v: str, why: str = "because") -> str:
    return json.dumps({"explanation": why, "judge_result": v})


MET, NOT = verdict("Met"), verdict("Not Met")


def task(*turns: list[Rubric]) -> Task:
    return Task(id="t1", turns=[Turn(prompt=f"question {i}", answer=f"gold {i}", rubrics=list(r))
                                for i, r in enumerate(turns)])


def run(t: Task, responses: list[str], script: dict[str, list[str]], mode: str = "corrected",
        **ctx: object) -> tuple[Score, ScriptedJudge]:
    judge = ScriptedJudge(script)
    score = asyncio.run(get_scorer("rubric", mode).score(t, responses, ScoreContext(judge=judge, **ctx)))  # type: ignore[arg-type]
    return score, judge


def test_weighted_score_and_critical_flag() -> None:
    rubrics = [Rubric(id="a", text="R-a", weight=5), Rubric(id="b", text="R-b", weight=4, critical=False),
               Rubric(id="c", text="R-c", weight=1, critical=True)]
    score, judge = run(task(rubrics), ["answer"], {"R-a": [MET], "R-b": [NOT], "R-c": [MET]})
    assert score.value == pytest.approx(6 / 10) and score.passed is True  # weight-4 rubric flagged non-critical
    assert score.error is None and len(score.judge_calls) == 3 and len(judge.prompts) == 3
    rows = {r["id"]: r for r in score.details["rubrics"]}
    assert rows["b"]["met"] is False and rows["b"]["fails_task"] is False and rows["b"]["explanation"] == "because"
    official, _ = run(task(rubrics), ["answer"], {"R-a": [MET], "R-b": [NOT], "R-c": [MET]}, mode="official")
    assert official.value == pytest.approx(0.6) and official.passed is False  # weight >= 4 rule

    score, _ = run(task(rubrics), ["answer"], {"R-a": [MET], "R-b": [MET], "R-c": [NOT]})
    assert score.passed is False and "critical not met: c (w1)" in score.explanation


def test_judge_calls_are_recorded_with_seed_and_prompt() -> None:
    score, _judge = run(task([Rubric(id="a", text="R-a", weight=2)]), ["my answer"], {"R-a": [MET]})
    [call] = score.judge_calls
    assert call.model == "scripted/judge" and call.seed == 0 and call.temperature == 0.0 and call.reply == MET
    assert "**Model Answer:** my answer  \n" in call.prompt and "**Golden Answer:** gold 0  \n" in call.prompt


def test_lenient_verdicts_are_read_and_unclear_ones_become_errors() -> None:
    assert parse_verdict('```json\n{"explanation": "x", "judge_result": "not met"}\n```') == (False, "x")
    assert parse_verdict('Sure! {"judge_result": " MET "}') == (True, "")
    assert parse_verdict('{"judge_result": "Partially Met"}') is None
    assert parse_verdict("Met") is None and parse_verdict("") is None and parse_verdict('["Met"]') is None

    rubrics = [Rubric(id="a", text="R-a", weight=5), Rubric(id="b", text="R-b", weight=1)]
    score, judge = run(task(rubrics), ["ans"], {"R-a": [verdict("Partially Met")], "R-b": [MET]})
    assert score.error is not None and "1 rubric(s) could not be judged" in score.error
    assert score.passed is None and judge.counts["R-a"] == 3  # retried ctx.judge_retries times
    score, judge = run(task(rubrics), ["ans"], {"R-a": ["", "not json", verdict("not met")], "R-b": [MET]})
    assert score.error is None and score.passed is False and score.value == pytest.approx(1 / 6)
    score, _ = run(task(rubrics), ["ans"], {"R-a": [RAISE], "R-b": [MET]}, judge_retries=2)
    assert score.error is not None and "failed 2 time(s)" in score.error


def test_official_failure_behaviours() -> None:
    rubrics = [Rubric(id="a", text="R-a", weight=5), Rubric(id="b", text="R-b", weight=1)]
    score, _ = run(task(rubrics), ["ans"], {"R-a": [RAISE, RAISE, RAISE], "R-b": [MET]}, mode="official")
    assert score.passed is False and score.value == pytest.approx(1 / 6)
    assert score.details["judge_results"] == [OFFICIAL_FAILED_REPLY, MET]
    score, judge = run(task(rubrics), ["ans"], {"R-a": ["", RAISE, MET], "R-b": [MET]}, mode="official")
    assert score.passed is True and judge.counts["R-a"] == 3
    score, judge = run(task(rubrics), ["ans"], {"R-a": ["not json"], "R-b": [MET]}, mode="official")
    assert judge.counts["R-a"] == 1 and score.error is not None and score.details["dropped"] is True
    score, _ = run(task(rubrics), ["ans"], {"R-a": [RAISE, RAISE, ""], "R-b": [MET]}, mode="official")
    assert score.details["dropped"] is True
    score, _ = run(task(rubrics), ["ans"], {"R-a": [json.dumps({"explanation": "no verdict"})], "R-b": [MET]},
                   mode="official")
    assert score.details["dropped"] is True and "KeyError" in (score.error or "")


def test_multi_turn_pooling_and_missing_turns() -> None:
    t = task([Rubric(id="a", text="R-a", weight=5), Rubric(id="b", text="R-b", weight=1)],
             [Rubric(id="c", text="R-c", weight=2), Rubric(id="d", text="R-d", weight=2)])
    script = {"R-a": [MET], "R-b": [MET], "R-c": [NOT], "R-d": [NOT]}
    score, _ = run(t, ["one", "two"], script)
    assert score.value == pytest.approx(6 / 10) and score.passed is True
    assert [round(x.value, 3) for x in score.turns] == [1.0, 0.0]
    assert score.details["judge_results"] == [[MET, MET], [NOT, NOT]]

    # the model answered only the first turn
    official, judge = run(t, ["one"], script, mode="official")
    assert official.value == 1.0 and official.passed is True and judge.counts["R-c"] == 0  # zip drops turn 2
    corrected, judge = run(t, ["one"], script)
    assert corrected.value == pytest.approx(6 / 10) and judge.counts["R-c"] == 0  # unmet, no judge call
    corrected, judge = run(t, ["one", "   "], script)
    assert corrected.value == pytest.approx(6 / 10) and judge.counts["R-c"] == 0


def test_empty_rubric_set() -> None:
    official, judge = run(task([]), ["ans"], {}, mode="official")
    assert (official.value, official.passed, official.error) == (0.0, True, None) and not judge.prompts
    corrected, _ = run(task([]), ["ans"], {})
    assert corrected.error is not None and "no rubrics" in corrected.error


def test_concurrent_rubric_calls_and_missing_judge() -> None:
    rubrics = [Rubric(id=str(i), text=f"R-{i:02d}", weight=1) for i in range(10)]
    score, judge = run(task(rubrics), ["ans"], {f"R-{i:02d}": [MET] for i in range(10)})
    assert score.value == 1.0 and judge.max_in_flight > 1  # the rubric calls overlap
    with pytest.raises(JudgeUnavailableError):
        asyncio.run(get_scorer("rubric", "corrected").score(task(rubrics), ["ans"], ScoreContext()))


def test_concurrency_limit_holds_across_tasks() -> None:
    from toolsight.scoring.rubric import RubricScorer

    async def main() -> ScriptedJudge:
        gate = asyncio.Event()
        judge = ScriptedJudge(default=MET, gate=gate)
        scorer = RubricScorer("corrected", concurrency=2)
        ctx = ScoreContext(judge=judge)
        tasks = [asyncio.create_task(scorer.score(task([Rubric(text=f"R{n}-{i}", weight=1) for i in range(3)]),
                                                  ["ans"], ctx)) for n in range(5)]
        for _ in range(30):
            await asyncio.sleep(0)
        assert judge.in_flight == 2
        gate.set()
        scores = await asyncio.gather(*tasks)
        assert all(s.value == 1.0 for s in scores)
        return judge

    judge = asyncio.run(main())
    assert judge.max_in_flight == 2 and len(judge.prompts) == 15
