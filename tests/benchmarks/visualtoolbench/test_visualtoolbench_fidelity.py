"""VisualToolBench official mode reproduces every line of tests/fidelity/vectors/visualtoolbench.jsonl.

The stored judge replies are fed through ScriptedJudge (one reply sequence per rubric, matched by
the rubric description inside the judge prompt — as the vectors' stub client did).
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from vtbofficial import official_judge_prompt

from fidelitykit import vectors
from judgekit import ScriptedJudge
from toolsight.benchmarks.registry import get_scorer
from toolsight.benchmarks.visualtoolbench.scorer import STEM_CATEGORIES, summarize, task_from_official
from toolsight.scoring.base import Score, ScoreContext
from toolsight.scoring.rubric import judge_prompt


def _vectors() -> list[dict[str, Any]]:
    return vectors("visualtoolbench")


def _score(vec: dict[str, Any], mode: str) -> tuple[Score, ScriptedJudge]:
    task, responses = task_from_official(vec["input"]["example"], vec["input"]["clean_rubrics_item"])
    judge = ScriptedJudge(dict(vec["input"]["judge_replies_by_rubric_description"]))
    score = asyncio.run(get_scorer("visualtoolbench", mode).score(task, responses, ScoreContext(judge=judge)))
    return score, judge


def test_official_mode_reproduces_every_vector() -> None:
    vectors = _vectors()
    assert len(vectors) >= 20
    mismatches = []
    for vec in vectors:
        out = vec["output"]
        score, _judge = _score(vec, "official")
        if out["dropped"]:
            ok = score.error is not None and score.details.get("dropped") is True and "drops this task" in score.error
        else:
            ok = (score.error is None and math.isclose(score.value, out["score"], abs_tol=1e-12)
                  and score.passed == bool(out["accuracy"])
                  and score.details["judge_results"] == out["judge_results"])
        if not ok:
            mismatches.append((vec["vector_id"], vec["case"], score.value, score.passed, score.error))
    assert not mismatches


def test_official_prompt_is_the_reference_prompt_and_attempts_follow_the_script() -> None:
    vec = next(v for v in _vectors() if v["case"].startswith("judge raises 3 times"))
    score, judge = _score(vec, "official")
    ex = vec["input"]["example"]
    first_desc = next(iter(vec["input"]["clean_rubrics_item"]["rubrics"].values()))["description"]
    # the official script's own text (typed from the reference, not built by toolsight)
    expected = official_judge_prompt(ex["prompt"], ex["golden_answer"], first_desc, ex["model_answer"])
    assert expected in judge.prompts
    assert judge_prompt(ex["prompt"], ex["golden_answer"], first_desc, ex["model_answer"]) == expected
    # 3 failing attempts for the raising rubric + 1 each for the others, all recorded
    assert len(score.judge_calls) == 5 and sum(c.error is not None for c in score.judge_calls) == 3


def test_empty_replies_are_retried_three_times_then_the_task_is_an_error() -> None:
    vec = next(v for v in _vectors() if v["output"]["dropped"])
    score, judge = _score(vec, "official")
    desc = next(k for k, v in vec["input"]["judge_replies_by_rubric_description"].items() if v == ["", "", ""])
    assert judge.counts[desc] == 3
    assert score.value == 0.0 and score.passed is None  # an error, not a fail


def test_corrected_mode_honours_the_critical_flag() -> None:
    # where every reply is an exact verdict, corrected pass == the vectors' critical-flag variant
    checked = 0
    for vec in _vectors():
        replies = [r for seq in vec["input"]["judge_replies_by_rubric_description"].values() for r in seq]
        verdicts = [json.loads(r)["judge_result"] if r.startswith("{") else None for r in replies]
        if vec["output"]["dropped"] or any(v not in ("Met", "Not Met") for v in verdicts):
            continue
        rubric_turns = vec["input"]["clean_rubrics_item"].get("turns")
        n_model = len(vec["input"]["example"].get("turns", [None]))
        if rubric_turns is not None and len(rubric_turns) > n_model:
            continue
        score, _ = _score(vec, "corrected")
        assert score.error is None, vec["vector_id"]
        assert score.passed == bool(vec["output"]["derived_NOT_OFFICIAL_accuracy_if_critical_flag_used"]), vec["vector_id"]
        assert math.isclose(score.value, vec["output"]["score"]), vec["vector_id"]
        checked += 1
    assert checked >= 15


def test_corrected_mode_departs_where_the_official_rules_are_bugs() -> None:
    vectors = {v["case"]: v for v in _vectors()}
    lower = vectors['verdict "Not met" (lowercase m) on weight-5 rubric: neither Met nor Not Met']
    score, _ = _score(lower, "corrected")
    assert score.passed is False and math.isclose(score.value, 0.5)  # "Not met" is read as Not Met

    raises = vectors["judge raises 3 times -> default Not Met (weight 5)"]
    score, _ = _score(raises, "corrected")
    assert score.error is not None and "could not be judged" in score.error  # not a silent fail

    dropped = vectors["judge returns empty string 3 times -> json.loads error -> chunk dropped"]
    score, _ = _score(dropped, "corrected")
    assert score.error is not None and score.details["dropped"] is False


def test_summary_matches_the_reference_analysis() -> None:
    items = []
    for vec in _vectors():
        task, _responses = task_from_official(vec["input"]["example"], vec["input"]["clean_rubrics_item"])
        score, _ = _score(vec, "official")
        items.append((task.tags, score))
    summary = summarize(items)
    kept = [v["output"] for v in _vectors() if not v["output"]["dropped"]]
    assert summary["errors"] == len(_vectors()) - len(kept)
    assert math.isclose(summary["overall"]["APR"], sum(o["accuracy"] for o in kept) / len(kept))
    assert math.isclose(summary["overall"]["ARS"], sum(o["score"] for o in kept) / len(kept))
    assert "STEM" in summary["domain"] and not set(STEM_CATEGORIES) & set(summary["domain"])
