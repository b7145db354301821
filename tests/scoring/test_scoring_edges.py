"""Scoring edges that mutation testing found unguarded (`make mutation`, docs/testing.md).

Each test names the rule it pins; each was written against a surviving mutant of that rule.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolsight.benchmarks.tir_bench.scorer import TirOfficialCrash, resolve_choice, tir_score_item
from toolsight.benchmarks.vtc_bench.scorer import vtc_judge_hit, vtc_rule_score
from toolsight.scoring.extract import choice_letter

OPTS = {"A": "23%", "B": "39%", "C": "31%", "D": "15%"}
PROMPT = "Proportion occupied by the dog?\nA: 23%\nB: 39%\nC: 31%\nD: 15%\n"


def _item(task: str, answer: str, extracted: str | None, **extra: Any) -> dict[str, Any]:
    return {"id": 1, "task": task, "prompt": PROMPT, "answer": answer, "image_1": f"data/{task}/1.jpg",
            "model_response": extracted or "", "extracted_answer": extracted, **extra}


# ------------------------------------------------------------------ TIR corrected choice resolution


def test_label_followed_by_free_text_names_the_label_and_by_another_options_text_names_none() -> None:
    assert resolve_choice("B because it covers the most", OPTS, "ABCD") == "B"
    assert resolve_choice("B 39%", OPTS, "ABCD") == "B"
    assert resolve_choice("C 39%", OPTS, "ABCD") is None   # label C, text of option B
    assert resolve_choice("A A", OPTS, "ABCD") == "A"      # the same letter twice is still A
    assert resolve_choice("A or D", OPTS, "ABCD") is None


def test_multi_letter_gold_read_from_free_text() -> None:
    # 'OPTIONS C AND D' does not pack into letters only: the standalone capitals are read instead
    assert tir_score_item(_item("symbolic", "CD", "options C and D"), "corrected") == 1.0
    assert tir_score_item(_item("symbolic", "CD", "options c and e"), "corrected") == 0.0


def test_ocr_response_that_is_not_text() -> None:
    item = _item("ocr", "EXIT", None, model_response=None)
    with pytest.raises(TirOfficialCrash):
        tir_score_item(item, "official")
    assert tir_score_item(item, "corrected") == 0.0
    assert tir_score_item(dict(item, model_response=[]), "corrected") == 0.0


def test_ocr_overrides_by_exact_file_name_in_corrected_mode() -> None:
    base = _item("ocr", "Hotel", None)
    assert tir_score_item(dict(base, image_1="60.jpg", model_response="MOBILE phone"), "corrected") == 1.0
    assert tir_score_item(dict(base, image_1="data\\ocr\\62.jpg", model_response="Buenos Aires"), "corrected") == 1.0
    assert tir_score_item(dict(base, image_1="data/ocr/60.jpg", model_response="Hotel"), "corrected") == 0.0


def test_word_search_without_a_pair_on_either_side_scores_zero() -> None:
    assert tir_score_item(_item("word_search", "none", "none"), "official") == 0.0


@pytest.mark.parametrize(("difficulty", "official", "corrected"), [
    ("3", 0.0, 1.0),     # a numeric string: official needs a number, corrected parses it
    ("three", 0.0, 0.0),
    (True, 0.0, 0.0),    # a bool is not a size
    (3, 1.0, 1.0),
])
def test_jigsaw_difficulty_types(difficulty: object, official: float, corrected: float) -> None:
    item = _item("jigsaw", "[4, 1, 8, 9, 3, 6, 2, 7, 5]", "4, 1, 8, 9, 3, 6, 2, 7, 5",
                 meta_data={"difficulty": difficulty})
    assert tir_score_item(item, "official") == official
    assert tir_score_item(item, "corrected") == corrected


def test_type_four_gold_in_corrected_mode_is_text_equality() -> None:
    assert tir_score_item(_item("math", "[3, 6]", "[4, 5]"), "corrected") == 0.0
    assert tir_score_item(_item("math", "[]", ""), "corrected") == 0.0  # no answer is never right


# ------------------------------------------------------------------ extract.choice_letter


def test_choice_letter_without_options_uses_the_default_letters() -> None:
    assert choice_letter("B") == "B"
    assert choice_letter("(c)") == "C"
    assert choice_letter("H") is None  # outside A–G


def test_nearest_option_text_boundaries() -> None:
    # one option: nothing to be ahead of, so a close text maps
    assert choice_letter("pigeon", {"A": "pigeons"}) == "A"
    # similarity exactly 0.8 (2·4 / 10) is enough
    assert choice_letter("abcd", {"A": "abcdef", "B": "zzzzzz"}) == "A"
    assert choice_letter("abc", {"A": "abcdefg", "B": "zzzzzz"}) is None  # 0.6


# ------------------------------------------------------------------ VTC corrected rules


def _row(pred: str | None, answer: str, **opts: str) -> dict[str, Any]:
    return {"index": 1, "id": "x_1", "category": "x", "question": "q", "answer": answer, "prediction": pred, **opts}


def test_vtc_numbers_compared_as_numbers_pick_the_right_option() -> None:
    row = _row("12.80", "C", A="9.1", B="14.9", C="12.8", D="10.5")
    assert vtc_rule_score(row, "corrected") == 1.0
    assert vtc_rule_score(dict(row, prediction="9.10"), "corrected") == 0.0


def test_vtc_near_miss_option_text_maps_to_its_letter() -> None:
    row = _row("Horizonal", "B", A="Vertical", B="Horizontal")
    assert vtc_rule_score(row, "corrected") == 1.0


@pytest.mark.parametrize(("pred", "answer"), [(None, "None"), (None, "nan"), ("None", None), ("nan", None)])
def test_vtc_empty_cells_never_match(pred: str | None, answer: str | None) -> None:
    assert vtc_rule_score({"question": "q", "answer": answer, "prediction": pred}, "corrected") == 0.0


def test_vtc_list_gold_with_an_empty_alternative_still_checks_the_others() -> None:
    row = {"question": "q", "answer": "['', 'xiao long bao']", "prediction": "Xiao long bao"}
    assert vtc_rule_score(row, "corrected") == 1.0


def test_vtc_long_gold_matches_up_to_punctuation() -> None:
    gold = "the quick brown fox jumps"
    assert vtc_rule_score({"question": "q", "answer": gold, "prediction": "The quick brown fox jumps."},
                          "corrected") == 1.0


def test_vtc_judge_reply_reading() -> None:
    assert vtc_judge_hit("open_yes_no", "no", "x") == 0
    assert vtc_judge_hit("open_yes_no", "No.", "x", "corrected") == 0
    assert vtc_judge_hit("mcq_letter_extractor", "Z", "C", "corrected") == 0
    assert vtc_judge_hit("mcq_letter_extractor", "B", "C", "corrected") == 0
    assert vtc_judge_hit("mcq_letter_extractor", "C", "C", "corrected") == 1
    assert vtc_judge_hit("mcq_letter_extractor", "C!", "C", "corrected") is None
    assert vtc_judge_hit("mcq_letter_extractor", "A, C", "A, C", "corrected") == 1
    assert vtc_judge_hit("mcq_letter_extractor", "AC", "a, c") == 1  # official: sorted letters
