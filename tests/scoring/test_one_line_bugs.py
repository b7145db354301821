"""Guards against one-line scoring bugs that once left the whole suite green (issue 10).

Each test names the line it protects. Every one was checked by applying the bug by hand and
seeing the test fail (docs/testing.md lists them); `make mutation` keeps checking the rest.
"""

from __future__ import annotations

import asyncio

import pytest

from judgekit import ScriptedJudge
from toolsight.benchmarks.tir_bench.scorer import resolve_choice, tir_score_item
from toolsight.benchmarks.vtc_bench.scorer import VtcScorer, vtc_goes_to_judge, vtc_rule_score
from toolsight.scoring.base import ScoreContext
from toolsight.scoring.extract import choice_letter
from toolsight.tasks.schema import Task, Turn

# two options share one text: naming that text names no single option
TWINS = {"A": "red", "B": "red", "C": "blue"}


# ---------------------------------------------------------------- option text → letter must be unique


def test_choice_letter_refuses_an_option_text_shared_by_two_options() -> None:
    # extract.choice_letter: `if len(set(exact)) == 1` (not `if exact`)
    assert choice_letter("red", TWINS) is None
    assert choice_letter("blue", TWINS) == "C"  # a unique text still maps


def test_tir_resolve_choice_refuses_a_shared_option_text() -> None:
    # tir.resolve_choice: `if len(exact) == 1` on the options whose text equals the answer
    assert resolve_choice("red", TWINS, "ABC") is None
    assert resolve_choice("blue", TWINS, "ABC") == "C"


def test_tir_corrected_scores_a_shared_option_text_zero() -> None:
    prompt = "Which colour is the car?\nA. red\nB. red\nC. blue\n"
    item = {"id": 1, "task": "color", "prompt": prompt, "answer": "A", "image_1": "data/color/1.jpg",
            "model_response": "red", "extracted_answer": "red"}
    assert tir_score_item(item, "corrected") == 0.0
    assert tir_score_item(dict(item, answer="C", extracted_answer="blue"), "corrected") == 1.0


def _vtc_row(prediction: str | None, answer: str = "A", **opts: str) -> dict[str, object]:
    return {"index": 1, "id": "color_1", "category": "color", "question": "Which colour?",
            "answer": answer, "prediction": prediction, **(opts or {"A": "red", "B": "blue", "C": "green"})}


def test_vtc_corrected_refuses_a_shared_option_text() -> None:
    # vtc._pred_letter: `if len(exact) == 1` on the options whose text equals the prediction
    row = _vtc_row("red", "A", A="red", B="red", C="blue")
    assert vtc_rule_score(row, "corrected") == 0.0
    assert vtc_rule_score(dict(row, prediction="blue", answer="C"), "corrected") == 1.0


# ---------------------------------------------------------------- TIR OCR: an empty gold matches nothing


@pytest.mark.parametrize("gold", ["", "   "])
def test_tir_ocr_empty_gold_never_matches(gold: str) -> None:
    # tir_score_item, corrected OCR: `1.0 if answer.strip() and re.search(...)` — an empty pattern
    # would match every response
    item = {"id": 7, "task": "ocr", "prompt": "What is written?", "answer": gold,
            "image_1": "data/ocr/7.jpg", "model_response": "Hello, world", "extracted_answer": None}
    assert tir_score_item(item, "corrected") == 0.0
    assert tir_score_item(dict(item, answer="world"), "corrected") == 1.0


# ---------------------------------------------------------------- VTC: a named option must be unique


def test_vtc_prediction_naming_two_options_is_no_answer() -> None:
    # vtc._pred_letter, last rule: `if len(named) == 1` on options named as whole words
    row = _vtc_row("between red and blue")
    assert vtc_rule_score(row, "corrected") == 0.0
    assert vtc_rule_score(dict(row, answer="B"), "corrected") == 0.0
    assert vtc_rule_score(dict(row, prediction="it is clearly blue"), "corrected") == 0.0  # gold is A
    assert vtc_rule_score(dict(row, prediction="it is clearly blue", answer="B"), "corrected") == 1.0


# ---------------------------------------------------------------- VTC: an empty prediction is not judged


@pytest.mark.parametrize("prediction", ["", "   ", None])
def test_vtc_empty_prediction_is_not_sent_to_the_judge(prediction: str | None) -> None:
    # vtc_goes_to_judge: corrected mode returns False for an empty prediction; official sends it
    row = _vtc_row(prediction)
    assert vtc_goes_to_judge(row, "corrected") is False
    assert vtc_goes_to_judge(row, "official") is True


def _vtc_task() -> Task:
    return Task(id="vtc-1", benchmark="vtc-bench", tags={"category": "color"},
                turns=[Turn(prompt="Which colour?", answer="A", options={"A": "red", "B": "blue", "C": "green"},
                            meta={"question": "Which colour?"})])


@pytest.mark.parametrize("response", ["", "  \n", "<think>no idea</think><answer> </answer>"])
def test_vtc_scorer_does_not_ask_the_judge_about_an_empty_answer(response: str) -> None:
    judge = ScriptedJudge(default="A")  # a judge that would (wrongly) pick the gold letter
    score = asyncio.run(VtcScorer("corrected").score(_vtc_task(), [response], ScoreContext(judge=judge)))
    assert judge.prompts == []
    assert (score.value, score.passed, score.judge_calls) == (0.0, False, [])
    # the official driver does ask it
    judge = ScriptedJudge(default="A")
    score = asyncio.run(VtcScorer("official").score(_vtc_task(), [""], ScoreContext(judge=judge)))
    assert len(judge.prompts) == 1 and score.value == 1.0
